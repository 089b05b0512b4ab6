/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sbxstate.h — the host agent's record of what `attach` put on each
 * cgroup: one JSON file per cgroup in the state directory, written whole
 * (rename), read by `list` and by the daemon for rule texts, and by
 * `detach` for the limit values to put back.
 */
#ifndef SBX_STATE_H
#define SBX_STATE_H

#include <stdbool.h>
#include <jansson.h>
#include <linux/types.h>

#include "sbx_limits.h"

#define SBX_STATE_DIR	"/run/sbx-bpf/sandboxes"
/*
 * A `run` on the daemon's programs keeps its resolver's counters here, one
 * record per cgroup (state_write_record, dns_counts_json), for `status`
 * and /metrics: the resolver lives in the run, not in the daemon.
 */
#define SBX_DNS_COUNTS_DIR	"/run/sbx-bpf/dns"

struct policy;

struct state_entry {
	const char *cgroup;	/* path */
	__u64 cgroup_id;
	__u32 policy_id;
	bool audit;
	const struct limit_write *limits;	/* the limit files attach wrote, and their values */
	size_t nr_limits;
	const struct limit_write *restore;	/* what they held before sbx-bpf: detach writes it back */
	size_t nr_restore;
	/* A re-attach: the grants kept (the old record's "grants"), or NULL. */
	const json_t *grants;
	__u32 next_grant_id;
	__u64 grants_fs_until_ns;	/* the expiry the file grants' entries got (grants.h) */
	/*
	 * The daemon runs the cgroup's resolver (an attach with domain rules):
	 * the record gets the rules it applies ("resolver", state_resolver()).
	 */
	bool resolver;
	/* The sandbox's labels (labels.h: --label KEY=VALUE, the OCI hook's), or NULL: none. */
	const json_t *labels;
	/*
	 * attach: memory.events oom_kill and pids.events max as they were (-1:
	 * no such file), from which the daemon reports what the limits refused
	 * ("limit_events"). Without watch_limits the record has none.
	 */
	bool watch_limits;
	long long oom_kill_at, pids_max_at;
};

/* Record @e with @p's name, hash and rule texts (replacing an earlier record). 0 or -errno. */
int state_write(const char *dir, const struct state_entry *e, const struct policy *p);
/* Replace the record of @cgid by @record as a whole (rename). 0 or -errno. */
int state_write_record(const char *dir, __u64 cgid, const json_t *record);
/*
 * Take the lock every command that rewrites records holds (attach, detach,
 * grant, revoke), so two never read-modify-write one record at once. The
 * descriptor to close, or -errno.
 */
int state_lock(const char *dir);
/* The same without waiting: -EWOULDBLOCK while another holds it (the daemon's once-a-second check). */
int state_trylock(const char *dir);
int state_remove(const char *dir, __u64 cgid);
/* The file of @cgid's record, with @suffix ("": the record itself). 0 or -ENAMETOOLONG. */
int state_path(const char *dir, __u64 cgid, const char *suffix, char *buf, size_t sz);
/* The record of @cgid (caller owns it), or NULL. */
json_t *state_read(const char *dir, __u64 cgid);
/*
 * The inode number of @cgid's record in *@ino, or -errno. Records are
 * replaced whole (a new file renamed over the old), so a number that
 * changed means another command rewrote the record.
 */
int state_ino(const char *dir, __u64 cgid, __u64 *ino);
/* The text of @rule_id in a record (a policy rule, a grant), or NULL (built-in ids, unknown ids). */
const char *state_rule_text(const json_t *st, __u32 rule_id);
/*
 * The limit writes under @key ("limits" or "limits_restore") of a record,
 * in the order limits_writes() makes them: the count (0 when the record has
 * none: older records), or -EINVAL for a file this build does not know or a
 * value that is not a string, -E2BIG past @max.
 */
int state_limits(const json_t *st, const char *key, struct limit_write *out, size_t max);
/*
 * The domain rules of a record written with e->resolver, for the daemon's
 * resolver (which never saw the policy): @p, zeroed by the caller, gets
 * net.domains (rule ids as in the policy: the record's "domains" texts
 * name them), net.allow_all_domains and the mode; policy_free() frees it.
 * 0; -ENOENT for a record without them (not the daemon's to resolve: a
 * `run`'s, or an attach without domain rules); -EINVAL for one this build
 * cannot read; -ENOMEM.
 */
int state_resolver(const json_t *st, struct policy *p);
/* {"memory.max": "67108864", "io.max": ["8:0 wbps=5000000"], …}: the shape of records and `list --json`. */
json_t *state_limits_json(const struct limit_write *w, size_t n);

#endif
