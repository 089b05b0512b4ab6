// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * grants.c: --ttl, targets, file grants compiled over a real policy and
 * diffed into entries with a base and an expiry, the plans against a fake
 * kernel map (applied, rolled back), connect slots, the record.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fsrules.h"
#include "grants.h"
#include "policy.h"
#include "sbx_abi.h"
#include "sbxstate.h"

#define PID	7
#define G(id)	(SBX_RULE_GRANT_BASE + (id))
#define SEC	1000000000ULL

static const struct policy_env env = { .home = "/nonexistent-sbx/home/u", .cwd = "/nonexistent-sbx/w" };

/* --- --ttl ------------------------------------------------------------------------ */

static void test_ttl(void **state)
{
	char err[256];
	__u64 ns;

	(void)state;
	assert_int_equal(grant_parse_ttl("90s", &ns, err, sizeof(err)), 0);
	assert_true(ns == 90 * SEC);
	assert_int_equal(grant_parse_ttl("30m", &ns, err, sizeof(err)), 0);
	assert_true(ns == 1800 * SEC);
	assert_int_equal(grant_parse_ttl("2h", &ns, err, sizeof(err)), 0);
	assert_true(ns == 7200 * SEC);
	assert_int_equal(grant_parse_ttl("1d", &ns, err, sizeof(err)), 0);
	assert_true(ns == 86400 * SEC);
	assert_int_equal(grant_parse_ttl("1h30m", &ns, err, sizeof(err)), 0);
	assert_true(ns == 5400 * SEC);
	assert_int_equal(grant_parse_ttl("45", &ns, err, sizeof(err)), 0);	/* bare: seconds */
	assert_true(ns == 45 * SEC);
	assert_int_equal(grant_parse_ttl("500ms", &ns, err, sizeof(err)), 0);
	assert_true(ns == SEC / 2);
	assert_int_equal(grant_parse_ttl("365d", &ns, err, sizeof(err)), 0);

	assert_int_equal(grant_parse_ttl("2x", &ns, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--ttl 2x: not a duration; use a number with a unit such as '90s', '30m', "
			    "'2h' or '1d' (units ms, s, m, h, d)");
	assert_int_equal(grant_parse_ttl("0s", &ns, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--ttl 0s: must be more than 0");
	assert_int_equal(grant_parse_ttl("366d", &ns, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--ttl 366d: at most 365d (to allow it for good, change the policy)");
	assert_int_equal(grant_parse_ttl("99999999999999999d", &ns, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "at most 365d"));
	assert_int_equal(grant_parse_ttl("", &ns, err, sizeof(err)), -EINVAL);
	assert_int_equal(grant_parse_ttl("-1h", &ns, err, sizeof(err)), -EINVAL);
	assert_int_equal(grant_parse_ttl("2 hours", &ns, err, sizeof(err)), -EINVAL);
}

/* --- targets ------------------------------------------------------------------------ */

static void target_ok(enum grant_kind kind, const char *arg, enum grant_kind want_kind, const char *want)
{
	struct grant g;
	char err[1024] = "";

	if (grant_parse_target(&g, kind, arg, &env, err, sizeof(err)))
		fail_msg("'%s': %s", arg, err);
	assert_int_equal(g.kind, want_kind);
	assert_string_equal(g.target, want);
}

static void target_bad(enum grant_kind kind, const char *arg, const char *want)
{
	struct grant g;
	char err[1024] = "";

	assert_int_equal(grant_parse_target(&g, kind, arg, &env, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, want);
}

static void test_targets(void **state)
{
	struct grant g;
	char err[256];

	(void)state;
	/* Paths as the policy takes them: relative to the working directory, ~, normalised. */
	target_ok(GRANT_READ, "data/secret", GRANT_READ, "/nonexistent-sbx/w/data/secret");
	target_ok(GRANT_READ, "./data/../data/secret/", GRANT_READ, "/nonexistent-sbx/w/data/secret");
	target_ok(GRANT_WRITE, "~/.ssh/known_hosts", GRANT_WRITE, "/nonexistent-sbx/home/u/.ssh/known_hosts");
	target_ok(GRANT_WRITE, "/nonexistent-sbx/out/**", GRANT_WRITE, "/nonexistent-sbx/out");
	target_bad(GRANT_READ, "**/.env", "--read '**/.env': a grant names one path, not a pattern");
	target_bad(GRANT_WRITE, "/a/*.txt",
		   "--write: '/a/*.txt': unsupported glob '*' (only a leading '**/' and a trailing '/**' are supported)");
	target_bad(GRANT_READ, "", "--read: empty path");
	/* Found by tests/fuzz/fuzz_grants: the record (JSON) cannot keep such a path. */
	target_bad(GRANT_READ, "/dev/stdo\xcdt", "--read '/dev/stdo\xcdt': the path is not valid UTF-8, which "
		   "the cgroup's record cannot keep");

	/* Addresses: one, with or without ports. */
	target_ok(GRANT_CONNECT, "127.0.0.2:8081", GRANT_CONNECT, "127.0.0.2:8081");
	target_ok(GRANT_CONNECT, "10.1.2.3", GRANT_CONNECT, "10.1.2.3");
	target_ok(GRANT_CONNECT, "[::1]:8000-8999", GRANT_CONNECT, "[::1]:8000-8999");
	target_ok(GRANT_CONNECT, "10.0.0.1/32:443", GRANT_CONNECT, "10.0.0.1:443");
	assert_int_equal(grant_parse_target(&g, GRANT_CONNECT, "127.0.0.2:8081", &env, err, sizeof(err)), 0);
	assert_int_equal(g.nr_addrs, 1);
	assert_int_equal(g.addrs[0][10], 0xff);
	assert_int_equal(g.addrs[0][15], 2);
	assert_int_equal(g.lo, 8081);
	assert_int_equal(g.hi, 8081);
	target_bad(GRANT_CONNECT, "10.0.0.0/8", "--connect '10.0.0.0/8': a grant names one address, not a network");
	target_bad(GRANT_CONNECT, "10.0.0.300", "--connect: '10.0.0.300': '10.0.0.300' is not an IPv4 address");
	target_bad(GRANT_CONNECT, "10.0.0.1:0", "--connect: '10.0.0.1:0': bad port '0' (1-65535, or LO-HI)");

	/* Names: resolved by the command; an IP literal is an address. */
	target_ok(GRANT_DOMAIN, "API.Example.com.:443", GRANT_DOMAIN, "api.example.com:443");
	assert_int_equal(grant_parse_target(&g, GRANT_DOMAIN, "example.com", &env, err, sizeof(err)), 0);
	assert_string_equal(g.name, "example.com");
	assert_int_equal(g.nr_addrs, 0);
	assert_int_equal(g.lo, 0);
	assert_int_equal(g.hi, 65535);
	target_ok(GRANT_DOMAIN, "localhost:8080", GRANT_DOMAIN, "localhost:8080");
	target_ok(GRANT_DOMAIN, "10.1.2.3:80", GRANT_CONNECT, "10.1.2.3:80");
	target_bad(GRANT_DOMAIN, "*.example.com", "--domain '*.example.com': a grant resolves one name when it "
		   "is made; a wildcard has no addresses to resolve");
	assert_int_equal(grant_parse_target(&g, GRANT_DOMAIN, "exa mple.com", &env, err, sizeof(err)), -EINVAL);
}

/* --- file grants: compile and diff ----------------------------------------------------- */

/*
 * The policy of tests/e2e/13-grants.sh: reads of /w/data/secret denied,
 * writes only under /w/ws, the mandatory set.
 */
static void load_policy(struct policy *p)
{
	static const char json[] =
		"{ \"filesystem\": { \"denyRead\": [ \"/nonexistent-sbx/w/data/secret\" ],"
		"                    \"allowWrite\": [ \"/nonexistent-sbx/w/ws\" ] } }";
	struct policy_diag diag = {};

	memset(p, 0, sizeof(*p));
	assert_int_equal(policy_load_string(p, "t.json", json, &env, &diag), 0);
	assert_int_equal(policy_add_mandatory(p), 0);
}

static struct grant file_grant(__u32 id, enum grant_kind kind, const char *path, __u64 expires)
{
	struct grant g = { .id = id, .kind = kind, .expires_ns = expires, .expires_wall = 1800000000,
			   .created = 1790000000 };

	snprintf(g.target, sizeof(g.target), "%s", path);
	return g;
}

static const struct fs_entry *find(const struct fs_compiled *c, const char *path)
{
	struct sbx_fs_key k = fs_key_absolute(PID, path);

	return fs_compiled_find(c, &k);
}

static void test_compile_extra_precedence(void **state)
{
	struct policy_rule rules[] = {
		{ .kind = RULE_DENY_READ, .scope = RULE_ABSOLUTE, .path = "/a/secret" },
		{ .kind = RULE_MANDATORY, .scope = RULE_ABSOLUTE, .path = "/a/hooks" },
		{ .kind = RULE_DENY_WRITE, .scope = RULE_ABSOLUTE, .path = "/a/ro" },
	};
	struct policy p = { .rules = rules, .nr_rules = 3 };
	const struct fs_extra_rule x[] = {
		{ RULE_ALLOW_READ, "/a/secret", G(1) },
		{ RULE_ALLOW_WRITE, "/a/hooks", G(2) },
		{ RULE_ALLOW_WRITE, "/a/ro", G(3) },
		{ RULE_ALLOW_READ, "/b/new", G(4) },
	};
	const struct fs_extra_rule bad[] = { { RULE_DENY_READ, "/a", G(5) } };
	const struct fs_entry *e;
	struct fs_compiled c;

	(void)state;
	assert_int_equal(fs_compile_extra(&p, x, 4, PID, &c), 0);
	/* The grant wins over the policy's deny at its own path... */
	e = find(&c, "/a/secret");
	assert_int_equal(e->rule.flags, SBX_FS_ALLOW_READ);
	assert_int_equal(e->rule.read_rule, G(1));
	e = find(&c, "/a/ro");
	assert_int_equal(e->rule.flags, SBX_FS_ALLOW_WRITE);
	assert_int_equal(e->rule.write_rule, G(3));
	/* ...never over a mandatory one. */
	e = find(&c, "/a/hooks");
	assert_true(e->rule.flags & SBX_FS_MANDATORY);
	assert_int_equal(e->rule.write_rule, 1);
	/* A path of its own, with its guards. */
	e = find(&c, "/b/new");
	assert_int_equal(e->rule.flags, SBX_FS_ALLOW_READ);
	e = find(&c, "/b");
	assert_int_equal(e->rule.flags, SBX_FS_GUARD);
	assert_int_equal(e->rule.guard_rule, G(4));
	/* The policy's guard at /a stays the policy's. */
	e = find(&c, "/a");
	assert_int_equal(e->rule.flags, SBX_FS_GUARD);
	assert_int_equal(e->rule.guard_rule, 0);
	for (size_t i = 1; i < c.nr; i++)	/* sorted: fs_compiled_find works on it */
		assert_true(memcmp(&c.entries[i - 1].key, &c.entries[i].key, sizeof(struct sbx_fs_key)) < 0);
	fs_compiled_free(&c);
	assert_int_equal(fs_compile_extra(&p, bad, 1, PID, &c), -EINVAL);
}

static void test_fs_entries(void **state)
{
	struct grant g[] = {
		file_grant(1, GRANT_READ, "/nonexistent-sbx/w/data/secret", 100 * SEC),
		file_grant(2, GRANT_WRITE, "/nonexistent-sbx/w/out", 50 * SEC),
		file_grant(3, GRANT_WRITE, "/nonexistent-sbx/w/old", 5 * SEC),	/* expired at 10 s */
	};
	struct fs_compiled pol, with, d, all;
	const struct fs_entry *e, *pe;
	struct policy p;
	__u64 until;

	(void)state;
	load_policy(&p);
	assert_int_equal(fs_compile(&p, PID, &pol), 0);
	assert_int_equal(grants_compile_fs(&p, g, 3, 10 * SEC, PID, &with, &until), 0);
	assert_true(until == 50 * SEC);	/* the earliest live one; the expired one is not compiled */
	assert_null(find(&with, "/nonexistent-sbx/w/old"));
	assert_int_equal(grants_fs_entries(&pol, &with, until, false, &d), 0);
	/* Changed: the secret (deny → grant) and /w/out (new); the guards were there already. */
	assert_int_equal(d.nr, 2);
	e = find(&d, "/nonexistent-sbx/w/data/secret");
	pe = find(&pol, "/nonexistent-sbx/w/data/secret");
	assert_non_null(e);
	assert_int_equal(e->rule.flags, SBX_FS_ALLOW_READ);
	assert_int_equal(e->rule.read_rule, G(1));
	assert_int_equal(e->rule.base_flags, SBX_FS_DENY_READ);
	assert_int_equal(e->rule.base_read_rule, pe->rule.read_rule);
	assert_int_equal(e->rule.base_write_rule, pe->rule.write_rule);
	assert_int_equal(e->rule.base_guard_rule, pe->rule.guard_rule);
	assert_int_equal(e->rule.base_unix_rule, pe->rule.unix_rule);
	assert_true(e->rule.expires_ns == 50 * SEC);
	e = find(&d, "/nonexistent-sbx/w/out");
	assert_non_null(e);
	assert_int_equal(e->rule.flags, SBX_FS_ALLOW_WRITE);
	assert_int_equal(e->rule.write_rule, G(2));
	assert_int_equal(e->rule.base_flags, 0);	/* nothing behind it: after expiry, no rule here */
	assert_int_equal(e->rule.base_write_rule, 0);
	assert_true(e->rule.expires_ns == 50 * SEC);

	/* Every key, for a fresh install: unchanged keys plain, as the policy has them. */
	assert_int_equal(grants_fs_entries(&pol, &with, until, true, &all), 0);
	assert_int_equal(all.nr, with.nr);
	assert_int_equal(all.nr, pol.nr + 1);
	e = find(&all, "/nonexistent-sbx/w/ws");
	assert_memory_equal(&e->rule, &find(&pol, "/nonexistent-sbx/w/ws")->rule, sizeof(e->rule));
	assert_true(e->rule.expires_ns == 0);
	fs_compiled_free(&all);
	fs_compiled_free(&d);
	fs_compiled_free(&with);

	/* No live file grant: no grant entries at all. */
	assert_int_equal(grants_compile_fs(&p, g, 3, 200 * SEC, PID, &with, &until), 0);
	assert_true(until == 0);
	assert_int_equal(grants_fs_entries(&pol, &with, until, false, &d), 0);
	assert_int_equal(d.nr, 0);
	fs_compiled_free(&d);
	fs_compiled_free(&with);
	fs_compiled_free(&pol);
	policy_free(&p);
}

/* --- a fake kernel -------------------------------------------------------------------- */

struct fake {
	struct fs_entry fs[256];
	size_t nfs;
	struct grant_dns_cur dns[16];
	size_t ndns;
	int fail_at;		/* the write that fails (1-based), 0: none */
	int writes;
};

static int fake_fail(struct fake *f)
{
	return f->fail_at && ++f->writes == f->fail_at ? -E2BIG : 0;
}

static int fake_fs_put(void *ctx, const struct sbx_fs_key *k, const struct sbx_fs_rule *r)
{
	struct fake *f = ctx;
	int err = fake_fail(f);

	if (err)
		return err;
	for (size_t i = 0; i < f->nfs; i++) {
		if (!memcmp(&f->fs[i].key, k, sizeof(*k))) {
			f->fs[i].rule = *r;
			return 0;
		}
	}
	assert_true(f->nfs < 256);
	f->fs[f->nfs].key = *k;
	f->fs[f->nfs++].rule = *r;
	return 0;
}

static int fake_fs_del(void *ctx, const struct sbx_fs_key *k)
{
	struct fake *f = ctx;
	int err = fake_fail(f);

	if (err)
		return err;
	for (size_t i = 0; i < f->nfs; i++) {
		if (!memcmp(&f->fs[i].key, k, sizeof(*k))) {
			f->fs[i] = f->fs[--f->nfs];
			return 0;
		}
	}
	return -ENOENT;
}

static int fake_dns_put(void *ctx, const struct sbx_dns_key *k, const struct sbx_dns_entry *e)
{
	struct fake *f = ctx;
	int err = fake_fail(f);

	if (err)
		return err;
	for (size_t i = 0; i < f->ndns; i++) {
		if (!memcmp(&f->dns[i].key, k, sizeof(*k))) {
			f->dns[i].e = *e;
			return 0;
		}
	}
	assert_true(f->ndns < 16);
	f->dns[f->ndns].key = *k;
	f->dns[f->ndns++].e = *e;
	return 0;
}

static int fake_dns_del(void *ctx, const struct sbx_dns_key *k)
{
	struct fake *f = ctx;
	int err = fake_fail(f);

	if (err)
		return err;
	for (size_t i = 0; i < f->ndns; i++) {
		if (!memcmp(&f->dns[i].key, k, sizeof(*k))) {
			f->dns[i] = f->dns[--f->ndns];
			return 0;
		}
	}
	return -ENOENT;
}

static const struct grant_map_ops fake_ops = {
	.fs_put = fake_fs_put, .fs_del = fake_fs_del, .dns_put = fake_dns_put, .dns_del = fake_dns_del,
};

static int entry_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct fs_entry *)a)->key, &((const struct fs_entry *)b)->key,
		      sizeof(struct sbx_fs_key));
}

/* What fs_read_policy would return: the fake's entries, sorted. */
static void fake_read(struct fake *f, struct fs_compiled *cur)
{
	cur->entries = malloc(sizeof(f->fs));
	memcpy(cur->entries, f->fs, f->nfs * sizeof(f->fs[0]));
	cur->nr = f->nfs;
	qsort(cur->entries, cur->nr, sizeof(cur->entries[0]), entry_cmp);
}

static void fake_load(struct fake *f, const struct fs_compiled *c)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->fs, c->entries, c->nr * sizeof(c->entries[0]));
	f->nfs = c->nr;
}

/* Plan the file grants of @g at @now against the fake, and apply the plan. */
static int sync_fs(struct fake *f, const struct policy *p, const struct grant *g, size_t n, __u64 now,
		   size_t *nwrites)
{
	struct fs_compiled pol, with, cur;
	struct grant_plan plan = {};
	size_t failed, undo;
	__u64 until;
	int err;

	assert_int_equal(fs_compile(p, PID, &pol), 0);
	assert_int_equal(grants_compile_fs(p, g, n, now, PID, &with, &until), 0);
	fake_read(f, &cur);
	err = grant_plan_fs(&plan, &pol, &with, until, &cur);
	if (nwrites)
		*nwrites = plan.nr;
	if (!err)
		err = grant_plan_apply(&plan, &fake_ops, f, &failed, &undo);
	if (err == -E2BIG)
		assert_int_equal(undo, 0);
	grant_plan_free(&plan);
	fs_compiled_free(&cur);
	fs_compiled_free(&with);
	fs_compiled_free(&pol);
	return err;
}

static const struct fs_entry *fake_find(const struct fake *f, const char *path)
{
	struct sbx_fs_key k = fs_key_absolute(PID, path);

	for (size_t i = 0; i < f->nfs; i++)
		if (!memcmp(&f->fs[i].key, &k, sizeof(k)))
			return &f->fs[i];
	return NULL;
}

/* Grant, re-grant (nothing to do), revoke, against a kernel that holds the attached policy. */
static void test_plan_fs(void **state)
{
	struct grant g[] = {
		file_grant(1, GRANT_READ, "/nonexistent-sbx/w/data/secret", 100 * SEC),
		file_grant(2, GRANT_WRITE, "/nonexistent-sbx/out/x", 50 * SEC),
	};
	struct fs_compiled pol;
	const struct fs_entry *e;
	struct policy p;
	struct fake f;
	size_t nw;

	(void)state;
	load_policy(&p);
	assert_int_equal(fs_compile(&p, PID, &pol), 0);
	fake_load(&f, &pol);

	assert_int_equal(sync_fs(&f, &p, g, 2, 10 * SEC, &nw), 0);
	/* The secret; out/x and its new guard out (the policy guards /nonexistent-sbx already). */
	assert_int_equal(nw, 3);
	e = fake_find(&f, "/nonexistent-sbx/w/data/secret");
	assert_int_equal(e->rule.read_rule, G(1));
	assert_int_equal(e->rule.base_flags, SBX_FS_DENY_READ);
	assert_true(e->rule.expires_ns == 50 * SEC);
	e = fake_find(&f, "/nonexistent-sbx/out");
	assert_int_equal(e->rule.flags, SBX_FS_GUARD);
	assert_int_equal(e->rule.guard_rule, G(2));
	assert_true(e->rule.expires_ns == 50 * SEC);

	/* The same set again: the kernel already says it. */
	assert_int_equal(sync_fs(&f, &p, g, 2, 11 * SEC, &nw), 0);
	assert_int_equal(nw, 0);

	/* Revoke 2: its keys go (nothing behind them), the secret's expiry becomes grant 1's own. */
	assert_int_equal(sync_fs(&f, &p, g, 1, 12 * SEC, &nw), 0);
	assert_null(fake_find(&f, "/nonexistent-sbx/out/x"));
	assert_null(fake_find(&f, "/nonexistent-sbx/out"));
	assert_true(fake_find(&f, "/nonexistent-sbx/w/data/secret")->rule.expires_ns == 100 * SEC);

	/* Revoke all: the kernel holds the policy alone, byte for byte. */
	assert_int_equal(sync_fs(&f, &p, NULL, 0, 13 * SEC, &nw), 0);
	assert_int_equal(f.nfs, pol.nr);
	for (size_t i = 0; i < f.nfs; i++) {
		const struct fs_entry *pe = fs_compiled_find(&pol, &f.fs[i].key);

		assert_non_null(pe);
		assert_memory_equal(&pe->rule, &f.fs[i].rule, sizeof(pe->rule));
	}
	fs_compiled_free(&pol);
	policy_free(&p);
}

/* A write that fails midway: the ones before it are undone, the kernel is as before. */
static void test_plan_rollback(void **state)
{
	struct grant g[] = {
		file_grant(1, GRANT_READ, "/nonexistent-sbx/w/data/secret", 100 * SEC),
		file_grant(2, GRANT_WRITE, "/nonexistent-sbx/out/x", 50 * SEC),
	};
	struct fs_compiled pol, before, after;
	struct policy p;
	struct fake f;

	(void)state;
	load_policy(&p);
	assert_int_equal(fs_compile(&p, PID, &pol), 0);
	fake_load(&f, &pol);
	assert_int_equal(sync_fs(&f, &p, g, 1, 10 * SEC, NULL), 0);
	fake_read(&f, &before);
	for (int k = 1; k <= 3; k++) {
		f.writes = 0;
		f.fail_at = k;
		assert_int_equal(sync_fs(&f, &p, g, 2, 11 * SEC, NULL), -E2BIG);
		fake_read(&f, &after);
		assert_int_equal(after.nr, before.nr);
		assert_memory_equal(after.entries, before.entries, before.nr * sizeof(before.entries[0]));
		fs_compiled_free(&after);
	}
	fs_compiled_free(&before);
	fs_compiled_free(&pol);
	policy_free(&p);
}

/* The record and the kernel disagree: refused, nothing planned. */
static void test_plan_stale(void **state)
{
	struct grant g = file_grant(1, GRANT_READ, "/nonexistent-sbx/w/data/secret", 100 * SEC);
	struct sbx_fs_key k = fs_key_absolute(PID, "/elsewhere");
	struct sbx_fs_rule r = { .flags = SBX_FS_DENY_READ };
	struct fs_compiled pol;
	struct policy p;
	struct fake f;
	size_t nw;

	(void)state;
	load_policy(&p);
	assert_int_equal(fs_compile(&p, PID, &pol), 0);
	fake_load(&f, &pol);
	f.nfs--;	/* a rule of the policy missing */
	assert_int_equal(sync_fs(&f, &p, &g, 1, 10 * SEC, &nw), -ESTALE);
	assert_int_equal(nw, 0);
	fake_load(&f, &pol);
	assert_int_equal(fake_fs_put(&f, &k, &r), 0);	/* a rule the policy does not have */
	assert_int_equal(sync_fs(&f, &p, &g, 1, 10 * SEC, NULL), -ESTALE);
	fake_load(&f, &pol);
	f.fs[0].rule.flags ^= SBX_FS_DENY_WRITE;	/* a rule that says something else */
	assert_int_equal(sync_fs(&f, &p, &g, 1, 10 * SEC, NULL), -ESTALE);
	fs_compiled_free(&pol);
	policy_free(&p);
}

/* --- connect grants: slots ------------------------------------------------------------- */

static struct sbx_dns_slot slot(__u32 domain, __u32 rule, __u64 exp)
{
	return (struct sbx_dns_slot){ .expires_ns = exp, .domain_id = domain, .rule_id = rule, .hi = 65535 };
}

static void test_slots_merge(void **state)
{
	struct sbx_dns_slot want[5] = {
		slot(SBX_DOMAIN_GRANT, G(4), 60), slot(SBX_DOMAIN_GRANT, G(5), 70),
		slot(SBX_DOMAIN_GRANT, G(6), 80), slot(SBX_DOMAIN_GRANT, G(7), 90),
		slot(SBX_DOMAIN_GRANT, G(8), 95),
	};
	struct sbx_dns_entry e = {};

	(void)state;
	assert_int_equal(grant_slots_merge(&e, want, 1, 5), 0);
	assert_memory_equal(&e.s[0], &want[0], sizeof(want[0]));

	/* The resolver's slots stay; a grant slot no longer wanted goes; its place is taken. */
	memset(&e, 0, sizeof(e));
	e.s[0] = slot(5, SBX_RULE_DOMAIN_BASE, 100);
	e.s[1] = slot(6, SBX_RULE_DOMAIN_BASE + 1, 100);
	e.s[2] = slot(SBX_DOMAIN_GRANT, G(3), 20);
	assert_int_equal(grant_slots_merge(&e, &want[1], 1, 5), 0);
	assert_int_equal(e.s[0].domain_id, 5);
	assert_int_equal(e.s[1].domain_id, 6);
	assert_int_equal(e.s[2].rule_id, G(5));
	assert_true(e.s[3].expires_ns == 0);

	/* Its own slot is updated in place. */
	want[1].expires_ns = 75;
	assert_int_equal(grant_slots_merge(&e, &want[1], 1, 5), 0);
	assert_int_equal(e.s[2].rule_id, G(5));
	assert_true(e.s[2].expires_ns == 75);
	assert_true(e.s[3].expires_ns == 0);

	/* Full of the resolver's: an expired one first, else the one expiring first. */
	e.s[0] = slot(1, 1, 50);
	e.s[1] = slot(2, 2, 10);
	e.s[2] = slot(3, 3, 70);
	e.s[3] = slot(4, 4, 90);
	assert_int_equal(grant_slots_merge(&e, want, 1, 5), 0);
	assert_int_equal(e.s[1].rule_id, G(4));
	e.s[1] = slot(2, 2, 10);
	assert_int_equal(grant_slots_merge(&e, want, 2, 5), 0);	/* two: never one just placed */
	assert_int_equal(e.s[1].rule_id, G(4));
	assert_int_equal(e.s[0].rule_id, G(5));
	assert_int_equal(e.s[2].domain_id, 3);
	assert_int_equal(e.s[3].domain_id, 4);

	assert_int_equal(grant_slots_merge(&e, want, 4, 5), 0);	/* all four grants */
	for (int i = 0; i < SBX_DNS_SLOTS; i++)
		assert_int_equal(e.s[i].domain_id, SBX_DOMAIN_GRANT);
	assert_int_equal(grant_slots_merge(&e, want, 5, 5), -E2BIG);
}

static struct grant conn_grant(__u32 id, const char *addr, __u64 expires)
{
	struct grant g;
	char err[256];

	assert_int_equal(grant_parse_target(&g, GRANT_CONNECT, addr, &env, err, sizeof(err)), 0);
	g.id = id;
	g.expires_ns = expires;
	g.expires_wall = 1800000000;
	g.created = 1790000000;
	return g;
}

static const struct grant_dns_cur *fake_dns(const struct fake *f, const __u8 addr[16])
{
	for (size_t i = 0; i < f->ndns; i++)
		if (!memcmp(f->dns[i].key.addr, addr, 16))
			return &f->dns[i];
	return NULL;
}

static void sync_dns(struct fake *f, const struct grant *g, size_t n, __u64 now)
{
	struct grant_dns_cur cur[16];
	struct grant_plan plan = {};
	size_t nc = f->ndns, failed, undo;

	memcpy(cur, f->dns, sizeof(cur));
	assert_int_equal(grant_plan_dns(&plan, 42, g, n, now, cur, nc), 0);
	assert_int_equal(grant_plan_apply(&plan, &fake_ops, f, &failed, &undo), 0);
	grant_plan_free(&plan);
}

static void test_plan_dns(void **state)
{
	struct grant g[] = {
		conn_grant(1, "127.0.0.2:8081", 100 * SEC),
		conn_grant(2, "127.0.0.3", 50 * SEC),
		conn_grant(3, "127.0.0.2:9000-9100", 80 * SEC),
	};
	struct sbx_dns_key other = { .sandbox_cgid = 43 };
	struct sbx_dns_entry resolver = { .s[1] = slot(9, SBX_RULE_DOMAIN_BASE, 100 * SEC) };
	const struct grant_dns_cur *c;
	struct fake f = {};

	(void)state;
	/* An entry of the resolver for 127.0.0.2, and another cgroup's entry. */
	assert_int_equal(fake_dns_put(&f, &(struct sbx_dns_key){ .sandbox_cgid = 42 }, &resolver), 0);
	memcpy(f.dns[0].key.addr, g[0].addrs[0], 16);
	other.addr[15] = 3;
	assert_int_equal(fake_dns_put(&f, &other, &(struct sbx_dns_entry){ .s[0] = slot(SBX_DOMAIN_GRANT, G(1), 1) }), 0);

	sync_dns(&f, g, 3, 10 * SEC);
	c = fake_dns(&f, g[0].addrs[0]);
	assert_int_equal(c->e.s[1].domain_id, 9);	/* the resolver's slot stays */
	assert_int_equal(c->e.s[0].rule_id, G(1));
	assert_int_equal(c->e.s[0].lo, 8081);
	assert_int_equal(c->e.s[2].rule_id, G(3));
	assert_int_equal(c->e.s[2].lo, 9000);
	assert_int_equal(c->e.s[2].hi, 9100);
	assert_true(c->e.s[2].expires_ns == 80 * SEC);
	c = fake_dns(&f, g[1].addrs[0]);
	assert_int_equal(c->key.sandbox_cgid, 42);
	assert_int_equal(c->e.s[0].rule_id, G(2));
	assert_int_equal(c->e.s[0].lo, 0);
	assert_int_equal(c->e.s[0].hi, 65535);
	assert_int_equal(f.ndns, 3);

	/* Grant 1 revoked, grant 2 expired: their slots go; an entry left empty goes too. */
	sync_dns(&f, &g[1], 2, 60 * SEC);
	c = fake_dns(&f, g[0].addrs[0]);
	assert_true(c->e.s[0].expires_ns == 0);
	assert_int_equal(c->e.s[1].domain_id, 9);
	assert_int_equal(c->e.s[2].rule_id, G(3));
	for (size_t i = 0; i < f.ndns; i++)
		assert_false(f.dns[i].key.sandbox_cgid == 42 && f.dns[i].key.addr[15] == 3);
	assert_int_equal(f.ndns, 2);	/* 127.0.0.2 of 42, and 43's untouched */

	sync_dns(&f, NULL, 0, 60 * SEC);
	c = fake_dns(&f, g[0].addrs[0]);
	assert_int_equal(c->key.sandbox_cgid, 42);
	assert_memory_equal(&c->e, &resolver, sizeof(resolver));
}

static void test_check_addrs(void **state)
{
	struct grant g[6];
	char why[256];

	(void)state;
	for (int i = 0; i < 5; i++)
		g[i] = conn_grant(i + 1, "127.0.0.2:8081", 100 * SEC);
	g[5] = conn_grant(6, "127.0.0.3", 100 * SEC);
	assert_int_equal(grants_check_addrs(g, 4, 10 * SEC, why, sizeof(why)), 0);
	assert_int_equal(grants_check_addrs(g, 6, 10 * SEC, why, sizeof(why)), -E2BIG);
	assert_string_equal(why, "127.0.0.2 would have 5 live grants, the most one address can have is 4");
	g[0].expires_ns = 5 * SEC;	/* expired ones hold no slot */
	assert_int_equal(grants_check_addrs(g, 6, 10 * SEC, why, sizeof(why)), 0);
}

/* --- the set and its states ----------------------------------------------------------- */

static void test_states_and_prune(void **state)
{
	struct grant g[] = {
		file_grant(1, GRANT_READ, "/a", 100 * SEC),
		file_grant(2, GRANT_WRITE, "/b", 50 * SEC),
		conn_grant(3, "127.0.0.2", 100 * SEC),
		file_grant(4, GRANT_READ, "/c", 5 * SEC),
	};

	(void)state;
	assert_int_equal(grant_state(&g[0], 10 * SEC, 50 * SEC), GRANT_ACTIVE);
	assert_int_equal(grant_state(&g[0], 60 * SEC, 50 * SEC), GRANT_LAPSED);	/* ended with grant 2 */
	assert_int_equal(grant_state(&g[1], 60 * SEC, 50 * SEC), GRANT_EXPIRED);
	assert_int_equal(grant_state(&g[2], 60 * SEC, 50 * SEC), GRANT_ACTIVE);	/* slots end on their own */
	assert_int_equal(grant_state(&g[2], 100 * SEC, 50 * SEC), GRANT_EXPIRED);
	assert_string_equal(grant_state_name(GRANT_LAPSED), "lapsed");
	/* Expired ones stay GRANT_KEEP_EXPIRED_S, then go. */
	assert_int_equal(grants_prune(g, 4, 6 * SEC), 4);
	assert_int_equal(grants_prune(g, 4, (5 + GRANT_KEEP_EXPIRED_S) * SEC), 3);
	assert_int_equal(g[2].id, 3);
}

static void test_shadowed(void **state)
{
	static const char json[] =
		"{ \"filesystem\": { \"denyRead\": [ \"**/.env\" ], \"allowWrite\": [ \"/w\" ] } }";
	struct policy_diag diag = {};
	struct policy p = {};
	char why[256];

	(void)state;
	assert_int_equal(policy_load_string(&p, "t.json", json, &env, &diag), 0);
	assert_int_equal(policy_add_mandatory(&p), 0);
	assert_true(grant_shadowed(&p, GRANT_WRITE, "/w/ws/.bashrc", why, sizeof(why)));
	assert_string_equal(why, "mandatory **/.bashrc");
	assert_true(grant_shadowed(&p, GRANT_WRITE, "/w/repo/.git/hooks/pre-commit", why, sizeof(why)));
	assert_string_equal(why, "mandatory **/.git/hooks");
	assert_false(grant_shadowed(&p, GRANT_WRITE, "/w/ws", why, sizeof(why)));
	assert_false(grant_shadowed(&p, GRANT_WRITE, "/w/.bashrc.d2", why, sizeof(why)));
	assert_false(grant_shadowed(&p, GRANT_READ, "/w/ws/.bashrc", why, sizeof(why)));
	/* A deny at any depth decides at the very path; beneath it, the grant is more specific. */
	assert_true(grant_shadowed(&p, GRANT_READ, "/w/app/.env", why, sizeof(why)));
	assert_string_equal(why, "denyRead **/.env");
	assert_false(grant_shadowed(&p, GRANT_READ, "/w/app/.env/x", why, sizeof(why)));
	policy_free(&p);
}

/* --- the record -------------------------------------------------------------------------- */

static void test_json_roundtrip(void **state)
{
	struct grant in[3], out;
	char err[256], text[512];
	json_t *o;

	(void)state;
	in[0] = file_grant(3, GRANT_READ, "/home/u/.ssh/known_hosts", 123 * SEC);
	in[1] = conn_grant(4, "[2001:db8::1]:443", 456 * SEC);
	assert_int_equal(grant_parse_target(&in[2], GRANT_DOMAIN, "example.com:443", &env, err, sizeof(err)), 0);
	in[2].id = 5;
	in[2].expires_ns = 789 * SEC;
	in[2].expires_wall = 1800000000;
	in[2].created = 1790000000;
	grant_add_addr(&in[2], in[1].addrs[0]);
	grant_add_addr(&in[2], in[1].addrs[0]);	/* once */
	grant_add_addr(&in[2], (const __u8[16]){ [10] = 0xff, [11] = 0xff, 93, 184, 215, 14 });
	assert_int_equal(in[2].nr_addrs, 2);
	for (int i = 0; i < 3; i++) {
		o = grant_to_json(&in[i]);
		assert_non_null(o);
		assert_int_equal(grant_from_json(o, &out), 0);
		assert_memory_equal(&out, &in[i], sizeof(out));
		json_decref(o);
	}
	grant_describe(&in[0], text, sizeof(text));
	assert_string_equal(text, "grant 3: read /home/u/.ssh/known_hosts (until 2027-01-15T08:00:00Z)");
	o = grant_to_json(&in[2]);
	assert_string_equal(json_string_value(json_object_get(o, "text")),
			    "grant 5: domain example.com:443 (until 2027-01-15T08:00:00Z)");
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "addresses"), 1)), "93.184.215.14");
	assert_string_equal(json_string_value(json_object_get(o, "created")), "2026-09-21T14:13:20Z");
	/* What this build cannot read is refused, not half read. */
	json_object_set_new(o, "kind", json_string("execute"));
	assert_int_equal(grant_from_json(o, &out), -EINVAL);
	json_decref(o);
	o = grant_to_json(&in[0]);
	json_object_set_new(o, "target", json_string("relative"));
	assert_int_equal(grant_from_json(o, &out), -EINVAL);
	json_decref(o);
	o = grant_to_json(&in[1]);
	json_object_set_new(o, "ports", json_pack("[i, i]", 9, 8));
	assert_int_equal(grant_from_json(o, &out), -EINVAL);
	json_decref(o);
}

/* The record keeps the grants (events name them) and the file rules (grant compiles them again). */
static void test_record(void **state)
{
	char dir[] = "/tmp/sbxgrants.XXXXXX";
	struct state_entry e = { .cgroup = "/sys/fs/cgroup/a", .cgroup_id = 4242, .policy_id = PID };
	struct grant g[2], *back;
	struct fs_compiled a, b;
	struct policy p, q = {};
	json_t *st, *rec;
	__u64 until;
	__u32 next;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	load_policy(&p);
	assert_int_equal(state_write(dir, &e, &p), 0);
	st = state_read(dir, 4242);
	assert_non_null(st);
	assert_int_equal(grants_from_record(st, &back, &n, &next, &until), 0);	/* none yet */
	assert_int_equal(n, 0);
	assert_int_equal(next, 1);

	/* The file rules come back as compiled: the same entries. */
	assert_int_equal(grants_record_policy(st, &q), 0);
	assert_int_equal(q.nr_rules, p.nr_rules);
	assert_int_equal(fs_compile(&p, PID, &a), 0);
	assert_int_equal(fs_compile(&q, PID, &b), 0);
	assert_int_equal(a.nr, b.nr);
	assert_int_equal(a.any_depth_mask, b.any_depth_mask);
	assert_memory_equal(a.entries, b.entries, a.nr * sizeof(a.entries[0]));
	fs_compiled_free(&a);
	fs_compiled_free(&b);
	policy_free(&q);

	g[0] = file_grant(3, GRANT_READ, "/nonexistent-sbx/w/data/secret", 100 * SEC);
	g[1] = conn_grant(4, "127.0.0.2:8081", 200 * SEC);
	rec = grants_record_set(st, g, 2, 5, 100 * SEC);
	assert_int_equal(state_write_record(dir, 4242, rec), 0);
	json_decref(rec);
	json_decref(st);
	st = state_read(dir, 4242);
	assert_int_equal(grants_from_record(st, &back, &n, &next, &until), 0);
	assert_int_equal(n, 2);
	assert_int_equal(next, 5);
	assert_true(until == 100 * SEC);
	assert_memory_equal(&back[0], &g[0], sizeof(g[0]));
	assert_memory_equal(&back[1], &g[1], sizeof(g[1]));
	free(back);
	/* Events name grants by their rule ids; policy rules are still there too. */
	assert_string_equal(state_rule_text(st, G(3)),
			    "grant 3: read /nonexistent-sbx/w/data/secret (until 2027-01-15T08:00:00Z)");
	assert_string_equal(state_rule_text(st, G(4)), "grant 4: connect 127.0.0.2:8081 (until 2027-01-15T08:00:00Z)");
	assert_null(state_rule_text(st, G(1)));
	assert_string_equal(state_rule_text(st, 0), "denyRead /nonexistent-sbx/w/data/secret");

	/* A re-attach keeps them. */
	e.grants = json_object_get(st, "grants");
	e.next_grant_id = 5;
	e.grants_fs_until_ns = 100 * SEC;
	assert_int_equal(state_write(dir, &e, &p), 0);
	json_decref(st);
	st = state_read(dir, 4242);
	assert_string_equal(state_rule_text(st, G(4)), "grant 4: connect 127.0.0.2:8081 (until 2027-01-15T08:00:00Z)");
	assert_int_equal(json_integer_value(json_object_get(st, "next_grant_id")), 5);

	/* A record of an older build: no file rules to compile. */
	json_object_del(st, "fs");
	assert_int_equal(grants_record_policy(st, &q), -ENODATA);
	json_object_set_new(st, "grants", json_string("x"));
	assert_int_equal(grants_from_record(st, &back, &n, &next, &until), -EINVAL);
	json_decref(st);

	/* Found by tests/fuzz/fuzz_grants: records no sbx-bpf writes are refused, not compiled. */
	st = json_pack("{s:I}", "next_grant_id", (json_int_t)1 << 32);	/* was cut to id 0 */
	assert_int_equal(grants_from_record(st, &back, &n, &next, &until), 0);
	assert_int_equal(next, 1);
	json_decref(st);
	st = json_pack("[]");
	assert_int_equal(grants_from_record(st, &back, &n, &next, &until), -EINVAL);
	json_decref(st);
	st = json_pack("{s:[{s:s, s:s, s:s}]}", "fs", "kind", "denyWrite", "scope", "any-depth", "path", "a/b/c/d/e");
	assert_int_equal(grants_record_policy(st, &q), -EINVAL);
	json_decref(st);
	st = json_pack("{s:[{s:s, s:s, s:s}]}", "fs", "kind", "denyRead", "scope", "absolute", "path", "rel");
	assert_int_equal(grants_record_policy(st, &q), -EINVAL);
	json_decref(st);
	/* "KIND SCOPE PATH": the path is the rest, spaces and all; an older build's objects still read. */
	st = json_pack("{s:[s, s, {s:s, s:s, s:s}]}", "fs", "denyRead absolute /a b/c  d", "mandatory any-depth .git/hooks",
		       "kind", "allowWrite", "scope", "absolute", "path", "/tmp/x y");
	assert_int_equal(grants_record_policy(st, &q), 0);
	assert_int_equal(q.nr_rules, 3);
	assert_int_equal(q.rules[0].kind, RULE_DENY_READ);
	assert_int_equal(q.rules[0].scope, RULE_ABSOLUTE);
	assert_string_equal(q.rules[0].path, "/a b/c  d");
	assert_int_equal(q.rules[1].kind, RULE_MANDATORY);
	assert_int_equal(q.rules[1].scope, RULE_ANY_DEPTH);
	assert_string_equal(q.rules[1].path, ".git/hooks");
	assert_int_equal(q.rules[2].kind, RULE_ALLOW_WRITE);
	assert_string_equal(q.rules[2].path, "/tmp/x y");
	policy_free(&q);
	json_decref(st);
	{
		static const char *const bad[] = { "denyRead", "denyRead absolute", "denyRead absolute rel",
						   "denyRead sideways /a", "readAll absolute /a", " absolute /a",
						   "denyRead  /a", "mandatory any-depth /abs",
						   "denyReadxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx absolute /a" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			st = json_pack("{s:[s]}", "fs", bad[i]);
			assert_int_equal(grants_record_policy(st, &q), -EINVAL);
			json_decref(st);
		}
	}
	/* A rule path JSON cannot hold: no "fs" (grant refuses), never one with a hole; the texts stay. */
	free(p.rules[0].path);
	p.rules[0].path = strdup("/nonexistent-sbx/\xff");
	assert_non_null(p.rules[0].path);
	e.grants = NULL;
	assert_int_equal(state_write(dir, &e, &p), 0);
	st = state_read(dir, 4242);
	assert_non_null(st);
	assert_null(json_object_get(st, "fs"));
	assert_int_equal(grants_record_policy(st, &q), -ENODATA);
	assert_string_equal(state_rule_text(st, 0), "denyRead /nonexistent-sbx/w/data/secret");
	json_decref(st);
	policy_free(&p);
	state_remove(dir, 4242);
	rmdir(dir);
}

/* Live grants over records, each file parsed again only when it changed (the daemon's gauge). */
static void test_tally(void **state)
{
	char dir[] = "/tmp/sbxtally.XXXXXX", path[PATH_MAX], other[PATH_MAX];
	struct state_entry e = { .cgroup = "/sys/fs/cgroup/a", .cgroup_id = 4242, .policy_id = PID };
	struct grants_tally t = {};
	struct grant g[2];
	struct policy p;
	json_t *st, *rec;

	(void)state;
	assert_non_null(mkdtemp(dir));
	load_policy(&p);
	assert_int_equal(state_write(dir, &e, &p), 0);
	st = state_read(dir, 4242);
	g[0] = file_grant(3, GRANT_READ, "/nonexistent-sbx/w/data/secret", 100 * SEC);
	g[1] = conn_grant(4, "127.0.0.2:8081", 200 * SEC);
	rec = grants_record_set(st, g, 2, 5, 100 * SEC);
	assert_int_equal(state_write_record(dir, 4242, rec), 0);
	json_decref(rec);
	assert_int_equal(state_path(dir, 4242, "", path, sizeof(path)), 0);

	grants_tally_begin(&t);
	assert_int_equal(grants_tally_record(&t, 4242, path, 10 * SEC), 2);
	grants_tally_end(&t);
	assert_int_equal(t.parses, 1);
	/* Unchanged: counted again from what was read, at another time. */
	grants_tally_begin(&t);
	assert_int_equal(grants_tally_record(&t, 4242, path, 150 * SEC), 1);	/* the file grant ended */
	grants_tally_end(&t);
	assert_int_equal(t.parses, 1);

	/* File grants lapse with the record's file entries (grant_state's GRANT_LAPSED). */
	rec = grants_record_set(st, g, 2, 5, 50 * SEC);
	assert_int_equal(state_write_record(dir, 4242, rec), 0);
	json_decref(rec);
	assert_int_equal(grants_tally_record(&t, 4242, path, 10 * SEC), 2);
	assert_int_equal(grant_state(&g[0], 60 * SEC, 50 * SEC), GRANT_LAPSED);
	assert_int_equal(grants_tally_record(&t, 4242, path, 60 * SEC), 1);
	assert_int_equal(t.parses, 2);

	/* Rewritten (a grant revoked): read again. */
	rec = grants_record_set(st, &g[1], 1, 5, 0);
	assert_int_equal(state_write_record(dir, 4242, rec), 0);
	json_decref(rec);
	grants_tally_begin(&t);
	assert_int_equal(grants_tally_record(&t, 4242, path, 10 * SEC), 1);
	assert_int_equal(t.parses, 3);

	/* A record that cannot be read counts none, and is tried again at every count. */
	rec = json_pack("{s:s}", "grants", "not a list");
	assert_int_equal(state_write_record(dir, 4242, rec), 0);
	json_decref(rec);
	assert_int_equal(grants_tally_record(&t, 4242, path, 10 * SEC), 0);
	assert_int_equal(grants_tally_record(&t, 4242, path, 10 * SEC), 0);
	assert_int_equal(t.parses, 5);
	rec = grants_record_set(st, &g[1], 1, 5, 0);
	assert_int_equal(state_write_record(dir, 4242, rec), 0);
	json_decref(rec);
	assert_int_equal(grants_tally_record(&t, 4242, path, 10 * SEC), 1);

	/* Another sandbox with no grants; an unreadable record counts none. */
	e.cgroup_id = 4343;
	assert_int_equal(state_write(dir, &e, &p), 0);
	assert_int_equal(state_path(dir, 4343, "", other, sizeof(other)), 0);
	assert_int_equal(grants_tally_record(&t, 4343, other, 10 * SEC), 0);
	assert_int_equal(grants_tally_record(&t, 4444, "/nonexistent-sbx/4444.json", 10 * SEC), 0);
	grants_tally_end(&t);
	assert_int_equal(t.n, 2);
	/* A sandbox not counted any more is forgotten. */
	grants_tally_begin(&t);
	assert_int_equal(grants_tally_record(&t, 4343, other, 10 * SEC), 0);
	grants_tally_end(&t);
	assert_int_equal(t.n, 1);
	grants_tally_free(&t);
	assert_int_equal(t.n, 0);

	json_decref(st);
	policy_free(&p);
	state_remove(dir, 4242);
	state_remove(dir, 4343);
	rmdir(dir);
}

static void test_lock(void **state)
{
	char dir[] = "/tmp/sbxgrants.XXXXXX";
	char sub[64];
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	fd = state_lock(sub);	/* makes the directory */
	assert_true(fd >= 0);
	close(fd);
	snprintf(sub, sizeof(sub), "%s/a/b/.lock", dir);
	unlink(sub);
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	rmdir(sub);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ttl),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_compile_extra_precedence),
		cmocka_unit_test(test_fs_entries),
		cmocka_unit_test(test_plan_fs),
		cmocka_unit_test(test_plan_rollback),
		cmocka_unit_test(test_plan_stale),
		cmocka_unit_test(test_slots_merge),
		cmocka_unit_test(test_plan_dns),
		cmocka_unit_test(test_check_addrs),
		cmocka_unit_test(test_states_and_prune),
		cmocka_unit_test(test_shadowed),
		cmocka_unit_test(test_json_roundtrip),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_tally),
		cmocka_unit_test(test_lock),
	};

	return cmocka_run_group_tests_name("grants", tests, NULL, NULL);
}
