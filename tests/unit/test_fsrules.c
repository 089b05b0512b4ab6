// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fsrules.c: rule → map-entry compilation (keys, merging, guards, mask). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fsrules.h"
#include "policy.h"

static const struct fs_entry *find(const struct fs_compiled *c, struct sbx_fs_key key)
{
	for (size_t i = 0; i < c->nr; i++)
		if (!memcmp(&c->entries[i].key, &key, sizeof(key)))
			return &c->entries[i];
	return NULL;
}

static void test_keys(void **state)
{
	struct sbx_fs_key a, b;

	(void)state;
	a = fs_key_absolute(1, "/");
	assert_int_equal(a.len, 0);		/* the empty prefix the kernel tests first */
	a = fs_key_absolute(1, "/home/u");
	b = fs_key_absolute(2, "/home/u");
	assert_int_equal(a.len, 7);
	assert_int_equal(a.h1, b.h1);
	assert_int_not_equal(a.policy_id, b.policy_id);
	b = fs_key_absolute(1, "/home/v");
	assert_true(a.h1 != b.h1 && a.h2 != b.h2);
	a = fs_key_any_depth(1, ".git/hooks");
	assert_int_equal(a.len, SBX_FS_KEY_ANY_DEPTH | 2);
	b = fs_key_any_depth(1, "hooks/.git");	/* order matters */
	assert_true(a.h1 != b.h1);
	b = fs_key_any_depth(1, ".git");
	assert_int_equal(b.len, SBX_FS_KEY_ANY_DEPTH | 1);
}

static void test_merge_precedence(void **state)
{
	struct sbx_fs_rule r = { 0 };
	struct sbx_fs_rule allow = { .read_rule = 1, .write_rule = 1, .flags = SBX_FS_ALLOW_READ | SBX_FS_ALLOW_WRITE };
	struct sbx_fs_rule deny = { .read_rule = 2, .write_rule = 2, .flags = SBX_FS_DENY_READ | SBX_FS_DENY_WRITE };
	struct sbx_fs_rule mand = { .write_rule = 3, .flags = SBX_FS_MANDATORY };

	(void)state;
	fs_rule_merge(&r, &deny);
	fs_rule_merge(&r, &allow);	/* allow after deny changes nothing */
	assert_int_equal(r.read_rule, 2);
	assert_int_equal(r.write_rule, 2);
	memset(&r, 0, sizeof(r));
	fs_rule_merge(&r, &allow);
	fs_rule_merge(&r, &mand);
	fs_rule_merge(&r, &deny);	/* mandatory keeps the write rule */
	assert_int_equal(r.write_rule, 3);
	assert_int_equal(r.read_rule, 2);
	assert_int_equal(r.flags, SBX_FS_ALLOW_READ | SBX_FS_ALLOW_WRITE | SBX_FS_DENY_READ |
				  SBX_FS_DENY_WRITE | SBX_FS_MANDATORY);
}

static void test_compile_guards_and_mask(void **state)
{
	struct policy_rule rules[] = {
		{ .kind = RULE_DENY_READ, .scope = RULE_ABSOLUTE, .path = "/home/u/.ssh" },
		{ .kind = RULE_ALLOW_WRITE, .scope = RULE_ABSOLUTE, .path = "/home/u/work" },
		{ .kind = RULE_MANDATORY, .scope = RULE_ANY_DEPTH, .path = ".git/hooks" },
		{ .kind = RULE_DENY_WRITE, .scope = RULE_ABSOLUTE, .path = "/home/u/.ssh" },
	};
	struct policy p = { .rules = rules, .nr_rules = 4 };
	const struct fs_entry *e;
	struct fs_compiled c;

	(void)state;
	assert_int_equal(fs_compile(&p, 7, &c), 0);
	assert_int_equal(c.any_depth_mask, 0x3);
	/* /home, /home/u (guards), .ssh (merged), work, .git (guard), .git/hooks */
	assert_int_equal(c.nr, 6);
	e = find(&c, fs_key_absolute(7, "/home/u/.ssh"));
	assert_non_null(e);
	assert_int_equal(e->rule.flags, SBX_FS_DENY_READ | SBX_FS_DENY_WRITE);
	assert_int_equal(e->rule.read_rule, 0);
	assert_int_equal(e->rule.write_rule, 3);
	e = find(&c, fs_key_absolute(7, "/home/u"));
	assert_non_null(e);
	assert_int_equal(e->rule.flags, SBX_FS_GUARD);
	e = find(&c, fs_key_any_depth(7, ".git"));
	assert_non_null(e);
	/* leads into a mandatory pattern: only a directory may be called .git */
	assert_int_equal(e->rule.flags, SBX_FS_GUARD | SBX_FS_GUARD_MANDATORY);
	assert_int_equal(e->rule.guard_rule, 2);
	assert_null(find(&c, fs_key_absolute(7, "/")));	/* "/" is never renamed: no guard */
	fs_compiled_free(&c);
}

static void test_compile_rejects_relative_absolute(void **state)
{
	struct policy_rule rules[] = {
		{ .kind = RULE_DENY_READ, .scope = RULE_ABSOLUTE, .path = "relative" },
	};
	struct policy p = { .rules = rules, .nr_rules = 1 };
	struct fs_compiled c;

	(void)state;
	assert_int_equal(fs_compile(&p, 1, &c), -22);
	assert_int_equal(c.nr, 0);
}

/* Found by tests/fuzz/fuzz_grants: rules from a damaged record, compiled with no policy.c before. */
static void test_compile_rejects_what_no_policy_has(void **state)
{
	struct policy_rule rules[] = {
		{ .kind = RULE_DENY_WRITE, .scope = RULE_ANY_DEPTH, .path = "a/b/c/d/e" },	/* no mask bit */
	};
	struct policy p = { .rules = rules, .nr_rules = 1 }, none = {};
	struct fs_extra_rule x = { .kind = RULE_ALLOW_READ, .path = "/a", .id = 7 };
	struct fs_compiled c;

	(void)state;
	assert_int_equal(fs_compile(&p, 1, &c), -EINVAL);
	rules[0].path = "a/b/c/d";
	assert_int_equal(fs_compile(&p, 1, &c), 0);
	assert_int_equal(c.any_depth_mask, 0xf);
	fs_compiled_free(&c);
	/* Nothing to compile: no entries (and no qsort of a NULL array, which UBSan reports). */
	assert_int_equal(fs_compile(&none, 1, &c), 0);
	assert_int_equal(c.nr, 0);
	assert_int_equal(fs_compile_extra(&none, &x, 0, 1, &c), 0);
	assert_int_equal(c.nr, 0);
	assert_int_equal(fs_compile_extra(&none, &x, 1, 1, &c), 0);	/* a grant on no policy rules */
	assert_int_equal(c.nr, 1);
	assert_int_equal(c.entries[0].rule.read_rule, 7);
	fs_compiled_free(&c);
}

/* allowUnixSockets: a flag and a rule id of their own, guards as any absolute rule; no read/write say. */
static void test_compile_unix_sockets(void **state)
{
	struct policy_rule rules[] = {
		{ .kind = RULE_ALLOW_WRITE, .scope = RULE_ABSOLUTE, .path = "/run/user" },
		{ .kind = RULE_ALLOW_UNIX, .scope = RULE_ABSOLUTE, .path = "/run/user/1000/bus" },
		{ .kind = RULE_ALLOW_UNIX, .scope = RULE_ABSOLUTE, .path = "/run/user" },
		{ .kind = RULE_DENY_READ, .scope = RULE_ABSOLUTE, .path = "/run/user/1000/bus" },
		{ .kind = RULE_ALLOW_UNIX, .scope = RULE_ABSOLUTE, .path = "/tmp/x.sock" },
	};
	struct policy p = { .rules = rules, .nr_rules = 5 };
	const struct fs_entry *e;
	struct fs_compiled c;

	(void)state;
	assert_int_equal(fs_compile(&p, 3, &c), 0);
	assert_int_equal(c.any_depth_mask, 0);
	/* /run, /run/user, /run/user/1000, bus, /tmp, x.sock */
	assert_int_equal(c.nr, 6);
	e = find(&c, fs_key_absolute(3, "/tmp/x.sock"));
	assert_non_null(e);
	assert_int_equal(e->rule.flags, SBX_FS_UNIX_SOCKET);
	assert_int_equal(e->rule.unix_rule, 4);
	e = find(&c, fs_key_absolute(3, "/run/user/1000/bus"));
	assert_non_null(e);
	assert_int_equal(e->rule.flags, SBX_FS_UNIX_SOCKET | SBX_FS_DENY_READ);
	assert_int_equal(e->rule.unix_rule, 1);
	assert_int_equal(e->rule.read_rule, 3);
	e = find(&c, fs_key_absolute(3, "/run/user"));
	assert_non_null(e);
	assert_int_equal(e->rule.flags, SBX_FS_ALLOW_WRITE | SBX_FS_UNIX_SOCKET | SBX_FS_GUARD);
	assert_int_equal(e->rule.write_rule, 0);
	assert_int_equal(e->rule.unix_rule, 2);
	e = find(&c, fs_key_absolute(3, "/run/user/1000"));
	assert_non_null(e);
	assert_int_equal(e->rule.flags, SBX_FS_GUARD);
	assert_int_equal(e->rule.unix_rule, SBX_RULE_NONE);
	e = find(&c, fs_key_absolute(3, "/tmp"));
	assert_non_null(e);
	assert_int_equal(e->rule.flags, SBX_FS_GUARD);
	assert_int_equal(e->rule.guard_rule, 4);
	fs_compiled_free(&c);
}

static void test_merge_unix_rule(void **state)
{
	struct sbx_fs_rule r = { .read_rule = 1, .write_rule = 1, .unix_rule = SBX_RULE_NONE,
				 .flags = SBX_FS_DENY_READ };
	struct sbx_fs_rule sock = { .read_rule = 2, .write_rule = 2, .unix_rule = 2,
				    .flags = SBX_FS_UNIX_SOCKET };
	struct sbx_fs_rule sock2 = { .read_rule = 5, .write_rule = 5, .unix_rule = 5,
				     .flags = SBX_FS_UNIX_SOCKET };

	(void)state;
	fs_rule_merge(&r, &sock);
	fs_rule_merge(&r, &sock2);	/* the first socket rule stays */
	assert_int_equal(r.unix_rule, 2);
	assert_int_equal(r.read_rule, 1);	/* a socket rule says nothing about reads */
	assert_int_equal(r.write_rule, 1);
	assert_int_equal(r.flags, SBX_FS_DENY_READ | SBX_FS_UNIX_SOCKET);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_merge_precedence),
		cmocka_unit_test(test_compile_guards_and_mask),
		cmocka_unit_test(test_compile_rejects_relative_absolute),
		cmocka_unit_test(test_compile_rejects_what_no_policy_has),
		cmocka_unit_test(test_compile_unix_sockets),
		cmocka_unit_test(test_merge_unix_rule),
	};

	return cmocka_run_group_tests_name("fsrules", tests, NULL, NULL);
}
