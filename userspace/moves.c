// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * moves.c — the kernel's move counts found and checked (moves.h).
 *
 * The lookup is by name (bpf_kallsyms_lookup_name, which answers with the
 * first symbol of that name in vmlinux): what makes the address right is
 * that each name is one global of vmlinux, as in every kernel of the
 * matrix. The check after it catches a kernel where that stopped being so
 * in the way that matters: a word that stands still through a rename (or
 * a mount change) would let a memo outlive the move it should have
 * noticed. It cannot tell the count from another word that happens to
 * move by two as well.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "moves.h"
#include "moves.skel.h"

/*
 * Run the program; what it read in @out. Again while a count reads odd
 * (a change under way, over in microseconds), a few times at most.
 */
static int moves_run(struct moves_bpf *skel, struct sbx_moves *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	for (int tries = 0; tries < 4; tries++) {
		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.moves_read), &opts))
			return -errno;
		*out = skel->bss->moves;
		if (!((out->count[SBX_MOVES_RENAME] | out->count[SBX_MOVES_MOUNT]) & 1))
			break;
		usleep(1000);
	}
	return 0;
}

/* A directory renamed: rename_lock taken. In a fresh directory of TMPDIR's, removed after. */
static int move_a_dentry(void)
{
	const char *tmp = getenv("TMPDIR");
	char dir[256], a[300], b[300];
	int err = 0;

	snprintf(dir, sizeof(dir), "%s/sbx-moves.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -errno;
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	if (mkdir(a, 0700) || rename(a, b))
		err = -errno;
	rmdir(a);
	rmdir(b);
	rmdir(dir);
	return err;
}

/* The child's: its result written where the parent reads it (the memory is shared). */
static int copy_mounts(void *arg)
{
	*(int *)arg = unshare(CLONE_NEWNS) ? -errno : 0;
	_exit(0);
}

/*
 * The mount tree copied: a child that shares our memory (no page tables
 * copied) but not our file system context takes a mount namespace of its
 * own, mount_lock taken for each mount copied and again when it goes.
 * CLONE_VFORK: we go on once it has exited, whether or not SIGCHLD is
 * ignored (then the kernel reaps it, and waitpid says ECHILD).
 */
static int move_a_mount(void)
{
	static char stack[16384] __attribute__((aligned(16)));
	int result = -ECHILD;
	pid_t pid = clone(copy_mounts, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &result);

	if (pid < 0)
		return -errno;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return result;
}

/* Count @i moved from @before to @after by at least one whole change. */
static bool moved(const struct sbx_moves *before, const struct sbx_moves *after, int i)
{
	__u32 d = after->count[i] - before->count[i];

	return !(before->count[i] & 1) && !(after->count[i] & 1) && d >= 2 && d < (1u << 30);
}

static int moves_check(struct moves_bpf *skel, __u64 addr[SBX_MOVES_N], char *why, size_t sz)
{
	static const char *const names[SBX_MOVES_N] = { "rename_lock", "mount_lock" };
	struct sbx_moves first, after;
	int err = moves_run(skel, &first);

	if (err) {
		snprintf(why, sz, "the finding program does not run: %s", strerror(-err));
		return err;
	}
	for (int i = 0; i < SBX_MOVES_N; i++) {
		if (!first.addr[i] || first.err[i]) {
			snprintf(why, sz, "%s not found (%s)", names[i], strerror(first.err[i] ? -first.err[i] : ENOENT));
			return -ENOENT;
		}
	}
	err = move_a_dentry();
	if (!err)
		err = move_a_mount();
	if (!err)
		err = moves_run(skel, &after);
	if (err) {
		snprintf(why, sz, "could not move a directory and a mount to see the counts move: %s", strerror(-err));
		return err;
	}
	for (int i = 0; i < SBX_MOVES_N; i++) {
		if (after.err[i] || !moved(&first, &after, i)) {
			snprintf(why, sz, "%s did not count the %s (%u, then %u)", names[i],
				 i == SBX_MOVES_RENAME ? "rename" : "mount namespace copied", first.count[i],
				 after.count[i]);
			return -ESTALE;
		}
	}
	for (int i = 0; i < SBX_MOVES_N; i++)
		addr[i] = first.addr[i];
	return 0;
}

int moves__find(__u64 addr[SBX_MOVES_N], char *why, size_t sz)
{
	static __u64 found[SBX_MOVES_N];
	static char found_why[160];
	static int done, found_err;
	struct moves_bpf *skel;

	if (!done) {
		skel = moves_bpf__open_and_load();
		if (!skel) {
			found_err = -errno;
			snprintf(found_why, sizeof(found_why), "the finding program does not load: %s",
				 strerror(errno));
		} else {
			found_err = moves_check(skel, found, found_why, sizeof(found_why));
			moves_bpf__destroy(skel);
		}
		if (found_err)
			memset(found, 0, sizeof(found));
		done = 1;
	}
	memcpy(addr, found, sizeof(found));
	snprintf(why, sz, "%s", found_err ? found_why : "");
	return found_err;
}
