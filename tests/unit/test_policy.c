// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "loader.h"
#include "policy.h"

static void norm(const char *in, const char *cwd, const char *want)
{
	char out[PATH_MAX];

	assert_int_equal(path_normalize(in, cwd, out, sizeof(out)), 0);
	assert_string_equal(out, want);
}

static void test_normalize(void **state)
{
	char out[8];

	(void)state;
	norm("/a/b/c", NULL, "/a/b/c");
	norm("//a///b/", NULL, "/a/b");
	norm("/a/./b/../c", NULL, "/a/c");
	norm("/../../a", NULL, "/a");
	norm("/", NULL, "/");
	norm("/a/..", NULL, "/");
	norm("rel/x", "/work", "/work/rel/x");
	norm("../up", "/work/dir", "/work/up");
	norm(".", "/work", "/work");
	assert_int_equal(path_normalize("", NULL, out, sizeof(out)), -22);
	assert_int_equal(path_normalize("rel", NULL, out, sizeof(out)), -22);
	assert_int_equal(path_normalize("/abcdefghij", NULL, out, sizeof(out)), -36);
}

/* A rule written against a symlink protects what the link points to. */
static void test_resolve_symlinked_prefix(void **state)
{
	char dir[] = "/tmp/sbx-unit-XXXXXX", link[PATH_MAX], p[PATH_MAX], want[PATH_MAX], real[PATH_MAX];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/real", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(p, link), 0);
	assert_non_null(realpath(p, real));

	snprintf(p, sizeof(p), "%s/link/not/yet/there", dir);
	assert_int_equal(path_resolve(p, sizeof(p)), 0);
	snprintf(want, sizeof(want), "%s/not/yet/there", real);
	assert_string_equal(p, want);

	snprintf(p, sizeof(p), "/nonexistent-sbx-top/x");
	assert_int_equal(path_resolve(p, sizeof(p)), 0);
	assert_string_equal(p, "/nonexistent-sbx-top/x");

	snprintf(p, sizeof(p), "%s/link", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/real", dir);
	rmdir(p);
	rmdir(dir);
}

static void test_policy_rules(void **state)
{
	struct policy pol = {};

	(void)state;
	assert_int_equal(policy_add(&pol, RULE_DENY_READ, "/nonexistent-sbx/a/../b/", "/"), 0);
	assert_int_equal(policy_add(&pol, RULE_ALLOW_READ, "c", "/nonexistent-sbx/b"), 0);
	assert_int_equal(pol.nr_rules, 2);
	assert_string_equal(pol.rules[0].path, "/nonexistent-sbx/b");
	assert_string_equal(policy_rule_text(&pol, 0), "deny-read /nonexistent-sbx/b");
	assert_string_equal(policy_rule_text(&pol, 1), "allow-read /nonexistent-sbx/b/c");
	assert_null(policy_rule_text(&pol, 2));
	assert_null(policy_rule_text(&pol, SBX_RULE_NONE));
	assert_int_equal(policy_add(&pol, RULE_DENY_READ, "", "/"), -22);
	assert_int_equal(pol.nr_rules, 2);
	policy_free(&pol);
	assert_int_equal(pol.nr_rules, 0);
}

/* The key the kernel walk computes: FNV-1a over the bytes, "/" empty. */
static void test_fs_key(void **state)
{
	struct sbx_fs_key k;

	(void)state;
	k = loader__fs_key(3, "/");
	assert_int_equal(k.len, 0);
	assert_true(k.hash == SBX_HASH_INIT);
	assert_int_equal(k.policy_id, 3);
	k = loader__fs_key(3, "/a");
	assert_int_equal(k.len, 2);
	/* FNV-1a 64 of "/a", computed by hand from the published constants. */
	assert_true(k.hash == ((((SBX_HASH_INIT ^ '/') * SBX_HASH_PRIME) ^ 'a') * SBX_HASH_PRIME));
	assert_true(loader__fs_key(3, "/ab").hash != loader__fs_key(3, "/ba").hash);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_resolve_symlinked_prefix),
		cmocka_unit_test(test_policy_rules),
		cmocka_unit_test(test_fs_key),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
