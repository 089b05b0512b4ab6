// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dns.c — the sandbox's resolver (dns.h; docs/design.md, "Domains: the
 * built-in resolver").
 *
 * Names are read with glibc's dn_expand(), which checks label and name
 * lengths, bounds and compression loops; the fixed fields around them are
 * two- and four-byte reads. glibc keeps dn_expand() and dn_comp() in libc
 * itself, so the static link needs no libresolv.
 *
 * Nothing a client sends is passed on: an EDNS option, a header bit, the
 * letter case of a name or an extra record would each carry data past the
 * policy (issue 16). dns_ask_read() takes the one question out of a query,
 * dns_ask_query() composes the query we send from it alone, and
 * dns_ask_answer() composes the client's answer around the upstream's A,
 * AAAA and CNAME records, its question echoed as the client wrote it.
 *
 * A query's life: serve_query() counts it against the rate limit, reads it
 * and judges the name; a denied one is answered NXDOMAIN at once, a type
 * that is not served NOTIMP (or an empty answer), an allowed one becomes a
 * struct dns_query and its canonical query goes to the first upstream
 * server with an id of ours (query_send); the answer is matched by id,
 * server and question (upstream_answer), its addresses are installed
 * (install_answer) and only then is the client's answer composed and sent
 * (query_answer). Nothing blocks except the TCP retry of a truncated
 * answer for a TCP client (tcp_exchange).
 */
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <resolv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "dns.h"
#include "util.h"

#define MSG_MAX		65535	/* a DNS message, the most a TCP length prefix allows */
#define NS_PER_MS	1000000ULL
#define NS_PER_S	1000000000ULL
#define CNAME_MAX	16	/* names followed along one CNAME chain */
#define ADDR_BUCKETS	16384	/* shadow of dns_allow: chains of ~4 when full */
#define BATCH		64	/* datagrams or connections taken per wakeup of one socket */
#define CONN_OUT_MAX	(4 * (MSG_MAX + 2))	/* replies a TCP client may leave unread */
#define RESOLV_CONF_MAX	16384
#define DNPTRS		64	/* names dn_comp() may point back to in one answer */
#define OPT_LEN		11	/* an OPT record without options */
#define T_SVCB		64	/* RFC 9460; not in glibc's nameser.h */
#define T_HTTPS		65

/* Header bits, bytes 2 and 3 as one word (RFC 1035 4.1.1). */
#define F_QR		0x8000
#define F_OPCODE	0x7800
#define F_TC		0x0200
#define F_RD		0x0100
#define F_RA		0x0080
#define F_CD		0x0010
#define F_RCODE		0x000f

/* Where a query came from, and so where its answer goes. */
struct dns_peer {
	__u8 proto;		/* IPPROTO_UDP or IPPROTO_TCP */
	__u16 port;		/* the client's port, host order: its dns_clients key */
	int fd;			/* UDP: the listener it came in on */
	socklen_t salen;	/* UDP: the client's address */
	struct sockaddr_storage sa;
	int conn;		/* TCP: index and generation of its connection */
	__u32 gen;
};

/* What a query sent upstream, and the client's question its answer is composed for. */
struct dns_sent {
	struct dns_ask ask;
	size_t len;
	__u8 msg[DNS_QUERY_MAX];	/* dns_ask_query(): our id */
};

/* A query being judged, or sent upstream and waiting for its answer. */
struct dns_query {
	bool used;
	bool install;		/* an allowed name: install the answer's addresses */
	__u16 id;		/* ours, as sent upstream */
	unsigned tried;		/* bit i: sent to servers[i] (their answers are accepted) */
	int next;		/* the server to try next */
	__u16 via;		/* not servers[] but 127.0.0.1:via, an enclosing sandbox's resolver (dns_ops.via) */
	__u64 deadline;		/* CLOCK_MONOTONIC ns: SERVFAIL */
	__u64 retry_at;		/* CLOCK_MONOTONIC ns: on to the next server */
	struct dns_sent *sent;
	__u32 domain_id;
	__u32 rule_id;
	__u16 lo, hi;
	struct dns_peer peer;
	struct sbx_dns_client who;	/* pid 0: unknown */
};

struct dns_conn {
	int fd;			/* -1: free */
	__u32 gen;		/* bumped on close: answers for an old connection are dropped */
	bool eof;		/* the client shut its side: finish what is in flight, then close */
	__u16 port;
	unsigned pending;	/* its queries waiting upstream */
	__u64 active;		/* CLOCK_MONOTONIC ns of the last read or write */
	__u8 *in;		/* 2 + MSG_MAX bytes, kept for the slot's next client */
	size_t in_len;
	__u8 *out;		/* length-prefixed replies not yet written */
	size_t out_len, out_cap;
};

/* The shadow of one dns_allow entry: the resolver is its only writer. */
struct dns_addr {
	struct dns_addr *next;
	struct sbx_dns_key key;
	struct sbx_dns_entry e;
};

struct dns_question {
	char name[NS_MAXDNAME];	/* as dn_expand() writes it: its case, escapes, no trailing dot */
	__u16 type, class;
	size_t end;		/* offset just past the question */
};

struct dns_rr {
	char owner[NS_MAXDNAME];
	__u16 type, class;
	__u32 ttl;
	const __u8 *rdata;
	__u16 rdlen;
};

/* The question name and the names its CNAMEs lead to, in one answer. */
struct dns_chain {
	int n;
	char name[CNAME_MAX][NS_MAXDNAME];
};

/* An answer being composed: @out up to @end, names compressed against the ones already in it. */
struct writer {
	__u8 *out;
	size_t n, end;
	__u8 *dnptrs[DNPTRS];
	unsigned min_ttl, max_ttl;	/* seconds */
};

struct dns_resolver {
	const struct dns_ops *ops;
	void *ctx;
	__u64 cgid;
	bool audit;
	__u64 min_ttl, max_ttl, timeout;	/* ns */
	unsigned min_ttl_s, max_ttl_s;
	__u64 rate_interval, rate_tau;	/* ns: between queries, and the burst's head start */
	__u64 tat;			/* ops clock ns: the rate limit's theoretical arrival time */
	__u64 rate_quiet_until;		/* ops clock ns: refusals until then go into the summary */
	__u64 rate_suppressed;
	struct dns_counters counters;
	struct sockaddr_storage servers[DNS_MAX_SERVERS];
	int nservers;
	int udp[2], tcp[2], up[2];	/* [0] IPv4, [1] IPv6; -1: none */
	__u16 port[2];
	struct dns_query q[DNS_MAX_PENDING];
	unsigned nq;
	__u16 by_id[65536];		/* upstream id → index + 1 in q */
	struct dns_conn conns[DNS_MAX_CONNS];
	struct dns_addr *addrs[ADDR_BUCKETS];
	unsigned naddrs;
	char **names;			/* domain id i is names[i - 1] */
	__u32 nnames, names_cap;
	__u32 *name_idx;		/* open addressing over names: ids, 0 empty */
	__u32 name_mask;
	__u16 rnd[32];			/* getrandom() in batches */
	unsigned nrnd;
	__u8 buf[MSG_MAX + 1];		/* the message being read */
	__u8 out[MSG_MAX + 1];		/* the reply being built */
	struct dns_chain chain;
	struct sbx_event ev;
	struct sbx_event rate_ev;	/* the rate limit's last event, for its summary */
};

/* --- small helpers ---------------------------------------------------------- */

static __u16 get16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

static __u32 get32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

static void put16(__u8 *p, unsigned v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(__u8 *p, __u32 v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static __u64 mono_now(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* The kernel's clock for dns_allow expiry (bpf_ktime_get_boot_ns). */
static __u64 boot_now(const struct dns_resolver *r)
{
	return r->ops->now ? r->ops->now(r->ctx) : clock_ns(CLOCK_BOOTTIME);
}

static socklen_t sa_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static __u16 sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

static bool sa_equal(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return a4->sin_port == b4->sin_port && a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	return a6->sin6_port == b6->sin6_port &&
	       !memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr));
}

/* --- upstream servers ----------------------------------------------------------- */

static int parse_v6(const char *s, struct sockaddr_in6 *in6)
{
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];
	char *scope, *end;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	scope = strchr(buf, '%');
	if (scope)
		*scope++ = '\0';
	if (inet_pton(AF_INET6, buf, &in6->sin6_addr) != 1)
		return -EINVAL;
	if (scope) {
		/* A link-local server needs its interface: "fe80::1%eth0" or "%2". */
		in6->sin6_scope_id = strtoul(scope, &end, 10);
		if (!*scope || *end)
			in6->sin6_scope_id = if_nametoindex(scope);
		if (!in6->sin6_scope_id)
			return -EINVAL;
	}
	in6->sin6_family = AF_INET6;
	return 0;
}

static int parse_addr(const char *s, unsigned port, struct sockaddr_storage *out)
{
	struct sockaddr_in *in = (void *)out;
	struct sockaddr_in6 *in6 = (void *)out;

	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, s, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		return 0;
	}
	if (parse_v6(s, in6))
		return -EINVAL;
	in6->sin6_port = htons(port);
	return 0;
}

int dns_parse_server(const char *s, struct sockaddr_storage *out)
{
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];
	const char *colon = strrchr(s, ':'), *close;
	unsigned long port = NS_DEFAULTPORT;
	char *end;
	size_t n;

	if (*s == '[') {
		close = strchr(s, ']');
		if (!close || (close[1] && close[1] != ':'))
			return -EINVAL;
		n = close - ++s;
		colon = close[1] ? close + 1 : NULL;
	} else if (colon && strchr(s, ':') == colon) {
		n = colon - s;		/* one colon: IPv4:PORT */
	} else {
		n = strlen(s);		/* IPv4, or a bare IPv6 address */
		colon = NULL;
	}
	if (n >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, n);
	host[n] = '\0';
	if (colon) {
		port = strtoul(colon + 1, &end, 10);
		if (!colon[1] || *end || !port || port > 65535)
			return -EINVAL;
	}
	return parse_addr(host, port, out);
}

/* The address of one "nameserver" line, or -EINVAL. */
static int parse_nameserver(const char *line, size_t len, struct sockaddr_storage *out)
{
	static const char kw[] = "nameserver";
	const size_t kwlen = sizeof(kw) - 1;
	char addr[64];
	size_t skip, n;

	if (len <= kwlen || strncmp(line, kw, kwlen) || (line[kwlen] != ' ' && line[kwlen] != '\t'))
		return -EINVAL;
	skip = kwlen + strspn(line + kwlen, " \t");
	n = strcspn(line + skip, " \t\r\n");
	if (n >= sizeof(addr) || skip + n > len)
		return -EINVAL;
	memcpy(addr, line + skip, n);
	addr[n] = '\0';
	return parse_addr(addr, NS_DEFAULTPORT, out);
}

/*
 * As glibc's res_init reads them: "nameserver", blanks, the address, the
 * rest of the line ignored. Lines that do not parse are skipped, and so is
 * every server past the third.
 */
int dns_parse_resolv_conf(const char *text, struct sockaddr_storage *out, int max)
{
	const char *line;
	size_t len;
	int n = 0;

	if (max > DNS_MAX_SERVERS)
		max = DNS_MAX_SERVERS;
	for (line = text; *line && n < max; line += len + (line[len] == '\n')) {
		len = strcspn(line, "\n");
		n += !parse_nameserver(line, len, &out[n]);
	}
	return n;
}

static int load_servers(struct dns_resolver *r, const struct dns_config *cfg)
{
	_cleanup_free_ char *text = NULL;
	int err;

	if (cfg->upstream) {
		err = dns_parse_server(cfg->upstream, &r->servers[0]);
		r->nservers = !err;
		return err;
	}
	text = malloc(RESOLV_CONF_MAX);
	if (!text)
		return -ENOMEM;
	err = read_file(cfg->resolv_conf ?: "/etc/resolv.conf", text, RESOLV_CONF_MAX);
	if (err < 0)
		return err;
	r->nservers = dns_parse_resolv_conf(text, r->servers, DNS_MAX_SERVERS);
	return r->nservers ? 0 : -ENOENT;
}

/* --- messages ------------------------------------------------------------------ */

/* The one question of @m. 0 or -EBADMSG. */
static int parse_question(const __u8 *m, size_t len, struct dns_question *q)
{
	int n;

	if (len < NS_HFIXEDSZ || get16(m + 4) != 1)
		return -EBADMSG;
	n = dn_expand(m, m + len, m + NS_HFIXEDSZ, q->name, sizeof(q->name));
	if (n < 0 || NS_HFIXEDSZ + (size_t)n + NS_QFIXEDSZ > len)
		return -EBADMSG;
	q->type = get16(m + NS_HFIXEDSZ + n);
	q->class = get16(m + NS_HFIXEDSZ + n + 2);
	q->end = NS_HFIXEDSZ + n + NS_QFIXEDSZ;
	return 0;
}

/* The resource record at *@off, which moves past it. 0 or -EBADMSG. */
static int read_rr(const __u8 *m, size_t len, size_t *off, struct dns_rr *rr)
{
	const __u8 *p;
	int n;

	if (*off >= len)
		return -EBADMSG;
	n = dn_expand(m, m + len, m + *off, rr->owner, sizeof(rr->owner));
	if (n < 0 || *off + n + NS_RRFIXEDSZ > len)
		return -EBADMSG;
	p = m + *off + n;
	rr->type = get16(p);
	rr->class = get16(p + 2);
	rr->ttl = get32(p + 4);
	rr->rdlen = get16(p + 8);
	rr->rdata = p + NS_RRFIXEDSZ;
	*off += n + NS_RRFIXEDSZ + rr->rdlen;
	return *off > len ? -EBADMSG : 0;
}

static bool host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/*
 * The name as the policy sees it: lower case (ASCII only, as DNS). False for
 * anything but dot-separated labels of letters, digits, '-' and '_':
 * dn_expand() writes a dot inside a label as "\.", and "evil\.example.com"
 * (two labels: "evil.example", "com") must never pass for a name under
 * example.com. @out gets the lower-case form either way, for the event.
 */
static bool host_name(const char *in, char *out, size_t sz)
{
	bool ok = *in != '\0', label_start = true;
	size_t i;

	for (i = 0; in[i] && i + 1 < sz; i++) {
		char c = lower(in[i]);

		out[i] = c;
		if (c == '.') {
			ok &= !label_start;
			label_start = true;
			continue;
		}
		ok &= host_char(c);
		label_start = false;
	}
	out[i] = '\0';
	return ok && !label_start && !in[i];
}

/* --- the message layer: what is read from clients, sent upstream, composed back --------------- */

/* Our OPT record (RFC 6891): root owner, our UDP size, rcode, version and flags 0 (no DO), no options. */
static size_t put_opt(__u8 *p)
{
	p[0] = 0;
	put16(p + 1, ns_t_opt);
	put16(p + 3, DNS_EDNS_UDP);
	memset(p + 5, 0, OPT_LEN - 5);
	return OPT_LEN;
}

/*
 * The question of @m (exactly one) into @a, *@off past it. The name is
 * written afresh from its expanded form: compression pointers of the
 * client's never survive. 0 or -EBADMSG.
 */
static int ask_question(const __u8 *m, size_t len, struct dns_ask *a, size_t *off)
{
	char name[NS_MAXDNAME];
	int n, c;

	if (get16(m + 4) != 1)
		return -EBADMSG;
	n = dn_expand(m, m + len, m + NS_HFIXEDSZ, name, sizeof(name));
	if (n < 0 || NS_HFIXEDSZ + (size_t)n + NS_QFIXEDSZ > len)
		return -EBADMSG;
	c = dn_comp(name, a->qname, sizeof(a->qname), NULL, NULL);
	if (c <= 0)
		return -EBADMSG;
	a->qname_len = c;
	a->type = get16(m + NS_HFIXEDSZ + n);
	a->class = get16(m + NS_HFIXEDSZ + n + 2);
	*off = NS_HFIXEDSZ + n + NS_QFIXEDSZ;
	return 0;
}

/*
 * The additional records from @off to the end of @m: at most one OPT,
 * owned by the root (RFC 6891 6.1.1), whose UDP size is noted; the others
 * are only read. Bytes past the last record: -EBADMSG.
 */
static int ask_additional(const __u8 *m, size_t len, size_t off, struct dns_ask *a)
{
	unsigned i, arcount = get16(m + 10);
	struct dns_rr rr;

	for (i = 0; i < arcount; i++) {
		if (read_rr(m, len, &off, &rr))
			return -EBADMSG;
		if (rr.type != ns_t_opt)
			continue;
		if (a->edns || rr.owner[0])
			return -EBADMSG;
		a->edns = true;
		a->udp_max = rr.class > NS_PACKETSZ ? rr.class : NS_PACKETSZ;
	}
	return off == len ? 0 : -EBADMSG;
}

int dns_ask_read(const __u8 *m, size_t len, struct dns_ask *a)
{
	size_t off = 0;
	int err;

	memset(a, 0, sizeof(*a));
	a->udp_max = NS_PACKETSZ;
	if (len < NS_HFIXEDSZ)
		return -EBADMSG;
	a->id = get16(m);
	a->flags = get16(m + 2) & (F_OPCODE | F_RD | F_CD);
	if (get16(m + 2) & F_QR)
		return -EBADMSG;
	err = ask_question(m, len, a, &off);	/* first: even NOTIMP echoes the question */
	if (a->flags & F_OPCODE)
		return -EOPNOTSUPP;
	if (!err && (get16(m + 6) || get16(m + 8)))
		err = -EBADMSG;		/* a query has no answer or authority records */
	if (!err)
		err = ask_additional(m, len, off, a);
	if (err) {
		a->edns = false;
		a->udp_max = NS_PACKETSZ;
	}
	return err;
}

enum served { SERVED, EMPTY, NOT_SERVED };

/*
 * The questions an allow-list needs: A, AAAA, and CNAME (the aliases that
 * lead to addresses), class IN. HTTPS and SVCB, which browsers and curl
 * ask beside A and AAAA, get an empty NOERROR, so that the client goes on
 * with A and AAAA at once; every other type or class gets NOTIMP. Both
 * are refusals: TXT, NULL, HTTPS and the like carry arbitrary data.
 */
static enum served served(const struct dns_ask *a)
{
	if (a->class != ns_c_in)
		return NOT_SERVED;
	switch (a->type) {
	case ns_t_a:
	case ns_t_aaaa:
	case ns_t_cname:
		return SERVED;
	case T_SVCB:
	case T_HTTPS:
		return EMPTY;
	}
	return NOT_SERVED;
}

/*
 * @a's name as it goes upstream, into @out: every label lowered and made
 * of letters, digits, '-' and '_' only (host_name()'s rule, on the wire
 * form), so the letter case (0x20) carries nothing. Its length or -EINVAL.
 */
static int canonical_name(const struct dns_ask *a, __u8 *out)
{
	size_t i = 0, end;

	while (i < a->qname_len && a->qname[i]) {
		end = i + 1 + a->qname[i];
		if (a->qname[i] > NS_MAXLABEL || end >= a->qname_len)
			return -EINVAL;
		out[i] = a->qname[i];
		for (i++; i < end; i++) {
			out[i] = lower(a->qname[i]);
			if (!host_char(out[i]))
				return -EINVAL;
		}
	}
	if (!i || i + 1 != a->qname_len)
		return -EINVAL;		/* the root alone, or bytes past the name */
	out[i] = 0;
	return a->qname_len;
}

int dns_ask_query(const struct dns_ask *a, __u16 id, __u8 *out, size_t size)
{
	size_t n = NS_HFIXEDSZ;
	int c;

	if (served(a) != SERVED)
		return -EINVAL;
	if (size < (size_t)NS_HFIXEDSZ + a->qname_len + NS_QFIXEDSZ + OPT_LEN)
		return -ENOSPC;
	c = canonical_name(a, out + n);
	if (c < 0)
		return c;
	n += c;
	memset(out, 0, NS_HFIXEDSZ);
	put16(out, id);
	put16(out + 2, F_RD);
	put16(out + 4, 1);
	put16(out + 10, 1);
	put16(out + n, a->type);
	put16(out + n + 2, ns_c_in);
	n += NS_QFIXEDSZ;
	return n + put_opt(out + n);
}

/* The smallest answer to @a: header, question, OPT. */
static size_t reply_min(const struct dns_ask *a)
{
	return NS_HFIXEDSZ + (a->qname_len ? a->qname_len + NS_QFIXEDSZ : 0) + (a->edns ? OPT_LEN : 0);
}

/*
 * Header and question of an answer to @a. Opcode, RD and CD are echoed and
 * RA set, as any recursive resolver answers; the question is the client's,
 * letter case included (stubs that use 0x20 check it). Its length.
 */
static size_t reply_head(const struct dns_ask *a, int rcode, __u8 *out)
{
	size_t n = NS_HFIXEDSZ;

	memset(out, 0, NS_HFIXEDSZ);
	put16(out, a->id);
	put16(out + 2, F_QR | F_RA | a->flags | (rcode & F_RCODE));
	if (!a->qname_len)
		return n;
	put16(out + 4, 1);
	memcpy(out + n, a->qname, a->qname_len);
	n += a->qname_len;
	put16(out + n, a->type);
	put16(out + n + 2, a->class);
	return n + NS_QFIXEDSZ;
}

/* Our OPT record ends the answer to a client that sent one (RFC 6891 7). The length. */
static size_t reply_end(const struct dns_ask *a, __u8 *out, size_t n)
{
	if (!a->edns)
		return n;
	put16(out + 10, 1);
	return n + put_opt(out + n);
}

int dns_ask_reply(const struct dns_ask *a, int rcode, __u8 *out, size_t size)
{
	if (size < reply_min(a))
		return -ENOSPC;
	return reply_end(a, out, reply_head(a, rcode, out));
}

static bool on_chain(const struct dns_chain *c, const char *name)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (!strcasecmp(c->name[i], name))
			return true;
	return false;
}

/*
 * The question name and every name its CNAMEs lead to in the answer
 * section (whatever the order of the records), into @c. Every answer
 * record is read, so a malformed one is found here. 0 or -EBADMSG.
 */
static int build_chain(struct dns_chain *c, const __u8 *m, size_t len, const struct dns_question *q)
{
	unsigned i, ancount = get16(m + 6);
	char target[NS_MAXDNAME];
	struct dns_rr rr;
	bool grew = true;
	size_t off;

	strcpy(c->name[0], q->name);
	c->n = 1;
	while (grew) {
		grew = false;
		for (i = 0, off = q->end; i < ancount; i++) {
			if (read_rr(m, len, &off, &rr))
				return -EBADMSG;
			if (rr.type != ns_t_cname || rr.class != ns_c_in || c->n == CNAME_MAX ||
			    !on_chain(c, rr.owner))
				continue;
			if (dn_expand(m, m + len, rr.rdata, target, sizeof(target)) != rr.rdlen)
				return -EBADMSG;
			if (on_chain(c, target))
				continue;
			strcpy(c->name[c->n++], target);
			grew = true;
		}
	}
	return 0;
}

/* Is @m an answer to the question dns_ask_query(@a) sent? Its question into @qu. */
static bool answers(const struct dns_ask *a, const __u8 *m, size_t len, struct dns_question *qu)
{
	char name[NS_MAXDNAME];

	if (len < NS_HFIXEDSZ || !(get16(m + 2) & F_QR) || parse_question(m, len, qu))
		return false;
	if (dn_expand(a->qname, a->qname + a->qname_len, a->qname, name, sizeof(name)) < 0)
		return false;
	return qu->type == a->type && qu->class == ns_c_in && !strcasecmp(qu->name, name);
}

static int put_bytes(struct writer *w, const void *p, size_t len)
{
	if (w->end - w->n < len)
		return -EMSGSIZE;
	memcpy(w->out + w->n, p, len);
	w->n += len;
	return 0;
}

/* @name written afresh, compressed against the names before it. */
static int put_name(struct writer *w, const char *name)
{
	int c = dn_comp(name, w->out + w->n, w->end - w->n, w->dnptrs, w->dnptrs + DNPTRS);

	if (c < 0)
		return -EMSGSIZE;
	w->n += c;
	return 0;
}

/*
 * @rr of @m, composed anew: names written by us, class IN, the TTL
 * clamped to what the kernel keeps the address open (a client that caches
 * it longer would be refused), the address or the CNAME target. 0,
 * -EMSGSIZE when it does not fit, -EBADMSG.
 */
static int put_rr(struct writer *w, const __u8 *m, size_t len, const struct dns_rr *rr)
{
	__u32 ttl = rr->ttl < w->min_ttl ? w->min_ttl : rr->ttl > w->max_ttl ? w->max_ttl : rr->ttl;
	char target[NS_MAXDNAME];
	__u8 fixed[NS_RRFIXEDSZ];
	size_t rdata;
	int err;

	put16(fixed, rr->type);
	put16(fixed + 2, ns_c_in);
	put32(fixed + 4, ttl);
	put16(fixed + 8, 0);
	err = put_name(w, rr->owner) ?: put_bytes(w, fixed, sizeof(fixed));
	if (err)
		return err;
	rdata = w->n;
	if (rr->type != ns_t_cname)
		err = put_bytes(w, rr->rdata, rr->rdlen);
	else if (dn_expand(m, m + len, rr->rdata, target, sizeof(target)) != rr->rdlen)
		err = -EBADMSG;
	else
		err = put_name(w, target);
	if (!err)
		put16(w->out + rdata - 2, w->n - rdata);
	return err;
}

/* Is @rr one the client gets: an A, AAAA or CNAME record of class IN, of a name on the chain? */
static bool keep_rr(const struct dns_chain *c, const struct dns_rr *rr)
{
	if (rr->class != ns_c_in || !on_chain(c, rr->owner))
		return false;
	return (rr->type == ns_t_a && rr->rdlen == 4) || (rr->type == ns_t_aaaa && rr->rdlen == 16) ||
	       rr->type == ns_t_cname;
}

/* The records of @m's answer section (from @off) the client gets. 0, -EMSGSIZE or -EBADMSG. */
static int put_answers(struct writer *w, const __u8 *m, size_t len, size_t off, const struct dns_chain *c)
{
	unsigned i, ancount = get16(m + 6), kept = 0;
	struct dns_rr rr;
	int err;

	for (i = 0; i < ancount; i++) {
		if (read_rr(m, len, &off, &rr))
			return -EBADMSG;
		if (!keep_rr(c, &rr))
			continue;
		err = put_rr(w, m, len, &rr);
		if (err)
			return err;
		kept++;
	}
	put16(w->out + 6, kept);
	return 0;
}

/* The rcodes a client gets from upstream; any other (FORMERR for our query…) is SERVFAIL to it. */
static int client_rcode(const __u8 *m)
{
	int rcode = get16(m + 2) & F_RCODE;

	return rcode == ns_r_noerror || rcode == ns_r_nxdomain || rcode == ns_r_refused ? rcode : ns_r_servfail;
}

int dns_ask_answer(const struct dns_ask *a, const __u8 *m, size_t len, unsigned min_ttl, unsigned max_ttl,
		   size_t max, __u8 *out, size_t size)
{
	struct writer w = { .out = out, .min_ttl = min_ttl, .max_ttl = max_ttl };
	_cleanup_free_ struct dns_chain *c = NULL;
	struct dns_question qu;
	size_t head;
	int err = -EMSGSIZE;

	if (!a->qname_len || !answers(a, m, len, &qu))
		return -EBADMSG;
	if (size < reply_min(a))
		return -ENOSPC;
	if (max > size)
		max = size;
	if (max < reply_min(a))
		max = reply_min(a);
	w.end = max - (a->edns ? OPT_LEN : 0);	/* room for our OPT record */
	head = w.n = reply_head(a, client_rcode(m), out);
	w.dnptrs[0] = out;
	w.dnptrs[1] = out + NS_HFIXEDSZ;	/* the question's name: later ones point to it */
	if (!(get16(m + 2) & F_TC)) {
		c = malloc(sizeof(*c));
		if (!c)
			return -ENOMEM;
		err = build_chain(c, m, len, &qu) ?: put_answers(&w, m, len, qu.end, c);
	}
	if (err == -EMSGSIZE) {
		/* Too long for the client, or truncated upstream: TC and no records; it asks over TCP. */
		w.n = head;
		put16(out + 2, get16(out + 2) | F_TC);
		put16(out + 6, 0);
	} else if (err) {
		return err;
	}
	return reply_end(a, out, w.n);
}

/* --- domain ids ------------------------------------------------------------------ */

static __u64 str_hash(const char *s)
{
	__u64 h = SBX_HASH_INIT;

	while (*s)
		h = sbx_hash_byte(h, *s++);
	return h;
}

static __u32 *name_slot(const struct dns_resolver *r, __u32 *idx, __u32 mask, const char *name)
{
	__u32 i;

	for (i = str_hash(name) & mask; idx[i]; i = (i + 1) & mask)
		if (!strcmp(r->names[idx[i] - 1], name))
			break;
	return &idx[i];
}

/* Keep the index at most half full. 0 or -ENOMEM. */
static int names_grow(struct dns_resolver *r)
{
	__u32 size = r->name_idx ? 2 * (r->name_mask + 1) : 256;
	__u32 *idx, id;
	char **names;

	if (r->nnames + 1 > r->names_cap) {
		names = realloc(r->names, size / 2 * sizeof(*names));
		if (!names)
			return -ENOMEM;
		r->names = names;
		r->names_cap = size / 2;
	}
	if (r->name_idx && 2 * (r->nnames + 1) <= r->name_mask + 1)
		return 0;
	idx = calloc(size, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (id = 1; id <= r->nnames; id++)
		*name_slot(r, idx, size - 1, r->names[id - 1]) = id;
	free(r->name_idx);
	r->name_idx = idx;
	r->name_mask = size - 1;
	return 0;
}

/*
 * The id of @name: stable for the resolver's life. A new name gets the
 * next id while there are fewer than @limit; 0 otherwise.
 */
static __u32 name_id(struct dns_resolver *r, const char *name, __u32 limit)
{
	__u32 *slot;
	char *dup;

	if (r->name_idx) {
		slot = name_slot(r, r->name_idx, r->name_mask, name);
		if (*slot)
			return *slot;
	}
	if (r->nnames >= limit || names_grow(r))
		return 0;
	dup = strdup(name);
	if (!dup)
		return 0;
	r->names[r->nnames++] = dup;
	*name_slot(r, r->name_idx, r->name_mask, name) = r->nnames;
	return r->nnames;
}

const char *dns_domain_name(const struct dns_resolver *r, __u32 id)
{
	return r && id && id <= r->nnames ? r->names[id - 1] : NULL;
}

/* --- the shadow of dns_allow ------------------------------------------------------- */

static struct dns_addr **addr_link(struct dns_resolver *r, const struct sbx_dns_key *k)
{
	const __u8 *p = (const void *)k;
	struct dns_addr **link;
	__u64 h = SBX_HASH_INIT;
	size_t i;

	for (i = 0; i < sizeof(*k); i++)
		h = sbx_hash_byte(h, p[i]);
	for (link = &r->addrs[h & (ADDR_BUCKETS - 1)]; *link; link = &(*link)->next)
		if (!memcmp(&(*link)->key, k, sizeof(*k)))
			break;
	return link;
}

/*
 * The slot @domain_id takes in @e: its own; else a free or expired one;
 * else the one expiring first, whose name's later connections to this
 * address are then denied (never wrongly allowed).
 */
static int pick_slot(const struct sbx_dns_entry *e, __u32 domain_id, __u64 now)
{
	int i, first = 0;

	for (i = 0; i < SBX_DNS_SLOTS; i++)
		if (e->s[i].expires_ns && e->s[i].domain_id == domain_id)
			return i;
	for (i = 0; i < SBX_DNS_SLOTS; i++) {
		if (e->s[i].expires_ns <= now)
			return i;
		if (e->s[i].expires_ns < e->s[first].expires_ns)
			first = i;
	}
	return first;
}

/* Allow @addr for @q's name until @expires: the kernel first, then the shadow. 0 or -errno. */
static int install(struct dns_resolver *r, const __u8 addr[16], __u64 expires, __u64 now,
		   const struct dns_query *q)
{
	struct sbx_dns_key k = { .sandbox_cgid = r->cgid };
	struct dns_addr **link, *fresh = NULL;
	struct sbx_dns_entry e = {};
	struct sbx_dns_slot *s;
	int err;

	memcpy(k.addr, addr, sizeof(k.addr));
	link = addr_link(r, &k);
	if (*link) {
		e = (*link)->e;
	} else {
		if (r->naddrs >= SBX_MAX_DNS_ADDRS)
			return -E2BIG;
		fresh = calloc(1, sizeof(*fresh));
		if (!fresh)
			return -ENOMEM;
		fresh->key = k;
	}
	s = &e.s[pick_slot(&e, q->domain_id, now)];
	if (s->domain_id == q->domain_id && s->expires_ns > expires)
		expires = s->expires_ns;	/* an earlier answer with a longer TTL still holds */
	*s = (struct sbx_dns_slot){ .expires_ns = expires, .domain_id = q->domain_id,
				    .rule_id = q->rule_id, .lo = q->lo, .hi = q->hi };
	err = r->ops->update(r->ctx, &k, &e);
	if (err) {
		free(fresh);
		return err;
	}
	if (fresh) {
		*link = fresh;
		r->naddrs++;
	}
	(*link)->e = e;
	return 0;
}

/*
 * Drop the slots of *@link expired for DNS_KEEP_EXPIRED_S, and the entry
 * once none is left. True if it went.
 */
static bool addr_expire(struct dns_resolver *r, struct dns_addr **link, __u64 now)
{
	struct dns_addr *a = *link;
	struct sbx_dns_entry e = a->e;
	bool changed = false, used = false;
	int i, err;

	for (i = 0; i < SBX_DNS_SLOTS; i++) {
		if (!e.s[i].expires_ns)
			continue;
		if (e.s[i].expires_ns + DNS_KEEP_EXPIRED_S * 1000000000ULL > now) {
			used = true;
			continue;
		}
		memset(&e.s[i], 0, sizeof(e.s[i]));
		changed = true;
	}
	if (used) {
		/* On failure the kernel still holds the expired slot, which it ignores: retried next tick. */
		if (changed && !r->ops->update(r->ctx, &a->key, &e))
			a->e = e;
		return false;
	}
	err = r->ops->remove(r->ctx, &a->key);
	if (err && err != -ENOENT)
		return false;
	*link = a->next;
	free(a);
	r->naddrs--;
	return true;
}

static void expire_addrs(struct dns_resolver *r)
{
	struct dns_addr **link;
	__u64 now = boot_now(r);
	unsigned b;

	for (b = 0; b < ADDR_BUCKETS && r->naddrs; b++)
		for (link = &r->addrs[b]; *link;)
			if (!addr_expire(r, link, now))
				link = &(*link)->next;
}

/* --- answers ---------------------------------------------------------------------- */

static __u64 clamp_ttl(const struct dns_resolver *r, __u32 ttl)
{
	__u64 ns = (__u64)ttl * NS_PER_S;

	return ns < r->min_ttl ? r->min_ttl : ns > r->max_ttl ? r->max_ttl : ns;
}

/*
 * Addresses no answer opens: unspecified (0.0.0.0/8, ::, which reach this
 * host) and link-local (169.254.0.0/16 holds cloud metadata services,
 * fe80::/10). A name that resolves there is not reason enough; a CIDR rule
 * can still allow them.
 */
static const __u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };

static bool never_opened(const __u8 a[16])
{
	static const __u8 any[16];

	if (!memcmp(a, v4mapped, sizeof(v4mapped)))
		return a[12] == 0 || (a[12] == 169 && a[13] == 254);
	return !memcmp(a, any, 16) || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80);
}

/*
 * Install every A and AAAA record of the answer owned by a name on the
 * question's CNAME chain. Records for other names (an upstream may add
 * them) open nothing. 0 or -errno: -EBADMSG for a malformed answer.
 */
static int install_answer(struct dns_resolver *r, const __u8 *m, size_t len, const struct dns_query *q)
{
	unsigned i, ancount = get16(m + 6);
	struct dns_question qu;
	struct dns_rr rr;
	__u8 addr[16];
	__u64 now = boot_now(r);
	size_t off;
	int err;

	if (parse_question(m, len, &qu) || build_chain(&r->chain, m, len, &qu))
		return -EBADMSG;
	for (i = 0, off = qu.end; i < ancount; i++) {
		if (read_rr(m, len, &off, &rr))
			return -EBADMSG;
		if (rr.class != ns_c_in || !on_chain(&r->chain, rr.owner))
			continue;
		if (rr.type == ns_t_a && rr.rdlen == 4) {
			memcpy(addr, v4mapped, sizeof(v4mapped));
			memcpy(addr + 12, rr.rdata, 4);
		} else if (rr.type == ns_t_aaaa && rr.rdlen == 16) {
			memcpy(addr, rr.rdata, 16);
		} else {
			continue;
		}
		if (never_opened(addr))
			continue;
		err = install(r, addr, now + clamp_ttl(r, rr.ttl), now, q);
		if (err)
			return err;
	}
	return 0;
}

/* --- events ---------------------------------------------------------------------- */

/*
 * The event of a refused query (or, in audit mode, one that would have
 * been), in r->ev; NULL when nobody listens. error is 0: the client is not
 * refused a system call, it gets an answer (NXDOMAIN, NOTIMP, REFUSED,
 * SERVFAIL). The resolver's own view of addresses says nothing, so the
 * network fields stay empty.
 */
static struct sbx_event *event_for(struct dns_resolver *r, const struct dns_query *q, const char *name,
				   __u32 rule_id, __u32 verdict)
{
	struct sbx_event *ev = &r->ev;

	if (!r->ops->event)
		return NULL;
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = mono_now();
	ev->cgroup_id = q->who.cgroup_id;
	ev->sandbox_cgroup_id = r->cgid;
	ev->pid = q->who.pid;
	ev->tgid = q->who.tgid;
	ev->ppid = q->who.ppid;
	ev->uid = q->who.uid;
	memcpy(ev->comm, q->who.comm, sizeof(ev->comm));
	ev->op = SBX_OP_DNS;
	ev->verdict = verdict;
	ev->rule_id = rule_id;
	ev->domain_id = q->domain_id;
	ev->protocol = q->peer.proto;
	if (!name)
		name = dns_domain_name(r, q->domain_id) ?: "";
	ev->path_len = snprintf(ev->path, sizeof(ev->path), "%s", name);
	if (ev->path_len >= sizeof(ev->path))
		ev->path_len = sizeof(ev->path) - 1;
	return ev;
}

static void report(struct dns_resolver *r, const struct dns_query *q, const char *name, __u32 rule_id,
		   __u32 verdict)
{
	struct sbx_event *ev = event_for(r, q, name, rule_id, verdict);

	if (ev)
		r->ops->event(r->ctx, ev);
}

/* The verdict of a refusal the policy decides: audit mode only reports it. */
static __u32 policy_verdict(const struct dns_resolver *r)
{
	return r->audit ? SBX_VERDICT_AUDIT : SBX_VERDICT_DENY;
}

/*
 * The process behind a query, by its source port. An entry written more
 * than DNS_CLIENT_FRESH_NS before is a past user of that port (a socket's
 * first unconnected send is made before it has a port): nobody, pid 0.
 */
static void lookup_client(struct dns_resolver *r, const struct dns_peer *p, struct sbx_dns_client *who)
{
	__u32 key = (__u32)p->proto << 16 | p->port;

	if (!r->ops->client || r->ops->client(r->ctx, key, who) ||
	    (who->ts_ns && mono_now() - who->ts_ns > DNS_CLIENT_FRESH_NS))
		memset(who, 0, sizeof(*who));
}

/* --- TCP clients ------------------------------------------------------------------ */

static void conn_close(struct dns_conn *c)
{
	close(c->fd);
	c->fd = -1;
	c->gen++;
	c->eof = false;
	c->pending = 0;
	c->in_len = 0;
	c->out_len = 0;
}

/* Write what is queued; the rest waits for POLLOUT. */
static void conn_flush(struct dns_conn *c)
{
	ssize_t n;

	while (c->out_len) {
		n = send(c->fd, c->out, c->out_len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				conn_close(c);
			return;
		}
		memmove(c->out, c->out + n, c->out_len - n);
		c->out_len -= n;
		c->active = mono_now();
	}
	if (c->eof && !c->pending)
		conn_close(c);
}

/* Queue one length-prefixed message. A client that leaves too much unread is dropped. */
static void conn_send(struct dns_conn *c, const __u8 *m, size_t len)
{
	size_t need = c->out_len + 2 + len;
	__u8 *out;

	if (need > CONN_OUT_MAX) {
		conn_close(c);
		return;
	}
	if (need > c->out_cap) {
		out = realloc(c->out, need);
		if (!out) {
			conn_close(c);
			return;
		}
		c->out = out;
		c->out_cap = need;
	}
	put16(c->out + c->out_len, len);
	memcpy(c->out + c->out_len + 2, m, len);
	c->out_len = need;
	conn_flush(c);
}

/*
 * Send @m to the client. A UDP reply that cannot go out now is dropped:
 * the client retries, as with any lost datagram.
 */
static void reply(struct dns_resolver *r, const struct dns_peer *p, const __u8 *m, size_t len)
{
	struct dns_conn *c;

	if (p->proto == IPPROTO_UDP) {
		sendto(p->fd, m, len, MSG_DONTWAIT | MSG_NOSIGNAL, (const void *)&p->sa, p->salen);
		return;
	}
	c = &r->conns[p->conn];
	if (c->fd >= 0 && c->gen == p->gen)
		conn_send(c, m, len);
}

/* An answer to @a with @rcode and no records. */
static void answer_rcode(struct dns_resolver *r, const struct dns_peer *p, const struct dns_ask *a, int rcode)
{
	int n = dns_ask_reply(a, rcode, r->out, sizeof(r->out));

	r->counters.failed += rcode == ns_r_servfail;
	if (n > 0)
		reply(r, p, r->out, n);
}

/* --- queries upstream ----------------------------------------------------------------- */

static int random_id(struct dns_resolver *r, __u16 *id)
{
	ssize_t n;
	int tries;

	/* At most 1024 of 65536 ids are taken: a free one comes quickly. */
	for (tries = 0; tries < 64; tries++) {
		if (!r->nrnd) {
			n = getrandom(r->rnd, sizeof(r->rnd), 0);
			if (n != sizeof(r->rnd)) {
				if (n < 0 && errno == EINTR)
					continue;
				return n < 0 ? -errno : -EIO;
			}
			r->nrnd = ARRAY_SIZE(r->rnd);
		}
		*id = r->rnd[--r->nrnd];
		if (!r->by_id[*id])
			return 0;
	}
	return -EBUSY;
}

static void query_release(struct dns_resolver *r, struct dns_query *q)
{
	struct dns_conn *c = &r->conns[q->peer.conn];

	if (q->peer.proto == IPPROTO_TCP && c->fd >= 0 && c->gen == q->peer.gen) {
		c->pending--;
		if (c->eof && !c->pending && !c->out_len)
			conn_close(c);
	}
	r->by_id[q->id] = 0;
	free(q->sent);
	memset(q, 0, sizeof(*q));
	r->nq--;
}

static void query_fail(struct dns_resolver *r, struct dns_query *q)
{
	answer_rcode(r, &q->peer, &q->sent->ask, ns_r_servfail);
	query_release(r, q);
}

/* The enclosing sandbox's resolver a query goes to (dns_ops.via): it listens on 127.0.0.1. */
static void via_addr(__u16 port, struct sockaddr_storage *out)
{
	struct sockaddr_in *in = (void *)out;

	memset(out, 0, sizeof(*out));
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static bool sent_to(struct dns_resolver *r, const struct dns_query *q, const struct sockaddr_storage *s)
{
	int fd = r->up[s->ss_family == AF_INET6];

	return fd >= 0 && sendto(fd, q->sent->msg, q->sent->len, MSG_DONTWAIT | MSG_NOSIGNAL, (const void *)s,
				 sa_len(s)) == (ssize_t)q->sent->len;
}

/*
 * Send @q to the next server it has not tried. Each server gets an equal
 * share of the timeout, the last one what is left; a query via an
 * enclosing resolver has that one server, which has it all. 0, or
 * -EHOSTUNREACH when none is left.
 */
static int query_send(struct dns_resolver *r, struct dns_query *q, __u64 now)
{
	struct sockaddr_storage via;
	int i;

	if (q->via) {
		via_addr(q->via, &via);
		if (q->next++ || !sent_to(r, q, &via))
			return -EHOSTUNREACH;
		q->tried = 1;
		q->retry_at = q->deadline;
		return 0;
	}
	while (q->next < r->nservers) {
		i = q->next++;
		if (!sent_to(r, q, &r->servers[i]))
			continue;
		q->tried |= 1u << i;
		q->retry_at = now + r->timeout / r->nservers;
		if (q->next == r->nservers || q->retry_at > q->deadline)
			q->retry_at = q->deadline;
		return 0;
	}
	return -EHOSTUNREACH;
}

/*
 * The query upstream for @a, with a free id of ours; NULL (fail closed)
 * when it cannot be composed.
 */
static struct dns_sent *compose(struct dns_resolver *r, const struct dns_ask *a, __u16 *id)
{
	struct dns_sent *sent;
	int len;

	if (r->nq >= DNS_MAX_PENDING || random_id(r, id))
		return NULL;
	sent = malloc(sizeof(*sent));
	if (!sent)
		return NULL;
	len = dns_ask_query(a, *id, sent->msg, sizeof(sent->msg));
	if (len < 0) {
		free(sent);
		return NULL;
	}
	sent->ask = *a;
	sent->len = len;
	return sent;
}

/*
 * Send the judged question @a of @tmpl upstream, as a query of ours;
 * SERVFAIL if it cannot be. Upstream is an enclosing sandbox's resolver
 * when there is one (dns_ops.via), asked at each query: sandboxes come and
 * go above this one, and a name that one refuses must not leave through
 * this one.
 */
static void forward(struct dns_resolver *r, const struct dns_query *tmpl, const struct dns_ask *a)
{
	struct dns_query *q = r->q;
	struct dns_sent *sent = NULL;
	__u64 now = mono_now();
	__u16 id = 0, via = 0;
	int outer = r->ops->via ? r->ops->via(r->ctx, &via) : 0;

	if (outer >= 0)
		sent = compose(r, a, &id);
	if (!sent) {
		answer_rcode(r, &tmpl->peer, a, ns_r_servfail);
		return;
	}
	while (q->used)
		q++;
	*q = *tmpl;
	q->sent = sent;
	q->used = true;
	q->id = id;
	q->via = outer > 0 ? via : 0;
	q->deadline = now + r->timeout;
	r->by_id[id] = q - r->q + 1;
	r->nq++;
	if (q->peer.proto == IPPROTO_TCP)
		r->conns[q->peer.conn].pending++;
	if (query_send(r, q, now))
		query_fail(r, q);
	else
		r->counters.forwarded++;
}

static int wait_fd(int fd, short events, __u64 deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	__u64 now = mono_now();
	int n;

	if (now >= deadline)
		return -ETIMEDOUT;
	n = poll(&p, 1, (deadline - now + NS_PER_MS - 1) / NS_PER_MS);
	return n < 0 ? -errno : n ? 0 : -ETIMEDOUT;
}

/* Move @len bytes between @fd and @buf (@wr: to the socket) before @deadline. */
static int io_all(int fd, void *buf, size_t len, bool wr, __u64 deadline)
{
	ssize_t n;
	int err;

	while (len) {
		err = wait_fd(fd, wr ? POLLOUT : POLLIN, deadline);
		if (err)
			return err;
		n = wr ? send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) : recv(fd, buf, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return n ? -errno : -ECONNRESET;
		buf = (__u8 *)buf + n;
		len -= n;
	}
	return 0;
}

/*
 * Ask @s over TCP, for a TCP client whose answer came back truncated over
 * UDP. This blocks the resolver for at most DNS_TCP_UPSTREAM_MS; it is
 * rare (answers over ~1232 bytes, to the few clients that use TCP) and
 * the upstream is normally on this host or this network. The answer is
 * left in r->buf; its length or -errno.
 */
static int tcp_exchange(struct dns_resolver *r, const struct sockaddr_storage *s, const struct dns_query *q)
{
	_cleanup_close_ int fd = socket(s->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	__u64 deadline = mono_now() + DNS_TCP_UPSTREAM_MS * NS_PER_MS;
	socklen_t sl = sizeof(int);
	struct dns_question qu;
	__u8 hdr[2];
	int err, soerr = 0;
	size_t len;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const void *)s, sa_len(s)) && errno != EINPROGRESS)
		return -errno;
	err = wait_fd(fd, POLLOUT, deadline);
	if (!err && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl))
		err = -errno;
	if (err || soerr)
		return err ?: -soerr;
	put16(hdr, q->sent->len);
	err = io_all(fd, hdr, 2, true, deadline) ?: io_all(fd, q->sent->msg, q->sent->len, true, deadline) ?:
	      io_all(fd, hdr, 2, false, deadline);
	if (err)
		return err;
	len = get16(hdr);
	err = io_all(fd, r->buf, len, false, deadline);
	if (err)
		return err;
	if (len < NS_HFIXEDSZ || get16(r->buf) != q->id || !answers(&q->sent->ask, r->buf, len, &qu))
		return -EBADMSG;
	return len;
}

/*
 * Install the addresses of answer @m to @q. False when the client must
 * not have it: @q is then failed (SERVFAIL) and released.
 */
static bool installed(struct dns_resolver *r, struct dns_query *q, const __u8 *m, size_t len)
{
	int err = install_answer(r, m, len, q);

	if (!err)
		return true;
	if (err != -EBADMSG) {
		/* Fail closed: an answer whose addresses are not allowed is not given. */
		report(r, q, NULL, SBX_RULE_DNS_FAILED, policy_verdict(r));
		if (r->audit)
			return true;
	}
	query_fail(r, q);
	return false;
}

/*
 * The answer @m to @q, from @server. Addresses go into the
 * kernel before the client can read its answer, so its connect() right
 * after is already allowed. A truncated answer gives a UDP client a
 * truncated one (it retries over TCP, and that answer is installed); for
 * a TCP client it is fetched again over TCP.
 */
static void query_answer(struct dns_resolver *r, struct dns_query *q, const struct sockaddr_storage *server,
			 __u8 *m, size_t len)
{
	size_t max = q->peer.proto == IPPROTO_TCP ? MSG_MAX : q->sent->ask.udp_max;
	int n;

	if ((get16(m + 2) & F_TC) && q->peer.proto == IPPROTO_TCP) {
		/*
		 * Not from an enclosing resolver: in the daemon it is served by
		 * the thread this exchange would block, so it could not answer.
		 */
		if (q->via) {
			query_fail(r, q);
			return;
		}
		n = tcp_exchange(r, server, q);
		/* Truncated over TCP too: nothing whole to give a TCP client. */
		if (n < 0 || (get16(r->buf + 2) & F_TC)) {
			query_fail(r, q);
			return;
		}
		m = r->buf;
		len = n;
	}
	/* Composed before anything is installed: an answer the client never gets opens nothing. */
	n = dns_ask_answer(&q->sent->ask, m, len, r->min_ttl_s, r->max_ttl_s, max, r->out, sizeof(r->out));
	if (n < 0) {
		query_fail(r, q);
		return;
	}
	if (q->install && !(get16(m + 2) & F_TC) && !installed(r, q, m, len))
		return;
	reply(r, &q->peer, r->out, n);
	query_release(r, q);
}

static int server_index(const struct dns_resolver *r, const struct sockaddr_storage *from)
{
	int i;

	for (i = 0; i < r->nservers; i++)
		if (sa_equal(&r->servers[i], from))
			return i;
	return -1;
}

/* Was @q sent to @from: the enclosing resolver it went to, or one of the servers it tried? */
static bool asked(const struct dns_resolver *r, const struct dns_query *q, const struct sockaddr_storage *from)
{
	struct sockaddr_storage via;
	int s;

	if (q->via) {
		via_addr(q->via, &via);
		return q->tried && sa_equal(&via, from);
	}
	s = server_index(r, from);
	return s >= 0 && (q->tried & (1u << s));
}

/* A datagram on an upstream socket: only the answer to a query of ours, from a server it was sent to. */
static void upstream_answer(struct dns_resolver *r, const struct sockaddr_storage *from, __u8 *m, size_t len)
{
	struct dns_question qu;
	struct dns_query *q;
	unsigned idx;

	if (len < NS_HFIXEDSZ || !(get16(m + 2) & F_QR))
		return;
	idx = r->by_id[get16(m)];
	if (!idx)
		return;
	q = &r->q[idx - 1];
	if (!asked(r, q, from))
		return;
	if (answers(&q->sent->ask, m, len, &qu)) {
		query_answer(r, q, from, m, len);
		return;
	}
	/*
	 * An error without the question (a FORMERR to our query, say) answers
	 * nothing the client asked: the next server now, else SERVFAIL now,
	 * rather than at the timeout.
	 */
	if (get16(m + 4) == 0 && (get16(m + 2) & F_RCODE) && query_send(r, q, mono_now()))
		query_fail(r, q);
}

static void upstream_read(struct dns_resolver *r, int fd)
{
	struct sockaddr_storage from;
	socklen_t flen;
	ssize_t n;
	int i;

	for (i = 0; i < BATCH; i++) {
		flen = sizeof(from);
		n = recvfrom(fd, r->buf, MSG_MAX, MSG_DONTWAIT, (void *)&from, &flen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;
		upstream_answer(r, &from, r->buf, n);
	}
}

/* Time out what is due: queries move to the next server or get SERVFAIL; idle TCP clients go. */
static void expire_queries(struct dns_resolver *r)
{
	__u64 now = mono_now();
	struct dns_conn *c;
	unsigned i;

	for (i = 0; i < DNS_MAX_PENDING && r->nq; i++) {
		if (!r->q[i].used || now < r->q[i].retry_at)
			continue;
		if (now < r->q[i].deadline && !query_send(r, &r->q[i], now))
			continue;
		query_fail(r, &r->q[i]);
	}
	for (c = r->conns; c < r->conns + DNS_MAX_CONNS; c++)
		if (c->fd >= 0 && !c->pending && now - c->active >= DNS_TCP_IDLE_MS * NS_PER_MS)
			conn_close(c);
}

/* --- queries from clients ----------------------------------------------------------------- */

/*
 * The query rate limit as GCRA, a token bucket kept as one time: a query
 * conforms while the theoretical arrival time r->tat is at most burst - 1
 * intervals ahead of now. On the ops clock, which tests can move.
 */
static bool rate_take(struct dns_resolver *r, __u64 now)
{
	__u64 tat = r->tat > now ? r->tat : now;

	if (tat - now > r->rate_tau)
		return false;
	r->tat = tat + r->rate_interval;
	return true;
}

/* The refusals of a past second, as one SBX_EV_SUMMARY record counting them (repeat). */
static void rate_summary(struct dns_resolver *r)
{
	__u64 n = r->rate_suppressed;

	r->rate_suppressed = 0;
	if (!n || !r->ops->event)
		return;
	r->rate_ev.ts_ns = mono_now();
	r->rate_ev.repeat = n > UINT32_MAX ? UINT32_MAX : n;
	r->rate_ev.flags |= SBX_EV_SUMMARY;
	r->ops->event(r->ctx, &r->rate_ev);
}

/*
 * A query over the rate limit: REFUSED. One event when the limit starts
 * to bite; the refusals of the second after it are counted into one
 * summary, so that a flood cannot become a flood of events.
 */
static void rate_limited(struct dns_resolver *r, const struct dns_query *q, const struct dns_ask *a, __u64 now)
{
	char raw[NS_MAXDNAME] = "", name[NS_MAXDNAME];
	struct sbx_event *ev;

	r->counters.rate_limited++;
	answer_rcode(r, &q->peer, a, ns_r_refused);
	if (now < r->rate_quiet_until) {
		r->rate_suppressed++;
		return;
	}
	rate_summary(r);
	r->rate_quiet_until = now + NS_PER_S;
	if (a->qname_len)
		dn_expand(a->qname, a->qname + a->qname_len, a->qname, raw, sizeof(raw));
	host_name(raw, name, sizeof(name));
	ev = event_for(r, q, name, SBX_RULE_DNS_RATE, SBX_VERDICT_DENY);
	if (!ev)
		return;
	r->ops->event(r->ctx, ev);
	r->rate_ev = *ev;
}

/*
 * Judge @name for @q: fills the rule, ports and domain id. Denied names
 * get ids only while the table is less than half full, so a flood of
 * denied names cannot use up the ids allowed names need.
 */
static bool judge(struct dns_resolver *r, const char *name, bool host, struct dns_query *q)
{
	__u32 known = r->nnames;
	bool allowed = false;

	q->rule_id = SBX_RULE_DOMAIN_DEFAULT;
	if (host)
		allowed = r->ops->verdict(r->ctx, name, &q->rule_id, &q->lo, &q->hi);
	q->domain_id = name_id(r, name, allowed ? DNS_MAX_DOMAINS : DNS_MAX_DOMAINS / 2);
	r->counters.allowed_names += allowed && r->nnames > known;
	return allowed;
}

/* The type or class of @a, refused: an empty answer or NOTIMP (served()), and an event naming it. */
static void refuse_type(struct dns_resolver *r, const struct dns_query *q, const struct dns_ask *a,
			const char *name, enum served s)
{
	struct sbx_event *ev = event_for(r, q, name, SBX_RULE_DNS_TYPE, SBX_VERDICT_DENY);

	r->counters.refused_types++;
	if (ev) {
		ev->arg = a->type | (a->class == ns_c_in ? 0 : (__u32)a->class << 16);
		r->ops->event(r->ctx, ev);
	}
	answer_rcode(r, &q->peer, a, s == EMPTY ? ns_r_noerror : ns_r_notimpl);
}

/*
 * The question @a of a well-formed query: the name first (a denied one is
 * NXDOMAIN whatever its type), then the type, then upstream. A name that
 * is not host syntax is refused even in audit mode: it could not be sent
 * in canonical form, and nothing else is sent.
 */
static void serve_question(struct dns_resolver *r, struct dns_query *q, const struct dns_ask *a)
{
	char raw[NS_MAXDNAME], name[NS_MAXDNAME];
	enum served s = served(a);
	bool host, allowed;

	if (dn_expand(a->qname, a->qname + a->qname_len, a->qname, raw, sizeof(raw)) < 0)
		raw[0] = '\0';
	host = host_name(raw, name, sizeof(name));
	allowed = judge(r, name, host, q);
	if (!allowed || !q->domain_id) {
		r->counters.refused_names += !allowed;
		report(r, q, name, allowed ? SBX_RULE_DNS_FAILED : q->rule_id,
		       host ? policy_verdict(r) : SBX_VERDICT_DENY);
		if (!r->audit || !host) {
			answer_rcode(r, &q->peer, a, allowed ? ns_r_servfail : ns_r_nxdomain);
			return;
		}
	}
	if (s != SERVED) {
		refuse_type(r, q, a, name, s);
		return;
	}
	/* In audit mode a denied name is answered but installs nothing: its connections are reported too. */
	q->install = allowed && q->domain_id;
	forward(r, q, a);
}

/*
 * A message from a client. Only standard queries with one question are
 * served; responses are ignored, so two resolvers can never loop. The
 * rate limit comes first and takes every query: an allowed one costs
 * upstream traffic, a refused one an event.
 */
static void serve_query(struct dns_resolver *r, const struct dns_peer *peer, const __u8 *m, size_t len)
{
	struct dns_query q = { .peer = *peer };
	__u64 now = boot_now(r);
	struct dns_ask a;
	int err;

	if (len < NS_HFIXEDSZ || (get16(m + 2) & F_QR))
		return;
	r->counters.queries++;
	err = dns_ask_read(m, len, &a);
	lookup_client(r, peer, &q.who);
	if (!rate_take(r, now)) {
		rate_limited(r, &q, &a, now);
		return;
	}
	if (err) {
		r->counters.malformed++;
		answer_rcode(r, peer, &a, err == -EOPNOTSUPP ? ns_r_notimpl : ns_r_formerr);
		return;
	}
	serve_question(r, &q, &a);
}

static void udp_read(struct dns_resolver *r, int fd)
{
	struct dns_peer p = { .proto = IPPROTO_UDP, .fd = fd };
	ssize_t n;
	int i;

	for (i = 0; i < BATCH; i++) {
		p.salen = sizeof(p.sa);
		n = recvfrom(fd, r->buf, MSG_MAX, MSG_DONTWAIT, (void *)&p.sa, &p.salen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;
		p.port = sa_port(&p.sa);
		serve_query(r, &p, r->buf, n);
	}
}

static void tcp_accept(struct dns_resolver *r, int lfd)
{
	struct sockaddr_storage ss;
	struct dns_conn *c;
	socklen_t len;
	int i, fd;

	for (i = 0; i < BATCH; i++) {
		len = sizeof(ss);
		fd = accept4(lfd, (void *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && errno == EINTR)
			continue;
		if (fd < 0)
			return;
		for (c = r->conns; c < r->conns + DNS_MAX_CONNS && c->fd >= 0; c++)
			;
		if (c == r->conns + DNS_MAX_CONNS || (!c->in && !(c->in = malloc(MSG_MAX + 2)))) {
			close(fd);	/* too many clients: this one retries, or tries UDP */
			continue;
		}
		c->fd = fd;
		c->port = sa_port(&ss);
		c->active = mono_now();
	}
}

/* Serve every complete length-prefixed query in @c's buffer. */
static void conn_parse(struct dns_resolver *r, struct dns_conn *c)
{
	struct dns_peer p = { .proto = IPPROTO_TCP, .port = c->port, .conn = c - r->conns, .gen = c->gen };
	size_t used = 0, len;

	while (c->in_len - used >= 2) {
		len = get16(c->in + used);
		if (len < NS_HFIXEDSZ) {
			conn_close(c);
			return;
		}
		if (c->in_len - used < 2 + len)
			break;
		serve_query(r, &p, c->in + used + 2, len);
		if (c->fd < 0 || c->gen != p.gen)
			return;		/* closed by its own reply */
		used += 2 + len;
	}
	memmove(c->in, c->in + used, c->in_len - used);
	c->in_len -= used;
}

static void conn_read(struct dns_resolver *r, struct dns_conn *c)
{
	ssize_t n;

	/* Room for one whole message is always left: the buffer is 2 + MSG_MAX. */
	n = recv(c->fd, c->in + c->in_len, MSG_MAX + 2 - c->in_len, MSG_DONTWAIT);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			conn_close(c);
		return;
	}
	if (n == 0) {
		c->eof = true;
		if (!c->pending && !c->out_len)
			conn_close(c);
		return;
	}
	c->in_len += n;
	c->active = mono_now();
	conn_parse(r, c);
}

static void conn_ready(struct dns_resolver *r, int fd, short revents)
{
	struct dns_conn *c;

	for (c = r->conns; c < r->conns + DNS_MAX_CONNS; c++) {
		if (c->fd != fd)
			continue;
		if (revents & POLLOUT)
			conn_flush(c);
		if (c->fd != fd)
			return;		/* closed while writing */
		if (!c->eof && (revents & (POLLIN | POLLHUP | POLLERR)))
			conn_read(r, c);
		else if (revents & (POLLHUP | POLLERR))
			conn_close(c);	/* nothing can be sent any more */
		return;
	}
}

/* --- sockets ------------------------------------------------------------------------------ */

static int open_sock(int family, int type)
{
	int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -errno;
	if (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) {
		close(fd);
		return -EAFNOSUPPORT;
	}
	return fd;
}

/* UDP and TCP listeners on one port of 127.0.0.1 (@v6: ::1), so the kernel rewrites to one port per family. */
static int try_listeners(struct dns_resolver *r, int v6)
{
	_cleanup_close_ int u = -1, t = -1;
	struct sockaddr_storage ss = { .ss_family = v6 ? AF_INET6 : AF_INET };
	socklen_t len = sa_len(&ss);

	if (v6)
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	else
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	u = open_sock(ss.ss_family, SOCK_DGRAM);
	if (u < 0)
		return u;
	t = open_sock(ss.ss_family, SOCK_STREAM);
	if (t < 0)
		return t;
	if (bind(u, (void *)&ss, len) || getsockname(u, (void *)&ss, &len) ||
	    bind(t, (void *)&ss, len) || listen(t, 64))
		return -errno;
	r->port[v6] = sa_port(&ss);
	r->udp[v6] = u;
	r->tcp[v6] = t;
	u = t = -1;
	return 0;
}

static int open_listeners(struct dns_resolver *r, int v6)
{
	int tries, err = -EADDRINUSE;

	/* The UDP port may be taken for TCP: try another. */
	for (tries = 0; tries < 16 && err == -EADDRINUSE; tries++)
		err = try_listeners(r, v6);
	return err;
}

static int open_upstream(struct dns_resolver *r)
{
	int i, v6, fd;

	for (i = 0; i < r->nservers; i++) {
		v6 = r->servers[i].ss_family == AF_INET6;
		if (r->up[v6] >= 0)
			continue;
		/* Unbound: the kernel picks a random port at the first sendto(). */
		fd = open_sock(r->servers[i].ss_family, SOCK_DGRAM);
		if (fd >= 0)
			r->up[v6] = fd;
	}
	/* An enclosing sandbox's resolver listens on 127.0.0.1 (without it, queries via one get SERVFAIL). */
	if (r->ops->via && r->up[0] < 0) {
		fd = open_sock(AF_INET, SOCK_DGRAM);
		if (fd >= 0)
			r->up[0] = fd;
	}
	return r->up[0] >= 0 || r->up[1] >= 0 ? 0 : -EAFNOSUPPORT;
}

/* --- API ---------------------------------------------------------------------------------- */

static int config(struct dns_resolver *r, const struct dns_config *cfg)
{
	unsigned min = cfg->min_ttl ?: DNS_DEFAULT_MIN_TTL, max = cfg->max_ttl ?: DNS_DEFAULT_MAX_TTL;
	const struct dns_ops *ops = cfg->ops;

	unsigned rate = cfg->rate ?: DNS_DEFAULT_RATE, burst = cfg->burst ?: DNS_DEFAULT_BURST;

	if (!ops || !ops->update || !ops->remove || !ops->verdict || min > max || rate > DNS_RATE_MAX)
		return -EINVAL;
	r->ops = ops;
	r->ctx = cfg->ctx;
	r->cgid = cfg->sandbox_cgid;
	r->audit = cfg->audit;
	r->min_ttl_s = min;
	r->max_ttl_s = max;
	r->min_ttl = min * NS_PER_S;
	r->max_ttl = max * NS_PER_S;
	r->timeout = (cfg->timeout_ms ?: DNS_DEFAULT_TIMEOUT_MS) * NS_PER_MS;
	r->rate_interval = NS_PER_S / rate;
	r->rate_tau = (burst - 1) * r->rate_interval;
	return 0;
}

int dns_open(struct dns_resolver **out, const struct dns_config *cfg)
{
	struct dns_resolver *r;
	int i, err;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (i = 0; i < 2; i++)
		r->udp[i] = r->tcp[i] = r->up[i] = -1;
	for (i = 0; i < DNS_MAX_CONNS; i++)
		r->conns[i].fd = -1;
	err = config(r, cfg) ?: load_servers(r, cfg) ?: open_listeners(r, 0) ?: open_upstream(r);
	if (err) {
		dns_close(r);
		return err;
	}
	/* No ::1 (IPv6 disabled, or lo without it): IPv6 queries are not served. */
	open_listeners(r, 1);
	*out = r;
	return 0;
}

void dns_ports(const struct dns_resolver *r, __u16 *port4, __u16 *port6)
{
	*port4 = r->port[0];
	*port6 = r->port[1];
}

int dns_pollfds(struct dns_resolver *r, struct pollfd *fds, int max)
{
	const int fixed[] = { r->udp[0], r->tcp[0], r->udp[1], r->tcp[1], r->up[0], r->up[1] };
	const struct dns_conn *c;
	int n = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fixed) && n < max; i++)
		if (fixed[i] >= 0)
			fds[n++] = (struct pollfd){ .fd = fixed[i], .events = POLLIN };
	for (c = r->conns; c < r->conns + DNS_MAX_CONNS && n < max; c++)
		if (c->fd >= 0)
			fds[n++] = (struct pollfd){ .fd = c->fd,
						    .events = (c->eof ? 0 : POLLIN) | (c->out_len ? POLLOUT : 0) };
	return n;
}

void dns_handle(struct dns_resolver *r, const struct pollfd *fds, int n)
{
	int i, fd;

	for (i = 0; i < n; i++) {
		fd = fds[i].fd;
		if (!fds[i].revents || fd < 0 || fd == r->tcp[0] || fd == r->tcp[1])
			continue;
		if (fd == r->udp[0] || fd == r->udp[1])
			udp_read(r, fd);
		else if (fd == r->up[0] || fd == r->up[1])
			upstream_read(r, fd);
		else
			conn_ready(r, fd, fds[i].revents);
	}
	/* Accept last: a new connection may reuse the number of one closed above. */
	for (i = 0; i < n; i++)
		if (fds[i].revents && fds[i].fd >= 0 && (fds[i].fd == r->tcp[0] || fds[i].fd == r->tcp[1]))
			tcp_accept(r, fds[i].fd);
	expire_queries(r);
}

int dns_next_timeout(const struct dns_resolver *r)
{
	__u64 now = mono_now(), next = UINT64_MAX, t;
	const struct dns_conn *c;
	unsigned i, left;

	/* Up to the last query waiting: each page of q[] never used is a page fault to read. */
	for (i = 0, left = r->nq; left && i < DNS_MAX_PENDING; i++) {
		if (!r->q[i].used)
			continue;
		left--;
		if (r->q[i].retry_at < next)
			next = r->q[i].retry_at;
	}
	for (c = r->conns; c < r->conns + DNS_MAX_CONNS; c++) {
		t = c->active + DNS_TCP_IDLE_MS * NS_PER_MS;
		if (c->fd >= 0 && !c->pending && t < next)
			next = t;
	}
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)((next - now + NS_PER_MS - 1) / NS_PER_MS);
}

void dns_tick(struct dns_resolver *r)
{
	expire_addrs(r);
	expire_queries(r);
	if (r->rate_suppressed && boot_now(r) >= r->rate_quiet_until)
		rate_summary(r);
}

int dns_counters(const struct dns_resolver *r, struct dns_counters *out)
{
	if (!r || !out)
		return -EINVAL;
	*out = r->counters;
	return 0;
}

/* Also takes the resolver's addresses out of dns_allow: the sandbox is going away. */
void dns_close(struct dns_resolver *r)
{
	struct dns_addr *a, *next;
	unsigned i, left;

	if (!r)
		return;
	for (i = 0; i < 2; i++) {
		if (r->udp[i] >= 0)
			close(r->udp[i]);
		if (r->tcp[i] >= 0)
			close(r->tcp[i]);
		if (r->up[i] >= 0)
			close(r->up[i]);
	}
	for (i = 0; i < DNS_MAX_CONNS; i++) {
		if (r->conns[i].fd >= 0)
			close(r->conns[i].fd);
		free(r->conns[i].in);
		free(r->conns[i].out);
	}
	/*
	 * Only as far as there is something: q[] and addrs[] are 250 KB a run
	 * never touched when no query was forwarded, and reading each page of
	 * them costs a fault. A query's sent is freed with it (query_release).
	 */
	for (i = 0, left = r->nq; left && i < DNS_MAX_PENDING; i++)
		if (r->q[i].used) {
			free(r->q[i].sent);
			left--;
		}
	for (i = 0, left = r->naddrs; left && i < ADDR_BUCKETS; i++)
		for (a = r->addrs[i]; a; a = next, left--) {
			next = a->next;
			if (r->ops)
				r->ops->remove(r->ctx, &a->key);
			free(a);
		}
	for (i = 0; i < r->nnames; i++)
		free(r->names[i]);
	free(r->names);
	free(r->name_idx);
	free(r);
}

json_t *dns_counters_json(const struct dns_resolver *r)
{
	struct dns_counters c;

	if (dns_counters(r, &c))
		return json_null();
	return dns_counts_json(&c);
}

/* The counters by name, in one table for both directions. */
#define DNS_COUNTS(X)	X(queries) X(forwarded) X(refused_names) X(refused_types) X(rate_limited) \
			X(malformed) X(failed) X(allowed_names)

json_t *dns_counts_json(const struct dns_counters *c)
{
	json_t *o = json_object();

#define SET(k)	json_object_set_new(o, #k, json_integer((json_int_t)c->k));
	if (o) {
		DNS_COUNTS(SET)
	}
#undef SET
	return o;
}

int dns_counts_parse(const json_t *j, struct dns_counters *c)
{
	memset(c, 0, sizeof(*c));
	if (!json_is_object(j))
		return -EINVAL;
#define GET(k)	c->k = (__u64)json_integer_value(json_object_get(j, #k));
	DNS_COUNTS(GET)
#undef GET
	return 0;
}
