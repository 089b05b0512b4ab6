/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * grants.h — live grants (`sbx-bpf grant`): a read, write or connect
 * permission given to an attached cgroup for a while, on top of its
 * policy, that the kernel takes back by itself when the time is up
 * (CLOCK_BOOTTIME; sbx_abi.h: the base fields of struct sbx_fs_rule, the
 * expiry of struct sbx_dns_slot).
 *
 * The cgroup's record (sbxstate.h) keeps its grants. From them, the
 * policy's file rules (kept in the record too) and the kernel's current
 * entries, this module plans the map writes that make the kernel say what
 * the record says, and makes them all or none. The maps are reached
 * through struct grant_map_ops, so the unit tests run it without BPF.
 *
 * Library code: nothing prints; errors are -errno, with a message where
 * the caller needs one.
 */
#ifndef SBX_GRANTS_H
#define SBX_GRANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <linux/types.h>

#include "fsrules.h"
#include "policy.h"
#include "sbx_abi.h"

struct sbx_loader;

enum grant_kind {
	GRANT_READ,	/* allowRead at/beneath a path */
	GRANT_WRITE,	/* allowWrite at/beneath a path */
	GRANT_CONNECT,	/* one address (and ports): a dns_allow slot */
	GRANT_DOMAIN,	/* the addresses a name had when the grant was made */
};

enum grant_state {
	GRANT_ACTIVE,
	GRANT_LAPSED,	/* a file grant still in its time whose entries ended with an earlier grant */
	GRANT_EXPIRED,
};

#define GRANT_ADDRS_MAX		16	/* addresses one --domain grant keeps */
#define GRANTS_MAX		64	/* grants in one record, expired ones included */
#define GRANT_TTL_MAX_MS	(365LL * 86400 * 1000)
/* An expired grant stays in the record this long (`grants` shows it), then goes. */
#define GRANT_KEEP_EXPIRED_S	300

struct grant {
	__u32 id;			/* per cgroup, from 1; rule id SBX_RULE_GRANT_BASE + id */
	enum grant_kind kind;
	char target[SBX_PATH_MAX];	/* as shown: the path, "ADDR[:PORTS]", "NAME[:PORTS]" */
	char name[256];			/* domain: the name that was resolved */
	__u8 addrs[GRANT_ADDRS_MAX][16];	/* connect, domain: IPv6, or IPv4 as ::ffff:a.b.c.d */
	size_t nr_addrs;
	__u16 lo, hi;			/* ports; 0-65535 for all */
	__u64 expires_ns;		/* CLOCK_BOOTTIME: what the kernel goes by */
	long long expires_wall;		/* the same moment in unix seconds, as it looked at grant time */
	long long created;		/* unix seconds */
};

const char *grant_kind_name(enum grant_kind kind);	/* "read", "write", "connect", "domain" */
bool grant_is_file(const struct grant *g);		/* read or write: fs_rules, not dns_allow */
const char *grant_state_name(enum grant_state state);	/* "active", "lapsed", "expired" */

/*
 * --ttl: "90s", "30m", "2h", "1d", "1h30m" (limits_parse_duration), more
 * than 0 and at most GRANT_TTL_MAX_MS. In ns; -EINVAL with @err filled.
 */
int grant_parse_ttl(const char *s, __u64 *ns, char *err, size_t errsz);
/*
 * The target of one --read/--write/--connect/--domain flag into @g (kind,
 * target, ports, and the address of a connect grant). Paths go through
 * the policy's own handling (~, relative to @env->cwd, normalised,
 * symlinked prefixes resolved); addresses and names through its network
 * syntax. A --domain that is an IP literal becomes a connect grant; the
 * name of one is resolved by the caller (grant_set_addrs). -EINVAL with
 * @err filled.
 */
int grant_parse_target(struct grant *g, enum grant_kind kind, const char *arg,
		       const struct policy_env *env, char *err, size_t errsz);
/* The addresses a domain grant's name resolved to (deduplicated, at most GRANT_ADDRS_MAX). */
void grant_add_addr(struct grant *g, const __u8 addr[16]);
/* "127.0.0.2", "::1". */
void grant_format_addr(const __u8 addr[16], char *buf, size_t sz);
/* Unix seconds as RFC 3339 in UTC: "2026-11-22T05:00:00Z". */
void grant_format_time(long long t, char *buf, size_t sz);
/* "grant 3: read /home/u/.ssh/known_hosts (until 2026-11-22T05:00:00Z)": events name the grant so. */
void grant_describe(const struct grant *g, char *buf, size_t sz);

/* The state of @g at @now (CLOCK_BOOTTIME), @fs_until being the record's grants_fs_until_ns. */
enum grant_state grant_state(const struct grant *g, __u64 now, __u64 fs_until);
/* Drop the grants expired for more than GRANT_KEEP_EXPIRED_S; the new count. */
size_t grants_prune(struct grant *g, size_t n, __u64 now);
/*
 * Would @p keep a file grant of @kind at @path from taking effect? A
 * mandatory pattern anywhere on the path (writes), or an any-depth deny of
 * the same kind matching the path itself (at one path a deny beats an
 * allow in the kernel). True with the pattern in @why.
 */
bool grant_shadowed(const struct policy *p, enum grant_kind kind, const char *path, char *why,
		    size_t sz);
/* More than SBX_DNS_SLOTS live grants on one address: -E2BIG, the address in @why. */
int grants_check_addrs(const struct grant *g, size_t n, __u64 now, char *why, size_t sz);

/* --- the record ------------------------------------------------------------------ */

/* One grant as the record keeps it (with its "text"), and back. */
json_t *grant_to_json(const struct grant *g);
int grant_from_json(const json_t *o, struct grant *g);
/*
 * The grants of a record (*@g malloc'ed, NULL when none), its next grant
 * id (1 for a record without one) and grants_fs_until_ns. -EINVAL for
 * grants this build cannot read.
 */
int grants_from_record(const json_t *record, struct grant **g, size_t *n, __u32 *next_id,
		       __u64 *fs_until);
/* A copy of @record with these grants, next id and expiry of the file entries. NULL: ENOMEM. */
json_t *grants_record_set(const json_t *record, const struct grant *g, size_t n, __u32 next_id,
			  __u64 fs_until);
/*
 * The attached policy's file rules as the record keeps them ("fs"), by
 * rule id, into @p (zeroed by the caller; policy_free it). -ENODATA for a
 * record without them (written by an older build), -EINVAL if unreadable.
 */
int grants_record_policy(const json_t *record, struct policy *p);

/* --- file grants: fs_rules entries -------------------------------------------------- */

/*
 * @p's file rules plus the file grants of @g live at @now (allowRead,
 * allowWrite with ids SBX_RULE_GRANT_BASE + id; fs_compile_extra), and
 * *@until: the earliest expiry among them, 0 when there is none.
 */
int grants_compile_fs(const struct policy *p, const struct grant *g, size_t n, __u64 now,
		      __u32 policy_id, struct fs_compiled *with, __u64 *until);
/*
 * The entries that make the kernel say @with until @until and @policy
 * from then on: for each key of @with whose value differs from @policy's,
 * @with's value with @policy's in the base fields (zeros where @policy has
 * no entry) and expires_ns @until; elsewhere @policy's own value. Every
 * key (@all: a fresh install) or the grant-changed ones only. With @until
 * 0, @policy alone.
 */
int grants_fs_entries(const struct fs_compiled *policy, const struct fs_compiled *with, __u64 until,
		      bool all, struct fs_compiled *out);

/* --- planning and applying map writes ------------------------------------------------ */

struct grant_write {
	bool dns;			/* a dns_allow entry, else an fs_rules entry */
	bool had, keep;			/* in the map before; after (else deleted) */
	struct sbx_fs_key fs_key;
	struct sbx_fs_rule fs_old, fs_new;
	struct sbx_dns_key dns_key;
	struct sbx_dns_entry dns_old, dns_new;
};

struct grant_plan {
	struct grant_write *w;
	size_t nr, cap;
};

/*
 * The fs_rules writes from @cur (every entry of the policy id in the
 * kernel, sorted: fs_read_policy) to grants_fs_entries(@policy, @with,
 * @until) for every key, and the deletion of keys only a grant had put
 * there. -ESTALE when @cur does not hold @policy: the record does not
 * describe the rules in the kernel.
 */
int grant_plan_fs(struct grant_plan *plan, const struct fs_compiled *policy,
		  const struct fs_compiled *with, __u64 until, const struct fs_compiled *cur);

struct grant_dns_cur {
	struct sbx_dns_key key;
	struct sbx_dns_entry e;
};

/*
 * The dns_allow writes that give every address of the connect and domain
 * grants of @g live at @now a slot (SBX_DOMAIN_GRANT, rule id, ports,
 * expiry), and take every other grant slot out of the cgroup's entries
 * @cur; the resolver's slots stay. -E2BIG: more grants on one address than
 * an entry has slots.
 */
int grant_plan_dns(struct grant_plan *plan, __u64 cgid, const struct grant *g, size_t n, __u64 now,
		   const struct grant_dns_cur *cur, size_t nr_cur);
/*
 * One entry's slots: every SBX_DOMAIN_GRANT slot whose rule id is not in
 * @want goes; each of @want takes its own slot (same rule id), else a free
 * or expired one, else the one expiring first that is not one of @want
 * (as the resolver does: that name's later connections are denied, never
 * wrongly allowed). -E2BIG when @want alone is more than the slots.
 */
int grant_slots_merge(struct sbx_dns_entry *e, const struct sbx_dns_slot *want, size_t n, __u64 now);
void grant_plan_free(struct grant_plan *plan);

struct grant_map_ops {
	int (*fs_put)(void *ctx, const struct sbx_fs_key *k, const struct sbx_fs_rule *r);
	int (*fs_del)(void *ctx, const struct sbx_fs_key *k);
	int (*dns_put)(void *ctx, const struct sbx_dns_key *k, const struct sbx_dns_entry *e);
	int (*dns_del)(void *ctx, const struct sbx_dns_key *k);
};

/* The loader's maps (ctx: the struct sbx_loader). */
extern const struct grant_map_ops grant_loader_ops;

/*
 * Make the writes of @plan in order (a deletion of what is gone counts as
 * done). When one fails, the writes before it are undone, last first, and
 * its error returned: *@failed is its index, *@undo_failed how many could
 * not be undone (0: the maps are as before).
 */
int grant_plan_apply(const struct grant_plan *plan, const struct grant_map_ops *ops, void *ctx,
		     size_t *failed, size_t *undo_failed);
/* The kernel's dns_allow entries of @cgid (*@cur malloc'ed). 0 or -errno. */
int grants_read_dns(struct sbx_loader *l, __u64 cgid, struct grant_dns_cur **cur, size_t *n);

/* Grants of @record in force at CLOCK_BOOTTIME @now (not expired, not lapsed); 0 if unreadable. */
size_t grants_active(const json_t *record, __u64 now);

/*
 * Live grants over many records, each file parsed again only when it
 * changed: a record holds its whole policy (megabytes with 10,000 rules),
 * while its grants change only when a grant does. A file is the same while
 * its device, inode, size and mtime are (records are replaced whole, by
 * rename). Zero-initialised; one count is grants_tally_begin, a
 * grants_tally_record per record, grants_tally_end (which forgets the
 * records not seen since the begin).
 */
struct grants_tally {
	struct grants_seen *e;
	size_t n;
	size_t parses;		/* records read since it was made */
};

void grants_tally_begin(struct grants_tally *t);
/* The grants of sandbox @cgid's record at @path live at @now; 0 when it is unreadable. */
size_t grants_tally_record(struct grants_tally *t, __u64 cgid, const char *path, __u64 now);
void grants_tally_end(struct grants_tally *t);
void grants_tally_free(struct grants_tally *t);

#endif
