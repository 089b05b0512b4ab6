// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * grants.c — live grants: parsing, the record, and the map writes that put
 * them in force (grants.h).
 *
 * File grants. A grant is an allowRead or allowWrite rule at its path, with
 * rule id SBX_RULE_GRANT_BASE + its id, compiled after the policy
 * (fs_compile_extra: at its own path it wins over the policy's allow and
 * deny, never over a mandatory rule). Compiling the policy alone and the
 * policy with every live file grant gives two entry sets. Each key whose
 * value differs gets the with-grants value, the policy's own in the base
 * fields, and one expiry for all: the earliest among the live file grants.
 * When that moment comes, every grant-changed key falls back to the policy
 * alone, in the kernel, whether or not any sbx-bpf process runs; the
 * grants still in their time have "lapsed" until the next `grant` or
 * `revoke` installs them again. One expiry per key would end each grant on
 * time only where no two grants share a key, and grants share the guard
 * keys of their common ancestors: a shared guard ending early would leave
 * a granted path without the rename guard it needs. Fail closed and simple
 * beat exact here.
 *
 * Connect grants. One dns_allow slot per address (SBX_DOMAIN_GRANT, the
 * grant's rule id, its ports, its own expiry), next to the resolver's slots
 * for the same address, which stay. The kernel ignores expired slots, so
 * each connect grant ends exactly on time. A --domain grant is the
 * addresses its name had when it was made.
 *
 * Every command plans from what the kernel holds: an entry with an expiry
 * under the cgroup's policy id, or a grant slot in its dns_allow entries,
 * that the record no longer asks for (a grant revoked, or one left by a
 * command that died midway) is taken back by the next plan.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include "grants.h"
#include "loader.h"
#include "sbx_limits.h"
#include "util.h"

#define TTL_HELP	"use a number with a unit such as '90s', '30m', '2h' or '1d' (units ms, s, m, h, d)"

static const char *const kind_names[] = {
	[GRANT_READ] = "read", [GRANT_WRITE] = "write", [GRANT_CONNECT] = "connect",
	[GRANT_DOMAIN] = "domain",
};

static const char *const kind_flags[] = {
	[GRANT_READ] = "--read", [GRANT_WRITE] = "--write", [GRANT_CONNECT] = "--connect",
	[GRANT_DOMAIN] = "--domain",
};

static const __u8 v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

const char *grant_kind_name(enum grant_kind kind)
{
	return (size_t)kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : "?";
}

const char *grant_state_name(enum grant_state state)
{
	switch (state) {
	case GRANT_ACTIVE: return "active";
	case GRANT_LAPSED: return "lapsed";
	case GRANT_EXPIRED: return "expired";
	}
	return "?";
}

bool grant_is_file(const struct grant *g)
{
	return g->kind == GRANT_READ || g->kind == GRANT_WRITE;
}

static bool live(const struct grant *g, __u64 now)
{
	return g->expires_ns > now;
}

int grant_parse_ttl(const char *s, __u64 *ns, char *err, size_t errsz)
{
	long long ms;
	int r = limits_parse_duration(s, &ms);

	if (r == -ERANGE || (!r && ms > GRANT_TTL_MAX_MS))
		snprintf(err, errsz, "--ttl %s: at most 365d (to allow it for good, change the policy)", s);
	else if (r)
		snprintf(err, errsz, "--ttl %s: not a duration; " TTL_HELP, s);
	else if (!ms)
		snprintf(err, errsz, "--ttl %s: must be more than 0", s);
	else {
		*ns = (__u64)ms * 1000000ULL;
		return 0;
	}
	return -EINVAL;
}

/* --- targets ------------------------------------------------------------------- */

void grant_format_addr(const __u8 addr[16], char *buf, size_t sz)
{
	char a[INET6_ADDRSTRLEN];

	if (!memcmp(addr, v4_mapped, sizeof(v4_mapped)))
		inet_ntop(AF_INET, addr + 12, a, sizeof(a));
	else
		inet_ntop(AF_INET6, addr, a, sizeof(a));
	snprintf(buf, sz, "%s", a);
}

/* "HOST", "HOST:443", "[::1]:8000-8999". */
static void set_target(struct grant *g, const char *host)
{
	bool v6 = strchr(host, ':') != NULL;

	if (g->lo == 0 && g->hi == 65535)
		snprintf(g->target, sizeof(g->target), "%s", host);
	else if (g->lo == g->hi)
		snprintf(g->target, sizeof(g->target), "%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", g->lo);
	else
		snprintf(g->target, sizeof(g->target), "%s%s%s:%u-%u", v6 ? "[" : "", host, v6 ? "]" : "",
			 g->lo, g->hi);
}

static int parse_path(struct grant *g, const char *arg, const struct policy_env *env, char *err,
		      size_t errsz)
{
	enum rule_kind kind = g->kind == GRANT_READ ? RULE_ALLOW_READ : RULE_ALLOW_WRITE;
	const char *flag = kind_flags[g->kind];
	struct policy_diag diag = {};
	struct policy p = {};
	int r;

	/* An any-depth pattern would change the sandbox's any_depth_mask: grants are paths. */
	if (!strncmp(arg, "**/", 3)) {
		snprintf(err, errsz, "%s '%s': a grant names one path, not a pattern", flag, arg);
		return -EINVAL;
	}
	r = policy_add_rule(&p, kind, arg, flag, env, &diag);
	if (r) {
		snprintf(err, errsz, "%s", diag.error);
	} else if (!p.nr_rules) {	/* /dev/stdout on a pipe: nothing the kernel judges by path */
		snprintf(err, errsz, "%s '%s': a pipe or socket, not a path", flag, arg);
		r = -EINVAL;
	} else if (!utf8_valid(p.rules[0].path)) {	/* the record is JSON, which holds UTF-8 only */
		snprintf(err, errsz, "%s '%s': the path is not valid UTF-8, which the cgroup's record cannot "
			 "keep", flag, arg);
		r = -EINVAL;
	} else {
		snprintf(g->target, sizeof(g->target), "%s", p.rules[0].path);
	}
	policy_free(&p);
	return r;
}

/* The one address a net rule names; -EINVAL for a network. */
static int take_address(struct grant *g, const struct net_rule *r, const char *arg, char *err,
			size_t errsz)
{
	char host[INET6_ADDRSTRLEN];

	if (r->plen != 128) {
		snprintf(err, errsz, "%s '%s': a grant names one address, not a network", kind_flags[g->kind],
			 arg);
		return -EINVAL;
	}
	g->kind = GRANT_CONNECT;
	memcpy(g->addrs[0], r->addr, 16);
	g->nr_addrs = 1;
	g->lo = r->lo;
	g->hi = r->hi;
	grant_format_addr(r->addr, host, sizeof(host));
	set_target(g, host);
	return 0;
}

/* The policy's domain syntax: "NAME[:PORT]"; an IP literal is a connect grant, "localhost" a name. */
static int parse_domain(struct grant *g, const struct policy *p, const char *arg, char *err,
			size_t errsz)
{
	const struct domain_rule *d = p->net.nr_domains ? &p->net.domains[0] : NULL;

	if (!d && p->net.nr_rules == 1)
		return take_address(g, &p->net.rules[0], arg, err, errsz);
	if (d && d->wildcard) {
		snprintf(err, errsz, "--domain '%s': a grant resolves one name when it is made; a wildcard "
			 "has no addresses to resolve", arg);
		return -EINVAL;
	}
	/* No domain rule and several CIDRs: "localhost", which the policy turns into allowLoopback's. */
	snprintf(g->name, sizeof(g->name), "%s", d ? d->name : "localhost");
	g->lo = d ? d->lo : p->net.rules[0].lo;
	g->hi = d ? d->hi : p->net.rules[0].hi;
	set_target(g, g->name);
	return 0;
}

int grant_parse_target(struct grant *g, enum grant_kind kind, const char *arg,
		       const struct policy_env *env, char *err, size_t errsz)
{
	enum policy_net_flag what = kind == GRANT_CONNECT ? POLICY_NET_ALLOW_CIDR : POLICY_NET_ALLOW_DOMAIN;
	struct policy_diag diag = {};
	struct policy p = {};
	int r;

	memset(g, 0, sizeof(*g));
	g->kind = kind;
	if (kind == GRANT_READ || kind == GRANT_WRITE)
		return parse_path(g, arg, env, err, errsz);
	r = policy_add_net(&p, what, arg, kind_flags[kind], env, &diag);
	if (r)
		snprintf(err, errsz, "%s", diag.error);
	else if (kind == GRANT_CONNECT)
		r = take_address(g, &p.net.rules[0], arg, err, errsz);
	else
		r = parse_domain(g, &p, arg, err, errsz);
	policy_free(&p);
	return r;
}

void grant_add_addr(struct grant *g, const __u8 addr[16])
{
	for (size_t i = 0; i < g->nr_addrs; i++)
		if (!memcmp(g->addrs[i], addr, 16))
			return;
	if (g->nr_addrs < GRANT_ADDRS_MAX)
		memcpy(g->addrs[g->nr_addrs++], addr, 16);
}

void grant_format_time(long long t, char *buf, size_t sz)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(buf, sz, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, sz, "?");
}

static int parse_time(const char *s, long long *t)
{
	struct tm tm = {};
	const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;

	if (!end || *end)
		return -EINVAL;
	*t = (long long)timegm(&tm);
	return 0;
}

void grant_describe(const struct grant *g, char *buf, size_t sz)
{
	char until[32];

	grant_format_time(g->expires_wall, until, sizeof(until));
	snprintf(buf, sz, "grant %u: %s %s (until %s)", g->id, grant_kind_name(g->kind), g->target, until);
}

/* --- the grant set ----------------------------------------------------------------- */

/*
 * When @g stops being active: it expires, or, for a file grant, lapses
 * with the record's file entries (@fs_until). The one place that rule is
 * written: grant_state and grants_tally both ask it.
 */
static __u64 active_until(const struct grant *g, __u64 fs_until)
{
	return grant_is_file(g) && fs_until < g->expires_ns ? fs_until : g->expires_ns;
}

enum grant_state grant_state(const struct grant *g, __u64 now, __u64 fs_until)
{
	if (!live(g, now))
		return GRANT_EXPIRED;
	if (now >= active_until(g, fs_until))
		return GRANT_LAPSED;	/* live, so it is the file entries that ended */
	return GRANT_ACTIVE;
}

size_t grants_prune(struct grant *g, size_t n, __u64 now)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		if (g[i].expires_ns + GRANT_KEEP_EXPIRED_S * 1000000000ULL <= now)
			continue;
		if (out != i)
			g[out] = g[i];
		out++;
	}
	return out;
}

/* Do the components "a/b" appear in the absolute @path: anywhere, or as its last ones? */
static bool has_components(const char *path, const char *seq, bool at_end)
{
	size_t n = strlen(seq);

	for (const char *s = path; (s = strchr(s, '/')); s++)
		if (!strncmp(s + 1, seq, n) && (s[1 + n] == '\0' || (!at_end && s[1 + n] == '/')))
			return true;
	return false;
}

bool grant_shadowed(const struct policy *p, enum grant_kind kind, const char *path, char *why,
		    size_t sz)
{
	enum rule_kind deny = kind == GRANT_READ ? RULE_DENY_READ : RULE_DENY_WRITE;

	for (size_t i = 0; i < p->nr_rules; i++) {
		const struct policy_rule *r = &p->rules[i];

		if (r->scope != RULE_ANY_DEPTH)
			continue;
		/* A mandatory match denies writes for good, wherever on the path it is. */
		if ((kind == GRANT_WRITE && r->kind == RULE_MANDATORY && has_components(path, r->path, false)) ||
		    (r->kind == deny && has_components(path, r->path, true))) {
			snprintf(why, sz, "%s **/%s", r->kind == RULE_MANDATORY ? "mandatory" :
				 rule_kind_name(r->kind), r->path);
			return true;
		}
	}
	return false;
}

int grants_check_addrs(const struct grant *g, size_t n, __u64 now, char *why, size_t sz)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t a = 0; live(&g[i], now) && a < g[i].nr_addrs; a++) {
			size_t count = 0;
			char host[INET6_ADDRSTRLEN];

			for (size_t j = 0; j < n; j++)
				for (size_t b = 0; live(&g[j], now) && b < g[j].nr_addrs; b++)
					count += !memcmp(g[i].addrs[a], g[j].addrs[b], 16);
			if (count <= SBX_DNS_SLOTS)
				continue;
			grant_format_addr(g[i].addrs[a], host, sizeof(host));
			snprintf(why, sz, "%s would have %zu live grants, the most one address can have is %d",
				 host, count, SBX_DNS_SLOTS);
			return -E2BIG;
		}
	}
	return 0;
}

/* --- the record ---------------------------------------------------------------------- */

/* Connect and domain grants: "addresses", "ports", and the name of a domain grant. */
static int net_to_json(json_t *o, const struct grant *g)
{
	char host[INET6_ADDRSTRLEN];
	json_t *addrs = json_array();
	int err = !addrs;

	for (size_t i = 0; !err && i < g->nr_addrs; i++) {
		grant_format_addr(g->addrs[i], host, sizeof(host));
		err = json_array_append_new(addrs, json_string(host));
	}
	if (err)
		json_decref(addrs);
	else
		err = json_object_set_new(o, "addresses", addrs);	/* takes it, even on failure */
	err = err ?: json_object_set_new(o, "ports", json_pack("[i, i]", g->lo, g->hi));
	if (!err && g->kind == GRANT_DOMAIN)
		err = json_object_set_new(o, "name", json_string(g->name));
	return err ? -ENOMEM : 0;
}

json_t *grant_to_json(const struct grant *g)
{
	char text[SBX_PATH_MAX + 128], until[32], created[32];
	json_t *o;

	grant_format_time(g->expires_wall, until, sizeof(until));
	grant_format_time(g->created, created, sizeof(created));
	grant_describe(g, text, sizeof(text));
	o = json_pack("{s:I, s:s, s:s, s:I, s:s, s:s, s:s}",
		      "id", (json_int_t)g->id, "kind", grant_kind_name(g->kind), "target", g->target,
		      "expires_ns", (json_int_t)g->expires_ns, "expires", until, "created", created, "text", text);
	if (o && !grant_is_file(g) && net_to_json(o, g)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int parse_kind(const char *s, enum grant_kind *kind)
{
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		if (!strcmp(s, kind_names[i])) {
			*kind = (enum grant_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_addr(const char *s, __u8 out[16])
{
	if (inet_pton(AF_INET, s, out + 12) == 1) {
		memcpy(out, v4_mapped, sizeof(v4_mapped));
		return 0;
	}
	return inet_pton(AF_INET6, s, out) == 1 ? 0 : -EINVAL;
}

/* "addresses" and "ports": one address for a connect grant, at least one for a domain grant. */
static int net_from_json(const json_t *o, struct grant *g)
{
	const char *name = NULL;
	json_int_t lo, hi;
	const json_t *v;
	json_t *a;
	size_t i;

	if (json_unpack((json_t *)o, "{s:o, s:[I, I], s?s}", "addresses", &a, "ports", &lo, &hi,
			"name", &name) ||
	    !json_is_array(a) || json_array_size(a) > GRANT_ADDRS_MAX || lo < 0 || hi > 65535 || lo > hi ||
	    (name && strlen(name) >= sizeof(g->name)))
		return -EINVAL;
	json_array_foreach(a, i, v)
		if (parse_addr(json_string_value(v) ?: "", g->addrs[g->nr_addrs++]))
			return -EINVAL;
	if (!g->nr_addrs || (g->kind == GRANT_CONNECT && g->nr_addrs != 1))
		return -EINVAL;
	g->lo = (__u16)lo;
	g->hi = (__u16)hi;
	/* Only a domain grant has a name (grant_to_json writes none for the others). */
	snprintf(g->name, sizeof(g->name), "%s", g->kind == GRANT_DOMAIN && name ? name : "");
	return 0;
}

int grant_from_json(const json_t *o, struct grant *g)
{
	const char *kind, *target, *until, *created;
	json_int_t id, exp;

	memset(g, 0, sizeof(*g));
	if (json_unpack((json_t *)o, "{s:I, s:s, s:s, s:I, s:s, s:s}", "id", &id, "kind", &kind,
			"target", &target, "expires_ns", &exp, "expires", &until, "created", &created) ||
	    id < 1 || id >= (json_int_t)(SBX_RULE_BASE_MASK >> 4) || exp < 0 || parse_kind(kind, &g->kind) ||
	    strlen(target) >= sizeof(g->target) || parse_time(until, &g->expires_wall) ||
	    parse_time(created, &g->created))
		return -EINVAL;
	g->id = (__u32)id;
	g->expires_ns = (__u64)exp;
	snprintf(g->target, sizeof(g->target), "%s", target);
	if (grant_is_file(g))
		return target[0] == '/' ? 0 : -EINVAL;
	return net_from_json(o, g);
}

int grants_from_record(const json_t *record, struct grant **g, size_t *n, __u32 *next_id,
		       __u64 *fs_until)
{
	const json_t *a = json_object_get(record, "grants"), *v;
	json_int_t next = json_integer_value(json_object_get(record, "next_grant_id"));
	size_t i;

	*g = NULL;
	*n = 0;
	*fs_until = (__u64)json_integer_value(json_object_get(record, "grants_fs_until_ns"));
	/* An id past what a rule id holds (a damaged record) starts again above the grants there are. */
	*next_id = next > 0 && next < (json_int_t)(SBX_RULE_BASE_MASK >> 4) ? (__u32)next : 1;
	if (!json_is_object(record))
		return -EINVAL;
	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > GRANTS_MAX)
		return -EINVAL;
	*g = calloc(json_array_size(a) ?: 1, sizeof(**g));
	if (!*g)
		return -ENOMEM;
	json_array_foreach(a, i, v) {
		if (grant_from_json(v, &(*g)[i])) {
			free(*g);
			*g = NULL;
			return -EINVAL;
		}
		/* Ids are never reused, whatever the record says. */
		if ((*g)[i].id >= *next_id)
			*next_id = (*g)[i].id + 1;
	}
	*n = json_array_size(a);
	return 0;
}

json_t *grants_record_set(const json_t *record, const struct grant *g, size_t n, __u32 next_id,
			  __u64 fs_until)
{
	json_t *o = json_deep_copy(record), *a = json_array();
	int err = !o || !a;

	for (size_t i = 0; !err && i < n; i++)
		err = json_array_append_new(a, grant_to_json(&g[i]));
	if (err) {
		json_decref(a);
		json_decref(o);
		return NULL;
	}
	if (json_object_set_new(o, "grants", a) ||
	    json_object_set_new(o, "next_grant_id", json_integer(next_id)) ||
	    json_object_set_new(o, "grants_fs_until_ns", json_integer((json_int_t)fs_until))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int parse_rule_kind(const char *s, enum rule_kind *kind)
{
	for (enum rule_kind k = RULE_DENY_READ; k <= RULE_ALLOW_UNIX; k++) {
		if (!strcmp(s, rule_kind_name(k))) {
			*kind = k;
			return 0;
		}
	}
	return -EINVAL;
}

/* A path as policy.c compiles one: absolute, or 1 to POLICY_ANY_DEPTH_MAX non-empty components. */
static bool record_path_ok(enum rule_scope scope, const char *path)
{
	size_t n = 1;

	if (scope == RULE_ABSOLUTE)
		return path[0] == '/';
	for (const char *s = path; *s; s++)
		n += *s == '/';
	return path[0] && path[0] != '/' && path[strlen(path) - 1] != '/' && !strstr(path, "//") &&
	       n <= POLICY_ANY_DEPTH_MAX;
}

/*
 * One "fs" entry, "KIND SCOPE PATH" (sbxstate.c), or as builds before it
 * wrote one, {"kind", "scope", "path"}: a record outlives an upgrade.
 */
static int split_fs_entry(const json_t *v, char kind[32], char scope[32], const char **path)
{
	const char *s = json_string_value(v), *k, *sc;

	if (!s) {
		if (json_unpack((json_t *)v, "{s:s, s:s, s:s}", "kind", &k, "scope", &sc, "path", path))
			return -EINVAL;
		return snprintf(kind, 32, "%s", k) >= 32 || snprintf(scope, 32, "%s", sc) >= 32 ? -EINVAL : 0;
	}
	k = strchr(s, ' ');
	sc = k ? strchr(k + 1, ' ') : NULL;
	if (!sc || k - s >= 32 || sc - k - 1 >= 32)
		return -EINVAL;
	snprintf(kind, 32, "%.*s", (int)(k - s), s);
	snprintf(scope, 32, "%.*s", (int)(sc - k - 1), k + 1);
	*path = sc + 1;
	return 0;
}

static int push_policy_rule(struct policy *p, const json_t *v)
{
	char kind[32], scope[32];
	const char *path;
	struct policy_rule r = {};
	void *rules;

	if (split_fs_entry(v, kind, scope, &path) || parse_rule_kind(kind, &r.kind))
		return -EINVAL;
	if (!strcmp(scope, "any-depth"))
		r.scope = RULE_ANY_DEPTH;
	else if (strcmp(scope, "absolute"))
		return -EINVAL;
	if (!record_path_ok(r.scope, path))
		return -EINVAL;
	rules = realloc(p->rules, (p->nr_rules + 1) * sizeof(*p->rules));
	if (!rules)
		return -ENOMEM;
	p->rules = rules;
	r.path = strdup(path);
	if (!r.path)
		return -ENOMEM;
	p->rules[p->nr_rules++] = r;
	return 0;
}

int grants_record_policy(const json_t *record, struct policy *p)
{
	const json_t *a = json_object_get(record, "fs"), *v;
	size_t i;
	int err = 0;

	if (!a)
		return -ENODATA;
	if (!json_is_array(a))
		return -EINVAL;
	json_array_foreach(a, i, v)
		if ((err = push_policy_rule(p, v)))
			break;
	if (err)
		policy_free(p);
	return err;
}

/* --- file grants ---------------------------------------------------------------------- */

int grants_compile_fs(const struct policy *p, const struct grant *g, size_t n, __u64 now,
		      __u32 policy_id, struct fs_compiled *with, __u64 *until)
{
	struct fs_extra_rule *x = calloc(n ?: 1, sizeof(*x));
	size_t nx = 0;
	int err;

	if (!x)
		return -ENOMEM;
	*until = 0;
	for (size_t i = 0; i < n; i++) {
		if (!grant_is_file(&g[i]) || !live(&g[i], now))
			continue;
		x[nx].kind = g[i].kind == GRANT_READ ? RULE_ALLOW_READ : RULE_ALLOW_WRITE;
		x[nx].path = g[i].target;
		x[nx++].id = SBX_RULE_GRANT_BASE + g[i].id;
		if (!*until || g[i].expires_ns < *until)
			*until = g[i].expires_ns;
	}
	err = fs_compile_extra(p, x, nx, policy_id, with);
	free(x);
	return err;
}

static int push_entry(struct fs_compiled *c, size_t *cap, const struct sbx_fs_key *key,
		      const struct sbx_fs_rule *rule)
{
	if (c->nr == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct fs_entry *e = realloc(c->entries, n * sizeof(*e));

		if (!e)
			return -ENOMEM;
		c->entries = e;
		*cap = n;
	}
	c->entries[c->nr].key = *key;
	c->entries[c->nr++].rule = *rule;
	return 0;
}

/* The first five fields of @r alone: no grant. */
static struct sbx_fs_rule plain(const struct sbx_fs_rule *r)
{
	return (struct sbx_fs_rule){ .read_rule = r->read_rule, .write_rule = r->write_rule,
				     .guard_rule = r->guard_rule, .unix_rule = r->unix_rule, .flags = r->flags };
}

/* @with's value until @until, @base's (NULL: nothing) after. */
static struct sbx_fs_rule granted(const struct sbx_fs_rule *with, const struct sbx_fs_rule *base,
				  __u64 until)
{
	struct sbx_fs_rule r = plain(with);

	if (base) {
		r.base_read_rule = base->read_rule;
		r.base_write_rule = base->write_rule;
		r.base_guard_rule = base->guard_rule;
		r.base_unix_rule = base->unix_rule;
		r.base_flags = base->flags;
	}
	r.expires_ns = until;
	return r;
}

int grants_fs_entries(const struct fs_compiled *policy, const struct fs_compiled *with, __u64 until,
		      bool all, struct fs_compiled *out)
{
	size_t cap = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->any_depth_mask = policy->any_depth_mask;
	for (size_t i = 0; i < with->nr && !err; i++) {
		const struct fs_entry *we = &with->entries[i];
		const struct fs_entry *pe = fs_compiled_find(policy, &we->key);
		struct sbx_fs_rule r;

		if (until && (!pe || !fs_rule_same(&pe->rule, &we->rule)))
			r = granted(&we->rule, pe ? &pe->rule : NULL, until);
		else if (pe && all)
			r = plain(&pe->rule);
		else
			continue;
		err = push_entry(out, &cap, &we->key, &r);
	}
	if (err)
		fs_compiled_free(out);
	return err;
}

/* --- planning ---------------------------------------------------------------------- */

static struct grant_write *plan_push(struct grant_plan *plan)
{
	if (plan->nr == plan->cap) {
		size_t n = plan->cap ? plan->cap * 2 : 32;
		struct grant_write *w = realloc(plan->w, n * sizeof(*w));

		if (!w)
			return NULL;
		plan->w = w;
		plan->cap = n;
	}
	memset(&plan->w[plan->nr], 0, sizeof(plan->w[0]));
	return &plan->w[plan->nr++];
}

void grant_plan_free(struct grant_plan *plan)
{
	free(plan->w);
	memset(plan, 0, sizeof(*plan));
}

/*
 * Does the kernel hold exactly @policy's rules (behind any grant)? Keys of
 * neither are grant-made (expiry set, nothing behind).
 */
static bool holds_policy(const struct fs_compiled *policy, const struct fs_compiled *cur)
{
	for (size_t i = 0; i < policy->nr; i++) {
		const struct fs_entry *c = fs_compiled_find(cur, &policy->entries[i].key);
		struct sbx_fs_rule eff;

		if (!c)
			return false;
		eff = c->rule.expires_ns ? fs_rule_base(&c->rule) : c->rule;
		if (!fs_rule_same(&eff, &policy->entries[i].rule))
			return false;
	}
	for (size_t i = 0; i < cur->nr; i++) {
		const struct sbx_fs_rule *r = &cur->entries[i].rule;

		if (!fs_compiled_find(policy, &cur->entries[i].key) && (!r->expires_ns || r->base_flags))
			return false;
	}
	return true;
}

static int plan_fs_write(struct grant_plan *plan, const struct fs_entry *cur, const struct sbx_fs_key *key,
			 const struct sbx_fs_rule *want)
{
	struct grant_write *w;

	if (cur && want && !memcmp(&cur->rule, want, sizeof(*want)))
		return 0;
	w = plan_push(plan);
	if (!w)
		return -ENOMEM;
	w->fs_key = *key;
	w->had = cur != NULL;
	w->keep = want != NULL;
	if (cur)
		w->fs_old = cur->rule;
	if (want)
		w->fs_new = *want;
	return 0;
}

int grant_plan_fs(struct grant_plan *plan, const struct fs_compiled *policy,
		  const struct fs_compiled *with, __u64 until, const struct fs_compiled *cur)
{
	struct fs_compiled want;
	int err;

	if (!holds_policy(policy, cur))
		return -ESTALE;
	err = grants_fs_entries(policy, with, until, true, &want);
	for (size_t i = 0; i < want.nr && !err; i++)
		err = plan_fs_write(plan, fs_compiled_find(cur, &want.entries[i].key), &want.entries[i].key,
				    &want.entries[i].rule);
	/* Keys a grant made that no grant wants now: out (holds_policy: nothing is behind them). */
	for (size_t i = 0; i < cur->nr && !err; i++)
		if (cur->entries[i].rule.expires_ns && !fs_compiled_find(&want, &cur->entries[i].key))
			err = plan_fs_write(plan, &cur->entries[i], &cur->entries[i].key, NULL);
	fs_compiled_free(&want);
	return err;
}

static bool is_grant_slot(const struct sbx_dns_slot *s)
{
	return s->expires_ns && s->domain_id == SBX_DOMAIN_GRANT;
}

static bool wanted(const struct sbx_dns_slot *want, size_t n, __u32 rule_id)
{
	for (size_t i = 0; i < n; i++)
		if (want[i].rule_id == rule_id)
			return true;
	return false;
}

/* The slot for grant @rule_id: its own; a free one; an expired one; the one expiring first. */
static int pick_slot(const struct sbx_dns_entry *e, __u32 rule_id, unsigned placed, __u64 now)
{
	int i, first = -1;

	for (i = 0; i < SBX_DNS_SLOTS; i++)
		if (!(placed & (1u << i)) && is_grant_slot(&e->s[i]) && e->s[i].rule_id == rule_id)
			return i;
	for (i = 0; i < SBX_DNS_SLOTS; i++)
		if (!(placed & (1u << i)) && !e->s[i].expires_ns)
			return i;
	for (i = 0; i < SBX_DNS_SLOTS; i++) {
		if (placed & (1u << i))
			continue;
		if (e->s[i].expires_ns <= now)
			return i;
		if (first < 0 || e->s[i].expires_ns < e->s[first].expires_ns)
			first = i;
	}
	return first;
}

int grant_slots_merge(struct sbx_dns_entry *e, const struct sbx_dns_slot *want, size_t n, __u64 now)
{
	unsigned placed = 0;

	if (n > SBX_DNS_SLOTS)
		return -E2BIG;
	for (int i = 0; i < SBX_DNS_SLOTS; i++)
		if (is_grant_slot(&e->s[i]) && !wanted(want, n, e->s[i].rule_id))
			memset(&e->s[i], 0, sizeof(e->s[i]));
	for (size_t j = 0; j < n; j++) {
		int i = pick_slot(e, want[j].rule_id, placed, now);

		e->s[i] = want[j];
		placed |= 1u << i;
	}
	return 0;
}

static bool has_grant_slot(const struct sbx_dns_entry *e)
{
	for (int i = 0; i < SBX_DNS_SLOTS; i++)
		if (is_grant_slot(&e->s[i]))
			return true;
	return false;
}

static bool entry_used(const struct sbx_dns_entry *e)
{
	for (int i = 0; i < SBX_DNS_SLOTS; i++)
		if (e->s[i].expires_ns)
			return true;
	return false;
}

/* The slots live grants want at @addr; -E2BIG past SBX_DNS_SLOTS. */
static int slots_for(const struct grant *g, size_t n, __u64 now, const __u8 addr[16],
		     struct sbx_dns_slot *want, size_t *nw)
{
	*nw = 0;
	for (size_t i = 0; i < n; i++) {
		if (grant_is_file(&g[i]) || !live(&g[i], now))
			continue;
		for (size_t a = 0; a < g[i].nr_addrs; a++) {
			if (memcmp(g[i].addrs[a], addr, 16))
				continue;
			if (*nw == SBX_DNS_SLOTS)
				return -E2BIG;
			want[(*nw)++] = (struct sbx_dns_slot){ .expires_ns = g[i].expires_ns,
							       .domain_id = SBX_DOMAIN_GRANT,
							       .rule_id = SBX_RULE_GRANT_BASE + g[i].id,
							       .lo = g[i].lo, .hi = g[i].hi };
		}
	}
	return 0;
}

static const struct grant_dns_cur *find_cur(const struct grant_dns_cur *cur, size_t n,
					    const struct sbx_dns_key *k)
{
	for (size_t i = 0; i < n; i++)
		if (!memcmp(&cur[i].key, k, sizeof(*k)))
			return &cur[i];
	return NULL;
}

/* The writes for one address: its grant slots as @g wants them. */
static int plan_addr(struct grant_plan *plan, __u64 cgid, const struct grant *g, size_t n, __u64 now,
		     const struct grant_dns_cur *cur, size_t nr_cur, const __u8 addr[16])
{
	struct sbx_dns_key k = { .sandbox_cgid = cgid };
	struct sbx_dns_slot want[SBX_DNS_SLOTS];
	const struct grant_dns_cur *c;
	struct sbx_dns_entry e = {};
	struct grant_write *w;
	size_t nw;
	int err;

	memcpy(k.addr, addr, 16);
	c = find_cur(cur, nr_cur, &k);
	if (c)
		e = c->e;
	err = slots_for(g, n, now, addr, want, &nw) ?: grant_slots_merge(&e, want, nw, now);
	if (err)
		return err;
	if (c ? !memcmp(&e, &c->e, sizeof(e)) : !entry_used(&e))
		return 0;
	w = plan_push(plan);
	if (!w)
		return -ENOMEM;
	w->dns = true;
	w->dns_key = k;
	w->had = c != NULL;
	w->keep = entry_used(&e);
	if (c)
		w->dns_old = c->e;
	w->dns_new = e;
	return 0;
}

struct addr_list {
	__u8 (*a)[16];
	size_t n, cap;
};

static int addr_add(struct addr_list *l, const __u8 addr[16])
{
	for (size_t i = 0; i < l->n; i++)
		if (!memcmp(l->a[i], addr, 16))
			return 0;
	if (l->n == l->cap) {
		void *p = realloc(l->a, (l->cap = l->cap ? l->cap * 2 : 16) * sizeof(*l->a));

		if (!p)
			return -ENOMEM;
		l->a = p;
	}
	memcpy(l->a[l->n++], addr, 16);
	return 0;
}

int grant_plan_dns(struct grant_plan *plan, __u64 cgid, const struct grant *g, size_t n, __u64 now,
		   const struct grant_dns_cur *cur, size_t nr_cur)
{
	struct addr_list todo = {};
	int err = 0;

	/* Every address a live grant wants, and every entry holding a grant slot (maybe one to go). */
	for (size_t i = 0; i < n && !err; i++) {
		if (grant_is_file(&g[i]) || !live(&g[i], now))
			continue;
		for (size_t a = 0; a < g[i].nr_addrs && !err; a++)
			err = addr_add(&todo, g[i].addrs[a]);
	}
	for (size_t c = 0; c < nr_cur && !err; c++)
		if (cur[c].key.sandbox_cgid == cgid && has_grant_slot(&cur[c].e))
			err = addr_add(&todo, cur[c].key.addr);
	for (size_t i = 0; i < todo.n && !err; i++)
		err = plan_addr(plan, cgid, g, n, now, cur, nr_cur, todo.a[i]);
	free(todo.a);
	return err;
}

/* --- applying -------------------------------------------------------------------------- */

static int write_one(const struct grant_write *w, bool undo, const struct grant_map_ops *ops, void *ctx)
{
	bool keep = undo ? w->had : w->keep;
	int err;

	if (w->dns)
		err = keep ? ops->dns_put(ctx, &w->dns_key, undo ? &w->dns_old : &w->dns_new) :
			     ops->dns_del(ctx, &w->dns_key);
	else
		err = keep ? ops->fs_put(ctx, &w->fs_key, undo ? &w->fs_old : &w->fs_new) :
			     ops->fs_del(ctx, &w->fs_key);
	return !keep && err == -ENOENT ? 0 : err;
}

int grant_plan_apply(const struct grant_plan *plan, const struct grant_map_ops *ops, void *ctx,
		     size_t *failed, size_t *undo_failed)
{
	*undo_failed = 0;
	for (size_t i = 0; i < plan->nr; i++) {
		int err = write_one(&plan->w[i], false, ops, ctx);

		if (!err)
			continue;
		*failed = i;
		while (i--)
			if (write_one(&plan->w[i], true, ops, ctx))
				(*undo_failed)++;
		return err;
	}
	return 0;
}

static int fs_put(void *ctx, const struct sbx_fs_key *k, const struct sbx_fs_rule *r)
{
	return loader__put_fs_rule(ctx, k, r);
}

static int fs_del(void *ctx, const struct sbx_fs_key *k)
{
	return loader__delete_fs_rule(ctx, k);
}

static int dns_put(void *ctx, const struct sbx_dns_key *k, const struct sbx_dns_entry *e)
{
	return loader__dns_update(ctx, k, e);
}

static int dns_del(void *ctx, const struct sbx_dns_key *k)
{
	return loader__dns_delete(ctx, k);
}

const struct grant_map_ops grant_loader_ops = {
	.fs_put = fs_put, .fs_del = fs_del, .dns_put = dns_put, .dns_del = dns_del,
};

int grants_read_dns(struct sbx_loader *l, __u64 cgid, struct grant_dns_cur **cur, size_t *n)
{
	struct sbx_dns_key k, next;
	size_t cap = 0;
	bool first = true;
	int err = 0;

	*cur = NULL;
	*n = 0;
	while (!err && !loader__next_dns_key(l, first ? NULL : &k, &next)) {
		struct grant_dns_cur c = { .key = next };

		first = false;
		k = next;
		if (k.sandbox_cgid != cgid)
			continue;
		err = loader__dns_lookup(l, &k, &c.e);
		if (err == -ENOENT) {	/* gone since the walk found it */
			err = 0;
			continue;
		}
		if (!err && *n == cap) {
			void *p = realloc(*cur, (cap = cap ? cap * 2 : 16) * sizeof(**cur));

			if (!p)
				err = -ENOMEM;
			else
				*cur = p;
		}
		if (!err)
			(*cur)[(*n)++] = c;
	}
	if (err) {
		free(*cur);
		*cur = NULL;
		*n = 0;
	}
	return err;
}

size_t grants_active(const json_t *record, __u64 now)
{
	struct grant *g;
	size_t n, active = 0;
	__u64 until;
	__u32 next;

	if (grants_from_record(record, &g, &n, &next, &until))
		return 0;
	for (size_t i = 0; i < n; i++)
		active += grant_state(&g[i], now, until) == GRANT_ACTIVE;
	free(g);
	return active;
}

/* --- live grants over many records ------------------------------------------------- */

struct grants_seen {
	__u64 cgid;
	dev_t dev;
	ino_t ino;		/* 0: not read (yet, or it failed): read at the next count */
	off_t size;
	struct timespec mtime;
	__u64 *until;		/* per grant, when it stops being active (8 bytes, not a struct grant) */
	size_t n;
	bool seen;		/* in the count being made */
};

static bool same_file(const struct grants_seen *e, const struct stat *st)
{
	return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
	       e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/*
 * @e's grants from the file @path now is (@st: as it was before the read;
 * a later change reads it again). A read that fails counts none and is
 * tried again at the next count.
 */
static void reread(struct grants_tally *t, struct grants_seen *e, const char *path, const struct stat *st)
{
	json_t *rec = json_load_file(path, 0, NULL);
	struct grant *g = NULL;
	__u64 fs_until;
	__u32 next;
	size_t n = 0;

	free(e->until);
	e->until = NULL;
	e->n = 0;
	e->ino = 0;
	t->parses++;
	if (!rec || grants_from_record(rec, &g, &n, &next, &fs_until) ||
	    (n && !(e->until = malloc(n * sizeof(*e->until))))) {
		json_decref(rec);
		free(g);
		return;
	}
	json_decref(rec);
	for (size_t i = 0; i < n; i++)
		e->until[i] = active_until(&g[i], fs_until);
	free(g);
	e->n = n;
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->size = st->st_size;
	e->mtime = st->st_mtim;
}

static struct grants_seen *tally_entry(struct grants_tally *t, __u64 cgid)
{
	struct grants_seen *grown;

	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].cgid == cgid)
			return &t->e[i];
	grown = realloc(t->e, (t->n + 1) * sizeof(*t->e));
	if (!grown)
		return NULL;
	t->e = grown;
	t->e[t->n] = (struct grants_seen){ .cgid = cgid };
	return &t->e[t->n++];
}

void grants_tally_begin(struct grants_tally *t)
{
	for (size_t i = 0; i < t->n; i++)
		t->e[i].seen = false;
}

size_t grants_tally_record(struct grants_tally *t, __u64 cgid, const char *path, __u64 now)
{
	struct grants_seen *e;
	struct stat st;
	size_t active = 0;

	if (stat(path, &st) || !(e = tally_entry(t, cgid)))
		return 0;
	e->seen = true;
	if (!e->ino || !same_file(e, &st))
		reread(t, e, path, &st);
	for (size_t i = 0; i < e->n; i++)
		active += now < e->until[i];
	return active;
}

void grants_tally_end(struct grants_tally *t)
{
	size_t kept = 0;

	for (size_t i = 0; i < t->n; i++) {
		if (t->e[i].seen)
			t->e[kept++] = t->e[i];
		else
			free(t->e[i].until);
	}
	t->n = kept;
}

void grants_tally_free(struct grants_tally *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].until);
	free(t->e);
	*t = (struct grants_tally){};
}
