/* SPDX-License-Identifier: GPL-2.0 */
/*
 * resolve.h — where an object is: dentry + mount → absolute path, the walk
 * up the dentries and mounts to the root of the mount namespace.
 *
 * The walk (resolve_in) is verified once, in the extension object
 * (shared.bpf.c, SBX_EXTENSION), and put in place of a stand-in in every
 * enforcement program that calls it (BPF freplace): verified in each of
 * them, it was a third of their verifying. The enforcement object gets the
 * stand-in and the helpers its own code reads dentries and mounts with.
 */
#ifndef SBX_RESOLVE_H
#define SBX_RESOLVE_H

#define MNT_NS_INTERNAL	((void *)(long)-22)	/* -EINVAL (fs/mount.h): kern_mount()ed */

/* plain_loads, AS_KERNEL and UNTRUSTED: sandbox.h. */

enum walk_state { WALK_RUNNING, WALK_DONE, WALK_UNRESOLVED, WALK_DETACHED };

/*
 * A mount's parent, mountpoint and root dentry. They sit side by side in
 * struct mount (mnt_parent, mnt_mountpoint, then the vfsmount whose first
 * field is mnt_root): without plain loads, one helper call per mount of a
 * walk reads all three.
 */
struct mount_link {
	struct mount *parent;
	struct dentry *mountpoint;
	struct dentry *root;
};

struct up_walk {
	struct dentry *d;
	struct mount *m;
	struct mount_link ml;	/* m's, read once per mount */
	char *buf;		/* struct sbx_scratch.walk */
	__u32 pos;		/* the path built so far is buf[pos..SBX_PATH_MAX) */
	__u32 state;
	struct walk_buf *rec;	/* the record (walk_buf rec_*), kept when rec->rec_on */
};

#define SBX_INLINE_NAME	32	/* DNAME_INLINE_LEN is at least this on 64-bit */

/*
 * d_parent, d_name, d_inode and the inline name store as they sit in struct
 * dentry: without plain loads, one helper call for a whole step of the
 * walk. Short names live in the store (d_name.name points there); only the
 * first SBX_INLINE_NAME bytes of it are read (6.8+ keeps up to 39 bytes
 * there: longer ones are read as a long name is).
 */
struct dentry_link {
	struct dentry *parent;
	__u32 hash, len;	/* struct qstr */
	const unsigned char *name;
	void *inode;
	unsigned char iname[SBX_INLINE_NAME];
};

/* Do d_parent, d_name and d_inode sit as struct dentry_link has them (CO-RE; true from 2.6 to 7.x)? */
static __always_inline bool dentry_link_layout(void)
{
	__u32 parent_off = bpf_core_field_offset(struct dentry, d_parent);

	return bpf_core_field_offset(struct dentry, d_name) == parent_off + 8 &&
	       bpf_core_field_offset(struct dentry, d_inode) == parent_off + 24;
}

/* Where @d's inline name store is, given dentry_link_layout(). */
static __always_inline const unsigned char *inline_store(struct dentry *d)
{
	return (const unsigned char *)d + bpf_core_field_offset(struct dentry, d_parent) +
	       offsetof(struct dentry_link, iname);
}

/*
 * Parent and name of @d; *@inline_name when the name is in the store:
 * copied into @l->iname without plain loads, to be read in place with
 * them (up_step). Without the layout, three reads and no inline name.
 */
static __always_inline int dentry_link(struct dentry *d, struct dentry_link *l, bool *inline_name)
{
	bool layout = dentry_link_layout();

	*inline_name = false;
	if (plain_loads) {
		/* No dentry has a NULL parent (the root is its own): NULL is a load that faulted. */
		l->parent = d->d_parent;
		l->len = d->d_name.len;
		l->name = d->d_name.name;
		/* The address says it: the name is in the store. */
		*inline_name = layout && l->name == inline_store(d) && l->len < SBX_INLINE_NAME;
		return l->parent ? 0 : -1;
	}
	if (layout) {
		if (bpf_probe_read_kernel(l, sizeof(*l), (void *)d + bpf_core_field_offset(struct dentry, d_parent)))
			return -1;
		*inline_name = l->name == inline_store(d) && l->len < SBX_INLINE_NAME;
		return 0;
	}
	/* A failed read fails the walk, as in mount_link. */
	if (bpf_core_read(&l->parent, sizeof(l->parent), &d->d_parent) ||
	    bpf_core_read(&l->len, sizeof(l->len), &d->d_name.len) ||
	    bpf_core_read(&l->name, sizeof(l->name), &d->d_name.name))
		return -1;
	return 0;
}

/* @m's struct mount_link (the layout checked with CO-RE, else three reads): 0, or -1 if a read failed. */
static __always_inline int mount_link(struct mount *m, struct mount_link *ml)
{
	__u32 parent_off = bpf_core_field_offset(struct mount, mnt_parent);
	__u32 point_off = bpf_core_field_offset(struct mount, mnt_mountpoint);
	__u32 root_off = bpf_core_field_offset(struct mount, mnt.mnt_root);

	if (plain_loads) {	/* none of the three is ever NULL: NULL is a load that faulted */
		ml->parent = m->mnt_parent;
		ml->mountpoint = m->mnt_mountpoint;
		ml->root = m->mnt.mnt_root;
		return ml->parent && ml->mountpoint && ml->root ? 0 : -1;
	}
	if (point_off == parent_off + 8 && root_off == parent_off + 16)
		return bpf_probe_read_kernel(ml, sizeof(*ml), (void *)m + parent_off) ? -1 : 0;
	/* A failed read fails the walk: a NULL parent would end it early, at a truncated path. */
	if (bpf_core_read(&ml->parent, sizeof(ml->parent), &m->mnt_parent) ||
	    bpf_core_read(&ml->mountpoint, sizeof(ml->mountpoint), &m->mnt_mountpoint) ||
	    bpf_core_read(&ml->root, sizeof(ml->root), &m->mnt.mnt_root))
		return -1;
	return 0;
}

/*
 * The open memo's record of a walk (fs.bpf.c open_memo): the steps'
 * pointers, compared as they are, and a digest of what is not a pointer.
 * A step is a dentry (its name's hash and length, its rename count), a
 * mount crossing (WALK_MARK_MOUNT, the parent mount) or the end
 * (WALK_MARK_END, the mount namespace). The marks are no dentry's hash
 * and length: a name is at most 255 bytes.
 */
#define WALK_MARK_MOUNT	0xfffffffffffffff1ULL
#define WALK_MARK_END	0xfffffffffffffff2ULL

static __always_inline void walk_fold(__u64 *h1, __u64 *h2, __u64 v)
{
	__u64 a = (*h1 ^ v) * 0x9e3779b97f4a7c15ULL, b = (*h2 + v) * 0xc2b2ae3d27d4eb4fULL;

	*h1 = a ^ (a >> 32);
	*h2 = b ^ (b >> 29);
}

/*
 * @i & (SBX_MEMO_STEPS - 1), masked in the register that indexes: the
 * compiler, knowing @i is in range, would drop the mask and index with a
 * copy of @i whose bound the verifier does not know.
 */
static __always_inline __u64 memo_index(__u64 i)
{
	asm volatile("%[i] &= %[m]" : [i] "+r"(i) : [m] "i"(SBX_MEMO_STEPS - 1));
	return i;
}

/*
 * @d's rename count (d_seq): odd while a rename moves it, and two more
 * after each. Read before and after the rest of a step: equal and even,
 * the step's parent and name are one rename's, not two halves.
 */
static __always_inline __u32 dentry_seq(struct dentry *d)
{
	if (plain_loads)
		return d->d_seq.seqcount.sequence;
	return BPF_CORE_READ(d, d_seq.seqcount.sequence);
}

/* @m's mount namespace (NULL once it is unmounted). */
static __always_inline void *mount_ns(struct mount *m)
{
	if (plain_loads)
		return m->mnt_ns;
	return BPF_CORE_READ(m, mnt_ns);
}

/*
 * Both fields in one flavour: libbpf searches the kernel's BTF once per
 * type an object's relocations name (about 4.4 M instructions each on 6.1), and each field
 * is relocated, and tested for, on its own.
 */
struct mnt_namespace___named {
	__u64 seq;
	bool is_anon;
} __attribute__((preserve_access_index));

/*
 * Is the top mount of a walk the root of a real mount namespace? A tree cut
 * loose (umount -l: no namespace) or made with open_tree(OPEN_TREE_CLONE) or
 * fsmount (an anonymous namespace) would let its files be named by any path
 * the cloner likes: such paths are not judged but denied. Kernels tell an
 * anonymous namespace by its sequence number 0 (up to 6.x), or by is_anon
 * (7.x, which has no seq any more); a kernel with neither cannot be told
 * apart: every such walk is unresolvable, denied.
 */
static __always_inline bool attached(struct mount *m)
{
	struct mnt_namespace *ns;

/* @ns is not anonymous, its fields read with @rd (a direct load or BPF_CORE_READ). */
#define NS_NAMED(ns, rd)									\
	(bpf_core_field_exists(struct mnt_namespace___named, is_anon) ?				\
		!rd((struct mnt_namespace___named *)(ns), is_anon) :				\
	 bpf_core_field_exists(struct mnt_namespace___named, seq) ?				\
		rd((struct mnt_namespace___named *)(ns), seq) != 0 : false)
#define NS_LOAD(p, f)	((p)->f)

	/*
	 * Most walks end at the root of the task's own namespace: then ns is
	 * the task's, reached through the task's own BTF pointers (direct
	 * loads), not two helper calls. The same test on the same namespace.
	 */
	ns = UNTRUSTED(task_struct, bpf_get_current_task_btf())->nsproxy->mnt_ns;
	if ((void *)ns->root == (void *)m && ns->root->mnt_ns == ns)
		return NS_NAMED(ns, NS_LOAD);
	ns = BPF_CORE_READ(m, mnt_ns);
	return ns && NS_NAMED(ns, BPF_CORE_READ);
#undef NS_LOAD
#undef NS_NAMED
}

/*
 * An inline name (@len < SBX_INLINE_NAME bytes) to @dst, 8 bytes at a time:
 * the last word runs past the name into what the walk wrote before it (the
 * rest of the path), so those 8 bytes are kept and put back. The walk
 * buffer extends well past SBX_PATH_MAX, so the words stay inside it.
 */
static __always_inline void copy_name(char *dst, const unsigned char *name, __u32 len)
{
	__u64 keep = *(__u64 *)(dst + len);

#pragma unroll
	for (int k = 0; k < SBX_INLINE_NAME; k += 8)
		if (k < len)
			*(__u64 *)(dst + k) = *(const __u64 *)(name + k);
	*(__u64 *)(dst + len) = keep;
}

enum resolve_result { PATH_RESOLVED, PATH_NOT_IN_TREE, PATH_UNRESOLVED, PATH_DETACHED };

#ifdef SBX_EXTENSION
/*
 * Step @i into the record (walk_buf rec_*): @p compared as it is, @v
 * folded into the digest. Every step of the walk is one bpf_loop
 * iteration, so @i is its index: a number the verifier does not follow
 * from one iteration to the next, as it would a count of its own.
 */
static __always_inline void walk_record(struct walk_buf *r, __u64 i, __u64 p, __u64 v)
{
	if (i >= SBX_MEMO_STEPS) {
		r->rec_bad = 1;
		return;
	}
	r->rec_p[memo_index(i)] = p;
	walk_fold(&r->rec_h1, &r->rec_h2, v);
	r->rec_n = i + 1;
}

/* The dentry step's record: @d, its name's hash and length, its rename count @seq read before the step. */
static __always_inline void walk_record_dentry(struct walk_buf *r, __u32 i, struct dentry *d,
					       const struct dentry_link *l, __u32 seq)
{
	__u64 hl;

	if (plain_loads)
		hl = d->d_name.hash_len;
	else
		hl = dentry_link_layout() ? l->hash | (__u64)l->len << 32 : 0;	/* no hash read: no record */
	sbx_barrier();	/* the second count after everything else the step read */
	if (!hl || (seq & 1) || dentry_seq(d) != seq)
		r->rec_bad = 1;
	walk_record(r, i, (__u64)d, hl);
	walk_fold(&r->rec_h1, &r->rec_h2, seq);
}

/* One step up: a component, or a mount crossing. */
static long up_step(__u32 i, void *ctx)
{
	struct up_walk *w = ctx;
	struct dentry *d = w->d;
	struct mount *m = w->m, *up;
	struct dentry_link l;
	bool inline_name;
	__u32 seq = 0;

	if (w->rec->rec_on) {
		seq = dentry_seq(d);
		sbx_barrier();	/* the count before the step's reads */
	}
	if (dentry_link(d, &l, &inline_name)) {
		w->state = WALK_UNRESOLVED;
		return 1;
	}
	if (d == w->ml.root || d == l.parent) {
		if (d != w->ml.root) {	/* not beneath its mount's root */
			w->state = WALK_DETACHED;
			return 1;
		}
		up = w->ml.parent;
		if (!up || up == m) {	/* the root of a mount tree */
			w->state = attached(m) ? WALK_DONE : WALK_UNRESOLVED;
			if (w->rec->rec_on)
				walk_record(w->rec, i, (__u64)mount_ns(m), WALK_MARK_END);
			return 1;
		}
		if (w->rec->rec_on)
			walk_record(w->rec, i, (__u64)up, WALK_MARK_MOUNT);
		w->d = w->ml.mountpoint;
		w->m = up;
		if (mount_link(up, &w->ml)) {
			w->state = WALK_UNRESOLVED;
			return 1;
		}
		return 0;
	}
	if (l.len > SBX_NAME_MAX || l.len + 2 > w->pos) {	/* keep pos >= 1: at most 4095 bytes */
		w->state = WALK_UNRESOLVED;
		return 1;
	}
	w->pos -= l.len;
	if (inline_name && plain_loads) {
		/* Through @d, whose type spans the store: l.name is typed as one byte. */
		copy_name(w->buf + (w->pos & (SBX_PATH_MAX - 1)), inline_store(d), l.len);
	} else if (inline_name) {
		copy_name(w->buf + (w->pos & (SBX_PATH_MAX - 1)), l.iname, l.len);
	} else if (bpf_probe_read_kernel(w->buf + (w->pos & (SBX_PATH_MAX - 1)),
					 l.len & SBX_NAME_MAX, l.name)) {
		w->state = WALK_UNRESOLVED;
		return 1;
	}
	w->pos--;
	w->buf[w->pos & (SBX_PATH_MAX - 1)] = '/';
	if (w->rec->rec_on)
		walk_record_dentry(w->rec, i, d, &l, seq);
	w->d = l.parent;
	return 0;
}

/*
 * Build the absolute path of dentry @d under mount @m (kernel addresses as
 * numbers, read as plain_loads says) in @walk (start, len), and copy it to
 * @out (SBX_PATH_MAX bytes) with its length in @out_len unless @out is
 * NULL. Verified once, here, and put in place of the enforcement
 * programs' stand-in.
 */
SEC("freplace/resolve_in")
int resolve_in(__u64 d, __u64 m, struct walk_buf *walk, struct sbx_path *out,
	       struct sbx_path_len *out_len)
{
	struct up_walk w = { .pos = SBX_PATH_MAX };
	struct mount *mnt;
	__u32 len;

	if (!walk)
		return PATH_UNRESOLVED;
	walk->len = 0;
	walk->start = 0;
	/* A record only when asked for, this walk only; it holds only if the walk reaches the root. */
	w.rec = walk;
	walk->rec_on = walk->rec_want;
	walk->rec_want = 0;
	walk->rec_ok = 0;
	walk->rec_bad = 0;
	walk->rec_n = 0;
	walk->rec_h1 = SBX_HASH_INIT;
	walk->rec_h2 = SBX_HASH2_INIT;
	if (out && out_len) {
		out_len->n = 0;
		out->s[0] = '\0';
	}
	w.buf = walk->b;
	if (plain_loads) {
		mnt = AS_KERNEL(mount, m);
		w.d = AS_KERNEL(dentry, d);
		if ((void *)mnt->mnt_ns == MNT_NS_INTERNAL)
			return PATH_NOT_IN_TREE;
	} else {
		mnt = (struct mount *)m;
		w.d = (struct dentry *)d;
		if (BPF_CORE_READ(mnt, mnt_ns) == MNT_NS_INTERNAL)
			return PATH_NOT_IN_TREE;
	}
	w.m = mnt;
	if (mount_link(mnt, &w.ml))
		return PATH_UNRESOLVED;
	bpf_loop(SBX_WALK_MAX, up_step, &w, 0);
	if (w.state != WALK_DONE)
		return w.state == WALK_DETACHED ? PATH_DETACHED : PATH_UNRESOLVED;
	if (w.pos == SBX_PATH_MAX) {	/* the root itself */
		w.pos--;
		walk->b[w.pos & (SBX_PATH_MAX - 1)] = '/';
	}
	len = SBX_PATH_MAX - w.pos;
	walk->start = w.pos & (SBX_PATH_MAX - 1);
	walk->len = len;
	walk->rec_ok = walk->rec_on && !walk->rec_bad;
	if (!out || !out_len)
		return PATH_RESOLVED;
	if (bpf_probe_read_kernel(out->s, len & (SBX_PATH_MAX - 1), walk->b + walk->start))
		return PATH_UNRESOLVED;
	out->s[len & (SBX_PATH_MAX - 1)] = '\0';
	out_len->n = len;
	return PATH_RESOLVED;
}

#else
/*
 * The enforcement object's resolve_in: a stand-in the loader replaces with
 * the extension's before any program is attached (loader.c shared_load).
 * Until then, and if it never is, no path resolves: every judged call is
 * denied. Opaque to the compiler, which must neither drop an argument nor
 * assume what comes back.
 */
__attribute__((noinline)) int resolve_in(__u64 d, __u64 m, struct walk_buf *walk,
					  struct sbx_path *out, struct sbx_path_len *out_len)
{
	int r = PATH_UNRESOLVED;

	/* Nothing of an earlier walk in this slot may pass for this one's path (walk_to_event). */
	if (walk) {
		walk->len = 0;
		walk->start = 0;
	}
	if (out && out_len) {
		out_len->n = 0;
		out->s[0] = '\0';
	}
	asm volatile("" : "+r"(r) : "r"(d), "r"(m), "r"(walk), "r"(out), "r"(out_len) : "memory");
	return r;
}
#endif /* SBX_EXTENSION */
#endif /* SBX_RESOLVE_H */
