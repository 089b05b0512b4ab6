// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The built-in resolver on real loopback sockets, without a kernel: the
 * dns_ops callbacks stand in for the BPF maps (a small fake dns_allow that
 * records every write), and a UDP socket of the test plays the upstream
 * server, answering with records built here and keeping the exact bytes
 * of every query it receives: only the canonical query may arrive there,
 * whatever the client sent (issue 16).
 */
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <resolv.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "dns.h"
#include "util.h"

#define NS		1000000000ULL
#define T0		(1000 * NS)	/* the fake CLOCK_BOOTTIME */
#define CGID		42
#define MAP_MAX		128
#define EV_MAX		16
#define HELD_MAX	128
#define CHAIN_TEST	15	/* CNAMEs that fill the resolver's chain (CNAME_MAX 16 names) */

/* --- the fake kernel --------------------------------------------------------- */

struct fake {
	__u64 now;
	int update_err;
	const char *allow[8];		/* "name" exactly, or "*.suffix" */
	int nverdict;
	char last_name[NS_MAXDNAME];
	struct { struct sbx_dns_key k; struct sbx_dns_entry e; } map[MAP_MAX];
	int nmap, nupdate, nremove;
	struct sbx_event ev[EV_MAX];
	int nev;
	__u32 client_key;
	int watch_fd;			/* the client: must not have its answer before update() */
	bool answered_early;
	int via_ret;			/* what dns_ops.via returns (via_ops) */
	__u16 via_port;
	int nvia;
};

static int map_find(const struct fake *f, const __u8 addr[16])
{
	int i;

	for (i = 0; i < f->nmap; i++)
		if (f->map[i].k.sandbox_cgid == CGID && !memcmp(f->map[i].k.addr, addr, 16))
			return i;
	return -1;
}

static int fake_update(void *ctx, const struct sbx_dns_key *k, const struct sbx_dns_entry *e)
{
	struct fake *f = ctx;
	struct pollfd p = { .fd = f->watch_fd, .events = POLLIN };
	int i;

	if (f->watch_fd > 0 && poll(&p, 1, 0) > 0)
		f->answered_early = true;
	if (f->update_err)
		return f->update_err;
	assert_int_equal(k->sandbox_cgid, CGID);
	i = map_find(f, k->addr);
	if (i < 0) {
		assert_true(f->nmap < MAP_MAX);
		i = f->nmap++;
	}
	f->map[i].k = *k;
	f->map[i].e = *e;
	f->nupdate++;
	return 0;
}

static int fake_remove(void *ctx, const struct sbx_dns_key *k)
{
	struct fake *f = ctx;
	int i = map_find(f, k->addr);

	f->nremove++;
	if (i < 0)
		return -ENOENT;
	f->map[i] = f->map[--f->nmap];
	return 0;
}

static int fake_client(void *ctx, __u32 key, struct sbx_dns_client *out)
{
	struct fake *f = ctx;

	f->client_key = key;
	memset(out, 0, sizeof(*out));
	out->cgroup_id = 99;
	out->pid = 1234;
	out->tgid = 1230;
	out->ppid = 1;
	out->uid = 1000;
	strcpy(out->comm, "curl");
	return 0;
}

static bool fake_verdict(void *ctx, const char *name, __u32 *rule, __u16 *lo, __u16 *hi)
{
	struct fake *f = ctx;
	size_t i, n = strlen(name), sl;
	const char *a;

	f->nverdict++;
	snprintf(f->last_name, sizeof(f->last_name), "%s", name);
	for (i = 0; i < 8 && f->allow[i]; i++) {
		a = f->allow[i];
		sl = strlen(a + 1);
		if (a[0] == '*' ? n > sl && !strcmp(name + n - sl, a + 1) : !strcmp(name, a)) {
			*rule = SBX_RULE_DOMAIN_BASE + i;
			*lo = 443;
			*hi = 443 + i;
			return true;
		}
	}
	*rule = SBX_RULE_DOMAIN_DEFAULT;
	return false;
}

static void fake_event(void *ctx, const struct sbx_event *ev)
{
	struct fake *f = ctx;

	if (f->nev < EV_MAX)
		f->ev[f->nev] = *ev;
	f->nev++;
}

static __u64 fake_now(void *ctx)
{
	return ((struct fake *)ctx)->now;
}

static int fake_via(void *ctx, __u16 *port4)
{
	struct fake *f = ctx;

	f->nvia++;
	if (f->via_ret > 0)
		*port4 = f->via_port;
	return f->via_ret;
}

static const struct dns_ops fake_ops = {
	.update = fake_update, .remove = fake_remove, .client = fake_client,
	.verdict = fake_verdict, .event = fake_event, .now = fake_now,
};

/* The same, with an enclosing sandbox's resolver to ask (struct fake via_*). */
static const struct dns_ops via_ops = {
	.update = fake_update, .remove = fake_remove, .client = fake_client,
	.verdict = fake_verdict, .event = fake_event, .now = fake_now, .via = fake_via,
};

/* --- the fake upstream ---------------------------------------------------------- */

struct rec {
	const char *owner;
	__u16 type;
	__u32 ttl;
	const char *data;	/* an address, or the CNAME target */
};

enum up_mode { UP_ANSWER, UP_DROP, UP_TC, UP_SPOOF, UP_HOLD, UP_FORMERR, UP_BAD_CNAME };

struct upstream {
	int fd, spoof_fd, tcp_fd;
	__u16 port;
	enum up_mode mode;
	const struct rec *recs;
	int nrec;
	int nq;				/* queries received */
	__u8 q[HELD_MAX][512];		/* ... and kept */
	size_t qlen[HELD_MAX];
	struct sockaddr_in from[HELD_MAX];
	__u8 sent[4096];		/* the last answer sent */
	size_t sent_len;
	__u8 tcp_q[600];		/* the query its TCP side received */
	size_t tcp_qlen;
	bool tcp_tc;			/* its TCP answer is truncated too */
};

static void put16(__u8 *p, unsigned v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static __u16 get16(const __u8 *p)
{
	return p[0] << 8 | p[1];
}

static size_t question_end(const __u8 *m, size_t len)
{
	int n = dn_skipname(m + NS_HFIXEDSZ, m + len);

	assert_true(n > 0);
	return NS_HFIXEDSZ + n + NS_QFIXEDSZ;
}

/* An answer to @q: its header and question, then @recs (uncompressed names). */
static size_t build_answer(const __u8 *q, size_t qlen, const struct rec *recs, int n, bool tc, __u8 *out)
{
	size_t off = question_end(q, qlen);
	int i, c;

	memcpy(out, q, off);
	out[2] |= 0x80 | (tc ? 0x02 : 0);
	out[3] = 0x80;
	put16(out + 6, tc ? 0 : n);
	put16(out + 8, 0);
	put16(out + 10, 0);
	for (i = 0; i < n && !tc; i++) {
		c = dn_comp(recs[i].owner, out + off, 512, NULL, NULL);
		assert_true(c > 0);
		off += c;
		put16(out + off, recs[i].type);
		put16(out + off + 2, ns_c_in);
		out[off + 4] = recs[i].ttl >> 24;
		out[off + 5] = recs[i].ttl >> 16;
		out[off + 6] = recs[i].ttl >> 8;
		out[off + 7] = recs[i].ttl;
		off += 10;
		if (recs[i].type == ns_t_a)
			c = inet_pton(AF_INET, recs[i].data, out + off) == 1 ? 4 : -1;
		else if (recs[i].type == ns_t_aaaa)
			c = inet_pton(AF_INET6, recs[i].data, out + off) == 1 ? 16 : -1;
		else
			c = dn_comp(recs[i].data, out + off, 512, NULL, NULL);
		assert_true(c > 0);
		put16(out + off - 2, c);
		off += c;
	}
	return off;
}

static int bound_socket(int type, __u16 port, __u16 *out)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (void *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (void *)&sin, &len), 0);
	if (out)
		*out = ntohs(sin.sin_port);
	return fd;
}

static void up_reply(struct upstream *up, int i, const struct rec *recs, int n, bool tc)
{
	up->sent_len = build_answer(up->q[i], up->qlen[i], recs, n, tc, up->sent);
	assert_int_equal(sendto(up->fd, up->sent, up->sent_len, 0, (void *)&up->from[i], sizeof(up->from[i])),
			 (ssize_t)up->sent_len);
}

/* One query reached the upstream: answer as the test's mode says. */
static void up_serve(struct upstream *up)
{
	static const struct rec evil = { "", ns_t_a, 300, "6.6.6.6" };
	struct rec spoofed = evil;
	socklen_t len = sizeof(up->from[0]);
	int i = up->nq < HELD_MAX ? up->nq : HELD_MAX - 1;
	ssize_t n;

	n = recvfrom(up->fd, up->q[i], sizeof(up->q[i]), 0, (void *)&up->from[i], &len);
	assert_true(n >= NS_HFIXEDSZ);
	up->qlen[i] = n;
	up->nq++;
	switch (up->mode) {
	case UP_SPOOF:
		/* Right id and question, wrong source: must be ignored. */
		spoofed.owner = up->recs[0].owner;
		up->sent_len = build_answer(up->q[i], n, &spoofed, 1, false, up->sent);
		sendto(up->spoof_fd, up->sent, up->sent_len, 0, (void *)&up->from[i], len);
		/* fall through */
	case UP_ANSWER:
		up_reply(up, i, up->recs, up->nrec, false);
		break;
	case UP_TC:
		up_reply(up, i, NULL, 0, true);
		break;
	case UP_FORMERR:
		/* The header alone: no question, rcode FORMERR (what some servers say to an OPT they dislike). */
		memcpy(up->sent, up->q[i], NS_HFIXEDSZ);
		up->sent[2] |= 0x80;
		up->sent[3] = ns_r_formerr;
		memset(up->sent + 4, 0, 8);
		up->sent_len = NS_HFIXEDSZ;
		sendto(up->fd, up->sent, up->sent_len, 0, (void *)&up->from[i], len);
		break;
	case UP_BAD_CNAME:
		/* @recs, then one more CNAME of the asked name whose target is a pointer to itself. */
		n = build_answer(up->q[i], up->qlen[i], up->recs, up->nrec, false, up->sent);
		put16(up->sent + n, 0xc000 | NS_HFIXEDSZ);
		put16(up->sent + n + 2, ns_t_cname);
		put16(up->sent + n + 4, ns_c_in);
		put16(up->sent + n + 6, 0);
		put16(up->sent + n + 8, 60);
		put16(up->sent + n + 10, 2);
		put16(up->sent + n + 12, 0xc000 | (n + 12));
		up->sent_len = n + 14;
		put16(up->sent + 6, up->nrec + 1);
		sendto(up->fd, up->sent, up->sent_len, 0, (void *)&up->from[i], len);
		break;
	case UP_DROP:
	case UP_HOLD:
		break;
	}
}

/* --- the test environment ---------------------------------------------------------- */

struct env {
	struct fake f;
	struct upstream up;
	struct dns_config cfg;
	struct dns_resolver *r;
	char upstream[32];
};

static struct env *env_new(void)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	e->f.now = T0;
	e->up.fd = bound_socket(SOCK_DGRAM, 0, &e->up.port);
	e->up.spoof_fd = bound_socket(SOCK_DGRAM, 0, NULL);
	e->up.tcp_fd = -1;
	snprintf(e->upstream, sizeof(e->upstream), "127.0.0.1:%u", e->up.port);
	e->cfg = (struct dns_config){ .sandbox_cgid = CGID, .upstream = e->upstream,
				      .ops = &fake_ops, .ctx = &e->f };
	return e;
}

static void env_start(struct env *e)
{
	assert_int_equal(dns_open(&e->r, &e->cfg), 0);
}

static void env_free(struct env *e)
{
	dns_close(e->r);
	close(e->up.fd);
	close(e->up.spoof_fd);
	if (e->up.tcp_fd >= 0)
		close(e->up.tcp_fd);
	free(e);
}

static __u64 mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/* Run the resolver and the upstream until @fd is readable (true), @nq queries reached the upstream, or @ms pass. */
static bool pump_until(struct env *e, int fd, int nq, int ms)
{
	struct pollfd p[DNS_POLLFDS_MAX + 2];
	__u64 end = mono_ms() + ms;
	int n;

	while (mono_ms() < end) {
		n = dns_pollfds(e->r, p, DNS_POLLFDS_MAX);
		p[n++] = (struct pollfd){ .fd = e->up.fd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		assert_true(poll(p, n, 10) >= 0);
		dns_handle(e->r, p, n - 2);
		if (p[n - 2].revents)
			up_serve(&e->up);
		if (fd >= 0 && (p[n - 1].revents & POLLIN))
			return true;
		if (nq && e->up.nq >= nq)
			return true;
	}
	return false;
}

static bool pump(struct env *e, int fd, int ms)
{
	return pump_until(e, fd, 0, ms);
}

static size_t mkquery(const char *name, int type, __u8 *buf)
{
	int n = res_mkquery(ns_o_query, name, ns_c_in, type, NULL, 0, NULL, buf, 512);

	assert_true(n > NS_HFIXEDSZ);
	return n;
}

static int client(int family, int type, __u16 port)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	if (family == AF_INET6)
		assert_int_equal(connect(fd, (void *)&s6, sizeof(s6)), 0);
	else
		assert_int_equal(connect(fd, (void *)&s4, sizeof(s4)), 0);
	return fd;
}

static __u16 local_port(int fd)
{
	struct sockaddr_in6 s;
	socklen_t len = sizeof(s);

	assert_int_equal(getsockname(fd, (void *)&s, &len), 0);
	return ntohs(s.sin6_port);	/* same place in sockaddr_in */
}

/* Ask over UDP (IPv4); the answer's length. */
static size_t ask(struct env *e, const char *name, int type, __u8 *q, size_t *qlen, __u8 *ans)
{
	__u16 port4, port6;
	ssize_t n;
	int fd;

	dns_ports(e->r, &port4, &port6);
	fd = client(AF_INET, SOCK_DGRAM, port4);
	e->f.watch_fd = fd;
	*qlen = mkquery(name, type, q);
	assert_int_equal(send(fd, q, *qlen, 0), (ssize_t)*qlen);
	assert_true(pump(e, fd, 3000));
	n = recv(fd, ans, 4096, 0);
	assert_true(n >= NS_HFIXEDSZ);
	assert_int_equal(e->f.client_key, IPPROTO_UDP << 16 | local_port(fd));
	e->f.watch_fd = 0;
	close(fd);
	return n;
}

static const struct sbx_dns_slot *slot_of(const struct fake *f, const char *addr, __u32 domain_id)
{
	__u8 a[16] = { [10] = 0xff, [11] = 0xff };
	int i, j;

	if (strchr(addr, ':'))
		assert_int_equal(inet_pton(AF_INET6, addr, a), 1);
	else
		assert_int_equal(inet_pton(AF_INET, addr, a + 12), 1);
	i = map_find(f, a);
	if (i < 0)
		return NULL;
	for (j = 0; j < SBX_DNS_SLOTS; j++)
		if (f->map[i].e.s[j].expires_ns && f->map[i].e.s[j].domain_id == domain_id)
			return &f->map[i].e.s[j];
	return NULL;
}

static __u32 domain_id(const struct dns_resolver *r, const char *name)
{
	const char *s;
	__u32 id;

	for (id = 1; (s = dns_domain_name(r, id)); id++)
		if (!strcmp(s, name))
			return id;
	return 0;
}

/* --- what the resolver sends and answers ------------------------------------------- */

static const __u8 our_opt[11] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 };	/* 1232, no DO, no options */

/* @name (dots between labels, no escapes) in wire form, its case kept, by hand. */
static size_t put_name(const char *name, __u8 *out)
{
	size_t n = 0, l;

	while (*name) {
		l = strcspn(name, ".");
		out[n++] = l;
		memcpy(out + n, name, l);
		n += l;
		name += l + (name[l] == '.');
	}
	out[n++] = 0;
	return n;
}

/* A query: header @id, @flags, one question; then what the test appends. */
static size_t raw_query(__u16 id, __u16 flags, const char *name, __u16 type, __u16 class, __u8 *out)
{
	size_t n;

	memset(out, 0, NS_HFIXEDSZ);
	put16(out, id);
	put16(out + 2, flags);
	put16(out + 4, 1);
	n = NS_HFIXEDSZ + put_name(name, out + NS_HFIXEDSZ);
	put16(out + n, type);
	put16(out + n + 2, class);
	return n + 4;
}

/* Append an additional record (@owner "" for the root) to the message @m of @n bytes; the new length. */
static size_t add_record(__u8 *m, size_t n, const char *owner, __u16 type, __u16 class, __u32 ttl,
			 const void *rdata, size_t rdlen)
{
	n += put_name(owner, m + n);
	put16(m + n, type);
	put16(m + n + 2, class);
	put16(m + n + 4, ttl >> 16);
	put16(m + n + 6, ttl);
	put16(m + n + 8, rdlen);
	memcpy(m + n + 10, rdata, rdlen);
	put16(m + 10, get16(m + 10) + 1);
	return n + 10 + rdlen;
}

/*
 * The query sbx-bpf must send upstream for @name (lower case) and @type,
 * built here by hand, with the id the upstream saw: RD alone, class IN,
 * our OPT record.
 */
static size_t canonical(const char *name, __u16 type, __u16 id, __u8 *out)
{
	size_t n = raw_query(id, 0x0100, name, type, ns_c_in, out);

	put16(out + 10, 1);
	memcpy(out + n, our_opt, sizeof(our_opt));
	return n + sizeof(our_opt);
}

/* @got (@len bytes, as the upstream received it) is, byte for byte, the canonical query. */
static void assert_canonical(const __u8 *got, size_t len, const char *name, __u16 type)
{
	__u8 want[512];
	size_t n = canonical(name, type, get16(got), want);

	assert_int_equal(len, n);
	assert_memory_equal(got, want, n);
}

struct rr_got {
	char owner[NS_MAXDNAME];
	__u16 type, class;
	__u32 ttl;
	char data[NS_MAXDNAME];	/* an address, or the CNAME target */
};

struct reply_got {
	__u16 id, flags, an, ar;
	__u8 qname[256];
	size_t qname_len;
	__u16 qtype, qclass;
	int nrr;
	struct rr_got rr[64];	/* answer records, then others, OPT aside */
	bool opt;
	__u16 opt_udp, opt_rdlen;
	__u32 opt_ttl;
};

static void rdata_text(const __u8 *m, size_t len, size_t off, struct rr_got *rr, __u16 rdlen)
{
	if (rr->type == ns_t_a && rdlen == 4)
		inet_ntop(AF_INET, m + off, rr->data, sizeof(rr->data));
	else if (rr->type == ns_t_aaaa && rdlen == 16)
		inet_ntop(AF_INET6, m + off, rr->data, sizeof(rr->data));
	else if (rr->type == ns_t_cname)
		assert_int_equal(dn_expand(m, m + len, m + off, rr->data, sizeof(rr->data)), rdlen);
	else
		fail_msg("record type %u in an answer", rr->type);
}

/* Read a whole answer; every byte must belong to it and every name must expand. */
static void parse_reply(const __u8 *m, size_t len, struct reply_got *g)
{
	size_t off = NS_HFIXEDSZ, i, total;
	struct rr_got rr;
	__u16 rdlen;
	int n;

	memset(g, 0, sizeof(*g));
	assert_true(len >= NS_HFIXEDSZ);
	g->id = get16(m);
	g->flags = get16(m + 2);
	g->an = get16(m + 6);
	g->ar = get16(m + 10);
	total = g->an + get16(m + 8) + g->ar;
	if (get16(m + 4)) {
		assert_int_equal(get16(m + 4), 1);
		n = dn_skipname(m + off, m + len);
		assert_true(n > 0);
		memcpy(g->qname, m + off, n);
		g->qname_len = n;
		g->qtype = get16(m + off + n);
		g->qclass = get16(m + off + n + 2);
		off += n + 4;
	}
	for (i = 0; i < total; i++) {
		n = dn_expand(m, m + len, m + off, rr.owner, sizeof(rr.owner));
		assert_true(n > 0 && off + n + 10 <= len);
		off += n;
		rr.type = get16(m + off);
		rr.class = get16(m + off + 2);
		rr.ttl = (__u32)get16(m + off + 4) << 16 | get16(m + off + 6);
		rdlen = get16(m + off + 8);
		off += 10;
		assert_true(off + rdlen <= len);
		if (rr.type == ns_t_opt) {
			assert_string_equal(rr.owner, "");
			assert_false(g->opt);
			g->opt = true;
			g->opt_udp = rr.class;
			g->opt_ttl = rr.ttl;
			g->opt_rdlen = rdlen;
		} else {
			rdata_text(m, len, off, &rr, rdlen);
			assert_true(g->nrr < (int)ARRAY_SIZE(g->rr));
			g->rr[g->nrr++] = rr;
		}
		off += rdlen;
	}
	assert_int_equal(off, len);
}

/* The answer has the record @owner @type @data with @ttl (any case for the owner). */
static void assert_rr(const struct reply_got *g, const char *owner, __u16 type, const char *data, __u32 ttl)
{
	int i;

	for (i = 0; i < g->nrr; i++)
		if (!strcasecmp(g->rr[i].owner, owner) && g->rr[i].type == type && !strcmp(g->rr[i].data, data)) {
			assert_int_equal(g->rr[i].class, ns_c_in);
			assert_int_equal(g->rr[i].ttl, ttl);
			return;
		}
	fail_msg("no %s %u %s in the answer", owner, type, data);
}

/* The answer echoes the client's question @q (bytes from the name to QCLASS, case kept). */
static void assert_question(const struct reply_got *g, const __u8 *q, size_t qlen)
{
	size_t end = question_end(q, qlen);

	assert_int_equal(g->qname_len, end - 4 - NS_HFIXEDSZ);
	assert_memory_equal(g->qname, q + NS_HFIXEDSZ, g->qname_len);
	assert_int_equal(g->qtype, get16(q + end - 4));
	assert_int_equal(g->qclass, get16(q + end - 2));
}

/* Send @q (@qlen bytes) on the UDP socket @fd and read its answer: the answer's length. */
static size_t exchange(struct env *e, int fd, const __u8 *q, size_t qlen, __u8 *ans, size_t cap)
{
	ssize_t n;

	assert_int_equal(send(fd, q, qlen, 0), (ssize_t)qlen);
	assert_true(pump(e, fd, 3000));
	n = recv(fd, ans, cap, 0);
	assert_true(n >= NS_HFIXEDSZ);
	return n;
}

static int udp_client(struct env *e)
{
	__u16 port4, port6;

	dns_ports(e->r, &port4, &port6);
	return client(AF_INET, SOCK_DGRAM, port4);
}

static struct dns_counters counters(const struct env *e)
{
	struct dns_counters c;

	assert_int_equal(dns_counters(e->r, &c), 0);
	return c;
}

/* --- tests ------------------------------------------------------------------------- */

static void test_allowed(void **state)
{
	static const struct rec recs[] = {
		{ "ExAmple.com", ns_t_a, 300, "93.184.216.34" },
		{ "example.com", ns_t_aaaa, 100, "2606:2800:220:1::1" },
	};
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	const struct sbx_dns_slot *s;
	struct reply_got g;
	size_t qlen, n;
	__u32 id;

	(void)state;
	e->f.allow[0] = "other.org";
	e->f.allow[1] = "example.com";
	e->up.recs = recs;
	e->up.nrec = 2;
	env_start(e);
	n = ask(e, "ExAmple.COM", ns_t_a, q, &qlen, ans);

	/* Asked once, in canonical form; the answer carries the client's id and question and both records. */
	assert_int_equal(e->up.nq, 1);
	assert_canonical(e->up.q[0], e->up.qlen[0], "example.com", ns_t_a);
	parse_reply(ans, n, &g);
	assert_int_equal(g.id, get16(q));
	assert_int_equal(g.flags, 0x8000 | 0x0100 | 0x0080);	/* QR, RD echoed, RA, NOERROR */
	assert_question(&g, q, qlen);
	assert_int_equal(g.an, 2);
	assert_rr(&g, "example.com", ns_t_a, "93.184.216.34", 300);
	assert_rr(&g, "example.com", ns_t_aaaa, "2606:2800:220:1::1", 100);
	assert_false(g.opt);				/* the client sent no OPT record */
	assert_string_equal(e->f.last_name, "example.com");

	/* Both addresses installed, before the client could read the answer. */
	id = domain_id(e->r, "example.com");
	assert_int_not_equal(id, 0);
	assert_int_equal(e->f.nmap, 2);
	assert_false(e->f.answered_early);
	s = slot_of(&e->f, "93.184.216.34", id);
	assert_non_null(s);
	assert_int_equal(s->expires_ns, T0 + 300 * NS);
	assert_int_equal(s->rule_id, SBX_RULE_DOMAIN_BASE + 1);
	assert_int_equal(s->lo, 443);
	assert_int_equal(s->hi, 444);
	s = slot_of(&e->f, "2606:2800:220:1::1", id);
	assert_non_null(s);
	assert_int_equal(s->expires_ns, T0 + 100 * NS);
	assert_int_equal(e->f.nev, 0);
	env_free(e);
}

static void test_ttl_clamp(void **state)
{
	static const struct rec recs[] = {
		{ "a.example", ns_t_a, 0, "10.0.0.1" },
		{ "a.example", ns_t_a, 86400, "10.0.0.2" },
		{ "a.example", ns_t_a, 30, "10.0.0.3" },
	};
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	__u32 id;
	size_t qlen;

	(void)state;
	e->f.allow[0] = "a.example";
	e->cfg.min_ttl = 5;
	e->cfg.max_ttl = 60;
	e->up.recs = recs;
	e->up.nrec = 3;
	env_start(e);
	ask(e, "a.example", ns_t_a, q, &qlen, ans);
	id = domain_id(e->r, "a.example");
	assert_int_equal(slot_of(&e->f, "10.0.0.1", id)->expires_ns, T0 + 5 * NS);
	assert_int_equal(slot_of(&e->f, "10.0.0.2", id)->expires_ns, T0 + 60 * NS);
	assert_int_equal(slot_of(&e->f, "10.0.0.3", id)->expires_ns, T0 + 30 * NS);
	env_free(e);
}

static void test_cname_chain(void **state)
{
	/* Out of order, mixed case, and an unrelated record an upstream might slip in. */
	static const struct rec recs[] = {
		{ "e1.CDN.net", ns_t_a, 60, "1.1.1.1" },
		{ "evil.com", ns_t_a, 60, "6.6.6.6" },
		{ "edge.cdn.net", ns_t_cname, 60, "e1.cdn.net" },
		{ "www.example.com", ns_t_cname, 60, "Edge.cdn.net" },
		{ "e1.cdn.net", ns_t_aaaa, 60, "2001:db8::1" },
		{ "other.cdn.net", ns_t_cname, 60, "evil.com" },
	};
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	size_t qlen, n;
	__u32 id;

	(void)state;
	e->f.allow[0] = "*.example.com";
	e->up.recs = recs;
	e->up.nrec = ARRAY_SIZE(recs);
	env_start(e);
	n = ask(e, "www.example.com", ns_t_a, q, &qlen, ans);
	id = domain_id(e->r, "www.example.com");
	assert_int_not_equal(id, 0);
	assert_non_null(slot_of(&e->f, "1.1.1.1", id));
	assert_non_null(slot_of(&e->f, "2001:db8::1", id));
	assert_null(slot_of(&e->f, "6.6.6.6", id));
	assert_int_equal(e->f.nmap, 2);
	/* The client gets the chain only: not the records an upstream slipped in. */
	assert_int_equal(get16(ans + 6), 4);
	assert_null(memmem(ans, n, "\x06\x06\x06\x06", 4));
	assert_null(memmem(ans, n, "\x05other", 6));
	env_free(e);
}

static void check_event(const struct sbx_event *ev, const char *name, __u32 rule, __u32 verdict, __u32 domain)
{
	assert_int_equal(ev->op, SBX_OP_DNS);
	assert_int_equal(ev->verdict, verdict);
	assert_int_equal(ev->rule_id, rule);
	assert_int_equal(ev->error, 0);
	assert_string_equal(ev->path, name);
	assert_int_equal(ev->path_len, strlen(name));
	assert_int_equal(ev->domain_id, domain);
	assert_int_equal(ev->sandbox_cgroup_id, CGID);
	assert_int_equal(ev->cgroup_id, 99);
	assert_int_equal(ev->pid, 1234);
	assert_int_equal(ev->tgid, 1230);
	assert_int_equal(ev->uid, 1000);
	assert_string_equal(ev->comm, "curl");
	assert_int_equal(ev->flags, 0);
	assert_true(ev->ts_ns > 0);
}

static void test_denied(void **state)
{
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	size_t qlen, n, qend;

	(void)state;
	e->f.allow[0] = "example.com";
	env_start(e);
	n = ask(e, "Evil.com", ns_t_aaaa, q, &qlen, ans);
	assert_int_equal(e->up.nq, 0);
	assert_int_equal(get16(ans), get16(q));
	assert_int_equal(ans[2], 0x80 | (q[2] & 0x01));		/* QR, RD echoed */
	assert_int_equal(ans[2] & 0x01, 1);
	assert_int_equal(ans[3], 0x80 | ns_r_nxdomain);		/* RA, NXDOMAIN */
	assert_int_equal(get16(ans + 4), 1);
	assert_int_equal(get16(ans + 6), 0);
	qend = question_end(q, qlen);
	assert_int_equal(n, qend);
	assert_memory_equal(ans + NS_HFIXEDSZ, q + NS_HFIXEDSZ, qend - NS_HFIXEDSZ);
	assert_int_equal(e->f.nev, 1);
	check_event(&e->f.ev[0], "evil.com", SBX_RULE_DOMAIN_DEFAULT, SBX_VERDICT_DENY,
		    domain_id(e->r, "evil.com"));
	assert_int_not_equal(e->f.ev[0].domain_id, 0);
	assert_int_equal(e->f.ev[0].protocol, IPPROTO_UDP);
	assert_int_equal(e->f.nmap, 0);
	env_free(e);
}

/* "evil\.example.com" is two labels under com, not a name under example.com. */
static void test_label_with_dot(void **state)
{
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	size_t qlen;

	(void)state;
	e->f.allow[0] = "*.example.com";
	env_start(e);
	ask(e, "evil\\.example.com", ns_t_a, q, &qlen, ans);
	assert_int_equal(q[NS_HFIXEDSZ], 12);			/* one label "evil.example" */
	assert_int_equal(ans[3] & 0x0f, ns_r_nxdomain);
	assert_int_equal(e->f.nverdict, 0);
	assert_int_equal(e->up.nq, 0);
	assert_int_equal(e->f.nev, 1);
	assert_int_equal(e->f.ev[0].rule_id, SBX_RULE_DOMAIN_DEFAULT);
	env_free(e);
}

static void test_audit(void **state)
{
	static const struct rec recs[] = { { "evil.com", ns_t_a, 60, "6.6.6.6" } };
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	struct reply_got g;
	size_t qlen, n;

	(void)state;
	e->cfg.audit = true;
	e->up.recs = recs;
	e->up.nrec = 1;
	env_start(e);
	n = ask(e, "evil.com", ns_t_a, q, &qlen, ans);
	assert_int_equal(e->up.nq, 1);
	assert_canonical(e->up.q[0], e->up.qlen[0], "evil.com", ns_t_a);
	parse_reply(ans, n, &g);
	assert_int_equal(g.nrr, 1);
	assert_rr(&g, "evil.com", ns_t_a, "6.6.6.6", 60);
	assert_int_equal(ans[3] & 0x0f, ns_r_noerror);
	assert_int_equal(e->f.nev, 1);
	check_event(&e->f.ev[0], "evil.com", SBX_RULE_DOMAIN_DEFAULT, SBX_VERDICT_AUDIT,
		    domain_id(e->r, "evil.com"));
	/* Not allowed, so nothing installed: its connections are reported as well. */
	assert_int_equal(e->f.nmap, 0);
	env_free(e);
}

static void test_update_fails(void **state)
{
	static const struct rec recs[] = { { "example.com", ns_t_a, 60, "1.2.3.4" } };
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	size_t qlen, n;

	(void)state;
	e->f.allow[0] = "example.com";
	e->f.update_err = -E2BIG;
	e->up.recs = recs;
	e->up.nrec = 1;
	env_start(e);
	n = ask(e, "example.com", ns_t_a, q, &qlen, ans);
	assert_int_equal(e->up.nq, 1);
	assert_int_equal(get16(ans), get16(q));
	assert_int_equal(ans[3] & 0x0f, ns_r_servfail);
	assert_int_equal(get16(ans + 6), 0);
	assert_int_equal(n, question_end(q, qlen));
	assert_int_equal(e->f.nev, 1);
	check_event(&e->f.ev[0], "example.com", SBX_RULE_DNS_FAILED, SBX_VERDICT_DENY,
		    domain_id(e->r, "example.com"));
	env_free(e);
}

/* Write @len bytes to the stream @fd while the resolver runs (it reads them). */
static void send_pumping(struct env *e, int fd, const __u8 *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_DONTWAIT);
		if (n < 0) {
			assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
			pump(e, -1, 10);
			continue;
		}
		p += n;
		len -= n;
	}
}

/* Send the length-prefixed query @q (@qlen bytes after the prefix) over TCP; the answer's length. */
static size_t ask_tcp_raw(struct env *e, int fd, __u8 *q, size_t qlen, __u8 *ans)
{
	size_t got = 0, want = 2;
	ssize_t n;

	put16(q, qlen);
	send_pumping(e, fd, q, qlen + 2);
	while (got < want) {
		assert_true(pump(e, fd, 5000));
		n = recv(fd, ans + got, 8192 - got, 0);
		assert_true(n > 0);
		got += n;
		if (got >= 2)
			want = 2 + get16(ans);
	}
	assert_int_equal(got, want);
	return want - 2;
}

static size_t ask_tcp(struct env *e, int fd, const char *name, __u8 *q, __u8 *ans)
{
	return ask_tcp_raw(e, fd, q, mkquery(name, ns_t_a, q + 2), ans);
}

static void test_tcp_client(void **state)
{
	static const struct rec recs[] = { { "example.com", ns_t_a, 60, "1.2.3.4" } };
	struct env *e = env_new();
	__u8 q[514], ans[8192];
	struct reply_got g;
	__u16 port4, port6;
	size_t n;
	int fd;

	(void)state;
	e->f.allow[0] = "example.com";
	e->up.recs = recs;
	e->up.nrec = 1;
	env_start(e);
	dns_ports(e->r, &port4, &port6);
	fd = client(AF_INET, SOCK_STREAM, port4);
	n = ask_tcp(e, fd, "example.com", q, ans);
	assert_canonical(e->up.q[0], e->up.qlen[0], "example.com", ns_t_a);
	parse_reply(ans + 2, n, &g);
	assert_int_equal(g.id, get16(q + 2));
	assert_int_equal(g.nrr, 1);
	assert_rr(&g, "example.com", ns_t_a, "1.2.3.4", 60);
	assert_non_null(slot_of(&e->f, "1.2.3.4", domain_id(e->r, "example.com")));
	assert_int_equal(e->f.client_key, IPPROTO_TCP << 16 | local_port(fd));

	/* The same connection serves a second (denied) query, then an event names TCP. */
	n = ask_tcp(e, fd, "evil.com", q, ans);
	assert_int_equal(ans[2 + 3] & 0x0f, ns_r_nxdomain);
	assert_int_equal(e->f.nev, 1);
	assert_int_equal(e->f.ev[0].protocol, IPPROTO_TCP);
	close(fd);
	env_free(e);
}

/* The upstream's TCP side, for the retry of a truncated answer. */
static void *tcp_upstream(void *arg)
{
	static const struct rec big[] = {
		{ "big.example", ns_t_a, 60, "10.1.0.1" },
		{ "big.example", ns_t_a, 60, "10.1.0.2" },
	};
	struct upstream *up = arg;
	struct pollfd p = { .fd = up->tcp_fd, .events = POLLIN };
	__u8 buf[600], out[1024];
	size_t len, n;
	int fd;

	/* Not asked within 5 s: the test fails on the answer instead of hanging here. */
	if (poll(&p, 1, 5000) != 1)
		return NULL;
	fd = accept(up->tcp_fd, NULL, NULL);
	if (fd < 0)
		return NULL;
	if (recv(fd, buf, 2, MSG_WAITALL) == 2) {
		len = get16(buf);
		if (len <= sizeof(buf) && recv(fd, buf, len, MSG_WAITALL) == (ssize_t)len) {
			memcpy(up->tcp_q, buf, len);
			up->tcp_qlen = len;
			n = build_answer(buf, len, big, 2, up->tcp_tc, out + 2);
			put16(out, n);
			send(fd, out, n + 2, 0);
		}
	}
	close(fd);
	return NULL;
}

static void test_truncated(void **state)
{
	struct env *e = env_new();
	__u8 q[514], ans[8192];
	__u16 port4, port6;
	pthread_t t;
	size_t qlen, n;
	__u32 id;
	int fd;

	(void)state;
	e->f.allow[0] = "big.example";
	e->up.mode = UP_TC;
	e->up.tcp_fd = bound_socket(SOCK_STREAM, e->up.port, NULL);
	assert_int_equal(listen(e->up.tcp_fd, 4), 0);
	env_start(e);

	/* A UDP client gets a truncated answer (its question, no records), and nothing is installed. */
	n = ask(e, "big.example", ns_t_a, q, &qlen, ans);
	assert_int_equal(ans[2] & 0x02, 0x02);
	assert_int_equal(n, qlen);
	assert_int_equal(get16(ans + 6), 0);
	assert_memory_equal(ans + NS_HFIXEDSZ, q + NS_HFIXEDSZ, qlen - NS_HFIXEDSZ);
	assert_int_equal(e->f.nmap, 0);

	/* For a TCP client the resolver asks the upstream again over TCP. */
	assert_int_equal(pthread_create(&t, NULL, tcp_upstream, &e->up), 0);
	dns_ports(e->r, &port4, &port6);
	fd = client(AF_INET, SOCK_STREAM, port4);
	n = ask_tcp(e, fd, "big.example", q, ans);
	pthread_join(t, NULL);
	/* Over TCP too, the upstream gets the canonical query and nothing else. */
	assert_canonical(e->up.tcp_q, e->up.tcp_qlen, "big.example", ns_t_a);
	assert_int_equal(ans[2 + 2] & 0x02, 0);
	assert_int_equal(get16(ans + 2 + 6), 2);
	assert_int_equal(get16(ans + 2), get16(q + 2));
	id = domain_id(e->r, "big.example");
	assert_non_null(slot_of(&e->f, "10.1.0.1", id));
	assert_non_null(slot_of(&e->f, "10.1.0.2", id));
	close(fd);
	env_free(e);
}

/* The upstream's TCP answer is truncated as well: a TCP client gets SERVFAIL, nothing is installed. */
static void test_truncated_twice(void **state)
{
	struct env *e = env_new();
	__u8 q[514], ans[8192];
	__u16 port4, port6;
	pthread_t t;
	int fd;

	(void)state;
	e->f.allow[0] = "big.example";
	e->up.mode = UP_TC;
	e->up.tcp_tc = true;
	e->up.tcp_fd = bound_socket(SOCK_STREAM, e->up.port, NULL);
	assert_int_equal(listen(e->up.tcp_fd, 4), 0);
	env_start(e);
	assert_int_equal(pthread_create(&t, NULL, tcp_upstream, &e->up), 0);
	dns_ports(e->r, &port4, &port6);
	fd = client(AF_INET, SOCK_STREAM, port4);
	ask_tcp(e, fd, "big.example", q, ans);
	pthread_join(t, NULL);
	assert_int_equal(ans[2 + 3] & 0x0f, ns_r_servfail);
	assert_int_equal(get16(ans + 2 + 6), 0);
	assert_int_equal(e->f.nmap, 0);
	close(fd);
	env_free(e);
}

/* An error answer without the question (FORMERR): SERVFAIL at once, not at the timeout. */
static void test_formerr_no_question(void **state)
{
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	__u64 start;
	size_t qlen;

	(void)state;
	e->f.allow[0] = "picky.example";
	e->up.mode = UP_FORMERR;
	e->cfg.timeout_ms = 3000;
	env_start(e);
	start = mono_ms();
	ask(e, "picky.example", ns_t_a, q, &qlen, ans);
	assert_true(mono_ms() - start < 1000);
	assert_int_equal(e->up.nq, 1);
	assert_int_equal(get16(ans), get16(q));
	assert_int_equal(ans[3] & 0x0f, ns_r_servfail);
	assert_int_equal(e->f.nmap, 0);
	assert_int_equal(dns_next_timeout(e->r), -1);
	env_free(e);
}

/*
 * An answer that cannot be composed for the client (a CNAME past the
 * chain's limit with a broken target) opens none of its addresses,
 * though they alone would have been fine.
 */
static void test_uncomposable_installs_nothing(void **state)
{
	static char names[CHAIN_TEST][32];
	static struct rec recs[CHAIN_TEST + 1];
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	size_t qlen;
	int i;

	(void)state;
	recs[0] = (struct rec){ "deep.example", ns_t_a, 60, "10.7.0.1" };
	for (i = 0; i < CHAIN_TEST; i++) {
		snprintf(names[i], sizeof(names[i]), "c%d.deep.example", i + 1);
		recs[i + 1] = (struct rec){ i ? names[i - 1] : "deep.example", ns_t_cname, 60, names[i] };
	}
	e->f.allow[0] = "deep.example";
	e->up.mode = UP_BAD_CNAME;
	e->up.recs = recs;
	e->up.nrec = CHAIN_TEST + 1;
	env_start(e);
	ask(e, "deep.example", ns_t_a, q, &qlen, ans);
	assert_int_equal(ans[3] & 0x0f, ns_r_servfail);
	assert_int_equal(e->f.nmap, 0);
	env_free(e);
}

static void test_timeout(void **state)
{
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	__u64 start;
	size_t qlen;

	(void)state;
	e->f.allow[0] = "slow.example";
	e->up.mode = UP_DROP;
	e->cfg.timeout_ms = 300;
	env_start(e);
	start = mono_ms();
	ask(e, "slow.example", ns_t_a, q, &qlen, ans);
	assert_true(mono_ms() - start >= 290);
	assert_int_equal(e->up.nq, 1);
	assert_int_equal(get16(ans), get16(q));
	assert_int_equal(ans[3] & 0x0f, ns_r_servfail);
	assert_int_equal(dns_next_timeout(e->r), -1);		/* nothing left pending */
	env_free(e);
}

/*
 * Closing takes out every address the resolver installed and frees the
 * queries still waiting upstream (ASan's leak check), though it reads only
 * as far into its tables as they are filled.
 */
static void test_close_takes_everything(void **state)
{
	static const struct rec recs[] = {
		{ "example.com", ns_t_a, 300, "93.184.216.34" },
		{ "example.com", ns_t_aaaa, 100, "2606:2800:220:1::1" },
	};
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	__u16 port4, port6;
	size_t qlen;
	int fd;

	(void)state;
	e->f.allow[0] = "example.com";
	e->f.allow[1] = "slow.example";
	e->up.recs = recs;
	e->up.nrec = 2;
	env_start(e);
	ask(e, "example.com", ns_t_a, q, &qlen, ans);
	assert_int_equal(e->f.nmap, 2);
	assert_int_equal(dns_next_timeout(e->r), -1);		/* nothing pending */

	/* A query the upstream never answers: pending when the resolver closes. */
	e->up.mode = UP_DROP;
	dns_ports(e->r, &port4, &port6);
	fd = client(AF_INET, SOCK_DGRAM, port4);
	qlen = mkquery("slow.example", ns_t_a, q);
	assert_int_equal(send(fd, q, qlen, 0), (ssize_t)qlen);
	assert_true(pump_until(e, -1, 2, 3000));
	assert_true(dns_next_timeout(e->r) >= 0);		/* found among the pending */

	dns_close(e->r);
	e->r = NULL;
	assert_int_equal(e->f.nmap, 0);
	assert_int_equal(e->f.nremove, 2);
	close(fd);
	env_free(e);
}

/* An answer from the wrong source, with the right id and question, is not taken. */
static void test_spoofed_source(void **state)
{
	static const struct rec recs[] = { { "example.com", ns_t_a, 60, "1.2.3.4" } };
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	struct reply_got g;
	size_t qlen, n;

	(void)state;
	e->f.allow[0] = "example.com";
	e->up.mode = UP_SPOOF;
	e->up.recs = recs;
	e->up.nrec = 1;
	env_start(e);
	n = ask(e, "example.com", ns_t_a, q, &qlen, ans);
	parse_reply(ans, n, &g);
	assert_int_equal(g.nrr, 1);
	assert_rr(&g, "example.com", ns_t_a, "1.2.3.4", 60);
	assert_non_null(slot_of(&e->f, "1.2.3.4", domain_id(e->r, "example.com")));
	assert_null(slot_of(&e->f, "6.6.6.6", domain_id(e->r, "example.com")));
	assert_int_equal(e->f.nmap, 1);
	env_free(e);
}

#define KEEP ((__u64)DNS_KEEP_EXPIRED_S * NS)

static void test_expiry(void **state)
{
	static const struct rec recs[] = {
		{ "a.example", ns_t_a, 10, "10.0.0.1" },
		{ "a.example", ns_t_a, 10, "10.0.0.2" },
	};
	static const struct rec recs_b[] = { { "b.example", ns_t_a, 100, "10.0.0.2" } };
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	size_t qlen;
	__u32 a, b;

	(void)state;
	e->f.allow[0] = "*.example";
	e->up.recs = recs;
	e->up.nrec = 2;
	env_start(e);
	ask(e, "a.example", ns_t_a, q, &qlen, ans);
	e->up.recs = recs_b;
	e->up.nrec = 1;
	ask(e, "b.example", ns_t_a, q, &qlen, ans);
	a = domain_id(e->r, "a.example");
	b = domain_id(e->r, "b.example");
	assert_int_equal(e->f.nmap, 2);

	/* Expired, but kept a while so that denials can still name it. */
	e->f.now = T0 + 9 * NS + KEEP;
	dns_tick(e->r);
	assert_int_equal(e->f.nremove, 0);
	assert_non_null(slot_of(&e->f, "10.0.0.1", a));

	/* 10.0.0.1 had one name: deleted; 10.0.0.2 keeps b's slot only. */
	e->f.now = T0 + 10 * NS + KEEP;
	dns_tick(e->r);
	assert_int_equal(e->f.nremove, 1);
	assert_int_equal(e->f.nmap, 1);
	assert_null(slot_of(&e->f, "10.0.0.1", a));
	assert_null(slot_of(&e->f, "10.0.0.2", a));
	assert_non_null(slot_of(&e->f, "10.0.0.2", b));

	e->f.now = T0 + 100 * NS + KEEP;
	dns_tick(e->r);
	assert_int_equal(e->f.nmap, 0);
	dns_tick(e->r);
	assert_int_equal(e->f.nremove, 2);			/* the shadow went too */
	env_free(e);
}

/* Five names on one address: four slots; the fifth replaces the one expiring first. */
static void test_slots(void **state)
{
	static const char *names[] = { "a.example", "b.example", "c.example", "d.example", "e.example" };
	static const __u32 ttls[] = { 100, 50, 200, 300, 400 };
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	struct rec rec = { NULL, ns_t_a, 0, "10.9.9.9" };
	size_t qlen, i;

	(void)state;
	e->f.allow[0] = "*.example";
	e->up.recs = &rec;
	e->up.nrec = 1;
	env_start(e);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		rec.owner = names[i];
		rec.ttl = ttls[i];
		ask(e, names[i], ns_t_a, q, &qlen, ans);
	}
	assert_int_equal(e->f.nmap, 1);
	assert_non_null(slot_of(&e->f, "10.9.9.9", domain_id(e->r, "a.example")));
	assert_null(slot_of(&e->f, "10.9.9.9", domain_id(e->r, "b.example")));
	for (i = 2; i < ARRAY_SIZE(names); i++)
		assert_int_equal(slot_of(&e->f, "10.9.9.9", domain_id(e->r, names[i]))->expires_ns,
				 T0 + ttls[i] * NS);

	/* The same name again: its slot is refreshed, never shortened. */
	rec.owner = "c.example";
	rec.ttl = 20;
	ask(e, "c.example", ns_t_a, q, &qlen, ans);
	assert_int_equal(slot_of(&e->f, "10.9.9.9", domain_id(e->r, "c.example"))->expires_ns, T0 + 200 * NS);
	rec.ttl = 1000;
	ask(e, "c.example", ns_t_a, q, &qlen, ans);
	assert_int_equal(slot_of(&e->f, "10.9.9.9", domain_id(e->r, "c.example"))->expires_ns, T0 + 1000 * NS);
	assert_non_null(slot_of(&e->f, "10.9.9.9", domain_id(e->r, "a.example")));
	env_free(e);
}

/* Many queries in flight at once, answered in reverse order. */
static void test_concurrent(void **state)
{
	enum { N = 100 };
	struct env *e = env_new();
	int fds[N], i, k;
	__u8 q[512], ans[4096];
	char name[32], addr[32], got[64];
	struct rec rec = { NULL, ns_t_a, 60, NULL };
	__u16 port4, port6, ids[N];
	size_t qlen;
	ssize_t n;

	(void)state;
	e->f.allow[0] = "*.example";
	e->up.mode = UP_HOLD;
	env_start(e);
	dns_ports(e->r, &port4, &port6);
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "n%d.example", i);
		fds[i] = client(AF_INET, SOCK_DGRAM, port4);
		qlen = mkquery(name, ns_t_a, q);
		ids[i] = get16(q);
		assert_int_equal(send(fds[i], q, qlen, 0), (ssize_t)qlen);
	}
	assert_true(pump_until(e, -1, N, 3000));
	for (k = N - 1; k >= 0; k--) {
		assert_true(dn_expand(e->up.q[k], e->up.q[k] + e->up.qlen[k], e->up.q[k] + NS_HFIXEDSZ,
				      got, sizeof(got)) > 0);
		assert_int_equal(sscanf(got, "n%d.example", &i), 1);
		snprintf(addr, sizeof(addr), "10.0.%d.%d", i / 256, i % 256);
		rec.owner = got;
		rec.data = addr;
		up_reply(&e->up, k, &rec, 1, false);
	}
	for (i = 0; i < N; i++) {
		assert_true(pump(e, fds[i], 3000));
		n = recv(fds[i], ans, sizeof(ans), 0);
		assert_true(n > NS_HFIXEDSZ);
		assert_int_equal(get16(ans), ids[i]);
		assert_int_equal(get16(ans + 6), 1);
		assert_int_equal(ans[n - 4], 10);
		assert_int_equal(ans[n - 2] * 256 + ans[n - 1], i);
		close(fds[i]);
	}
	assert_int_equal(e->f.nmap, N);
	env_free(e);
}

static void test_ipv6_client(void **state)
{
	static const struct rec recs[] = { { "example.com", ns_t_aaaa, 60, "2001:db8::5" } };
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	struct reply_got g;
	__u16 port4, port6;
	size_t qlen;
	ssize_t n;
	int fd;

	(void)state;
	e->f.allow[0] = "example.com";
	e->up.recs = recs;
	e->up.nrec = 1;
	env_start(e);
	dns_ports(e->r, &port4, &port6);
	assert_int_not_equal(port4, 0);
	if (!port6) {
		env_free(e);
		skip();		/* no ::1 on this host */
	}
	fd = client(AF_INET6, SOCK_DGRAM, port6);
	qlen = mkquery("example.com", ns_t_aaaa, q);
	assert_int_equal(send(fd, q, qlen, 0), (ssize_t)qlen);
	assert_true(pump(e, fd, 3000));
	n = recv(fd, ans, sizeof(ans), 0);
	assert_true(n > 0);
	parse_reply(ans, n, &g);
	assert_int_equal(g.id, get16(q));
	assert_rr(&g, "example.com", ns_t_aaaa, "2001:db8::5", 60);
	assert_canonical(e->up.q[0], e->up.qlen[0], "example.com", ns_t_aaaa);
	assert_non_null(slot_of(&e->f, "2001:db8::5", domain_id(e->r, "example.com")));
	close(fd);
	env_free(e);
}

/* A message that is not one well-formed query goes nowhere: FORMERR. */
static void query_refused(struct env *e, int fd, const __u8 *q, size_t qlen)
{
	__u8 ans[512];
	ssize_t n;

	assert_int_equal(send(fd, q, qlen, 0), (ssize_t)qlen);
	assert_true(pump(e, fd, 2000));
	n = recv(fd, ans, sizeof(ans), 0);
	assert_true(n >= NS_HFIXEDSZ);
	assert_int_equal(ans[3] & 0x0f, ns_r_formerr);
	assert_int_equal(e->up.nq, 0);
}

static void test_query_shape(void **state)
{
	static const struct rec recs[] = { { "example.com", ns_t_a, 60, "10.0.0.1" } };
	struct env *e = env_new();
	__u8 q[600], ans[512];
	size_t qlen, n;
	int fd;

	(void)state;
	e->f.allow[0] = "example.com";
	e->up.recs = recs;
	e->up.nrec = 1;
	env_start(e);
	fd = udp_client(e);

	qlen = mkquery("example.com", ns_t_a, q);
	memcpy(q + qlen, "smuggled", 8);		/* trailing bytes */
	query_refused(e, fd, q, qlen + 8);
	put16(q + 6, 1);				/* an answer record in a query */
	query_refused(e, fd, q, qlen);
	put16(q + 6, 0);
	put16(q + 8, 1);				/* an authority record */
	query_refused(e, fd, q, qlen);
	put16(q + 8, 0);
	n = add_record(q, qlen, "", ns_t_opt, 4096, 0, "", 0);
	n = add_record(q, n, "", ns_t_opt, 4096, 0, "", 0);
	query_refused(e, fd, q, n);			/* two OPT records (RFC 6891 6.1.1) */
	put16(q + 10, 0);
	n = add_record(q, qlen, "example.com", ns_t_opt, 4096, 0, "", 0);
	query_refused(e, fd, q, n);			/* an OPT record not owned by the root */
	put16(q + 10, 0);
	n = add_record(q, qlen, "", ns_t_opt, 4096, 0, "", 0);
	query_refused(e, fd, q, n - 1);			/* cut inside its record */
	assert_int_equal(counters(e).malformed, 6);

	/* One OPT record is what resolvers send: the canonical query goes up. */
	exchange(e, fd, q, n, ans, sizeof(ans));
	assert_int_equal(e->up.nq, 1);
	assert_canonical(e->up.q[0], e->up.qlen[0], "example.com", ns_t_a);
	close(fd);
	env_free(e);
}

/* Unspecified and link-local answers open nothing; the rest of the answer does. */
static void test_never_opened(void **state)
{
	static const struct rec recs[] = {
		{ "meta.example", ns_t_a, 60, "169.254.169.254" },
		{ "meta.example", ns_t_a, 60, "0.0.0.0" },
		{ "meta.example", ns_t_aaaa, 60, "fe80::1" },
		{ "meta.example", ns_t_aaaa, 60, "::" },
		{ "meta.example", ns_t_a, 60, "10.0.0.9" },
	};
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	size_t qlen;

	(void)state;
	e->f.allow[0] = "*.example";
	e->up.recs = recs;
	e->up.nrec = 5;
	env_start(e);
	ask(e, "meta.example", ns_t_a, q, &qlen, ans);
	assert_int_equal(e->f.nmap, 1);
	assert_non_null(slot_of(&e->f, "10.0.0.9", domain_id(e->r, "meta.example")));
	env_free(e);
}

static void test_malformed(void **state)
{
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	__u16 port4, port6;
	size_t qlen;
	ssize_t n;
	int fd;

	(void)state;
	e->f.allow[0] = "example.com";
	env_start(e);
	dns_ports(e->r, &port4, &port6);
	fd = client(AF_INET, SOCK_DGRAM, port4);
	qlen = mkquery("example.com", ns_t_a, q);
	put16(q + 4, 2);
	assert_int_equal(send(fd, q, qlen, 0), (ssize_t)qlen);
	assert_true(pump(e, fd, 2000));
	n = recv(fd, ans, sizeof(ans), 0);
	assert_int_equal(n, NS_HFIXEDSZ);
	assert_int_equal(ans[3] & 0x0f, ns_r_formerr);
	assert_int_equal(get16(ans), get16(q));

	put16(q + 4, 1);
	q[2] |= 0x80;
	assert_int_equal(send(fd, q, qlen, 0), (ssize_t)qlen);
	assert_false(pump(e, fd, 200));
	assert_int_equal(e->up.nq, 0);
	assert_int_equal(e->f.nverdict, 0);
	close(fd);
	env_free(e);
}

/* --- only the allowed question leaves (issue 16) ------------------------------------ */

static const struct rec example_a[] = { { "example.com", ns_t_a, 60, "10.0.0.1" } };

/* A resolver allowing example.com, whose upstream answers 10.0.0.1; @fd its UDP client. */
static struct env *allowed_env(int *fd)
{
	struct env *e = env_new();

	e->f.allow[0] = "example.com";
	e->up.recs = example_a;
	e->up.nrec = 1;
	env_start(e);
	*fd = udp_client(e);
	return e;
}

static void env_close(struct env *e, int fd)
{
	close(fd);
	env_free(e);
}

/* An EDNS option whose data is a secret, a cookie, DO and a big UDP size: none of it goes upstream. */
static void test_upstream_edns_options(void **state)
{
	static const char secret[] = "AKIA-SECRET-KEY-0123456789";
	__u8 q[600], ans[4096], opt[64];
	struct reply_got g;
	size_t qlen, n, o;
	struct env *e;
	int fd;

	(void)state;
	e = allowed_env(&fd);
	put16(opt, 65001);
	put16(opt + 2, sizeof(secret) - 1);
	memcpy(opt + 4, secret, sizeof(secret) - 1);
	o = 4 + sizeof(secret) - 1;
	put16(opt + o, 10);				/* COOKIE */
	put16(opt + o + 2, 8);
	memcpy(opt + o + 4, "cookie!!", 8);
	o += 12;
	qlen = raw_query(0x1234, 0x0100, "example.com", ns_t_a, ns_c_in, q);
	qlen = add_record(q, qlen, "", ns_t_opt, 4096, 0x8000, opt, o);
	n = exchange(e, fd, q, qlen, ans, sizeof(ans));
	assert_int_equal(e->up.nq, 1);
	assert_canonical(e->up.q[0], e->up.qlen[0], "example.com", ns_t_a);

	/* The client gets our OPT record back: our size, no DO, no options; none of its own. */
	parse_reply(ans, n, &g);
	assert_int_equal(g.id, 0x1234);
	assert_true(g.opt);
	assert_int_equal(g.opt_udp, 1232);
	assert_int_equal(g.opt_ttl, 0);
	assert_int_equal(g.opt_rdlen, 0);
	assert_int_equal(g.nrr, 1);
	assert_rr(&g, "example.com", ns_t_a, "10.0.0.1", 60);
	assert_null(memmem(ans, n, "SECRET", 6));
	env_close(e, fd);
}

/* Every header bit a client may set (AA, TC, RA, Z, AD, CD, rcode, RD off): upstream sees RD alone. */
static void test_upstream_header_flags(void **state)
{
	static const __u16 flags[] = { 0x0400, 0x0200, 0x0080, 0x0040, 0x0020, 0x0010, 0x000f, 0x0000, 0x07ff };
	__u8 q[512], ans[4096];
	struct reply_got g;
	size_t qlen, n, i;
	struct env *e;
	int fd;

	(void)state;
	e = allowed_env(&fd);
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		qlen = raw_query(100 + i, flags[i], "example.com", ns_t_a, ns_c_in, q);
		n = exchange(e, fd, q, qlen, ans, sizeof(ans));
		assert_int_equal(e->up.nq, i + 1);
		assert_canonical(e->up.q[i], e->up.qlen[i], "example.com", ns_t_a);
		/* The client's RD and CD are echoed to it; QR and RA set; nothing else. */
		parse_reply(ans, n, &g);
		assert_int_equal(g.id, 100 + i);
		assert_int_equal(g.flags, 0x8080 | (flags[i] & 0x0110));
		assert_int_equal(g.nrr, 1);
	}
	env_close(e, fd);
}

/* 0x20: the letter case of a name carries bits. Upstream gets lower case; the client its own case back. */
static void test_upstream_case(void **state)
{
	static const char *names[] = { "EXAMPLE.COM", "eXaMpLe.cOm", "example.COM" };
	__u8 q[512], ans[4096];
	struct reply_got g;
	size_t qlen, n, i;
	struct env *e;
	int fd;

	(void)state;
	e = allowed_env(&fd);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		qlen = raw_query(7, 0x0100, names[i], ns_t_a, ns_c_in, q);
		n = exchange(e, fd, q, qlen, ans, sizeof(ans));
		assert_canonical(e->up.q[i], e->up.qlen[i], "example.com", ns_t_a);
		parse_reply(ans, n, &g);
		assert_question(&g, q, qlen);
		assert_int_equal(g.nrr, 1);
		assert_string_equal(g.rr[0].owner, names[i]);	/* compressed to the question */
		assert_string_equal(g.rr[0].data, "10.0.0.1");
	}
	env_close(e, fd);
}

static void check_type_event(const struct sbx_event *ev, const char *name, __u32 arg)
{
	assert_int_equal(ev->op, SBX_OP_DNS);
	assert_int_equal(ev->rule_id, SBX_RULE_DNS_TYPE);
	assert_int_equal(ev->verdict, SBX_VERDICT_DENY);
	assert_int_equal(ev->arg, arg);
	assert_string_equal(ev->path, name);
	assert_int_equal(ev->pid, 1234);
}

/* QCLASS CH (anything but IN) is not served: NOTIMP, nothing upstream, an event naming class and type. */
static void test_upstream_qclass_ch(void **state)
{
	static const __u16 types[] = { ns_t_txt, ns_t_a };
	__u8 q[512], ans[4096];
	struct reply_got g;
	size_t qlen, n, i;
	struct env *e;
	int fd;

	(void)state;
	e = allowed_env(&fd);
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		qlen = raw_query(9, 0x0100, "example.com", types[i], ns_c_chaos, q);
		n = exchange(e, fd, q, qlen, ans, sizeof(ans));
		parse_reply(ans, n, &g);
		assert_int_equal(g.flags & 0x000f, ns_r_notimpl);
		assert_int_equal(g.nrr, 0);
		assert_question(&g, q, qlen);
		check_type_event(&e->f.ev[i], "example.com", (__u32)ns_c_chaos << 16 | types[i]);
	}
	assert_int_equal(e->up.nq, 0);
	assert_int_equal(e->f.nev, 2);
	assert_int_equal(counters(e).refused_types, 2);
	env_close(e, fd);
}

/* Two questions, the second one carrying data: not one question (RFC 9619), so FORMERR, nothing upstream. */
static void test_upstream_two_questions(void **state)
{
	__u8 q[512], ans[4096];
	size_t qlen, n;
	struct env *e;
	int fd;

	(void)state;
	e = allowed_env(&fd);
	qlen = raw_query(11, 0x0100, "example.com", ns_t_a, ns_c_in, q);
	qlen += put_name("c2VjcmV0.example.com", q + qlen);
	put16(q + qlen, ns_t_a);
	put16(q + qlen + 2, ns_c_in);
	qlen += 4;
	put16(q + 4, 2);
	n = exchange(e, fd, q, qlen, ans, sizeof(ans));
	assert_int_equal(n, NS_HFIXEDSZ);
	assert_int_equal(ans[3] & 0x0f, ns_r_formerr);
	assert_int_equal(e->up.nq, 0);
	assert_int_equal(e->f.nverdict, 0);
	assert_int_equal(counters(e).malformed, 1);
	env_close(e, fd);
}

/* Additional records (a TXT full of data beside the OPT) are read and dropped: upstream sees the canonical query. */
static void test_upstream_additional_record(void **state)
{
	__u8 q[512], ans[4096];
	struct reply_got g;
	size_t qlen, n;
	struct env *e;
	int fd;

	(void)state;
	e = allowed_env(&fd);
	qlen = raw_query(13, 0x0100, "example.com", ns_t_a, ns_c_in, q);
	qlen = add_record(q, qlen, "exfil.example.com", ns_t_txt, ns_c_in, 0, "\x06secret", 7);
	qlen = add_record(q, qlen, "", ns_t_opt, 1232, 0, "", 0);
	n = exchange(e, fd, q, qlen, ans, sizeof(ans));
	assert_int_equal(e->up.nq, 1);
	assert_canonical(e->up.q[0], e->up.qlen[0], "example.com", ns_t_a);
	parse_reply(ans, n, &g);
	assert_true(g.opt);
	assert_int_equal(g.ar, 1);
	assert_rr(&g, "example.com", ns_t_a, "10.0.0.1", 60);
	assert_null(memmem(ans, n, "secret", 6));
	env_close(e, fd);
}

/* Over TCP a query can be 64 KiB: one with a 60,000-byte EDNS option still leaves as the canonical query. */
static void test_upstream_tcp(void **state)
{
	static const struct rec recs[] = { { "example.com", ns_t_aaaa, 60, "2001:db8::7" } };
	enum { OPT_DATA = 60000 };
	__u8 *q = malloc(2 + 65535), *opt = malloc(4 + OPT_DATA), ans[8192];
	struct env *e = env_new();
	struct reply_got g;
	__u16 port4, port6;
	size_t qlen, n;
	int fd;

	(void)state;
	assert_non_null(q);
	assert_non_null(opt);
	e->f.allow[0] = "example.com";
	e->up.recs = recs;
	e->up.nrec = 1;
	env_start(e);
	put16(opt, 65001);
	put16(opt + 2, OPT_DATA);
	memset(opt + 4, 'S', OPT_DATA);
	qlen = raw_query(15, 0x0120, "Example.Com", ns_t_aaaa, ns_c_in, q + 2);
	qlen = add_record(q + 2, qlen, "", ns_t_opt, 65535, 0x8000, opt, 4 + OPT_DATA);
	dns_ports(e->r, &port4, &port6);
	fd = client(AF_INET, SOCK_STREAM, port4);
	n = ask_tcp_raw(e, fd, q, qlen, ans);
	assert_int_equal(e->up.nq, 1);
	assert_canonical(e->up.q[0], e->up.qlen[0], "example.com", ns_t_aaaa);
	parse_reply(ans + 2, n, &g);
	assert_int_equal(g.id, 15);
	assert_question(&g, q + 2, qlen);
	assert_true(g.opt);
	assert_int_equal(g.opt_rdlen, 0);
	assert_rr(&g, "example.com", ns_t_aaaa, "2001:db8::7", 60);
	free(q);
	free(opt);
	env_close(e, fd);
}

/* A, AAAA and CNAME go upstream; HTTPS and SVCB get an empty NOERROR, others NOTIMP; each refusal an event. */
static void test_types(void **state)
{
	static const struct { __u16 type; int rcode; bool up; } cases[] = {
		{ ns_t_a, ns_r_noerror, true }, { ns_t_aaaa, ns_r_noerror, true },
		{ ns_t_cname, ns_r_noerror, true }, { 65, ns_r_noerror, false }, { 64, ns_r_noerror, false },
		{ ns_t_txt, ns_r_notimpl, false }, { ns_t_mx, ns_r_notimpl, false },
		{ ns_t_null, ns_r_notimpl, false }, { ns_t_any, ns_r_notimpl, false },
		{ ns_t_srv, ns_r_notimpl, false }, { ns_t_ptr, ns_r_notimpl, false },
		{ ns_t_ns, ns_r_notimpl, false },
	};
	__u8 q[512], ans[4096];
	struct reply_got g;
	int fd, nup = 0, nev = 0;
	size_t qlen, n, i;
	struct env *e;

	(void)state;
	e = allowed_env(&fd);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		qlen = raw_query(i, 0x0100, "example.com", cases[i].type, ns_c_in, q);
		n = exchange(e, fd, q, qlen, ans, sizeof(ans));
		parse_reply(ans, n, &g);
		assert_question(&g, q, qlen);
		assert_int_equal(g.flags & 0x000f, cases[i].rcode);
		if (cases[i].up) {
			assert_int_equal(e->up.nq, ++nup);
			assert_canonical(e->up.q[nup - 1], e->up.qlen[nup - 1], "example.com", cases[i].type);
			continue;
		}
		assert_int_equal(e->up.nq, nup);
		assert_int_equal(g.nrr, 0);
		assert_int_equal(e->f.nev, ++nev);
		check_type_event(&e->f.ev[nev - 1], "example.com", cases[i].type);
		assert_int_equal(e->f.ev[nev - 1].domain_id, domain_id(e->r, "example.com"));
	}
	assert_int_equal(counters(e).refused_types, nev);
	assert_int_equal(counters(e).forwarded, nup);

	/* A denied name is NXDOMAIN whatever the type, and its event names the name's rule. */
	qlen = raw_query(99, 0x0100, "evil.com", ns_t_txt, ns_c_in, q);
	exchange(e, fd, q, qlen, ans, sizeof(ans));
	assert_int_equal(ans[3] & 0x0f, ns_r_nxdomain);
	assert_int_equal(e->f.ev[nev].rule_id, SBX_RULE_DOMAIN_DEFAULT);
	assert_int_equal(counters(e).refused_types, nev);
	env_close(e, fd);
}

/* @n queries for @name on @fd, each answered with @rcode. */
static void ask_n(struct env *e, int fd, const char *name, int n, int rcode)
{
	__u8 q[512], ans[4096];
	struct reply_got g;
	size_t qlen, len;

	while (n--) {
		qlen = raw_query(n, 0x0100, name, ns_t_a, ns_c_in, q);
		len = exchange(e, fd, q, qlen, ans, sizeof(ans));
		parse_reply(ans, len, &g);
		assert_int_equal(g.flags & 0x000f, rcode);
		assert_question(&g, q, qlen);
	}
}

/* Over the rate limit: REFUSED, one event when it starts biting, the rest as a summary a second later. */
static void test_rate_limit(void **state)
{
	struct env *e = env_new();
	struct dns_counters c;
	int fd;

	(void)state;
	e->f.allow[0] = "example.com";
	e->up.recs = example_a;
	e->up.nrec = 1;
	e->cfg.rate = 1;
	e->cfg.burst = 3;
	env_start(e);
	fd = udp_client(e);
	ask_n(e, fd, "example.com", 3, ns_r_noerror);	/* the burst */
	ask_n(e, fd, "example.com", 1, ns_r_refused);
	ask_n(e, fd, "evil.com", 1, ns_r_refused);	/* limited before it is judged */
	assert_int_equal(e->up.nq, 3);
	assert_int_equal(e->f.nev, 1);
	assert_int_equal(e->f.ev[0].rule_id, SBX_RULE_DNS_RATE);
	assert_int_equal(e->f.ev[0].verdict, SBX_VERDICT_DENY);
	assert_string_equal(e->f.ev[0].path, "example.com");
	assert_int_equal(e->f.ev[0].flags, 0);
	assert_int_equal(e->f.ev[0].pid, 1234);
	c = counters(e);
	assert_int_equal(c.queries, 5);
	assert_int_equal(c.rate_limited, 2);
	assert_int_equal(c.forwarded, 3);
	assert_int_equal(c.refused_names, 0);

	/* The second is over: the refusal after the event comes as one summary, once. */
	dns_tick(e->r);
	assert_int_equal(e->f.nev, 1);
	e->f.now = T0 + NS;
	dns_tick(e->r);
	dns_tick(e->r);
	assert_int_equal(e->f.nev, 2);
	assert_int_equal(e->f.ev[1].rule_id, SBX_RULE_DNS_RATE);
	assert_true(e->f.ev[1].flags & SBX_EV_SUMMARY);
	assert_int_equal(e->f.ev[1].repeat, 1);

	/* A second refilled one query; the next refusal starts a new event. */
	ask_n(e, fd, "example.com", 1, ns_r_noerror);
	ask_n(e, fd, "example.com", 1, ns_r_refused);
	assert_int_equal(e->f.nev, 3);
	assert_int_equal(e->f.ev[2].flags, 0);
	assert_int_equal(counters(e).rate_limited, 3);
	env_close(e, fd);
}

/* Each query counts once in queries and once in what became of it. */
static void test_counters(void **state)
{
	static const struct rec c_a[] = { { "c.example.com", ns_t_a, 60, "10.0.0.3" } };
	__u8 q[512], ans[4096];
	struct env *e = env_new();
	struct dns_counters c;
	size_t qlen;
	int fd;

	(void)state;
	e->f.allow[0] = "*.example.com";
	e->up.recs = example_a;
	e->up.nrec = 1;
	env_start(e);
	fd = udp_client(e);
	ask_n(e, fd, "a.example.com", 2, ns_r_noerror);
	ask_n(e, fd, "B.example.com", 1, ns_r_noerror);
	ask_n(e, fd, "evil.com", 1, ns_r_nxdomain);
	qlen = raw_query(1, 0x0100, "a.example.com", ns_t_txt, ns_c_in, q);
	exchange(e, fd, q, qlen, ans, sizeof(ans));
	put16(q + 4, 0);				/* no question */
	exchange(e, fd, q, qlen, ans, sizeof(ans));
	qlen = raw_query(1, 0x1000, "a.example.com", ns_t_a, ns_c_in, q);	/* opcode STATUS */
	exchange(e, fd, q, qlen, ans, sizeof(ans));
	assert_int_equal(ans[3] & 0x0f, ns_r_notimpl);
	q[2] |= 0x80;					/* a response: not even counted */
	assert_int_equal(send(fd, q, qlen, 0), (ssize_t)qlen);
	assert_false(pump(e, fd, 100));
	e->up.recs = c_a;
	e->f.update_err = -ENOMEM;			/* its address cannot be installed */
	ask_n(e, fd, "c.example.com", 1, ns_r_servfail);

	c = counters(e);
	assert_int_equal(c.queries, 8);
	assert_int_equal(c.forwarded, 4);
	assert_int_equal(c.refused_names, 1);
	assert_int_equal(c.refused_types, 1);
	assert_int_equal(c.malformed, 2);
	assert_int_equal(c.failed, 1);
	assert_int_equal(c.rate_limited, 0);
	assert_int_equal(c.allowed_names, 3);		/* a, b, c: a twice is one name */
	assert_int_equal(dns_counters(NULL, &c), -EINVAL);
	assert_int_equal(dns_counters(e->r, NULL), -EINVAL);
	env_close(e, fd);
}

/* In audit mode a name that is not host syntax is still refused: it cannot be sent in canonical form. */
static void test_audit_not_host(void **state)
{
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	size_t qlen;

	(void)state;
	e->cfg.audit = true;
	e->f.allow[0] = "*.example.com";
	env_start(e);
	ask(e, "evil\\.example.com", ns_t_a, q, &qlen, ans);
	assert_int_equal(ans[3] & 0x0f, ns_r_nxdomain);
	assert_int_equal(e->up.nq, 0);
	assert_int_equal(e->f.nev, 1);
	assert_int_equal(e->f.ev[0].verdict, SBX_VERDICT_DENY);
	assert_int_equal(e->f.ev[0].rule_id, SBX_RULE_DOMAIN_DEFAULT);
	env_free(e);
}

/* Count the last record of @m in the authority section instead of the additional one. */
static void to_authority(__u8 *m)
{
	put16(m + 10, get16(m + 10) - 1);
	put16(m + 8, get16(m + 8) + 1);
}

/*
 * The client's answer is composed, never passed on: only the chain's A,
 * AAAA and CNAME records with TTLs clamped, nothing of the upstream's TXT,
 * off-chain, authority or additional records or of its OPT options.
 */
static void test_answer_composed(void **state)
{
	static const struct rec recs[] = {
		{ "www.example.com", ns_t_cname, 86400, "edge.cdn.net" },
		{ "edge.cdn.net", ns_t_a, 30, "10.0.0.5" },
		{ "other.net", ns_t_a, 60, "6.6.6.6" },
		{ "www.example.com", ns_t_txt, 60, "leak.me" },
	};
	static const __u8 upopt[] = { 0xfd, 0xe9, 0, 4, 'l', 'e', 'a', 'k' };
	__u8 q[512], ans[4096], up[4096];
	struct env *e = env_new();
	struct reply_got g;
	size_t qlen, n;
	int fd;

	(void)state;
	e->f.allow[0] = "www.example.com";
	e->cfg.max_ttl = 600;
	e->up.mode = UP_HOLD;
	env_start(e);
	fd = udp_client(e);
	qlen = raw_query(21, 0x0100, "WWW.example.com", ns_t_a, ns_c_in, q);
	qlen = add_record(q, qlen, "", ns_t_opt, 1232, 0, "", 0);
	assert_int_equal(send(fd, q, qlen, 0), (ssize_t)qlen);
	assert_true(pump_until(e, -1, 1, 3000));

	n = build_answer(e->up.q[0], e->up.qlen[0], recs, ARRAY_SIZE(recs), false, up);
	n = add_record(up, n, "example.com", ns_t_ns, ns_c_in, 60, "\x04leak\x00", 6);
	to_authority(up);
	n = add_record(up, n, "edge.cdn.net", ns_t_a, ns_c_in, 60, "\x07\x07\x07\x07", 4);
	n = add_record(up, n, "", ns_t_opt, 4096, 0, upopt, sizeof(upopt));
	assert_int_equal(sendto(e->up.fd, up, n, 0, (void *)&e->up.from[0], sizeof(e->up.from[0])), (ssize_t)n);
	assert_true(pump(e, fd, 3000));
	n = recv(fd, ans, sizeof(ans), 0);

	parse_reply(ans, n, &g);
	assert_int_equal(g.an, 2);
	assert_rr(&g, "www.example.com", ns_t_cname, "edge.cdn.net", 600);
	assert_rr(&g, "edge.cdn.net", ns_t_a, "10.0.0.5", 30);
	assert_int_equal(get16(ans + 8), 0);
	assert_int_equal(g.ar, 1);
	assert_true(g.opt);
	assert_int_equal(g.opt_rdlen, 0);
	assert_null(memmem(ans, n, "leak", 4));
	assert_null(memmem(ans, n, "\x06\x06\x06\x06", 4));
	assert_null(memmem(ans, n, "\x07\x07\x07\x07", 4));
	assert_non_null(slot_of(&e->f, "10.0.0.5", domain_id(e->r, "www.example.com")));
	env_close(e, fd);
}

/* Too long for the client's UDP size: TC and no records (it asks again over TCP); with EDNS it fits. */
static void test_answer_truncation(void **state)
{
	enum { N = 40 };
	static char addrs[N][16];
	static struct rec recs[N];
	static const __u16 sizes[] = { 0, 100, 4096 };	/* 0: no EDNS */
	__u8 q[512], ans[4096];
	struct env *e = env_new();
	struct reply_got g;
	size_t qlen, n, i;
	int fd;

	(void)state;
	for (i = 0; i < N; i++) {
		snprintf(addrs[i], sizeof(addrs[i]), "10.2.0.%zu", i);
		recs[i] = (struct rec){ "big.example", ns_t_a, 60, addrs[i] };
	}
	e->f.allow[0] = "big.example";
	e->up.recs = recs;
	e->up.nrec = N;
	env_start(e);
	fd = udp_client(e);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		qlen = raw_query(i, 0x0100, "big.example", ns_t_a, ns_c_in, q);
		if (sizes[i])
			qlen = add_record(q, qlen, "", ns_t_opt, sizes[i], 0, "", 0);
		n = exchange(e, fd, q, qlen, ans, sizeof(ans));
		parse_reply(ans, n, &g);
		assert_question(&g, q, qlen);
		assert_int_equal(g.opt, sizes[i] != 0);
		if (sizes[i] < 512) {
			assert_true(g.flags & 0x0200);
			assert_int_equal(g.nrr, 0);
			assert_int_equal(n, qlen);
		} else {
			assert_false(g.flags & 0x0200);
			assert_int_equal(g.nrr, N);
			assert_true(n > 512);
		}
	}
	assert_int_equal(e->f.nmap, N);		/* the upstream's answer was whole: installed */
	env_close(e, fd);
}

/* The message layer alone: a client's compression pointer never survives; what cannot be rebuilt is refused. */
static void test_message_layer(void **state)
{
	__u8 m[600], out[DNS_QUERY_MAX], want[512], ans[600];
	struct dns_ask a;
	size_t n;

	(void)state;
	/* The question's name is a pointer into an additional record's data. */
	n = raw_query(5, 0x0100, "", ns_t_a, ns_c_in, m);
	memmove(m + NS_HFIXEDSZ + 2, m + NS_HFIXEDSZ + 1, 4);
	m[NS_HFIXEDSZ] = 0xc0;
	m[NS_HFIXEDSZ + 1] = NS_HFIXEDSZ + 6 + 11;
	n = add_record(m, n + 1, "", ns_t_txt, ns_c_in, 0, "\x07" "Example" "\x03" "COM", 13);	/* with its NUL */
	assert_int_equal(dns_ask_read(m, n, &a), 0);
	assert_int_equal(a.qname_len, 13);
	assert_memory_equal(a.qname, "\x07" "Example" "\x03" "COM", 13);
	assert_int_equal(dns_ask_query(&a, 0x4242, out, sizeof(out)), canonical("example.com", ns_t_a, 0x4242, want));
	assert_memory_equal(out, want, 13 + NS_HFIXEDSZ + 4 + 11);
	assert_int_equal(dns_ask_query(&a, 1, out, 20), -ENOSPC);

	/* Names the policy could not judge, types and classes not served: not composed. */
	n = raw_query(5, 0x0100, "x", ns_t_a, ns_c_in, m);
	m[NS_HFIXEDSZ + 1] = '.';			/* a dot inside a label */
	assert_int_equal(dns_ask_read(m, n, &a), 0);
	assert_int_equal(dns_ask_query(&a, 1, out, sizeof(out)), -EINVAL);
	m[NS_HFIXEDSZ + 1] = 0;				/* a NUL inside a label */
	assert_int_equal(dns_ask_read(m, n, &a), 0);
	assert_int_equal(dns_ask_query(&a, 1, out, sizeof(out)), -EINVAL);
	n = raw_query(5, 0x0100, "", ns_t_a, ns_c_in, m);	/* the root */
	assert_int_equal(dns_ask_read(m, n, &a), 0);
	assert_int_equal(dns_ask_query(&a, 1, out, sizeof(out)), -EINVAL);
	n = raw_query(5, 0x0100, "example.com", ns_t_txt, ns_c_in, m);
	assert_int_equal(dns_ask_read(m, n, &a), 0);
	assert_int_equal(dns_ask_query(&a, 1, out, sizeof(out)), -EINVAL);

	/* Not a query, another opcode (its question kept for the answer), a compression loop. */
	n = raw_query(5, 0x8100, "example.com", ns_t_a, ns_c_in, m);
	assert_int_equal(dns_ask_read(m, n, &a), -EBADMSG);
	n = raw_query(5, 0x2900, "example.com", ns_t_a, ns_c_in, m);
	assert_int_equal(dns_ask_read(m, n, &a), -EOPNOTSUPP);
	assert_int_equal(a.qname_len, 13);
	assert_int_equal(dns_ask_reply(&a, ns_r_notimpl, ans, sizeof(ans)), n);
	assert_int_equal(get16(ans + 2), 0x8000 | 0x2800 | 0x0100 | 0x0080 | ns_r_notimpl);
	assert_int_equal(dns_ask_reply(&a, ns_r_notimpl, ans, 12), -ENOSPC);
	put16(m + 2, 0x0100);
	m[NS_HFIXEDSZ] = 0xc0;
	m[NS_HFIXEDSZ + 1] = NS_HFIXEDSZ;
	assert_int_equal(dns_ask_read(m, n, &a), -EBADMSG);
	assert_int_equal(dns_ask_read(m, 11, &a), -EBADMSG);
}

/* Upstream answers that are not answers to our question, or do not parse: -EBADMSG, never passed on. */
static void test_message_layer_answers(void **state)
{
	static const struct rec recs[] = { { "example.com", ns_t_a, 60, "10.0.0.1" } };
	__u8 m[512], q[DNS_QUERY_MAX], up[600], ans[600];
	struct dns_ask a;
	size_t n, ql;

	(void)state;
	n = raw_query(5, 0x0100, "Example.com", ns_t_a, ns_c_in, m);
	assert_int_equal(dns_ask_read(m, n, &a), 0);
	ql = dns_ask_query(&a, 77, q, sizeof(q));
	n = build_answer(q, ql, recs, 1, false, up);
	assert_true(dns_ask_answer(&a, up, n, 2, 3600, 512, ans, sizeof(ans)) > 0);
	assert_int_equal(dns_ask_answer(&a, up, n, 2, 3600, 512, ans, 20), -ENOSPC);

	up[2] &= ~0x80;						/* not a response */
	assert_int_equal(dns_ask_answer(&a, up, n, 2, 3600, 512, ans, sizeof(ans)), -EBADMSG);
	up[2] |= 0x80;
	up[NS_HFIXEDSZ + 1] = 'X';				/* another name */
	assert_int_equal(dns_ask_answer(&a, up, n, 2, 3600, 512, ans, sizeof(ans)), -EBADMSG);
	up[NS_HFIXEDSZ + 1] = 'e';
	up[NS_HFIXEDSZ + 14] = ns_t_aaaa;			/* another type */
	assert_int_equal(dns_ask_answer(&a, up, n, 2, 3600, 512, ans, sizeof(ans)), -EBADMSG);
	up[NS_HFIXEDSZ + 14] = ns_t_a;
	assert_int_equal(dns_ask_answer(&a, up, n - 1, 2, 3600, 512, ans, sizeof(ans)), -EBADMSG);	/* cut */
	up[NS_HFIXEDSZ + 17] = 0xc0;				/* the record's owner points at itself */
	up[NS_HFIXEDSZ + 18] = NS_HFIXEDSZ + 17;
	assert_int_equal(dns_ask_answer(&a, up, n, 2, 3600, 512, ans, sizeof(ans)), -EBADMSG);

	/* Truncated upstream: TC, the question, no records. */
	n = build_answer(q, ql, NULL, 0, true, up);
	assert_int_equal(dns_ask_answer(&a, up, n, 2, 3600, 512, ans, sizeof(ans)), NS_HFIXEDSZ + 13 + 4);
	assert_true(get16(ans + 2) & 0x0200);
	assert_memory_equal(ans + NS_HFIXEDSZ, "\x07" "Example" "\x03" "com", 13);
}

/* Nothing arrived on @fd (a fake server nobody serves). */
static bool silent(int fd)
{
	__u8 b[512];

	return recv(fd, b, sizeof(b), MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

/*
 * A nested sandbox's resolver (@in) asking through its enclosing one's
 * (@out, whose upstream is the fake): run both, the upstream and a UDP
 * client of @in asking @name, until the client has its answer.
 */
static size_t ask_through(struct env *in, struct env *out, const char *name, __u8 *q, __u8 *ans)
{
	struct pollfd p[2 * DNS_POLLFDS_MAX + 2];
	__u64 end = mono_ms() + 3000;
	int fd = udp_client(in), n, k;
	size_t qlen = mkquery(name, ns_t_a, q);
	ssize_t got = -1;

	assert_int_equal(send(fd, q, qlen, 0), (ssize_t)qlen);
	while (got < 0 && mono_ms() < end) {
		k = dns_pollfds(in->r, p, DNS_POLLFDS_MAX);
		n = k + dns_pollfds(out->r, p + k, DNS_POLLFDS_MAX);
		p[n++] = (struct pollfd){ .fd = out->up.fd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		assert_true(poll(p, n, 10) >= 0);
		dns_handle(in->r, p, k);
		dns_handle(out->r, p + k, n - 2 - k);
		if (p[n - 2].revents)
			up_serve(&out->up);
		if (p[n - 1].revents & POLLIN)
			got = recv(fd, ans, 4096, 0);
	}
	close(fd);
	assert_true(got >= NS_HFIXEDSZ);
	assert_int_equal(get16(ans), get16(q));
	assert_true(silent(in->up.fd));		/* the inner one's configured server: never asked */
	return got;
}

/*
 * Nested sandboxes: the inner one's resolver asks the outer one's, never
 * the servers. A name the outer policy denies gets its NXDOMAIN, and does
 * not leave; an allowed one opens its address for both sandboxes.
 */
static void test_via_outer(void **state)
{
	struct env *out = env_new(), *in = env_new();
	__u8 q[512], ans[4096];
	struct reply_got g;
	__u16 port6;
	size_t n;

	(void)state;
	out->f.allow[0] = "example.com";
	out->up.recs = example_a;
	out->up.nrec = 1;
	env_start(out);
	in->f.allow[0] = "example.com";
	in->f.allow[1] = "evil.example";
	in->cfg.ops = &via_ops;
	in->f.via_ret = 1;
	dns_ports(out->r, &in->f.via_port, &port6);
	env_start(in);

	n = ask_through(in, out, "evil.example", q, ans);
	assert_int_equal(ans[3] & 0x0f, ns_r_nxdomain);
	assert_int_equal(out->up.nq, 0);			/* it never left */
	assert_int_equal(out->f.nev, 1);			/* the outer policy's refusal */
	assert_string_equal(out->f.ev[0].path, "evil.example");
	assert_int_equal(out->f.ev[0].rule_id, SBX_RULE_DOMAIN_DEFAULT);
	assert_int_equal(in->f.nmap + out->f.nmap, 0);

	n = ask_through(in, out, "example.com", q, ans);
	parse_reply(ans, n, &g);
	assert_int_equal(g.nrr, 1);
	assert_rr(&g, "example.com", ns_t_a, "10.0.0.1", 60);
	assert_int_equal(out->up.nq, 1);
	assert_non_null(slot_of(&in->f, "10.0.0.1", domain_id(in->r, "example.com")));
	assert_non_null(slot_of(&out->f, "10.0.0.1", domain_id(out->r, "example.com")));
	assert_int_equal(in->f.nvia, 2);			/* asked at each query it sent */
	env_free(in);
	env_free(out);
}

/*
 * Via an enclosing resolver (here the fake server, on another port than
 * the configured one): only its answers count, a spoofed one from another
 * port is ignored, and the configured server is never asked.
 */
static void test_via_only(void **state)
{
	static const struct rec recs[] = { { "example.com", ns_t_a, 60, "1.2.3.4" } };
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	struct reply_got g;
	__u16 other;
	size_t qlen, n;
	int conf = bound_socket(SOCK_DGRAM, 0, &other);

	(void)state;
	snprintf(e->upstream, sizeof(e->upstream), "127.0.0.1:%u", other);
	e->f.allow[0] = "example.com";
	e->up.mode = UP_SPOOF;
	e->up.recs = recs;
	e->up.nrec = 1;
	e->cfg.ops = &via_ops;
	e->f.via_ret = 1;
	e->f.via_port = e->up.port;
	env_start(e);
	n = ask(e, "example.com", ns_t_a, q, &qlen, ans);
	parse_reply(ans, n, &g);
	assert_int_equal(g.nrr, 1);
	assert_rr(&g, "example.com", ns_t_a, "1.2.3.4", 60);
	assert_null(slot_of(&e->f, "6.6.6.6", domain_id(e->r, "example.com")));
	assert_int_equal(e->up.nq, 1);
	assert_true(silent(conf));
	close(conf);
	env_free(e);
}

/* An enclosing sandbox with no resolver to ask: SERVFAIL, and nothing goes to the servers. */
static void test_via_unreachable(void **state)
{
	struct env *e = env_new();
	__u8 q[512], ans[4096];
	size_t qlen;

	(void)state;
	e->f.allow[0] = "example.com";
	e->up.recs = example_a;
	e->up.nrec = 1;
	e->cfg.ops = &via_ops;
	e->f.via_ret = -EHOSTUNREACH;
	env_start(e);
	ask(e, "example.com", ns_t_a, q, &qlen, ans);
	assert_int_equal(ans[3] & 0x0f, ns_r_servfail);
	assert_int_equal(e->up.nq, 0);
	assert_int_equal(e->f.nmap, 0);
	assert_int_equal(counters(e).failed, 1);

	/* None above (0): the configured servers, as without the op. */
	e->f.via_ret = 0;
	ask(e, "example.com", ns_t_a, q, &qlen, ans);
	assert_int_equal(ans[3] & 0x0f, ns_r_noerror);
	assert_int_equal(e->up.nq, 1);
	assert_int_equal(e->f.nmap, 1);
	env_free(e);
}

static void check_server(const struct sockaddr_storage *ss, const char *addr, __u16 port)
{
	char buf[INET6_ADDRSTRLEN];
	const struct sockaddr_in *in = (const void *)ss;
	const struct sockaddr_in6 *in6 = (const void *)ss;

	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof(buf));
		assert_int_equal(ntohs(in6->sin6_port), port);
	} else {
		assert_int_equal(ss->ss_family, AF_INET);
		inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf));
		assert_int_equal(ntohs(in->sin_port), port);
	}
	assert_string_equal(buf, addr);
}

static void test_resolv_conf(void **state)
{
	static const char text[] =
		"# generated\n"
		"; nameserver 9.9.9.9\n"
		"search example.com\n"
		"nameserverx 8.8.8.8\n"
		"nameserver\n"
		"nameserver not-an-address\n"
		"nameserver 10.0.0.1\n"
		"nameserver\t 2001:db8::53   # the v6 one\n"
		"options edns0\n"
		"nameserver fe80::1%1\n"
		"nameserver 10.0.0.4\n";
	struct sockaddr_storage s[DNS_MAX_SERVERS + 1];
	char path[] = "/tmp/test_dns.XXXXXX";
	struct dns_resolver *r = (void *)1;
	struct dns_config cfg = { .ops = &fake_ops, .resolv_conf = path };
	int fd;

	(void)state;
	assert_int_equal(dns_parse_resolv_conf(text, s, 4), 3);
	check_server(&s[0], "10.0.0.1", 53);
	check_server(&s[1], "2001:db8::53", 53);
	check_server(&s[2], "fe80::1", 53);
	assert_int_equal(((struct sockaddr_in6 *)&s[2])->sin6_scope_id, 1);
	assert_int_equal(dns_parse_resolv_conf("nameserver 1.2.3.4", s, 4), 1);
	assert_int_equal(dns_parse_resolv_conf("# nameserver 1.2.3.4\n", s, 4), 0);

	assert_int_equal(dns_parse_server("127.0.0.1:5353", &s[0]), 0);
	check_server(&s[0], "127.0.0.1", 5353);
	assert_int_equal(dns_parse_server("[::1]:5300", &s[0]), 0);
	check_server(&s[0], "::1", 5300);
	assert_int_equal(dns_parse_server("2001:db8::1", &s[0]), 0);
	check_server(&s[0], "2001:db8::1", 53);
	assert_int_equal(dns_parse_server("1.2.3.4", &s[0]), 0);
	check_server(&s[0], "1.2.3.4", 53);
	assert_int_equal(dns_parse_server("1.2.3.4:0", &s[0]), -EINVAL);
	assert_int_equal(dns_parse_server("1.2.3.4:x", &s[0]), -EINVAL);
	assert_int_equal(dns_parse_server("[::1", &s[0]), -EINVAL);
	assert_int_equal(dns_parse_server("[::1]x", &s[0]), -EINVAL);
	assert_int_equal(dns_parse_server("example.com", &s[0]), -EINVAL);

	/* A resolv.conf without servers: nothing to forward to. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "search x\n", 9), 9);
	close(fd);
	assert_int_equal(dns_open(&r, &cfg), -ENOENT);
	assert_null(r);
	unlink(path);
	cfg.resolv_conf = path;
	assert_int_equal(dns_open(&r, &cfg), -ENOENT);
	cfg.upstream = "127.0.0.1";
	cfg.min_ttl = 10;
	cfg.max_ttl = 5;
	assert_int_equal(dns_open(&r, &cfg), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_via_outer),
		cmocka_unit_test(test_via_only),
		cmocka_unit_test(test_via_unreachable),
		cmocka_unit_test(test_ttl_clamp),
		cmocka_unit_test(test_cname_chain),
		cmocka_unit_test(test_denied),
		cmocka_unit_test(test_label_with_dot),
		cmocka_unit_test(test_audit),
		cmocka_unit_test(test_update_fails),
		cmocka_unit_test(test_tcp_client),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_truncated_twice),
		cmocka_unit_test(test_formerr_no_question),
		cmocka_unit_test(test_uncomposable_installs_nothing),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_close_takes_everything),
		cmocka_unit_test(test_spoofed_source),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_ipv6_client),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_query_shape),
		cmocka_unit_test(test_never_opened),
		cmocka_unit_test(test_resolv_conf),
		cmocka_unit_test(test_upstream_edns_options),
		cmocka_unit_test(test_upstream_header_flags),
		cmocka_unit_test(test_upstream_case),
		cmocka_unit_test(test_upstream_qclass_ch),
		cmocka_unit_test(test_upstream_two_questions),
		cmocka_unit_test(test_upstream_additional_record),
		cmocka_unit_test(test_upstream_tcp),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_rate_limit),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_audit_not_host),
		cmocka_unit_test(test_answer_composed),
		cmocka_unit_test(test_answer_truncation),
		cmocka_unit_test(test_message_layer),
		cmocka_unit_test(test_message_layer_answers),
	};

	return cmocka_run_group_tests_name("dns", tests, NULL, NULL);
}
