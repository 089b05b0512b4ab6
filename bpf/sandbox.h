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

#include "fs_verdict.h"

#ifdef SBX_DEFINE_MAPS
#define SBX_SHARED
#else
#define SBX_SHARED extern
#endif

/*
 * Set by the loader before loading when the kernel has bpf_rdonly_cast
 * (6.2+): the walk (resolve.h) then reads dentries and mounts with plain
 * loads (one BPF instruction each; the JIT adds an address check and an
 * exception-table entry, so a load that faults reads 0) instead of one
 * bpf_probe_read_kernel call per step (about 100 instructions under
 * icount). A constant to the verifier, so each kernel verifies one of the
 * two ways only, and 6.1 never reaches the kfunc call (there the loader
 * leaves the marked call as it is: the verifier allows it in dead code).
 */
SBX_SHARED const volatile bool plain_loads;
/* bpf_rdonly_cast, through the call the loader patches (sbx_abi.h SBX_CALL_RDONLY_CAST). */
static void *(*const sbx_rdonly_cast)(const void *obj, __u32 btf_id) = (void *)SBX_CALL_RDONLY_CAST;
/* A constant to the verifier too (frozen .rodata), as bpf_rdonly_cast needs its ID to be. */
SBX_SHARED const volatile struct sbx_kernel_ids kernel_ids;

/* @p (a number or any pointer) as a read-only, untrusted pointer to struct @tag: the verifier makes it a move. */
#define AS_KERNEL(tag, p) ((struct tag *)sbx_rdonly_cast((const void *)(p), kernel_ids.tag))

/*
 * @p, trusted (a hook's argument, the current task), as a pointer to read
 * its fields through. For every load from a trusted pointer, at every
 * state it checks the load in, the verifier (6.4+) looks up four type names
 * ("file__safe_trusted" and the like); 6.12 by a linear scan of the
 * kernel's BTF, 1.7 ms each under icount: 46 % of its verifying. Through
 * an untrusted copy (bpf_rdonly_cast, which it makes a move) it looks up
 * none. The loads are the same plain loads, and nothing read this way goes
 * to a helper or a kfunc that wants it trusted. 6.1 has neither the
 * lookups nor the kfunc. @tag must be a field of struct sbx_kernel_ids.
 */
#define UNTRUSTED(tag, p) (plain_loads ? AS_KERNEL(tag, p) : (struct tag *)(p))

/*
 * SBX_LSM(hook, name, args...): the program @name on LSM hook @hook, taking
 * @args exactly as the kernel declares the hook.
 *
 * Prototypes differ between kernels (a hook gains or loses an argument, even
 * in a stable point release), and a program that reads a slot the running
 * kernel's hook does not have is refused by the verifier, or worse, reads
 * the wrong value. So the argument list is also recorded in the object's
 * BTF, as the type of the variable sbx_hook__<name> in section .sbx.hooks
 * (libbpf skips that section: nothing of it is loaded), and the loader keeps,
 * of the programs on one hook, the variant whose list matches the running
 * kernel's bpf_lsm_<hook> (userspace/hooks.c). A hook without a match is
 * named, never loaded with a guess.
 *
 * No trailing `int ret`: a BPF-LSM program runs only while every program
 * before it on the hook returned 0 (the trampoline stops at the first
 * non-zero return), so it is always 0; and the slot past the last argument
 * is exactly what moves when a hook gains one.
 */
#define SBX_LSM(hook, name, args...)						\
	__attribute__((used, section(".sbx.hooks")))				\
	static int (*const sbx_hook__##name)(args);				\
	static __always_inline int ____##name(unsigned long long *ctx, ##args);	\
	SEC("lsm/" #hook) int name(unsigned long long *ctx)			\
	{									\
		_Pragma("GCC diagnostic push")					\
		_Pragma("GCC diagnostic ignored \"-Wint-conversion\"")		\
		return lsm_verdict(____##name(___bpf_ctx_cast(args)));		\
		_Pragma("GCC diagnostic pop")					\
	}									\
	static __always_inline int ____##name(unsigned long long *ctx, ##args)

/*
 * What every SBX_LSM program returns: 0, or an errno in [-4095, -1] that
 * the verifier can see is one. 6.12.117 and 7.x refuse a program whose
 * return value they cannot bound to that range, and the compiler writes
 * `res ? -EPERM : 0` as a negation, which 6.12's verifier does not follow.
 * The barriers keep the compiler from folding the two checks (or dropping
 * them as always true); a value out of range, which none of ours is,
 * denies.
 */
static __always_inline int lsm_verdict(int verdict)
{
	long ret = verdict;	/* compared and returned in one 64-bit register, as the verifier sees it */

	asm volatile("" : "+r"(ret));
	if (ret > 0)
		ret = -1;
	asm volatile("" : "+r"(ret));
	if (ret < -4095)
		ret = -1;
	return ret;
}

#define EPERM		1
#define EACCES		13
#define EINVAL		22

/*
 * What a judging call reads of a sandbox's entry, copied with the lookup
 * that found it: an entry replaced or deleted while the call runs may be
 * reused at once for another cgroup (the kernel hands a freed element out
 * again before a grace period, preallocated or not), so the
 * call keeps judging by the policy in force when it began. Policy ids are
 * never reused, and attach purges a replaced policy's rules only after a
 * grace period (loader__wait_judging; detach likewise).
 */
struct sbx_sb_copy {
	__u32 policy_id;
	__u32 flags;
	__u32 any_depth_mask;
};
/* Read at a variable index on the stack (net.bpf.c inet_pass), which the verifier wants aligned. */
_Static_assert(sizeof(struct sbx_sb_copy) == 12, "sbx_sb_copy: 4-byte fields only");

/* The sandboxes a task is under, outermost first (current_chain). */
struct sbx_chain {
	__u64 cgid[SBX_NEST_MAX];
	struct sbx_sb_copy sb[SBX_NEST_MAX];
	__u32 n;
	__u32 overflow;
	/*
	 * The outermost enforcing sandbox (0 when all audit): the one whose
	 * verdict stands where no rule decides (a path that cannot be
	 * resolved, bpf(), a mount), so that an auditing sandbox over an
	 * enforcing one does not let such a call through (judge_begin).
	 */
	__u32 strict;
	__u32 pad;
};

static __always_inline void sb_copy(struct sbx_sb_copy *c, const struct sbx_sandbox *sb)
{
	c->policy_id = sb->policy_id;
	c->flags = sb->flags;
	c->any_depth_mask = sb->any_depth_mask;
}

/*
 * Make @c the chain of one sandbox, @cgid's, as most judged tasks have
 * (no nesting): where that sandbox's copy goes, for the caller to fill.
 */
static __always_inline struct sbx_sb_copy *chain_one(struct sbx_chain *c, __u64 cgid)
{
	c->cgid[0] = cgid;
	c->n = 1;
	c->overflow = 0;
	c->strict = 0;
	return &c->sb[0];
}

/* One allowed use of a descriptor, remembered for a short while (fs.bpf.c fd_cached). */
#define SBX_FD_CACHE	4	/* files a task remembers at once (all are looked at) */
struct sbx_fd_seen {
	__u64 file, dentry, mnt, sandbox, until;
	__u32 need;
	__u32 pad;
};

/*
 * The working memory of one judging hook call: the event being built, the
 * walk buffer, the chain. 17 KiB: more than 7.x's task storage allocates
 * (its values must stay under 8 KiB), so it is per-CPU (map `work`), in
 * SBX_WORK_SLOTS slots that calls claim and give back (judge_begin,
 * judge_end): a call preempted while judging keeps its slot, and the next
 * call on that CPU takes another, so none overwrites another's buffers.
 */
struct sbx_scratch {
	struct sbx_event ev;
	struct walk_buf walk;
	struct sbx_chain chain;	/* here, not on the stack: the matcher's calls need that room */
	struct fs_state match;	/* fs_match's walk and verdict: match_one's, sb_chain_judge's, two_judge's, unix_one's */
	__u32 emitted;		/* records emit() was asked for since the hook reset it */
	__u32 quiet_grants;	/* grants allow without an event (a descriptor's use: its open told) */
	__u64 fd_now, fd_inner;	/* the descriptor use being judged: when, its innermost sandbox, */
	__u64 fd_cand, fd_cand_dentry, fd_cand_mnt;	/* its file */
	__u32 fd_cand_need;
	__u32 slot;		/* which slot this is, + 1 (sbx_work_pick) */
	__u32 pad;
};

/*
 * The file this task was last let write without a word by an open(O_TRUNC)
 * (fs.bpf.c write_remember), whose truncation, in the same call, is not
 * judged again; or the one path_mknod let it create with a word (an audit
 * record, a grant's use), whose open is judged again and reports its own.
 */
struct sbx_wrote {
	__u64 dentry, mnt;
	__u64 cgid;		/* the cgroup it was judged in */
	__u64 gen, until;	/* until 0: none */
	__u32 kind;		/* fs.bpf.c WROTE_*: the hook it is for */
	__u32 pad;
};

/*
 * What outlives one hook call, per sandboxed task (task storage, small):
 * descriptor uses recently allowed (fs.bpf.c file_permission), the file
 * just let write. Made by the first call that keeps something there
 * (fs.bpf.c fd_use_remember, write_remember): tasks outside every
 * sandbox get none.
 */
struct sbx_task {
	struct sbx_fd_seen fd_seen[SBX_FD_CACHE];
	struct sbx_wrote wrote;
};

/* Judging calls at once on one CPU (preempted or nested); one more fails closed. */
#define SBX_WORK_SLOTS	4

/*
 * Entries allocated when userspace adds them (BPF_F_NO_PREALLOC), not as an
 * up-front pool. Either way the kernel may hand a removed entry's memory to
 * the next one at once (its BPF allocator reuses freed elements before a
 * grace period), so a call copies what it reads of its entry
 * into its chain (sb_copy) rather than keep a pointer.
 */
SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SBX_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct sbx_sandbox);
} sandboxes SEC(".maps");

SBX_FS_RULES_MAP(SBX_SHARED);

SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_task);
} task_state SEC(".maps");

SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SBX_WORK_SLOTS);
	__type(key, __u32);
	__type(value, struct sbx_scratch);
} work SEC(".maps");

/* Per CPU: which work slots are claimed (bit i: slot i). */
SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);	/* 64 bits: the atomic or/and the default BPF ISA has */
} work_busy SEC(".maps");

/*
 * The variables below are the enforcement object's .bss. The extension
 * object (shared.bpf.c) declares none of them: it reads them where that
 * object has them, through that very map.
 */
#ifndef SBX_EXTENSION
/* Cheap exit for every task on a host without sandboxes; kept by userspace. */
SBX_SHARED volatile __u32 nr_sandboxes;
/*
 * Bumped by userspace after every sandbox it adds (never lowered): what the
 * outside cache below knows is valid for one value of it only.
 */
SBX_SHARED volatile __u64 sandbox_gen;
/*
 * Where sandboxes live: userspace puts the cgroup every sandbox is beneath
 * in `scope` and sets scope_set. A task outside it leaves after one helper
 * call instead of a lookup per ancestor level; the helper compares against
 * the cgroup itself, so cgroup namespaces cannot shift it.
 */
SBX_SHARED volatile __u32 scope_set;
/* The last policy id handed out to a sandbox of the pinned set (userspace, atomically). */
SBX_SHARED volatile __u32 policy_seq;
/*
 * Set by userspace before it adds an SBX_SANDBOX_ARMING entry, cleared by
 * it (holding the records' lock, as every attach does) once none is left:
 * until then every exec looks for an entry to put in force.
 */
SBX_SHARED volatile __u32 arming_set;
/*
 * Set by userspace before it adds a sandbox that may lie above or below
 * another (any but a cgroup `run` just made under sbx-bpf's own parent),
 * and never cleared: then every level of a task's cgroups is judged.
 */
SBX_SHARED volatile __u32 nest_set;
/*
 * bpf_loop's flags for the walks of rare paths (rare_loop): 0, never
 * written, but read from memory. The verifier inlines a bpf_loop whose
 * flags it knows to be 0, and on the kernels before upstream's change of
 * August 2025 each inlining copies the whole program's per-instruction
 * data (bpf_patch_insn_data, some 340,000 instructions on 6.1; 330 such
 * loops in all programs). A rare path pays an indirect call per step
 * instead. Each caller takes a failed rare_loop (-EINVAL, were this ever
 * not 0) as the answer that denies, or that keeps nothing.
 */
SBX_SHARED volatile __u64 rare_loop_flags;
/*
 * Coalescing window and per-sandbox record rate, as the time one record
 * stands for (1 s / records per second; 0: off); set by whoever loads the
 * programs. Not the rate itself: a division by it would be a rewrite of
 * its own (a zero check) in every program.
 */
SBX_SHARED volatile __u64 coalesce_ns;
SBX_SHARED volatile __u64 rate_interval_ns;
SBX_SHARED volatile __u32 rate_burst;
/* The last sequence number given to a record (atomically). */
SBX_SHARED volatile __u64 ev_seq;
/*
 * Bumped by userspace after every change to the sandboxes or the rules
 * (loader.c verdicts_changed), and here when an exec puts a sandbox in
 * force: an open memo (fs.bpf.c) holds for one value of it only.
 */
SBX_SHARED volatile __u64 verdict_gen;
#endif /* SBX_EXTENSION */

#define rare_loop(n, cb, ctx)	bpf_loop((n), (cb), (ctx), rare_loop_flags)

#include "report.h"

SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} scope SEC(".maps");

/*
 * Cgroups known to be under no sandbox: every task of a host with a
 * sandbox asks "am I in one?" on every hooked call, and almost all are not.
 * The answer for a cgroup id can only change when a sandbox is added (a
 * cgroup cannot move, ids are never reused, a new cgroup has a new id), so
 * an entry is good while sandbox_gen has the value the table was made for.
 * Only "not sandboxed" is kept: a stale entry could only ever let a task
 * go, so the table is written only under its lock and only when its
 * generation is the writer's, and it only ever moves forward to a newer
 * generation (a writer preempted with an older one finds it moved on, or
 * locked, and keeps nothing). Readers take no lock: the table moving
 * forward under one answers for a newer state, never an older one. One
 * table in .bss, not per CPU: a reader then needs no helper but the cgroup
 * id's (x86 stores are seen in order, which the reset relies on: slots
 * cleared before the new generation is written).
 */
#ifndef SBX_EXTENSION
SBX_SHARED struct sbx_outside outside_tab;
#endif

/*
 * The table's words are read and written once each, in program order:
 * volatile accesses, and a compiler barrier where the order matters (the
 * JIT keeps BPF's order; x86 keeps it between CPUs).
 */
#define sbx_barrier()		asm volatile("" ::: "memory")
#define OUTSIDE_WORD(w)		(*(volatile __u64 *)&(w))

/*
 * A lock that is tried, never waited for (the outside table's, an open
 * memo's): true when taken. What the holder stored is stored before the
 * lock is let go.
 */
static __always_inline bool sbx_trylock(volatile __u64 *lock)
{
	return __sync_val_compare_and_swap(lock, 0, 1) == 0;
}

static __always_inline void sbx_unlock(volatile __u64 *lock)
{
	sbx_barrier();
	*lock = 0;
}

/* Is cgroup @id known to be under no sandbox, as of @gen? */
static __always_inline bool outside_known(__u64 id, __u64 gen)
{
	if (OUTSIDE_WORD(outside_tab.gen) != gen)
		return false;
	sbx_barrier();	/* the slot after the generation: a reset clears slots first */
	return OUTSIDE_WORD(outside_tab.cgid[id & (SBX_OUTSIDE_SLOTS - 1)]) == id;
}

#ifdef SBX_DEFINE_MAPS
/*
 * bpf_loop callback of the table's reset: slot @i cleared. Written as a
 * loop, the reset was verified step by step, all 64, at both places that
 * keep an answer, in every program: on 6.1 a third of what the verifier
 * processed for a task hook (1,140 of task_kill's 3,711 instructions).
 */
static long outside_clear(__u32 i, void *ctx)
{
	OUTSIDE_WORD(outside_tab.cgid[i & (SBX_OUTSIDE_SLOTS - 1)]) = 0;
	return 0;
}

/*
 * Remember that cgroup @id is under no sandbox, as of @gen (read before the
 * lookups that found none). @id is the task's cgroup as its caller read it
 * first; the walk that found no sandbox read the task's levels as they were
 * at each step. A task moved meanwhile by someone else (a service manager)
 * out of sandbox @id walked another cgroup's levels: what it found is not
 * @id's, so @id is kept only if the task is in it still, after the walk.
 * A move out and back within one walk is not seen; only a task that may
 * move the task both ways can make it, and that one can move every task
 * of the sandbox out anyway.
 */
static __noinline void outside_keep(__u64 id, __u64 gen)
{
	if (bpf_get_current_cgroup_id() != id)
		return;
	if (!sbx_trylock(&outside_tab.lock))
		return;
	/* A reset that did not clear every slot keeps the old generation: stale slots never count. */
	if (OUTSIDE_WORD(outside_tab.gen) < gen &&
	    rare_loop(SBX_OUTSIDE_SLOTS, outside_clear, NULL) == SBX_OUTSIDE_SLOTS) {
		sbx_barrier();	/* slots cleared before the new generation shows */
		OUTSIDE_WORD(outside_tab.gen) = gen;
	}
	if (OUTSIDE_WORD(outside_tab.gen) == gen)
		OUTSIDE_WORD(outside_tab.cgid[id & (SBX_OUTSIDE_SLOTS - 1)]) = id;
	sbx_unlock(&outside_tab.lock);
}
#endif

/*
 * The short way out, inlined in every hook: no sandbox at all, or the
 * task's cgroup known to be in none. False when the long way must tell;
 * then *@id is the task's cgroup, for callers that look it up next.
 */
static __always_inline bool outside_id(__u64 *id)
{
	__u64 gen;

	if (!nr_sandboxes)
		return true;
	gen = sandbox_gen;
	*id = bpf_get_current_cgroup_id();
	return outside_known(*id, gen);
}

static __always_inline bool task_outside(void)
{
	__u64 id;

	return outside_id(&id);
}
/* What sbx_sandboxed() answers. */
enum { IN_NO_SANDBOX = 0, IN_ENFORCING, IN_AUDIT_ONLY };

#ifdef SBX_DEFINE_MAPS
/*
 * The sandboxes entry of cgroup @id: one lookup instruction for the
 * functions below but chain_level. The verifier rewrites every inlined hash
 * lookup, and each rewrite copied the program's per-instruction data (6.1:
 * some 280,000 instructions, in every program). Most of them run on rare
 * paths; sbx_current_chain's first lookup is also a judged connect's or
 * send's (judge_inet), which pays a call for it: a few instructions, on a
 * connect of 15,000 or more. The file hooks' common path looks up in
 * judge_own_cgroup, and a walk over levels in chain_level, both inline.
 */
static __noinline struct sbx_sandbox *sandbox_at(__u64 id)
{
	return bpf_map_lookup_elem(&sandboxes, &id);
}

/* What a walk over the task's cgroup levels looks for (sandbox_level), and what it found. */
struct level_scan {
	__u32 arming;	/* 1: a sandbox arming (sbx_arming_here); 0: one in force (sbx_sandboxed) */
	__u32 found;	/* arming: 1; in force: IN_ENFORCING or IN_AUDIT_ONLY; else 0 */
};

/*
 * bpf_loop callback of both walks: cgroup level @i + 1 of the task. A
 * callback is verified once, where a loop is verified level by level in
 * every program: written as loops, the two walks cost about 2,500
 * instructions of verification per program (144,000 of 739,000 on 6.12),
 * and carrying "an auditing sandbox seen" through sbx_sandboxed's 740
 * more. The price is a call per level, on paths that are rare: no free
 * work slot, a send to the resolver, an exec while a sandbox arms.
 */
static long sandbox_level(__u32 i, void *ctx)
{
	struct level_scan *w = ctx;
	struct sbx_sandbox *sb;
	__u64 id = bpf_get_current_ancestor_cgroup_id(i + 1);

	if (!id)
		return 1;	/* past the task's own cgroup */
	sb = sandbox_at(id);
	if (!sb)
		return 0;
	if (w->arming) {
		w->found = !!(sb->flags & SBX_SANDBOX_ARMING);
		return w->found;
	}
	if (sb->flags & SBX_SANDBOX_ARMING)
		return 0;
	/* An enforcing sandbox ends the walk; an auditing one is noted, and the walk goes on. */
	w->found = sb->flags & SBX_SANDBOX_AUDIT ? IN_AUDIT_ONLY : IN_ENFORCING;
	return w->found == IN_ENFORCING;
}

/*
 * Whether an SBX_SANDBOX_ARMING sandbox lies over the task: it is outside
 * for now, but must not be cached as outside (its exec puts it in force
 * without voiding the cache). Asked only when no sandbox in force was found
 * and some entry is arming (arming_set: userspace sets it before adding
 * one). A walk of its own, not a flag carried through the walks below:
 * that flag doubled the states the verifier explores in their loops (9,000
 * instructions more in each of the 57 programs).
 */
__noinline int sbx_arming_here(void)
{
	struct sbx_sandbox *sb;
	__u64 id = bpf_get_current_cgroup_id();
	struct level_scan w = { .arming = 1 };

	/* The levels the two walks below look at: the task's own cgroup, its ancestors. */
	sb = sandbox_at(id);
	if (sb && (sb->flags & SBX_SANDBOX_ARMING))
		return 1;
	if (rare_loop(SBX_CGROUP_MAX_LEVELS - 1, sandbox_level, &w) < 0)
		return 1;	/* cannot tell: not cached */
	return w.found == 1;
}
#else
extern int sbx_arming_here(void);
#endif

/*
 * The sandboxes governing the current task: every listed cgroup on the path
 * from the root to the task's own, outermost first. Each must allow an
 * operation (a policy below another can only narrow it). More listed levels
 * than SBX_NEST_MAX cannot all be judged: such a task is denied everything
 * (userspace refuses to attach that deep, so this is a fail-safe).
 *
 * Verified once, in the extension object (shared.bpf.c), and put in place
 * of every program's stand-in: in each program, with the outside cache
 * and the walks it needs, it took 7 % of the verifier's work on 6.1 and
 * 13 % of its time on 7.x (bench/RESULTS.md, stop 42).
 */
#ifdef SBX_EXTENSION
/* What chain_level fills: the caller's chain, reached through its stack. */
struct chain_walk {
	struct sbx_chain *c;
};

/*
 * bpf_loop callback of sbx_current_chain's walk: cgroup level @i + 1 of
 * the task. As a loop, this walk was verified at each of its 31 steps in
 * each of the 57 programs; a callback is verified once per program. The
 * kernel inlines a bpf_loop whose callback is known into a loop of direct
 * calls, so a walk pays one call per level. Only tasks outside their
 * sandbox's own cgroup walk, and every judged task once nest_set is on
 * (any attach, or a run below SBX_CGROUP_ROOT, since the programs loaded).
 */
static long chain_level(__u32 i, void *ctx)
{
	struct chain_walk *w = ctx;
	struct sbx_chain *c = w->c;
	struct sbx_sandbox *sb;
	__u64 id = bpf_get_current_ancestor_cgroup_id(i + 1);

	if (!id || !c)
		return 1;	/* past the task's own cgroup */
	sb = bpf_map_lookup_elem(&sandboxes, &id);
	if (!sb || (sb->flags & SBX_SANDBOX_ARMING))
		return 0;
	if (c->n >= SBX_NEST_MAX) {
		c->overflow = 1;
		return 1;
	}
	c->cgid[c->n & (SBX_NEST_MAX - 1)] = id;
	sb_copy(&c->sb[c->n & (SBX_NEST_MAX - 1)], sb);
	c->n++;
	return 0;
}

SEC("freplace/sbx_current_chain")
int sbx_current_chain(struct sbx_chain *c)
{
	struct chain_walk w = { .c = c };
	struct sbx_sandbox *sb;
	__u64 id, self, gen;
	int level;

	if (!c)
		return 0;

	c->n = 0;
	c->overflow = 0;
	c->strict = 0;
	if (!nr_sandboxes)
		return 0;
	gen = sandbox_gen;
	self = bpf_get_current_cgroup_id();
	if (outside_known(self, gen))
		return 0;
	/* 1: under the scope; 0: not; < 0: cannot tell, so keep looking. */
	if (scope_set && bpf_current_task_under_cgroup(&scope, 0) == 0)
		goto outside;
	/* Without nesting, most judged tasks sit in the sandbox cgroup itself: one lookup. */
	id = self;
	sb = nest_set ? NULL : sandbox_at(id);
	if (sb && !(sb->flags & SBX_SANDBOX_ARMING)) {
		sb_copy(chain_one(c, id), sb);
		return 1;
	}
	/* It cannot fail (flags 0, a constant count); if it did, nothing is judged: deny. */
	if (bpf_loop(SBX_CGROUP_MAX_LEVELS - 1, chain_level, &w, 0) < 0)
		c->overflow = 1;
	/*
	 * The first enforcing one (0 when all audit). Found after the level
	 * walk, in a loop of SBX_NEST_MAX steps: a branch inside the level loop
	 * was verified at each of its 31 steps, which cost 74,000 instructions
	 * processed over all programs on 6.1 (593,588 against 519,286).
	 */
	for (level = 0; level < SBX_NEST_MAX && level < c->n; level++)
		if (!(c->sb[level].flags & SBX_SANDBOX_AUDIT)) {
			c->strict = level;
			break;
		}
	if (c->n)
		return c->n;
	/*
	 * The walk failed: not "outside" (judge_inet would let the call go),
	 * nothing cached; every caller denies on overflow.
	 */
	if (c->overflow)
		return 1;
	if (arming_set && sbx_arming_here())
		return 0;	/* outside for now, but not for the cache */
outside:
	outside_keep(self, gen);
	return 0;
}
#elif defined(SBX_DEFINE_MAPS)
/*
 * The enforcement object's sbx_current_chain: a stand-in the loader
 * replaces with the extension's before any program is attached (loader.c
 * shared_load). Until then, and if it never is, no chain can be taken: a
 * task the outside cache does not already know is denied what is judged.
 * Opaque to the compiler, which must not assume what it writes.
 */
__noinline int sbx_current_chain(struct sbx_chain *c)
{
	int r = 1;

	asm volatile("" : "+r"(r) : "r"(c) : "memory");
	if (c) {
		c->n = 0;
		c->overflow = 1;
		c->strict = 0;
	}
	return r;
}
#else
extern int sbx_current_chain(struct sbx_chain *c);
#endif

static __always_inline __u32 current_chain(struct sbx_chain *c)
{
	return sbx_current_chain(c);
}

/*
 * Whether the task is sandboxed at all, without storing the chain, and
 * whether every sandbox over it only audits (IN_AUDIT_ONLY): asked when no
 * work slot is free (judge_memory), so that a task in no sandbox, or under
 * audit alone, is let go there rather than refused, and by sendmsg to the
 * resolver (net.bpf.c); its common answer ("no") comes from the outside
 * cache.
 */
#ifdef SBX_DEFINE_MAPS
__noinline int sbx_sandboxed(void)
{
	struct sbx_sandbox *sb;
	__u64 self, gen;
	struct level_scan w = { .arming = 0 };

	if (!nr_sandboxes)
		return IN_NO_SANDBOX;
	gen = sandbox_gen;
	self = bpf_get_current_cgroup_id();
	if (outside_known(self, gen))
		return IN_NO_SANDBOX;
	if (scope_set && bpf_current_task_under_cgroup(&scope, 0) == 0)
		goto outside;
	sb = sandbox_at(self);
	if (sb && !(sb->flags & SBX_SANDBOX_ARMING)) {
		if (!(sb->flags & SBX_SANDBOX_AUDIT))
			return IN_ENFORCING;
		if (!nest_set)
			return IN_AUDIT_ONLY;	/* its one sandbox */
	}
	if (rare_loop(SBX_CGROUP_MAX_LEVELS - 1, sandbox_level, &w) < 0)
		return IN_ENFORCING;	/* cannot tell: refuse */
	if (w.found == IN_ENFORCING || w.found == IN_AUDIT_ONLY)
		return w.found;
	if (arming_set && sbx_arming_here())
		return IN_NO_SANDBOX;	/* outside for now, but not for the cache */
outside:
	outside_keep(self, gen);
	return IN_NO_SANDBOX;
}
#else
extern int sbx_sandboxed(void);
#endif

static __always_inline bool current_chain_n(void)
{
	return sbx_sandboxed() != IN_NO_SANDBOX;
}

/*
 * Whether a call that finds no free work slot is refused (judge_memory):
 * 1 under an enforcing sandbox; 0 outside every sandbox, and under audit
 * alone, which refuses nothing (its event, if it had one, is lost, and
 * counted). Verified once, in the extension object, like
 * sbx_current_chain; its stand-in refuses.
 */
#ifdef SBX_EXTENSION
SEC("freplace/sbx_unjudged")
int sbx_unjudged(void)
{
	int in = sbx_sandboxed();

	if (in == IN_ENFORCING)
		return 1;
	if (in == IN_AUDIT_ONLY)
		stat_inc(SBX_STAT_EVENTS_LOST);
	return 0;
}
#elif defined(SBX_DEFINE_MAPS)
/* The enforcement object's stand-in (as sbx_current_chain's): every call without a work slot is refused. */
__noinline int sbx_unjudged(void)
{
	int r = 1;

	asm volatile("" : "+r"(r) : : "memory");
	return r;
}
#else
extern int sbx_unjudged(void);
#endif

/*
 * An exec: every SBX_SANDBOX_ARMING sandbox over the task goes in force
 * (the flag cleared once, atomically), before the exec'd file is judged.
 * The outside cache never held an arming cgroup, so nothing to void. The
 * flag is cleared with a 64-bit atomic (BPF has 32-bit ones only from
 * -mcpu=v3 on) on the word policy_id + flags: flags is its high half on
 * this little-endian target.
 */
_Static_assert(__builtin_offsetof(struct sbx_sandbox, flags) == 4, "flags: the high half of word 0");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "flags: the high half of word 0");
#define ARMING_WORD_BIT	((__u64)SBX_SANDBOX_ARMING << 32)

#ifdef SBX_DEFINE_MAPS
__noinline int sbx_arm_current(void)
{
	struct sbx_sandbox *sb;
	int level, armed = 0;
	__u64 id;

	for (level = SBX_CGROUP_MAX_LEVELS; level >= 1; level--) {
		id = level == SBX_CGROUP_MAX_LEVELS ? bpf_get_current_cgroup_id() :
						     bpf_get_current_ancestor_cgroup_id(level);
		if (!id)
			continue;	/* past the task's own cgroup */
		sb = bpf_map_lookup_elem(&sandboxes, &id);
		if (sb && (sb->flags & SBX_SANDBOX_ARMING) &&
		    (__sync_fetch_and_and((__u64 *)sb, ~ARMING_WORD_BIT) & ARMING_WORD_BIT)) {
			armed++;
			/*
			 * A sandbox in force where there was none: a memo of an
			 * open (fs.bpf.c) may no longer hold. Here, not once after
			 * the loop: a test of @armed there made the verifier walk
			 * every count of it at every level.
			 */
			__sync_fetch_and_add(&verdict_gen, 1);
		}
	}
	return armed;
}
#else
extern int sbx_arm_current(void);
#endif

/*
 * Everything one hook invocation works with. 24 bytes, as before work
 * slots: two judges live at once on file_open's deepest path, whose frames
 * then fill the verifier's 512-byte stack exactly (6.1); what a slot needs
 * to be given back is in the slot (struct sbx_scratch slot).
 */
struct judge {
	const struct sbx_sb_copy *sb;	/* the sandbox being judged for (in s->chain) */
	__u64 sandbox_cgid;
	struct sbx_scratch *s;		/* this call's work slot; NULL: none claimed */
};

/*
 * Give work slot @s back. A function of its own: its stack is not added to
 * the hook's, which is as deep as the verifier allows on 6.1.
 */
static __noinline void work_put(struct sbx_scratch *s)
{
	__u32 zero = 0;
	__u64 *busy;

	if (!s)
		return;
	busy = bpf_map_lookup_elem(&work_busy, &zero);
	if (busy)
		__sync_fetch_and_and(busy, ~(1ULL << ((s->slot - 1) & 63)));
}

/*
 * A judge gives its work slot back whenever it goes out of scope, on every
 * return path of the function that declared it: JUDGE(j) declares one.
 */
static __always_inline void judge_end(struct judge *j)
{
	if (j->s)
		work_put(j->s);
}

#define JUDGE(j)	struct judge j __attribute__((cleanup(judge_end))) = { .s = NULL }

/*
 * Claim a free work slot of this CPU: its index + 1, or 0 when all are
 * taken. A global function: the verifier checks it once, on its own, and
 * its callers see one unknown number, not one path per slot (judge_inet's
 * loop would otherwise multiply them past the verifier's limit). One try
 * per slot, written out: as a loop, the atomic's unknown result makes 7.x's
 * verifier see a loop going nowhere.
 */
#ifdef SBX_DEFINE_MAPS
__noinline int sbx_work_pick(__u64 *busy)
{
	if (!busy)
		return 0;
	_Static_assert(SBX_WORK_SLOTS == 4, "sbx_work_pick tries each slot");
	if (!(__sync_fetch_and_or(busy, 1ULL) & 1ULL))
		return 1;
	if (!(__sync_fetch_and_or(busy, 2ULL) & 2ULL))
		return 2;
	if (!(__sync_fetch_and_or(busy, 4ULL) & 4ULL))
		return 3;
	if (!(__sync_fetch_and_or(busy, 8ULL) & 8ULL))
		return 4;
	return 0;
}
#else
extern int sbx_work_pick(__u64 *busy);
#endif

/*
 * A free work slot of this CPU: NULL when all are taken. A function of its
 * own, for the same reason as work_put().
 */
static __noinline struct sbx_scratch *work_get(void)
{
	__u32 zero = 0, i;
	__u64 *busy = bpf_map_lookup_elem(&work_busy, &zero);
	struct sbx_scratch *s;
	int slot;

	if (!busy)
		return NULL;
	slot = sbx_work_pick(busy);
	if (slot <= 0 || slot > SBX_WORK_SLOTS)
		return NULL;
	i = slot - 1;
	s = bpf_map_lookup_elem(&work, &i);
	if (!s) {
		__sync_fetch_and_and(busy, ~(1ULL << (i & 63)));
		return NULL;
	}
	s->slot = slot;
	return s;
}

/*
 * Make the @i-th sandbox of the chain the one judged for: its copy, taken
 * when the call began (struct sbx_sb_copy), not the map entry, which may
 * hold another sandbox's values by now. Never NULL, so it sits in a
 * condition (for_each_sandbox).
 */
static __always_inline const struct sbx_sb_copy *judge_select(struct judge *j, __u32 i)
{
	j->sb = &j->s->chain.sb[i & (SBX_NEST_MAX - 1)];
	j->sandbox_cgid = j->s->chain.cgid[i & (SBX_NEST_MAX - 1)];
	return j->sb;
}

/*
 * The common case of a chain, without nesting: the task sits in its
 * sandbox's cgroup. Then the chain is that one sandbox, copied with the
 * one lookup that found it. The key is j->sandbox_cgid, the task's cgroup
 * as judge_begin_as or the hook's short way read it: 6.1's stack has no
 * room for another.
 */
static __always_inline bool judge_own_cgroup(struct judge *j)
{
	struct sbx_sandbox *sb;
	struct sbx_sb_copy *copy;

	j->sb = NULL;	/* nothing left selected from an earlier begin */
	if (nest_set)
		return false;
	sb = bpf_map_lookup_elem(&sandboxes, &j->sandbox_cgid);
	if (!sb || (sb->flags & SBX_SANDBOX_ARMING))
		return false;
	/* chain_one's slot is judge_select(j, 0)'s, and sandbox_cgid already its key */
	copy = chain_one(&j->s->chain, j->sandbox_cgid);
	sb_copy(copy, sb);
	j->sb = copy;
	return true;
}

/*
 * A work slot for @j, unless it has one (a second judge_begin: the same
 * slot): 1, or, when every slot of this CPU is taken, -EACCES for a task
 * some enforcing sandbox covers and 0 for one in no sandbox or under audit
 * alone (which refuses nothing: only its event, if any, is lost, and
 * counted so). Whether the task is sandboxed is told after
 * (judge_own_cgroup, else its chain): a task the outside cache does not know
 * claims a slot for that one call. Task storage is not read here: the
 * calls that keep something in it make it (fd_use_remember,
 * write_remember), so a judged open pays no lookup for it.
 */
static __always_inline int judge_memory(struct judge *j)
{
	if (j->s)
		return 1;
	j->s = work_get();
	if (j->s)
		return 1;
	return sbx_unjudged() ? -EACCES : 0;	/* a constant, for the hooks' return range */
}

/* What a call's event starts from: what an earlier call left in the slot, cleared. */
static __always_inline void event_reset(struct sbx_scratch *s)
{
	s->ev.flags = 0;
	s->ev.path_len = 0;
	s->ev.path2_len = 0;
	s->ev.domain_id = 0;
	s->ev.family = 0;
	s->ev.arg = 0;
	s->ev.target = 0;
	s->quiet_grants = 0;
	s->ev.path[0] = '\0';
}

/* 1: sandboxed, go on judging; 0: not sandboxed; -EACCES: cannot judge (no memory). */
static __always_inline int judge_begin_as(struct judge *j, bool outside_checked, __u64 cgid)
{
	int res;

	/*
	 * @outside_checked: the caller's short way already let the outside go
	 * (file_permission's, in a frame of its own for want of room here;
	 * file_open's, path_mknod's and path_unlink's, at their start); @cgid,
	 * when not 0 (no cgroup's id), is the task's cgroup as that way read it.
	 * The id is kept in @j: judge_own_cgroup looks it up, one helper call
	 * fewer.
	 */
	if (outside_checked)
		j->sandbox_cgid = cgid ? cgid : bpf_get_current_cgroup_id();
	else if (outside_id(&j->sandbox_cgid))
		return 0;
	res = judge_memory(j);
	if (res < 0) {
		/* Fail closed; the lost event is counted. */
		stat_inc(SBX_STAT_DENIED);
		stat_inc(SBX_STAT_EVENTS_LOST);
	}
	if (res <= 0)
		return res;
	event_reset(j->s);
	if (judge_own_cgroup(j))
		return 1;
	/* The chain goes straight to scratch memory: the matcher's calls need the stack. */
	current_chain(&j->s->chain);
	if (j->s->chain.overflow) {
		stat_inc(SBX_STAT_DENIED);
		return -EACCES;
	}
	if (!j->s->chain.n)
		return 0;	/* in no sandbox: the outside cache did not know it yet (now it does) */
	judge_select(j, j->s->chain.strict);	/* loops over the chain select each in turn */
	return 1;
}

static __always_inline int judge_begin(struct judge *j)
{
	return judge_begin_as(j, false, 0);
}

/*
 * Begin judging for sandbox @k of @c, a chain the caller took earlier in
 * this call (net.bpf.c judge_inet's first pass), without asking again
 * which sandboxes the task is under: an answer taken now could list
 * others, or none, once one was added or removed in between, and the
 * first pass's verdicts are @c's. 1, or -EACCES when no work slot is free
 * (nothing counted: the caller knows what that refuses).
 */
static __always_inline int judge_begin_for(struct judge *j, const struct sbx_chain *c, __u32 k)
{
	if (!j->s)
		j->s = work_get();
	if (!j->s)
		return -EACCES;
	event_reset(j->s);
	k &= SBX_NEST_MAX - 1;
	*chain_one(&j->s->chain, c->cgid[k]) = c->sb[k];
	judge_select(j, 0);
	return 1;
}

/* For each sandbox of @j's chain, outermost first: the first denial stops it. */
#define for_each_sandbox(j, i)						\
	for (i = 0; i < SBX_NEST_MAX; i++)				\
		if (i < (j)->s->chain.n && judge_select((j), i))

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

static __always_inline void emit(struct judge *j, __u32 op, __u32 verdict, __u32 rule_id, int error)
{
	j->s->emitted++;
	sbx_emit(&j->s->ev, j->sandbox_cgid, (__u64)op << 32 | verdict, rule_id, error);
}

/* Report a denial with @error; returns what the hook returns (0 in audit mode). */
static __always_inline int deny_err(struct judge *j, __u32 op, __u32 rule_id, int error)
{
	if (j->sb->flags & SBX_SANDBOX_AUDIT) {
		emit(j, op, SBX_VERDICT_AUDIT, rule_id, 0);
		return 0;
	}
	stat_inc(SBX_STAT_DENIED);	/* what was refused: an audit hit is not (sbx_abi.h) */
	emit(j, op, SBX_VERDICT_DENY, rule_id, error);
	return error;
}

/* Report a denial: file and network operations answer EACCES. */
static __always_inline int deny(struct judge *j, __u32 op, __u32 rule_id)
{
	return deny_err(j, op, rule_id, -EACCES);
}


static __always_inline struct mount *real_mount(struct vfsmount *mnt)
{
	return (struct mount *)((void *)mnt - bpf_core_field_offset(struct mount, mnt));
}


#endif /* SBX_SANDBOX_H */
