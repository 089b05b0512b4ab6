// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The path matcher of the LSM programs, run in the host kernel through
 * BPF_PROG_TEST_RUN (see fs_match_test.bpf.c), with rule keys made by the
 * same userspace code `sbx-bpf run` uses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "fs_match_test.skel.h"

struct match_args {
	__u32 policy_id;
	__u32 len;
	__u32 rule_id;
	__u32 pad;
	char path[SBX_PATH_MAX];
};

static struct fs_match_test_bpf *skel;

static int setup(void **state)
{
	(void)state;
	skel = fs_match_test_bpf__open_and_load();
	return skel ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fs_match_test_bpf__destroy(skel);
	return 0;
}

/* Empty the rule map between tests. */
static int clear_rules(void **state)
{
	struct sbx_fs_key key, next;
	int fd = bpf_map__fd(skel->maps.fs_rules);

	(void)state;
	while (!bpf_map_get_next_key(fd, NULL, &key))
		bpf_map_delete_elem(fd, &key);
	(void)next;
	return 0;
}

static void rule(__u32 policy, const char *path, __u32 flags, __u32 id)
{
	struct sbx_fs_key key = loader__fs_key(policy, path);
	struct sbx_fs_rule r = { .rule_id = id, .flags = flags };

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fs_rules), &key, &r, BPF_ANY), 0);
}

/* Returns 1 for deny, 0 for allow; *rule_id gets the deciding rule. */
static int judge_len(__u32 policy, const char *path, size_t len, __u32 *rule_id)
{
	static struct match_args args;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args, .ctx_size_in = sizeof(args));

	memset(&args, 0, sizeof(args));
	args.policy_id = policy;
	args.len = (__u32)len;
	memcpy(args.path, path, len < SBX_PATH_MAX ? len : SBX_PATH_MAX - 1);
	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.match_read), &opts), 0);
	*rule_id = args.rule_id;
	return (int)opts.retval;
}

static int judge(__u32 policy, const char *path, __u32 *rule_id)
{
	return judge_len(policy, path, strlen(path), rule_id);
}

#define assert_verdict(path, want_deny, want_rule) do {			\
	__u32 _rid;							\
	assert_int_equal(judge(1, (path), &_rid), (want_deny));		\
	assert_int_equal(_rid, (want_rule));				\
} while (0)

static void test_no_rules_allows(void **state)
{
	(void)state;
	assert_verdict("/etc/passwd", 0, SBX_RULE_NONE);
	assert_verdict("/", 0, SBX_RULE_NONE);
}

static void test_deny_covers_subtree_not_siblings(void **state)
{
	(void)state;
	rule(1, "/home/u/.ssh", SBX_FS_DENY_READ, 7);
	assert_verdict("/home/u/.ssh", 1, 7);
	assert_verdict("/home/u/.ssh/id_rsa", 1, 7);
	assert_verdict("/home/u/.ssh/a/b/c", 1, 7);
	assert_verdict("/home/u/.sshx", 0, SBX_RULE_NONE);	/* component boundary */
	assert_verdict("/home/u/.ss", 0, SBX_RULE_NONE);
	assert_verdict("/home/u", 0, SBX_RULE_NONE);
}

static void test_most_specific_wins(void **state)
{
	(void)state;
	rule(1, "/data", SBX_FS_DENY_READ, 0);
	rule(1, "/data/pub", SBX_FS_ALLOW_READ, 1);
	rule(1, "/data/pub/secret", SBX_FS_DENY_READ, 2);
	assert_verdict("/data/x", 1, 0);
	assert_verdict("/data/pub", 0, 1);
	assert_verdict("/data/pub/readme", 0, 1);
	assert_verdict("/data/pub/secret", 1, 2);
	assert_verdict("/data/pub/secret/key", 1, 2);
	assert_verdict("/database", 0, SBX_RULE_NONE);
}

static void test_root_rule(void **state)
{
	(void)state;
	rule(1, "/", SBX_FS_DENY_READ, 3);
	rule(1, "/tmp", SBX_FS_ALLOW_READ, 4);
	assert_verdict("/", 1, 3);
	assert_verdict("/etc/passwd", 1, 3);
	assert_verdict("/tmp/f", 0, 4);
}

static void test_policies_are_separate(void **state)
{
	__u32 rid;

	(void)state;
	rule(2, "/secret", SBX_FS_DENY_READ, 9);
	assert_verdict("/secret", 0, SBX_RULE_NONE);
	assert_int_equal(judge(2, "/secret/x", &rid), 1);
	assert_int_equal(rid, 9);
}

/* Deny beats allow on the very same path, whatever the insertion order. */
static void test_deny_and_allow_same_path(void **state)
{
	(void)state;
	rule(1, "/both", SBX_FS_DENY_READ | SBX_FS_ALLOW_READ, 5);
	assert_verdict("/both/f", 1, 5);
}

static void test_long_paths(void **state)
{
	static char path[SBX_PATH_MAX + 16];
	__u32 rid;
	size_t len;

	(void)state;
	/* 4095 bytes: /aaaa…/aaaa…/… deep below a denied directory. */
	strcpy(path, "/deep");
	while (strlen(path) < SBX_PATH_MAX - 1 - 10)
		strcat(path, "/abcdefghi");
	len = strlen(path);
	rule(1, "/deep/abcdefghi", SBX_FS_DENY_READ, 11);
	assert_int_equal(judge_len(1, path, len, &rid), 1);
	assert_int_equal(rid, 11);
	/* A rule on the full long path itself matches at the end of the walk. */
	rule(1, path, SBX_FS_ALLOW_READ, 12);
	assert_int_equal(judge_len(1, path, len, &rid), 0);
	assert_int_equal(rid, 12);
	/* Too long to judge: fail closed. */
	assert_int_equal(judge_len(1, path, SBX_PATH_MAX, &rid), 1);
	assert_int_equal(rid, SBX_RULE_NONE);
}

/* 10,000 rules: verdicts stay exact (cost is per component, see bench/). */
static void test_many_rules(void **state)
{
	char p[64];

	(void)state;
	for (int i = 0; i < 10000; i++) {
		snprintf(p, sizeof(p), "/r/%d", i);
		rule(1, p, (i % 2) ? SBX_FS_DENY_READ : SBX_FS_ALLOW_READ, (__u32)i);
	}
	assert_verdict("/r/9999/x", 1, 9999);
	assert_verdict("/r/5000", 0, 5000);
	assert_verdict("/r/10000", 0, SBX_RULE_NONE);
	assert_verdict("/r", 0, SBX_RULE_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_no_rules_allows, clear_rules),
		cmocka_unit_test_setup(test_deny_covers_subtree_not_siblings, clear_rules),
		cmocka_unit_test_setup(test_most_specific_wins, clear_rules),
		cmocka_unit_test_setup(test_root_rule, clear_rules),
		cmocka_unit_test_setup(test_policies_are_separate, clear_rules),
		cmocka_unit_test_setup(test_deny_and_allow_same_path, clear_rules),
		cmocka_unit_test_setup(test_long_paths, clear_rules),
		cmocka_unit_test_setup(test_many_rules, clear_rules),
	};

	return cmocka_run_group_tests_name("bpf_fs_match", tests, setup, teardown);
}
