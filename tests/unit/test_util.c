// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <linux/magic.h>

#include "cgroup.h"
#include "util.h"

static void test_kernel_release(void **state)
{
	int a, b, c;

	(void)state;
	assert_int_equal(parse_kernel_release("6.1.0-50-amd64", &a, &b, &c), 0);
	assert_int_equal(a, 6); assert_int_equal(b, 1); assert_int_equal(c, 0);
	assert_int_equal(parse_kernel_release("6.12.107+deb13-amd64", &a, &b, &c), 0);
	assert_int_equal(a, 6); assert_int_equal(b, 12); assert_int_equal(c, 107);
	assert_int_equal(parse_kernel_release("5.17", &a, &b, &c), 0);
	assert_int_equal(b, 17); assert_int_equal(c, 0);
	assert_int_equal(parse_kernel_release("garbage", &a, &b, &c), -22);
}

static void test_list_has(void **state)
{
	(void)state;
	assert_true(list_has("lockdown,capability,landlock,bpf", "bpf"));
	assert_true(list_has("bpf", "bpf"));
	assert_false(list_has("lockdown,capability,bpfx", "bpf"));
	assert_false(list_has("xbpf,capability", "bpf"));
	assert_false(list_has("", "bpf"));
}

static void test_utf8(void **state)
{
	static const char *const bad[] = {
		"\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc3",
	};
	char *s;

	(void)state;
	assert_int_equal(utf8_seq_len("a", 1), 1);
	assert_int_equal(utf8_seq_len("\xc3\xa9", 2), 2);
	assert_int_equal(utf8_seq_len("\xe2\x82\xac", 3), 3);
	assert_int_equal(utf8_seq_len("\xf0\x9f\x98\x80", 4), 4);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)	/* stray, overlong, surrogate, too big, cut */
		assert_int_equal(utf8_seq_len(bad[i], strlen(bad[i])), 0);
	assert_true(utf8_valid("") && utf8_valid("a\xc3\xa9\xf0\x9f\x98\x80"));
	assert_false(utf8_valid("/dev/stdo\xcdt") || utf8_valid("a\xc3"));
	s = utf8_sanitize("a\xff" "b\xc3\xa9", 5);
	assert_string_equal(s, "a\xef\xbf\xbd" "b\xc3\xa9");
	free(s);
}

static void test_strip(void **state)
{
	char s[] = "cpu io memory pids\n \t";

	(void)state;
	assert_string_equal(strip(s), "cpu io memory pids");
}

static const char unified[] =
	"22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
	"29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec - cgroup2 cgroup2 rw,nsdelegate\n";
static const char hybrid[] =
	"30 23 0:27 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n"
	"31 30 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n"
	"32 30 0:29 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
static const char legacy[] =
	"30 23 0:27 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n"
	"32 30 0:29 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n";

static void test_cgroup_layout(void **state)
{
	char v2[256];

	(void)state;
	assert_int_equal(cgroup_parse_layout(unified, v2, sizeof(v2)), CGROUP_UNIFIED);
	assert_string_equal(v2, "/sys/fs/cgroup");
	assert_int_equal(cgroup_parse_layout(hybrid, v2, sizeof(v2)), CGROUP_HYBRID);
	assert_string_equal(v2, "/sys/fs/cgroup/unified");
	assert_int_equal(cgroup_parse_layout(legacy, v2, sizeof(v2)), CGROUP_LEGACY);
	assert_string_equal(v2, "");
	assert_int_equal(cgroup_parse_layout("", v2, sizeof(v2)), CGROUP_NONE);
	/* An optional field before the separator must not shift the columns. */
	assert_int_equal(cgroup_parse_layout(
		"29 23 0:26 / /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 rw\n", v2, sizeof(v2)),
		CGROUP_UNIFIED);
	/* /sys/fs/cgroup before any other cgroup2 mount, as the answer without mountinfo gives it. */
	assert_int_equal(cgroup_parse_layout("30 23 0:26 / /mnt/cg rw - cgroup2 cgroup2 rw\n"
					     "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
					     "31 23 0:26 / /mnt/cg2 rw - cgroup2 cgroup2 rw\n", v2, sizeof(v2)),
			 CGROUP_UNIFIED);
	assert_string_equal(v2, "/sys/fs/cgroup");
	assert_int_equal(cgroup_parse_layout("30 23 0:26 / /mnt/cg rw - cgroup2 cgroup2 rw\n", v2, sizeof(v2)),
			 CGROUP_UNIFIED);
	assert_string_equal(v2, "/mnt/cg");
}

/* Unified told without mountinfo: cgroup2 at /sys/fs/cgroup and one whole "0::" line, nothing else. */
static void test_default_unified(void **state)
{
	static const struct {
		long f_type;
		const char *text;
		bool want;
	} c[] = {
		{ CGROUP2_SUPER_MAGIC, "0::/user.slice/s.scope\n", true },
		{ CGROUP2_SUPER_MAGIC, "0::/\n", true },
		{ TMPFS_MAGIC, "0::/\n", false },				/* hybrid: v2 elsewhere */
		{ CGROUP2_SUPER_MAGIC, "1:name=systemd:/\n0::/\n", false },	/* a v1 hierarchy */
		{ CGROUP2_SUPER_MAGIC, "12:pids:/\n0::/\n", false },
		{ CGROUP2_SUPER_MAGIC, "0::/a\n0::/b\n", false },		/* a name with a newline */
		{ CGROUP2_SUPER_MAGIC, "0::/cut-short", false },		/* more than the buffer held */
		{ CGROUP2_SUPER_MAGIC, "", false },
		{ CGROUP2_SUPER_MAGIC, "0::", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		assert_int_equal(cgroup_default_unified(c[i].f_type, c[i].text, (int)strlen(c[i].text)), c[i].want);
	assert_false(cgroup_default_unified(CGROUP2_SUPER_MAGIC, "", -2));	/* the read failed */
}

/* str_join: snprintf("%s%s%s")'s answer and bytes, cut or not. */
static void test_str_join(void **state)
{
	char buf[8], want[8];

	(void)state;
	assert_int_equal(str_join(buf, sizeof(buf), "ab", "/", "cd"), 5);
	assert_string_equal(buf, "ab/cd");
	assert_int_equal(str_join(buf, sizeof(buf), "", "", ""), 0);
	assert_string_equal(buf, "");
	assert_int_equal(str_join(buf, sizeof(buf), "abcd", "efg", ""), 7);	/* exactly full */
	assert_string_equal(buf, "abcdefg");
	assert_int_equal(str_join(buf, sizeof(buf), "abcd", "efgh", "ij"), 10);	/* cut */
	snprintf(want, sizeof(want), "%s%s%s", "abcd", "efgh", "ij");
	assert_string_equal(buf, want);
	assert_int_equal(str_join(buf, 1, "x", "y", "z"), 3);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_str_join),
		cmocka_unit_test(test_kernel_release),
		cmocka_unit_test(test_list_has),
		cmocka_unit_test(test_strip),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_cgroup_layout),
		cmocka_unit_test(test_default_unified),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
