// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_policy.c — libFuzzer target: the input as a policy file, through
 * what `check` and `run` do with one: policy_load_string, the mandatory
 * set, fs_compile and net_compile, the JSON and text outputs. Besides what
 * ASan and UBSan catch, it checks the contract of policy.h:
 *
 *   - an error is -errno; @p stays empty; -EINVAL comes with a message
 *     "fuzz.json:LINE:COL: …" inside the document; warnings are positioned too;
 *   - a policy that loads compiles: fs_compile never fails, net_compile only
 *     with -E2BIG and a message; every rule id in a compiled entry names a
 *     rule of the policy (policy_rule_text), keys are sorted and distinct;
 *   - rules are what the kernel expects: absolute paths start with '/', any-
 *     depth ones have 1..POLICY_ANY_DEPTH_MAX components, CIDRs have no bits
 *     beyond their prefix, port ranges are ordered.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <jansson.h>

#include "fsrules.h"
#include "fuzz.h"
#include "netrules.h"
#include "policy.h"
#include "sbx_abi.h"

static const struct policy_env env = { .home = "/home/fuzz", .cwd = "/tmp/fuzz-cwd" };

static void check_diag(const struct policy_diag *d, long lines)
{
	CHECK(d->nr_warnings <= POLICY_DIAG_MAX, "%zu warnings", d->nr_warnings);
	for (size_t i = 0; i < d->nr_warnings; i++)
		CHECK(fuzz_positioned(d->warnings[i], FUZZ_NAME, lines), "warning '%s'", d->warnings[i]);
}

static void check_rule(const struct policy_rule *r)
{
	size_t n = 1;

	CHECK(r->path && r->text && r->origin, "rule without path, text or origin");
	CHECK(r->kind <= RULE_ALLOW_UNIX, "kind %d", r->kind);
	if (r->scope == RULE_ABSOLUTE) {
		CHECK(r->path[0] == '/' && strlen(r->path) < SBX_PATH_MAX, "absolute rule '%s'", r->path);
		return;
	}
	CHECK(r->scope == RULE_ANY_DEPTH, "scope %d", r->scope);
	CHECK(r->path[0] && r->path[0] != '/' && r->path[strlen(r->path) - 1] != '/',
	      "any-depth rule '%s'", r->path);
	for (const char *s = r->path; *s; s++) {
		CHECK(!(s[0] == '/' && s[1] == '/'), "any-depth rule '%s'", r->path);
		n += *s == '/';
	}
	CHECK(n <= POLICY_ANY_DEPTH_MAX, "any-depth rule '%s': %zu components", r->path, n);
}

static void check_net(const struct policy_network *n)
{
	for (size_t i = 0; i < n->nr_rules; i++) {
		const struct net_rule *r = &n->rules[i];

		CHECK(r->text && r->origin, "net rule %zu without text", i);
		CHECK(r->plen <= 128 && r->lo <= r->hi, "'%s': /%u %u-%u", r->text, r->plen, r->lo, r->hi);
		for (unsigned b = r->plen; b < 128; b++)
			CHECK(!(r->addr[b / 8] & (0x80 >> (b % 8))), "'%s': bit %u set past /%u", r->text, b,
			      r->plen);
	}
	for (size_t i = 0; i < n->nr_domains; i++) {
		const struct domain_rule *d = &n->domains[i];
		size_t len;

		CHECK(d->name && d->text && d->origin, "domain %zu without name or text", i);
		len = strlen(d->name);
		CHECK(d->lo <= d->hi, "'%s': ports %u-%u", d->text, d->lo, d->hi);
		CHECK(d->wildcard || len, "'%s': empty name", d->text);
		CHECK(!len || d->name[len - 1] != '.', "'%s': trailing dot", d->text);
		for (const char *s = d->name; *s; s++)
			CHECK(*s < 'A' || *s > 'Z', "'%s': upper case in '%s'", d->text, d->name);
	}
}

static bool rule_ok(const struct policy *p, __u32 id)
{
	return id < p->nr_rules && policy_rule_text(p, id);
}

static void check_fs(const struct policy *p, const struct fs_compiled *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		const struct fs_entry *e = &c->entries[i];
		__u32 f = e->rule.flags;

		CHECK(e->key.policy_id == 1, "policy id %u", e->key.policy_id);
		CHECK(!i || memcmp(&c->entries[i - 1].key, &e->key, sizeof(e->key)) < 0, "entry %zu out of order", i);
		CHECK(fs_compiled_find(c, &e->key) == e, "entry %zu not found by its key", i);
		CHECK(f && !(f & ~0xffu), "entry %zu: flags %#x", i, f);
		if (f & (SBX_FS_DENY_READ | SBX_FS_ALLOW_READ))
			CHECK(rule_ok(p, e->rule.read_rule), "entry %zu: read rule %u", i, e->rule.read_rule);
		if (f & (SBX_FS_DENY_WRITE | SBX_FS_ALLOW_WRITE | SBX_FS_MANDATORY))
			CHECK(rule_ok(p, e->rule.write_rule), "entry %zu: write rule %u", i, e->rule.write_rule);
		if (f & SBX_FS_GUARD)
			CHECK(rule_ok(p, e->rule.guard_rule), "entry %zu: guard rule %u", i, e->rule.guard_rule);
		if (f & SBX_FS_UNIX_SOCKET)
			CHECK(rule_ok(p, e->rule.unix_rule), "entry %zu: unix rule %u", i, e->rule.unix_rule);
		CHECK(!e->rule.expires_ns, "entry %zu has an expiry", i);
	}
	CHECK(!(c->any_depth_mask & ~0xf0fu), "any_depth_mask %#x", c->any_depth_mask);
}

static void check_net_compiled(const struct policy *p, const struct net_compiled *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		const struct net_prefix *x = &c->prefixes[i];

		CHECK(x->key.policy_id == 1 && x->key.prefixlen >= 32 && x->key.prefixlen <= 32 + 128,
		      "prefix %zu: id %u len %u", i, x->key.policy_id, x->key.prefixlen);
		CHECK(x->ports.nr <= SBX_NET_PORT_RANGES, "prefix %zu: %u ranges", i, x->ports.nr);
		for (__u32 r = 0; r < x->ports.nr; r++) {
			const struct sbx_net_range *g = &x->ports.r[r];

			CHECK(g->lo <= g->hi && (!r || g->lo > x->ports.r[r - 1].hi),
			      "prefix %zu: range %u %u-%u", i, r, g->lo, g->hi);
			CHECK(g->verdict == SBX_NET_ALLOW || g->verdict == SBX_NET_DENY,
			      "prefix %zu: verdict %u", i, g->verdict);
			CHECK((g->rule_id & SBX_RULE_BASE_MASK) == SBX_RULE_NET_BASE &&
			      policy_rule_text(p, g->rule_id), "prefix %zu: rule %#x", i, g->rule_id);
		}
	}
}

/* The resolver's verdict on each domain entry's own name: a rule of the policy, ordered ports. */
static void check_verdicts(const struct policy *p)
{
	for (size_t i = 0; i < p->net.nr_domains; i++) {
		const struct domain_rule *d = &p->net.domains[i];
		char name[300];
		struct domain_verdict v;

		snprintf(name, sizeof(name), "%s%s", d->wildcard ? "x." : "", d->name);
		net_domain_verdict(p, name, &v);
		CHECK(v.rule_id == SBX_RULE_DOMAIN_DEFAULT || policy_rule_text(p, v.rule_id),
		      "'%s': rule %#x", name, v.rule_id);
		CHECK(!v.allowed || v.lo <= v.hi, "'%s': ports %u-%u", name, v.lo, v.hi);
		/* A deny entry refuses its own name, whatever else is listed. */
		if (d->deny && (d->name[0] || d->wildcard))
			CHECK(!v.allowed, "'%s' allowed despite '%s'", name, d->text);
	}
}

static void check_outputs(const struct policy *p)
{
	static FILE *null;
	char *text = policy_to_json(p);
	json_t *back;

	CHECK(text, "policy_to_json failed");
	back = json_loads(text, 0, NULL);
	CHECK(back, "policy_to_json gave invalid JSON");
	json_decref(back);
	free(text);
	if (!null && !(null = fopen("/dev/null", "we")))
		abort();
	policy_print(p, null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct policy zero;
	struct policy_diag diag = {};
	struct policy p = {};
	struct fs_compiled fs;
	struct net_compiled net;
	char *text = fuzz_string(data, size), err[256];
	long lines = fuzz_lines(text);
	int r;

	r = policy_load_string(&p, FUZZ_NAME, text, &env, &diag);
	check_diag(&diag, lines);
	if (r) {
		CHECK(r < 0 && r > -4096, "returned %d", r);
		CHECK(!memcmp(&p, &zero, sizeof(p)), "a failed load left rules behind");
		CHECK(diag.error[0], "error %d without a message", r);
		if (r == -EINVAL)
			CHECK(fuzz_positioned(diag.error, FUZZ_NAME, lines), "error '%s'", diag.error);
		free(text);
		return 0;
	}
	CHECK(!strcmp(p.name, FUZZ_NAME) && p.mode <= POLICY_AUDIT, "name '%s' mode %d", p.name, p.mode);
	for (size_t i = 0; i < p.nr_rules; i++)
		check_rule(&p.rules[i]);
	check_net(&p.net);
	CHECK(!policy_add_mandatory(&p), "policy_add_mandatory failed");
	for (size_t i = 0; i < p.nr_rules; i++)
		check_rule(&p.rules[i]);

	r = fs_compile(&p, 1, &fs);
	CHECK(!r, "fs_compile: %d", r);
	check_fs(&p, &fs);
	fs_compiled_free(&fs);

	r = net_compile(&p, 1, &net, err, sizeof(err));
	CHECK(!r || (r == -E2BIG && err[0]), "net_compile: %d '%s'", r, err);
	if (!r)
		check_net_compiled(&p, &net);
	net_compiled_free(&net);

	check_verdicts(&p);
	check_outputs(&p);
	policy_free(&p);
	free(text);
	return 0;
}
