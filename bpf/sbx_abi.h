/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sbx_abi.h — the one definition of everything the BPF programs and the
 * userspace loader exchange: map keys and values, event records, flag bits.
 *
 * Included by the bpf/ programs (after vmlinux.h) and by userspace (after
 * <linux/types.h>), so there is never a second copy to keep in sync.
 * Plain __u32/__u64 and fixed-size arrays only: the layout must be identical
 * for clang --target=bpf and the host compiler.
 */
#ifndef SBX_ABI_H
#define SBX_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SBX_ABI_VERSION		1

#define SBX_PATH_MAX		4096	/* bytes, with the NUL; a power of two (used as a mask) */
#define SBX_COMM_LEN		16

/* Map sizes. Hash maps preallocate, so these are memory, not just limits. */
#define SBX_MAX_SANDBOXES	4096	/* sandboxed cgroups at once */
#define SBX_MAX_FS_RULES	65536	/* path rules over all policies */
#define SBX_RINGBUF_BYTES	(4u << 20)

/*
 * How many cgroup ancestor levels are searched for a sandbox. A process in a
 * cgroup nested deeper than this below the hierarchy root is judged by the
 * sandboxes found in the levels that were searched.
 */
#define SBX_CGROUP_MAX_LEVELS	32

/* sandboxes: cgroup id → struct sbx_sandbox */
#define SBX_SANDBOX_AUDIT	(1u << 0)	/* report would-be denials, deny nothing */

struct sbx_sandbox {
	__u32 policy_id;	/* selects this sandbox's rules in fs_rules */
	__u32 flags;		/* SBX_SANDBOX_* */
};

/*
 * fs_rules: one entry per rule path. A rule path is stored as the hash of its
 * bytes (normalised, no trailing slash; "/" is the empty string) plus its
 * length; the kernel side hashes each '/'-bounded prefix of the path being
 * opened and looks each one up, so the cost is one lookup per path component
 * whatever the number of rules.
 */
struct sbx_fs_key {
	__u32 policy_id;
	__u32 len;		/* bytes of the rule path */
	__u64 hash;		/* sbx_hash over those bytes */
};

#define SBX_FS_DENY_READ	(1u << 0)
#define SBX_FS_ALLOW_READ	(1u << 1)

struct sbx_fs_rule {
	__u32 rule_id;		/* index into the policy, for events */
	__u32 flags;		/* SBX_FS_* */
};

/* Operations named in events. */
enum sbx_op {
	SBX_OP_NONE = 0,
	SBX_OP_READ = 1,	/* open for reading */
	SBX_OP__MAX,
};

enum sbx_verdict {
	SBX_VERDICT_DENY = 1,
	SBX_VERDICT_AUDIT = 2,	/* would have been denied; audit mode let it through */
};

#define SBX_RULE_NONE		0xffffffffu	/* no rule: a fail-closed denial */

/* Event flags */
#define SBX_EV_PATH_UNRESOLVED	(1u << 0)	/* the path could not be resolved (too long…): denied */

/* One record on the events ring buffer per denial or audit hit. */
struct sbx_event {
	__u64 ts_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 cgroup_id;	/* the cgroup the task runs in */
	__u64 sandbox_cgroup_id; /* the sandboxed cgroup whose policy decided */
	__u32 pid;		/* thread id */
	__u32 tgid;		/* process id */
	__u32 ppid;
	__u32 uid;
	__u32 op;		/* enum sbx_op */
	__u32 verdict;		/* enum sbx_verdict */
	__u32 rule_id;		/* SBX_RULE_NONE when no rule decided */
	__u32 flags;		/* SBX_EV_* */
	__s32 error;		/* errno returned to the task (negative), 0 in audit */
	__u32 path_len;		/* bytes of path, without the NUL */
	char comm[SBX_COMM_LEN];
	char path[SBX_PATH_MAX];
};

/* stats: per-CPU counters, index → __u64 */
enum sbx_stat {
	SBX_STAT_EVENTS_LOST = 0,	/* ring buffer full: event dropped (the verdict stood) */
	SBX_STAT_DENIED,
	SBX_STAT__MAX,
};

/*
 * FNV-1a, 64 bit: the path hash both sides must compute identically.
 * Chosen because it works byte by byte, which is how the BPF side walks a path.
 */
#define SBX_HASH_INIT		0xcbf29ce484222325ULL
#define SBX_HASH_PRIME		0x100000001b3ULL

static inline __u64 sbx_hash_byte(__u64 h, unsigned char c)
{
	return (h ^ c) * SBX_HASH_PRIME;
}

#endif /* SBX_ABI_H */
