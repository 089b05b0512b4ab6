// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
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

/* The caller of hold_until_exit: SIGTERM blocked, @held handed over, @kept not; it exits on @go. */
static _Noreturn void holder(int held, int kept, int go)
{
	int fds[] = { -1, held };	/* a -1 among them is skipped, not taken for a bound */
	sigset_t term;
	char c;

	(void)kept;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	if (hold_until_exit(fds, 2, "sbx-test-hold"))
		_exit(2);
	close(held);
	if (read(go, &c, 1) < 0)
		_exit(3);
	_exit(0);
}

/* The next child of @parent in the /proc listing @d, its command name in @name (64 bytes); 0 at the end. */
static pid_t next_child(DIR *d, pid_t parent, char *name)
{
	char path[300], line[512];
	struct dirent *e;
	int ppid, pid;

	while ((e = readdir(d))) {
		FILE *f;
		bool hit;

		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		hit = fgets(line, sizeof(line), f) &&
		      sscanf(line, "%d (%63[^)]) %*c %d", &pid, name, &ppid) == 3 && ppid == parent;
		fclose(f);
		if (hit)
			return pid;
	}
	return 0;
}

/* The pid of @parent's child named @comm, waited for up to 5 s; 0 if none. */
static pid_t child_named(pid_t parent, const char *comm)
{
	char name[64];
	pid_t pid = 0;

	for (int tries = 0; tries < 500 && !pid; tries++) {
		DIR *d = opendir("/proc");

		while (d && (pid = next_child(d, parent, name)) && strcmp(name, comm))
			;
		if (d)
			closedir(d);
		if (!pid)
			usleep(10000);
	}
	return pid;
}

/* What /proc/@pid/fd/@fd (or /proc/self/fd/@fd) points at; "" if nothing. */
static const char *fd_target(const char *pid, const char *fd, char *buf, size_t sz)
{
	char path[300];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, fd);
	n = readlink(path, buf, sz - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static pid_t hold_pids[2];	/* the caller and its child: killed whatever the test's end */

/* Kill and reap every child of this process: ours by fork, or as their subreaper. */
static void kill_children(void)
{
	DIR *d = opendir("/proc");
	char name[64];
	pid_t pid;

	while (d && (pid = next_child(d, getpid(), name)))
		kill(pid, SIGKILL);
	if (d)
		closedir(d);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* Whatever the test's end: no child left holding a pipe (the test runner's stdout among them). */
static int hold_teardown(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++)
		if (hold_pids[i] > 0)
			kill(hold_pids[i], SIGKILL);
	hold_pids[0] = hold_pids[1] = 0;
	kill_children();
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	return 0;
}

/*
 * hold_until_exit: the child holds the descriptor it was given, past its
 * caller's own close of it, and nothing else (not the caller's other pipe),
 * in a session of its own with no signal blocked; it goes when the caller
 * exits, and the descriptor with it.
 */
static void test_hold_until_exit(void **state)
{
	int a[2], b[2], go[2], status, fds = 0, others = 0;
	char hs[16], num[16], want[64], got[64], st[4096];
	struct pollfd p;
	struct dirent *e;
	pid_t s, h;
	DIR *d;

	(void)state;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);	/* the orphaned child comes to us */
	assert_int_equal(pipe(a) | pipe(b) | pipe(go), 0);
	s = fork();
	assert_true(s >= 0);
	if (s == 0) {
		close(a[0]);
		close(b[0]);
		close(go[1]);
		holder(a[1], b[1], go[0]);
	}
	close(a[1]);
	close(b[1]);
	close(go[0]);
	hold_pids[0] = s;
	h = child_named(s, "sbx-test-hold");
	assert_true(h > 0);
	hold_pids[1] = h;
	snprintf(hs, sizeof(hs), "%d", h);

	snprintf(num, sizeof(num), "%d", a[0]);
	fd_target("self", num, want, sizeof(want));	/* the pipe's inode: both ends show it */
	snprintf(st, sizeof(st), "/proc/%d/fd", h);
	d = opendir(st);
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		fds++;
		fd_target(hs, e->d_name, got, sizeof(got));
		if (strcmp(got, want))
			others++;
	}
	closedir(d);
	assert_int_equal(fds, 2);	/* a's write end and its own pipe's read end */
	assert_int_equal(others, 1);

	snprintf(st, sizeof(st), "/proc/%d/status", h);
	assert_true(read_file(st, st, sizeof(st)) > 0);
	assert_non_null(strstr(st, "SigBlk:\t0000000000000000\n"));
	assert_int_equal(getsid(h), h);

	p = (struct pollfd){ .fd = a[0], .events = POLLIN };
	assert_int_equal(poll(&p, 1, 0), 0);		/* a is held: no EOF */
	close(go[1]);					/* the caller exits ... */
	assert_int_equal(waitpid(s, &status, 0), s);
	hold_pids[0] = 0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(waitpid(h, &status, 0), h);	/* ... and so does the child */
	hold_pids[1] = 0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(read(a[0], st, 1), 0);		/* a with it */
	assert_int_equal(read(b[0], st, 1), 0);
	close(a[0]);
	close(b[0]);
}

/* This process's close_range fails with EPERM from now on, as under an older container's seccomp profile. */
static int refuse_close_range(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close_range, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/*
 * hold_until_exit where close_range is refused: the child cannot let go of
 * what it must not hold (the pipe's write end among it), so it leaves at
 * once instead of waiting for ever, and the descriptor goes with its
 * caller.
 */
static void test_hold_without_close_range(void **state)
{
	int a[2], go[2], status, reaped = 0;
	char c;
	pid_t s;

	(void)state;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	assert_int_equal(pipe(a) | pipe(go), 0);
	s = fork();
	assert_true(s >= 0);
	if (s == 0) {
		close(a[0]);
		close(go[1]);
		if (refuse_close_range())
			_exit(4);
		holder(a[1], -1, go[0]);
	}
	hold_pids[0] = s;
	close(a[1]);
	close(go[0]);
	close(go[1]);					/* the caller exits */
	assert_int_equal(waitpid(s, &status, 0), s);
	hold_pids[0] = 0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (int tries = 0; tries < 500 && !reaped; tries++) {	/* its child, ours now: 5 s */
		pid_t h = waitpid(-1, &status, WNOHANG);

		if (h > 0)
			reaped = 1;
		else
			usleep(10000);
	}
	assert_true(reaped);
	assert_int_equal(read(a[0], &c, 1), 0);		/* nobody holds a any more */
	close(a[0]);
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
		cmocka_unit_test_teardown(test_hold_until_exit, hold_teardown),
		cmocka_unit_test_teardown(test_hold_without_close_range, hold_teardown),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
