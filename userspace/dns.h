/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dns.h — the sandbox's built-in resolver (docs/design.md, "Domains: the
 * built-in resolver").
 *
 * The kernel steers a sandbox's port-53 traffic to this resolver. It answers
 * names the policy denies with NXDOMAIN, asks the host's upstream resolvers
 * about the others, and installs every address of an allowed answer into
 * the sandbox's dns_allow map before the client sees the answer. Nothing
 * the client sent is forwarded: each upstream query is composed here from
 * the one question (its name in lower case, class IN, our own header and
 * OPT record), and each answer to the client is composed around the
 * upstream's address and CNAME records. Everything it needs from the
 * kernel goes through struct dns_ops, so the unit tests run it without BPF.
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
#include <jansson.h>
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
/*
 * Queries a sandbox may make, all kinds together: a token bucket of
 * DNS_DEFAULT_BURST refilled at DNS_DEFAULT_RATE a second. It bounds what
 * names under an allowed "*.suffix" can carry out (each new name is data
 * the policy cannot judge) and the events a flood of refused names makes.
 */
#define DNS_DEFAULT_RATE	100	/* queries a second */
#define DNS_DEFAULT_BURST	200
#define DNS_RATE_MAX		1000000
/* The UDP payload size of our OPT record, upstream and to clients (the 2020 DNS flag day's). */
#define DNS_EDNS_UDP		1232
/* The longest upstream query: header, one question (255-byte name), the OPT record. */
#define DNS_QUERY_MAX		(12 + 255 + 4 + 11)

/*
 * The resolver's own refusals have rule ids of their own (sbx_abi.h), beside
 * SBX_RULE_DOMAIN_DEFAULT (a name the policy denies) and SBX_RULE_DNS_FAILED:
 * SBX_RULE_DNS_TYPE, a question type or class it does not serve (the event's
 * arg is the type, the class in the upper 16 bits when it is not IN: arg 16
 * is "TXT", 0x30010 "CH TXT"); SBX_RULE_DNS_RATE, over the query rate limit
 * (one event when the limit starts refusing, then, a second later, dns_tick,
 * one SBX_EV_SUMMARY record counting the refusals since: repeat).
 */

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
	/*
	 * A refused (or, in audit mode, would-be refused) query: op
	 * SBX_OP_DNS, the name as path, the cause as rule_id. May be NULL.
	 */
	void (*event)(void *ctx, const struct sbx_event *ev);
	/*
	 * Where an allowed name is asked, instead of the configured servers:
	 * the resolver of the nearest sandbox enclosing this one that has
	 * domain rules (127.0.0.1:*@port4). Its policy judges the name too:
	 * it answers NXDOMAIN to a name it denies, and opens the addresses of
	 * the others for its own sandbox, whose rules also judge the
	 * connections of this one's tasks. Asked for each query. 1: *@port4
	 * set; 0: no such sandbox, the configured servers; -errno: such a
	 * sandbox has no resolver to ask now (the client gets SERVFAIL). May
	 * be NULL.
	 */
	int (*via)(void *ctx, __u16 *port4);
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
	unsigned rate;			/* queries a second; 0: DNS_DEFAULT_RATE; at most DNS_RATE_MAX */
	unsigned burst;			/* queries at once; 0: DNS_DEFAULT_BURST */
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
/*
 * Housekeeping, at least once a second: drop expired addresses, time out
 * queries and idle clients, report the rate limit's refusals (summary).
 */
void dns_tick(struct dns_resolver *r);
/* The name behind a domain id (events carry ids), or NULL. */
const char *dns_domain_name(const struct dns_resolver *r, __u32 id);
/* Close everything. The dns_allow entries are left to the caller (they expire). NULL is fine. */
void dns_close(struct dns_resolver *r);

/*
 * What a resolver did since dns_open(), for status and metrics. A query
 * from a client counts in queries, then by what became of it: refused
 * (rate_limited, malformed, refused_names or refused_types) or forwarded.
 * failed counts the SERVFAILs given, to queries forwarded or not. In audit
 * mode a denied name counts in refused_names and goes on (forwarded, or
 * refused_types).
 */
struct dns_counters {
	__u64 queries;		/* messages from clients that were queries (responses are ignored) */
	__u64 forwarded;	/* queries composed and sent upstream (one per client query) */
	__u64 refused_names;	/* names the policy denies (in audit mode: would deny), or not host syntax */
	__u64 refused_types;	/* questions of a type or class the resolver does not serve */
	__u64 rate_limited;	/* queries refused by the rate limit (REFUSED) */
	__u64 malformed;	/* not one well-formed standard query: FORMERR or NOTIMP */
	__u64 failed;		/* SERVFAIL: no upstream answer, a malformed one, or one not installed */
	__u64 allowed_names;	/* distinct names the policy allowed: what "*.suffix" names can carry */
};

/* Copy @r's counters into @out. 0, or -EINVAL when either is NULL. */
int dns_counters(const struct dns_resolver *r, struct dns_counters *out);
/* The same as {"queries": N, …} (status, a run's published counters); JSON null without a resolver. */
json_t *dns_counters_json(const struct dns_resolver *r);
/* @c as {"queries": N, …}; NULL without memory. */
json_t *dns_counts_json(const struct dns_counters *c);
/* Such an object back into @c (a count it lacks is 0). 0, or -EINVAL when @j is not an object. */
int dns_counts_parse(const json_t *j, struct dns_counters *c);

/*
 * The nameserver lines of resolv.conf @text as glibc reads them: at most
 * DNS_MAX_SERVERS, IPv4 or IPv6 (with %scope), port 53. Returns how many.
 */
int dns_parse_resolv_conf(const char *text, struct sockaddr_storage *out, int max);
/* One "ADDR", "ADDR:PORT" or "[V6]:PORT" (port 53 if none). 0 or -EINVAL. */
int dns_parse_server(const char *s, struct sockaddr_storage *out);

/*
 * The message layer: pure functions over a client's query and an
 * upstream's answer, which the resolver is built on. Exposed for the
 * fuzzer (tests/fuzz/fuzz_dns.c) and tests.
 */

/* A client's question, as read from its query and echoed in the answer. */
struct dns_ask {
	__u16 id;		/* the client's */
	__u16 flags;		/* its opcode, RD and CD bits: echoed */
	bool edns;		/* it sent an OPT record: the answer carries ours */
	__u16 udp_max;		/* the largest UDP answer it takes: 512 without EDNS */
	__u16 type, class;
	__u8 qname_len;		/* 0: no readable question (error answers then have none) */
	__u8 qname[255];	/* the name in wire form, uncompressed, in the client's letter case */
};

/*
 * Read a client's message into @a. 0 for a standard query with exactly one
 * question, no answer or authority records and at most one OPT record
 * (other additional records are read, then ignored: nothing of them goes
 * on); -EBADMSG otherwise (FORMERR; a response too), -EOPNOTSUPP for
 * another opcode (NOTIMP). On error @a keeps what it could read, for the
 * error answer.
 */
int dns_ask_read(const __u8 *m, size_t len, struct dns_ask *a);
/*
 * The query sent upstream for @a, into @out (DNS_QUERY_MAX is enough):
 * header with @id and RD alone, the name in lower case, the type, class
 * IN, an OPT record of ours (DNS_EDNS_UDP, no DO bit, no options). Its
 * length; -EINVAL when @a cannot be composed (a name not made of letters,
 * digits, '-' and '_', a type or class not served), -ENOSPC.
 */
int dns_ask_query(const struct dns_ask *a, __u16 id, __u8 *out, size_t size);
/* An answer to @a with @rcode and no records (its question if it has one). Its length, or -ENOSPC. */
int dns_ask_reply(const struct dns_ask *a, int rcode, __u8 *out, size_t size);
/*
 * The answer to @a composed around @m, the upstream's answer to
 * dns_ask_query(@a): the A, AAAA and CNAME records of the question's CNAME
 * chain, TTLs clamped to [@min_ttl, @max_ttl] seconds; the rcode if it is
 * NOERROR, SERVFAIL, NXDOMAIN or REFUSED (else SERVFAIL). Longer than @max:
 * TC and no records. Its length; -EBADMSG when @m is no well-formed answer
 * to that question; -ENOSPC, -ENOMEM.
 */
int dns_ask_answer(const struct dns_ask *a, const __u8 *m, size_t len, unsigned min_ttl, unsigned max_ttl,
		   size_t max, __u8 *out, size_t size);

#endif
