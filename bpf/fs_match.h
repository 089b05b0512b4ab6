/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fs_match.h — path-rule matching, shared by the extension object
 * (shared.bpf.c), which the loader links into every LSM program that calls
 * fs_match (fs.bpf.c, net.bpf.c: their stand-in, SBX_FS_MATCH_STUB), and
 * the host test program (tests/bpf/fs_match_test.bpf.c) that runs the very
 * same code through BPF_PROG_TEST_RUN on a kernel that refuses LSM programs.
 *
 * One walk over the path, byte by byte (bpf_loop, so the verifier sees one
 * small callback instead of a 4096-iteration unrolled loop), hashes the
 * current component's bytes two ways. At every component end ("/" = the
 * empty prefix before the first component, then each '/' and the end of
 * the path):
 *
 *   - the component is folded into the prefix's two hashes, and the prefix
 *     is looked up as an absolute rule path (sbx_abi.h: the same key);
 *   - the last k components (k = 1..SBX_ANY_DEPTH_MAX, only the k the
 *     policy uses) are looked up as an any-depth pattern.
 *
 * Matches found later end deeper in the path, hence are more specific, and
 * overwrite the verdict of earlier ones: "most specific rule wins" falls out
 * of the walk order. At one component end, deny beats allow. A mandatory
 * match denies writes for good. Cost: at most 1 + popcount(mask) lookups per
 * component, whatever the number of rules; and with no any-depth pattern to
 * look for, the walk ends at the first prefix that has no entry.
 *
 * The includer defines the fs_rules map and the fs_filter array (sbx_abi.h)
 * before including this file.
 */
#ifndef SBX_FS_MATCH_H
#define SBX_FS_MATCH_H

/* A path buffer as a type, so global functions can take one. */
struct sbx_path {
	char s[SBX_PATH_MAX];
};

#include "fs_verdict.h"

/* fs_match's @mask: @st holds a directory's state, go on from it (fs_match_body). */
#define FS_MATCH_RESUME	(1u << 31)

/* What a path that cannot be judged gets: everything denied. */
static __always_inline void fs_deny_all(struct fs_state *st)
{
	st->v = (struct fs_verdict){ 1, SBX_RULE_NONE, 1, SBX_RULE_NONE, 1, SBX_RULE_NONE, 1, 0 };
}

/* fs_walk_step's context: on fs_match's stack (6.1's bpf_loop takes no other), the state elsewhere. */
struct fs_walk {
	const char *path;	/* SBX_PATH_MAX bytes of map memory */
	__u32 len;		/* bytes of path, without the NUL */
	__u32 base;		/* where path starts in the whole path (fs_state base) */
	struct fs_state *st;	/* the caller's, in map memory */
};

#if !defined(SBX_FS_MATCH_EXTERN) && !defined(SBX_FS_MATCH_STUB)
/* All ones when @cond (0 or 1) is set: lets merges be arithmetic, not branches. */
#define FS_MASK(cond)	(-(__u32)(cond))

/*
 * Fold what one matched key says into the hits at this component end:
 * deny-read > allow-read; mandatory > deny-write > allow-write. Written
 * without branches: every branch here would double the states the verifier
 * walks, per lookup, per call site.
 */
static __always_inline void fs_hit(struct fs_verdict *hit, __u32 *hit_flags,
				   const struct fs_rule_says *r)
{
	__u32 f = r->flags, old = *hit_flags, m;

	m = FS_MASK(!!(f & SBX_FS_DENY_READ) |
		    (!!(f & SBX_FS_ALLOW_READ) & !(old & SBX_FS_DENY_READ)));
	hit->read_rule = (hit->read_rule & ~m) | (r->read_rule & m);
	m = FS_MASK(!!(f & SBX_FS_MANDATORY) |
		    (!!(f & SBX_FS_DENY_WRITE) & !(old & SBX_FS_MANDATORY)) |
		    (!!(f & SBX_FS_ALLOW_WRITE) & !(old & (SBX_FS_DENY_WRITE | SBX_FS_MANDATORY))));
	hit->write_rule = (hit->write_rule & ~m) | (r->write_rule & m);
	m = FS_MASK(!old);
	hit->guard_rule = (hit->guard_rule & ~m) | (r->guard_rule & m);	/* always set by userspace */
	*hit_flags = old | f;
}

#define FS_SAYS_AT(f, base_f)							\
	(offsetof(struct sbx_fs_rule, f) == offsetof(struct fs_rule_says, f) &&	\
	 offsetof(struct sbx_fs_rule, base_f) == sizeof(struct fs_rule_says) + offsetof(struct fs_rule_says, f))
_Static_assert(FS_SAYS_AT(read_rule, base_read_rule) && FS_SAYS_AT(write_rule, base_write_rule) &&
	       FS_SAYS_AT(guard_rule, base_guard_rule) && FS_SAYS_AT(unix_rule, base_unix_rule) &&
	       FS_SAYS_AT(flags, base_flags) &&
	       offsetof(struct sbx_fs_rule, base_read_rule) == sizeof(struct fs_rule_says),
	       "an fs_rules entry opens with what it says, then its base says the same way");
#undef FS_SAYS_AT

/* Whether the filter leaves it possible that a rule has this key (most keys are no rule's). */
static __always_inline bool fs_filter_has(const struct fs_state *w, __u32 len, __u64 h1, __u64 h2)
{
	__u32 bit = sbx_fs_filter_bit(w->policy_id, len, h1, h2);

	return fs_filter[(bit >> 6) & (SBX_FS_FILTER_WORDS - 1)] & (1ULL << (bit & 63));
}

/* What the entry of one rule key says now, or NULL when there is none; an entry that expires marks @w. */
static __always_inline const struct fs_rule_says *fs_rule_get(struct fs_state *w, __u32 len, __u64 h1, __u64 h2)
{
	struct sbx_fs_key key = { .policy_id = w->policy_id, .len = len, .h1 = h1, .h2 = h2 };
	struct sbx_fs_rule *r = bpf_map_lookup_elem(&fs_rules, &key);
	__u64 exp;
	__u32 off;

	if (!r)
		return NULL;
	/*
	 * A grant's entry past its expiry says what the policy alone says
	 * (its base, laid out the same way): the kernel ends grants itself.
	 * An offset, as in fs_hit; the clock is read only for an entry that
	 * expires (a grant's): most hits are a policy's guards and rules,
	 * and the clock costs more than the rest of a hit.
	 */
	exp = r->expires_ns;
	off = 0;
	if (exp) {
		w->expiring = 1;
		off = FS_MASK(bpf_ktime_get_boot_ns() >= exp) & offsetof(struct sbx_fs_rule, base_read_rule);
	}
	return (const struct fs_rule_says *)((const char *)r + off);
}

/*
 * The any-depth entry of one key, if any, folded into the hits; returns
 * the component end's flags, @flags with the entry's. Global, so the
 * verifier checks this lookup once per program rather than at each of a
 * component end's four any-depth keys (each an inlined hash lookup, which
 * 6.12's verifier pays for again over the whole program). Only keys the
 * filter leaves possible get here, and only under policies with any-depth
 * patterns; the absolute key, which every walk looks up, stays inline and
 * costs no call.
 */
__attribute__((noinline)) int fs_any_depth_rule(struct fs_state *w, __u32 len, __u64 h1, __u64 h2, __u32 flags)
{
	const struct fs_rule_says *says;

	if (!w)
		return flags;
	says = fs_rule_get(w, len, h1, h2);
	if (says)
		fs_hit(&w->hit, &flags, says);
	return flags;
}

/* The last @k components as an any-depth key, if the policy has such patterns. */
static __always_inline void fs_lookup_any_depth(struct fs_state *w, __u32 *flags, __u32 k)
{
	__u64 s1 = SBX_HASH_INIT, s2 = SBX_HASH2_INIT;
	__u32 j, idx, len = SBX_FS_KEY_ANY_DEPTH | k;

	if (!(w->mask & (1u << (k - 1))) || w->ncomp < k)
		return;
	for (j = k; j > 0; j--) {	/* oldest first */
		idx = (w->ncomp - j) & (SBX_ANY_DEPTH_MAX - 1);
		s1 = sbx_seq_hash(s1, w->comp1[idx]);
		s2 = sbx_seq_hash(s2, w->comp2[idx]);
	}
	if (fs_filter_has(w, len, s1, s2))
		*flags = fs_any_depth_rule(w, len, s1, s2, *flags);
}

/* What the hits at one component end make of the verdict so far (branch-free, as fs_hit). */
static __always_inline void fs_apply(struct fs_verdict *v, __u32 *mandatory, __u32 flags,
				     const struct fs_verdict *hit)
{
	__u32 any_read = !!(flags & (SBX_FS_DENY_READ | SBX_FS_ALLOW_READ));
	__u32 write_set, m;

	m = FS_MASK(!!flags);
	v->guard_rule = (v->guard_rule & ~m) | (hit->guard_rule & m);
	m = FS_MASK(any_read);
	v->read_deny = (v->read_deny & ~m) | (!!(flags & SBX_FS_DENY_READ) & m);
	v->read_rule = (v->read_rule & ~m) | (hit->read_rule & m);
	/* Once a mandatory rule matched, nothing deeper changes the write verdict. */
	write_set = !*mandatory &
		    !!(flags & (SBX_FS_MANDATORY | SBX_FS_DENY_WRITE | SBX_FS_ALLOW_WRITE));
	m = FS_MASK(write_set);
	v->write_deny = (v->write_deny & ~m) |
			(!!(flags & (SBX_FS_MANDATORY | SBX_FS_DENY_WRITE)) & m);
	v->write_rule = (v->write_rule & ~m) | (hit->write_rule & m);
	*mandatory |= !!(flags & SBX_FS_MANDATORY);
	v->unix_allow |= !!(flags & SBX_FS_UNIX_SOCKET);
}

/*
 * A component end: @prefix_len bytes of path, the component just read
 * included. A global function: the verifier checks it once per program
 * instead of once per state of every caller, which keeps loading fast.
 */
__attribute__((noinline)) int fs_component_end(struct fs_state *w, __u32 prefix_len)
{
	__u32 flags = 0;

	if (!w)
		return 0;
	if (prefix_len) {
		w->h1 = sbx_seq_hash(w->h1, w->c1);
		w->h2 = sbx_seq_hash(w->h2, w->c2);
	}
	if (fs_filter_has(w, prefix_len, w->h1, w->h2)) {
		const struct fs_rule_says *says = fs_rule_get(w, prefix_len, w->h1, w->h2);

		if (says)
			fs_hit(&w->hit, &flags, says);
	}
	if (prefix_len) {
		__u32 idx = w->ncomp & (SBX_ANY_DEPTH_MAX - 1);

		w->comp1[idx] = w->c1;
		w->comp2[idx] = w->c2;
		w->ncomp++;
		fs_lookup_any_depth(w, &flags, 1);
		fs_lookup_any_depth(w, &flags, 2);
		fs_lookup_any_depth(w, &flags, 3);
		fs_lookup_any_depth(w, &flags, 4);
	}
	w->last_flags = flags;
	/*
	 * No entry at this prefix means no absolute rule at or beneath it:
	 * each puts a guard on every proper ancestor (fsrules.c push_rule; a
	 * grant's entries are compiled the same way and expire all at once).
	 * Without any-depth patterns to look for, the rest of the path cannot
	 * change the verdict: most paths a sandbox opens (/usr/..., /etc/...)
	 * end here after their first component. Not at the root, which has no
	 * guard.
	 */
	w->stop = prefix_len && !flags && !w->mask;
	/*
	 * Almost every component end matches nothing, and then fs_apply
	 * changes nothing: skipping it saves ~50 instructions per component.
	 * One branch in a global function, verified once per program.
	 */
	if (flags)
		fs_apply(&w->v, &w->mandatory, flags, &w->hit);
	return 0;
}

/* FS_WALK_STRIDE bytes per bpf_loop iteration: fewer callback calls per path. */
#define FS_WALK_STRIDE	8
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "fs_walk_step takes byte j from bits 8j");

/*
 * The next 8 bytes: a '/' ends a component; any other byte goes into its
 * hashes. One load for the 8 (x86 is little-endian: byte j is bits 8j..),
 * and the component's hashes kept in registers, stored only for a
 * component end and when the step is over: memory traffic was half the
 * cost of a byte.
 */
static long fs_walk_step(__u32 i, void *ctx)
{
	struct fs_walk *w = ctx;
	struct fs_state *st = w->st;
	__u32 at = i * FS_WALK_STRIDE, len = w->len, pos;
	__u64 word = *(const __u64 *)(w->path + (at & (SBX_PATH_MAX - FS_WALK_STRIDE)));
	__u64 c1 = st->c1, c2 = st->c2;
	unsigned char c;
	long done = 0;

#pragma unroll
	for (int j = 0; j < FS_WALK_STRIDE; j++) {
		pos = at + j;
		if (pos >= len) {
			done = 1;
			break;
		}
		c = word >> (8 * j);
		if (c == '/') {
			st->c1 = c1;
			st->c2 = c2;
			fs_component_end(st, w->base + pos);	/* 0: the root, "" */
			if (st->stop)
				return 1;
			c1 = SBX_HASH_INIT;
			c2 = SBX_HASH2_INIT;
		} else {
			c1 = sbx_hash_byte(c1, c);
			c2 = sbx_hash2_byte(c2, c);
		}
	}
	st->c1 = c1;
	st->c2 = c2;
	return done;
}

/*
 * Judge @p (@len bytes, absolute, normalised, no trailing slash but "/")
 * under @policy_id; the verdict is left in @st->v. @st is the caller's,
 * in map memory (fs_verdict.h says why). Reads start allowed, writes start
 * denied (SBX_RULE_DEFAULT_WRITE). A path that cannot be judged denies
 * everything. In the enforcement programs, a stand-in (SBX_FS_MATCH_STUB)
 * that the loader replaces with this, verified once in the extension
 * object (shared.bpf.c, SBX_EXTENSION); elsewhere (the host's tests), a
 * global function.
 *
 * With FS_MATCH_RESUME in @mask, @st already holds the state at the end of
 * a directory's path (fs.bpf.c's directory memo), and @p is one name in
 * it, at @st->base of the whole path: the walk goes on from there, so the
 * verdict is the one the whole path gets. That the state is of the
 * sandbox's policy as it is now is the memo's to hold (its generation);
 * here a state of another policy or mask than the call's, or one whose
 * walk stopped early, denies everything, as does a name or a whole path
 * too long.
 */
static __always_inline int fs_match_body(struct sbx_path *p, __u32 len, __u32 policy_id, __u32 mask,
					 struct fs_state *st)
{
	const char *path = p ? p->s : NULL;
	struct fs_walk w;

	if (!st)
		return 0;
	w.base = 0;
	if (mask & FS_MATCH_RESUME) {
		w.base = st->base;
		if (!path || !len || len > SBX_NAME_MAX || !w.base || w.base + len >= SBX_PATH_MAX ||
		    st->policy_id != policy_id || st->mask != (mask & ~FS_MATCH_RESUME) || st->stop) {
			fs_deny_all(st);
			return 0;
		}
		st->c1 = SBX_HASH_INIT;
		st->c2 = SBX_HASH2_INIT;
	} else {
		__builtin_memset(st, 0, sizeof(*st));
		st->policy_id = policy_id;
		st->mask = mask;
		st->h1 = SBX_HASH_INIT;
		st->h2 = SBX_HASH2_INIT;
		st->v.read_rule = SBX_RULE_NONE;
		st->v.write_deny = 1;
		st->v.write_rule = SBX_RULE_DEFAULT_WRITE;
		st->v.guard_rule = SBX_RULE_NONE;
		if (!path || len == 0 || len >= SBX_PATH_MAX || path[0] != '/') {
			fs_deny_all(st);
			return 0;
		}
	}
	w.path = path;
	w.len = len;
	w.st = st;
	bpf_loop((len + FS_WALK_STRIDE - 1) / FS_WALK_STRIDE, fs_walk_step, &w, 0);
	/* "/" itself was judged as the empty prefix */
	if ((w.base || len > 1) && !st->stop)
		fs_component_end(st, w.base + len);
	st->v.guard = st->last_flags != 0;
	st->v.guard_mandatory = !!(st->last_flags & SBX_FS_GUARD_MANDATORY);
	return 0;
}

/* The entry: the extension's program, or a global function. */
#ifdef SBX_EXTENSION
/*
 * The matcher as the extension object's own global function, for its other
 * extensions (fs_judge.h): verified once in each, and its callers see one
 * unknown verdict, not one path per outcome of the walk. libbpf links
 * calls only to functions in .text, not to another program's entry.
 */
__attribute__((noinline)) int fs_match_run(struct sbx_path *p, __u32 len, __u32 policy_id, __u32 mask,
					    struct fs_state *st)
{
	return fs_match_body(p, len, policy_id, mask, st);
}

SEC("freplace/fs_match")
int fs_match(struct sbx_path *p, __u32 len, __u32 policy_id, __u32 mask, struct fs_state *st)
#else
__attribute__((noinline)) int fs_match(struct sbx_path *p, __u32 len, __u32 policy_id,
					__u32 mask, struct fs_state *st)
#endif
{
	return fs_match_body(p, len, policy_id, mask, st);
}

#elif defined(SBX_FS_MATCH_STUB)
/*
 * The enforcement object's fs_match: a stand-in the loader replaces with
 * the extension's before any program is attached (loader.c shared_load).
 * Until then, and if it never is, every path is denied everything, as one
 * that cannot be judged. Opaque to the compiler, which must neither drop
 * an argument nor assume what it writes.
 */
__attribute__((noinline)) int fs_match(struct sbx_path *p, __u32 len, __u32 policy_id,
					__u32 mask, struct fs_state *st)
{
	int r = 0;

	asm volatile("" : "+r"(r) : "r"(p), "r"(len), "r"(policy_id), "r"(mask), "r"(st) : "memory");
	if (st)
		fs_deny_all(st);
	return r;
}
#else
int fs_match(struct sbx_path *p, __u32 len, __u32 policy_id, __u32 mask, struct fs_state *st);
#endif /* SBX_FS_MATCH_EXTERN, SBX_FS_MATCH_STUB */
#endif /* SBX_FS_MATCH_H */
