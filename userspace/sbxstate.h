/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sbxstate.h — the host agent's record of what `attach` put on each
 * cgroup: one JSON file per cgroup in the state directory, written whole
 * (rename), read by `list` and by the daemon for rule texts.
 */
#ifndef SBX_STATE_H
#define SBX_STATE_H

#include <stdbool.h>
#include <jansson.h>
#include <linux/types.h>

#define SBX_STATE_DIR	"/run/sbx-bpf/sandboxes"

struct policy;

struct state_entry {
	const char *cgroup;	/* path */
	__u64 cgroup_id;
	__u32 policy_id;
	bool audit;
};

/* Record @e with @p's name, hash and rule texts (replacing an earlier record). 0 or -errno. */
int state_write(const char *dir, const struct state_entry *e, const struct policy *p);
int state_remove(const char *dir, __u64 cgid);
/* The record of @cgid (caller owns it), or NULL. */
json_t *state_read(const char *dir, __u64 cgid);
/* The text of @rule_id in a record, or NULL (built-in ids, unknown ids). */
const char *state_rule_text(const json_t *st, __u32 rule_id);

#endif
