/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fs_match.h — path-rule matching, shared by the extension object
 * (shared.bpf.c), which the loader links into every LSM program that calls
 * fs_match (fs.bpf.c, net.bpf.c: their stand-in, SBX_FS_MATCH_STUB), and
 * the host test program (tests/bpf/fs_match_test.bpf.c) that runs the very
 * same code through BPF_PROG_TEST_RUN on a kernel that refuses LSM programs.
 *
 * One walk over the path, 8 bytes a step (bpf_loop, so the verifier sees
 * one small callback instead of a 4096-iteration unrolled loop), hashes
 * the current component's bytes two ways, 8 at a time (sbx_abi.h). At
 * every component end ("/" = the empty prefix before the first component,
 * then each '/' and the end of the path):
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
	/*
	 * The current component's bytes since its last whole chunk
	 * (sbx_abi.h), byte k at bits 8k, and where the component starts in
	 * path: a chunk is folded into the component's hashes when it fills,
	 * and at the component's end. How much of the chunk is taken is told
	 * from the positions, never counted. Both start as, and are reset to,
	 * a 0 the verifier cannot see (fs_unknown_zero): from a known 0 it
	 * would know every later byte's place in its chunk, and keep one
	 * state for each place a component can begin (95,000 instructions to
	 * verify the matcher, where 1,900 do). Only between the steps of one
	 * walk: every walk ends at a component's end.
	 */
	__u64 acc;
	__u32 start;
	__u32 pad;
};

#ifndef SBX_FS_MATCH_EXTERN
/* Whether the filter leaves it possible that a rule has this key (most keys are no rule's). */
static __always_inline bool fs_filter_has(const struct fs_state *w, __u32 len, __u64 h1, __u64 h2)
{
	__u32 bit = sbx_fs_filter_bit(w->policy_id, len, h1, h2);

	return fs_filter[(bit >> 6) & (SBX_FS_FILTER_WORDS - 1)] & (1ULL << (bit & 63));
}

/* Which byte (0..7) has @bit, a word's one bit, the high bit of a byte. */
static __always_inline __u64 fs_byte_index(__u64 bit)
{
	/* (1 << 8j) times the bytes 7, 6, ..., 0 moves byte 7 - j, which is j, to byte 7. */
	return ((bit >> 7) * 0x0001020304050607ULL) >> 56;
}

/* fs_name_clear's bpf_loop context: the name's words, its hashes so far, and its last word's length. */
struct fs_name_walk {
	__u64 w[4];
	__u64 c1, c2;
	__u32 tail;	/* the name's bytes in the word its NUL is in (0 to 7) */
	__u32 ended;	/* the NUL was found */
};

/*
 * bpf_loop callback: word @i of the name into its two component hashes,
 * as fs_walk_step folds it: whole, or only its bytes before the NUL (none
 * folded when the NUL is its first byte), and then the walk ends. Checked
 * once by the verifier, and run only for the words a name has.
 */
static long fs_name_step(__u32 i, void *ctx)
{
	struct fs_name_walk *nw = ctx;
	__u64 word = nw->w[i & 3];
	/* The high bit of each zero byte, exact up to the first one; bits above it do not matter. */
	__u64 z = (word - 0x0101010101010101ULL) & ~word & 0x8080808080808080ULL;
	__u64 first, n;

	if (!z) {
		nw->c1 = sbx_hash_chunk1(nw->c1, word);
		nw->c2 = sbx_hash_chunk2(nw->c2, word);
		return 0;
	}
	first = z & -z;
	n = fs_byte_index(first);
	if (n) {
		word &= (first >> 7) - 1;
		nw->c1 = sbx_hash_chunk1(nw->c1, word);
		nw->c2 = sbx_hash_chunk2(nw->c2, word);
	}
	nw->tail = n;
	nw->ended = 1;
	return 1;
}

/* Whether the filter leaves it possible that a rule has the any-depth key of the last @k components (1, 0). */
static __always_inline __u64 fs_name_any_depth(const struct fs_state *st, __u32 ncomp, __u32 k, __u64 c1, __u64 c2)
{
	__u64 s1 = SBX_HASH_INIT, s2 = SBX_HASH2_INIT;
	__u32 idx;

#pragma unroll
	for (__u32 j = k; j > 1; j--) {	/* oldest first, as fs_lookup_any_depth */
		idx = (ncomp - j) & (SBX_ANY_DEPTH_MAX - 1);
		s1 = sbx_seq_hash(s1, st->comp1[idx]);
		s2 = sbx_seq_hash(s2, st->comp2[idx]);
	}
	return fs_filter_has(st, SBX_FS_KEY_ANY_DEPTH | k, sbx_seq_hash(s1, c1), sbx_seq_hash(s2, c2));
}

/*
 * The directory memo's quick way (fs.bpf.c dir_memo_says): would matching
 * a name on from directory state @st (FS_MATCH_RESUME) leave @st's verdict
 * as it is? The name is @w0..@w3, a dentry's inline store, NUL-terminated
 * within those 32 bytes. It would when every key its component end looks
 * up (fs_component_end: the whole path, and its last 1 to 4 components for
 * the any-depth sizes in @st->mask) misses the filter: no rule has it, so
 * nothing matches, and the verdict is @st->v with its guard cleared.
 * Returns the name's length (1 to 31) then; 0 when a key may be a rule's,
 * or when fs_match would not resume from @st (then it denies), or there
 * is no NUL: the caller matches the name the whole way. The same hashes
 * as the walk's, from the same state: tests/bpf/fs_match_test.c checks
 * each answer against the resumed match. The name's words are walked
 * only as far as its NUL; the keys of both sizes are hashed, and asked
 * only where the policy uses them.
 */
static __always_inline __u32 fs_name_clear_body(const struct fs_state *st, __u64 w0, __u64 w1, __u64 w2,
						__u64 w3)
{
	struct fs_name_walk nw = { { w0, w1, w2, w3 }, SBX_HASH_INIT, SBX_HASH2_INIT, 0, 0 };
	__u32 ncomp, mask, len;
	__u64 maybe;
	long words;

	if (!st || st->stop || !st->base)
		return 0;
	/* The words walked: the last one has the NUL, and its @tail bytes are the name's. */
	words = bpf_loop(4, fs_name_step, &nw, 0);
	if (!nw.ended || words < 1 || words > 4)
		return 0;
	len = (__u32)(words - 1) * 8 + nw.tail;
	if (!len || st->base + len >= SBX_PATH_MAX)
		return 0;
	if (fs_filter_has(st, st->base + len, sbx_seq_hash(st->h1, nw.c1), sbx_seq_hash(st->h2, nw.c2)))
		return 0;
	ncomp = st->ncomp + 1;	/* the name's end counted: it is the newest of the last k */
	mask = st->mask;
	if (mask & ~3u)
		return 0;	/* patterns of 3 or 4 components: a policy's own, rare; matched the whole way */
	/* Sizes 1 and 2 (the mandatory set's), each asked where the policy uses it and ncomp >= k. */
	maybe = fs_name_any_depth(st, ncomp, 1, nw.c1, nw.c2) & mask;
	maybe |= fs_name_any_depth(st, ncomp, 2, nw.c1, nw.c2) & (mask >> 1) & ((1 - ncomp) >> 31);
	return maybe ? 0 : len;
}

#if defined(SBX_EXTENSION)
/*
 * In the extension object, verified once and put in place of the
 * enforcement programs' stand-in (below), as fs_match is: written into
 * path_mknod and path_unlink, it cost each load without a daemon 10 to
 * 15 M instructions on 6.12 (bench/RESULTS.md, stop 58).
 */
SEC("freplace/fs_name_clear")
int fs_name_clear(const struct fs_state *st, __u64 w0, __u64 w1, __u64 w2, __u64 w3)
{
	return fs_name_clear_body(st, w0, w1, w2, w3);
}
#elif defined(SBX_FS_MATCH_STUB)
/* The enforcement object's stand-in: 0, the name matched the whole way, until the loader links the extension's. */
__attribute__((noinline)) int fs_name_clear(const struct fs_state *st, __u64 w0, __u64 w1, __u64 w2, __u64 w3)
{
	int r = 0;

	asm volatile("" : "+r"(r) : "r"(st), "r"(w0), "r"(w1), "r"(w2), "r"(w3) : "memory");
	return r;
}
#else
__attribute__((noinline)) int fs_name_clear(const struct fs_state *st, __u64 w0, __u64 w1, __u64 w2, __u64 w3)
{
	return fs_name_clear_body(st, w0, w1, w2, w3);
}
#endif
#endif /* !SBX_FS_MATCH_EXTERN */

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

/* One chunk of the current component (sbx_abi.h) into its two hashes. */
static __always_inline void fs_fold_into(struct fs_state *st, __u64 chunk)
{
	st->c1 = sbx_hash_chunk1(st->c1, chunk);
	st->c2 = sbx_hash_chunk2(st->c2, chunk);
}

/*
 * A component end: @prefix_len bytes of path, the component just read
 * included, its last chunk @chunk still to fold when @partial (bytes of
 * it). A global function: the verifier checks it once per program instead
 * of once per state of every caller, which keeps loading fast.
 */
__attribute__((noinline)) int fs_component_end(struct fs_state *w, __u32 prefix_len, __u64 chunk, __u64 partial)
{
	__u32 flags = 0;

	if (!w)
		return 0;
	if (partial)	/* the component's last chunk, not full: folded here, verified once */
		fs_fold_into(w, chunk);
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
	w->c1 = SBX_HASH_INIT;	/* the next component's */
	w->c2 = SBX_HASH2_INIT;
	return 0;
}

/* FS_WALK_STRIDE bytes per bpf_loop iteration: fewer callback calls per path. */
#define FS_WALK_STRIDE	8
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "fs_walk_step takes byte j from bits 8j");

/*
 * 0 at run time, and a number the verifier does not know: two loads of one
 * word of @st, which only this walk writes (its map memory is the
 * caller's alone), subtracted. The compiler must load twice (volatile);
 * the verifier tracks no map memory. Three instructions, at a '/'.
 */
static __always_inline __u64 fs_unknown_zero(struct fs_state *st)
{
	return *(volatile __u64 *)&st->h1 - *(volatile __u64 *)&st->h1;
}

/* The high bit of each byte of @word that is '/', and no other bit. */
static __always_inline __u64 fs_slash_bytes(__u64 word)
{
	const __u64 low7 = 0x7f7f7f7f7f7f7f7fULL;
	__u64 z = word ^ 0x2f2f2f2f2f2f2f2fULL;	/* a '/' byte becomes 0 */

	/* Exact: no sum here carries out of its byte, so no byte is flagged by its neighbour. */
	return ~(((z & low7) + low7) | z) & ~low7;
}

/*
 * The next 8 bytes (fewer at the path's end): one load (x86 is
 * little-endian: byte j is bits 8j..). The bytes before the word's first
 * '/' (all of them, in most words of a long name and every word of a name
 * resumed from a directory's state) go into the current component's chunk
 * at once: shifted in, and the chunk folded if it fills. Only the bytes
 * from the first '/' on go one by one, and there a chunk cannot fill: a
 * component that starts in this word has at most 7 of its bytes here. The
 * bytes past the path's end are zeros, which change no chunk and are no
 * '/', so no byte asks whether it is past the end.
 */
static long fs_walk_step(__u32 i, void *ctx)
{
	struct fs_walk *w = ctx;
	struct fs_state *st = w->st;
	__u32 at = i * FS_WALK_STRIDE, len = w->len, left = len - at, start = w->start, pos;
	__u64 word = *(const __u64 *)(w->path + (at & (SBX_PATH_MAX - FS_WALK_STRIDE)));
	__u64 acc = w->acc, slash, head, part, fill;
	unsigned char c;

	if (at >= len)
		return 1;
	if (left < FS_WALK_STRIDE)
		word &= ~0ULL >> (64 - 8 * left);
	else
		left = FS_WALK_STRIDE;
	slash = fs_slash_bytes(word);
	slash &= -slash;			/* the first '/' only: bit 8j + 7 */
	head = slash ? fs_byte_index(slash) : left;	/* the current component's bytes here */
	part = word & ((slash >> 7) - 1);	/* ... which are all 8 when there is no '/' */
	fill = ((at - start) & 7) * 8;		/* bits of the chunk already taken */
	acc |= part << fill;
	if (fill + 8 * head >= 64) {
		fs_fold_into(st, acc);
		acc = (part >> (63 - fill)) >> 1;	/* what did not fit; 0 when fill is 0 */
	}
	if (!slash)
		goto out;
	word >>= 8 * head;			/* from the first '/' on */
#pragma unroll
	for (int j = 0; j < FS_WALK_STRIDE; j++) {
		c = word >> (8 * j);
		pos = at + head + j;
		if (c == '/') {
			fs_component_end(st, w->base + pos, acc, (pos - start) & 7);	/* 0: the root, "" */
			if (st->stop)
				return 1;
			acc = 0;
			start = pos + 1 + fs_unknown_zero(st);	/* struct fs_walk says why */
		} else {
			acc |= (__u64)c << (((pos - start) & 7) * 8);
		}
	}
out:
	w->acc = acc;
	w->start = start;
	return 0;
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
	/* 0, unseen (struct fs_walk): the step is verified once, not for 0 and again for what it leaves */
	w.acc = fs_unknown_zero(st);
	w.start = w.acc;
	bpf_loop((len + FS_WALK_STRIDE - 1) / FS_WALK_STRIDE, fs_walk_step, &w, 0);
	/* "/" itself was judged as the empty prefix */
	if ((w.base || len > 1) && !st->stop)
		fs_component_end(st, w.base + len, w.acc, (len - w.start) & 7);
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
