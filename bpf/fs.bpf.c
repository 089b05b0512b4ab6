// SPDX-License-Identifier: GPL-2.0
/*
 * fs.bpf.c — file-system enforcement for sandboxed cgroups.
 *
 * Hooks and what each denies (only for tasks in a cgroup listed in
 * `sandboxes`, or below one; every other task passes untouched):
 *
 *   lsm/file_open   opening a file for reading when the most specific rule
 *                   matching its path is a deny-read rule → -EACCES + event.
 *                   A path bpf_d_path cannot resolve (too long) is denied
 *                   with an event flagged SBX_EV_PATH_UNRESOLVED: fail closed.
 *
 * Paths are the file's place in the host's tree as bpf_d_path gives it from
 * the opened struct path, so the name the process used (symlinks, "..",
 * relative paths, /proc/self/fd/N) does not change the verdict.
 *
 * Matching is in fs_match.h: one hash lookup per path component, independent
 * of the number of rules. In audit mode (SBX_SANDBOX_AUDIT) the same event is
 * sent with verdict AUDIT and the open proceeds.
 *
 * Maps:
 *   sandboxes   cgroup id → policy id + flags; SBX_MAX_SANDBOXES entries.
 *   fs_rules    (policy, len, hash) → rule; SBX_MAX_FS_RULES entries.
 *   scratch     task storage: one struct sbx_event per sandboxed thread, the
 *               work buffer for d_path and the event. Task-local rather than
 *               per-CPU so a preempted program cannot have its buffer
 *               overwritten by another run of the same program on that CPU.
 *   events      ring buffer of struct sbx_event, variable length (path cut
 *               to its real size); a full buffer counts SBX_STAT_EVENTS_LOST,
 *               the verdict stands.
 *   stats       per-CPU counters (enum sbx_stat).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sbx_abi.h"

#define EACCES		13
#define FMODE_READ	0x1

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SBX_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct sbx_sandbox);
} sandboxes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SBX_MAX_FS_RULES);
	__type(key, struct sbx_fs_key);
	__type(value, struct sbx_fs_rule);
} fs_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_event);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SBX_RINGBUF_BYTES);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SBX_STAT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Cheap exit for every task on a host without sandboxes; kept by userspace. */
volatile __u32 nr_sandboxes;

#include "fs_match.h"

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

/*
 * The sandbox governing the current task: its cgroup or the nearest listed
 * ancestor. Walks from the root down so the outermost sandbox is found first;
 * nested policies (a child narrowing its parent) build on this later.
 */
static __always_inline struct sbx_sandbox *current_sandbox(__u64 *sandbox_cgid)
{
	struct sbx_sandbox *sb;
	__u64 id;
	int level;

	if (!nr_sandboxes)
		return NULL;
	for (level = 1; level < SBX_CGROUP_MAX_LEVELS; level++) {
		id = bpf_get_current_ancestor_cgroup_id(level);
		if (!id)
			return NULL;	/* past the task's own cgroup */
		sb = bpf_map_lookup_elem(&sandboxes, &id);
		if (sb) {
			*sandbox_cgid = id;
			return sb;
		}
	}
	return NULL;
}

/* Fill the task fields of @ev and send @ev (cut to its path) on the ring buffer. */
static __always_inline void emit(struct sbx_event *ev, __u64 sandbox_cgid,
				 __u32 op, __u32 verdict, __u32 rule_id, __u32 flags, int error)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	__u64 size;

	ev->ts_ns = bpf_ktime_get_ns();
	ev->cgroup_id = bpf_get_current_cgroup_id();
	ev->sandbox_cgroup_id = sandbox_cgid;
	ev->pid = (__u32)id;
	ev->tgid = id >> 32;
	ev->ppid = BPF_CORE_READ(task, real_parent, tgid);
	ev->uid = (__u32)bpf_get_current_uid_gid();
	ev->op = op;
	ev->verdict = verdict;
	ev->rule_id = rule_id;
	ev->flags = flags;
	ev->error = error;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));

	size = offsetof(struct sbx_event, path) + (ev->path_len & (SBX_PATH_MAX - 1)) + 1;
	if (size > sizeof(*ev))
		size = sizeof(*ev);
	if (bpf_ringbuf_output(&events, ev, size, 0))
		stat_inc(SBX_STAT_EVENTS_LOST);
}

SEC("lsm/file_open")
int BPF_PROG(fs_file_open, struct file *file, int ret)
{
	struct task_struct *task;
	struct sbx_sandbox *sb;
	struct sbx_event *ev;
	__u64 sandbox_cgid = 0;
	__u32 rule_id = SBX_RULE_NONE, flags = 0;
	long n;
	int deny;

	if (ret)
		return ret;
	if (!(file->f_mode & FMODE_READ))
		return 0;
	sb = current_sandbox(&sandbox_cgid);
	if (!sb)
		return 0;

	task = bpf_get_current_task_btf();
	ev = bpf_task_storage_get(&scratch, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ev) {
		/* No memory to judge with: fail closed; the lost event is counted. */
		stat_inc(SBX_STAT_DENIED);
		stat_inc(SBX_STAT_EVENTS_LOST);
		return -EACCES;
	}

	n = bpf_d_path((struct path *)&file->f_path, ev->path, SBX_PATH_MAX);
	if (n <= 0) {
		/* Too long (or unresolvable): deny, and say so. */
		ev->path_len = 0;
		ev->path[0] = '\0';
		flags |= SBX_EV_PATH_UNRESOLVED;
		deny = 1;
	} else {
		ev->path_len = n - 1;
		deny = fs_match_read(ev->path, ev->path_len, sb->policy_id, &rule_id);
	}
	if (!deny)
		return 0;

	stat_inc(SBX_STAT_DENIED);
	if (sb->flags & SBX_SANDBOX_AUDIT) {
		emit(ev, sandbox_cgid, SBX_OP_READ, SBX_VERDICT_AUDIT, rule_id, flags, 0);
		return 0;
	}
	emit(ev, sandbox_cgid, SBX_OP_READ, SBX_VERDICT_DENY, rule_id, flags, -EACCES);
	return -EACCES;
}
