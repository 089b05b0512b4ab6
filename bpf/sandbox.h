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

/* The sandboxes a task is under, outermost first (current_chain). */
struct sbx_chain {
	__u64 cgid[SBX_NEST_MAX];
	__u32 n;
	__u32 overflow;
};

struct sbx_scratch {
	struct sbx_event ev;
	struct walk_buf walk;
	struct sbx_chain chain;	/* here, not on the stack: the matcher's calls need that room */
	/* The chain's policies, for walks that judge by all of them at once (fs.bpf.c sb_walk). */
	__u32 nest_policy[SBX_NEST_MAX], nest_mask[SBX_NEST_MAX], nest_audit[SBX_NEST_MAX];
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
/* Set by userspace once a sandbox lies below another: every level is judged. */
SBX_SHARED volatile __u32 nest_set;

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
 * The sandboxes governing the current task: every listed cgroup on the path
 * from the root to the task's own, outermost first. Each must allow an
 * operation (a policy below another can only narrow it). More listed levels
 * than SBX_NEST_MAX cannot all be judged: such a task is denied everything
 * (userspace refuses to attach that deep, so this is a fail-safe).
 */
static __always_inline __u32 current_chain(struct sbx_chain *c)
{
	__u64 id;
	int level;

	c->n = 0;
	c->overflow = 0;
	if (!nr_sandboxes)
		return 0;
	/* 1: under the scope; 0: not; < 0: cannot tell, so keep looking. */
	if (scope_set && bpf_current_task_under_cgroup(&scope, 0) == 0)
		return 0;
	/* Without nesting, most judged tasks sit in the sandbox cgroup itself: one lookup. */
	id = bpf_get_current_cgroup_id();
	if (!nest_set && bpf_map_lookup_elem(&sandboxes, &id)) {
		c->cgid[0] = id;
		c->n = 1;
		return 1;
	}
	for (level = 1; level < SBX_CGROUP_MAX_LEVELS; level++) {
		id = bpf_get_current_ancestor_cgroup_id(level);
		if (!id)
			break;	/* past the task's own cgroup */
		if (!bpf_map_lookup_elem(&sandboxes, &id))
			continue;
		if (c->n >= SBX_NEST_MAX) {
			c->overflow = 1;
			break;
		}
		c->cgid[c->n & (SBX_NEST_MAX - 1)] = id;
		c->n++;
	}
	return c->n;
}

/* Whether the task is sandboxed at all, without storing the chain. */
static __always_inline bool current_chain_n(void)
{
	__u64 id;
	int level;

	if (!nr_sandboxes)
		return false;
	if (scope_set && bpf_current_task_under_cgroup(&scope, 0) == 0)
		return false;
	id = bpf_get_current_cgroup_id();
	if (bpf_map_lookup_elem(&sandboxes, &id))
		return true;
	for (level = 1; level < SBX_CGROUP_MAX_LEVELS; level++) {
		id = bpf_get_current_ancestor_cgroup_id(level);
		if (!id)
			return false;
		if (bpf_map_lookup_elem(&sandboxes, &id))
			return true;
	}
	return false;
}

/* Everything one hook invocation works with. */
struct judge {
	struct sbx_sandbox *sb;		/* the sandbox being judged for (one of s->chain) */
	__u64 sandbox_cgid;
	struct sbx_scratch *s;
};

/* Make the @i-th sandbox of the chain the one judged for. False if it went meanwhile. */
static __always_inline bool judge_select(struct judge *j, __u32 i)
{
	__u64 id = j->s->chain.cgid[i & (SBX_NEST_MAX - 1)];

	j->sb = bpf_map_lookup_elem(&sandboxes, &id);
	j->sandbox_cgid = id;
	return j->sb != NULL;
}

/* 1: sandboxed, go on judging; 0: not sandboxed; -EACCES: cannot judge (no memory). */
static __always_inline int judge_begin(struct judge *j)
{
	/* Scratch memory only for sandboxed tasks: look before creating it. */
	if (!current_chain_n())
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
	/* The chain goes straight to scratch memory: the matcher's calls need the stack. */
	current_chain(&j->s->chain);
	if (j->s->chain.overflow) {
		stat_inc(SBX_STAT_DENIED);
		return -EACCES;
	}
	return judge_select(j, 0) ? 1 : 0;
}

/* For each sandbox of @j's chain, outermost first: the first denial stops it. */
#define for_each_sandbox(j, i)						\
	for (i = 0; i < SBX_NEST_MAX; i++)				\
		if (i < (j)->s->chain.n && judge_select((j), i))

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
