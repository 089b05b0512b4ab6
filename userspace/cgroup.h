/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cgroup.h — the cgroup v2 side of a sandbox: find, create, spawn into, kill, remove. */
#ifndef SBX_CGROUP_H
#define SBX_CGROUP_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#define SBX_CGROUP_ROOT_NAME "sbx-bpf"

enum cgroup_layout {
	CGROUP_NONE = 0,	/* no cgroup filesystem mounted */
	CGROUP_LEGACY,		/* v1 controllers only */
	CGROUP_HYBRID,		/* v1 controllers plus a controller-less v2 tree */
	CGROUP_UNIFIED,		/* pure v2 at /sys/fs/cgroup */
};

const char *cgroup_layout_name(enum cgroup_layout l);

/*
 * Classify the cgroup layout from the text of /proc/self/mountinfo; the
 * cgroup2 mount point, if any, goes to @v2_mount.
 */
enum cgroup_layout cgroup_parse_layout(const char *mountinfo, char *v2_mount, size_t sz);
/* The same for this process. */
enum cgroup_layout cgroup_layout(char *v2_mount, size_t sz);

struct sbx_cgroup {
	char path[PATH_MAX];
	int fd;			/* O_DIRECTORY of the cgroup, for CLONE_INTO_CGROUP */
	__u64 id;		/* the kernel's cgroup id, as BPF sees it */
	int root_fd;		/* O_DIRECTORY of <cgroup2>/sbx-bpf, every sandbox's parent */
};

/* Create <cgroup2>/sbx-bpf/@name. -EEXIST if it is there already. */
int cgroup_create(const char *name, struct sbx_cgroup *cg);
/* The id of the cgroup at @path (what bpf_get_current_cgroup_id returns). */
int cgroup_id_of(const char *path, __u64 *id);
/*
 * Start @argv inside @cg with clone3(CLONE_INTO_CGROUP): the child never
 * runs an instruction outside the cgroup. Returns the pid, or -errno (also
 * when exec fails in the child: the errno is passed back through a pipe).
 */
pid_t cgroup_spawn(const struct sbx_cgroup *cg, char *const argv[]);
/* SIGKILL every process in @cg (cgroup.kill, or one by one on old kernels). */
int cgroup_kill_all(const struct sbx_cgroup *cg);
/* Kill what is left, wait until empty, remove the directory. Accepts NULL. */
int cgroup_destroy(struct sbx_cgroup *cg);

#endif
