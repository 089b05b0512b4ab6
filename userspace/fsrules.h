/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fsrules.h — a policy's file rules compiled to the kernel's fs_rules map
 * entries (struct sbx_fs_key → struct sbx_fs_rule), and installed/removed.
 */
#ifndef SBX_FSRULES_H
#define SBX_FSRULES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "policy.h"
#include "sbx_abi.h"

struct sbx_loader;

struct fs_entry {
	struct sbx_fs_key key;
	struct sbx_fs_rule rule;
};

struct fs_compiled {
	struct fs_entry *entries;	/* one per distinct key, merged */
	size_t nr;
	__u32 any_depth_mask;		/* as struct sbx_sandbox.any_depth_mask */
};

/* Key of an absolute rule path ("/" is the empty prefix). */
struct sbx_fs_key fs_key_absolute(__u32 policy_id, const char *path);
/* Key of the any-depth component sequence @rel ("a" or "a/b"); len holds the count. */
struct sbx_fs_key fs_key_any_depth(__u32 policy_id, const char *rel);
/*
 * Fold @add into @into: deny-read > allow-read; mandatory > deny-write >
 * allow-write; the first guard and the first allowUnixSockets rule stay.
 */
void fs_rule_merge(struct sbx_fs_rule *into, const struct sbx_fs_rule *add);

/* Compile @p's rules for @policy_id: entries, guards, mask. 0 or -errno. */
int fs_compile(const struct policy *p, __u32 policy_id, struct fs_compiled *out);
void fs_compiled_free(struct fs_compiled *c);

/*
 * A rule compiled after the policy's with an id of its own (a grant:
 * SBX_RULE_GRANT_BASE + its id). Absolute allowRead/allowWrite only.
 */
struct fs_extra_rule {
	enum rule_kind kind;
	const char *path;
	__u32 id;
};

/*
 * fs_compile, then @extra on top: at an extra rule's own path it wins over
 * the policy's allow and deny of the same kind (a grant is the user's
 * explicit exception), never over a mandatory rule; its guards merge as
 * any rule's. -EINVAL for an extra rule that is not an absolute allow.
 */
int fs_compile_extra(const struct policy *p, const struct fs_extra_rule *extra, size_t n,
		     __u32 policy_id, struct fs_compiled *out);
/* The entry of @key in @c (sorted, as compiled), or NULL. */
const struct fs_entry *fs_compiled_find(const struct fs_compiled *c, const struct sbx_fs_key *key);
/* Do @a and @b say the same in their first five fields (what applies without a grant)? */
bool fs_rule_same(const struct sbx_fs_rule *a, const struct sbx_fs_rule *b);
/* What @r says once its grant ended (its base fields, all zero without one), as a plain rule. */
struct sbx_fs_rule fs_rule_base(const struct sbx_fs_rule *r);
/* Every fs_rules entry of @policy_id in the kernel, sorted like a compile. 0 or -errno. */
int fs_read_policy(struct sbx_loader *l, __u32 policy_id, struct fs_compiled *out);

/* Write @c into the kernel map (all or nothing) / remove it again. */
int fs_install(struct sbx_loader *l, const struct fs_compiled *c);
/*
 * Why installing rules or a sandbox entry failed, as a sentence: a full
 * kernel map (-E2BIG) names the map and its size, so the user knows it is
 * the host's shared capacity, not the policy's syntax. Anything else:
 * strerror.
 */
const char *rules_install_strerror(int err);
const char *sandbox_install_strerror(int err);
void fs_uninstall(struct sbx_loader *l, const struct fs_compiled *c);

#endif
