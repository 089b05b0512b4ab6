/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cgroup.h — the cgroup v2 side of a sandbox: find, create, spawn into, kill, remove. */
#ifndef SBX_CGROUP_H
#define SBX_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "sbx_abi.h"

#define SBX_CGROUP_ROOT_NAME "sbx-bpf"

/* Cgroup ids, nearest first (cgroup_ancestor_ids, cgroup_self_ids). */
struct cgroup_ids {
	__u64 id[SBX_CGROUP_MAX_LEVELS];
	int n;
};

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
/*
 * Unified without mountinfo: @f_type is statfs("/sys/fs/cgroup")'s, and
 * @self_cgroup the @n bytes read of /proc/self/cgroup (n < 0: an error),
 * which must be one "0::" line, whole: each v1 hierarchy adds a line.
 */
bool cgroup_default_unified(long f_type, const char *self_cgroup, int n);
/* The same for this process. */
enum cgroup_layout cgroup_layout(char *v2_mount, size_t sz);

struct sbx_cgroup {
	char path[PATH_MAX];
	int fd;			/* O_DIRECTORY of the cgroup, for CLONE_INTO_CGROUP */
	__u64 id;		/* the kernel's cgroup id, as BPF sees it */
	int root_fd;		/* O_DIRECTORY of <cgroup2>/sbx-bpf, every sandbox's parent */
	__u64 root_id;		/* its cgroup id; 0: unknown */
	bool delegated;		/* made under $SBX_CGROUP_ROOT, not <cgroup2>/sbx-bpf */
};

/*
 * Where sandboxes are created: $SBX_CGROUP_ROOT when set (a cgroup delegated
 * to sbx-bpf, e.g. by a systemd unit with Delegate=yes: it must exist and
 * lie under the cgroup2 mount @v2; sbx-bpf touches nothing above it), else
 * <v2>/sbx-bpf. *@delegated tells which. 0, -EINVAL or -EXDEV.
 */
int cgroup_sbx_root(const char *v2, char *out, size_t sz, bool *delegated);

/*
 * Open the sandboxes' parent (cgroup_sbx_root), made first when it is ours
 * and missing: its path into @out, its id into *@id. An O_DIRECTORY fd or
 * -errno (-ENOTSUP without a unified cgroup2 hierarchy).
 */
int cgroup_sbx_root_open(char *out, size_t sz, __u64 *id);

/* Controllers, as bits in the order of cgroup_controller_name(). */
#define CGROUP_CTRL_CPU		(1u << 0)
#define CGROUP_CTRL_MEMORY	(1u << 1)
#define CGROUP_CTRL_IO		(1u << 2)
#define CGROUP_CTRL_PIDS	(1u << 3)
#define CGROUP_CTRL__COUNT	4

const char *cgroup_controller_name(unsigned bit_index);	/* "cpu", "memory", "io", "pids" */
/* Controllers the cgroup2 root offers (cgroup.controllers), as CGROUP_CTRL_* bits. */
int cgroup_available_controllers(unsigned *mask);
/* Controllers the cgroup directory @dir has (its cgroup.controllers: what its parent enables for it). */
int cgroup_controllers_of(const char *dir, unsigned *mask);
/* "+cpu +memory" (@sign '+') or "-cpu -memory" for the bits of @ctrl. */
void cgroup_controller_list(unsigned ctrl, char sign, char *buf, size_t sz);
/*
 * Enable (or disable) @ctrl for the children of the cgroup directory @dir
 * in one write to its cgroup.subtree_control: all or none. 0 or -errno
 * (-EBUSY: @dir holds processes, cgroup v2's no-internal-process rule).
 */
int cgroup_subtree_control(const char *dir, unsigned ctrl, bool enable);

/*
 * Create <cgroup2>/sbx-bpf/@name with the controllers @ctrl enabled for it:
 * "+ctrl" goes into cgroup.subtree_control top-down, from the cgroup2 root
 * to sbx-bpf's own cgroup. -EEXIST if the sandbox is there already;
 * -ENOTSUP without a unified cgroup2 hierarchy; -EMLINK when the sandbox
 * would lie deeper than SBX_CGROUP_DEEPEST (SBX_CGROUP_ROOT that deep). On error nothing of the
 * sandbox is left (sbx-bpf's parent cgroup may stay: it is shared).
 */
int cgroup_create(const char *name, unsigned ctrl, struct sbx_cgroup *cg);
/* Write @value to the control file @file of @cg. 0 or -errno. */
int cgroup_write(const struct sbx_cgroup *cg, const char *file, const char *value);
/* Read control file @file of @cg into @buf. Bytes read or -errno. */
int cgroup_read(const struct sbx_cgroup *cg, const char *file, char *buf, size_t sz);

/*
 * How many levels below the cgroup2 mount @v2 the cgroup at @path lies (0:
 * the mount itself), both real paths; -EXDEV when @path is not below @v2.
 * The kernel's level when @v2 shows the whole hierarchy, as it does to a
 * host's sbx-bpf (not from inside a cgroup namespace).
 */
int cgroup_level(const char *v2, const char *path);
/* The id of the cgroup at @path (what bpf_get_current_cgroup_id returns). */
int cgroup_id_of(const char *path, __u64 *id);
/* The cgroups above the one at @path, up to the cgroup2 mount's root, into @out. 0 or -errno. */
int cgroup_ancestor_ids(const char *path, struct cgroup_ids *out);
/* This process's cgroup, then those above it, into @out. 0 or -errno. */
int cgroup_self_ids(struct cgroup_ids *out);
/*
 * Whether the cgroup with id @id exists, asked of the cgroup2 file system
 * that @mount_fd is open on by the id alone: 1, 0 when it is gone (ids are
 * never reused), or -errno when that cannot be told (not root, no such
 * file system). No path, no record to read.
 */
int cgroup_id_alive(int mount_fd, __u64 id);
/*
 * Start @argv inside @cg with clone3(CLONE_INTO_CGROUP): the child never
 * runs an instruction outside the cgroup. Returns the pid, or -errno (also
 * when exec fails in the child: its errno, passed back in shared memory).
 */
pid_t cgroup_spawn(const struct sbx_cgroup *cg, char *const argv[]);
/* SIGKILL every process in @cg (cgroup.kill, or one by one on old kernels). */
int cgroup_kill_all(const struct sbx_cgroup *cg);
/* Kill what is left, wait until empty, remove the directory. Accepts NULL. */
int cgroup_destroy(struct sbx_cgroup *cg);

#endif
