/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fs_judge.h — a path's verdict under every sandbox of the chain, once
 * resolve() has put the path in the work slot's walk buffer.
 *
 * sbx_judge_path is verified once, in the extension object (shared.bpf.c,
 * SBX_EXTENSION), and put in place of a stand-in in every file program that
 * judges one path (fs.bpf.c judge_path, which keeps the checks that need
 * the dentry). Written inline in those thirteen programs, its loop over the
 * chain was a fifth to a quarter of what the verifier walked over all
 * programs, on every kernel (bench/RESULTS.md, stop 46).
 * It takes the work slot alone: the chain judge_begin filled, the path,
 * the event; what it leaves there (the event, s->emitted) is the caller's
 * as before.
 */
#ifndef SBX_FS_JUDGE_H
#define SBX_FS_JUDGE_H

#define NEED_READ	1
#define NEED_WRITE	2

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

static __always_inline bool grant_rule(__u32 rule)
{
	return (rule & SBX_RULE_BASE_MASK) == SBX_RULE_GRANT_BASE;
}

/*
 * What verdict @v says of @op asking @need: 0 nothing (allowed, no word);
 * 1 denied (*@rule, and *@op turned into "read" when reading was what a
 * write-open was refused for); 2 allowed by a live grant, whose use is
 * reported (*@rule); 3 denied as a leading part of a mandatory pattern
 * (*@rule). For the judge below and the directory memo's (fs.bpf.c).
 */
static __always_inline int fs_says(const struct fs_verdict *v, __u32 *op, __u32 need, __u32 *rule)
{
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
		*rule = v->guard_rule;
		return 3;
	}
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

#ifdef SBX_EXTENSION
/*
 * What the policy of the sandbox @j judges for says about the path in the
 * walk buffer: 1 (denied: *@rule, and *@op turned into "read" when reading
 * was what a write-open was refused for), 2 (allowed by a live grant,
 * *@rule), or 0.
 */
static __always_inline int match_one(struct judge *j, __u32 *op, __u32 need, __u32 *rule)
{
	struct walk_buf *walk = &j->s->walk;
	int says;

	j->s->ev.flags &= ~SBX_EV_DIRECTORY_ONLY;
	/* Matched where the walk built it; copied into the event only for a denial. */
	fs_match_run((struct sbx_path *)(walk->b + (walk->start & (SBX_PATH_MAX - 1))), walk->len,
		 j->sb->policy_id, match_mask(j->sb->any_depth_mask, need), &j->s->match);
	/* scratch, not stack: the hooks' frames are full */
	says = fs_says(&j->s->match.v, op, need, rule);
	if (says == 3) {
		j->s->ev.flags |= SBX_EV_DIRECTORY_ONLY;
		return 1;
	}
	return says;
}

/*
 * @op asking @need of the path in @s's walk buffer, for each sandbox of
 * @s's chain, outermost first: 0, or -EACCES once an enforcing sandbox
 * denies (each denial, audit and grant used is reported).
 */
SEC("freplace/sbx_judge_path")
int sbx_judge_path(struct sbx_scratch *s, __u32 op, __u32 need)
{
	struct judge j = { .s = s };
	__u32 i, rule, o;
	int ret;

	if (!s)
		return -EACCES;	/* never: the caller judges with a slot */
	/*
	 * Written out per sandbox, as it was inline in the hooks: as a loop,
	 * the compiler kept a dozen addresses on the stack across it, which
	 * the common call (one sandbox) paid for on entry.
	 */
#pragma unroll
	for_each_sandbox(&j, i) {
		o = op;
		ret = match_one(&j, &o, need, &rule);
		if (!ret)
			continue;
		walk_to_event(&s->walk, &s->ev);
		if (ret == 2) {
			if (!s->quiet_grants)
				emit(&j, o, SBX_VERDICT_GRANTED, rule, 0);
			continue;
		}
		ret = deny(&j, o, rule);
		if (ret)
			return ret;
	}
	return 0;
}
#else
/*
 * The stand-in the loader replaces with the extension before any program
 * is attached (loader.c shared_load): until then, and if it never is,
 * every path judged is denied (counted as denied, no record). Opaque to the
 * compiler, which must not assume what it returns.
 */
__noinline int sbx_judge_path(struct sbx_scratch *s, __u32 op, __u32 need)
{
	int r = -EACCES;

	asm volatile("" : "+r"(r) : "r"(s), "r"(op), "r"(need) : "memory");
	stat_inc(SBX_STAT_DENIED);
	return r;
}
#endif /* SBX_EXTENSION */

#endif /* SBX_FS_JUDGE_H */
