// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * grant.c — `sbx-bpf grant|revoke|grants`: live grants on a cgroup put
 * under a policy by `attach` (the model is in grants.h and grants.c, what
 * users see in docs/agent.md "Grants").
 *
 * grant and revoke go in this order, so that nothing is half applied:
 *   1. check everything: the flags, the TTL, every path and address, the
 *      cgroup, the pinned programs, the cgroup's policy and record, names
 *      resolved, the whole new grant set (how many, slots per address);
 *   2. read what the kernel holds for the cgroup (its policy's fs_rules
 *      entries, its dns_allow entries) and plan every write;
 *   3. the record, with the new grant set;
 *   4. the map writes; when one fails, those before it are put back, and
 *      so is the old record.
 * The record comes first because it is what every later command installs
 * again: a command that dies between 3 and 4 leaves the kernel behind the
 * record (a grant not in force yet, or, for revoke, one in force until it
 * expires or the next grant or revoke, which plans from the kernel's own
 * entries and takes it out), never a grant in force that no record names.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>

#include "cli.h"
#include "fsrules.h"
#include "grants.h"
#include "loader.h"
#include "sbxstate.h"
#include "util.h"

#define DOMAIN_NOTE	"resolved when granted: later changes of the name's addresses are not followed"

struct spec {
	enum grant_kind kind;
	const char *arg;
};

struct grant_opts {
	const char *pin_dir;
	const char *ttl;
	bool all;
	struct spec specs[GRANTS_MAX];
	size_t nr_specs;
	int first_arg;		/* optind after the options */
};

/* What grant and revoke work on: the cgroup, its policy, its record and grants. */
struct gctx {
	const char *cmd;
	char path[PATH_MAX];
	__u64 cgid;
	struct sbx_loader *l;
	int lock;
	struct sbx_sandbox sb;
	json_t *record;
	struct policy pol;		/* the attached policy's file rules, from the record */
	struct grant *g;		/* the record's grants */
	size_t n;
	__u32 next_id;
	__u64 fs_until;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: sbx-bpf grant CGROUP (--read PATH | --write PATH | --connect ADDR[:PORT|:LO-HI] |\n"
		"                             --domain NAME[:PORT])... --ttl DURATION [--pin-dir DIR] [--json]\n"
		"       sbx-bpf revoke CGROUP (ID... | --all) [--pin-dir DIR] [--json]\n"
		"       sbx-bpf grants CGROUP [--json]\n"
		"\n"
		"Allow a cgroup put under a policy by 'attach' more than its policy does, for a\n"
		"while: reading or writing at and beneath PATH, connecting to ADDR (all ports, or\n"
		"those given), or to the addresses NAME has now. DURATION: '90s', '30m', '2h', '1d'.\n"
		"The kernel ends a grant by itself when its time is up, whether or not the daemon\n"
		"runs. File grants end together, with the earliest of them; the next grant or\n"
		"revoke puts back the ones still in their time. A grant never opens what the\n"
		"mandatory set protects, nor an address the policy's 'deny' list names.\n"
		"revoke takes grants back at once; grants lists them (id, kind, target, expiry,\n"
		"seconds left, state: active, lapsed or expired).\n");
}

static int parse(int argc, char **argv, struct grant_opts *o)
{
	static const struct option opts[] = {
		{ "read", required_argument, NULL, 'r' },
		{ "write", required_argument, NULL, 'w' },
		{ "connect", required_argument, NULL, 'c' },
		{ "domain", required_argument, NULL, 'D' },
		{ "ttl", required_argument, NULL, 't' },
		{ "pin-dir", required_argument, NULL, 'd' },
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static const enum grant_kind kinds[128] = { ['r'] = GRANT_READ, ['w'] = GRANT_WRITE,
						     ['c'] = GRANT_CONNECT, ['D'] = GRANT_DOMAIN };
	int c;

	while ((c = getopt_long(argc, argv, "jvh", opts, NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		switch (c) {
		case 'r': case 'w': case 'c': case 'D':
			if (o->nr_specs == GRANTS_MAX) {
				p_err("grant: at most %d grants at once", GRANTS_MAX);
				return EXIT_USAGE;
			}
			o->specs[o->nr_specs++] = (struct spec){ kinds[c], optarg };
			break;
		case 't': o->ttl = optarg; break;
		case 'd': o->pin_dir = optarg; break;
		case 'a': o->all = true; break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	o->first_arg = optind;
	return 0;
}

/* --- the cgroup, its policy, its record ---------------------------------------------- */

static void ctx_free(struct gctx *c)
{
	if (c->lock >= 0)
		close(c->lock);
	loader__destroy(c->l);
	json_decref(c->record);
	policy_free(&c->pol);
	free(c->g);
}

/* The record, as grant and revoke need it. 0, or 1 after saying why. */
static int read_record(struct gctx *c)
{
	json_int_t id;
	int err;

	c->record = state_read(SBX_STATE_DIR, c->cgid);
	if (!c->record) {
		p_err("%s: no record of %s in %s: attach its policy again", c->cmd, c->path, SBX_STATE_DIR);
		return 1;
	}
	id = json_integer_value(json_object_get(c->record, "policy_id"));
	if (id != (json_int_t)c->sb.policy_id) {
		p_err("%s: the record of %s is of policy id %lld, the kernel has %u: attach its policy again",
		      c->cmd, c->path, (long long)id, c->sb.policy_id);
		return 1;
	}
	err = grants_record_policy(c->record, &c->pol);
	if (err == -ENODATA)
		p_err("%s: the record of %s holds no file rules of its policy (an older sbx-bpf wrote it, "
		      "a rule's path is not UTF-8, or its built-in rules' file under %s is gone): "
		      "attach its policy again", c->cmd, c->path, SBX_STATE_DIR);
	else if (!err && (err = grants_from_record(c->record, &c->g, &c->n, &c->next_id, &c->fs_until)))
		p_err("%s: the grants in the record of %s cannot be read: %s", c->cmd, c->path, strerror(-err));
	else if (err)
		p_err("%s: the record of %s cannot be read: %s", c->cmd, c->path, strerror(-err));
	return err ? 1 : 0;
}

/* Step 1 for the cgroup: found, pinned set open, under a policy, its record read. 0 or 1. */
static int ctx_open(struct gctx *c, const char *target, const char *pin_dir)
{
	c->lock = -1;
	c->cgid = cli_cgroup_id(target, c->path, sizeof(c->path));
	if (!c->cgid)
		return 1;
	c->l = cli_open_pinned(pin_dir);
	if (!c->l)
		return 1;
	c->lock = cli_lock_records();
	if (c->lock < 0)
		return 1;
	if (loader__get_sandbox(c->l, c->cgid, &c->sb)) {
		p_err("%s: %s has no policy: put it under one with 'sbx-bpf attach' first", c->cmd, c->path);
		return 1;
	}
	return read_record(c);
}

/* --- steps 2 to 4 ------------------------------------------------------------------- */

/* Step 2: every write that makes the kernel hold @g. 0, or 1 after saying why. */
static int plan(struct gctx *c, const struct grant *g, size_t n, __u64 now, struct grant_plan *pl,
		__u64 *until)
{
	struct fs_compiled pol = {}, with = {}, cur = {};
	struct grant_dns_cur *dcur = NULL;
	size_t ndcur = 0;
	int err;

	err = fs_compile(&c->pol, c->sb.policy_id, &pol) ?:
	      grants_compile_fs(&c->pol, g, n, now, c->sb.policy_id, &with, until) ?:
	      fs_read_policy(c->l, c->sb.policy_id, &cur) ?:
	      grants_read_dns(c->l, c->cgid, &dcur, &ndcur);
	if (!err && (err = grant_plan_fs(pl, &pol, &with, *until, &cur)) == -ESTALE)
		p_err("%s: the record of %s does not describe the rules in the kernel: attach its policy again",
		      c->cmd, c->path);
	else if (!err)
		err = grant_plan_dns(pl, c->cgid, g, n, now, dcur, ndcur);
	if (err && err != -ESTALE)
		p_err("%s: %s", c->cmd, strerror(-err));
	fs_compiled_free(&pol);
	fs_compiled_free(&with);
	fs_compiled_free(&cur);
	free(dcur);
	return err ? 1 : 0;
}

static const char *map_name(const struct grant_write *w)
{
	return w->dns ? "dns_allow" : "fs_rules";
}

/* Steps 3 and 4: the record, then the maps; either failing leaves both as they were. 0 or 1. */
static int commit(struct gctx *c, const struct grant_plan *pl, json_t *rec)
{
	size_t failed = 0, undo = 0;
	int err;

	err = state_write_record(SBX_STATE_DIR, c->cgid, rec);
	if (err) {
		p_err("%s: cannot write the record of %s: %s; nothing changed", c->cmd, c->path, strerror(-err));
		return 1;
	}
	err = grant_plan_apply(pl, &grant_loader_ops, c->l, &failed, &undo);
	if (!err)
		return 0;
	p_err("%s: the kernel refused a %s write: %s%s", c->cmd, map_name(&pl->w[failed]), strerror(-err),
	      err == -E2BIG || err == -ENOMEM ? " (the map is full)" : "");
	if (undo)
		p_warn("%s: %zu of the writes before it could not be undone: run the command again", c->cmd, undo);
	if (state_write_record(SBX_STATE_DIR, c->cgid, c->record))
		p_warn("%s: cannot put the old record of %s back", c->cmd, c->path);
	return 1;
}

/* Steps 2 to 4 for the new grant set @g. 0, or 1 after saying why. */
static int sync_grants(struct gctx *c, const struct grant *g, size_t n, __u32 next_id, __u64 now,
		       __u64 *until)
{
	struct grant_plan pl = {};
	json_t *rec = NULL;
	int ret;

	ret = plan(c, g, n, now, &pl, until);
	if (!ret && !(rec = grants_record_set(c->record, g, n, next_id, *until))) {
		p_err("%s: %s", c->cmd, strerror(ENOMEM));
		ret = 1;
	}
	if (!ret)
		ret = commit(c, &pl, rec);
	json_decref(rec);
	grant_plan_free(&pl);
	return ret;
}

/*
 * A file grant ends while descriptors opened under it may stay open: from
 * the first one on, the sandbox's descriptor uses are judged (fdscan.h).
 * 0, or 1 after saying why.
 */
static int judge_uses_for(struct gctx *c, const struct grant *add, size_t n)
{
	bool files = false;
	int err;

	for (size_t i = 0; i < n; i++)
		files |= add[i].kind == GRANT_READ || add[i].kind == GRANT_WRITE;
	if (!files || (c->sb.flags & SBX_SANDBOX_FD_JUDGE))
		return 0;
	if (cli_judge_uses(c->l, &c->sb))
		return 1;
	err = loader__replace_sandbox(c->l, c->cgid, &c->sb);
	if (err)
		p_err("%s: %s", c->cmd, strerror(-err));
	return err ? 1 : 0;
}

/* --- output ------------------------------------------------------------------------- */

static long long seconds_left(const struct grant *g, __u64 now)
{
	return g->expires_ns > now ? (long long)((g->expires_ns - now + 999999999ULL) / 1000000000ULL) : 0;
}

/* One grant as grant, revoke and grants show it. */
static json_t *grant_out(const struct grant *g, __u64 now, __u64 fs_until)
{
	json_t *o = grant_to_json(g);

	json_object_del(o, "expires_ns");
	json_object_set_new(o, "expires_in", json_integer(seconds_left(g, now)));
	json_object_set_new(o, "state", json_string(grant_state_name(grant_state(g, now, fs_until))));
	if (g->kind == GRANT_DOMAIN)
		json_object_set_new(o, "note", json_string(DOMAIN_NOTE));
	return o;
}

static void print_addrs(const struct grant *g)
{
	char host[64];

	for (size_t i = 0; i < g->nr_addrs; i++) {
		grant_format_addr(g->addrs[i], host, sizeof(host));
		printf("%s%s", i ? ", " : ": ", host);
	}
}

static void print_granted(const struct gctx *c, const struct grant *g, size_t n, __u64 now, __u64 until)
{
	json_t *a = json_array();
	char when[32], ttl[64];

	for (size_t i = 0; i < n; i++) {
		if (cli.json) {
			json_array_append_new(a, grant_out(&g[i], now, until));
			continue;
		}
		grant_format_time(g[i].expires_wall, when, sizeof(when));
		limits_format_duration((long long)((g[i].expires_ns - now) / 1000000), ttl, sizeof(ttl));
		printf("grant %u: %s %s until %s (%s)", g[i].id, grant_kind_name(g[i].kind), g[i].target, when, ttl);
		if (g[i].kind == GRANT_DOMAIN) {
			print_addrs(&g[i]);
			printf(" (" DOMAIN_NOTE ")");
		}
		printf("\n");
	}
	if (cli.json)
		print_json(json_pack("{s:s, s:I, s:o}", "cgroup", c->path, "cgroup_id", (json_int_t)c->cgid,
				     "grants", a));
	else
		json_decref(a);
}

/* File grants end together: say which ones end before their own time, and when. */
static void warn_shortened(const struct grant *g, size_t n, __u64 now, __u64 until)
{
	const struct grant *first = NULL;
	char when[32];

	for (size_t i = 0; i < n && !first; i++)
		if (grant_is_file(&g[i]) && g[i].expires_ns == until)
			first = &g[i];
	for (size_t i = 0; first && i < n; i++) {
		if (!grant_is_file(&g[i]) || g[i].expires_ns <= until || g[i].expires_ns <= now)
			continue;
		grant_format_time(first->expires_wall, when, sizeof(when));
		p_warn("grant: file grants end together: grant %u (%s %s) is in force until %s, with grant %u; "
		       "the next grant or revoke puts it back for the rest of its time", g[i].id,
		       grant_kind_name(g[i].kind), g[i].target, when, first->id);
	}
}

/* --- grant ----------------------------------------------------------------------------- */

/* Step 1 for the flags alone: every target and the TTL. 0, or EXIT_USAGE after saying why. */
static int check_flags(const struct grant_opts *o, struct grant *out, __u64 *ttl_ns)
{
	char home[PATH_MAX], cwd[PATH_MAX], why[1024];
	struct policy_env env;
	int err;

	if (!o->nr_specs) {
		p_err("grant: give at least one of --read, --write, --connect and --domain");
		return EXIT_USAGE;
	}
	if (!o->ttl) {
		p_err("grant: --ttl is required: how long the grant lasts ('90s', '30m', '2h', '1d')");
		return EXIT_USAGE;
	}
	if (o->all) {
		p_err("grant: --all is for 'revoke'");
		return EXIT_USAGE;
	}
	if (grant_parse_ttl(o->ttl, ttl_ns, why, sizeof(why))) {
		p_err("grant: %s", why);
		return EXIT_USAGE;
	}
	err = policy_env_default(&env, home, sizeof(home), cwd, sizeof(cwd));
	if (err) {
		policy_env_strerror(err, why, sizeof(why));
		p_err("grant: %s", why);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < o->nr_specs; i++) {
		if (grant_parse_target(&out[i], o->specs[i].kind, o->specs[i].arg, &env, why, sizeof(why))) {
			p_err("grant: %s", why);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* A file grant the policy would make useless is refused: it would only look like one. */
static int check_shadowed(const struct gctx *c, const struct grant *g, size_t n)
{
	char why[SBX_PATH_MAX + 64];

	for (size_t i = 0; i < n; i++) {
		if (!grant_is_file(&g[i]) || !grant_shadowed(&c->pol, g[i].kind, g[i].target, why, sizeof(why)))
			continue;
		p_err("grant: %s %s would change nothing: the policy's '%s' decides there, and a grant "
		      "does not override it", grant_kind_name(g[i].kind), g[i].target, why);
		return EXIT_USAGE;
	}
	return 0;
}

/* The addresses of a --domain grant's name, now. 0, or 1 after saying why. */
static int resolve(struct grant *g)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *ai;
	size_t seen = 0;
	int r;

	r = getaddrinfo(g->name, NULL, &hints, &res);
	if (r) {
		p_err("grant: cannot resolve '%s': %s", g->name, r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		return 1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		__u8 a[16] = { [10] = 0xff, [11] = 0xff };

		if (ai->ai_family == AF_INET)
			memcpy(a + 12, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
		else if (ai->ai_family == AF_INET6)
			memcpy(a, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
		else
			continue;
		seen++;
		grant_add_addr(g, a);
	}
	freeaddrinfo(res);
	if (!g->nr_addrs) {
		p_err("grant: '%s' has no IPv4 or IPv6 address", g->name);
		return 1;
	}
	if (seen > GRANT_ADDRS_MAX && g->nr_addrs == GRANT_ADDRS_MAX)
		p_warn("grant: '%s' has more than %d addresses: the grant covers the first %d", g->name,
		       GRANT_ADDRS_MAX, GRANT_ADDRS_MAX);
	return 0;
}

/*
 * Ids and times for the new grants, appended to the record's (pruned)
 * ones in @all; the whole set checked. 0, or 1 after saying why.
 */
static int new_set(struct gctx *c, struct grant *add, size_t nadd, __u64 ttl_ns, __u64 now,
		   struct grant **all, size_t *n)
{
	long long wall = time(NULL);
	char why[256];
	size_t old = grants_prune(c->g, c->n, now);

	if (old + nadd > GRANTS_MAX) {
		p_err("grant: %s would have %zu grants, the most is %d: revoke some first", c->path,
		      old + nadd, GRANTS_MAX);
		return 1;
	}
	*all = calloc(old + nadd, sizeof(**all));
	if (!*all) {
		p_err("grant: %s", strerror(ENOMEM));
		return 1;
	}
	memcpy(*all, c->g, old * sizeof(**all));
	for (size_t i = 0; i < nadd; i++) {
		add[i].id = c->next_id++;
		add[i].expires_ns = now + ttl_ns;
		add[i].created = wall;
		add[i].expires_wall = wall + (long long)((ttl_ns + 999999999ULL) / 1000000000ULL);
		(*all)[old + i] = add[i];
	}
	*n = old + nadd;
	if (grants_check_addrs(*all, *n, now, why, sizeof(why))) {
		p_err("grant: %s: revoke one of them first", why);
		return 1;
	}
	return 0;
}

int do_grant(int argc, char **argv)
{
	struct grant_opts o = {};
	struct gctx c = { .cmd = "grant", .lock = -1 };
	struct grant *add, *all = NULL;
	__u64 ttl_ns = 0, now, until = 0;
	size_t n = 0;
	int ret;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (argc - o.first_arg != 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	add = calloc(o.nr_specs ?: 1, sizeof(*add));
	if (!add)
		return 1;
	ret = check_flags(&o, add, &ttl_ns);
	if (!ret)
		ret = ctx_open(&c, argv[o.first_arg], o.pin_dir) ?: check_shadowed(&c, add, o.nr_specs);
	for (size_t i = 0; !ret && i < o.nr_specs; i++)
		if (add[i].kind == GRANT_DOMAIN)
			ret = resolve(&add[i]);
	now = cli_boottime_ns();
	if (!ret)
		ret = new_set(&c, add, o.nr_specs, ttl_ns, now, &all, &n) ?:
		      judge_uses_for(&c, add, o.nr_specs) ?:
		      sync_grants(&c, all, n, c.next_id, now, &until);
	if (!ret) {
		print_granted(&c, add, o.nr_specs, now, until);
		warn_shortened(all, n, now, until);
	}
	free(all);
	free(add);
	ctx_free(&c);
	return ret;
}

/* --- revoke ---------------------------------------------------------------------------- */

/* "3" → 3; 0 for anything that is not a grant id. */
static __u32 parse_id(const char *s)
{
	char *end;
	unsigned long v;

	if (*s < '1' || *s > '9')
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	return *end || errno || v > 0x0fffffff ? 0 : (__u32)v;
}

static bool listed(char **ids, int n, __u32 id)
{
	for (int i = 0; i < n; i++)
		if (parse_id(ids[i]) == id)
			return true;
	return false;
}

/* Every id given names a grant of the cgroup. 0, or EXIT_USAGE after saying which does not. */
static int check_ids(const struct gctx *c, char **ids, int n)
{
	for (int i = 0; i < n; i++) {
		bool found = false;

		for (size_t j = 0; j < c->n && !found; j++)
			found = c->g[j].id == parse_id(ids[i]);
		if (!found) {
			p_err("revoke: %s has no grant %s ('sbx-bpf grants %s' lists them)", c->path, ids[i], c->path);
			return EXIT_USAGE;
		}
	}
	return 0;
}

static void print_revoked(const struct gctx *c, char **ids, int nids, bool all)
{
	json_t *a = json_array();

	for (size_t i = 0; i < c->n; i++) {
		if (!all && !listed(ids, nids, c->g[i].id))
			continue;
		if (cli.json)
			json_array_append_new(a, json_integer(c->g[i].id));
		else
			printf("revoked grant %u: %s %s\n", c->g[i].id, grant_kind_name(c->g[i].kind), c->g[i].target);
	}
	if (cli.json)
		print_json(json_pack("{s:s, s:I, s:o}", "cgroup", c->path, "cgroup_id", (json_int_t)c->cgid,
				     "revoked", a));
	else
		json_decref(a);
}

static int check_revoke_args(const struct grant_opts *o, char **ids, int nids)
{
	if (o->nr_specs || o->ttl) {
		p_err("revoke: takes grant ids or --all, not the flags of 'grant'");
		return EXIT_USAGE;
	}
	if (!o->all == !nids) {
		p_err("revoke: give the ids of the grants to revoke, or --all");
		return EXIT_USAGE;
	}
	for (int i = 0; i < nids; i++) {
		if (!parse_id(ids[i])) {
			p_err("revoke: '%s' is not a grant id (a number from 'sbx-bpf grants')", ids[i]);
			return EXIT_USAGE;
		}
	}
	return 0;
}

int do_revoke(int argc, char **argv)
{
	struct grant_opts o = {};
	struct gctx c = { .cmd = "revoke", .lock = -1 };
	struct grant *keep = NULL;
	__u64 now, until;
	size_t n = 0;
	char **ids;
	int ret, nids;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (argc - o.first_arg < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	ids = argv + o.first_arg + 1;
	nids = argc - o.first_arg - 1;
	ret = check_revoke_args(&o, ids, nids) ?: ctx_open(&c, argv[o.first_arg], o.pin_dir) ?:
	      check_ids(&c, ids, nids);
	if (!ret && !(keep = calloc(c.n ?: 1, sizeof(*keep))))
		ret = 1;
	now = cli_boottime_ns();
	for (size_t i = 0; !ret && !o.all && i < c.n; i++)
		if (!listed(ids, nids, c.g[i].id))
			keep[n++] = c.g[i];
	if (!ret) {
		n = grants_prune(keep, n, now);
		ret = sync_grants(&c, keep, n, c.next_id, now, &until);
	}
	if (!ret)
		print_revoked(&c, ids, nids, o.all);
	free(keep);
	ctx_free(&c);
	return ret;
}

/* --- grants ---------------------------------------------------------------------------- */

static void print_grants(const struct grant *g, size_t n, __u64 now, __u64 fs_until)
{
	json_t *a = json_array();
	char when[32];

	for (size_t i = 0; i < n; i++) {
		if (cli.json) {
			json_array_append_new(a, grant_out(&g[i], now, fs_until));
			continue;
		}
		grant_format_time(g[i].expires_wall, when, sizeof(when));
		printf("%u\t%s\t%s\t%s\t%llds\t%s\n", g[i].id, grant_kind_name(g[i].kind), g[i].target, when,
		       seconds_left(&g[i], now), grant_state_name(grant_state(&g[i], now, fs_until)));
	}
	if (cli.json)
		print_json(a);
	else
		json_decref(a);
}

int do_grants(int argc, char **argv)
{
	struct grant_opts o = {};
	char path[PATH_MAX];
	struct grant *g = NULL;
	__u64 cgid, fs_until;
	json_t *st;
	__u32 next;
	size_t n;
	int ret;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (argc - o.first_arg != 1 || o.nr_specs || o.ttl || o.all) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cgid = cli_cgroup_id(argv[o.first_arg], path, sizeof(path));
	if (!cgid)
		return 1;
	st = state_read(SBX_STATE_DIR, cgid);
	if (!st) {
		p_err("grants: %s is not attached (no record in %s)", path, SBX_STATE_DIR);
		return 1;
	}
	ret = grants_from_record(st, &g, &n, &next, &fs_until);
	if (ret)
		p_err("grants: the grants in the record of %s cannot be read: %s", path, strerror(-ret));
	else
		print_grants(g, n, cli_boottime_ns(), fs_until);
	free(g);
	json_decref(st);
	return ret ? 1 : 0;
}
