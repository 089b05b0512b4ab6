// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's resolvers for attached cgroups (resolvers.c) on real
 * loopback sockets, without a kernel: the loader calls it makes are
 * wrapped at link time (-Wl,--wrap, see the Makefile) by a fake that
 * holds sandbox entries, dns_allow and the pinned steering; records are
 * real files in a temporary state directory; a UDP socket of the test is
 * the upstream server. The kernel's side (steering, verdicts) is the VM
 * suite's: tests/e2e/15-attach-dns.sh.
 */
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <poll.h>
#include <resolv.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "cgroup.h"
#include "events.h"
#include "loader.h"
#include "policy.h"
#include "resolvers.h"
#include "sbxstate.h"
#include "sinktest.h"

#define FAKE_MAX	16

/* --- the fake kernel: what the wrapped loader calls see ----------------------------- */

static struct {
	struct { __u64 cgid; struct sbx_sandbox sb; } sb[FAKE_MAX];
	int nsb;
	struct { struct sbx_dns_key k; struct sbx_dns_entry e; } dns[FAKE_MAX];
	int ndns;
	__u64 pinned[FAKE_MAX];
	int npinned;
	int pin_calls;
	long pin_age;			/* seconds since every steering set was pinned */
} K;

int __wrap_loader__get_sandbox(struct sbx_loader *l, __u64 cgid, struct sbx_sandbox *sb);
int __wrap_loader__replace_sandbox(struct sbx_loader *l, __u64 cgid, const struct sbx_sandbox *sb);
int __wrap_loader__next_sandbox(struct sbx_loader *l, const __u64 *prev, __u64 *cgid, struct sbx_sandbox *sb);
int __wrap_loader__dns_lookup(struct sbx_loader *l, const struct sbx_dns_key *k, struct sbx_dns_entry *e);
int __wrap_loader__dns_update(struct sbx_loader *l, const struct sbx_dns_key *k, const struct sbx_dns_entry *e);
int __wrap_loader__dns_delete(struct sbx_loader *l, const struct sbx_dns_key *k);
int __wrap_loader__dns_client(struct sbx_loader *l, __u32 key, struct sbx_dns_client *out);
int __wrap_loader__pin_steer(struct sbx_loader *l, const char *dir, __u64 cgid, int cgroup_fd);
int __wrap_loader__unpin_steer(const char *dir, __u64 cgid);
int __wrap_loader__steer_pinned(const char *dir, __u64 *out, size_t max);
int __wrap_loader__steer_age(const char *dir, __u64 cgid, long *seconds);

static int sb_find(__u64 cgid)
{
	for (int i = 0; i < K.nsb; i++)
		if (K.sb[i].cgid == cgid)
			return i;
	return -1;
}

int __wrap_loader__get_sandbox(struct sbx_loader *l, __u64 cgid, struct sbx_sandbox *sb)
{
	int i = sb_find(cgid);

	(void)l;
	if (i < 0)
		return -ENOENT;
	*sb = K.sb[i].sb;
	return 0;
}

int __wrap_loader__replace_sandbox(struct sbx_loader *l, __u64 cgid, const struct sbx_sandbox *sb)
{
	int i = sb_find(cgid);

	(void)l;
	if (i < 0)
		return -ENOENT;
	K.sb[i].sb = *sb;
	return 0;
}

int __wrap_loader__next_sandbox(struct sbx_loader *l, const __u64 *prev, __u64 *cgid, struct sbx_sandbox *sb)
{
	int i = prev ? sb_find(*prev) + 1 : 0;

	(void)l;
	if (i >= K.nsb)
		return -ENOENT;
	*cgid = K.sb[i].cgid;
	*sb = K.sb[i].sb;
	return 0;
}

static int dns_find(const struct sbx_dns_key *k)
{
	for (int i = 0; i < K.ndns; i++)
		if (!memcmp(&K.dns[i].k, k, sizeof(*k)))
			return i;
	return -1;
}

int __wrap_loader__dns_lookup(struct sbx_loader *l, const struct sbx_dns_key *k, struct sbx_dns_entry *e)
{
	int i = dns_find(k);

	(void)l;
	if (i < 0)
		return -ENOENT;
	*e = K.dns[i].e;
	return 0;
}

int __wrap_loader__dns_update(struct sbx_loader *l, const struct sbx_dns_key *k, const struct sbx_dns_entry *e)
{
	int i = dns_find(k);

	(void)l;
	if (i < 0) {
		assert_true(K.ndns < FAKE_MAX);
		i = K.ndns++;
	}
	K.dns[i].k = *k;
	K.dns[i].e = *e;
	return 0;
}

int __wrap_loader__dns_delete(struct sbx_loader *l, const struct sbx_dns_key *k)
{
	int i = dns_find(k);

	(void)l;
	if (i < 0)
		return -ENOENT;
	K.dns[i] = K.dns[--K.ndns];
	return 0;
}

int __wrap_loader__dns_client(struct sbx_loader *l, __u32 key, struct sbx_dns_client *out)
{
	(void)l;
	(void)key;
	(void)out;
	return -ENOENT;
}

static int pin_find(__u64 cgid)
{
	for (int i = 0; i < K.npinned; i++)
		if (K.pinned[i] == cgid)
			return i;
	return -1;
}

int __wrap_loader__pin_steer(struct sbx_loader *l, const char *dir, __u64 cgid, int cgroup_fd)
{
	(void)l;
	(void)dir;
	assert_true(cgroup_fd >= 0);
	K.pin_calls++;
	if (pin_find(cgid) < 0)
		K.pinned[K.npinned++] = cgid;
	return 0;
}

int __wrap_loader__unpin_steer(const char *dir, __u64 cgid)
{
	int i = pin_find(cgid);

	(void)dir;
	if (i >= 0)
		K.pinned[i] = K.pinned[--K.npinned];
	return 0;
}

int __wrap_loader__steer_pinned(const char *dir, __u64 *out, size_t max)
{
	(void)dir;
	for (int i = 0; i < K.npinned && (size_t)i < max; i++)
		out[i] = K.pinned[i];
	return K.npinned;
}

int __wrap_loader__steer_age(const char *dir, __u64 cgid, long *seconds)
{
	(void)dir;
	if (pin_find(cgid) < 0)
		return -ENOENT;
	*seconds = K.pin_age;
	return 0;
}

/* --- the fixture: a record, a "cgroup" directory, an upstream, the events ---------- */

struct fixture {
	char *dir;			/* the state directory */
	char cg[96];			/* stands in for the cgroup: a directory with an id */
	__u64 cgid;
	int up;				/* the upstream server's socket */
	char upstream[32];
	struct event_sink sink;
	struct sbx_event ev[4];
	char ev_domain[4][64];
	int nev;
	char notes[8][512];
	int nnotes;
	struct resolvers *rs;
};

static void forward(void *ctx, const struct sbx_event *ev, const char *rule_text, const char *domain,
		    const json_t *labels)
{
	struct fixture *f = ctx;

	(void)rule_text;
	(void)labels;
	if (f->nev < 4) {
		f->ev[f->nev] = *ev;
		snprintf(f->ev_domain[f->nev], sizeof(f->ev_domain[0]), "%s", domain ? domain : "");
	}
	f->nev++;
}

static const char *domain_name(void *ctx, const struct sbx_event *ev)
{
	return resolvers_domain_name(((struct fixture *)ctx)->rs, ev->sandbox_cgroup_id, ev->domain_id);
}

static void note(void *ctx, const char *msg)
{
	struct fixture *f = ctx;

	if (f->nnotes < 8)
		snprintf(f->notes[f->nnotes], sizeof(f->notes[0]), "%s", msg);
	f->nnotes++;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);

	memset(&K, 0, sizeof(K));
	f->dir = make_tmpdir();
	assert_non_null(f->dir);
	snprintf(f->cg, sizeof(f->cg), "%s/cg", f->dir);
	assert_int_equal(mkdir(f->cg, 0755), 0);
	assert_int_equal(cgroup_id_of(f->cg, &f->cgid), 0);
	f->up = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(f->up, (void *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(f->up, (void *)&sin, &len), 0);
	snprintf(f->upstream, sizeof(f->upstream), "127.0.0.1:%u", ntohs(sin.sin_port));
	f->sink = (struct event_sink){ .forward = forward, .forward_ctx = f, .domain_name = domain_name,
				       .domain_ctx = f };
	f->rs = resolvers_new(&(struct resolvers_opts){ .l = (struct sbx_loader *)&K, .pin_dir = "/pins",
							 .state_dir = f->dir, .sink = &f->sink,
							 .upstream = f->upstream });
	assert_non_null(f->rs);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	resolvers_free(f->rs);
	close(f->up);
	rm_tmpdir(f->dir);
	free(f);
	return 0;
}

/* An attach's record of @cgid with @json's policy; @resolver: for the daemon's resolver. */
static void record(struct fixture *f, __u64 cgid, const char *json, bool resolver)
{
	struct policy_env env = { .home = "/home/u", .cwd = "/w" };
	struct policy_diag diag = {};
	struct policy p = {};
	struct state_entry e = { .cgroup = f->cg, .cgroup_id = cgid, .policy_id = 9, .resolver = resolver };

	assert_int_equal(policy_load_string(&p, "t.json", json, &env, &diag), 0);
	assert_int_equal(state_write(f->dir, &e, &p), 0);
	policy_free(&p);
}

static void entry(__u64 cgid, __u32 flags, __u16 p4, __u16 p6)
{
	int i = sb_find(cgid);

	if (i < 0)
		i = K.nsb++;
	K.sb[i].cgid = cgid;
	K.sb[i].sb = (struct sbx_sandbox){ .policy_id = 9, .flags = flags, .dns_port4 = p4, .dns_port6 = p6 };
}

static void entry_gone(__u64 cgid)
{
	int i = sb_find(cgid);

	if (i >= 0)
		K.sb[i] = K.sb[--K.nsb];
}

static size_t resolvers_running(struct resolvers *rs)
{
	json_t *j = resolvers_json(rs);
	size_t n = json_array_size(j);

	json_decref(j);
	return n;
}

/* --- DNS on the wire ---------------------------------------------------------------- */

static size_t build_query(const char *name, __u8 *q)
{
	static const __u8 hdr[NS_HFIXEDSZ] = { 0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0 };
	int n;

	memcpy(q, hdr, sizeof(hdr));
	n = dn_comp(name, q + NS_HFIXEDSZ, 256, NULL, NULL);
	assert_true(n > 0);
	q[NS_HFIXEDSZ + n] = 0;
	q[NS_HFIXEDSZ + n + 1] = ns_t_a;
	q[NS_HFIXEDSZ + n + 2] = 0;
	q[NS_HFIXEDSZ + n + 3] = ns_c_in;
	return NS_HFIXEDSZ + n + NS_QFIXEDSZ;
}

/* The upstream answers every query with one A record: 127.0.0.2, TTL 60. */
static void upstream_answer(int fd)
{
	static const __u8 rr[] = { 0xc0, 0x0c, 0, ns_t_a, 0, ns_c_in, 0, 0, 0, 60, 0, 4, 127, 0, 0, 2 };
	struct sockaddr_storage from;
	socklen_t len = sizeof(from);
	__u8 m[512 + sizeof(rr)];
	ssize_t n = recvfrom(fd, m, 512, 0, (void *)&from, &len);

	assert_true(n > NS_HFIXEDSZ);
	/* The question alone: the resolver's query ends in its own OPT record, which is no answer's business. */
	n = NS_HFIXEDSZ + dn_skipname(m + NS_HFIXEDSZ, m + n) + NS_QFIXEDSZ;
	m[2] |= 0x80;
	m[3] = 0x80;
	m[7] = 1;
	m[11] = 0;
	memcpy(m + n, rr, sizeof(rr));
	assert_int_equal(sendto(fd, m, n + sizeof(rr), 0, (void *)&from, len), n + (ssize_t)sizeof(rr));
}

/* Ask the resolver on 127.0.0.1:@port for @name, driving it (and the upstream) meanwhile: the rcode. */
static int ask(struct fixture *f, __u16 port, const char *name)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct pollfd fds[2 + RESOLVERS_FDS];
	__u8 q[512], a[1024];
	size_t qlen = build_query(name, q);
	int c = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_int_equal(sendto(c, q, qlen, 0, (void *)&to, sizeof(to)), (ssize_t)qlen);
	for (int i = 0; i < 200; i++) {
		int timeout = 20;
		size_t n = resolvers_pollfds(f->rs, fds + 2, RESOLVERS_FDS, &timeout);
		ssize_t got;

		fds[0] = (struct pollfd){ .fd = f->up, .events = POLLIN };
		fds[1] = (struct pollfd){ .fd = c, .events = POLLIN };
		assert_true(poll(fds, 2 + n, timeout) >= 0);
		resolvers_handle(f->rs, fds + 2, n);
		if (fds[0].revents & POLLIN)
			upstream_answer(f->up);
		if (!(fds[1].revents & POLLIN))
			continue;
		got = recv(c, a, sizeof(a), 0);
		close(c);
		assert_true(got >= NS_HFIXEDSZ);
		return a[3] & 0x0f;
	}
	close(c);
	fail_msg("no answer for %s", name);
	return -1;
}

static const struct sbx_dns_entry *dns_entry(__u64 cgid, const char *v4)
{
	struct sbx_dns_key k = { .sandbox_cgid = cgid, .addr = { [10] = 0xff, [11] = 0xff } };
	int i;

	assert_int_equal(inet_pton(AF_INET, v4, k.addr + 12), 1);
	i = dns_find(&k);
	return i < 0 ? NULL : &K.dns[i].e;
}

static const char *const ONE = "{ \"network\": { \"allowedDomains\": [ \"one.test\" ] } }";

/* --- the tests -------------------------------------------------------------------------- */

/* A resolver from the record: the policy's verdicts, its answers in dns_allow, its refusals as events. */
static void test_start_serve(void **state)
{
	struct fixture *f = *state;
	struct sbx_dns_entry grant = { .s = { { .expires_ns = ~0ULL, .domain_id = SBX_DOMAIN_GRANT,
						.rule_id = SBX_RULE_GRANT_BASE + 1, .hi = 65535 } } };
	const struct sbx_dns_entry *e;
	char why[512] = "";
	__u16 p4 = 0, p6 = 0;

	record(f, f->cgid, ONE, true);
	assert_int_equal(resolvers_start(f->rs, f->cgid, &p4, &p6, why, sizeof(why)), 0);
	assert_true(p4 > 0);
	assert_int_equal(resolvers_running(f->rs), 1);
	assert_int_equal(pin_find(f->cgid), 0);
	/* A connect grant on the address the answer brings: it stays next to the answer. */
	__wrap_loader__dns_update(NULL, &(struct sbx_dns_key){ .sandbox_cgid = f->cgid,
			.addr = { [10] = 0xff, [11] = 0xff, [12] = 127, [15] = 2 } }, &grant);

	assert_int_equal(ask(f, p4, "one.test"), ns_r_noerror);
	e = dns_entry(f->cgid, "127.0.0.2");
	assert_non_null(e);
	assert_int_equal(e->s[0].domain_id, SBX_DOMAIN_GRANT);
	assert_int_equal(e->s[1].rule_id, SBX_RULE_DOMAIN_BASE);
	assert_true(e->s[1].expires_ns > 0);

	assert_int_equal(ask(f, p4, "two.test"), ns_r_nxdomain);
	assert_int_equal(f->nev, 1);
	assert_int_equal(f->ev[0].op, SBX_OP_DNS);
	assert_int_equal(f->ev[0].verdict, SBX_VERDICT_DENY);
	assert_int_equal(f->ev[0].sandbox_cgroup_id, f->cgid);
	assert_int_equal(f->ev[0].rule_id, SBX_RULE_DOMAIN_DEFAULT);
	assert_string_equal(f->ev[0].path, "two.test");
	assert_string_equal(f->ev_domain[0], "two.test");

	/* Stopped: its answers leave dns_allow, the grant stays; the steering is unpinned. */
	assert_int_equal(resolvers_stop(f->rs, f->cgid), 0);
	e = dns_entry(f->cgid, "127.0.0.2");
	assert_non_null(e);
	assert_int_equal(e->s[0].domain_id, SBX_DOMAIN_GRANT);
	assert_int_equal(e->s[1].expires_ns, 0);
	assert_int_equal(pin_find(f->cgid), -1);
	assert_int_equal(resolvers_running(f->rs), 0);
	assert_int_equal(resolvers_stop(f->rs, f->cgid), -ENOENT);
}

/* Audit mode comes from the record too: denied names go upstream, and are reported as audit. */
static void test_audit(void **state)
{
	struct fixture *f = *state;
	struct policy_env env = { .home = "/home/u", .cwd = "/w" };
	struct policy_diag diag = {};
	struct policy p = {};
	struct state_entry e = { .cgroup = f->cg, .cgroup_id = f->cgid, .audit = true, .resolver = true };
	char why[512];
	__u16 p4, p6;

	assert_int_equal(policy_load_string(&p, "t.json", ONE, &env, &diag), 0);
	assert_int_equal(state_write(f->dir, &e, &p), 0);
	policy_free(&p);
	assert_int_equal(resolvers_start(f->rs, f->cgid, &p4, &p6, why, sizeof(why)), 0);
	assert_int_equal(ask(f, p4, "two.test"), ns_r_noerror);
	assert_int_equal(f->nev, 1);
	assert_int_equal(f->ev[0].verdict, SBX_VERDICT_AUDIT);
}

/* A re-attach restarts it: new ports, the new rules, the old answers gone, still one resolver. */
static void test_restart(void **state)
{
	struct fixture *f = *state;
	char why[512];
	__u16 a4, a6, b4, b6;

	record(f, f->cgid, ONE, true);
	assert_int_equal(resolvers_start(f->rs, f->cgid, &a4, &a6, why, sizeof(why)), 0);
	assert_int_equal(ask(f, a4, "one.test"), ns_r_noerror);
	assert_non_null(dns_entry(f->cgid, "127.0.0.2"));
	record(f, f->cgid, "{ \"network\": { \"allowedDomains\": [ \"two.test\" ] } }", true);
	assert_int_equal(resolvers_start(f->rs, f->cgid, &b4, &b6, why, sizeof(why)), 0);
	assert_int_not_equal(a4, b4);
	assert_int_equal(resolvers_running(f->rs), 1);
	assert_null(dns_entry(f->cgid, "127.0.0.2"));
	assert_int_equal(ask(f, b4, "one.test"), ns_r_nxdomain);
	assert_int_equal(ask(f, b4, "two.test"), ns_r_noerror);
	/* A failed start leaves the running one as it was. */
	assert_int_equal(rmdir(f->cg), 0);
	assert_int_equal(resolvers_start(f->rs, f->cgid, &a4, &a6, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "cannot open cgroup"));
	assert_int_equal(resolvers_running(f->rs), 1);
	assert_int_equal(ask(f, b4, "two.test"), ns_r_noerror);
}

/* Nothing to start from: said, nothing runs. */
static void test_start_refused(void **state)
{
	struct fixture *f = *state;
	char why[512] = "";
	__u16 p4, p6;

	assert_int_equal(resolvers_start(f->rs, f->cgid, &p4, &p6, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "has no record with domain rules"));
	record(f, f->cgid, ONE, false);		/* a `run`'s record */
	assert_int_equal(resolvers_start(f->rs, f->cgid, &p4, &p6, why, sizeof(why)), -ENOENT);
	assert_int_equal(resolvers_running(f->rs), 0);
	assert_int_equal(K.npinned, 0);
}

/* A daemon that starts adopts the cgroups of one that died: a resolver, the entry's new ports. */
static void test_sync_adopts(void **state)
{
	struct fixture *f = *state;
	struct sbx_sandbox sb;
	json_t *j;

	record(f, f->cgid, ONE, true);
	entry(f->cgid, SBX_SANDBOX_DNS, 40001, 40001);	/* the dead daemon's ports */
	resolvers_sync(f->rs, note, f);
	assert_int_equal(resolvers_running(f->rs), 1);
	assert_int_equal(__wrap_loader__get_sandbox(NULL, f->cgid, &sb), 0);
	j = resolvers_json(f->rs);
	assert_int_equal(sb.dns_port4, json_integer_value(json_object_get(json_array_get(j, 0), "port4")));
	assert_int_equal(sb.dns_port6, json_integer_value(json_object_get(json_array_get(j, 0), "port6")));
	json_decref(j);
	assert_int_equal(sb.policy_id, 9);
	assert_int_equal(pin_find(f->cgid), 0);
	assert_int_equal(f->nnotes, 1);
	assert_non_null(strstr(f->notes[0], "started the resolver of cgroup"));
	assert_int_equal(ask(f, sb.dns_port4, "one.test"), ns_r_noerror);

	/* In line: nothing to do. */
	resolvers_sync(f->rs, note, f);
	assert_int_equal(f->nnotes, 1);
	/* An attach that failed after the daemon answered: the entry names other ports; started again. */
	entry(f->cgid, SBX_SANDBOX_DNS, 1, 0);
	resolvers_sync(f->rs, note, f);
	assert_int_equal(__wrap_loader__get_sandbox(NULL, f->cgid, &sb), 0);
	assert_int_not_equal(sb.dns_port4, 1);
	assert_int_equal(ask(f, sb.dns_port4, "two.test"), ns_r_nxdomain);
	assert_int_equal(resolvers_running(f->rs), 1);
}

/* What no entry wants stops; a `run`'s sandbox is not the daemon's. */
static void test_sync_stops(void **state)
{
	struct fixture *f = *state;
	char why[512];
	__u16 p4, p6;

	record(f, f->cgid, ONE, true);
	assert_int_equal(resolvers_start(f->rs, f->cgid, &p4, &p6, why, sizeof(why)), 0);
	entry(f->cgid, SBX_SANDBOX_DNS, p4, p6);
	entry(f->cgid, 0, p4, p6);		/* re-attached without domain rules */
	resolvers_sync(f->rs, note, f);
	assert_int_equal(resolvers_running(f->rs), 0);
	assert_int_equal(pin_find(f->cgid), -1);
	assert_non_null(strstr(f->notes[0], "stopped the resolver"));

	assert_int_equal(resolvers_start(f->rs, f->cgid, &p4, &p6, why, sizeof(why)), 0);
	entry_gone(f->cgid);			/* detached (or an attach that never switched) */
	resolvers_sync(f->rs, note, f);
	assert_int_equal(resolvers_running(f->rs), 0);
	assert_int_equal(pin_find(f->cgid), -1);

	record(f, f->cgid, ONE, false);		/* a `run` with its own resolver */
	entry(f->cgid, SBX_SANDBOX_DNS, 40003, 40003);
	resolvers_sync(f->rs, note, f);
	assert_int_equal(resolvers_running(f->rs), 0);
	assert_int_equal(K.pin_calls, 2);
}

/* No resolver can start: the ports are cleared (port 53 to the rules), the steering goes, said once. */
static void test_sync_failure(void **state)
{
	struct fixture *f = *state;
	struct sbx_sandbox sb;

	record(f, f->cgid, ONE, true);
	entry(f->cgid, SBX_SANDBOX_DNS, 40004, 40004);
	K.pinned[K.npinned++] = f->cgid;	/* left by the dead daemon */
	assert_int_equal(rmdir(f->cg), 0);
	resolvers_sync(f->rs, note, f);
	assert_int_equal(resolvers_running(f->rs), 0);
	assert_int_equal(__wrap_loader__get_sandbox(NULL, f->cgid, &sb), 0);
	assert_int_equal(sb.dns_port4, 0);
	assert_int_equal(sb.flags, SBX_SANDBOX_DNS);	/* still wanted: tried again */
	assert_int_equal(pin_find(f->cgid), -1);
	assert_int_equal(f->nnotes, 1);
	assert_non_null(strstr(f->notes[0], "no resolver for cgroup"));
	resolvers_sync(f->rs, note, f);
	assert_int_equal(f->nnotes, 1);
	/* Steering is never unpinned while the entry names a resolver: port 53 would pass unjudged. */
	entry(f->cgid, SBX_SANDBOX_DNS, 40005, 40005);
	K.pinned[K.npinned++] = f->cgid;
	record(f, f->cgid, ONE, false);		/* not ours to adopt */
	resolvers_sync(f->rs, note, f);
	assert_int_equal(pin_find(f->cgid), 0);
	/*
	 * A `run` pins its steering before its entry exists: a young set without
	 * an entry is left alone; an old one is what a killed run left.
	 */
	entry_gone(f->cgid);
	K.pin_age = 3;
	resolvers_sync(f->rs, note, f);
	assert_int_equal(pin_find(f->cgid), 0);
	K.pin_age = 61;
	resolvers_sync(f->rs, note, f);
	assert_int_equal(pin_find(f->cgid), -1);
	K.pin_age = 0;
}

/* --- the dns_allow entries shared with connect grants ------------------------------- */

static struct sbx_dns_slot slot(__u64 expires, __u32 domain_id)
{
	return (struct sbx_dns_slot){ .expires_ns = expires, .domain_id = domain_id,
				      .rule_id = domain_id == SBX_DOMAIN_GRANT ? SBX_RULE_GRANT_BASE + 1 :
					         SBX_RULE_DOMAIN_BASE, .lo = 0, .hi = 65535 };
}

/* Without grants the resolver's entry goes in as it is (order aside). */
static void test_merge_no_grants(void **state)
{
	struct sbx_dns_entry mine = { .s = { slot(10, 1), {}, slot(30, 2) } }, out;

	(void)state;
	resolvers_merge_slots(NULL, &mine, &out);
	assert_int_equal(out.s[0].domain_id, 2);	/* latest expiry first */
	assert_int_equal(out.s[1].domain_id, 1);
	assert_int_equal(out.s[2].expires_ns, 0);
	assert_int_equal(out.s[3].expires_ns, 0);
}

/* The kernel's grant slots stay; the resolver's own old slots there do not come back. */
static void test_merge_keeps_grants(void **state)
{
	struct sbx_dns_entry kernel = { .s = { slot(50, 1), slot(99, SBX_DOMAIN_GRANT), {}, slot(7, 2) } };
	struct sbx_dns_entry mine = { .s = { slot(60, 1), slot(70, 3) } }, out;

	(void)state;
	resolvers_merge_slots(&kernel, &mine, &out);
	assert_int_equal(out.s[0].domain_id, SBX_DOMAIN_GRANT);
	assert_int_equal(out.s[0].expires_ns, 99);
	assert_int_equal(out.s[1].domain_id, 3);
	assert_int_equal(out.s[2].domain_id, 1);
	assert_int_equal(out.s[2].expires_ns, 60);	/* the resolver's view, not the kernel's old one */
	assert_int_equal(out.s[3].expires_ns, 0);	/* slot (7, 2) was not the resolver's any more */
}

/* More than fits: grants first, then the resolver's latest; the rest is denied, never allowed. */
static void test_merge_full(void **state)
{
	struct sbx_dns_entry kernel = { .s = { slot(99, SBX_DOMAIN_GRANT), slot(98, SBX_DOMAIN_GRANT) } };
	struct sbx_dns_entry mine = { .s = { slot(10, 1), slot(40, 2), slot(20, 3), slot(30, 4) } }, out;

	(void)state;
	resolvers_merge_slots(&kernel, &mine, &out);
	assert_int_equal(out.s[0].domain_id, SBX_DOMAIN_GRANT);
	assert_int_equal(out.s[1].domain_id, SBX_DOMAIN_GRANT);
	assert_int_equal(out.s[2].domain_id, 2);
	assert_int_equal(out.s[3].domain_id, 4);
}

/* The resolver is done with an address: only the grants are left (dns_remove_cb). */
static void test_merge_grants_only(void **state)
{
	struct sbx_dns_entry kernel = { .s = { slot(50, 1), {}, slot(99, SBX_DOMAIN_GRANT) } }, none = {}, out;

	(void)state;
	resolvers_merge_slots(&kernel, &none, &out);
	assert_int_equal(out.s[0].domain_id, SBX_DOMAIN_GRANT);
	for (int i = 1; i < SBX_DNS_SLOTS; i++)
		assert_int_equal(out.s[i].expires_ns, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_start_serve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_adopts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_failure, setup, teardown),
		cmocka_unit_test(test_merge_no_grants),
		cmocka_unit_test(test_merge_keeps_grants),
		cmocka_unit_test(test_merge_full),
		cmocka_unit_test(test_merge_grants_only),
	};

	return cmocka_run_group_tests_name("resolvers", tests, NULL, NULL);
}
