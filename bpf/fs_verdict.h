/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fs_verdict.h — what fs_match() (fs_match.h) says about one path, and the
 * walk's state it says it from: on their own so that sandbox.h can keep
 * one in scratch memory. The state is in map memory, not on the stack,
 * because of 7.x's stack liveness pass (bpf_compute_subprog_arg_access):
 * it analyses a subprogram again for every call site that passes it a
 * pointer into a stack, and the walk called fs_component_end, the largest
 * subprogram, from nine places.
 */
#ifndef SBX_FS_VERDICT_H
#define SBX_FS_VERDICT_H

struct fs_verdict {
	__u32 read_deny;	/* 1: reading is denied */
	__u32 read_rule;
	__u32 write_deny;	/* 1: writing is denied */
	__u32 write_rule;
	__u32 guard;		/* a rule is at or beneath this very path */
	__u32 guard_rule;
	__u32 guard_mandatory;	/* this very path leads into a mandatory pattern */
	__u32 unix_allow;	/* allowUnixSockets covers this path (at it or above) */
};

/* What one fs_rules entry says: the first five fields of struct sbx_fs_rule, or of its base. */
struct fs_rule_says {
	__u32 read_rule;
	__u32 write_rule;
	__u32 guard_rule;
	__u32 unix_rule;
	__u32 flags;
};

/* The walk's state, scalars only, so a global function can take it. */
struct fs_state {
	__u32 policy_id;
	__u32 mask;		/* any-depth component counts in use */
	__u32 ncomp;		/* components ended so far */
	__u32 stop;		/* nothing deeper can match: the walk ends (fs_component_end) */
	__u64 h1, h2;		/* of path[0..i): its components folded */
	__u64 c1, c2;		/* of the current component */
	__u64 comp1[SBX_ANY_DEPTH_MAX], comp2[SBX_ANY_DEPTH_MAX];	/* last components, ring */
	__u32 mandatory;	/* a mandatory rule matched: writes stay denied */
	__u32 last_flags;	/* flags of everything matched at the latest component end */
	/*
	 * base: where the path fs_match is given starts in the whole path
	 * (FS_MATCH_RESUME: the state is that of the directory's path, taken
	 * from a directory memo, fs.bpf.c); 0 for a whole path. expiring: an
	 * entry that expires (a grant's) said something, so this state stands
	 * only until it does.
	 */
	__u32 base;
	__u32 expiring;
	struct fs_verdict v;	/* fs_match's answer */
	/*
	 * The rule ids matched at the current component end (fs_hit; the
	 * flags stay in fs_component_end's register). Here, not on the
	 * stack, so that the verifier does not track them: a hit or none
	 * leaves the same state, and its paths merge at once. Not cleared
	 * between component ends: fs_apply reads an id only for a flag some
	 * hit at the same end has, and the first such hit writes it (the
	 * guard's id, every first hit).
	 */
	struct fs_verdict hit;
};

/*
 * Paths are built backwards into b[start, SBX_PATH_MAX) and matched in place
 * (the matcher reads SBX_PATH_MAX bytes from b + start, hence the size); they
 * are copied into the event only when one is sent.
 */
struct walk_buf {
	__u32 start;
	__u32 len;
	__u64 arg_d, arg_m;	/* fs.bpf.c resolve(): its pointers, made numbers */
	/*
	 * What one walk went through, for the open memo (fs.bpf.c): asked for
	 * by setting rec_want before the walk, which clears it (rec_on: this
	 * walk records). rec_p: each step's dentry, parent mount or (last)
	 * mount namespace, rec_n steps; rec_h1/rec_h2: a digest of the steps'
	 * kinds and of each dentry's name hash, length and rename count
	 * (resolve.h walk_fold). rec_bad: a step could not be recorded as it
	 * must be. rec_ok: the record holds (every dentry read between two
	 * equal, even rename counts; at most SBX_MEMO_STEPS steps; the walk
	 * reached the root). Kept here, not on the walk's stack: what is in
	 * map memory the verifier does not track, so the walk's steps still
	 * look alike to it.
	 */
	__u32 rec_want, rec_on;
	__u32 rec_n, rec_bad;
	__u32 rec_ok, rec_pad;
	__u64 rec_h1, rec_h2;
	__u64 rec_p[SBX_MEMO_STEPS];
	char b[2 * SBX_PATH_MAX + SBX_NAME_MAX + 1];
};

/*
 * A path's length, as resolve_in writes it: a struct, because the kernel
 * matches an extension's pointer arguments to its target's only when they
 * point to structs of the same name (btf_check_type_match).
 */
struct sbx_path_len {
	__u32 n;
};

/*
 * The rules the matcher reads, defined (@storage empty) or declared
 * (extern) by the enforcement object's files (sandbox.h), and defined by
 * the extension object (shared.bpf.c), which the loader gives the
 * enforcement object's map.
 */
#define SBX_FS_RULES_MAP(storage)					\
	storage struct {						\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__uint(max_entries, SBX_MAX_FS_RULES);			\
		__uint(map_flags, BPF_F_NO_PREALLOC);			\
		__type(key, struct sbx_fs_key);				\
		__type(value, struct sbx_fs_rule);			\
	} fs_rules SEC(".maps")

#endif /* SBX_FS_VERDICT_H */
