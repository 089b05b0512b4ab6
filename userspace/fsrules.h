/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fsrules.h — a policy's file rules compiled to the kernel's fs_rules map
 * entries (struct sbx_fs_key → struct sbx_fs_rule), and installed/removed.
 */
#ifndef SBX_FSRULES_H
#define SBX_FSRULES_H

#include <stddef.h>
#include <linux/types.h>
#include "sbx_abi.h"

struct policy;
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

/* Write @c into the kernel map (all or nothing) / remove it again. */
int fs_install(struct sbx_loader *l, const struct fs_compiled *c);
void fs_uninstall(struct sbx_loader *l, const struct fs_compiled *c);

#endif
