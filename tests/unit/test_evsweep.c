// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The consumer's half of coalescing: the kernel's slot arrays are plain
 * memory here (the daemon sees them the same way, through mmap), filled as
 * the kernel would leave them after a flood.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "evsweep.h"

#define SEC	1000000000ULL
#define WINDOW	SEC

static struct sbx_coalesce_slot co[SBX_COALESCE_SLOTS];
static struct sbx_throttle_slot th[SBX_THROTTLE_SLOTS];
static struct sbx_event got[8];
static int nr_got;

static void collect(void *ctx, const struct sbx_event *ev)
{
	(void)ctx;
	assert_true(nr_got < 8);
	got[nr_got++] = *ev;
}

static int setup(void **state)
{
	memset(co, 0, sizeof(co));
	memset(th, 0, sizeof(th));
	memset(got, 0, sizeof(got));
	nr_got = 0;
	*state = evsweep_new(co, th, WINDOW);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	evsweep_free(*state);
	return 0;
}

/* A record as the kernel sends it: the path, then nothing (the size is cut there). */
static size_t record(struct sbx_event *ev, __u64 key, const char *path)
{
	memset(ev, 0, sizeof(*ev));
	ev->key = key;
	ev->seq = 7;
	ev->repeat = 1;
	ev->op = SBX_OP_READ;
	ev->verdict = SBX_VERDICT_DENY;
	ev->cgroup_id = ev->sandbox_cgroup_id = 99;
	ev->tgid = 1234;
	ev->path_len = (__u32)strlen(path);
	memcpy(ev->path, path, ev->path_len + 1);
	return offsetof(struct sbx_event, path) + ev->path_len + 1;
}

static void test_summary_after_window(void **state)
{
	static struct sbx_event ev;
	__u64 key = 0x12345 | 1;
	size_t i = key & (SBX_COALESCE_SLOTS - 1);

	evsweep_note(*state, &ev, record(&ev, key, "/home/u/.ssh/id_rsa"));
	co[i] = (struct sbx_coalesce_slot){ .key = key, .since_ns = 10 * SEC, .pending = 41 };
	/* Window still open: the kernel will fold them into its next record. */
	assert_int_equal(evsweep_run(*state, 10 * SEC + WINDOW / 2, collect, NULL), 0);
	assert_int_equal(co[i].pending, 41);
	assert_int_equal(evsweep_run(*state, 11 * SEC, collect, NULL), 1);
	assert_int_equal(nr_got, 1);
	assert_int_equal(co[i].pending, 0);		/* taken: never reported twice */
	assert_int_equal(got[0].repeat, 41);
	assert_true(got[0].flags & SBX_EV_SUMMARY);
	assert_int_equal(got[0].seq, 0);		/* not a kernel record */
	assert_int_equal(got[0].ts_ns, 11 * SEC);
	assert_string_equal(got[0].path, "/home/u/.ssh/id_rsa");
	assert_int_equal(got[0].tgid, 1234);
	/* Nothing pending any more: a second sweep sends nothing. */
	assert_int_equal(evsweep_run(*state, 12 * SEC, collect, NULL), 0);
	assert_int_equal(evsweep_unattributed(*state), 0);
}

static void test_other_key_unattributed(void **state)
{
	static struct sbx_event ev;
	__u64 key = 0x777 | 1, other = key + SBX_COALESCE_SLOTS;	/* same slot */
	size_t i = key & (SBX_COALESCE_SLOTS - 1);

	evsweep_note(*state, &ev, record(&ev, key, "/a"));
	co[i] = (struct sbx_coalesce_slot){ .key = other, .since_ns = 0, .pending = 5 };
	assert_int_equal(evsweep_run(*state, 5 * SEC, collect, NULL), 0);
	assert_int_equal(nr_got, 0);
	assert_int_equal(co[i].pending, 0);
	assert_int_equal(evsweep_unattributed(*state), 5);
}

static void test_throttled_when_quiet(void **state)
{
	size_t i = 17;

	th[i] = (struct sbx_throttle_slot){ .cgid = 4242, .suppressed = 900, .last_ns = 3 * SEC };
	assert_int_equal(evsweep_run(*state, 3 * SEC + SEC / 2, collect, NULL), 0);	/* still flooding */
	assert_int_equal(evsweep_run(*state, 5 * SEC, collect, NULL), 1);
	assert_int_equal(got[0].op, SBX_OP_THROTTLED);
	assert_int_equal(got[0].repeat, 900);
	assert_int_equal(got[0].sandbox_cgroup_id, 4242);
	assert_true(got[0].flags & SBX_EV_SUMMARY);
	assert_int_equal(th[i].suppressed, 0);
}

static void test_flush_everything(void **state)
{
	static struct sbx_event ev;
	__u64 key = 0x4243 | 1;
	size_t i = key & (SBX_COALESCE_SLOTS - 1);

	evsweep_note(*state, &ev, record(&ev, key, "/x"));
	co[i] = (struct sbx_coalesce_slot){ .key = key, .since_ns = 100 * SEC, .pending = 3 };
	th[3] = (struct sbx_throttle_slot){ .cgid = 1, .suppressed = 2, .last_ns = 100 * SEC };
	/* The consumer is going: every open window ends now. */
	assert_int_equal(evsweep_run(*state, ~0ULL, collect, NULL), 2);
	assert_int_equal(got[0].repeat + got[1].repeat, 5);
}

static void test_note_ignores_userspace_and_throttled(void **state)
{
	static struct sbx_event ev;
	size_t i = 5;

	record(&ev, 0, "/y");				/* key 0: made in userspace */
	evsweep_note(*state, &ev, sizeof(ev));
	co[i] = (struct sbx_coalesce_slot){ .key = 5, .since_ns = 0, .pending = 1 };
	record(&ev, 5, "");
	ev.op = SBX_OP_THROTTLED;
	evsweep_note(*state, &ev, offsetof(struct sbx_event, path) + 1);
	assert_int_equal(evsweep_run(*state, 10 * SEC, collect, NULL), 0);
	assert_int_equal(evsweep_unattributed(*state), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_summary_after_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_key_unattributed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_throttled_when_quiet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_everything, setup, teardown),
		cmocka_unit_test_setup_teardown(test_note_ignores_userspace_and_throttled, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
