// SPDX-License-Identifier: GPL-2.0
/*
 * fs.bpf.c — file-system enforcement for sandboxed cgroups.
 *
 * Hooks and what each denies, only for tasks in a cgroup listed in
 * `sandboxes` or below one (every other task passes untouched); "read" and
 * "write" are judged by the policy (fs_match.h), each denial is -EACCES plus
 * one event:
 *
 *   lsm/file_open          read: opening for reading (and exec); write:
 *                          opening for writing or appending. An exec also
 *                          puts an arming sandbox over the task in force
 *                          (SBX_SANDBOX_ARMING: attach --from-exec). An
 *                          open allowed without a word leaves an open memo
 *                          on the inode: the same path from the same
 *                          cgroup, asking no more, nothing changed since,
 *                          is let go without judging it again (below)
 *   lsm/path_mknod         write: creating a file (O_CREAT, mknod), before
 *                          the inode exists, so no empty file is left
 *   lsm/path_mkdir         write: the new directory
 *   lsm/path_rmdir         write: the directory removed
 *   lsm/path_unlink        write: the name removed. This hook and
 *                          path_mknod, when they allow without a word, leave
 *                          a directory memo on the directory's inode: the
 *                          next write there from the same cgroup, nothing
 *                          changed since, matches only its own name (below)
 *   lsm/path_symlink       write: the new link (its target is judged when used)
 *   lsm/path_link          write: the new name; and the existing file must be
 *                          readable and writable, so a hard link can neither
 *                          create a readable name for a read-denied file nor a
 *                          writable one for a write-denied file
 *   lsm/path_rename        write: source and destination (both ways for
 *                          RENAME_EXCHANGE); a read-denied source; and any
 *                          rename whose source or destination has a rule at
 *                          or beneath it (SBX_FS_GUARD), which would carry
 *                          files from under one rule to under another
 *   lsm/path_truncate      write: truncate(2), open(O_TRUNC) and, before
 *   lsm/file_truncate      6.2, ftruncate(2); file_truncate: ftruncate on 6.2+
 *                          and open(O_TRUNC). Not open(O_TRUNC)'s when its
 *                          open, a moment before, was allowed to write
 *   lsm/path_chmod         write: chmod
 *   lsm/path_chown         write: chown
 *   lsm/inode_setattr      write: utimes (the other attributes have path hooks)
 *   lsm/inode_setxattr     write: setting an extended attribute
 *   lsm/inode_removexattr  write: removing one
 *   lsm/inode_set_acl      write: POSIX ACLs (6.2+; before, they were xattrs)
 *   lsm/inode_remove_acl
 *
 * Mandatory, whatever the policy says: no write of any kind on the cgroup
 * file systems, bpffs or securityfs (recognised by file-system type, wherever
 * they are mounted), so a sandboxed task can neither move itself out of its
 * cgroup nor touch pinned BPF objects.
 *
 * Paths are where the object really is in the host's tree: this file walks
 * dentries and mounts up to the root of the mount namespace itself instead of
 * using bpf_d_path, which stops at the task's chroot and is not allowed in
 * most of these hooks. So symlinks, "..", relative names, /proc/self/root,
 * /proc/self/fd/N and chroot do not change the verdict. Objects on internal
 * mounts (pipes, sockets, memfd) have no place in the tree and are not
 * judged. A path longer than SBX_PATH_MAX - 1 bytes, deeper than
 * SBX_WALK_MAX steps, or not connected to its mount's root is denied with an
 * event flagged SBX_EV_PATH_UNRESOLVED: fail closed. The inode_* hooks get a
 * dentry without a mount; they judge the object's path under every mount of
 * its file system and deny if any of them denies (or there are more than
 * SBX_SB_MOUNTS_MAX).
 *
 * Matching is in fs_match.h: a few hash lookups per path component,
 * independent of the number of rules. In audit mode (SBX_SANDBOX_AUDIT) the
 * same event is sent with verdict AUDIT and the operation proceeds.
 *
 * Maps:
 *   sandboxes   cgroup id → policy id + flags; SBX_MAX_SANDBOXES entries.
 *   fs_rules    struct sbx_fs_key → struct sbx_fs_rule; SBX_MAX_FS_RULES.
 *   work        per-CPU slots of working memory: the event being built, the
 *               walk buffer, the chain and the matcher's state (sandbox.h
 *               struct sbx_scratch). A call claims
 *               a slot and gives it back, so a preempted program cannot have
 *               its buffer overwritten by another run on that CPU.
 *   task_state  task storage: what a task's calls share (the descriptor cache).
 *   events      ring buffer of struct sbx_event, variable length (paths cut
 *               to their real size); a full buffer counts
 *               SBX_STAT_EVENTS_LOST, the verdict stands.
 *   stats       per-CPU counters (enum sbx_stat).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sbx_abi.h"

#define FMODE_READ	0x1
#define FMODE_WRITE	0x2
#define __FMODE_EXEC	0x20	/* in f_flags, not f_mode: do_open_execat's (and uselib's) opens */
#define O_CREAT		0100	/* in f_flags until the open is done (do_dentry_open clears it after) */
#define O_TRUNC		01000	/* the same: open(O_TRUNC) truncates after file_open (handle_truncate) */
#define RENAME_EXCHANGE	(1 << 1)
#define ATTR_MODE	(1 << 0)
#define ATTR_UID	(1 << 1)
#define ATTR_GID	(1 << 2)
#define ATTR_SIZE	(1 << 3)
#define ATTR_ATIME	(1 << 4)
#define ATTR_MTIME	(1 << 5)

#define S_IFMT		00170000
#define S_IFBLK		0060000
#define S_IFCHR		0020000

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

#define S_IFREG		0100000
#define S_IFDIR		0040000
#define MAY_WRITE	0x2
#define MAY_READ	0x4
#define MAY_APPEND	0x8
/* Character devices 1:1 /dev/mem, 1:2 /dev/kmem, 1:4 /dev/port (MKDEV: major << 20). */
#define MEM_MAJOR	1


char LICENSE[] SEC("license") = "GPL";

#define SBX_DEFINE_MAPS
#include "sandbox.h"
/* sbx_abi.h's filter of fs_rules keys: written by userspace before each key (loader__put_fs_rule). */
volatile __u64 fs_filter[SBX_FS_FILTER_WORDS];

#define SBX_FS_MATCH_STUB	/* the extension's in use (shared.bpf.c) */
#include "fs_match.h"

/* --- where an object is: dentry + mount → absolute path (resolve.h) ------- */
#include "resolve.h"

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

/*
 * 1 for a file of procfs @sb, where a write's verdict depends on whose
 * /proc/<pid> the file is under (kernel_fs), not on its path alone: no
 * memo keeps such a write.
 */
static __always_inline bool write_by_task(const struct super_block *sb)
{
	return sb->s_magic == PROC_SUPER_MAGIC;
}

/* --- judging ------------------------------------------------------------------ */

#include "fs_judge.h"

/*
 * The verdict on the path resolve() left in @j's slot (@res its outcome)
 * for @op asking @need: what needs the dentry @d here (file systems no
 * sandbox may write, a path that could not be resolved), the policy of
 * each sandbox in the extension (fs_judge.h).
 */
static __always_inline int judge_path(struct judge *j, int res, struct dentry *d,
				      __u32 op, __u32 need)
{
	struct walk_buf *walk = &j->s->walk;

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
	/* 0 or -EACCES (sbx_judge_path): said so for the verifier, which knows nothing of what it returns. */
	return sbx_judge_path(j->s, op, need) ? -EACCES : 0;
}

/* A hook about one object: begin, resolve, judge. */
static __always_inline int judge_one(struct dentry *d, struct vfsmount *mnt, __u32 op, __u32 need)
{
	JUDGE(j);
	int res;

	res = judge_begin(&j);
	if (res <= 0)
		return res;
	res = resolve(d, mnt, &j.s->walk, NULL, NULL);
	return judge_path(&j, res, d, op, need);
}

/* The same for an open file (the hot path: file_open). */
static __always_inline int judge_file(struct file *file, __u32 op, __u32 need)
{
	JUDGE(j);
	int res;

	res = judge_begin(&j);
	if (res <= 0)
		return res;
	res = resolve_file(file, &j.s->walk, NULL, NULL);
	return judge_path(&j, res, file->f_path.dentry, op, need);
}

/*
 * rename and link: @d1 (existing) and @d2 (new name). Both paths go in the
 * event. The source must be writable and not read-denied; the destination
 * writable; neither may have a rule at or beneath it. @exchange: both ways.
 */
/*
 * rename/link as one sandbox's policy (@sb) sees the paths in @ev: 0
 * allowed, 1 denied with @st->v.write_rule the rule to report (and
 * SBX_EV_RENAME_GUARD set when a rule at or beneath a path denied it).
 * @st (scratch) is the matcher's. A global function: its four verdicts
 * were verified inline in every step of the hook's chain loop, which 7.x
 * took twice as long over as other hooks.
 */
__noinline int two_judge(struct sbx_event *ev, const struct sbx_sb_copy *sb, __u32 exchange,
			 struct fs_state *st)
{
	struct fs_verdict v;	/* the first path's: @st then holds the second's */
	const struct fs_verdict *v2;
	__u32 rule;

	if (!ev || !sb || !st)
		return 1;	/* never; and then not allowed */
	ev->flags &= ~SBX_EV_RENAME_GUARD;
	fs_match((struct sbx_path *)ev->path, ev->path_len, sb->policy_id, sb->any_depth_mask & 0xf, st);
	v = st->v;
	fs_match((struct sbx_path *)ev->path2, ev->path2_len, sb->policy_id, sb->any_depth_mask & 0xf, st);
	v2 = &st->v;
	if (v.write_deny)
		rule = v.write_rule;
	else if (v2->write_deny)
		rule = v2->write_rule;
	else if (v.read_deny)
		rule = v.read_rule;
	else if (exchange && v2->read_deny)
		rule = v2->read_rule;
	else if (v.guard || v2->guard || v2->guard_mandatory) {
		ev->flags |= SBX_EV_RENAME_GUARD;
		rule = v.guard ? v.guard_rule : v2->guard_rule;
	} else {
		return 0;
	}
	st->v.write_rule = rule;
	return 1;
}

static __always_inline int judge_two(struct dentry *d1, struct vfsmount *mnt1,
				     struct dentry *d2, struct vfsmount *mnt2,
				     __u32 op, bool exchange)
{
	struct sbx_event *ev;
	JUDGE(j);
	int r1, r2;
	__u32 i;

	r1 = judge_begin(&j);
	if (r1 <= 0)
		return r1;
	ev = &j.s->ev;
	r1 = resolve(d1, mnt1, &j.s->walk, ev->path, &ev->path_len);
	r2 = resolve(d2, mnt2, &j.s->walk, ev->path2, &ev->path2_len);
	ev->flags |= SBX_EV_PATH2;
	if (r1 == PATH_NOT_IN_TREE && r2 == PATH_NOT_IN_TREE)
		return 0;
	if (pseudo_fs(d1) || pseudo_fs(d2))
		return deny(&j, op, SBX_RULE_PSEUDO_FS);
	if (r1 != PATH_RESOLVED || r2 != PATH_RESOLVED) {
		ev->flags |= SBX_EV_PATH_UNRESOLVED;
		return deny(&j, op, SBX_RULE_NONE);
	}
	for_each_sandbox(&j, i) {
		if (!two_judge(ev, j.sb, exchange, &j.s->match))
			continue;
		r1 = deny(&j, op, j.s->match.v.write_rule);
		if (r1)
			return r1;	/* an auditing sandbox's denial is reported and the next judges */
	}
	return 0;
}

/* --- hooks --------------------------------------------------------------------- */

/*
 * Operations refused whatever the path (a raw block device, a device node,
 * a mount): the object's path, if it has one, only goes into the event.
 */
static __always_inline int deny_object(struct dentry *d, struct vfsmount *mnt, __u32 op, __u32 rule)
{
	JUDGE(j);
	int res;

	res = judge_begin(&j);
	if (res <= 0)
		return res;
	if (d)
		resolve(d, mnt, &j.s->walk, j.s->ev.path, &j.s->ev.path_len);
	return deny(&j, op, rule);
}

/* /dev/mem, /dev/kmem, /dev/port: the machine's memory and I/O ports. */
static __always_inline bool mem_device(struct file *file)
{
	__u32 rdev = BPF_CORE_READ(file, f_inode, i_rdev);
	__u32 minor = rdev & 0xfffff;

	return (rdev >> 20) == MEM_MAJOR && (minor == 1 || minor == 2 || minor == 4);
}

/*
 * How long a task remembers that it may use a descriptor (file_permission):
 * a rule change or an expired grant reaches descriptors already open within
 * this time. Keyed by the file, its dentry and mount, the access and the
 * sandbox, so a reused struct file names the same object or misses.
 */
#define FD_CACHE_NS	(10 * 1000 * 1000ULL)

/*
 * The entry remembering @file's use by this task, if any. The few entries
 * are all looked at: a direct-mapped slot by address made files allocated
 * 256 bytes apart (6.1's struct file) share one slot, so a loop over two
 * files missed on every call.
 */
static __always_inline struct sbx_fd_seen *fd_entry(struct sbx_task *t, __u64 file)
{
	for (int i = 0; i < SBX_FD_CACHE; i++)
		if (t->fd_seen[i].file == file)
			return &t->fd_seen[i];
	return NULL;
}

static __always_inline bool fd_cached(struct sbx_task *t, struct file *file, __u32 need,
				      __u64 sandbox, __u64 now)
{
	struct sbx_fd_seen *c = fd_entry(t, ptr_value(file));

	return c && c->dentry == ptr_value(file->f_path.dentry) && c->mnt == ptr_value(file->f_path.mnt) &&
	       c->need == need && c->sandbox == sandbox && now < c->until;
}

/*
 * The short ways, taken before any judging is set up (1: no judging): the
 * task is in no sandbox, or a use of @file is remembered for the sandbox
 * whose cgroup the task sits in (the common case: a task below its
 * sandbox's cgroup takes the long way, fd_use_known). A task has no task
 * storage until a use or a create is remembered: then nothing is.
 */
static __noinline int fd_use_recent(struct file *file, __u32 need)
{
	struct sbx_task *t;

	/* A task in no sandbox, the common case, leaves here (in a frame of its own: 6.1's stack is full). */
	if (task_outside())
		return 1;
	t = bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), NULL, 0);
	if (!t)
		return 0;
	return fd_cached(t, file, need, bpf_get_current_cgroup_id(), bpf_ktime_get_ns());
}

/* Is @file one of `run`'s stdin, stdout, stderr for the innermost sandbox @cgid? */
static __always_inline bool stdio_file(struct file *file, __u64 cgid)
{
	struct sbx_sandbox *sb = bpf_map_lookup_elem(&sandboxes, &cgid);
	__u64 ino;
	__u32 dev;

	if (!sb || (!sb->stdio_ino[0] && !sb->stdio_ino[1] && !sb->stdio_ino[2]))
		return false;
	ino = BPF_CORE_READ(file, f_inode, i_ino);
	dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	for (int i = 0; i < 3; i++)
		if (sb->stdio_ino[i] == ino && sb->stdio_dev[i] == dev)
			return true;
	return false;
}

/*
 * No sandbox of the chain judges this use: each only audits (a use repeats
 * what its open reported), or none may hold a descriptor its policy did
 * not see opened (SBX_SANDBOX_FD_JUDGE: the program is attached for
 * another sandbox's sake).
 */
static __always_inline bool none_judge_uses(struct judge *j)
{
	__u32 i;

	for_each_sandbox(j, i)
		if ((j->sb->flags & (SBX_SANDBOX_AUDIT | SBX_SANDBOX_FD_JUDGE)) == SBX_SANDBOX_FD_JUDGE)
			return false;
	return true;
}

/*
 * file_permission's shortcuts, in a frame of their own (the hook's stack is
 * what the walk and the event's calls add to): 1 when this use needs no
 * judging. Leaves the time and the innermost sandbox in scratch for
 * fd_use_remember().
 */
static __noinline int fd_use_known(struct judge *j, struct file *file, __u32 need)
{
	struct sbx_scratch *s = j->s;
	struct sbx_task *t;

	s->fd_now = bpf_ktime_get_ns();
	s->fd_inner = s->chain.cgid[(s->chain.n - 1) & (SBX_NEST_MAX - 1)];
	s->fd_cand = ptr_value(file);
	s->fd_cand_dentry = ptr_value(file->f_path.dentry);
	s->fd_cand_mnt = ptr_value(file->f_path.mnt);
	s->fd_cand_need = need;
	t = bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), NULL, 0);
	if ((t && fd_cached(t, file, need, s->fd_inner, s->fd_now)) || stdio_file(file, s->fd_inner) ||
	    none_judge_uses(j))
		return 1;
	s->quiet_grants = 1;
	judge_select(j, s->chain.strict);	/* as judge_begin left it, before none_judge_uses' loop */
	return 0;
}

/*
 * The use fd_use_known() looked at was allowed: remember it (nothing else
 * stays live across the walk), in the file's entry, else the one that
 * expires first. In a frame of its own: the hook's stack, with the walk's
 * calls on top, is as deep as 6.1's verifier allows.
 */
static __noinline void fd_use_remember(struct sbx_scratch *s)
{
	struct sbx_task *t = bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), NULL,
						   BPF_LOCAL_STORAGE_GET_F_CREATE);
	struct sbx_fd_seen *c;

	if (!t || !s)
		return;	/* no memory for it: the next use is judged again */
	c = fd_entry(t, s->fd_cand);
	if (!c) {
		c = &t->fd_seen[0];
		for (int i = 1; i < SBX_FD_CACHE; i++)
			if (t->fd_seen[i].until < c->until)
				c = &t->fd_seen[i];
	}

	c->file = s->fd_cand;
	c->dentry = s->fd_cand_dentry;
	c->mnt = s->fd_cand_mnt;
	c->need = s->fd_cand_need;
	c->sandbox = s->fd_inner;
	c->until = s->fd_now + FD_CACHE_NS;
}

/* --- the open memo: an open's allow, remembered on the inode ------------------- */

/*
 * docs/design.md, "The open memo"; the memo is struct sbx_open_memo
 * (sbx_abi.h). The next open of the same inode by a task of the same
 * cgroup, asking no more than the memo allowed, is allowed without being
 * judged again if verdict_gen has not moved and the path, walked again
 * without its names, is step for step the one recorded (memo_holds). Kept in inode storage: freed with the
 * inode, so an inode's memo never passes to another.
 */
struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sbx_open_memo);
} open_memo SEC(".maps");

#define MEMO_WORD(w)	(*(volatile __u32 *)&(w))

/*
 * A memo's words are written between these two, its lock held: the count
 * odd meanwhile, so a reader that saw it before or sees it after knows
 * (memo_write says why compiler barriers are enough).
 */
static __always_inline void memo_write_begin(struct sbx_open_memo *mo)
{
	MEMO_WORD(mo->seq) = mo->seq + 1;	/* odd: readers stay away */
	sbx_barrier();
}

static __always_inline void memo_write_end(struct sbx_open_memo *mo)
{
	sbx_barrier();
	MEMO_WORD(mo->seq) = mo->seq + 1;
}

/*
 * @d's parent, name hash and length, and rename count through plain loads
 * (@d a typed pointer: on 6.1, only one reached from the hook's file): 0,
 * or -1 when a rename is moving @d. The count is read before and after.
 * hash_len in two halves: 6.1 checks a typed load against the union's
 * first member, hash (x86: the low half).
 */
static __always_inline int memo_dentry_loads(struct dentry *d, struct dentry **parent, __u64 *hl, __u32 *seq)
{
	*seq = d->d_seq.seqcount.sequence;
	sbx_barrier();
	*parent = d->d_parent;
	*hl = d->d_name.hash | (__u64)d->d_name.len << 32;
	sbx_barrier();
	return (*seq & 1) || d->d_seq.seqcount.sequence != *seq || !*parent ? -1 : 0;
}

/*
 * The same for memo_step, whose @d is a number on 6.1. With plain loads,
 * memo_dentry_loads. With helper reads, one read
 * copies all three where they sit together (every kernel of the matrix),
 * the count first, at the lowest address: not a snapshot, but a rename
 * that lands during the copy leaves the count it had before and a parent
 * or name of after, which the compare refuses unless the rename changed
 * neither.
 */
static __always_inline int memo_dentry(struct dentry *d, __u64 *parent, __u64 *hl, __u32 *seq)
{
	__u32 seq_off = bpf_core_field_offset(struct dentry, d_seq);
	__u32 par_off = bpf_core_field_offset(struct dentry, d_parent);
	__u32 name_off = bpf_core_field_offset(struct dentry, d_name);
	__u32 base = seq_off & ~7;
	__u64 buf[6];

	if (plain_loads) {
		struct dentry *p;
		int res = memo_dentry_loads(d, &p, hl, seq);

		*parent = (__u64)p;
		return res;
	}
	if (par_off > base && name_off > base && par_off - base <= 40 && name_off - base <= 40 &&
	    !(par_off & 7) && !(name_off & 7)) {
		if (bpf_probe_read_kernel(buf, sizeof(buf), (void *)d + base))
			return -1;
		*seq = buf[0] >> ((seq_off & 4) * 8);
		*parent = buf[(par_off - base) / 8];
		*hl = buf[(name_off - base) / 8];
	} else {
		*seq = dentry_seq(d);
		*parent = (__u64)BPF_CORE_READ(d, d_parent);
		*hl = BPF_CORE_READ(d, d_name.hash_len);
	}
	return (*seq & 1) || !*parent ? -1 : 0;
}

enum { MEMO_RUNNING, MEMO_SAME, MEMO_DIFFERS, MEMO_AT_ROOT };

struct memo_walk {
	struct dentry *td;	/* memo_step_in_mount's: a typed pointer on every kernel */
	struct dentry *d;	/* memo_step's: typed with plain loads, a number read with helpers (6.1) */
	struct mount *m;
	struct mount_link ml;
	const struct sbx_open_memo *mo;
	__u64 h1, h2;
	__u32 state, first;	/* first: memo_step's first step */
};

/*
 * bpf_loop callback: step @i of the path while it is still in the file's
 * own mount, a dentry compared and folded into the digest as resolve.h
 * up_step folded it. Through typed pointers, from the hook's file down
 * d_parent: each field is a plain load on every kernel. 6.1 cannot turn a
 * number back into such a pointer (no bpf_rdonly_cast), so memo_step reads
 * with helpers there, one call a step, and this loop spares them for the
 * steps most paths have. At the mount's root it stops (MEMO_AT_ROOT) and
 * memo_step crosses. Each iteration is one step, so @i is its index.
 */
static long memo_step_in_mount(__u32 i, void *ctx)
{
	struct memo_walk *w = ctx;
	const struct sbx_open_memo *mo = w->mo;
	struct dentry *d = w->td, *parent;
	__u64 hl, k = i;
	__u32 seq;

	if (d == w->ml.root) {
		w->first = i;
		w->state = MEMO_AT_ROOT;
		return 1;
	}
	w->state = MEMO_DIFFERS;
	if (!mo || k >= mo->n || k >= SBX_MEMO_STEPS)
		return 1;
	/* A dentry that is its own parent is a root, not the mount's: not beneath it. */
	if (memo_dentry_loads(d, &parent, &hl, &seq) || parent == d || mo->p[memo_index(k)] != (__u64)d)
		return 1;
	walk_fold(&w->h1, &w->h2, hl);
	walk_fold(&w->h1, &w->h2, seq);
	w->td = parent;
	w->state = MEMO_RUNNING;
	return 0;
}

/*
 * bpf_loop callback: step @first + @i of the path from the root of the
 * file's mount on, against the memo's: a mount crossing, the namespace at
 * the end, or a dentry of a mount above.
 */
static long memo_step(__u32 i, void *ctx)
{
	struct memo_walk *w = ctx;
	const struct sbx_open_memo *mo = w->mo;
	struct dentry *d = w->d;
	struct mount *up;
	__u64 parent, hl, want, k = (__u64)i + w->first;	/* 64 bits: the bound below is then the index's own */
	__u32 seq;

	w->state = MEMO_DIFFERS;
	if (!mo || k >= mo->n || k >= SBX_MEMO_STEPS)
		return 1;
	want = mo->p[memo_index(k)];
	if (d == w->ml.root) {
		up = w->ml.parent;
		if (!up || up == w->m) {	/* the root of the mount tree: its namespace, the end */
			if (!want || want != (__u64)mount_ns(w->m))
				return 1;
			walk_fold(&w->h1, &w->h2, WALK_MARK_END);
			if (k + 1 == mo->n && w->h1 == mo->h1 && w->h2 == mo->h2)
				w->state = MEMO_SAME;
			return 1;
		}
		if (want != (__u64)up)
			return 1;
		walk_fold(&w->h1, &w->h2, WALK_MARK_MOUNT);
		w->d = w->ml.mountpoint;
		w->m = up;
		if (mount_link(up, &w->ml))
			return 1;
	} else {
		if (memo_dentry(d, &parent, &hl, &seq) || (__u64)d == parent || want != (__u64)d)
			return 1;
		walk_fold(&w->h1, &w->h2, hl);
		walk_fold(&w->h1, &w->h2, seq);
		w->d = plain_loads ? AS_KERNEL(dentry, parent) : (struct dentry *)parent;
	}
	w->state = MEMO_RUNNING;
	return 0;
}

/* The memo (@seq its count, read first) was made by a task of cgroup @cgid, and nothing changed since. */
static __always_inline bool memo_made_now(const struct sbx_open_memo *mo, __u32 seq, __u64 cgid)
{
	return !(seq & 1) && mo->cgid == cgid && mo->gen == verdict_gen;
}

/* The memo's words before its walk: made now (memo_made_now), of steps in mount @vm. */
static __always_inline bool memo_head_holds(const struct sbx_open_memo *mo, __u32 seq, __u64 cgid,
					    struct vfsmount *vm)
{
	return memo_made_now(mo, seq, cgid) && mo->mnt == (__u64)vm && mo->n;
}

/* --- nothing moved: a memo's walk spared (docs/design.md, "Nothing moved") ---------- */

/*
 * Where the kernel's two move counts are (sbx_abi.h struct sbx_moves),
 * found and seen to move by the loader before this object is loaded; 0:
 * not found, and every memo is walked. Constants to the verifier.
 */
const volatile __u64 move_counts[SBX_MOVES_N];

#define MOVES_UNKNOWN	(~0ULL)

/*
 * How long a settled memo goes unwalked at most, in jiffies: 1 s at
 * Debian's HZ of 250 (0.25 s at 1000, 2.5 s at 100). Each count moves by
 * two per change, under one lock for the whole system: in that time it
 * cannot come round its 32 bits to the value a memo holds.
 */
#define MOVES_WINDOW	250

/*
 * What memo_unmoved compares and memo_settle keeps, read before a walk:
 * the move counts, and the first step's dentry's parent, name and parent
 * directory. The dentry's address alone would not do: a dentry freed and
 * another made at the same address (the file's other hard link, looked up
 * again) is another path. The parent's address would not either: it can
 * be freed and reused too, in the same order, as a slab hands back what
 * was freed last. The name in the same directory is the same path, as
 * long as no directory moved (docs/design.md, "Nothing moved").
 */
struct memo_moves {
	__u64 counts;	/* moves_now() */
	__u64 parent;
	__u64 name;	/* d_name.hash_len */
	__u64 dir_inode;	/* the parent's inode */
	__u64 dir;	/* … its i_ino */
	__u32 dir_gen;	/* … and i_generation */
	__u32 pad;
};

/*
 * Dentries a file system may find stale and look up anew (NFS, FUSE,
 * kernfs, overlayfs, ext4's encrypted names): a directory
 * can then be found under another name without __d_move, so no count
 * tells. Values of every kernel of the matrix: macros up to 6.12, enum
 * dentry_flags after (the assert checks the latter, vmlinux.h's).
 */
#define MEMO_DCACHE_REVALIDATES	(4 | 2048)	/* DCACHE_OP_REVALIDATE | DCACHE_OP_WEAK_REVALIDATE */
_Static_assert(MEMO_DCACHE_REVALIDATES == (DCACHE_OP_REVALIDATE | DCACHE_OP_WEAK_REVALIDATE),
	       "dcache flags as vmlinux.h has them");

/*
 * The file systems whose directories a settled memo may name by inode
 * number and generation (uapi linux/magic.h): local, each new inode's
 * generation drawn at random or advanced on reuse (btrfs: a transaction's,
 * with numbers not handed back in a mounted subvolume). Any other is
 * walked every time (docs/design.md, "Nothing moved").
 */
static __always_inline bool memo_fs_vouched(unsigned long magic)
{
	return magic == 0x01021994 ||	/* TMPFS_MAGIC */
	       magic == 0xEF53 ||	/* EXT4_SUPER_MAGIC */
	       magic == 0x58465342 ||	/* XFS_SUPER_MAGIC */
	       magic == 0x9123683E ||	/* BTRFS_SUPER_MAGIC */
	       magic == 0xF2F52010;	/* F2FS_SUPER_MAGIC */
}

/*
 * Both move counts as one word (rename_lock's high, mount_lock's low), or
 * MOVES_UNKNOWN: counts not found, a change under way (odd), or a count
 * read as 0 (a plain load that faulted reads 0: never taken as a count).
 * A global function: verified once.
 */
__noinline __u64 moves_now(void)
{
	__u32 r = 0, m = 0;

	if (!move_counts[SBX_MOVES_RENAME] || !move_counts[SBX_MOVES_MOUNT])
		return MOVES_UNKNOWN;
	if (plain_loads) {
		r = AS_KERNEL(seqcount, move_counts[SBX_MOVES_RENAME])->sequence;
		m = AS_KERNEL(seqcount, move_counts[SBX_MOVES_MOUNT])->sequence;
	} else if (bpf_probe_read_kernel(&r, sizeof(r), (const void *)move_counts[SBX_MOVES_RENAME]) ||
		   bpf_probe_read_kernel(&m, sizeof(m), (const void *)move_counts[SBX_MOVES_MOUNT])) {
		return MOVES_UNKNOWN;
	}
	if (!r || !m || ((r | m) & 1))
		return MOVES_UNKNOWN;
	return (__u64)r << 32 | m;
}

/*
 * 1 when @mo's path was walked and held (memo_settle) less than
 * MOVES_WINDOW ago, with the move counts, the first dentry's parent, its
 * name and its parent directory as @now reads them: nothing in the kernel
 * has moved a dentry or a mount since, so the path from that dentry is
 * still the one walked.
 * The caller compares the dentry itself (a pointer is no argument of a
 * global function). Unsigned: past its deadline, a memo comes back into
 * a window only 2^32 jiffies later (199 days at HZ 250), and then its
 * counts would have to match too.
 * Global: one check for the verifier, however many states reach it.
 */
__noinline int memo_unmoved(const struct sbx_open_memo *mo, const struct memo_moves *now)
{
	__u32 left;

	if (!mo || !now || now->counts == MOVES_UNKNOWN || !mo->settled)
		return 0;
	left = mo->settled - (__u32)bpf_jiffies64();	/* 1 to MOVES_WINDOW while it stands */
	return left - 1 < MOVES_WINDOW && mo->moves == now->counts && mo->first_parent == now->parent &&
	       mo->first_name == now->name && mo->first_dir_inode == now->dir_inode && mo->first_dir == now->dir &&
	       mo->first_dir_gen == now->dir_gen;
}

/*
 * After @mo's path held a walk that began when @seen was read, and the
 * memo's count still reads @seq (nothing rewrote it): let the next checks
 * within MOVES_WINDOW go by memo_unmoved. A writer like any other (lock
 * and count): a memo another CPU is writing is left as it is, and a
 * memo_write that finds this one at work keeps nothing, which costs only
 * a walk.
 */
__noinline int memo_settle(struct sbx_open_memo *mo, __u32 seq, const struct memo_moves *seen)
{
	__u32 until;

	if (!mo || !seen || seen->counts == MOVES_UNKNOWN || !sbx_trylock(&mo->lock))
		return 0;
	if (MEMO_WORD(mo->seq) == seq) {
		until = (__u32)bpf_jiffies64() + MOVES_WINDOW;
		memo_write_begin(mo);
		mo->moves = seen->counts;
		mo->first_parent = seen->parent;
		mo->first_name = seen->name;
		mo->first_dir_inode = seen->dir_inode;
		mo->first_dir = seen->dir;
		mo->first_dir_gen = seen->dir_gen;
		mo->settled = until ? until : 1;	/* 0 is "not settled": one jiffy later instead */
		memo_write_end(mo);
	}
	sbx_unlock(&mo->lock);
	return 0;
}

/*
 * 1 when the path from dentry @d in mount @vm (typed pointers) is, step
 * for step, the one @mo recorded: nothing moved since it was last walked
 * (memo_unmoved), or walked again. @mv: what was read before the walk,
 * for the caller's memo_settle once it has seen the memo's own count
 * unchanged; its counts MOVES_UNKNOWN when nothing is to be settled.
 */
static __always_inline int memo_path_holds(const struct sbx_open_memo *mo, struct dentry *d,
					   struct vfsmount *vm, struct memo_moves *mv)
{
	struct memo_walk w = {};
	struct dentry *parent = NULL;
	struct inode *dir = NULL;
	__u32 dseq;

	mv->counts = moves_now();
	if (memo_dentry_loads(d, &parent, &mv->name, &dseq))
		mv->counts = MOVES_UNKNOWN;	/* a rename moving it: the walk refuses it */
	/* Plain loads on every kernel (typed from the hook's own pointers). */
	if (parent)
		dir = parent->d_inode;
	mv->parent = (__u64)parent;
	mv->dir_inode = (__u64)dir;
	mv->dir = 0;
	mv->dir_gen = 0;
	mv->pad = 0;
	if (dir) {
		mv->dir = dir->i_ino;
		mv->dir_gen = dir->i_generation;
	}
	if (!dir || ((d->d_flags | parent->d_flags) & MEMO_DCACHE_REVALIDATES) || !memo_fs_vouched(d->d_sb->s_magic))
		mv->counts = MOVES_UNKNOWN;
	if (mo->p[0] == (__u64)d && memo_unmoved(mo, mv)) {
		mv->counts = MOVES_UNKNOWN;
		return 1;
	}
	w.mo = mo;
	w.td = d;
	w.m = plain_loads ? AS_KERNEL(mount, real_mount(vm)) : real_mount(vm);
	w.h1 = SBX_HASH_INIT;
	w.h2 = SBX_HASH2_INIT;
	if (mount_link(w.m, &w.ml))
		return 0;
	bpf_loop(SBX_MEMO_STEPS, memo_step_in_mount, &w, 0);
	if (w.state != MEMO_AT_ROOT)
		return 0;
	w.d = w.ml.root;
	bpf_loop(SBX_MEMO_STEPS, memo_step, &w, 0);
	return w.state == MEMO_SAME;
}

_Static_assert(SBX_MEMO_READ == NEED_READ && SBX_MEMO_WRITE == NEED_WRITE, "a memo's need is an open's");

/*
 * 1 when @file (opened asking @need, by a task of cgroup @cgid) is of an
 * inode whose memo still holds and allowed that: its path is the one
 * judged, under the same sandboxes and rules. In a frame of its own:
 * file_open's judging path already uses the stack the verifier allows (6.1).
 */
static __noinline int memo_holds(struct inode *inode, struct file *file, __u64 cgid, __u32 need)
{
	struct sbx_open_memo *mo;
	struct memo_moves mv;
	int same;
	__u32 seq;

	if (!inode || !file)
		return 0;
	mo = bpf_inode_storage_get(&open_memo, inode, NULL, 0);
	if (!mo)
		return 0;
	seq = MEMO_WORD(mo->seq);
	sbx_barrier();	/* the count before the memo's words */
	if (!memo_head_holds(mo, seq, cgid, file->f_path.mnt) || (mo->need & need) != need)
		return 0;
	same = memo_path_holds(mo, file->f_path.dentry, file->f_path.mnt, &mv);
	sbx_barrier();	/* the count again after them: no writer came between */
	if (!same || MEMO_WORD(mo->seq) != seq)
		return 0;
	memo_settle(mo, seq, &mv);
	return 1;
}

/* A recorded walk of @n steps a memo can hold: 1 to SBX_MEMO_STEPS. */
static __always_inline bool memo_fits(__u32 n)
{
	return n && n <= SBX_MEMO_STEPS;
}

/*
 * The walk recorded in @s, as of verdict_gen @gen for a task of cgroup
 * @cgid, allowed @need (SBX_MEMO_*), into @mo (whose lock the caller holds).
 */
static __always_inline void memo_record(struct sbx_open_memo *mo, struct sbx_scratch *s, __u64 gen, __u64 cgid,
					__u32 n, __u32 need)
{
	mo->cgid = cgid;
	mo->gen = gen;
	mo->mnt = s->walk.arg_m;
	mo->h1 = s->walk.rec_h1;
	mo->h2 = s->walk.rec_h2;
	mo->n = n;
	mo->need = need;
	mo->settled = 0;	/* walked once before memo_unmoved vouches for it */
	/* One helper call, not SBX_MEMO_STEPS stores in every program that keeps a memo: a miss's cost. */
	if (bpf_probe_read_kernel(mo->p, sizeof(mo->p), s->walk.rec_p))
		mo->n = 0;	/* never (map memory to map memory); and then it holds nothing */
}

/*
 * What @mo (its lock held) allowed, if it is of the very walk @s recorded
 * (@n steps, 1 to SBX_MEMO_STEPS), as of @gen for cgroup @cgid: judged of
 * this path, now; else 0. Every word, not the digest alone: a path that
 * changed between an open's memo check and its walk (a rename by another
 * thread) must not lend its old access to the new one. Without branches:
 * each would have the verifier walk the rest of memo_keep once more.
 */
static __always_inline __u32 memo_same_walk_need(const struct sbx_open_memo *mo, const struct sbx_scratch *s,
						 __u64 gen, __u64 cgid, __u32 n)
{
	__u64 diff = (mo->n ^ n) | (mo->cgid ^ cgid) | (mo->gen ^ gen) | (mo->mnt ^ s->walk.arg_m) |
		     (mo->h1 ^ s->walk.rec_h1) | (mo->h2 ^ s->walk.rec_h2);
	__u32 steps = (1u << n) - 1;	/* bit k: step k was recorded */

#pragma unroll
	for (int k = 0; k < SBX_MEMO_STEPS; k++)
		diff |= (mo->p[k] ^ s->walk.rec_p[k]) & -(__u64)((steps >> k) & 1);
	/* All ones when nothing differs: ((diff | -diff) >> 63) is 1 when something does. */
	return mo->need & (__u32)(((diff | -diff) >> 63) - 1);
}

/*
 * memo_keep's writing of memo @mo (map memory: the inode's storage) with
 * the walk recorded in @s (@n steps, 1 to SBX_MEMO_STEPS), allowing @need.
 * A memo of the same walk keeps what it allowed too (a file read, then
 * written, then read: each open judged once); any other is replaced. A
 * memo another CPU is writing is left to that one. The seqlock relies on
 * x86 keeping loads in order and stores in order (the only architecture
 * the programs are built for): compiler barriers, no fences. A global
 * function: the verifier checks it once, not once for each way through
 * file_open's judging that reaches it.
 */
__noinline int memo_write(struct sbx_open_memo *mo, struct sbx_scratch *s, __u64 gen, __u64 cgid, __u32 need)
{
	__u32 n;

	if (!mo || !s)
		return 0;
	n = s->walk.rec_n;
	if (!memo_fits(n) || !sbx_trylock(&mo->lock))
		return 0;
	need |= memo_same_walk_need(mo, s, gen, cgid, n);
	memo_write_begin(mo);
	memo_record(mo, s, gen, cgid, n, need & (SBX_MEMO_READ | SBX_MEMO_WRITE));
	memo_write_end(mo);
	sbx_unlock(&mo->lock);
	return 0;
}

/*
 * After an open of @inode asking @need (NEED_*) was allowed without a
 * word, its walk recorded in @s (judged by @s's chain as of verdict_gen
 * @gen, by a task of cgroup @cgid): remember it (memo_write), unless the
 * task has moved to another cgroup since, whose sandboxes the chain may
 * not be.
 */
static __noinline void memo_keep(struct inode *inode, struct sbx_scratch *s, __u64 gen, __u64 cgid, __u32 need)
{
	struct sbx_open_memo *mo;

	if (!inode || !s || !s->walk.rec_ok || bpf_get_current_cgroup_id() != cgid)
		return;
	/* Tested before the storage is made; memo_write, verified on its own, tests it again. */
	if (!memo_fits(s->walk.rec_n))
		return;
	mo = bpf_inode_storage_get(&open_memo, inode, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (mo)
		memo_write(mo, s, gen, cgid, need);
}

/*
 * How long an open's allow stands for its truncation (write_remember):
 * the same system call, microseconds later. (A WROTE_SPOKE note's open
 * tests spoke_until instead.)
 */
#define WROTE_WINDOW_NS	(1000 * 1000ULL)

/*
 * What a note left by write_remember is for: the open that follows a
 * create path_mknod allowed with a word (created_now judges it too), or
 * the truncation that follows an open(O_TRUNC) (truncate_opened). Each
 * hook takes only its own kind.
 */
enum { WROTE_NONE, WROTE_SPOKE, WROTE_TRUNC };

/*
 * The words of @w (a task's note, its file already in) that are numbers:
 * judged in cgroup @cgid as of verdict_gen @gen, for @kind (WROTE_NONE:
 * forgotten). Forgotten too when the task has moved since @cgid was read,
 * as memo_keep does: the chain that judged may not be that cgroup's. A
 * global function, verified once: as part of write_remember, the verifier
 * walked it again for every state of the judging that reaches it.
 */
__noinline int wrote_seal(struct sbx_wrote *w, __u64 gen, __u64 cgid, __u32 kind)
{
	if (!w)
		return 0;
	if (bpf_get_current_cgroup_id() != cgid)
		kind = WROTE_NONE;
	w->cgid = cgid;
	w->gen = gen;
	w->kind = kind;
	w->until = kind ? bpf_ktime_get_ns() + WROTE_WINDOW_NS : 0;
	return 0;
}

/*
 * A note of @kind (WROTE_*) for the same call's next hook, on dentry
 * @dentry of mount @mnt, judged by the sandbox of cgroup @cgid as of
 * verdict_gen @gen: WROTE_TRUNC, an open(O_TRUNC) was just allowed to
 * write it without a word (write_remembered); WROTE_SPOKE, path_mknod
 * allowed its create with one (created_now); WROTE_NONE: forget what an
 * earlier call left. The cgroup is the one read before the chain was
 * taken (wrote_seal keeps the note only if the task is still there): a
 * task moved while it was judged carries nothing into a sandbox that did
 * not judge it.
 */
static __always_inline void write_remember(__u64 dentry, __u64 mnt, __u64 gen, __u64 cgid, __u32 kind)
{
	/* Made here when there is something to keep: without a note, the next hook judges. */
	struct sbx_task *t = bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), NULL,
						   kind ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);

	if (!t)
		return;
	t->wrote.dentry = dentry;
	t->wrote.mnt = mnt;
	wrote_seal(&t->wrote, gen, cgid, kind);
}

/*
 * 1 when write_remember kept a note of @kind for this very dentry @dentry
 * of mount @mnt, judged for this task in cgroup @cgid, within
 * WROTE_WINDOW_NS, and no sandbox or rule changed since. The note is used
 * once, hit or miss, so it stands for that one system call.
 */
static __always_inline int write_remembered(__u64 dentry, __u64 mnt, __u64 cgid, __u32 kind)
{
	struct sbx_task *t = bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), NULL, 0);
	int hit;

	if (!t || !t->wrote.until)
		return 0;
	hit = t->wrote.dentry == dentry && t->wrote.mnt == mnt && t->wrote.cgid == cgid &&
	      t->wrote.kind == kind && t->wrote.gen == verdict_gen && bpf_ktime_get_ns() < t->wrote.until;
	t->wrote.until = 0;
	return hit;
}

/*
 * FMODE_CREATED, the f_mode bit the kernel sets on a file its open has
 * just created, as the loader knows it for this kernel, and only while
 * path_mknod is loaded (loader.c created_bit); 0: such opens are judged.
 */
const volatile __u32 fmode_created;

/*
 * Until when (jiffies) a WROTE_SPOKE note may be waiting for its open: set
 * by whoever leaves one, so an open that created its file looks for a note
 * only then, and otherwise costs no task-storage lookup, in a sandbox or
 * not (most creates, anywhere). SPOKE_WINDOW covers a create that waits on
 * its file system; one slower than that goes unjudged, which loses its
 * second record, not a verdict: the create was allowed.
 */
__u64 spoke_until;
#define SPOKE_WINDOW	250	/* jiffies: 1 s at Debian's HZ of 250, 250 ms at 1000 */

/*
 * 1 when this open (O_CREAT, for writing only) has just created @file, a
 * regular file: the kernel marks a file so (FMODE_CREATED) only while
 * O_CREAT stands, which lookup_open takes away when this very call's
 * path_mknod refused (may_o_create): so path_mknod allowed the same need
 * of the same path first (NFSv2/3 marks an existing file too: the same
 * holds). The kernel then skips its own permission check too (do_open).
 * Judged all the same when that path_mknod spoke (an audit record, a
 * grant's use: its note, WROTE_SPOKE): the open reports its own. An
 * O_RDWR create is judged: the read was not asked at path_mknod. The
 * file's type is tested as well, though a create makes only regular
 * files: no device node goes by this.
 */
static __always_inline bool created_now(struct file *file)
{
	struct sbx_task *t;

	if (!fmode_created || !(file->f_mode & fmode_created) || (file->f_inode->i_mode & S_IFMT) != S_IFREG)
		return false;
	if (bpf_jiffies64() > spoke_until)
		return true;	/* no note to look for */
	t = bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), NULL, 0);
	if (t && t->wrote.until && t->wrote.kind == WROTE_SPOKE && t->wrote.dentry == (__u64)file->f_path.dentry) {
		t->wrote.until = 0;	/* used once, as write_remembered's */
		return false;
	}
	return true;
}

/*
 * 1 when a truncation of dentry @dentry in mount @mnt by a task of cgroup
 * @id (not known to be outside: the hook's short way asked) needs no
 * judging: it is open(O_TRUNC)'s, whose open was just allowed to write
 * this very file (write_remembered). truncate(2) and ftruncate(2), and an
 * O_RDONLY|O_TRUNC open, are judged.
 */
static __noinline int truncate_opened(__u64 dentry, __u64 mnt, __u64 id)
{
	return write_remembered(dentry, mnt, id, WROTE_TRUNC);
}

/*
 * After an open of @file asking @need was allowed without a word (as of
 * verdict_gen @gen): an open(O_TRUNC) for writing truncates the file next,
 * in the same call, which then asks nothing this open was not just allowed
 * (truncate_opened). Tested here, after the judging, from the file: a flag
 * carried through it would have the verifier walk the judging twice.
 */
static __always_inline void open_told(struct file *file, __u32 need, __u64 gen, __u64 cgid)
{
	if ((need & NEED_WRITE) && (file->f_flags & O_TRUNC))
		write_remember((__u64)file->f_path.dentry, (__u64)file->f_path.mnt, gen, cgid, WROTE_TRUNC);
}

/*
 * An open (@flag 0), a received descriptor or a descriptor used: devices
 * first, then the policy. Only file_permission (SBX_EV_FD_USE) caches;
 * on use, a grant allows silently (the open reported it) and an
 * audit-only chain is not judged again. An open allowed without a word
 * keeps a memo on @memo (its inode, a trusted pointer; NULL: none) and
 * tells the truncation that follows, if any (open_told).
 */
static __always_inline int judge_fd(struct file *file, __u32 need, __u32 flag, struct inode *memo, __u64 cgid)
{
	__u32 op = (need & NEED_WRITE) ? SBX_OP_WRITE : SBX_OP_READ, type;
	/*
	 * Read before the chain is taken, as @cgid (the task's cgroup) was: a
	 * change after it voids what this call keeps, and a move to another
	 * cgroup keeps nothing (memo_keep reads the cgroup again).
	 */
	__u64 gen = memo ? verdict_gen : 0;
	JUDGE(j);
	int res;

	/* file_permission: fd_use_recent looked; file_open: its short way, which read @cgid */
	res = judge_begin_as(&j, flag == SBX_EV_FD_USE || cgid, cgid);
	if (res <= 0)
		return res;
	if (flag == SBX_EV_FD_USE && fd_use_known(&j, file, need))
		return 0;
	j.s->ev.flags |= flag;
	type = file->f_inode->i_mode & S_IFMT;
	if (type == S_IFBLK || (type == S_IFCHR && mem_device(file))) {
		/* A sandbox gets no raw block device (reading one reads every file on it), nor the machine's memory. */
		resolve_file(file, &j.s->walk, j.s->ev.path, &j.s->ev.path_len);
		return deny(&j, op, type == S_IFBLK ? SBX_RULE_DEVICE : SBX_RULE_KERNEL_FILES);
	}
	j.s->emitted = 0;
	j.s->walk.rec_ok = 0;
	j.s->walk.rec_want = memo && (type == S_IFREG || type == S_IFDIR) &&
			     !((need & NEED_WRITE) && write_by_task(file->f_inode->i_sb));
	res = resolve_file(file, &j.s->walk, NULL, NULL);
	res = judge_path(&j, res, file->f_path.dentry, op, need);
	if (flag == SBX_EV_FD_USE && !res && !j.s->emitted)
		fd_use_remember(j.s);
	if (memo && !res && !j.s->emitted) {
		if (j.s->walk.rec_ok)
			memo_keep(memo, j.s, gen, cgid, need);
		open_told(file, need, gen, cgid);
	}
	return res;
}

/* What an open file's mode asks of the policy: NEED_READ, NEED_WRITE, both, or nothing (O_PATH). */
static __always_inline __u32 file_need(struct file *file)
{
	__u32 need = 0;

	if (file->f_mode & FMODE_READ)
		need |= NEED_READ;
	if (file->f_mode & FMODE_WRITE)
		need |= NEED_WRITE;
	return need;
}

/* --- the directory memo: a directory's judging, remembered for the writes in it -- */

/*
 * docs/design.md, "The directory memo". A write in a directory (a file
 * created or removed there) was judged from its whole path; the path's
 * directory part is the same for every name in it. So after a write was
 * allowed without a word, by a chain of one sandbox, the directory's
 * inode keeps the directory's walk (as an open memo holds a file's: the
 * same steps, digest, cgroup and generation) and the matcher's state at
 * the end of its path. The next write there by a task of the same cgroup
 * walks the directory again without names (memo_path_holds) and matches
 * its one name on from that state (fs_match, FS_MATCH_RESUME): the
 * verdict the whole path gets. Only one that says nothing (allowed, no
 * event) is taken from it; a denial, a grant's use or anything else is
 * judged again from the start, which builds the path its event needs.
 */
struct dir_memo {
	struct sbx_open_memo path;	/* the directory's: its seq and lock cover the whole memo */
	struct fs_state st;		/* the matcher at its path's end; st.base: where a name starts */
};

struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dir_memo);
} dir_memo SEC(".maps");
_Static_assert(sizeof(struct dir_memo) == 432, "docs/design.md gives a directory memo's size");

/* Where a dentry keeps a short name on 6.1 and 6.12 (7.x's is vmlinux.h's d_shortname, a union). */
struct dentry___iname {
	unsigned char d_iname[32];
} __attribute__((preserve_access_index));

/*
 * Where @d keeps a name shorter than its inline store, and in *@size that
 * store's bytes (32 on 6.1, 40 on 6.12 and 7.x): CO-RE for both shapes.
 */
static __always_inline const char *dentry_store(struct dentry *d, __u32 *size)
{
	if (bpf_core_field_exists(d->d_shortname)) {
		*size = bpf_core_field_size(d->d_shortname);
		return (const char *)d + bpf_core_field_offset(d->d_shortname);
	}
	*size = bpf_core_field_size(struct dentry___iname, d_iname);
	return (const char *)d + bpf_core_field_offset(struct dentry___iname, d_iname);
}

/*
 * 1 when @d's name (@len bytes) changes nothing that directory memo @dm's
 * state says, and that state allows writing without a word: what
 * fs_match resumed from it, and fs_says, would say, without a work slot,
 * the state's copy or the walk (fs_name_clear). Only a name the dentry
 * keeps inline and shorter than 32 bytes, loaded as four words (its store
 * is at least 32 bytes on every kernel): the NUL ends it there. 0: match
 * the name the whole way. The caller checks the memo's count after.
 */
static __always_inline int dir_name_clear(const struct dir_memo *dm, struct dentry *dentry, __u32 len)
{
	struct dentry *d = UNTRUSTED(dentry, dentry);
	__u32 size;
	const char *store = dentry_store(d, &size);

	if (!len || len > 31 || size < 32 || (__u64)d->d_name.name != (__u64)store)
		return 0;	/* a length of 0 would be the stand-in's "no" */
	if (fs_name_clear(&dm->st, *(const __u64 *)store, *(const __u64 *)(store + 8),
			  *(const __u64 *)(store + 16), *(const __u64 *)(store + 24)) != len)
		return 0;
	return !dm->st.v.write_deny && !grant_rule(dm->st.v.write_rule);
}

enum { DIR_MEMO_JUDGE, DIR_MEMO_ALLOWS, DIR_MEMO_NONE };

/*
 * What the directory memo says of @op (a write) of @dentry in directory
 * @dir (@dinode its inode), by a task of cgroup @cgid: DIR_MEMO_ALLOWS
 * when the directory's path is still the one judged, under the same
 * sandbox and rules, and its name, matched on from the memo's state, says
 * nothing; DIR_MEMO_NONE when, as of now, it keeps none for this cgroup
 * (dir_memo_keep's marker): judge, and do not try keeping one again;
 * DIR_MEMO_JUDGE otherwise. A frame of its own, as memo_holds.
 */
static __noinline int dir_memo_says(struct inode *dinode, const struct path *dir, struct dentry *dentry,
				    __u32 op, __u64 cgid)
{
	struct sbx_scratch *s;
	struct dir_memo *dm;
	__u32 seq, len, rule;
	int says = DIR_MEMO_JUDGE;
	struct memo_moves mv;

	if (!dinode || !dir || !dentry)
		return DIR_MEMO_JUDGE;
	dm = bpf_inode_storage_get(&dir_memo, dinode, NULL, 0);
	if (!dm)
		return DIR_MEMO_JUDGE;
	seq = MEMO_WORD(dm->path.seq);
	sbx_barrier();	/* the count before the memo's words */
	if (!dm->path.n && memo_made_now(&dm->path, seq, cgid))
		return DIR_MEMO_NONE;
	if (!memo_head_holds(&dm->path, seq, cgid, dir->mnt) ||
	    !memo_path_holds(&dm->path, dir->dentry, dir->mnt, &mv))
		return DIR_MEMO_JUDGE;
	if (dir_name_clear(dm, dentry, dentry->d_name.len)) {
		sbx_barrier();	/* the count again after everything taken from the memo */
		if (MEMO_WORD(dm->path.seq) != seq)
			return DIR_MEMO_JUDGE;
		memo_settle(&dm->path, seq, &mv);
		return DIR_MEMO_ALLOWS;
	}
	/*
	 * A name that may be a rule's key, or a long one: matched on from a
	 * copy of the state. Helper reads, the state's and the name's: a
	 * rarer way than the one above, and one the verifier walks in both
	 * programs (map memory to map memory, never refused).
	 */
	s = work_get();
	if (!s)
		return DIR_MEMO_JUDGE;
	if (bpf_probe_read_kernel(&s->match, sizeof(s->match), &dm->st)) {
		work_put(s);
		return DIR_MEMO_JUDGE;
	}
	sbx_barrier();	/* the count again after everything taken from it */
	if (MEMO_WORD(dm->path.seq) != seq) {
		work_put(s);
		return DIR_MEMO_JUDGE;
	}
	memo_settle(&dm->path, seq, &mv);
	len = dentry->d_name.len;
	barrier_var(len);	/* masked after the load: 6.1 loses a range test the compiler folds */
	len &= SBX_NAME_MAX;
	/* The parent's lock is held (path_mknod, path_unlink): no rename changes the name meanwhile. */
	if (len && len == dentry->d_name.len && !bpf_probe_read_kernel(s->walk.b, len, dentry->d_name.name)) {
		fs_match((struct sbx_path *)s->walk.b, len, s->match.policy_id, s->match.mask | FS_MATCH_RESUME,
			 &s->match);
		if (!fs_says(&s->match.v, &op, NEED_WRITE, &rule))
			says = DIR_MEMO_ALLOWS;
	}
	work_put(s);
	return says;
}

/*
 * After a write in directory @dir (@dinode) was allowed without a word by
 * @s's chain (verdict_gen @gen, a task of cgroup @cgid): remember the
 * directory's walk and the matcher's state at its end, when the chain is
 * one sandbox. Paid once per directory and generation; procfs is left
 * out (write_by_task). Where no memo can be kept (a path
 * of more than SBX_MEMO_STEPS steps, one that does not resolve, a state an
 * entry that expires said something in), a marker says so for this
 * cgroup and generation: the writes there are judged without a second
 * walk each.
 */
static __noinline void dir_memo_keep(struct inode *dinode, const struct path *dir, struct sbx_scratch *s,
				     __u64 gen, __u64 cgid)
{
	const struct sbx_sb_copy *sb;
	struct walk_buf *walk;
	struct dir_memo *dm;
	__u32 n = 0;

	if (!dinode || !dir || !s || s->chain.n != 1 || write_by_task(dir->dentry->d_sb))
		return;
	walk = &s->walk;
	walk->rec_want = 1;
	if (resolve(dir->dentry, dir->mnt, walk, NULL, NULL) == PATH_RESOLVED && walk->rec_ok &&
	    memo_fits(walk->rec_n)) {
		sb = &s->chain.sb[0];
		fs_match((struct sbx_path *)(walk->b + (walk->start & (SBX_PATH_MAX - 1))), walk->len,
			 sb->policy_id, match_mask(sb->any_depth_mask, NEED_WRITE), &s->match);
		if (!s->match.stop && !s->match.expiring)
			n = walk->rec_n;
	}
	if (bpf_get_current_cgroup_id() != cgid)
		return;
	/* Where a name in it starts: after "/" for the root, after "/dir/" otherwise. */
	s->match.base = walk->len == 1 ? 1 : walk->len + 1;
	dm = bpf_inode_storage_get(&dir_memo, dinode, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!dm || !sbx_trylock(&dm->path.lock))
		return;
	memo_write_begin(&dm->path);
	memo_record(&dm->path, s, gen, cgid, n, SBX_MEMO_WRITE);	/* n 0: the marker */
	if (n && bpf_probe_read_kernel(&dm->st, sizeof(dm->st), &s->match))
		dm->path.n = 0;	/* never (map memory to map memory); and then it allows nothing */
	memo_write_end(&dm->path);
	sbx_unlock(&dm->path.lock);
}

/*
 * A write @op of @dentry in directory @dir (@dinode its inode, a trusted
 * pointer for inode storage): by the directory's memo if it holds, else
 * judged, and then the memo kept. @created: path_mknod of a regular file,
 * whose open goes by the kernel's mark unless this allow spoke
 * (created_now): a note says so then. The memo allows only without a word.
 * @id: the task's cgroup, read by the hook's short way (outside_id).
 */
static __always_inline int judge_in_dir(struct inode *dinode, const struct path *dir, struct dentry *dentry,
					__u32 op, bool created, __u64 id)
{
	/* Read before the chain is taken, after the cgroup id (@id; judge_fd says why). */
	__u64 gen = verdict_gen;
	JUDGE(j);
	int res, says;

	says = dir_memo_says(dinode, dir, dentry, op, id);
	if (says == DIR_MEMO_ALLOWS)
		return 0;
	res = judge_begin_as(&j, true, id);
	if (res <= 0)
		return res;
	j.s->emitted = 0;
	res = resolve(dentry, dir->mnt, &j.s->walk, NULL, NULL);
	res = judge_path(&j, res, dentry, op, NEED_WRITE);
	if (created && !res && j.s->emitted) {
		spoke_until = bpf_jiffies64() + SPOKE_WINDOW;	/* before the note: an open that sees it looks */
		write_remember((__u64)dentry, (__u64)dir->mnt, gen, id, WROTE_SPOKE);
	}
	if (!res && !j.s->emitted && says == DIR_MEMO_JUDGE)
		dir_memo_keep(dinode, dir, j.s, gen, id);
	return res;
}

SBX_LSM(file_open, fs_file_open, struct file *file)
{
	struct inode *inode;
	__u64 id, gen;
	__u32 need;

	/*
	 * Nothing before it: every open on the host comes here, and almost all
	 * are by tasks in no sandbox. A cgroup whose sandbox is arming is never
	 * known to be outside (sbx_arming_here) once its attach has bumped
	 * sandbox_gen, which it does before it returns: its exec still arms it.
	 * @id: the task's cgroup.
	 */
	if (outside_id(&id))
		return 0;
	inode = file->f_inode;	/* trusted, for the memo's inode storage */
	file = UNTRUSTED(file, file);

	/* A sandbox attached for a container engine goes in force with the first exec (sbx_abi.h). */
	if ((file->f_flags & __FMODE_EXEC) && arming_set)
		sbx_arm_current();
	need = file_need(file);
	if (!need)
		return 0;	/* O_PATH */
	/* O_CREAT too: no mark stands for a create path_mknod did not judge (O_TMPFILE's). */
	if (need == NEED_WRITE && (file->f_flags & O_CREAT) && created_now(file))
		return 0;
	gen = verdict_gen;	/* before the memo is read: what open_told tells is of then */
	/* Allowed at once if the memo of an earlier open still holds and allowed this much. */
	if (memo_holds(inode, file, id, need)) {
		open_told(file, need, gen, id);
		return 0;
	}
	return judge_fd(file, need, 0, inode, id);
}

/*
 * A descriptor the sandbox did not open itself: one passed over a unix
 * socket (SCM_RIGHTS) or taken with pidfd_getfd is judged as if the task
 * had opened it with the same access. Refused, it is not installed (the
 * receiver sees MSG_CTRUNC).
 */
SBX_LSM(file_receive, fs_file_receive, struct file *file)
{
	__u32 need;

	file = UNTRUSTED(file, file);

	need = file_need(file);
	return need ? judge_fd(file, need, SBX_EV_FD_RECEIVED, NULL, 0) : 0;
}

/*
 * Every read and write through a descriptor (read, write, splice,
 * sendfile, copy_file_range, getdents) is judged again on use, so one
 * opened before the sandbox started and inherited, or opened before a rule
 * changed, is held to the policy as it is now. The exception is `run`'s
 * stdin, stdout and stderr where they are files (struct sbx_sandbox
 * stdio_*): the caller's redirects, which the caller opened; terminals,
 * pipes and sockets pass anyway (no path). Regular files and directories
 * only; block and memory devices are refused outright. An allow is
 * remembered per task for FD_CACHE_NS (fd_cached; SBX_FD_CACHE files at
 * once), so a read loop pays for one walk, not one per call, and, where
 * the task sits in its sandbox's cgroup, not even for finding its sandbox
 * (fd_use_recent).
 */
SBX_LSM(file_permission, fs_file_permission, struct file *file, int mask)
{
	__u32 need = 0, type;

	file = UNTRUSTED(file, file);

	if (mask & MAY_READ)
		need |= NEED_READ;
	if (mask & (MAY_WRITE | MAY_APPEND))
		need |= NEED_WRITE;
	if (!need)
		return 0;
	type = file->f_inode->i_mode & S_IFMT;
	if (type != S_IFREG && type != S_IFDIR && type != S_IFBLK && type != S_IFCHR)
		return 0;
	if (type == S_IFCHR && !mem_device(file))
		return 0;
	if (fd_use_recent(file, need))
		return 0;
	return judge_fd(file, need, SBX_EV_FD_USE, NULL, 0);
}


SBX_LSM(path_mknod, fs_path_mknod, const struct path *dir, struct dentry *dentry, umode_t mode,
	     unsigned int dev)
{
	struct inode *dinode;
	__u64 id;

	if (outside_id(&id))
		return 0;	/* first, as in file_open */
	dinode = dir->dentry->d_inode;	/* trusted, for the directory memo's inode storage */
	dir = UNTRUSTED(path, dir);
	dentry = UNTRUSTED(dentry, dentry);
	if ((mode & S_IFMT) == S_IFBLK || (mode & S_IFMT) == S_IFCHR)
		/* A new device node would open any device under a writable name. */
		return deny_object(dentry, dir->mnt, SBX_OP_CREATE, SBX_RULE_DEVICE);
	/* A regular file's open then goes by the kernel's mark (created_now), unless this allow spoke. */
	return judge_in_dir(dinode, dir, dentry, SBX_OP_CREATE, (mode & S_IFMT) == S_IFREG, id);
}

/*
 * mkdir and rmdir are judged whole each time: the directory memo would
 * add its code to two more programs, which every load without a daemon
 * verifies, for calls far rarer than a file's create and unlink.
 */
SBX_LSM(path_mkdir, fs_path_mkdir, const struct path *dir, struct dentry *dentry, umode_t mode)
{
	dir = UNTRUSTED(path, dir);
	return judge_one(dentry, dir->mnt, SBX_OP_MKDIR, NEED_WRITE);
}

SBX_LSM(path_rmdir, fs_path_rmdir, const struct path *dir, struct dentry *dentry)
{
	dir = UNTRUSTED(path, dir);
	return judge_one(dentry, dir->mnt, SBX_OP_RMDIR, NEED_WRITE);
}

SBX_LSM(path_unlink, fs_path_unlink, const struct path *dir, struct dentry *dentry)
{
	struct inode *dinode;
	__u64 id;

	if (outside_id(&id))
		return 0;	/* first, as in file_open */
	dinode = dir->dentry->d_inode;
	dir = UNTRUSTED(path, dir);
	dentry = UNTRUSTED(dentry, dentry);
	return judge_in_dir(dinode, dir, dentry, SBX_OP_UNLINK, false, id);
}

SBX_LSM(path_symlink, fs_path_symlink, const struct path *dir, struct dentry *dentry,
	     const char *old_name)
{
	dir = UNTRUSTED(path, dir);
	return judge_one(dentry, dir->mnt, SBX_OP_SYMLINK, NEED_WRITE);
}

SBX_LSM(path_link, fs_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry)
{
	/* link(2) refuses to cross mounts before this hook: one mount for both. */
	new_dir = UNTRUSTED(path, new_dir);
	return judge_two(old_dentry, new_dir->mnt, new_dentry, new_dir->mnt, SBX_OP_LINK, false);
}

SBX_LSM(path_rename, fs_path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry, unsigned int flags)
{
	old_dir = UNTRUSTED(path, old_dir);
	new_dir = UNTRUSTED(path, new_dir);
	return judge_two(old_dentry, old_dir->mnt, new_dentry, new_dir->mnt, SBX_OP_RENAME,
			 flags & RENAME_EXCHANGE);
}

/* truncate(2); on 6.1 also ftruncate and open(O_TRUNC), whose open was judged a moment before (truncate_opened). */
SBX_LSM(path_truncate, fs_path_truncate, const struct path *path)
{
	__u64 id;

	if (outside_id(&id))
		return 0;	/* first, as in file_open */
	path = UNTRUSTED(path, path);
	if (truncate_opened((__u64)path->dentry, (__u64)path->mnt, id))
		return 0;
	return judge_one(path->dentry, path->mnt, SBX_OP_TRUNCATE, NEED_WRITE);
}

/* 6.2+: ftruncate and open(O_TRUNC) come here instead; autoloaded only there. */
SBX_LSM(file_truncate, fs_file_truncate, struct file *file)
{
	__u64 id;

	if (outside_id(&id))
		return 0;	/* first, as in file_open */
	file = UNTRUSTED(file, file);
	if (truncate_opened((__u64)file->f_path.dentry, (__u64)file->f_path.mnt, id))
		return 0;
	return judge_file(file, SBX_OP_TRUNCATE, NEED_WRITE);
}

SBX_LSM(path_chmod, fs_path_chmod, const struct path *path, umode_t mode)
{
	path = UNTRUSTED(path, path);
	return judge_one(path->dentry, path->mnt, SBX_OP_CHMOD, NEED_WRITE);
}

SBX_LSM(path_chown, fs_path_chown, const struct path *path, __u64 uid, __u64 gid)
{
	path = UNTRUSTED(path, path);
	return judge_one(path->dentry, path->mnt, SBX_OP_CHOWN, NEED_WRITE);
}

/*
 * The inode_* hooks get a dentry but no mount. The object is judged under
 * every mount of its file system (the superblock's mount list; it is not
 * beneath the root of a bind mount of another subtree) and the operation is
 * denied if any of those paths is denied, or the list is longer than
 * SBX_SB_MOUNTS_MAX. The list became a chain of struct mount in 6.15;
 * both shapes are read through CO-RE: the chain through vmlinux.h's own
 * types (a 6.15+ kernel's), the list through flavours. libbpf searches the
 * kernel's BTF once per type an object's relocations name (about 4.4 M
 * instructions each on 6.1), so no flavour stands for what vmlinux.h has.
 */
struct super_block___lh {
	struct list_head s_mounts;
} __attribute__((preserve_access_index));

struct mount___lh {
	struct list_head mnt_instance;
} __attribute__((preserve_access_index));

#define SBX_SB_MOUNTS_MAX	16

/* The first denial of the mounts walk: scalars only, to pass to sb_chain_judge. */
struct sb_denial {
	__u32 denied;
	__u32 who;			/* index of the sandbox that denied */
	__u32 rule;
};

struct sb_walk {
	__u64 d;
	struct sbx_scratch *s;
	void *pos;		/* list node (list shape) or struct mount (chain shape) */
	void *head;		/* the list head; NULL for the chain */
	__u32 in_tree;		/* mounts in the tree */
	__u32 judged;		/* of those, mounts the object is beneath */
	__u32 unresolved;
	struct sb_denial den;
};

/*
 * @p (@len bytes: the object's path as one mount shows it) judged for each
 * sandbox of @c, outermost first, with @st as the matcher's. An
 * enforcing sandbox's denial ends the walk: 1, @d set, @p the denied path.
 * An auditing one's goes to @d if it is the first: 0. -1: not judged.
 * A global function, verified once per program rather than inside every
 * step of the mounts' bpf_loop: 7.x spent over a second verifying each
 * inode_* program before. No stack of its own (@st is scratch): 6.1 allows
 * 512 bytes for the whole chain of frames, and this adds one.
 */
__noinline int sb_chain_judge(struct sbx_chain *c, struct sbx_path *p, __u32 len,
			      struct fs_state *st, struct sb_denial *d)
{
	if (!c || !p || !st || !d)
		return -1;	/* never; but not judged is never allowed */
	for (__u32 k = 0; k < SBX_NEST_MAX; k++) {
		const struct sbx_sb_copy *sb = &c->sb[k];
		bool audit;

		if (k >= c->n)
			break;
		audit = sb->flags & SBX_SANDBOX_AUDIT;
		fs_match(p, len, sb->policy_id, sb->any_depth_mask & 0xf, st);
		if (!st->v.write_deny)
			continue;
		if (!d->denied || !audit) {
			d->denied = 1;
			d->rule = st->v.write_rule;
			d->who = k;
		}
		if (!audit)
			return 1;
	}
	return 0;
}

static long sb_mount_step(__u32 i, void *ctx)
{
	struct sb_walk *w = ctx;
	struct mount *m;
	int res;

	if (!w->pos || w->pos == w->head)
		return 1;
	/* Through locals: BPF_CORE_READ would relocate w->pos against struct sb_walk. */
	if (bpf_core_field_exists(struct mount___lh, mnt_instance)) {
		struct list_head *node = w->pos;

		m = (void *)node - bpf_core_field_offset(struct mount___lh, mnt_instance);
		w->pos = BPF_CORE_READ(node, next);
	} else {
		m = w->pos;
		w->pos = BPF_CORE_READ(m, mnt_next_for_sb);
	}
	res = resolve_in(w->d, (__u64)m, &w->s->walk, (struct sbx_path *)w->s->ev.path,
			 (struct sbx_path_len *)&w->s->ev.path_len);
	if (res == PATH_NOT_IN_TREE)
		return 0;
	w->in_tree++;
	if (res == PATH_DETACHED)
		return 0;
	if (res == PATH_UNRESOLVED) {
		w->unresolved = 1;
		return 1;
	}
	w->judged++;
	res = sb_chain_judge(&w->s->chain, (struct sbx_path *)w->s->ev.path, w->s->ev.path_len,
			     &w->s->match, &w->den);
	if (res < 0)
		w->unresolved = 1;
	return res != 0;	/* on a denial, ev.path holds the denied path */
}

static __always_inline int judge_dentry(struct dentry *d, __u32 op)
{
	struct super_block *sb = BPF_CORE_READ(d, d_sb);
	struct sb_walk w = { .d = ptr_value(d) };
	JUDGE(j);
	int res;

	res = judge_begin(&j);
	if (res <= 0)
		return res;
	if (pseudo_fs(d))
		return deny(&j, op, SBX_RULE_PSEUDO_FS);
	w.s = j.s;
	if (bpf_core_field_exists(struct mount___lh, mnt_instance)) {
		struct super_block___lh *lsb = (void *)sb;

		w.head = &lsb->s_mounts;
		w.pos = BPF_CORE_READ(lsb, s_mounts.next);
	} else {
		w.pos = BPF_CORE_READ(sb, s_mounts);
	}
	bpf_loop(SBX_SB_MOUNTS_MAX, sb_mount_step, &w, 0);
	if (w.den.denied) {	/* by the sandbox at w.den.who */
		judge_select(&j, w.den.who);
		res = deny(&j, op, w.den.rule);
		if (res)
			return res;
		/* An auditing sandbox's: what follows is still the enforcing one's to refuse. */
		judge_select(&j, j.s->chain.strict);
	}
	/* A list longer than we walked may hide a mount that denies: never allow on it. */
	if (w.unresolved || (w.pos && w.pos != w.head)) {
		j.s->ev.flags |= SBX_EV_PATH_UNRESOLVED;
		return deny(&j, op, SBX_RULE_NONE);
	}
	if (w.in_tree == 0)
		return 0;	/* only on internal mounts: not a file in the tree */
	if (!w.judged) {
		j.s->ev.flags |= SBX_EV_PATH_UNRESOLVED;
		return deny(&j, op, SBX_RULE_NONE);
	}
	return 0;
}

/*
 * utimes and friends. chmod, chown and truncate also end here but were
 * judged by their path hooks already; ATTR_KILL_SUID & co. from writes to an
 * open file carry none of the time bits. The hook gained an idmap argument
 * in 6.3 (the release that introduced struct mnt_idmap): two programs, the
 * loader keeps the one that fits the running kernel.
 */
static __always_inline int judge_setattr(struct dentry *dentry, struct iattr *attr)
{
	unsigned int valid;

	if (task_outside())
		return 0;	/* first, as in file_open */
	valid = UNTRUSTED(iattr, attr)->ia_valid;	/* a plain load, no helper */
	if (!(valid & (ATTR_ATIME | ATTR_MTIME)) ||
	    (valid & (ATTR_SIZE | ATTR_MODE | ATTR_UID | ATTR_GID)))
		return 0;
	return judge_dentry(dentry, SBX_OP_UTIMES);
}

SBX_LSM(inode_setattr, fs_inode_setattr_idmap, void *idmap, struct dentry *dentry, struct iattr *attr)
{
	return judge_setattr(dentry, attr);
}

SBX_LSM(inode_setattr, fs_inode_setattr, struct dentry *dentry, struct iattr *attr)
{
	return judge_setattr(dentry, attr);
}

/* The first argument is a user namespace (6.1) or an idmap (6.3+): unused. */
SBX_LSM(inode_setxattr, fs_inode_setxattr, void *idmap, struct dentry *dentry, const char *name,
	     const void *value, size_t size, int flags)
{
	return judge_dentry(dentry, SBX_OP_SETXATTR);
}

SBX_LSM(inode_removexattr, fs_inode_removexattr, void *idmap, struct dentry *dentry, const char *name)
{
	return judge_dentry(dentry, SBX_OP_REMOVEXATTR);
}

/* 6.2+: POSIX ACLs no longer pass through the xattr hooks; autoloaded only there. */
SBX_LSM(inode_set_acl, fs_inode_set_acl, void *idmap, struct dentry *dentry, const char *acl_name,
	     void *kacl)
{
	return judge_dentry(dentry, SBX_OP_SETXATTR);
}

SBX_LSM(inode_remove_acl, fs_inode_remove_acl, void *idmap, struct dentry *dentry, const char *acl_name)
{
	return judge_dentry(dentry, SBX_OP_REMOVEXATTR);
}

/*
 * Mounts and user namespaces: a sandbox may neither mount, unmount, move a
 * mount nor pivot its root, and may not create a user namespace (in which an
 * unprivileged task could mount). A bind mount would otherwise give any file
 * a new path, and paths are what the rules judge.
 */
static __always_inline int judge_namespace(__u32 op, const struct path *path)
{
	if (!path)	/* userns_create: a constant, so the walk below is not verified there */
		return deny_object(NULL, NULL, op, SBX_RULE_NAMESPACE);
	path = UNTRUSTED(path, path);
	return deny_object(path->dentry, path->mnt, op, SBX_RULE_NAMESPACE);
}

SBX_LSM(sb_mount, fs_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data)
{
	return judge_namespace(SBX_OP_MOUNT, path);
}

SBX_LSM(move_mount, fs_move_mount, const struct path *from_path, const struct path *to_path)
{
	return judge_namespace(SBX_OP_MOUNT, to_path);
}

SBX_LSM(sb_umount, fs_sb_umount, struct vfsmount *mnt, int flags)
{
	return deny_object(UNTRUSTED(vfsmount, mnt)->mnt_root, mnt, SBX_OP_UMOUNT, SBX_RULE_NAMESPACE);
}

SBX_LSM(sb_pivotroot, fs_sb_pivotroot, const struct path *old_path, const struct path *new_path)
{
	return judge_namespace(SBX_OP_PIVOT_ROOT, new_path);
}

SBX_LSM(userns_create, fs_userns_create, const struct cred *cred)
{
	return judge_namespace(SBX_OP_USERNS, NULL);
}

/*
 * ioctls that change a file or create entries without a path hook: inode
 * flags (chattr: immutable, append-only) and btrfs subvolumes and snapshots
 * (created inside the directory the ioctl is made on). Judged as a write of
 * the file (or directory) the descriptor is open on.
 */
#define FS_IOC_SETFLAGS			0x40086602
#define FS_IOC_FSSETXATTR		0x401c5820
#define BTRFS_IOC_SNAP_CREATE		0x50009401
#define BTRFS_IOC_SUBVOL_CREATE		0x5000940e
#define BTRFS_IOC_SNAP_DESTROY		0x5000940f
#define BTRFS_IOC_SNAP_CREATE_V2	0x50009417
#define BTRFS_IOC_SUBVOL_CREATE_V2	0x50009418
#define BTRFS_IOC_SNAP_DESTROY_V2	0x5000943f

/*
 * And ioctls that reach outside the sandbox whatever the file: typing into
 * a terminal's input queue (TIOCSTI; TIOCLINUX's selection paste), which a
 * sandbox sharing the user's terminal would use to run commands in the
 * user's shell once it exits; and making another process a socket's owner
 * (FIOSETOWN, SIOCSPGRP: its SIGURG/SIGIO), the ioctl twin of F_SETOWN.
 */
#define TIOCSTI		0x5412
#define TIOCLINUX	0x541c
#define FIOSETOWN	0x8901
#define SIOCSPGRP	0x8902

static __always_inline int deny_ioctl(__u32 op, __u32 cmd)
{
	JUDGE(j);
	int res;

	res = judge_begin(&j);
	if (res <= 0)
		return res;
	j.s->ev.arg = cmd;
	return deny_err(&j, op, SBX_RULE_SYSTEM, -EPERM);
}

SBX_LSM(file_ioctl, fs_file_ioctl, struct file *file, unsigned int cmd, unsigned long arg)
{
	file = UNTRUSTED(file, file);
	switch (cmd) {
	case TIOCSTI:
	case TIOCLINUX:
		return deny_ioctl(SBX_OP_TTY, cmd);
	case FIOSETOWN:
	case SIOCSPGRP:
		return deny_ioctl(SBX_OP_SIGNAL, cmd);
	case FS_IOC_SETFLAGS:
	case FS_IOC_FSSETXATTR:
	case BTRFS_IOC_SNAP_CREATE:
	case BTRFS_IOC_SUBVOL_CREATE:
	case BTRFS_IOC_SNAP_DESTROY:
	case BTRFS_IOC_SNAP_CREATE_V2:
	case BTRFS_IOC_SUBVOL_CREATE_V2:
	case BTRFS_IOC_SNAP_DESTROY_V2:
		return judge_file(file, SBX_OP_IOCTL, NEED_WRITE);
	}
	return 0;
}
