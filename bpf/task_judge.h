/* SPDX-License-Identifier: GPL-2.0 */
/*
 * task_judge.h — whether a sandboxed task may act on another task (signal,
 * ptrace, scheduling, limits, page migration): the target must run in the
 * cgroup of every sandbox of the caller's chain, or below it.
 *
 * sbx_judge_task is verified once, in the extension object (shared.bpf.c,
 * SBX_EXTENSION), and put in place of a stand-in in the eight task
 * programs that call it (task.bpf.c defines the stand-in, which refuses).
 * It takes the caller's work slot, whose chain judge_begin filled, and the
 * target as a number: global functions take no kernel pointers before 6.8,
 * and every read of it here is a probe read anyway.
 */
#ifndef SBX_TASK_JUDGE_H
#define SBX_TASK_JUDGE_H

#ifdef SBX_EXTENSION
/* What task_level compares: a task's cgroup, read as a number (probe reads only). */
struct under_walk {
	struct cgroup *cg;
	__u64 cgid;
	__u32 found;
};

/*
 * bpf_loop callback: whether the @i-th ancestor (0: the root) of the
 * target's cgroup is the sandbox's. As a loop inside each step of the
 * chain loop, the 32 levels were verified four times in each of the eight
 * programs that judge a target task; a callback is verified once.
 */
static long task_level(__u32 i, void *ctx)
{
	struct under_walk *w = ctx;
	struct cgroup *cg = w->cg;

	if (BPF_CORE_READ(cg, ancestors[i], kn, id) != w->cgid)
		return 0;
	w->found = 1;
	return 1;
}

/* Whether cgroup @cgid is @t's cgroup (v2) or one of its ancestors. */
static __always_inline bool task_under(struct task_struct *t, __u64 cgid)
{
	/* A local, not w.cg, in the reads: BPF_CORE_READ would relocate under_walk's field too. */
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	struct under_walk w = { .cg = cg, .cgid = cgid };
	int level;

	if (!cg)
		return false;
	level = BPF_CORE_READ(cg, level);
	if (level < 0)
		return false;
	/* As deep as a sandbox can be (attach refuses deeper): its id is among these. */
	if (level >= SBX_CGROUP_MAX_LEVELS)
		level = SBX_CGROUP_MAX_LEVELS - 1;
	bpf_loop(level + 1, task_level, &w, 0);
	return w.found;
}

/* The event fields about the task acted on: its process id and name. */
static __always_inline void note_target(struct judge *j, struct task_struct *t)
{
	struct sbx_event *ev = &j->s->ev;

	ev->flags |= SBX_EV_TARGET;
	ev->target = BPF_CORE_READ(t, tgid);
	bpf_probe_read_kernel_str(ev->path, SBX_COMM_LEN, &t->comm);
	ev->path_len = 0;
	for (int i = 0; i < SBX_COMM_LEN - 1 && ev->path[i]; i++)
		ev->path_len++;
}

/*
 * @op on task @target: 0 when it runs under every sandbox of @s's chain,
 * else -EPERM and an event (none when @quiet).
 */
SEC("freplace/sbx_judge_task")
int sbx_judge_task(struct sbx_scratch *s, __u64 target, __u32 op, __u32 arg, __u32 quiet)
{
	struct task_struct *t = (struct task_struct *)target;
	struct judge j = { .s = s };
	__u32 i;
	int res;

	if (!s)
		return -EPERM;	/* never: the caller judges with a slot */
	for_each_sandbox(&j, i) {
		if (task_under(t, j.sandbox_cgid))
			continue;
		if (quiet) {	/* not counted either: ps alone makes hundreds */
			if (j.sb->flags & SBX_SANDBOX_AUDIT)
				continue;	/* an enforcing sandbox inside it still refuses */
			return -EPERM;
		}
		note_target(&j, t);
		j.s->ev.arg = arg;
		res = deny_err(&j, op, SBX_RULE_TASK, -EPERM);
		if (res)
			return res;
	}
	return 0;
}
#else
/*
 * The stand-in the loader replaces with the extension before any program
 * is attached (loader.c shared_load): until then, and if it never is, a
 * sandboxed task may act on no other task (counted as denied, no record).
 * Opaque to the compiler, which must not assume what it returns.
 */
__noinline int sbx_judge_task(struct sbx_scratch *s, __u64 target, __u32 op, __u32 arg, __u32 quiet)
{
	int r = -EPERM;

	asm volatile("" : "+r"(r) : "r"(s), "r"(target), "r"(op), "r"(arg), "r"(quiet) : "memory");
	stat_inc(SBX_STAT_DENIED);
	return r;
}
#endif /* SBX_EXTENSION */

#endif /* SBX_TASK_JUDGE_H */
