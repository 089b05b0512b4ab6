/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fs_match.h — path-rule matching, shared by the LSM programs (fs.bpf.c) and
 * the host test program (tests/bpf/fs_match_test.bpf.c) that runs the very
 * same code through BPF_PROG_TEST_RUN on a kernel that refuses LSM programs.
 *
 * Matching walks the path once, byte by byte (bpf_loop, so the verifier sees
 * one small callback instead of a 4096-iteration unrolled loop), keeping an
 * FNV-1a hash of the prefix read so far. At every '/' (and at the end) the
 * prefix before it is a candidate rule path and is looked up in fs_rules by
 * (policy, length, hash). Rules found later are longer, hence more specific,
 * and overwrite the verdict of shorter ones: "most specific rule wins" falls
 * out of the walk order. Cost: one hash lookup per path component, whatever
 * the number of rules.
 *
 * The includer defines the fs_rules map before including this file.
 */
#ifndef SBX_FS_MATCH_H
#define SBX_FS_MATCH_H

struct fs_walk {
	const char *path;	/* SBX_PATH_MAX bytes of map memory */
	__u32 len;		/* bytes of path, without the NUL */
	__u32 policy_id;
	__u64 hash;		/* of path[0..i) */
	__u32 rule_id;		/* deciding rule; SBX_RULE_NONE if none */
	__u32 read_denied;	/* verdict for reading so far */
};

static __always_inline void fs_walk_lookup(struct fs_walk *w, __u32 prefix_len)
{
	struct sbx_fs_key key = {
		.policy_id = w->policy_id,
		.len = prefix_len,
		.hash = w->hash,
	};
	struct sbx_fs_rule *rule;

	rule = bpf_map_lookup_elem(&fs_rules, &key);
	if (!rule)
		return;
	/* Both flags on one path cannot come from the compiler; deny wins anyway. */
	if (rule->flags & SBX_FS_DENY_READ) {
		w->read_denied = 1;
		w->rule_id = rule->rule_id;
	} else if (rule->flags & SBX_FS_ALLOW_READ) {
		w->read_denied = 0;
		w->rule_id = rule->rule_id;
	}
}

static long fs_walk_step(__u32 i, void *ctx)
{
	struct fs_walk *w = ctx;
	unsigned char c;

	if (i >= w->len)
		return 1;
	c = w->path[i & (SBX_PATH_MAX - 1)];
	if (c == '/')
		fs_walk_lookup(w, i);	/* the prefix before this slash */
	w->hash = sbx_hash_byte(w->hash, c);
	return 0;
}

/*
 * Judge a read of @path (@len bytes, absolute, normalised as d_path gives it)
 * under @policy_id. Returns 1 to deny, 0 to allow; *rule_id names the rule
 * that decided (SBX_RULE_NONE when none matched).
 */
static __always_inline int fs_match_read(const char *path, __u32 len, __u32 policy_id,
					  __u32 *rule_id)
{
	struct fs_walk w = {
		.path = path,
		.len = len,
		.policy_id = policy_id,
		.hash = SBX_HASH_INIT,
		.rule_id = SBX_RULE_NONE,
	};

	if (len >= SBX_PATH_MAX) {
		*rule_id = SBX_RULE_NONE;
		return 1;	/* cannot be judged: fail closed */
	}
	bpf_loop(len, fs_walk_step, &w, 0);
	if (len > 1)	/* "/" itself was judged as the empty prefix */
		fs_walk_lookup(&w, len);
	*rule_id = w.rule_id;
	return w.read_denied;
}

#endif /* SBX_FS_MATCH_H */
