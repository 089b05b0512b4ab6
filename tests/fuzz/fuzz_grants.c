// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_grants.c — libFuzzer target: what `grant` parses (grants.h). The
 * first byte says what the rest is:
 *
 *   't'           a --ttl value (grant_parse_ttl)
 *   'r' 'w' 'c' 'd'  the target of --read, --write, --connect, --domain
 *                 (grant_parse_target), then the grant through the record
 *                 and back (grant_to_json, grant_from_json)
 *   anything else the whole input is a cgroup's record (sbxstate.h): its
 *                 policy rules and grants read, compiled and planned as
 *                 `grant` does against a kernel holding the policy, and
 *                 written back (grants_record_set) and read again;
 *                 the rule texts events take from it and the limits
 *                 detach puts back (state_rule_text, state_limits).
 *
 * The record is written by sbx-bpf itself, but it sits in a file under
 * /run that outlives versions, so a bad one must be refused, not crash.
 */
#include <errno.h>
#include <stdbool.h>
#include <jansson.h>

#include "fsrules.h"
#include "fuzz.h"
#include "grants.h"
#include "policy.h"
#include "sbx_abi.h"
#include "sbxstate.h"

static const struct policy_env env = { .home = "/home/fuzz", .cwd = "/tmp/fuzz-cwd" };
#define NOW	(3600ULL * 1000000000ULL)

static void fuzz_ttl(const char *s)
{
	char err[256] = "";
	__u64 ns = 0;
	int r = grant_parse_ttl(s, &ns, err, sizeof(err));

	if (r) {
		CHECK(r == -EINVAL && err[0], "'%s': %d '%s'", s, r, err);
		return;
	}
	CHECK(ns && ns <= GRANT_TTL_MAX_MS * 1000000ULL && !(ns % 1000000), "'%s': %llu ns", s,
	      (unsigned long long)ns);
}

static void same_grant(const struct grant *a, const struct grant *b)
{
	CHECK(a->id == b->id && a->kind == b->kind && !strcmp(a->target, b->target) &&
	      !strcmp(a->name, b->name) && a->nr_addrs == b->nr_addrs &&
	      !memcmp(a->addrs, b->addrs, sizeof(a->addrs[0]) * a->nr_addrs) && a->lo == b->lo &&
	      a->hi == b->hi && a->expires_ns == b->expires_ns && a->expires_wall == b->expires_wall &&
	      a->created == b->created, "grant %u '%s' changed through the record", a->id, a->target);
}

static void fuzz_target(enum grant_kind kind, const char *s)
{
	static const __u8 lo4[16] = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 };
	struct grant g, back;
	char err[512] = "";
	json_t *o;
	int r = grant_parse_target(&g, kind, s, &env, err, sizeof(err));

	if (r) {
		CHECK(r == -EINVAL && err[0], "'%s': %d '%s'", s, r, err);
		return;
	}
	CHECK(g.lo <= g.hi && g.target[0], "'%s': ports %u-%u target '%s'", s, g.lo, g.hi, g.target);
	switch (kind) {
	case GRANT_READ:
	case GRANT_WRITE:
		CHECK(g.kind == kind && g.target[0] == '/' && !g.nr_addrs, "'%s': '%s'", s, g.target);
		break;
	case GRANT_CONNECT:
		CHECK(g.kind == GRANT_CONNECT && g.nr_addrs == 1, "'%s': %d, %zu addresses", s, g.kind,
		      g.nr_addrs);
		break;
	case GRANT_DOMAIN:
		CHECK((g.kind == GRANT_CONNECT && g.nr_addrs == 1) ||
		      (g.kind == GRANT_DOMAIN && g.name[0] && !g.nr_addrs), "'%s': %d '%s'", s, g.kind, g.name);
		if (g.kind == GRANT_DOMAIN)
			grant_add_addr(&g, lo4);	/* as if it resolved */
		break;
	}
	g.id = 1;
	g.expires_ns = NOW + 1;
	g.expires_wall = 1700000000;
	g.created = 1690000000;
	o = grant_to_json(&g);
	CHECK(o, "'%s': grant_to_json failed", s);
	r = grant_from_json(o, &back);
	CHECK(!r, "'%s': the record of grant '%s' does not read back: %d", s, g.target, r);
	same_grant(&g, &back);
	json_decref(o);
}

/* The plan `grant` makes against a kernel that holds exactly the policy. */
static void plan(const struct policy *pol, const struct grant *g, size_t n)
{
	struct fs_compiled pc, with, out;
	struct grant_plan pl = {};
	__u64 until;
	int r;

	if (fs_compile(pol, 1, &pc))
		return;	/* a rule the kernel cannot take: `grant` stops there too */
	r = grants_compile_fs(pol, g, n, NOW, 1, &with, &until);
	CHECK(!r, "grants_compile_fs: %d", r);
	CHECK(!until || until > NOW, "until %llu", (unsigned long long)until);
	r = grants_fs_entries(&pc, &with, until, true, &out);
	CHECK(!r, "grants_fs_entries: %d", r);
	for (size_t i = 0; i < out.nr; i++)
		CHECK(!out.entries[i].rule.expires_ns || out.entries[i].rule.expires_ns == until,
		      "entry %zu expires at %llu", i, (unsigned long long)out.entries[i].rule.expires_ns);
	fs_compiled_free(&out);
	r = grant_plan_fs(&pl, &pc, &with, until, &pc);
	CHECK(!r, "grant_plan_fs: %d", r);
	r = grant_plan_dns(&pl, 42, g, n, NOW, NULL, 0);
	CHECK(!r || r == -E2BIG, "grant_plan_dns: %d", r);
	grant_plan_free(&pl);
	fs_compiled_free(&pc);
	fs_compiled_free(&with);
}

/* What the daemon and detach read from any record, grants or not. */
static void other_readers(const json_t *rec, const struct grant *g, size_t n)
{
	static const __u32 ids[] = { 0, 1, 2, SBX_RULE_NET_BASE, SBX_RULE_DOMAIN_BASE + 1, SBX_RULE_GRANT_BASE,
				     SBX_RULE_NONE, SBX_RULE_FIRST_BUILTIN - 1 };
	struct limit_write w[8];
	int r;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		(void)state_rule_text(rec, ids[i]);
	for (size_t i = 0; i < n; i++)
		(void)state_rule_text(rec, SBX_RULE_GRANT_BASE + g[i].id);
	r = state_limits(rec, "limits_restore", w, 8);
	CHECK(r == -EINVAL || r == -E2BIG || (r >= 0 && r <= 8), "state_limits: %d", r);
	for (int i = 0; i < r; i++)
		CHECK(memchr(w[i].file, 0, sizeof(w[i].file)) && memchr(w[i].value, 0, sizeof(w[i].value)),
		      "limit %d not a string", i);
}

static void fuzz_record(const char *text)
{
	json_t *rec = json_loads(text, 0, NULL), *again;
	struct grant *g = NULL, *g2 = NULL;
	struct policy pol = {};
	size_t n = 0, n2 = 0;
	__u32 next = 0, next2 = 0;
	__u64 fs_until = 0, fs_until2 = 0;
	char why[256];
	int r;

	if (!rec)
		return;
	r = grants_from_record(rec, &g, &n, &next, &fs_until);
	other_readers(rec, g, n);
	if (r) {
		CHECK(r == -EINVAL && !g && !n, "grants_from_record: %d", r);
		json_decref(rec);
		return;
	}
	CHECK(n <= GRANTS_MAX && next >= 1, "%zu grants, next id %u", n, next);
	for (size_t i = 0; i < n; i++) {
		CHECK(g[i].id >= 1 && g[i].id < next && g[i].lo <= g[i].hi && g[i].nr_addrs <= GRANT_ADDRS_MAX,
		      "grant %zu: id %u of %u, ports %u-%u", i, g[i].id, next, g[i].lo, g[i].hi);
		(void)grant_state(&g[i], NOW, fs_until);
	}
	(void)grants_check_addrs(g, n, NOW, why, sizeof(why));

	again = grants_record_set(rec, g, n, next, fs_until);
	CHECK(again, "grants_record_set failed");
	r = grants_from_record(again, &g2, &n2, &next2, &fs_until2);
	CHECK(!r && n2 == n && next2 == next && fs_until2 == fs_until, "record does not read back: %d", r);
	for (size_t i = 0; i < n; i++)
		same_grant(&g[i], &g2[i]);
	json_decref(again);
	free(g2);

	r = grants_record_policy(rec, &pol);
	CHECK(!r || r == -ENODATA || r == -EINVAL, "grants_record_policy: %d", r);
	if (!r) {
		for (size_t i = 0; i < n; i++)
			if (grant_is_file(&g[i]))
				(void)grant_shadowed(&pol, g[i].kind, g[i].target, why, sizeof(why));
		plan(&pol, g, n);
	}
	policy_free(&pol);
	n = grants_prune(g, n, NOW);
	free(g);
	json_decref(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);

	switch (size ? text[0] : 0) {
	case 't': fuzz_ttl(text + 1); break;
	case 'r': fuzz_target(GRANT_READ, text + 1); break;
	case 'w': fuzz_target(GRANT_WRITE, text + 1); break;
	case 'c': fuzz_target(GRANT_CONNECT, text + 1); break;
	case 'd': fuzz_target(GRANT_DOMAIN, text + 1); break;
	default: fuzz_record(text); break;
	}
	free(text);
	return 0;
}
