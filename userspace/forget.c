// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * forget.c — a sandbox's traces out of the pinned set (forget.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <jansson.h>

#include "cgroup.h"
#include "forget.h"
#include "loader.h"
#include "sbxstate.h"

int sandbox_forget(struct sbx_loader *l, const char *pin_dir, __u64 cgid, const struct sbx_sandbox *sb,
		   bool live)
{
	int err = loader__remove_sandbox(l, cgid);

	if (err)
		return err;
	/*
	 * A call that began before the removal judges by its copy of the
	 * entry (bpf/sandbox.h struct sbx_sb_copy): its rules stay until it
	 * ends, or it judges by half of them (a write finding no allowWrite
	 * rule is refused). Best effort: membarrier waits for nothing with one
	 * CPU online, and may be missing; the sandbox is going either way.
	 */
	if (live) {
		loader__wait_judging();
		/* Those calls may have counted for it again (loader__prune_sandbox_stats). */
		loader__drop_sandbox_stats(l, cgid);
	}
	loader__unpin_steer(pin_dir, cgid);
	/* File grants are entries of the policy, connect grants slots of the cgroup. */
	loader__purge_policy(l, sb->policy_id);
	loader__purge_dns(l, cgid);
	state_remove(SBX_STATE_DIR, cgid);
	state_remove(SBX_DNS_COUNTS_DIR, cgid);	/* a killed run's resolver counters */
	if (sb->flags & SBX_SANDBOX_FD_JUDGE)
		loader__fd_judging_settle(l);
	return 0;
}

/* The cgroup2 file system, opened once (-1 when there is none: every sandbox's record is then read). */
static int cgroup_fd(void)
{
	static int fd = -2;
	char mnt[PATH_MAX];

	if (fd == -2)
		fd = cgroup_layout(mnt, sizeof(mnt)) != CGROUP_NONE && mnt[0] ?
			     open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	return fd;
}

bool sandbox_cgroup_gone(const char *path, __u64 cgid)
{
	struct stat st;

	if (!path || !path[0])
		return false;
	if (stat(path, &st))
		return errno == ENOENT || errno == ENOTDIR;
	return (__u64)st.st_ino != cgid;	/* a cgroup's inode number is its id */
}

int sandbox_forget_gone(struct sbx_loader *l, const char *pin_dir, forget_fn fn, void *ctx)
{
	__u64 gone[64], cgid, prev = 0;
	struct sbx_sandbox sb;
	bool first = true;
	int n = 0, forgot = 0;

	/* Collected first: removing entries while walking the map's keys would restart the walk. */
	while (n < (int)(sizeof(gone) / sizeof(gone[0])) &&
	       !loader__next_sandbox(l, first ? NULL : &prev, &cgid, &sb)) {
		first = false;
		prev = cgid;
		/*
		 * A live cgroup, told by its id, needs no record read: records
		 * hold whole policies (10,000 rules are megabytes of JSON), and
		 * the daemon sweeps every 5 s.
		 */
		if (cgroup_id_alive(cgroup_fd(), cgid) > 0)
			continue;
		json_t *st = state_read(SBX_STATE_DIR, cgid);

		if (sandbox_cgroup_gone(json_string_value(json_object_get(st, "cgroup")), cgid))
			gone[n++] = cgid;
		json_decref(st);
	}
	for (int i = 0; i < n; i++) {
		json_t *st = state_read(SBX_STATE_DIR, gone[i]);

		if (loader__get_sandbox(l, gone[i], &sb)) {
			json_decref(st);
			continue;
		}
		if (fn)
			fn(ctx, gone[i], st);
		forgot += !sandbox_forget(l, pin_dir, gone[i], &sb, false);	/* no task left to judge */
		json_decref(st);
	}
	/* Counters made again after an earlier removal, by any command (sandbox_forget). */
	loader__prune_sandbox_stats(l);
	return forgot;
}
