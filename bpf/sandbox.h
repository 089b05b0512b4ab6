/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sandbox.h — what every enforcement program shares: the sandboxes map and
 * the lookup of the sandbox governing the current task, the per-task
 * scratch buffers, the events ring buffer, the stats counters, and how a
 * denial is reported.
 *
 * The programs are built from several .bpf.c files linked into one object
 * (bpftool gen object), so the maps exist once: fs.bpf.c defines them
 * (SBX_DEFINE_MAPS), the other files see extern declarations.
 */
#ifndef SBX_SANDBOX_H
#define SBX_SANDBOX_H

#ifdef SBX_DEFINE_MAPS
#define SBX_SHARED
#else
#define SBX_SHARED extern
#endif

#define EACCES		13
#define EINVAL		22

/*
 * Paths are built backwards into b[start, SBX_PATH_MAX) and matched in place
 * (the matcher reads SBX_PATH_MAX bytes from b + start, hence the size); they
 * are copied into the event only when one is sent.
 */
struct walk_buf {
	__u32 start;
	__u32 len;
	char b[2 * SBX_PATH_MAX + SBX_NAME_MAX + 1];
};

struct sbx_scratch {
	struct sbx_event ev;
	struct walk_buf walk;
};

SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SBX_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct sbx_sandbox);
} sandboxes SEC(".maps");

SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SBX_MAX_FS_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_fs_key);
	__type(value, struct sbx_fs_rule);
} fs_rules SEC(".maps");

SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_scratch);
} scratch SEC(".maps");

SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SBX_RINGBUF_BYTES);
} events SEC(".maps");

SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SBX_STAT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Cheap exit for every task on a host without sandboxes; kept by userspace. */
SBX_SHARED volatile __u32 nr_sandboxes;
/*
 * Where sandboxes live: userspace puts the cgroup every sandbox is beneath
 * in `scope` and sets scope_set. A task outside it leaves after one helper
 * call instead of a lookup per ancestor level; the helper compares against
 * the cgroup itself, so cgroup namespaces cannot shift it.
 */
SBX_SHARED volatile __u32 scope_set;
/* The last policy id handed out to a sandbox of the pinned set (userspace, atomically). */
SBX_SHARED volatile __u32 policy_seq;

SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} scope SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

/*
 * The sandbox governing the current task: its own cgroup, else the first
 * listed ancestor from the root down. Nested policies (a child narrowing its
 * parent, both applying) come with the host agent.
 */
static __always_inline struct sbx_sandbox *current_sandbox(__u64 *sandbox_cgid)
{
	struct sbx_sandbox *sb;
	__u64 id;
	int level;

	if (!nr_sandboxes)
		return NULL;
	/* 1: under the scope; 0: not; < 0: cannot tell, so keep looking. */
	if (scope_set && bpf_current_task_under_cgroup(&scope, 0) == 0)
		return NULL;
	/* Most judged tasks sit in the sandbox cgroup itself: one lookup. */
	id = bpf_get_current_cgroup_id();
	sb = bpf_map_lookup_elem(&sandboxes, &id);
	if (sb) {
		*sandbox_cgid = id;
		return sb;
	}
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

/* Everything one hook invocation works with. */
struct judge {
	struct sbx_sandbox *sb;
	__u64 sandbox_cgid;
	struct sbx_scratch *s;
};

/* 1: sandboxed, go on judging; 0: not sandboxed; -EACCES: cannot judge (no memory). */
static __always_inline int judge_begin(struct judge *j)
{
	j->sb = current_sandbox(&j->sandbox_cgid);
	if (!j->sb)
		return 0;
	j->s = bpf_task_storage_get(&scratch, bpf_get_current_task_btf(), NULL,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!j->s) {
		/* No memory to judge with: fail closed; the lost event is counted. */
		stat_inc(SBX_STAT_DENIED);
		stat_inc(SBX_STAT_EVENTS_LOST);
		return -EACCES;
	}
	j->s->ev.flags = 0;
	j->s->ev.path_len = 0;
	j->s->ev.path2_len = 0;
	j->s->ev.domain_id = 0;
	j->s->ev.family = 0;
	j->s->ev.path[0] = '\0';
	return 1;
}

/* Fill the task fields of the event and send it, cut to its paths' real size. */
static __always_inline void emit(struct judge *j, __u32 op, __u32 verdict, __u32 rule_id, int error)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	struct sbx_event *ev = &j->s->ev;
	__u64 id = bpf_get_current_pid_tgid();
	__u64 size;

	ev->ts_ns = bpf_ktime_get_ns();
	ev->cgroup_id = bpf_get_current_cgroup_id();
	ev->sandbox_cgroup_id = j->sandbox_cgid;
	ev->pid = (__u32)id;
	ev->tgid = id >> 32;
	ev->ppid = BPF_CORE_READ(task, real_parent, tgid);
	ev->uid = (__u32)bpf_get_current_uid_gid();
	ev->op = op;
	ev->verdict = verdict;
	ev->rule_id = rule_id;
	ev->error = error;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));

	if (ev->flags & SBX_EV_PATH2)
		size = offsetof(struct sbx_event, path2) + (ev->path2_len & (SBX_PATH_MAX - 1)) + 1;
	else
		size = offsetof(struct sbx_event, path) + (ev->path_len & (SBX_PATH_MAX - 1)) + 1;
	if (size > sizeof(*ev))
		size = sizeof(*ev);
	if (bpf_ringbuf_output(&events, ev, size, 0))
		stat_inc(SBX_STAT_EVENTS_LOST);
}

/* Report a denial; returns what the hook returns (0 in audit mode). */
static __always_inline int deny(struct judge *j, __u32 op, __u32 rule_id)
{
	stat_inc(SBX_STAT_DENIED);
	if (j->sb->flags & SBX_SANDBOX_AUDIT) {
		emit(j, op, SBX_VERDICT_AUDIT, rule_id, 0);
		return 0;
	}
	emit(j, op, SBX_VERDICT_DENY, rule_id, -EACCES);
	return -EACCES;
}


static __always_inline struct mount *real_mount(struct vfsmount *mnt)
{
	return (struct mount *)((void *)mnt - bpf_core_field_offset(struct mount, mnt));
}

/*
 * A kernel pointer as a plain number: global functions take no kernel
 * pointers before 6.8, and the walk reads everything through CO-RE anyway.
 */
static __always_inline __u64 ptr_value(const void *p)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

#endif /* SBX_SANDBOX_H */
