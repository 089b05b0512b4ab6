/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dns.h — the sandbox's built-in resolver (docs/design.md, "Domains: the
 * built-in resolver").
 *
 * The kernel steers a sandbox's port-53 traffic to this resolver. It answers
 * names the policy denies with NXDOMAIN, forwards the others to the host's
 * upstream resolvers, and installs every address of an allowed answer into
 * the sandbox's dns_allow map before the client sees the answer. Everything
 * it needs from the kernel goes through struct dns_ops, so the unit tests
 * run it without BPF.
 *
 * Single-threaded: the caller polls dns_pollfds() together with its own
 * descriptors and hands the result to dns_handle().
 */
#ifndef SBX_DNS_H
#define SBX_DNS_H

#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <linux/types.h>
#include "sbx_abi.h"

#define DNS_MAX_SERVERS		3	/* as glibc's MAXNS */
#define DNS_MAX_PENDING		1024	/* queries waiting for an upstream answer */
#define DNS_MAX_CONNS		64	/* TCP clients at once */
#define DNS_MAX_DOMAINS		65536	/* distinct names given an id */
/* Descriptors dns_pollfds() may fill: 4 listeners, 2 upstream sockets, the TCP clients. */
#define DNS_POLLFDS_MAX		(6 + DNS_MAX_CONNS)

#define DNS_DEFAULT_MIN_TTL	2	/* seconds */
#define DNS_DEFAULT_MAX_TTL	3600
/*
 * Expired slots stay in the kernel map this long (the kernel ignores them)
 * so that a connection refused after expiry is reported with its domain;
 * then they are removed.
 */
#define DNS_KEEP_EXPIRED_S	300
/* A dns_clients entry older than this at a query's arrival names a past owner of the port. */
#define DNS_CLIENT_FRESH_NS	2000000000ULL
#define DNS_DEFAULT_TIMEOUT_MS	5000	/* an upstream query, over all servers */
#define DNS_TCP_IDLE_MS		10000	/* a TCP client with nothing in flight */
#define DNS_TCP_UPSTREAM_MS	3000	/* the blocking TCP retry of a truncated answer */

struct dns_resolver;

struct dns_ops {
	/* Write the whole entry for @k into dns_allow. 0 or -errno (-E2BIG/-ENOMEM: full). */
	int (*update)(void *ctx, const struct sbx_dns_key *k, const struct sbx_dns_entry *e);
	/* Delete @k from dns_allow. 0 or -errno (-ENOENT counts as done). */
	int (*remove)(void *ctx, const struct sbx_dns_key *k);
	/* The dns_clients entry for @key (protocol << 16 | client port). 0 or -ENOENT. May be NULL. */
	int (*client)(void *ctx, __u32 key, struct sbx_dns_client *out);
	/*
	 * Is @name (lower case, no trailing dot) allowed? Fills the deciding
	 * rule (SBX_RULE_DOMAIN_BASE + i, or SBX_RULE_DOMAIN_DEFAULT) and, when
	 * allowed, the ports that rule allows.
	 */
	bool (*verdict)(void *ctx, const char *name, __u32 *rule_id, __u16 *lo, __u16 *hi);
	/* A refused (or, in audit mode, would-be refused) query: op SBX_OP_DNS. May be NULL. */
	void (*event)(void *ctx, const struct sbx_event *ev);
	/* CLOCK_BOOTTIME in ns, as bpf_ktime_get_boot_ns(); NULL: the real clock. For tests. */
	__u64 (*now)(void *ctx);
};

struct dns_config {
	__u64 sandbox_cgid;		/* the sandbox's cgroup: dns_allow keys, events */
	bool audit;			/* forward denied names too (and report them) */
	unsigned min_ttl, max_ttl;	/* seconds an address stays allowed; 0: defaults */
	unsigned timeout_ms;		/* upstream answer timeout; 0: DNS_DEFAULT_TIMEOUT_MS */
	const char *resolv_conf;	/* NULL: /etc/resolv.conf */
	const char *upstream;		/* "ADDR", "ADDR:PORT", "[V6]:PORT": used instead of resolv.conf */
	const struct dns_ops *ops;	/* update, remove, verdict required */
	void *ctx;
};

/*
 * Bind the listeners (127.0.0.1 and, if it works, ::1; UDP and TCP on one
 * port per family) and the upstream sockets. 0 or -errno: -ENOENT when
 * there is no upstream server, -EINVAL for a bad config.
 */
int dns_open(struct dns_resolver **r, const struct dns_config *cfg);
/* The listening ports, host order; @port6 is 0 when ::1 is not available. */
void dns_ports(const struct dns_resolver *r, __u16 *port4, __u16 *port6);
/*
 * Fill @fds (at most @max, DNS_POLLFDS_MAX is always enough) with the
 * descriptors to poll; returns how many.
 */
int dns_pollfds(struct dns_resolver *r, struct pollfd *fds, int max);
/* Serve the descriptors poll() found ready in @fds, then time out what is due. */
void dns_handle(struct dns_resolver *r, const struct pollfd *fds, int n);
/* Milliseconds until dns_handle() has a timeout to act on (-1: none), for poll(). */
int dns_next_timeout(const struct dns_resolver *r);
/* Housekeeping, at least once a second: drop expired addresses, time out queries and idle clients. */
void dns_tick(struct dns_resolver *r);
/* The name behind a domain id (events carry ids), or NULL. */
const char *dns_domain_name(const struct dns_resolver *r, __u32 id);
/* Close everything. The dns_allow entries are left to the caller (they expire). NULL is fine. */
void dns_close(struct dns_resolver *r);

/*
 * The nameserver lines of resolv.conf @text as glibc reads them: at most
 * DNS_MAX_SERVERS, IPv4 or IPv6 (with %scope), port 53. Returns how many.
 */
int dns_parse_resolv_conf(const char *text, struct sockaddr_storage *out, int max);
/* One "ADDR", "ADDR:PORT" or "[V6]:PORT" (port 53 if none). 0 or -EINVAL. */
int dns_parse_server(const char *s, struct sockaddr_storage *out);

#endif
