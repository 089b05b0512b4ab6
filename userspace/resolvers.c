// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * resolvers.c — the daemon's resolvers for attached cgroups (resolvers.h).
 *
 * A fixed table of RESOLVERS_MAX slots: each resolver's dns_ops context is
 * its slot, whose address never changes. A restart (re-attach) opens the
 * new resolver first and only then closes the old one in the same slot:
 * neither dns_open() nor dns_close() asks for a verdict, so the slot's
 * rules can be swapped between the two.
 *
 * dns_allow is shared with `grant` (connect grants are slots of the same
 * entries), so the map writes keep the grant slots the kernel holds
 * (resolvers_merge_slots). A grant written between our read and our write
 * is lost: denied, never allowed, and the next `grant` plans it again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "events.h"
#include "loader.h"
#include "netrules.h"
#include "policy.h"
#include "resolvers.h"
#include "sbxstate.h"

struct resolver {
	__u64 cgid;			/* 0: the slot is free */
	struct dns_resolver *r;
	struct resolvers *rs;
	struct policy rules;		/* the record's domain rules and mode (state_resolver) */
	struct cgroup_ids above;	/* the cgroups above its own: where its names go out (dns_via_cb) */
	__u16 port4, port6;
	size_t pfd_first, pfd_n;	/* its share of the last resolvers_pollfds() */
};

/* A cgroup whose resolver could not be started by sync: noted once per error. */
struct failure {
	__u64 cgid;			/* 0: free */
	int err;
};

/*
 * Sandboxes whose records said "not the daemon's to resolve" (a `run`'s),
 * by cgroup and policy id: a record is read once, not every second (a big
 * policy's record is megabytes of JSON). A new policy has a new id.
 */
#define NOT_OURS_SLOTS	256

struct not_ours {
	__u64 cgid;
	__u32 policy_id;
};

struct resolvers {
	struct resolvers_opts o;
	struct resolver slot[RESOLVERS_MAX];
	struct failure failed[RESOLVERS_MAX];
	struct not_ours not_ours[NOT_OURS_SLOTS];
};

/* --- dns_allow with the grants kept -------------------------------------------------- */

static bool is_grant(const struct sbx_dns_slot *s)
{
	return s->expires_ns && s->domain_id == SBX_DOMAIN_GRANT;
}

void resolvers_merge_slots(const struct sbx_dns_entry *kernel, const struct sbx_dns_entry *mine,
			   struct sbx_dns_entry *out)
{
	bool taken[SBX_DNS_SLOTS] = {};
	int n = 0, best;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < SBX_DNS_SLOTS; i++)
		if (kernel && is_grant(&kernel->s[i]))
			out->s[n++] = kernel->s[i];
	while (n < SBX_DNS_SLOTS) {
		best = -1;
		for (int i = 0; i < SBX_DNS_SLOTS; i++)
			if (!taken[i] && mine->s[i].expires_ns && !is_grant(&mine->s[i]) &&
			    (best < 0 || mine->s[i].expires_ns > mine->s[best].expires_ns))
				best = i;
		if (best < 0)
			break;
		taken[best] = true;
		out->s[n++] = mine->s[best];
	}
}

static bool has_grants(const struct sbx_dns_entry *e)
{
	for (int i = 0; i < SBX_DNS_SLOTS; i++)
		if (is_grant(&e->s[i]))
			return true;
	return false;
}

static int dns_update_cb(void *ctx, const struct sbx_dns_key *k, const struct sbx_dns_entry *e)
{
	struct sbx_loader *l = ((struct resolver *)ctx)->rs->o.l;
	struct sbx_dns_entry kernel, out;
	bool found = !loader__dns_lookup(l, k, &kernel);

	resolvers_merge_slots(found ? &kernel : NULL, e, &out);
	return loader__dns_update(l, k, &out);
}

/* The resolver is done with the address: the grants on it stay. */
static int dns_remove_cb(void *ctx, const struct sbx_dns_key *k)
{
	struct sbx_loader *l = ((struct resolver *)ctx)->rs->o.l;
	struct sbx_dns_entry kernel, none = {}, out;

	if (!loader__dns_lookup(l, k, &kernel) && has_grants(&kernel)) {
		resolvers_merge_slots(&kernel, &none, &out);
		return loader__dns_update(l, k, &out);
	}
	return loader__dns_delete(l, k);
}

static int dns_client_cb(void *ctx, __u32 key, struct sbx_dns_client *out)
{
	return loader__dns_client(((struct resolver *)ctx)->rs->o.l, key, out);
}

static bool dns_verdict_cb(void *ctx, const char *name, __u32 *rule_id, __u16 *lo, __u16 *hi)
{
	struct domain_verdict v;

	net_domain_verdict(&((struct resolver *)ctx)->rules, name, &v);
	*rule_id = v.rule_id;
	*lo = v.lo;
	*hi = v.hi;
	return v.allowed;
}

/*
 * Names go out through the resolver of the nearest sandbox above with
 * domain rules. The daemon itself lies below none that enforces (it could
 * not load or reach its programs): no self to leave out.
 */
static int dns_via_cb(void *ctx, __u16 *port4)
{
	struct resolver *s = ctx;

	return loader__outer_resolver(s->rs->o.l, &s->above, NULL, port4);
}

static void dns_event_cb(void *ctx, const struct sbx_event *ev)
{
	struct resolvers *rs = ((struct resolver *)ctx)->rs;

	if (rs->o.sink)
		events_emit(rs->o.sink, ev);
}

static const struct dns_ops ops = {
	.update = dns_update_cb,
	.remove = dns_remove_cb,
	.client = dns_client_cb,
	.verdict = dns_verdict_cb,
	.event = dns_event_cb,
	.via = dns_via_cb,
};

/* --- the table ----------------------------------------------------------------------- */

struct resolvers *resolvers_new(const struct resolvers_opts *o)
{
	struct resolvers *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->o = *o;
	for (size_t i = 0; i < RESOLVERS_MAX; i++)
		rs->slot[i].rs = rs;
	return rs;
}

static struct resolver *find(struct resolvers *rs, __u64 cgid)
{
	for (size_t i = 0; i < RESOLVERS_MAX; i++)
		if (rs->slot[i].cgid == cgid)
			return &rs->slot[i];
	return NULL;
}

static void slot_close(struct resolver *s)
{
	struct resolvers *rs = s->rs;

	dns_close(s->r);
	policy_free(&s->rules);
	memset(s, 0, sizeof(*s));
	s->rs = rs;
}

void resolvers_free(struct resolvers *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < RESOLVERS_MAX; i++)
		if (rs->slot[i].cgid)
			slot_close(&rs->slot[i]);
	free(rs);
}

/*
 * The cgroup the record names, opened, if it still is @cgid, and the ids
 * of the cgroups above it into @above. The fd, or -errno.
 */
static int open_cgroup(const json_t *st, __u64 cgid, struct cgroup_ids *above)
{
	const char *path = json_string_value(json_object_get(st, "cgroup"));
	__u64 id = 0;
	int fd, err;

	if (!path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = cgroup_id_of(path, &id);
	if (!err && id != cgid)
		err = -ESTALE;	/* removed, and another made at that path */
	if (!err)
		err = cgroup_ancestor_ids(path, above);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * The record of @cgid: its domain rules into @rules, the cgroup opened
 * (the cgroups above it into @above). The fd, or -errno.
 */
static int read_record(struct resolvers *rs, __u64 cgid, struct policy *rules, struct cgroup_ids *above,
		       char *why, size_t sz)
{
	json_t *st = state_read(rs->o.state_dir, cgid);
	int err = st ? state_resolver(st, rules) : -ENOENT, fd = -1;

	if (err == -ENOENT)
		snprintf(why, sz, "cgroup %llu has no record with domain rules under %s (written by attach)",
			 (unsigned long long)cgid, rs->o.state_dir);
	else if (err)
		snprintf(why, sz, "the domain rules in %s/%llu.json cannot be read: %s", rs->o.state_dir,
			 (unsigned long long)cgid, strerror(-err));
	if (!err && (fd = open_cgroup(st, cgid, above)) < 0) {
		err = fd;
		snprintf(why, sz, "cannot open cgroup %llu (%s): %s", (unsigned long long)cgid,
			 json_string_value(json_object_get(st, "cgroup")) ?: "?", strerror(-err));
		policy_free(rules);
	}
	json_decref(st);
	return err ? err : fd;
}

/* A resolver for @s (whose rules are @rules) and the steering of @cgroup_fd. 0 or -errno with @why. */
static int open_resolver(struct resolvers *rs, struct resolver *s, __u64 cgid, const struct policy *rules,
			 int cgroup_fd, struct dns_resolver **r, char *why, size_t sz)
{
	struct dns_config cfg = {
		.sandbox_cgid = cgid,
		.audit = rules->mode == POLICY_AUDIT,
		.rate = rules->net.dns_rate,
		.burst = rules->net.dns_burst,
		.upstream = rs->o.upstream,
		.ops = &ops,
		.ctx = s,
	};
	int err = dns_open(r, &cfg);

	if (err) {
		snprintf(why, sz, "cannot start a resolver: %s%s", strerror(-err),
			 err == -ENOENT ? " (no nameserver in the daemon's /etc/resolv.conf; or set "
			 "SBX_DNS_UPSTREAM for the daemon)" : "");
		return err;
	}
	err = loader__pin_steer(rs->o.l, rs->o.pin_dir, cgid, cgroup_fd);
	if (err) {
		snprintf(why, sz, "cannot attach the DNS steering programs to cgroup %llu: %s",
			 (unsigned long long)cgid, strerror(-err));
		dns_close(*r);
		*r = NULL;
	}
	return err;
}

int resolvers_start(struct resolvers *rs, __u64 cgid, __u16 *port4, __u16 *port6, char *why, size_t sz)
{
	struct resolver *s = find(rs, cgid) ?: find(rs, 0);
	struct policy rules = {};
	struct dns_resolver *r = NULL;
	struct cgroup_ids above;
	int fd, err;

	if (!s) {
		snprintf(why, sz, "the daemon runs %d resolvers, the most it can", RESOLVERS_MAX);
		return -ENOSPC;
	}
	fd = read_record(rs, cgid, &rules, &above, why, sz);
	if (fd < 0)
		return fd;
	err = open_resolver(rs, s, cgid, &rules, fd, &r, why, sz);
	close(fd);
	if (err) {
		policy_free(&rules);
		return err;
	}
	if (s->cgid)
		slot_close(s);	/* the old one's answers leave dns_allow with it */
	s->cgid = cgid;
	s->r = r;
	s->rules = rules;
	s->above = above;
	dns_ports(r, &s->port4, &s->port6);
	*port4 = s->port4;
	*port6 = s->port6;
	return 0;
}

int resolvers_stop(struct resolvers *rs, __u64 cgid)
{
	struct resolver *s = cgid ? find(rs, cgid) : NULL;

	if (s)
		slot_close(s);
	loader__unpin_steer(rs->o.pin_dir, cgid);
	return s ? 0 : -ENOENT;
}

/* --- keeping in line with the sandbox entries ---------------------------------------- */

static void note(resolvers_note_fn fn, void *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void note(resolvers_note_fn fn, void *ctx, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(ctx, msg);
}

/* Was this failure of @cgid noted already? Remembers it (or forgets @cgid, with @err 0). */
static bool noted_before(struct resolvers *rs, __u64 cgid, int err)
{
	struct failure *f = NULL, *free_one = NULL;

	for (size_t i = 0; i < RESOLVERS_MAX; i++) {
		if (rs->failed[i].cgid == cgid)
			f = &rs->failed[i];
		else if (!rs->failed[i].cgid && !free_one)
			free_one = &rs->failed[i];
	}
	if (!err) {
		if (f)
			f->cgid = 0;
		return false;
	}
	if (f && f->err == err)
		return true;
	f = f ?: free_one;
	if (f)
		*f = (struct failure){ .cgid = cgid, .err = err };
	return false;
}

/* Step 1 of resolvers_sync(). */
static void stop_unwanted(struct resolvers *rs, resolvers_note_fn fn, void *ctx)
{
	struct sbx_sandbox sb;

	for (size_t i = 0; i < RESOLVERS_MAX; i++) {
		__u64 cgid = rs->slot[i].cgid;
		int err = cgid ? loader__get_sandbox(rs->o.l, cgid, &sb) : 0;

		/* Only a sure answer stops it: a failed lookup is tried again next second. */
		if (!cgid || (err && err != -ENOENT) || (!err && (sb.flags & SBX_SANDBOX_DNS)))
			continue;
		resolvers_stop(rs, cgid);
		note(fn, ctx, "stopped the resolver of cgroup %llu: it has no policy with domain rules any more",
		     (unsigned long long)cgid);
	}
}

/* Put @p4/@p6 in @cgid's entry, the rest as it is: the policy id stays. 0 or -errno. */
static int set_ports(struct resolvers *rs, __u64 cgid, __u16 p4, __u16 p6)
{
	struct sbx_sandbox sb;
	int err = loader__get_sandbox(rs->o.l, cgid, &sb);

	if (err)
		return err;
	sb.dns_port4 = p4;
	sb.dns_port6 = p6;
	return loader__replace_sandbox(rs->o.l, cgid, &sb);
}

/* Step 2 for one entry that wants a resolver of ours and has none. */
static void adopt(struct resolvers *rs, __u64 cgid, const struct sbx_sandbox *sb, resolvers_note_fn fn,
		  void *ctx)
{
	char why[512] = "";
	__u16 p4, p6;
	int err = resolvers_start(rs, cgid, &p4, &p6, why, sizeof(why));
	struct resolver *s;

	if (!err && !(err = set_ports(rs, cgid, p4, p6))) {
		noted_before(rs, cgid, 0);
		note(fn, ctx, "started the resolver of cgroup %llu (127.0.0.1:%u, [::1]:%u)",
		     (unsigned long long)cgid, p4, p6);
		return;
	}
	if (!why[0]) {	/* started, but the entry kept its old ports: it serves nobody */
		snprintf(why, sizeof(why), "cannot put its ports in the sandbox entry: %s", strerror(-err));
		if ((s = find(rs, cgid)))
			slot_close(s);
	}
	/*
	 * No resolver: port 53 is judged by the rules once the ports are
	 * cleared (step 3 then unpins the steering); until then it still goes
	 * to a dead port.
	 */
	if (sb->dns_port4)
		set_ports(rs, cgid, 0, 0);
	if (!noted_before(rs, cgid, err))
		note(fn, ctx, "no resolver for cgroup %llu, so no name resolves there: %s (retried every second)",
		     (unsigned long long)cgid, why);
}

/* Does @cgid's record ask for the daemon's resolver (for its policy @policy_id)? */
static bool wants_ours(struct resolvers *rs, __u64 cgid, __u32 policy_id)
{
	struct not_ours *n = &rs->not_ours[cgid % NOT_OURS_SLOTS];
	json_t *st;
	bool yes;

	if (n->cgid == cgid && n->policy_id == policy_id)
		return false;
	st = state_read(rs->o.state_dir, cgid);
	yes = json_is_object(json_object_get(st, "resolver"));
	/* No record yet is no answer: a run writes its record around the entry. */
	if (st && !yes)
		*n = (struct not_ours){ .cgid = cgid, .policy_id = policy_id };
	json_decref(st);
	return yes;
}

/* Step 2 of resolvers_sync(). */
static void start_wanted(struct resolvers *rs, resolvers_note_fn fn, void *ctx)
{
	struct sbx_sandbox sb;
	__u64 cgid, prev;
	bool first = true;

	while (!loader__next_sandbox(rs->o.l, first ? NULL : &prev, &cgid, &sb)) {
		struct resolver *s = find(rs, cgid);

		first = false;
		prev = cgid;
		if (!(sb.flags & SBX_SANDBOX_DNS) ||
		    (s && s->port4 == sb.dns_port4 && s->port6 == sb.dns_port6))
			continue;
		if (wants_ours(rs, cgid, sb.policy_id))	/* a `run`'s sandbox has its own resolver */
			adopt(rs, cgid, &sb, fn, ctx);
	}
}

/* How long a pinned steering set without a sandbox entry may be one that a `run` is still making. */
#define STEER_GRACE_S	60

/* Step 3 of resolvers_sync(). */
static void unpin_stale(struct resolvers *rs)
{
	__u64 ids[RESOLVERS_MAX];
	struct sbx_sandbox sb;
	int n = loader__steer_pinned(rs->o.pin_dir, ids, RESOLVERS_MAX);

	for (int i = 0; i < n && i < RESOLVERS_MAX; i++) {
		long age;
		int err;

		if (find(rs, ids[i]))
			continue;
		err = loader__get_sandbox(rs->o.l, ids[i], &sb);
		/* Ports with the steering gone would let port 53 past the rules (net.bpf.c steered()). */
		if (!err && (sb.flags & SBX_SANDBOX_DNS) && sb.dns_port4)
			continue;
		/*
		 * A `run` pins its steering before its sandbox entry exists (the
		 * entry's ports must never be without it): a young set with no
		 * entry yet is one being made, not one left behind.
		 */
		if (err == -ENOENT && !loader__steer_age(rs->o.pin_dir, ids[i], &age) && age < STEER_GRACE_S)
			continue;
		loader__unpin_steer(rs->o.pin_dir, ids[i]);
	}
}

void resolvers_sync(struct resolvers *rs, resolvers_note_fn fn, void *ctx)
{
	stop_unwanted(rs, fn, ctx);
	start_wanted(rs, fn, ctx);
	unpin_stale(rs);
	for (size_t i = 0; i < RESOLVERS_MAX; i++) {
		struct sbx_sandbox sb;

		/* Failures of cgroups that went are forgotten. */
		if (rs->failed[i].cgid && loader__get_sandbox(rs->o.l, rs->failed[i].cgid, &sb) == -ENOENT)
			rs->failed[i].cgid = 0;
	}
}

/* --- the poll loop ------------------------------------------------------------------- */

size_t resolvers_pollfds(struct resolvers *rs, struct pollfd *fds, size_t max, int *timeout_ms)
{
	size_t n = 0;
	int k, t;

	for (size_t i = 0; i < RESOLVERS_MAX; i++) {
		struct resolver *s = &rs->slot[i];
		size_t room = max - n < DNS_POLLFDS_MAX ? max - n : DNS_POLLFDS_MAX;

		s->pfd_n = 0;
		if (!s->r || !room)
			continue;
		k = dns_pollfds(s->r, fds + n, (int)room);
		s->pfd_first = n;
		s->pfd_n = k > 0 ? (size_t)k : 0;
		n += s->pfd_n;
		t = dns_next_timeout(s->r);
		if (t >= 0 && (*timeout_ms < 0 || t < *timeout_ms))
			*timeout_ms = t;
	}
	return n;
}

void resolvers_handle(struct resolvers *rs, const struct pollfd *fds, size_t n)
{
	for (size_t i = 0; i < RESOLVERS_MAX; i++) {
		struct resolver *s = &rs->slot[i];

		if (s->r && s->pfd_n && s->pfd_first + s->pfd_n <= n)
			dns_handle(s->r, fds + s->pfd_first, (int)s->pfd_n);
		s->pfd_n = 0;
	}
}

void resolvers_tick(struct resolvers *rs)
{
	for (size_t i = 0; i < RESOLVERS_MAX; i++)
		if (rs->slot[i].r)
			dns_tick(rs->slot[i].r);
}

const char *resolvers_domain_name(const struct resolvers *rs, __u64 cgid, __u32 domain_id)
{
	for (size_t i = 0; cgid && i < RESOLVERS_MAX; i++)
		if (rs->slot[i].cgid == cgid)
			return dns_domain_name(rs->slot[i].r, domain_id);
	return NULL;
}

json_t *resolvers_json(const struct resolvers *rs)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < RESOLVERS_MAX; i++) {
		const struct resolver *s = &rs->slot[i];

		if (s->cgid)
			json_array_append_new(a, json_pack("{s:I, s:i, s:i, s:s, s:o}", "cgroup_id", (json_int_t)s->cgid,
							   "port4", (int)s->port4, "port6", (int)s->port6,
							   "owner", "attach", "counters", dns_counters_json(s->r)));
	}
	return a;
}

size_t resolvers_counts(const struct resolvers *rs, struct resolver_counts *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; rs && i < RESOLVERS_MAX; i++) {
		const struct resolver *s = &rs->slot[i];

		if (!s->cgid)
			continue;
		if (n < max) {
			out[n].cgid = s->cgid;
			if (dns_counters(s->r, &out[n].c))
				memset(&out[n].c, 0, sizeof(out[n].c));
		}
		n++;
	}
	return n;
}
