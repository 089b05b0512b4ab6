/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * resolvers.h — the daemon's resolvers: one per attached cgroup whose
 * policy has domain rules (docs/agent.md "Domains on attached cgroups").
 *
 * `run` has its resolver in-process (dns.h). An attached cgroup has no
 * process of sbx-bpf's own, so `attach` asks the daemon over its socket
 * (evsock.h "resolver") to start one, from the domain rules it recorded
 * (sbxstate.h "resolver"), and puts the ports the daemon answers in the
 * cgroup's sandbox entry. The DNS steering links are pinned per cgroup
 * (loader__pin_steer), so that a daemon that dies leaves port 53 going to
 * a dead port (DNS fails) rather than past the rules.
 *
 * The sandbox entries are the truth: resolvers_sync(), once a second,
 * stops what no entry wants any more and starts what an entry wants and
 * has not got (a restarted daemon adopts its cgroups that way).
 *
 * Library code: nothing prints; what sync did comes back as notes.
 */
#ifndef SBX_RESOLVERS_H
#define SBX_RESOLVERS_H

#include <poll.h>
#include <stddef.h>
#include <jansson.h>
#include <linux/types.h>

#include "dns.h"
#include "sbx_abi.h"

/* Resolvers at once: more, and an attach with domain rules is refused. */
#define RESOLVERS_MAX	256
/* pollfd entries resolvers_pollfds() fills at most. */
#define RESOLVERS_FDS	(RESOLVERS_MAX * DNS_POLLFDS_MAX)

struct sbx_loader;
struct event_sink;

struct resolvers_opts {
	struct sbx_loader *l;		/* the pinned set: dns_allow, dns_clients, sandboxes */
	const char *pin_dir;		/* steering pinned under PIN_DIR/steer/CGID/ */
	const char *state_dir;		/* the records: domain rules, mode, the cgroup's path */
	struct event_sink *sink;	/* refused names (SBX_OP_DNS) go there */
	const char *upstream;		/* "ADDR[:PORT]" instead of resolv.conf (SBX_DNS_UPSTREAM), or NULL */
};

/* Something resolvers_sync() did or could not do, as one line for the log. */
typedef void (*resolvers_note_fn)(void *ctx, const char *msg);

struct resolvers;

/* NULL with errno set. */
struct resolvers *resolvers_new(const struct resolvers_opts *o);
/*
 * Close every resolver (their answers leave dns_allow). The entries keep
 * their ports and the steering stays pinned: DNS fails until a daemon
 * starts them again. NULL is fine.
 */
void resolvers_free(struct resolvers *rs);

/*
 * Start the resolver of @cgid from its record, replacing a running one
 * (a re-attach: the new one opens first, so a failure leaves the old),
 * and pin the steering if it is not. Its ports into @port4/@port6 (0: no
 * ::1). 0 or -errno with @why: -ENOENT no record with domain rules, or
 * no upstream server; -ENOSPC RESOLVERS_MAX running.
 */
int resolvers_start(struct resolvers *rs, __u64 cgid, __u16 *port4, __u16 *port6, char *why, size_t sz);
/* Stop @cgid's resolver and unpin its steering. 0, or -ENOENT when none ran (the pins go anyway). */
int resolvers_stop(struct resolvers *rs, __u64 cgid);

/*
 * Hold the records' lock (state_trylock), so that no attach is halfway:
 *  1. a resolver whose cgroup has no sandbox entry, or one without
 *     SBX_SANDBOX_DNS, stops;
 *  2. an entry with SBX_SANDBOX_DNS whose record has domain rules for
 *     the daemon, and whose ports are not those of its resolver here (a
 *     daemon restarted after kill -9, an attach that failed after the
 *     daemon answered), gets a resolver and its ports; when that fails
 *     the ports are cleared, so port 53 is judged by the rules;
 *  3. steering pinned for a cgroup with neither a resolver here nor
 *     resolver ports in its entry is unpinned.
 * A failure is noted once per cgroup and error, and retried each call.
 */
void resolvers_sync(struct resolvers *rs, resolvers_note_fn note, void *ctx);

/* For the caller's poll loop, as dns.h's, over every resolver. */
size_t resolvers_pollfds(struct resolvers *rs, struct pollfd *fds, size_t max, int *timeout_ms);
void resolvers_handle(struct resolvers *rs, const struct pollfd *fds, size_t n);
/* At least once a second: every resolver's dns_tick(). */
void resolvers_tick(struct resolvers *rs);

/* The name behind @domain_id for the sandbox @cgid's resolver, or NULL. */
const char *resolvers_domain_name(const struct resolvers *rs, __u64 cgid, __u32 domain_id);
/* [{"cgroup_id", "port4", "port6"}] for status (caller's reference). */
json_t *resolvers_json(const struct resolvers *rs);
/* What one running resolver counted (dns_counters), by cgroup. */
struct resolver_counts {
	__u64 cgid;
	struct dns_counters c;
};
/* The counts of every running resolver into @out (at most @max): how many there are. */
size_t resolvers_counts(const struct resolvers *rs, struct resolver_counts *out, size_t max);

/*
 * One dns_allow entry as the daemon writes it: the connect grants of the
 * kernel's entry @kernel (grants.c puts them next to the resolver's
 * slots) stay; then the used slots of @mine, latest expiry first, as many
 * as fit. A slot that does not fit denies its name that address until
 * the next answer: never an allow too many.
 */
void resolvers_merge_slots(const struct sbx_dns_entry *kernel, const struct sbx_dns_entry *mine,
			   struct sbx_dns_entry *out);

#endif
