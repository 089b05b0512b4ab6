// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * moves__find() (userspace/moves.c) on the host kernel: its syscall
 * program runs here (BPF_PROG_TEST_RUN), and what it answers must be what
 * /proc/kallsyms says of the two locks, read independently. A kernel
 * without them (no CONFIG_KALLSYMS_ALL, as the build machine's) must get
 * zeros and a reason naming the first missing; one with them, both
 * addresses, the very ones /proc/kallsyms lists.
 * Needs root, as the other tests of this layer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "moves.h"

/* @name's address in /proc/kallsyms (0 when hidden: kptr_restrict), or ~0 when it is not listed. */
static unsigned long long kallsyms_addr(const char *name)
{
	char line[512], sym[256];
	unsigned long long addr, found = ~0ULL;
	FILE *f = fopen("/proc/kallsyms", "r");

	assert_non_null(f);
	while (found == ~0ULL && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %*s %255s", &addr, sym) == 2 && !strcmp(sym, name))
			found = addr;
	fclose(f);
	return found;
}

static void test_find_matches_kallsyms(void **state)
{
	unsigned long long rename = kallsyms_addr("rename_lock"), mount = kallsyms_addr("mount_lock");
	__u64 addr[SBX_MOVES_N] = { 1, 1 };
	char why[160] = "unset";
	int err = moves__find(addr, why, sizeof(why));

	(void)state;
	if (rename != ~0ULL && mount != ~0ULL && rename && mount) {
		assert_int_equal(err, 0);
		assert_string_equal(why, "");
		assert_int_equal(addr[SBX_MOVES_RENAME], rename);
		assert_int_equal(addr[SBX_MOVES_MOUNT], mount);
	} else if (rename != ~0ULL && mount != ~0ULL) {
		/* Listed with zeros: kptr_restrict hides them, and the lookup is refused the same way. */
		assert_true(err < 0);
		assert_true(!addr[SBX_MOVES_RENAME] && !addr[SBX_MOVES_MOUNT]);
		assert_non_null(strstr(why, "rename_lock"));
	} else {
		/* The build machines' kernel (no CONFIG_KALLSYMS_ALL): nothing, and which lock is missing. */
		assert_true(err < 0);
		assert_true(!addr[SBX_MOVES_RENAME] && !addr[SBX_MOVES_MOUNT]);
		assert_non_null(strstr(why, rename == ~0ULL ? "rename_lock" : "mount_lock"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_matches_kallsyms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
