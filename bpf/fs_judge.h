/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fs_judge.h — a path judged for a sandbox's policy: built from a dentry
 * and a mount (resolve), refused outright on pseudo and kernel file
 * systems when written, else matched (fs_match) for every sandbox of the
 * chain (judge_path). fs.bpf.c's hooks use it inline.
 *
 * sbx_judge_one, the whole of it for one object, is verified once, in the
 * extension object (shared.bpf.c, SBX_EXTENSION), and put in place of a
 * stand-in in the path hooks that judge one object for writing (mkdir,
 * rmdir, unlink, symlink, mknod, truncate, chmod, chown); fs.bpf.c defines
 * the stand-in, which refuses.
 */
#ifndef SBX_FS_JUDGE_H
#define SBX_FS_JUDGE_H

#define CGROUP_SUPER_MAGIC	0x27e0eb
#define CGROUP2_SUPER_MAGIC	0x63677270
#define BPF_FS_MAGIC		0xcafe4a11
#define SECURITYFS_MAGIC	0x73636673
#define PROC_SUPER_MAGIC	0x9fa0
#define SYSFS_MAGIC		0x62656572
#define DEBUGFS_MAGIC		0x64626720
#define TRACEFS_MAGIC		0x74726163
#define CONFIGFS_MAGIC		0x62656570
#define EFIVARFS_MAGIC		0xde5e81e4
#define PSTOREFS_MAGIC		0x6165676c
#define SELINUX_MAGIC		0xf97cff8c
#define SMACK_MAGIC		0x43415d53

/* The path last built in @walk into the event's first path (for sending it). */
static __always_inline void walk_to_event(struct walk_buf *walk, struct sbx_event *ev)
{
	__u32 len = walk->len & (SBX_PATH_MAX - 1);

	ev->path_len = 0;
	ev->path[0] = '\0';
	if (!walk->len || bpf_probe_read_kernel(ev->path, len, walk->b + (walk->start & (SBX_PATH_MAX - 1))))
		return;
	ev->path[len] = '\0';
	ev->path_len = len;
}

static __always_inline int resolve(struct dentry *d, struct vfsmount *mnt, struct walk_buf *walk,
				   char *out, __u32 *out_len)
{
	/*
	 * The global function takes numbers. A pointer written to map memory
	 * reads back as one (a loader with CAP_PERFMON may leak addresses
	 * into maps): two instructions each, where ptr_value() is a helper
	 * call. @walk is this call's own slot, so nothing else writes there.
	 */
	*(volatile __u64 *)&walk->arg_d = (__u64)d;
	*(volatile __u64 *)&walk->arg_m = (__u64)mnt;
	return resolve_in(*(volatile __u64 *)&walk->arg_d,
			  *(volatile __u64 *)&walk->arg_m - bpf_core_field_offset(struct mount, mnt), walk,
			  (struct sbx_path *)out, (struct sbx_path_len *)out_len);
}

/* The same for an open file (a hook's argument: its fields are plain loads). */
static __always_inline int resolve_file(struct file *file, struct walk_buf *walk, char *out,
					__u32 *out_len)
{
	return resolve(file->f_path.dentry, file->f_path.mnt, walk, out, out_len);
}

static __always_inline bool pseudo_fs(struct dentry *d)
{
	unsigned long magic = BPF_CORE_READ(d, d_sb, s_magic);

	return magic == CGROUP_SUPER_MAGIC || magic == CGROUP2_SUPER_MAGIC ||
	       magic == BPF_FS_MAGIC || magic == SECURITYFS_MAGIC;
}

/*
 * File systems that are the kernel's own settings rather than files: no
 * sandboxed task writes to them, whatever its policy allows (a policy
 * allowing "/" must not open /proc/sys, /sys or tracing's kprobe_events).
 * The one exception is the task's own /proc/<tgid> (oom_score_adj, comm,
 * attr), found by the name of the entry right below procfs' root; /proc
 * mounted for another pid namespace has other names, so is refused.
 */
static __always_inline bool own_proc_entry(struct dentry *d)
{
	struct dentry *top = d, *p;
	char name[12] = {};
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, v = 0;
	int i, len;

	for (i = 0; i < 16; i++) {
		p = BPF_CORE_READ(top, d_parent);
		if (!p || p == top)
			return false;	/* procfs' root itself */
		if (BPF_CORE_READ(p, d_parent) == p)
			break;		/* top is an entry of the root */
		top = p;
	}
	if (i == 16)
		return false;
	len = BPF_CORE_READ(top, d_name.len);
	if (len < 1 || len > 10 || bpf_probe_read_kernel(name, sizeof(name) - 1, BPF_CORE_READ(top, d_name.name)))
		return false;
	for (i = 0; i < 10; i++) {
		if (i >= len)
			break;
		if (name[i] < '0' || name[i] > '9')
			return false;
		v = v * 10 + (name[i] - '0');
	}
	return v == tgid;
}

static __always_inline bool kernel_fs(struct dentry *d)
{
	unsigned long magic = BPF_CORE_READ(d, d_sb, s_magic);

	switch (magic) {
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case CONFIGFS_MAGIC:
	case EFIVARFS_MAGIC:
	case PSTOREFS_MAGIC:
	case SELINUX_MAGIC:
	case SMACK_MAGIC:
		return true;
	case PROC_SUPER_MAGIC:
		return !own_proc_entry(d);
	}
	return false;
}

/* --- judging ------------------------------------------------------------------ */

#define NEED_READ	1
#define NEED_WRITE	2

/*
 * The any-depth pattern sizes to look up: a read-only check needs only the
 * read rules' (the mandatory set is about writes), which keeps the common
 * read-only open at one lookup per component under the default policy.
 */
static __always_inline __u32 match_mask(__u32 mask, __u32 need)
{
	__u32 read = (mask >> SBX_ANY_DEPTH_READ_SHIFT) & 0xf;

	return need == NEED_READ ? read : (mask | read) & 0xf;
}

/*
 * What the policy of the sandbox @j judges for says about the path in the
 * walk buffer: 1 (denied: *@rule, and *@op turned into "read" when reading
 * was what a write-open was refused for), or 0.
 */
static __always_inline bool grant_rule(__u32 rule)
{
	return (rule & SBX_RULE_BASE_MASK) == SBX_RULE_GRANT_BASE;
}

static __always_inline int match_one(struct judge *j, __u32 *op, __u32 need, __u32 *rule)
{
	struct walk_buf *walk = &j->s->walk;
	struct fs_verdict *v = &j->s->match.v;	/* scratch, not stack: the hooks' frames are full */

	j->s->ev.flags &= ~SBX_EV_DIRECTORY_ONLY;
	/* Matched where the walk built it; copied into the event only for a denial. */
	fs_match((struct sbx_path *)(walk->b + (walk->start & (SBX_PATH_MAX - 1))), walk->len,
		 j->sb->policy_id, match_mask(j->sb->any_depth_mask, need), &j->s->match);
	if ((need & NEED_READ) && v->read_deny) {
		*op = *op == SBX_OP_WRITE ? SBX_OP_READ : *op;
		*rule = v->read_rule;
		return 1;
	}
	if ((need & NEED_WRITE) && v->write_deny) {
		*rule = v->write_rule;
		return 1;
	}
	/*
	 * A leading part of a mandatory pattern (".git" of ".git/hooks") may be
	 * a directory, nothing else: a file ".git" ("gitdir: elsewhere") or a
	 * symlink ".claude -> elsewhere" would move what the pattern protects
	 * to where it does not match.
	 */
	if (v->guard_mandatory && (*op == SBX_OP_CREATE || *op == SBX_OP_SYMLINK || *op == SBX_OP_WRITE ||
				  *op == SBX_OP_TRUNCATE)) {
		j->s->ev.flags |= SBX_EV_DIRECTORY_ONLY;
		*rule = v->guard_rule;
		return 1;
	}
	/* Allowed by a live grant: its use is reported (2). */
	if ((need & NEED_WRITE) && grant_rule(v->write_rule)) {
		*rule = v->write_rule;
		return 2;
	}
	if ((need & NEED_READ) && grant_rule(v->read_rule)) {
		*rule = v->read_rule;
		return 2;
	}
	return 0;
}

/* Judge the path already in the walk buffer (or its failure @res) for @need, by every sandbox. */
static __always_inline int judge_path(struct judge *j, int res, struct dentry *d,
				      __u32 op, __u32 need)
{
	struct walk_buf *walk = &j->s->walk;
	__u32 i, rule, o;
	int ret;

	if (res == PATH_NOT_IN_TREE)
		return 0;
	if ((need & NEED_WRITE) && pseudo_fs(d)) {
		walk_to_event(walk, &j->s->ev);
		return deny(j, op, SBX_RULE_PSEUDO_FS);
	}
	if ((need & NEED_WRITE) && kernel_fs(d)) {
		walk_to_event(walk, &j->s->ev);
		return deny(j, op, SBX_RULE_KERNEL_FILES);
	}
	if (res != PATH_RESOLVED) {
		j->s->ev.flags |= SBX_EV_PATH_UNRESOLVED;
		return deny(j, op, SBX_RULE_NONE);
	}
	for_each_sandbox(j, i) {
		o = op;
		ret = match_one(j, &o, need, &rule);
		if (!ret)
			continue;
		walk_to_event(walk, &j->s->ev);
		if (ret == 2) {
			if (!j->s->quiet_grants)
				emit(j, o, SBX_VERDICT_GRANTED, rule, 0);
			continue;
		}
		ret = deny(j, o, rule);
		if (ret)
			return ret;
	}
	return 0;
}

#ifdef SBX_EXTENSION
/*
 * The object whose dentry and mount judge_one_in left in @s's walk buffer,
 * judged for @need by every sandbox of @s's chain; the judge begins where
 * judge_begin left it (its strictest sandbox, or its one). 0, or what the
 * hook returns for a denial.
 */
SEC("freplace/sbx_judge_one")
int sbx_judge_one(struct sbx_scratch *s, __u32 op, __u32 need)
{
	struct judge j = { .s = s };
	__u64 d, m;
	int res;

	if (!s)
		return -EACCES;	/* never: the caller judges with a slot */
	judge_select(&j, s->chain.strict);
	d = *(volatile __u64 *)&s->walk.arg_d;
	m = *(volatile __u64 *)&s->walk.arg_m;
	res = resolve_in(d, m - bpf_core_field_offset(struct mount, mnt), &s->walk, NULL, NULL);
	return judge_path(&j, res, (struct dentry *)d, op, need);
}
#else
/*
 * The stand-in the loader replaces with the extension before any program
 * is attached (loader.c shared_load): until then, and if it never is,
 * every object these hooks judge is refused (counted as denied, no
 * record). Opaque to the compiler, which must not assume what it returns.
 */
__noinline int sbx_judge_one(struct sbx_scratch *s, __u32 op, __u32 need)
{
	int r = -EACCES;

	asm volatile("" : "+r"(r) : "r"(s), "r"(op), "r"(need) : "memory");
	stat_inc(SBX_STAT_DENIED);
	return r;
}
#endif /* SBX_EXTENSION */

/*
 * In a hook, after judge_begin: object @d under @mnt judged for @need
 * (sbx_judge_one). The pointers go as resolve() hands them to resolve_in:
 * written to the slot's map memory, they read back as numbers.
 */
static __always_inline int judge_one_in(struct judge *j, struct dentry *d, struct vfsmount *mnt, __u32 op,
					__u32 need)
{
	*(volatile __u64 *)&j->s->walk.arg_d = (__u64)d;
	*(volatile __u64 *)&j->s->walk.arg_m = (__u64)mnt;
	return sbx_judge_one(j->s, op, need);
}

#endif /* SBX_FS_JUDGE_H */
