// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * netrules.c: CIDR rules → net_rules entries (one per prefix, port tables
 * merged with every containing prefix, deny winning), the sandbox flags,
 * and the resolver's verdict on names.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "netrules.h"
#include "policy.h"

static const struct policy_env env = { .home = "/nonexistent-sbx-home/u", .cwd = "/nonexistent-sbx" };

static void load(struct policy *p, const char *json)
{
	struct policy_diag d = {};

	memset(p, 0, sizeof(*p));
	if (policy_load_string(p, "t.json", json, &env, &d))
		fail_msg("unexpected error: %s", d.error);
}

static void compile_ok(const struct policy *p, struct net_compiled *c)
{
	char err[256];

	if (net_compile(p, 9, c, err, sizeof(err)))
		fail_msg("net_compile: %s", err);
}

/* The key of @cidr for policy 9, worked out here: IPv4 as ::ffff:a.b.c.d. */
static struct sbx_net_key key(const char *cidr)
{
	struct sbx_net_key k = { .policy_id = 9 };
	const char *slash = strchr(cidr, '/');
	char a[64];

	snprintf(a, sizeof(a), "%.*s", (int)(slash - cidr), cidr);
	if (inet_pton(AF_INET, a, k.addr + 12) == 1) {
		k.addr[10] = k.addr[11] = 0xff;
		k.prefixlen = 32 + 96 + (__u32)atoi(slash + 1);
	} else {
		assert_int_equal(inet_pton(AF_INET6, a, k.addr), 1);
		k.prefixlen = 32 + (__u32)atoi(slash + 1);
	}
	return k;
}

static const struct sbx_net_ports *entry(const struct net_compiled *c, const char *cidr)
{
	struct sbx_net_key k = key(cidr);

	for (size_t i = 0; i < c->nr; i++)
		if (!memcmp(&c->prefixes[i].key, &k, sizeof(k)))
			return &c->prefixes[i].ports;
	fail_msg("no entry for %s", cidr);
	return NULL;
}

/* Range @i of @t is @lo-@hi, @verdict by net rule @rule. */
static void range(const struct sbx_net_ports *t, size_t i, unsigned lo, unsigned hi, __u32 verdict,
		  __u32 rule)
{
	assert_true(i < t->nr);
	assert_int_equal(t->r[i].lo, lo);
	assert_int_equal(t->r[i].hi, hi);
	assert_int_equal(t->r[i].verdict, verdict);
	assert_int_equal(t->r[i].rule_id, SBX_RULE_NET_BASE + rule);
}

#define A SBX_NET_ALLOW
#define D SBX_NET_DENY

static void test_empty(void **state)
{
	struct net_compiled c;
	struct policy p;

	(void)state;
	load(&p, "{}");
	compile_ok(&p, &c);
	assert_int_equal(c.nr, 0);
	assert_null(c.prefixes);
	assert_int_equal(c.sandbox_flags, SBX_SANDBOX_DNS);
	net_compiled_free(&c);
	policy_free(&p);
}

/* One entry per distinct prefix, keyed by policy id and 32 + the 128-bit prefix length. */
static void test_keys(void **state)
{
	struct net_compiled c;
	struct sbx_net_key k;
	struct policy p;

	(void)state;
	load(&p, "{\"network\": {\"allow\": [\"10.0.0.0/8:443\", \"2001:db8::/32\", \"10.0.0.0/8:80\","
		 " \"::ffff:10.0.0.0/104\", \"192.168.1.7\"]}}");
	compile_ok(&p, &c);
	assert_int_equal(c.nr, 3);
	/* sorted by address: IPv4 (::ffff:…) before 2001:db8:: */
	k = key("10.0.0.0/8");
	assert_memory_equal(&c.prefixes[0].key, &k, sizeof(k));
	assert_int_equal(c.prefixes[0].key.prefixlen, 32 + 96 + 8);
	assert_int_equal(c.prefixes[0].key.policy_id, 9);
	assert_int_equal(c.prefixes[0].key.addr[12], 10);
	assert_int_equal(c.prefixes[0].key.addr[13], 0);
	assert_int_equal(c.prefixes[1].key.prefixlen, 32 + 128);
	assert_int_equal(c.prefixes[2].key.prefixlen, 32 + 32);
	assert_int_equal(c.prefixes[2].key.addr[0], 0x20);
	/* the three rules on 10/8 (one written v4-mapped) share its entry */
	range(entry(&c, "10.0.0.0/8"), 0, 0, 79, A, 3);
	range(entry(&c, "10.0.0.0/8"), 1, 80, 80, A, 2);
	range(entry(&c, "10.0.0.0/8"), 2, 81, 442, A, 3);
	range(entry(&c, "10.0.0.0/8"), 3, 443, 443, A, 0);
	range(entry(&c, "10.0.0.0/8"), 4, 444, 65535, A, 3);
	assert_int_equal(entry(&c, "10.0.0.0/8")->nr, 5);
	range(entry(&c, "192.168.1.7/32"), 0, 0, 65535, A, 4);
	net_compiled_free(&c);
	policy_free(&p);
}

/* A deny on a short prefix beats an allow on a longer one, port by port. */
static void test_deny_wins_across_prefixes(void **state)
{
	const struct sbx_net_ports *t;
	struct net_compiled c;
	struct policy p;

	(void)state;
	load(&p, "{\"network\": {\"deny\": [\"10.0.0.0/8:22\"], \"allow\": [\"10.1.2.0/24\"]}}");
	compile_ok(&p, &c);
	assert_int_equal(c.nr, 2);
	t = entry(&c, "10.0.0.0/8");
	assert_int_equal(t->nr, 1);
	range(t, 0, 22, 22, D, 0);
	t = entry(&c, "10.1.2.0/24");
	assert_int_equal(t->nr, 3);
	range(t, 0, 0, 21, A, 1);
	range(t, 1, 22, 22, D, 0);
	range(t, 2, 23, 65535, A, 1);
	net_compiled_free(&c);
	policy_free(&p);
}

/* Nested prefixes: the most specific rule of the winning verdict names the range; siblings stay apart. */
static void test_nested(void **state)
{
	const struct sbx_net_ports *t;
	struct net_compiled c;
	struct policy p;

	(void)state;
	load(&p, "{\"network\": {\"allow\": [\"10.0.0.0/8:443\", \"10.1.0.0/16:443\"],"
		 " \"deny\": [\"10.1.2.0/24:443\", \"10.2.0.0/16:80\"], \"allowedDomains\": [\"10.1.2.3\"]}}");
	compile_ok(&p, &c);
	assert_int_equal(c.nr, 5);
	t = entry(&c, "10.0.0.0/8");
	assert_int_equal(t->nr, 1);
	range(t, 0, 443, 443, A, 0);
	t = entry(&c, "10.1.0.0/16");
	assert_int_equal(t->nr, 1);
	range(t, 0, 443, 443, A, 1);
	t = entry(&c, "10.1.2.0/24");
	assert_int_equal(t->nr, 1);
	range(t, 0, 443, 443, D, 2);
	t = entry(&c, "10.1.2.3/32");
	assert_int_equal(t->nr, 3);
	range(t, 0, 0, 442, A, 4);
	range(t, 1, 443, 443, D, 2);
	range(t, 2, 444, 65535, A, 4);
	/* 10.2/16 lies in 10/8 only: nothing of 10.1.x reaches it */
	t = entry(&c, "10.2.0.0/16");
	assert_int_equal(t->nr, 2);
	range(t, 0, 80, 80, D, 3);
	range(t, 1, 443, 443, A, 0);
	net_compiled_free(&c);
	policy_free(&p);
}

/* Neighbouring stretches with one verdict and one rule become one range. */
static void test_adjacent_merge(void **state)
{
	const struct sbx_net_ports *t;
	struct net_compiled c;
	struct policy p;

	(void)state;
	/* 80 is covered twice at one prefix: the first rule listed decides, so no split at 80/81 */
	load(&p, "{\"network\": {\"allow\": [\"10.0.0.0/8\", \"10.0.0.0/8:80\", \"10.9.0.0/16:1-100\","
		 " \"10.9.0.0/16:101-200\"], \"deny\": [\"10.9.0.0/16:150-160\"]}}");
	compile_ok(&p, &c);
	t = entry(&c, "10.0.0.0/8");
	assert_int_equal(t->nr, 1);
	range(t, 0, 0, 65535, A, 0);
	t = entry(&c, "10.9.0.0/16");
	assert_int_equal(t->nr, 6);
	range(t, 0, 0, 0, A, 0);
	range(t, 1, 1, 100, A, 2);
	range(t, 2, 101, 149, A, 3);	/* two rules: not merged with 1-100 */
	range(t, 3, 150, 160, D, 4);
	range(t, 4, 161, 200, A, 3);
	range(t, 5, 201, 65535, A, 0);
	net_compiled_free(&c);
	policy_free(&p);
}

/* "allow ::/0" holds ::ffff:0:0/96, so it reaches IPv4 prefixes too. */
static void test_v6_default_covers_v4(void **state)
{
	struct net_compiled c;
	struct policy p;

	(void)state;
	load(&p, "{\"network\": {\"allow\": [\"[::/0]:53\", \"10.0.0.0/8:80\"]}}");
	compile_ok(&p, &c);
	assert_int_equal(c.nr, 2);
	range(entry(&c, "::/0"), 0, 53, 53, A, 0);
	range(entry(&c, "10.0.0.0/8"), 0, 53, 53, A, 0);
	range(entry(&c, "10.0.0.0/8"), 1, 80, 80, A, 1);
	net_compiled_free(&c);
	policy_free(&p);
}

/* @n single-port allow rules on @cidr, odd ports from @first, as a JSON array body. */
static size_t port_list(char *buf, size_t sz, const char *cidr, int n, int first)
{
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += snprintf(buf + len, sz - len, "%s\"%s:%d\"", len ? ", " : "", cidr, first + 2 * i);
	return len;
}

static void test_range_limit(void **state)
{
	char json[4096], list[2048], err[256];
	struct net_compiled c;
	struct policy p;

	(void)state;
	port_list(list, sizeof(list), "10.0.0.0/8", SBX_NET_PORT_RANGES, 1);
	snprintf(json, sizeof(json), "{\"network\": {\"allow\": [%s]}}", list);
	load(&p, json);
	compile_ok(&p, &c);
	assert_int_equal(entry(&c, "10.0.0.0/8")->nr, SBX_NET_PORT_RANGES);
	net_compiled_free(&c);
	policy_free(&p);

	port_list(list, sizeof(list), "10.0.0.0/8", 20, 1);
	snprintf(json, sizeof(json), "{\"network\": {\"allow\": [%s]}}", list);
	load(&p, json);
	assert_int_equal(net_compile(&p, 9, &c, err, sizeof(err)), -E2BIG);
	assert_string_equal(err, "10.0.0.0/8: needs 20 port ranges, at most 16 (t.json:1:24)");
	assert_int_equal(c.nr, 0);
	assert_null(c.prefixes);
	policy_free(&p);

	/* 10 + 10 fit each alone; the /16 inherits the /8's and overflows, named by its own rule */
	port_list(list, sizeof(list), "10.0.0.0/8", 10, 1);
	snprintf(json, sizeof(json), "{\"network\": {\"allow\": [%s], \n\"deny\": [", list);
	port_list(list, sizeof(list), "10.1.0.0/16", 10, 1001);
	snprintf(json + strlen(json), sizeof(json) - strlen(json), "%s]}}", list);
	load(&p, json);
	assert_int_equal(net_compile(&p, 9, &c, err, sizeof(err)), -E2BIG);
	assert_string_equal(err, "10.1.0.0/16: needs 20 port ranges, at most 16 (t.json:2:10)");
	policy_free(&p);
}

static void test_sandbox_flags(void **state)
{
	static const struct {
		const char *net;
		__u32 flags;
	} cases[] = {
		{ "{}", SBX_SANDBOX_DNS },
		{ "{\"allowAllDomains\": true}", SBX_SANDBOX_NET_ALL },
		/* the resolver stays in the path to refuse the denied names */
		{ "{\"allowAllDomains\": true, \"deniedDomains\": [\"evil.example\"]}",
		  SBX_SANDBOX_NET_ALL | SBX_SANDBOX_DNS },
		{ "{\"allowAllDomains\": true, \"allowedDomains\": [\"a.example\"],"
		  " \"deniedDomains\": [\"10.0.0.1\"]}", SBX_SANDBOX_NET_ALL },
		{ "{\"allowLocalBinding\": true}", SBX_SANDBOX_DNS | SBX_SANDBOX_LOCAL_BIND },
		{ "{\"allowAllUnixSockets\": true}",
		  SBX_SANDBOX_DNS | SBX_SANDBOX_UNIX_ALL | SBX_SANDBOX_UNIX_ABSTRACT },
		{ "{\"allowAbstractUnixSockets\": true}", SBX_SANDBOX_DNS | SBX_SANDBOX_UNIX_ABSTRACT },
		{ "{\"allowRawSockets\": true}", SBX_SANDBOX_DNS | SBX_SANDBOX_RAW },
		{ "{\"allowLoopback\": true, \"allowAllDomains\": false}", SBX_SANDBOX_DNS },
	};
	char json[256];
	struct net_compiled c;
	struct policy p;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(json, sizeof(json), "{\"network\": %s}", cases[i].net);
		load(&p, json);
		compile_ok(&p, &c);
		if (c.sandbox_flags != cases[i].flags)
			fail_msg("%s: flags %#x, want %#x", cases[i].net, c.sandbox_flags, cases[i].flags);
		/* None of these has a name for a resolver to judge (the third: allowAllDomains' own flag). */
		if (net_wants_resolver(&p) != (i == 2))
			fail_msg("%s: wants a resolver: %d", cases[i].net, net_wants_resolver(&p));
		net_compiled_free(&c);
		policy_free(&p);
	}
}

/* The verdict on @name is @allowed by domain rule @rule (or a SBX_RULE_* id) on @lo-@hi. */
static void verdict(const struct policy *p, const char *name, bool allowed, __u32 rule,
		    unsigned lo, unsigned hi)
{
	struct domain_verdict v;

	memset(&v, 0xa5, sizeof(v));
	net_domain_verdict(p, name, &v);
	if (v.allowed != allowed || v.rule_id != rule)
		fail_msg("%s: allowed %d rule %#x, want %d %#x", name, v.allowed, v.rule_id, allowed, rule);
	if (allowed) {
		assert_int_equal(v.lo, lo);
		assert_int_equal(v.hi, hi);
	}
}

#define DOM(i) (SBX_RULE_DOMAIN_BASE + (i))

/* An attached cgroup needs the daemon's resolver when there are names and DNS goes to one. */
static void test_wants_resolver(void **state)
{
	static const struct {
		const char *net;
		bool wants;
	} cases[] = {
		{ "{\"allowedDomains\": [\"a.example\"]}", true },
		{ "{\"deniedDomains\": [\"a.example\"]}", true },
		{ "{\"allowedDomains\": [\"*.a.example:443\"], \"allowAllDomains\": false}", true },
		{ "{\"allowAllDomains\": true, \"deniedDomains\": [\"a.example\"]}", true },
		{ "{\"allowAllDomains\": true, \"allowedDomains\": [\"a.example\"]}", false },
		{ "{\"allowedDomains\": [\"10.0.0.1\", \"localhost\", \"[::1]\"]}", false },
		{ "{\"allow\": [\"10.0.0.0/8\"]}", false },
	};
	char json[256];
	struct policy p;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(json, sizeof(json), "{\"network\": %s}", cases[i].net);
		load(&p, json);
		if (net_wants_resolver(&p) != cases[i].wants)
			fail_msg("%s: wants a resolver: %d", cases[i].net, !cases[i].wants);
		policy_free(&p);
	}
}

static void test_domain_verdicts(void **state)
{
	struct policy p;

	(void)state;
	load(&p, "{\"network\": {\"allowedDomains\": [\"github.com\", \"*.example.com\","
		 " \"api.example.com:443\", \"*.eu.example.com:8443\", \"*.example.com:80\"],"
		 " \"deniedDomains\": [\"bad.example.com\", \"*.ads.example.com\"]}}");
	verdict(&p, "github.com", true, DOM(0), 0, 65535);
	verdict(&p, "GitHub.COM.", true, DOM(0), 0, 65535);
	verdict(&p, "www.github.com", false, SBX_RULE_DOMAIN_DEFAULT, 0, 0);
	verdict(&p, "xgithub.com", false, SBX_RULE_DOMAIN_DEFAULT, 0, 0);
	/* a wildcard is subdomains only, at any depth */
	verdict(&p, "example.com", false, SBX_RULE_DOMAIN_DEFAULT, 0, 0);
	verdict(&p, "www.example.com", true, DOM(1), 0, 65535);
	verdict(&p, "a.b.example.com", true, DOM(1), 0, 65535);
	verdict(&p, "notexample.com", false, SBX_RULE_DOMAIN_DEFAULT, 0, 0);
	/* exact beats wildcard, even with fewer ports; longer wildcard beats shorter */
	verdict(&p, "api.example.com", true, DOM(2), 443, 443);
	verdict(&p, "x.eu.example.com", true, DOM(3), 8443, 8443);
	verdict(&p, "eu.example.com", true, DOM(1), 0, 65535);
	/* denied beats any allow, exact or wildcard */
	verdict(&p, "bad.example.com", false, DOM(5), 0, 0);
	verdict(&p, "BAD.example.com.", false, DOM(5), 0, 0);
	verdict(&p, "x.ads.example.com", false, DOM(6), 0, 0);
	verdict(&p, "ads.example.com", true, DOM(1), 0, 65535);
	/* nothing a rule could match */
	verdict(&p, "", false, SBX_RULE_DOMAIN_DEFAULT, 0, 0);
	verdict(&p, ".", false, SBX_RULE_DOMAIN_DEFAULT, 0, 0);
	policy_free(&p);
}

static void test_domain_deny_all(void **state)
{
	struct policy p;

	(void)state;
	load(&p, "{\"network\": {\"allowedDomains\": [\"github.com\"], \"deniedDomains\": [\"*\"]}}");
	verdict(&p, "github.com", false, DOM(1), 0, 0);
	verdict(&p, "x.y", false, DOM(1), 0, 0);
	policy_free(&p);
	/* the most specific deny names the refusal */
	load(&p, "{\"network\": {\"deniedDomains\": [\"*\", \"*.example.com\", \"a.example.com\"]}}");
	verdict(&p, "a.example.com", false, DOM(2), 0, 0);
	verdict(&p, "b.example.com", false, DOM(1), 0, 0);
	verdict(&p, "example.org", false, DOM(0), 0, 0);
	policy_free(&p);
}

/* One name twice: the first listed counts. */
static void test_domain_first_listed(void **state)
{
	struct policy p;

	(void)state;
	load(&p, "{\"network\": {\"allowedDomains\": [\"a.example.com:443\", \"a.example.com:80\","
		 " \"*.example.com:22\", \"*.example.com\"]}}");
	verdict(&p, "a.example.com", true, DOM(0), 443, 443);
	verdict(&p, "b.example.com", true, DOM(2), 22, 22);
	policy_free(&p);
}

static void test_domain_allow_all(void **state)
{
	struct policy p;

	(void)state;
	load(&p, "{\"network\": {\"allowAllDomains\": true, \"allowedDomains\": [\"a.example.com:443\"],"
		 " \"deniedDomains\": [\"*.evil.example\"]}}");
	verdict(&p, "anything.example.org", true, SBX_RULE_DOMAIN_DEFAULT, 0, 65535);
	verdict(&p, "a.example.com", true, SBX_RULE_DOMAIN_DEFAULT, 0, 65535);
	verdict(&p, "x.evil.example", false, DOM(1), 0, 0);
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_deny_wins_across_prefixes),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_adjacent_merge),
		cmocka_unit_test(test_v6_default_covers_v4),
		cmocka_unit_test(test_range_limit),
		cmocka_unit_test(test_sandbox_flags),
		cmocka_unit_test(test_wants_resolver),
		cmocka_unit_test(test_domain_verdicts),
		cmocka_unit_test(test_domain_deny_all),
		cmocka_unit_test(test_domain_first_listed),
		cmocka_unit_test(test_domain_allow_all),
	};

	return cmocka_run_group_tests_name("netrules", tests, NULL, NULL);
}
