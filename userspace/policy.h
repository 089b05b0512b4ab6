/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy.h — a sandbox's rules as userspace holds them: normalised absolute
 * paths with their kind, and the text shown for them in events.
 */
#ifndef SBX_POLICY_H
#define SBX_POLICY_H

#include <stddef.h>
#include <linux/types.h>

struct sbx_loader;

enum rule_kind {
	RULE_DENY_READ,
	RULE_ALLOW_READ,
};

struct policy_rule {
	enum rule_kind kind;
	char *path;		/* absolute, normalised, symlinked prefixes resolved */
	char *text;		/* as shown to people: "deny-read /root/.ssh" */
};

struct policy {
	struct policy_rule *rules;
	size_t nr_rules;
};

const char *rule_kind_name(enum rule_kind kind);

/*
 * Lexically normalise @in (relative paths are taken from @cwd): collapse
 * "//" and ".", resolve "..", drop a trailing slash. 0 or -ENAMETOOLONG/-EINVAL.
 */
int path_normalize(const char *in, const char *cwd, char *out, size_t sz);
/*
 * Replace the longest existing prefix of the absolute @path by its real
 * location (symlinks resolved), keeping the part that does not exist yet,
 * so a rule written against a symlink protects what it points to.
 */
int path_resolve(char *path, size_t sz);

/* Add a rule for @path (normalised and resolved here). 0 or -errno. */
int policy_add(struct policy *p, enum rule_kind kind, const char *path, const char *cwd);
const char *policy_rule_text(const struct policy *p, __u32 rule_id);
/* Write the rules into the kernel maps under @policy_id. */
int policy_install(const struct policy *p, struct sbx_loader *l, __u32 policy_id);
void policy_free(struct policy *p);

#endif
