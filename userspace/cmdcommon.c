// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmdcommon.c — what several command handlers need alike (cli.h): the
 * pinned set, the records' lock, a cgroup named on the command line, the
 * clock grants expire by, and judging a sandbox's descriptor uses. Top
 * level: these say what went wrong.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cgroup.h"
#include "cgstat.h"
#include "cli.h"
#include "loader.h"
#include "sbxstate.h"

struct sbx_loader *cli_open_pinned(const char *dir)
{
	struct sbx_loader *l;

	dir = dir ?: SBX_PIN_DIR;
	l = loader__open_pinned(dir);
	if (!l)
		p_err("no usable programs pinned at %s: %s (start 'sbx-bpf daemon')", dir,
		      errno == ESTALE ? "they are from another build" : strerror(errno));
	return l;
}

int cli_lock_records(void)
{
	int fd = state_lock(SBX_STATE_DIR);

	if (fd < 0)
		p_err("cannot lock %s: %s", SBX_STATE_DIR, strerror(-fd));
	return fd;
}

__u64 cli_cgroup_target(const char *arg, char *path, size_t sz, int *level)
{
	struct cgstat_target t = {};
	__u64 id = 0;
	int err;

	err = cgstat_resolve(arg, &t);
	if (!err)
		err = cgroup_id_of(t.path, &id);
	if (err) {
		if (err == -EXDEV)
			p_err("cannot find cgroup '%s': not in the cgroup v2 hierarchy (%s)", arg, t.v2);
		else
			p_err("cannot find cgroup '%s': %s", arg,
			      err == -EINVAL ? "not a sandbox name (no '/', not empty, not '.' or '..')" :
			      err == -ENOTDIR ? "not a cgroup directory" :
			      err == -ENOTSUP ? "no cgroup v2 file system is mounted (see 'sbx-bpf doctor')" :
			      strerror(-err));
		return 0;
	}
	snprintf(path, sz, "%s", t.path);
	if (level)
		*level = t.level;
	return id;
}

__u64 cli_cgroup_id(const char *arg, char *path, size_t sz)
{
	return cli_cgroup_target(arg, path, sz, NULL);
}

__u64 cli_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

int cli_judge_uses(struct sbx_loader *l, struct sbx_sandbox *sb)
{
	int err = loader__fd_judging_on(l);

	/* -ENOENT: the set lacks the program, a gap its loader had accepted by name. */
	if (err && err != -ENOENT) {
		p_err("cannot judge reads and writes through descriptors (lsm/file_permission): %s",
		      err == -ENOPKG ? "not loaded (no descriptor to judge was found before loading)" :
		      strerror(-err));
		return -1;
	}
	sb->flags |= SBX_SANDBOX_FD_JUDGE;
	return 0;
}
