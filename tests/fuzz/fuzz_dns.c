// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_dns.c — libFuzzer target: the resolver's message layer (dns.h), the
 * code that reads what a sandbox sends and what an upstream answers. The
 * input is a client's query and an upstream's answer:
 *
 *   byte 0      mode: bit 0 splices the canonical question into the answer
 *               (so that mutations reach its records), bits 1-2 pick the
 *               client's size limit (512, 1232, 4096, 65535)
 *   bytes 1-2   the query's length, big-endian
 *   then        the query, then the answer
 *
 * Besides what ASan and UBSan catch, it checks the contract of dns.h:
 *
 *   - dns_ask_read() returns 0, -EBADMSG or -EOPNOTSUPP; the name it keeps
 *     is an uncompressed wire name (no pointer of the client's survives);
 *   - dns_ask_query() composes exactly the canonical query: header with RD
 *     alone, the name in lower case of letters, digits, '-' and '_', a
 *     served type, class IN, our OPT record; nothing else of the client's;
 *   - dns_ask_answer() and dns_ask_reply() compose a well-formed answer:
 *     the client's id and question byte for byte, only A, AAAA and CNAME
 *     records of class IN with clamped TTLs, within the size limit, our
 *     OPT record last and only for a client that sent one.
 */
#include <errno.h>
#include <arpa/nameser.h>
#include <resolv.h>

#include "dns.h"
#include "fuzz.h"

#define MIN_TTL		2
#define MAX_TTL		3600

static const uint8_t opt_rr[11] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 };

static unsigned get16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

/* Is @n bytes at @p one uncompressed wire name? */
static int plain_name(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n && p[i] && p[i] < 64)
		i += 1 + p[i];
	return i + 1 == n && !p[i];
}

static int host_byte(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Can @a be sent: a served type, class IN, a name of host bytes (any case) that is not the root? */
static int composable(const struct dns_ask *a)
{
	if (a->class != ns_c_in || (a->type != ns_t_a && a->type != ns_t_aaaa && a->type != ns_t_cname))
		return 0;
	for (size_t i = 0; i + 1 < a->qname_len; i += 1 + a->qname[i])
		for (size_t j = i + 1; j <= i + a->qname[i]; j++)
			if (!host_byte(a->qname[j] >= 'A' && a->qname[j] <= 'Z' ? a->qname[j] + 32 : a->qname[j]))
				return 0;
	return a->qname_len > 1;
}

/* The client's own question name, when it is written without compression: what an answer echoes. */
static void check_echo(const struct dns_ask *a, const uint8_t *m, size_t len)
{
	size_t i = 12;

	while (i < len && m[i] && m[i] < 64)
		i += 1 + m[i];
	if (i >= len || m[i] || !a->qname_len)
		return;		/* a pointer, or the read failed */
	CHECK(i + 1 - 12 == a->qname_len && !memcmp(m + 12, a->qname, a->qname_len), "question name rewritten");
}

static void check_ask(const struct dns_ask *a, int err)
{
	CHECK(!err || err == -EBADMSG || err == -EOPNOTSUPP, "dns_ask_read: %d", err);
	CHECK(!a->qname_len || plain_name(a->qname, a->qname_len), "name of %u bytes not plain", a->qname_len);
	CHECK(a->udp_max >= 512, "udp_max %u", a->udp_max);
	CHECK(!err || !a->edns, "EDNS kept on error %d", err);
	CHECK(err || a->qname_len, "a query without a name");
}

/* The canonical query @q (@n bytes) for @a. */
static void check_query(const struct dns_ask *a, const uint8_t *q, int n)
{
	size_t name = 12 + a->qname_len;
	struct dns_ask back;

	CHECK(n == (int)(name + 4 + sizeof(opt_rr)), "query of %d bytes for a name of %u", n, a->qname_len);
	CHECK(get16(q + 2) == 0x0100 && get16(q + 4) == 1 && !get16(q + 6) && !get16(q + 8) && get16(q + 10) == 1,
	      "header %04x %u %u %u %u", get16(q + 2), get16(q + 4), get16(q + 6), get16(q + 8), get16(q + 10));
	for (size_t i = 12; i < name - 1; i += 1 + q[i]) {
		CHECK(q[i] == a->qname[i - 12], "label length at %zu", i);
		for (size_t j = i + 1; j <= i + q[i]; j++)
			CHECK(host_byte(q[j]) && (q[j] | 0x20) == (a->qname[j - 12] | 0x20), "byte %zu: %02x", j, q[j]);
	}
	CHECK(get16(q + name) == a->type && get16(q + name + 2) == ns_c_in, "type %u class %u",
	      get16(q + name), get16(q + name + 2));
	CHECK(a->type == ns_t_a || a->type == ns_t_aaaa || a->type == ns_t_cname, "type %u sent", a->type);
	CHECK(!memcmp(q + name + 4, opt_rr, sizeof(opt_rr)), "not our OPT record");
	CHECK(!dns_ask_read(q, n, &back) && back.qname_len == a->qname_len && back.edns, "canonical query unreadable");
}

/* One record of the answer @m at *@off, moved past it. */
static void check_record(const uint8_t *m, size_t n, size_t *off, int last, int edns)
{
	char name[NS_MAXDNAME];
	unsigned type, rdlen;
	int c = dn_expand(m, m + n, m + *off, name, sizeof(name));
	uint32_t ttl;

	CHECK(c > 0 && *off + c + 10 <= n, "record at %zu", *off);
	*off += c;
	type = get16(m + *off);
	ttl = (uint32_t)get16(m + *off + 4) << 16 | get16(m + *off + 6);
	rdlen = get16(m + *off + 8);
	*off += 10;
	CHECK(*off + rdlen <= n, "rdata past the end");
	if (type == ns_t_opt) {
		CHECK(last && edns && !name[0] && !rdlen && !memcmp(m + *off - 11, opt_rr, 11), "OPT record");
	} else {
		CHECK(get16(m + *off - 8) == ns_c_in && ttl >= MIN_TTL && ttl <= MAX_TTL, "class or TTL %u", ttl);
		CHECK((type == ns_t_a && rdlen == 4) || (type == ns_t_aaaa && rdlen == 16) ||
		      (type == ns_t_cname && dn_expand(m, m + n, m + *off, name, sizeof(name)) == (int)rdlen),
		      "record type %u rdlen %u", type, rdlen);
	}
	*off += rdlen;
}

/* An answer to @a (@n bytes at @m), composed by us, at most @max bytes unless it is the smallest. */
static void check_answer(const struct dns_ask *a, const uint8_t *m, int n, size_t max)
{
	size_t off = 12, min = 12 + (a->qname_len ? a->qname_len + 4 : 0) + (a->edns ? 11 : 0);
	unsigned records;

	CHECK(n >= (int)min && ((size_t)n <= max || (size_t)n == min), "answer of %d bytes (max %zu)", n, max);
	CHECK(get16(m) == a->id && (m[2] & 0x80) && (m[3] & 0x80), "header");
	CHECK(!get16(m + 8) && get16(m + 10) == (unsigned)a->edns, "authority or additional records");
	CHECK(!(m[2] & 0x02) || !get16(m + 6), "records in a truncated answer");
	if (a->qname_len) {
		CHECK(get16(m + 4) == 1 && !memcmp(m + 12, a->qname, a->qname_len), "question not the client's");
		CHECK(get16(m + 12 + a->qname_len) == a->type && get16(m + 14 + a->qname_len) == a->class, "qtype");
		off += a->qname_len + 4;
	}
	records = get16(m + 6) + get16(m + 10);
	for (unsigned i = 0; i < records; i++)
		check_record(m, n, &off, i + 1 == records, a->edns);
	CHECK(off == (size_t)n, "%zu bytes read of %d", off, n);
}

/* The answer the fuzzer gave, or (mode bit 0) its header and records around our question. */
static size_t upstream(const uint8_t *q, int qn, const uint8_t *data, size_t size, int splice, uint8_t *out)
{
	size_t qend = qn - sizeof(opt_rr);

	if (!splice || size < 12) {
		memcpy(out, data, size);
		return size;
	}
	memcpy(out, data, 12);
	out[2] |= 0x80;
	out[4] = 0;
	out[5] = 1;
	memcpy(out + 12, q + 12, qend - 12);
	memcpy(out + qend, data + 12, size - 12);
	return qend + size - 12;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t limits[] = { 512, 1232, 4096, 65535 };
	static uint8_t out[65536], ans[65536 + 300];
	uint8_t q[DNS_QUERY_MAX];
	struct dns_ask a;
	size_t qlen, alen, max;
	int err, n;

	if (size < 3 || size > sizeof(out))
		return 0;
	qlen = get16(data + 1);
	if (qlen > size - 3)
		qlen = size - 3;
	max = limits[(data[0] >> 1) & 3];
	err = dns_ask_read(data + 3, qlen, &a);
	check_ask(&a, err);
	check_echo(&a, data + 3, qlen);
	n = dns_ask_reply(&a, ns_r_servfail, out, sizeof(out));
	check_answer(&a, out, n, max);
	if (err)
		return 0;
	n = dns_ask_query(&a, 0x5342, q, sizeof(q));
	CHECK(n > 0 || n == -EINVAL, "dns_ask_query: %d", n);
	CHECK((n > 0) == composable(&a), "dns_ask_query: %d for a question that can%s be sent", n,
	      composable(&a) ? "" : "not");
	if (n < 0)
		return 0;
	check_query(&a, q, n);
	alen = upstream(q, n, data + 3 + qlen, size - 3 - qlen, data[0] & 1, ans);
	n = dns_ask_answer(&a, ans, alen, MIN_TTL, MAX_TTL, max, out, sizeof(out));
	CHECK(n > 0 || n == -EBADMSG || n == -ENOMEM, "dns_ask_answer: %d", n);
	if (n > 0)
		check_answer(&a, out, n, max);
	return 0;
}
