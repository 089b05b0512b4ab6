// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Policy files and rules: every key, every kind of error with its exact
 * FILE:LINE:COL message, patterns, path expansion, the mandatory set, the
 * presets and the sandbox-runtime example. Paths under /nonexistent-sbx…
 * do not exist, so path_resolve leaves them alone and the results are
 * the same on every machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <jansson.h>

#include "jsonloc.h"
#include "policy.h"
#include "sbx_abi.h"
#include "util.h"

#define HOME "/nonexistent-sbx-home/u"
#define CWD "/nonexistent-sbx/work"

static const struct policy_env env = { .home = HOME, .cwd = CWD };

static void norm(const char *in, const char *cwd, const char *want)
{
	char out[PATH_MAX];

	assert_int_equal(path_normalize(in, cwd, out, sizeof(out)), 0);
	assert_string_equal(out, want);
}

static void test_normalize(void **state)
{
	char out[8];

	(void)state;
	norm("/a/b/c", NULL, "/a/b/c");
	norm("//a///b/", NULL, "/a/b");
	norm("/a/./b/../c", NULL, "/a/c");
	norm("/../../a", NULL, "/a");
	norm("/", NULL, "/");
	norm("/a/..", NULL, "/");
	norm("rel/x", "/work", "/work/rel/x");
	norm("../up", "/work/dir", "/work/up");
	norm(".", "/work", "/work");
	assert_int_equal(path_normalize("", NULL, out, sizeof(out)), -22);
	assert_int_equal(path_normalize("rel", NULL, out, sizeof(out)), -22);
	assert_int_equal(path_normalize("/abcdefghij", NULL, out, sizeof(out)), -36);
}

/* A temp dir holding real/ and link -> real; removed by cleanup_tmp. */
struct tmp {
	char dir[64], real[PATH_MAX], link[PATH_MAX];
};

static void make_tmp(struct tmp *t)
{
	char p[PATH_MAX];

	snprintf(t->dir, sizeof(t->dir), "/tmp/sbx-unit-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(p, sizeof(p), "%s/real", t->dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(t->link, sizeof(t->link), "%s/link", t->dir);
	assert_int_equal(symlink(p, t->link), 0);
	assert_non_null(realpath(p, t->real));
}

static void cleanup_tmp(struct tmp *t)
{
	char p[PATH_MAX];

	unlink(t->link);
	snprintf(p, sizeof(p), "%s/real", t->dir);
	rmdir(p);
	rmdir(t->dir);
}

/* A rule written against a symlink protects what it points to. */
static void test_resolve_symlinked_prefix(void **state)
{
	char p[PATH_MAX], want[PATH_MAX];
	struct tmp t;

	(void)state;
	make_tmp(&t);
	snprintf(p, sizeof(p), "%s/not/yet/there", t.link);
	assert_int_equal(path_resolve(p, sizeof(p)), 0);
	snprintf(want, sizeof(want), "%s/not/yet/there", t.real);
	assert_string_equal(p, want);

	snprintf(p, sizeof(p), "/nonexistent-sbx-top/x");
	assert_int_equal(path_resolve(p, sizeof(p)), 0);
	assert_string_equal(p, "/nonexistent-sbx-top/x");
	cleanup_tmp(&t);
}

/* --- the position locator ------------------------------------------------------- */

static void linecol(const char *text, long off, int line, int col)
{
	struct jloc_pos pos = {};

	assert_true(off >= 0);
	jloc_advance(text, &pos, off);
	assert_int_equal(pos.line, line);
	assert_int_equal(pos.col, col);
}

static void test_jloc(void **state)
{
	/* A key with an escaped quote and brackets, nested containers, an escaped key, UTF-8. */
	const char *t = "{\n \"a\\\"]}\": [1, {\"b\": [\"x\", \"y\\\\\"]}],\n"
			"\t\"\\u0063\": \"\xc3\xa9\", \"d\": true, \"e\": []}";
	const struct jloc_step ab1[] = { { .key = "a\"]}" }, { .index = 1 }, { .key = "b" }, { .index = 1 } };
	const struct jloc_step c[] = { { .key = "c" } }, d[] = { { .key = "d" } }, e[] = { { .key = "e" } };
	const struct jloc_step missing[] = { { .key = "a\"]}" }, { .index = 2 } }, nokey[] = { { .key = "zz" } };
	struct jloc_pos pos = {};
	long off;

	(void)state;
	off = jloc_find(t, ab1, 4, false);
	assert_true(off > 0 && !strncmp(t + off, "\"y\\\\\"", 5));
	linecol(t, off, 2, 27);
	assert_int_equal(jloc_find(t, ab1, 1, true), 3);
	off = jloc_find(t, c, 1, false);
	assert_true(off > 0 && !strncmp(t + off, "\"\xc3\xa9\"", 4));
	linecol(t, off, 3, 12);
	/* Columns count characters as jansson does: é is one column. */
	linecol(t, jloc_find(t, d, 1, true), 3, 17);
	linecol(t, jloc_find(t, d, 1, false), 3, 22);
	assert_int_equal(jloc_first(t, jloc_find(t, e, 1, false)), -1);
	assert_int_equal(jloc_find(t, missing, 2, false), -1);
	assert_int_equal(jloc_find(t, nokey, 1, false), -1);
	assert_int_equal(jloc_find(t, ab1, 0, false), 0);
	/* Elements one after the other; the last has no next. */
	off = jloc_first(t, jloc_find(t, ab1, 3, false));
	assert_true(!strncmp(t + off, "\"x\"", 3));
	off = jloc_next(t, off);
	assert_true(!strncmp(t + off, "\"y", 2));
	assert_int_equal(jloc_next(t, off), -1);
	/* Moving backwards restarts from the top. */
	jloc_advance(t, &pos, (long)strlen(t));
	jloc_advance(t, &pos, 1);
	assert_int_equal(pos.line, 1);
	assert_int_equal(pos.col, 2);
}

/*
 * For every value in @text, found by walking the parsed document, the
 * locator points at text that parses to an equal value.
 */
static void check_all_values(const char *text, json_t *v, struct jloc_step *path, size_t depth)
{
	long off = jloc_find(text, path, depth, false);
	json_t *at;
	const char *key;
	json_t *m;
	size_t i;

	assert_true(off >= 0);
	at = json_loads(text + off, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, NULL);
	assert_non_null(at);
	assert_true(json_equal(at, v));
	json_decref(at);
	assert_true(depth < 16);
	json_object_foreach(v, key, m) {
		path[depth] = (struct jloc_step){ .key = key };
		check_all_values(text, m, path, depth + 1);
	}
	json_array_foreach(v, i, m) {
		path[depth] = (struct jloc_step){ .index = i };
		check_all_values(text, m, path, depth + 1);
	}
}

static void test_jloc_every_value(void **state)
{
	static const char *const docs[] = {
		"{}",
		"  [ ]  ",
		"{\"a\":{\"b\":{\"c\":[[],[[1]],{}]}},\"d\":-1.5e3,\"e\":null,\"f\":false}",
		"{\r\n\t\"s\" : \"\\\\\", \"t\" :\"\\\"}]{[\\\"\" ,\n \"u\":[\"\\u00e9\\n\", 0 , true ]}",
		"{\"\\\"k\": {\"x\\/y\": [\"]\", \"}\", \",\", \":\"]}, \"k\": 1, \"\": {\"\": [\"\"]}}",
		"[{\"\xc3\xa9\": [\"\xe2\x82\xac\", {\"z\": 1e-2}]}, 3, \"[{\"]",
	};
	struct jloc_step path[16];

	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		json_t *v = json_loads(docs[i], JSON_DECODE_ANY, NULL);

		if (!v)
			fail_msg("test document %zu is not JSON", i);
		check_all_values(docs[i], v, path, 0);
		json_decref(v);
	}
}

/* --- loading ------------------------------------------------------------------------ */

static void assert_empty(const struct policy *p)
{
	static const struct policy zero;

	assert_memory_equal(p, &zero, sizeof(zero));
}

static void load_ok(struct policy *p, struct policy_diag *d, const char *json)
{
	memset(p, 0, sizeof(*p));
	memset(d, 0, sizeof(*d));
	if (policy_load_string(p, "t.json", json, &env, d))
		fail_msg("unexpected error: %s", d->error);
}

static const struct policy_rule *rule(const struct policy *p, size_t i, enum rule_kind kind,
				      enum rule_scope scope, const char *path)
{
	assert_true(i < p->nr_rules);
	assert_int_equal(p->rules[i].kind, kind);
	assert_int_equal(p->rules[i].scope, scope);
	assert_string_equal(p->rules[i].path, path);
	return &p->rules[i];
}

/* @cidr in a net_rule's form, worked out here: IPv4 as ::ffff:a.b.c.d with 96 more bits. */
static void cidr_bytes(const char *cidr, __u8 addr[16], unsigned *plen)
{
	const char *slash = strchr(cidr, '/');
	char a[64];

	assert_non_null(slash);
	snprintf(a, sizeof(a), "%.*s", (int)(slash - cidr), cidr);
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, a, addr + 12) == 1) {
		addr[10] = addr[11] = 0xff;
		*plen = 96 + (unsigned)atoi(slash + 1);
	} else {
		assert_int_equal(inet_pton(AF_INET6, a, addr), 1);
		*plen = (unsigned)atoi(slash + 1);
	}
}

/* Net rule @i is @deny @cidr with ports @lo-@hi, and shows as @cidr. */
static const struct net_rule *net(const struct policy *p, size_t i, bool deny, const char *cidr,
				  unsigned lo, unsigned hi)
{
	const struct net_rule *r;
	unsigned plen;
	__u8 addr[16];
	char shown[64];

	assert_true(i < p->net.nr_rules);
	r = &p->net.rules[i];
	cidr_bytes(cidr, addr, &plen);
	assert_int_equal(r->deny, deny);
	assert_memory_equal(r->addr, addr, 16);
	assert_int_equal(r->plen, plen);
	assert_int_equal(r->lo, lo);
	assert_int_equal(r->hi, hi);
	policy_format_cidr(r->addr, r->plen, shown, sizeof(shown));
	assert_string_equal(shown, cidr);
	return r;
}

static const struct domain_rule *dom(const struct policy *p, size_t i, bool deny, bool wildcard,
				     const char *name, unsigned lo, unsigned hi)
{
	const struct domain_rule *d;

	assert_true(i < p->net.nr_domains);
	d = &p->net.domains[i];
	assert_int_equal(d->deny, deny);
	assert_int_equal(d->wildcard, wildcard);
	assert_string_equal(d->name, name);
	assert_int_equal(d->lo, lo);
	assert_int_equal(d->hi, hi);
	return d;
}

/* allowLoopback's four rules from @i on, with @text and @origin. */
static void loopback(const struct policy *p, size_t i, bool deny, unsigned lo, unsigned hi,
		     const char *text, const char *origin)
{
	static const char *const set[] = { "127.0.0.0/8", "::1/128", "0.0.0.0/32", "::/128" };

	for (size_t k = 0; k < 4; k++) {
		const struct net_rule *r = net(p, i + k, deny, set[k], lo, hi);

		assert_string_equal(r->text, text);
		assert_string_equal(r->origin, origin);
	}
}

static void test_every_key(void **state)
{
	const char *json =
		"{\n"
		"  \"version\": 1,\n"
		"  \"description\": \"all keys\",\n"
		"  \"mode\": \"audit\",\n"
		"  \"filesystem\": {\n"
		"    \"denyRead\": [\"~/.ssh\"],\n"
		"    \"allowRead\": [\"~/.ssh/known_hosts\"],\n"
		"    \"allowWrite\": [\".\"],\n"
		"    \"denyWrite\": [\"**/.env\"],\n"
		"    \"allowGitConfig\": true\n"
		"  },\n"
		"  \"network\": {\n"
		"    \"allowedDomains\": [\"github.com\", \"*.npmjs.org:443\"],\n"
		"    \"deniedDomains\": [\"*\"],\n"
		"    \"allowUnixSockets\": [\"~/agent.sock\"],\n"
		"    \"allowAllUnixSockets\": true,\n"
		"    \"allowLocalBinding\": true,\n"
		"    \"allowAllDomains\": false,\n"
		"    \"allow\": [\"10.0.0.0/8:443\", \"[2001:db8::/32]:8000-8999\"],\n"
		"    \"deny\": [\"169.254.169.254\"],\n"
		"    \"allowAbstractUnixSockets\": true,\n"
		"    \"allowLoopback\": true\n"
		"  },\n"
		"  \"limits\": { \"memory\": \"1G\",  \"pids\": 100 }\n"
		"}\n";
	struct policy_diag d;
	struct policy p;
	const struct policy_rule *r;

	(void)state;
	load_ok(&p, &d, json);
	assert_string_equal(p.name, "t.json");
	assert_string_equal(p.description, "all keys");
	assert_int_equal(p.mode, POLICY_AUDIT);
	assert_true(p.allow_git_config);
	assert_int_equal(p.nr_rules, 5);	/* + allowUnixSockets */
	r = rule(&p, 0, RULE_DENY_READ, RULE_ABSOLUTE, HOME "/.ssh");
	assert_string_equal(r->text, "denyRead ~/.ssh");
	assert_string_equal(r->origin, "t.json:6:18");
	r = rule(&p, 1, RULE_ALLOW_READ, RULE_ABSOLUTE, HOME "/.ssh/known_hosts");
	assert_string_equal(r->text, "allowRead ~/.ssh/known_hosts");
	r = rule(&p, 2, RULE_ALLOW_WRITE, RULE_ABSOLUTE, CWD);
	assert_string_equal(r->text, "allowWrite .");
	assert_string_equal(r->origin, "t.json:8:20");
	r = rule(&p, 3, RULE_DENY_WRITE, RULE_ANY_DEPTH, ".env");
	assert_string_equal(r->text, "denyWrite **/.env");

	r = rule(&p, 4, RULE_ALLOW_UNIX, RULE_ABSOLUTE, HOME "/agent.sock");
	assert_string_equal(r->text, "allowUnixSockets ~/agent.sock");
	assert_string_equal(r->origin, "t.json:15:26");

	assert_int_equal(p.net.nr_domains, 3);
	assert_string_equal(dom(&p, 0, false, false, "github.com", 0, 65535)->origin, "t.json:13:24");
	assert_string_equal(dom(&p, 1, false, true, "npmjs.org", 443, 443)->text,
			    "allowedDomains *.npmjs.org:443");
	assert_string_equal(dom(&p, 2, true, true, "", 0, 65535)->text, "deniedDomains *");
	assert_int_equal(p.net.nr_rules, 7);
	assert_string_equal(net(&p, 0, false, "10.0.0.0/8", 443, 443)->origin, "t.json:19:15");
	assert_string_equal(p.net.rules[0].text, "allow 10.0.0.0/8:443");
	assert_string_equal(net(&p, 1, false, "2001:db8::/32", 8000, 8999)->text,
			    "allow [2001:db8::/32]:8000-8999");
	assert_string_equal(net(&p, 2, true, "169.254.169.254/32", 0, 65535)->text,
			    "deny 169.254.169.254");
	loopback(&p, 3, false, 0, 65535, "allowLoopback", "t.json:22:22");
	assert_true(p.net.allow_all_unix_sockets);
	assert_true(p.net.allow_local_binding);
	assert_false(p.net.allow_all_domains);
	assert_true(p.net.allow_abstract_unix_sockets);
	assert_true(p.net.allow_loopback);
	assert_false(p.net.allow_raw_sockets);
	assert_int_equal(p.limits.memory_max, 1LL << 30);
	assert_int_equal(p.limits.pids_max, 100);
	assert_int_equal(d.nr_warnings, 0);
	assert_string_equal(policy_rule_text(&p, 3), "denyWrite **/.env");
	assert_string_equal(policy_rule_text(&p, 4), "allowUnixSockets ~/agent.sock");
	assert_null(policy_rule_text(&p, 5));
	assert_null(policy_rule_text(&p, SBX_RULE_NONE));
	assert_null(policy_rule_text(&p, SBX_RULE_DOMAIN_DEFAULT));
	assert_string_equal(policy_rule_text(&p, SBX_RULE_NET_BASE), "allow 10.0.0.0/8:443");
	assert_string_equal(policy_rule_text(&p, SBX_RULE_NET_BASE + 6), "allowLoopback");
	assert_null(policy_rule_text(&p, SBX_RULE_NET_BASE + 7));
	assert_string_equal(policy_rule_text(&p, SBX_RULE_DOMAIN_BASE + 2), "deniedDomains *");
	assert_null(policy_rule_text(&p, SBX_RULE_DOMAIN_BASE + 3));
	policy_free(&p);
	assert_empty(&p);
}

/* The limits of a policy without a "limits" object: nothing set, oom.group on. */
static void assert_no_limits(const struct sbx_limits *l)
{
	struct sbx_limits want;

	limits_init(&want);
	assert_memory_equal(l, &want, sizeof(want));
}

static void test_defaults(void **state)
{
	struct policy_diag d;
	struct policy p;

	(void)state;
	load_ok(&p, &d, "{}");
	assert_int_equal(p.mode, POLICY_ENFORCE);
	assert_false(p.allow_git_config);
	assert_int_equal(p.nr_rules, 0);
	assert_null(p.description);
	assert_no_limits(&p.limits);
	policy_free(&p);
	load_ok(&p, &d, "{\"mode\": \"enforce\", \"filesystem\": {}, \"network\": {}}");
	assert_int_equal(p.mode, POLICY_ENFORCE);
	policy_free(&p);
}

/* The call fails with exactly @want, and leaves the policy and the warnings as they were. */
static void expect_error_env(const char *json, const struct policy_env *e, const char *want)
{
	struct policy_diag d = {};
	struct policy p = {};

	assert_int_equal(policy_load_string(&p, "t.json", json, e, &d), -EINVAL);
	assert_string_equal(d.error, want);
	assert_int_equal(d.nr_warnings, 0);
	assert_empty(&p);
}

static void expect_error(const char *json, const char *want)
{
	expect_error_env(json, &env, want);
}

static void test_syntax_errors(void **state)
{
	(void)state;
	expect_error("{\"filesystem\": {\"denyRead\": [\"a\",]}}",
		     "t.json:1:34: invalid JSON: unexpected token near ']'");
	expect_error("{\n  \"mode\": \"audit\",\n  \"mode\": \"enforce\"\n}",
		     "t.json:3:8: invalid JSON: duplicate object key near '\"mode\"'");
	expect_error("", "t.json:1:1: invalid JSON: '[' or '{' expected near end of file");
	expect_error("[1]", "t.json:1:1: a policy is a JSON object, not an array");
	/* jansson points at the last character of the token it stopped at. */
	expect_error("  \"x\"", "t.json:1:5: invalid JSON: '[' or '{' expected near '\"x\"'");
}

/* "acceptMissing": hooks a policy may run without; only names of hooks the programs use. */
static void test_accept_missing(void **state)
{
	struct policy p = {};
	struct policy_diag d = {};
	(void)state;
	assert_int_equal(policy_load_string(&p, "t.json", "{\"acceptMissing\": [\"perf_event_open\", \"bpf\", "
					    "\"perf_event_open\"]}", &env, &d), 0);
	assert_int_equal(p.nr_accept_missing, 2);
	assert_string_equal(p.accept_missing[0], "perf_event_open");
	assert_string_equal(p.accept_missing[1], "bpf");
	assert_null(p.accept_missing[2]);
	assert_int_equal(policy_accept_missing(&p, "cgroup/connect4"), 0);
	assert_int_equal(p.nr_accept_missing, 3);
	assert_int_equal(policy_accept_missing(&p, "no_such_hook"), -ENOENT);
	assert_int_equal(p.nr_accept_missing, 3);
	policy_free(&p);
	expect_error("{\n  \"acceptMissing\": [\"bpf\", \"perf_event_opn\"]\n}",
		     "t.json:2:28: 'acceptMissing[1]': \"perf_event_opn\" is not a hook of sbx-bpf's programs "
		     "(see 'sbx-bpf hooks')");
	expect_error("{\"acceptMissing\": \"bpf\"}",
		     "t.json:1:19: 'acceptMissing' must be an array of strings, not a string");
}

/* --accept-missing's list: any length (every hook at once is longer than a path), the bad hook named. */
static void test_accept_missing_list(void **state)
{
	static const char *const all = "file_open,file_receive,file_permission,path_mknod,path_mkdir,"
		"path_rmdir,path_unlink,path_symlink,path_link,path_rename,path_truncate,path_chmod,path_chown,"
		"inode_setattr,inode_setxattr,inode_removexattr,sb_mount,move_mount,sb_umount,sb_pivotroot,"
		"file_ioctl,unix_stream_connect,unix_may_send";
	struct policy p = {};
	char bad[64] = "";
	(void)state;
	assert_true(strlen(all) > 256);
	assert_int_equal(policy_accept_missing_list(&p, all, bad, sizeof(bad)), 0);
	assert_int_equal(p.nr_accept_missing, 23);
	assert_string_equal(p.accept_missing[22], "unix_may_send");
	assert_int_equal(policy_accept_missing_list(&p, "bpf,unix_stream_con,capable", bad, sizeof(bad)), -ENOENT);
	assert_string_equal(bad, "unix_stream_con");
	assert_int_equal(p.nr_accept_missing, 24);	/* bpf, before the bad one */
	policy_free(&p);
}

static void test_unknown_keys(void **state)
{
	(void)state;
	expect_error("{\n  \"filesystem\": {\n    \"denyRaed\": []\n  }\n}",
		     "t.json:3:5: unknown key 'denyRaed' in 'filesystem' (did you mean 'denyRead'?)");
	expect_error("{\"filesystme\": {}}",
		     "t.json:1:2: unknown key 'filesystme' at the top level (did you mean 'filesystem'?)");
	expect_error("{\"network\": {\"allowedDomain\": []}}",
		     "t.json:1:14: unknown key 'allowedDomain' in 'network' (did you mean 'allowedDomains'?)");
	expect_error("{\"network\": {\"httpproxyport\": 1}}",
		     "t.json:1:14: unknown key 'httpproxyport' in 'network' (did you mean 'httpProxyPort'?)");
	expect_error("{\"Mode\": \"audit\"}",
		     "t.json:1:2: unknown key 'Mode' at the top level (did you mean 'mode'?)");
	/* Columns count characters: "é" is one. */
	expect_error("{\"description\": \"\xc3\xa9\", \"zzz\": 1}",
		     "t.json:1:22: unknown key 'zzz' at the top level (known keys: version, "
		     "description, mode, filesystem, network, limits, credentials, acceptMissing)");
	expect_error("{\"credentials\": {\"files\": [{\"path\": \"~/.netrc\", \"mdoe\": \"deny\"}]}}",
		     "t.json:1:49: unknown key 'mdoe' in 'credentials.files[0]' (did you mean 'mode'?)");
}

static void test_type_errors(void **state)
{
	(void)state;
	expect_error("{\"filesystem\": {\"denyRead\": \"~/.ssh\"}}",
		     "t.json:1:29: 'filesystem.denyRead' must be an array of strings, not a string");
	expect_error("{\"filesystem\": {\"denyRead\": [\"/a\", 3]}}",
		     "t.json:1:36: 'filesystem.denyRead[1]' must be a string, not a number");
	expect_error("{\"filesystem\": {\"allowWrite\": [\"\"]}}",
		     "t.json:1:32: 'filesystem.allowWrite[0]' is an empty string");
	expect_error("{\"filesystem\": {\"allowGitConfig\": \"yes\"}}",
		     "t.json:1:35: 'filesystem.allowGitConfig' must be true or false, not a string");
	expect_error("{\"filesystem\": []}", "t.json:1:16: 'filesystem' must be an object, not an array");
	expect_error("{\"network\": {\"allowLoopback\": 1}}",
		     "t.json:1:31: 'network.allowLoopback' must be true or false, not a number");
	expect_error("{\"version\": 2}",
		     "t.json:1:13: 'version' 2 is not supported (this sbx-bpf reads version 1)");
	expect_error("{\"version\": \"1\"}", "t.json:1:13: 'version' must be the integer 1, not a string");
	expect_error("{\"mode\": \"strict\"}",
		     "t.json:1:10: 'mode' must be \"enforce\" or \"audit\", not \"strict\"");
	expect_error("{\"mode\": null}", "t.json:1:10: 'mode' must be \"enforce\" or \"audit\", not null");
	expect_error("{\"limits\": []}", "t.json:1:12: 'limits' must be an object, not an array");
	expect_error("{\"description\": 5}", "t.json:1:17: 'description' must be a string, not a number");
	expect_error("{\"credentials\": {\"files\": [{\"path\": \"~/.netrc\"}]}}",
		     "t.json:1:28: 'credentials.files[0]' needs both \"path\" and \"mode\"");
	expect_error("{\"credentials\": {\"files\": [{\"path\": \"~/.netrc\", \"mode\": \"hide\"}]}}",
		     "t.json:1:57: 'credentials.files[0].mode' must be \"deny\" or \"mask\", not \"hide\"");
	expect_error("{\"credentials\": {\"files\": [\"~/.netrc\"]}}",
		     "t.json:1:28: 'credentials.files[0]' must be an object, not a string");
}

/* The first element of filesystem.denyRead in a document, for pattern tests. */
static void expect_pattern_error(const char *pat, const char *why)
{
	char json[512], want[1024];

	snprintf(json, sizeof(json), "{\"filesystem\": {\"denyRead\": [\"%s\"]}}", pat);
	snprintf(want, sizeof(want), "t.json:1:30: '%s': %s", pat, why);
	expect_error(json, want);
}

#define GLOB_HELP "(only a leading '**/' and a trailing '/**' are supported)"

static void test_patterns_rejected(void **state)
{
	(void)state;
	expect_pattern_error("src/*.js", "unsupported glob '*' " GLOB_HELP);
	expect_pattern_error("/a/**/b", "unsupported glob '*' " GLOB_HELP);
	expect_pattern_error("**", "unsupported glob '*' " GLOB_HELP);
	expect_pattern_error("*", "unsupported glob '*' " GLOB_HELP);
	expect_pattern_error("/etc/passwd?", "unsupported glob '?' " GLOB_HELP);
	expect_pattern_error("/a/[ab]", "unsupported glob '[' " GLOB_HELP);
	expect_pattern_error("/a/b]", "unsupported glob ']' " GLOB_HELP);
	expect_pattern_error("/a/{b,c}", "unsupported glob '{' " GLOB_HELP);
	expect_pattern_error("~/x/**/**", "unsupported glob '*' " GLOB_HELP);
	expect_pattern_error("**/*.pem", "unsupported glob '*' " GLOB_HELP);
	expect_pattern_error("**/a/**/b", "unsupported glob '*' " GLOB_HELP);
	expect_pattern_error("**/", "'**/' must be followed by a name");
	expect_pattern_error("**/**", "unsupported glob '*' " GLOB_HELP);
	expect_pattern_error("**/a//b", "component '' is not allowed after '**/'");
	expect_pattern_error("**/a/../b", "component '..' is not allowed after '**/'");
	expect_pattern_error("**/./a", "component '.' is not allowed after '**/'");
	expect_pattern_error("**/a/b/c/d/e", "at most 4 components after '**/'");
	expect_pattern_error("~root/x", "'~USER' is not supported; write the path out");
	expect_pattern_error("~x", "'~USER' is not supported; write the path out");
}

static void test_glob_error_position(void **state)
{
	(void)state;
	expect_error("{\n"
		     "  \"filesystem\": {\n"
		     "    \"denyRead\": [\n"
		     "      \"~/.ssh\",\n"
		     "      \"src/*.js\"\n"
		     "    ]\n"
		     "  }\n"
		     "}\n",
		     "t.json:5:7: 'src/*.js': unsupported glob '*' " GLOB_HELP);
}

/* One pattern through a whole document; returns the compiled rule's path and scope. */
static void expect_pattern(const char *pat, enum rule_scope scope, const char *path)
{
	char json[512];
	struct policy_diag d;
	struct policy p;

	snprintf(json, sizeof(json), "{\"filesystem\": {\"denyRead\": [\"%s\"]}}", pat);
	load_ok(&p, &d, json);
	assert_int_equal(p.nr_rules, 1);
	rule(&p, 0, RULE_DENY_READ, scope, path);
	policy_free(&p);
}

static void test_patterns_accepted(void **state)
{
	(void)state;
	expect_pattern("/nonexistent-sbx/a", RULE_ABSOLUTE, "/nonexistent-sbx/a");
	expect_pattern("/nonexistent-sbx/a/", RULE_ABSOLUTE, "/nonexistent-sbx/a");
	expect_pattern("/nonexistent-sbx/a/./b/../c", RULE_ABSOLUTE, "/nonexistent-sbx/a/c");
	expect_pattern("/", RULE_ABSOLUTE, "/");
	/* A trailing "/" "**" is the directory itself. */
	expect_pattern("/nonexistent-sbx/a/**", RULE_ABSOLUTE, "/nonexistent-sbx/a");
	expect_pattern("/**", RULE_ABSOLUTE, "/");
	expect_pattern("~/**", RULE_ABSOLUTE, HOME);
	expect_pattern("./**", RULE_ABSOLUTE, CWD);
	expect_pattern("src/**", RULE_ABSOLUTE, CWD "/src");
	/* Any depth. */
	expect_pattern("**/.env", RULE_ANY_DEPTH, ".env");
	expect_pattern("**/.git/hooks", RULE_ANY_DEPTH, ".git/hooks");
	expect_pattern("**/node_modules/**", RULE_ANY_DEPTH, "node_modules");
	expect_pattern("**/a/b/c/d", RULE_ANY_DEPTH, "a/b/c/d");
	expect_pattern("**/a/b/c/d/**", RULE_ANY_DEPTH, "a/b/c/d");
	expect_pattern("**/secrets/", RULE_ANY_DEPTH, "secrets");
	/* Home and relative paths. */
	expect_pattern("~", RULE_ABSOLUTE, HOME);
	expect_pattern("~/", RULE_ABSOLUTE, HOME);
	expect_pattern("~/.ssh/../.aws", RULE_ABSOLUTE, HOME "/.aws");
	expect_pattern(".", RULE_ABSOLUTE, CWD);
	expect_pattern("src/", RULE_ABSOLUTE, CWD "/src");
	expect_pattern("../other", RULE_ABSOLUTE, "/nonexistent-sbx/other");
	expect_pattern("a~b", RULE_ABSOLUTE, CWD "/a~b");
}

static void test_relative_needs_cwd(void **state)
{
	const struct policy_env no_cwd = { .home = HOME }, no_home = { .cwd = CWD },
				rel_home = { .home = "home", .cwd = CWD };

	(void)state;
	expect_error_env("{\"filesystem\": {\"allowWrite\": [\"src\"]}}", &no_cwd,
			 "t.json:1:32: 'src': relative path, but no working directory is known");
	expect_error_env("{\"filesystem\": {\"allowWrite\": [\"~/x\"]}}", &no_home,
			 "t.json:1:32: '~/x': no home directory is known for '~'");
	expect_error_env("{\"filesystem\": {\"allowWrite\": [\"~/x\"]}}", &rel_home,
			 "t.json:1:32: '~/x': no home directory is known for '~'");
	expect_error_env("{\"filesystem\": {\"allowWrite\": [\"~/x\"]}}", NULL,
			 "t.json:1:32: '~/x': no home directory is known for '~'");
}

/* A rule through a symlinked directory lands on the real one; so does ~ and the cwd. */
static void test_symlinked_rules(void **state)
{
	const char *json = "{\"filesystem\": {\"denyRead\": [\"~/secret\", \"x/y\", \"%s/z\"]}}";
	char doc[PATH_MAX * 2], want[PATH_MAX];
	struct policy_env e;
	struct policy_diag d = {};
	struct policy p = {};
	struct tmp t;

	(void)state;
	make_tmp(&t);
	e.home = t.link;
	e.cwd = t.link;
	snprintf(doc, sizeof(doc), json, t.link);
	assert_int_equal(policy_load_string(&p, "t.json", doc, &e, &d), 0);
	assert_int_equal(p.nr_rules, 3);
	snprintf(want, sizeof(want), "%s/secret", t.real);
	assert_string_equal(p.rules[0].path, want);
	snprintf(want, sizeof(want), "%s/x/y", t.real);
	assert_string_equal(p.rules[1].path, want);
	snprintf(want, sizeof(want), "%s/z", t.real);
	assert_string_equal(p.rules[2].path, want);
	/* The text keeps what was written, the link. */
	snprintf(want, sizeof(want), "denyRead %s/z", t.link);
	assert_string_equal(p.rules[2].text, want);
	policy_free(&p);
	cleanup_tmp(&t);
}

/*
 * Rules under one directory resolve as path_resolve() resolves each alone,
 * whatever the leaf: a file, nothing, a symlink, a dangling one, a path
 * under a file; through a symlinked directory and in the real one.
 */
static void test_rules_in_one_directory(void **state)
{
	static const char *const leaves[] = { "file", "missing", "tolink", "dangling", "file/under",
					      "missing/deeper", "tolink/inside" };
	char doc[PATH_MAX * 16], f[PATH_MAX], want[PATH_MAX];
	const char *dirs[2];
	struct policy_diag d = {};
	struct policy p = {};
	struct tmp t;
	size_t len, n = 0;

	(void)state;
	make_tmp(&t);
	snprintf(f, sizeof(f), "%s/file", t.real);
	assert_int_equal(close(creat(f, 0600)), 0);
	snprintf(f, sizeof(f), "%s/tolink", t.real);
	assert_int_equal(symlink(t.dir, f), 0);
	snprintf(f, sizeof(f), "%s/dangling", t.real);
	assert_int_equal(symlink("/nonexistent-sbx-target", f), 0);
	dirs[0] = t.link;
	dirs[1] = t.real;
	len = (size_t)snprintf(doc, sizeof(doc), "{\"filesystem\": {\"denyRead\": [");
	for (size_t i = 0; i < 2; i++)
		for (size_t j = 0; j < ARRAY_SIZE(leaves); j++)
			len += (size_t)snprintf(doc + len, sizeof(doc) - len, "%s\"%s/%s\"", len > 30 ? ", " : "",
						dirs[i], leaves[j]);
	snprintf(doc + len, sizeof(doc) - len, "]}}");
	assert_int_equal(policy_load_string(&p, "t.json", doc, &env, &d), 0);
	assert_int_equal(p.nr_rules, 2 * ARRAY_SIZE(leaves));
	for (size_t i = 0; i < 2; i++)
		for (size_t j = 0; j < ARRAY_SIZE(leaves); j++, n++) {
			snprintf(want, sizeof(want), "%s/%s", dirs[i], leaves[j]);
			assert_int_equal(path_resolve(want, sizeof(want)), 0);
			assert_string_equal(p.rules[n].path, want);
		}
	/* What path_resolve() gives, spelled out for the cases that differ from the text. */
	snprintf(want, sizeof(want), "%s/inside", t.dir);
	assert_string_equal(p.rules[6].path, want);
	snprintf(want, sizeof(want), "%s/dangling", t.real);
	assert_string_equal(p.rules[3].path, want);
	policy_free(&p);
	unlink(f);
	snprintf(f, sizeof(f), "%s/tolink", t.real);
	unlink(f);
	snprintf(f, sizeof(f), "%s/file", t.real);
	unlink(f);
	cleanup_tmp(&t);
}

/* /dev/stdout and /dev/fd/N are what the descriptor is open on; pipes are not paths. */
static void test_stdio_paths(void **state)
{
	char pat[64], file[] = "/tmp/sbx-unit-fd-XXXXXX", real[PATH_MAX], target[PATH_MAX];
	struct policy_diag d = {};
	struct policy p = {};
	int fds[2], fd;
	ssize_t n;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	snprintf(pat, sizeof(pat), "/proc/self/fd/%d", fds[1]);
	assert_int_equal(policy_add_rule(&p, RULE_ALLOW_WRITE, pat, "--allow-write", &env, &d), 0);
	snprintf(pat, sizeof(pat), "/dev/fd/%d", fds[0]);
	assert_int_equal(policy_add_rule(&p, RULE_ALLOW_WRITE, pat, "--allow-write", &env, &d), 0);
	assert_int_equal(p.nr_rules, 0);
	/* Not open: nothing to judge either. */
	assert_int_equal(policy_add_rule(&p, RULE_ALLOW_WRITE, "/dev/fd/987", "--allow-write", &env, &d), 0);
	assert_int_equal(p.nr_rules, 0);

	fd = mkstemp(file);
	assert_true(fd >= 0);
	assert_non_null(realpath(file, real));
	snprintf(pat, sizeof(pat), "/dev/fd/%d", fd);
	assert_int_equal(policy_add_rule(&p, RULE_ALLOW_WRITE, pat, "--allow-write", &env, &d), 0);
	assert_int_equal(p.nr_rules, 1);
	assert_string_equal(p.rules[0].path, real);
	assert_true(!strcmp(p.rules[0].text, "allowWrite /dev/fd/") ||
		    !strncmp(p.rules[0].text + strlen("allowWrite "), pat, strlen(pat)));

	/* /dev/stdout: whatever fd 1 of this process is. */
	n = readlink("/proc/self/fd/1", target, sizeof(target) - 1);
	assert_int_equal(policy_add_rule(&p, RULE_ALLOW_WRITE, "/dev/stdout", "--allow-write", &env, &d), 0);
	if (n > 0 && (target[n] = '\0', target[0] == '/')) {
		assert_int_equal(p.nr_rules, 2);
		assert_string_equal(p.rules[1].path, target);
		assert_string_equal(p.rules[1].text, "allowWrite /dev/stdout");
	} else {
		assert_int_equal(p.nr_rules, 1);
	}
	policy_free(&p);
	close(fd);
	unlink(file);
	close(fds[0]);
	close(fds[1]);
}

static void test_add_rule(void **state)
{
	struct policy_diag d = {};
	struct policy p = {};

	(void)state;
	assert_int_equal(policy_add_rule(&p, RULE_DENY_READ, "~/.ssh", "--deny-read", &env, &d), 0);
	assert_int_equal(policy_add_rule(&p, RULE_ALLOW_READ, "**/public", "--allow-read", &env, &d), 0);
	assert_int_equal(p.nr_rules, 2);
	assert_string_equal(rule(&p, 0, RULE_DENY_READ, RULE_ABSOLUTE, HOME "/.ssh")->text,
			    "denyRead ~/.ssh");
	assert_string_equal(p.rules[0].origin, "--deny-read");
	rule(&p, 1, RULE_ALLOW_READ, RULE_ANY_DEPTH, "public");
	assert_string_equal(p.rules[1].text, "allowRead **/public");

	/* Errors leave the policy as it was. */
	assert_int_equal(policy_add_rule(&p, RULE_DENY_READ, "src/*.c", "--deny-read", &env, &d), -EINVAL);
	assert_string_equal(d.error, "--deny-read: 'src/*.c': unsupported glob '*' " GLOB_HELP);
	assert_int_equal(policy_add_rule(&p, RULE_DENY_READ, "", "--deny-read", &env, &d), -EINVAL);
	assert_string_equal(d.error, "--deny-read: empty path");
	assert_int_equal(policy_add_rule(&p, RULE_MANDATORY, "/x", "--x", &env, &d), -EINVAL);
	assert_int_equal(policy_add_rule(&p, RULE_DENY_READ, "/x", "--deny-read", &env, NULL), 0);
	assert_int_equal(p.nr_rules, 3);
	policy_free(&p);
}

static void test_network_values(void **state)
{
	static const char *const good_domains[] = {
		"example.com", "*.example.com", "a.b.example.com:8443", "localhost", "localhost:3000",
		"[::1]", "[2001:db8::1]:443", "10.1.2.3", "my_host.internal",
	};
	static const char *const good_cidrs[] = {
		"10.0.0.0/8", "10.1.2.3", "0.0.0.0/0", "192.168.1.0/24:443", "10.0.0.0/8:8000-8999",
		"2001:db8::/32", "::1", "[2001:db8::/32]:443", "[::/0]:1-65535", "[fe80::1]",
	};
	char json[256];
	struct policy_diag d;
	struct policy p;

	(void)state;
	for (size_t i = 0; i < sizeof(good_domains) / sizeof(good_domains[0]); i++) {
		snprintf(json, sizeof(json), "{\"network\": {\"allowedDomains\": [\"%s\"]}}", good_domains[i]);
		load_ok(&p, &d, json);
		policy_free(&p);
	}
	for (size_t i = 0; i < sizeof(good_cidrs) / sizeof(good_cidrs[0]); i++) {
		snprintf(json, sizeof(json), "{\"network\": {\"deny\": [\"%s\"]}}", good_cidrs[i]);
		load_ok(&p, &d, json);
		assert_int_equal(p.net.nr_rules, 1);
		assert_true(p.net.rules[0].deny);
		assert_string_equal(p.net.rules[0].text + strlen("deny "), good_cidrs[i]);
		policy_free(&p);
	}
	load_ok(&p, &d, "{\"network\": {\"deniedDomains\": [\"*\", \"*:22\"]}}");
	policy_free(&p);
}

#define DOMAIN_HELP "is not a domain pattern: use 'example.com' or '*.example.com', optionally with ':PORT'"

static void expect_domain_error(const char *key, const char *dom)
{
	char json[256], want[512];
	bool denied = !strcmp(key, "deniedDomains");

	snprintf(json, sizeof(json), "{\"network\": {\"%s\": [\"%s\"]}}", key, dom);
	snprintf(want, sizeof(want), "t.json:1:%d: '%s' " DOMAIN_HELP "%s; '*.com'%s is too broad",
		 (int)(strlen(key) + 19), dom, denied ? ", or '*'" : "", denied ? "" : " or '*'");
	expect_error(json, want);
}

static void expect_cidr_error(const char *cidr, const char *why)
{
	char json[256], want[512];

	snprintf(json, sizeof(json), "{\"network\": {\"allow\": [\"%s\"]}}", cidr);
	snprintf(want, sizeof(want), "t.json:1:24: '%s': %s", cidr, why);
	expect_error(json, want);
}

static void test_network_errors(void **state)
{
	(void)state;
	expect_domain_error("allowedDomains", "*");
	expect_domain_error("allowedDomains", "*.com");
	expect_domain_error("allowedDomains", "*:443");
	expect_domain_error("allowedDomains", "com");
	expect_domain_error("allowedDomains", "https://example.com");
	expect_domain_error("allowedDomains", "example.com/path");
	expect_domain_error("allowedDomains", "example.com:0");
	expect_domain_error("allowedDomains", "example.com:65536");
	expect_domain_error("allowedDomains", "2001:db8::1");
	expect_domain_error("allowedDomains", "[not-v6]");
	expect_domain_error("allowedDomains", "a..example.com");
	expect_domain_error("allowedDomains", ".example.com");
	expect_domain_error("allowedDomains", "*.*.example.com");
	expect_domain_error("allowedDomains", "ex ample.com");
	expect_domain_error("deniedDomains", "*.com");
	expect_domain_error("deniedDomains", "**");
	expect_error("{\"network\": {\"allowedDomains\": \"github.com\"}}",
		     "t.json:1:32: 'network.allowedDomains' must be an array of strings, not a string");

	expect_cidr_error("10.0.0.1/8", "address bits set beyond the /8 prefix (did you mean '10.0.0.0/8'?)");
	expect_cidr_error("2001:db8::1/32",
			  "address bits set beyond the /32 prefix (did you mean '2001:db8::/32'?)");
	expect_cidr_error("10.0.0.0/33", "prefix length must be 0-32");
	expect_cidr_error("10.0.0.0/", "prefix length must be 0-32");
	expect_cidr_error("::/129", "prefix length must be 0-128");
	expect_cidr_error("10.0.0.256", "'10.0.0.256' is not an IPv4 address");
	expect_cidr_error("example.com", "'example.com' is not an IPv4 address");
	expect_cidr_error("10.0.0.0/8:0", "bad port '0' (1-65535, or LO-HI)");
	expect_cidr_error("10.0.0.0/8:9-8", "bad port '9-8' (1-65535, or LO-HI)");
	expect_cidr_error("10.0.0.0/8:http", "bad port 'http' (1-65535, or LO-HI)");
	expect_cidr_error("[10.0.0.0/8]:443",
			  "not CIDR[:PORT] (IPv6 with a port is written '[2001:db8::/32]:443')");
	expect_cidr_error("[2001:db8::/32]443",
			  "not CIDR[:PORT] (IPv6 with a port is written '[2001:db8::/32]:443')");
	expect_cidr_error("2001:db8::/32:443", "prefix length must be 0-128");
}

static void test_credentials(void **state)
{
	struct policy_diag d;
	struct policy p;

	(void)state;
	load_ok(&p, &d, "{\"credentials\": {\"files\": [{\"path\": \"~/.netrc\", \"mode\": \"deny\"},\n"
			" {\"mode\": \"mask\", \"path\": \"~/.config/gh/hosts.yml\"}]}}");
	assert_int_equal(p.nr_rules, 2);
	assert_string_equal(rule(&p, 0, RULE_DENY_READ, RULE_ABSOLUTE, HOME "/.netrc")->origin,
			    "t.json:1:37");
	rule(&p, 1, RULE_DENY_READ, RULE_ABSOLUTE, HOME "/.config/gh/hosts.yml");
	assert_int_equal(d.nr_warnings, 1);
	assert_string_equal(d.warnings[0], "t.json:2:11: 'credentials.files[1].mode' \"mask\" is "
			    "enforced as \"deny\" (sbx-bpf cannot mask file contents)");
	policy_free(&p);
}

static void test_srt_only_keys_warn(void **state)
{
	struct policy_diag d;
	struct policy p;

	(void)state;
	load_ok(&p, &d, "{\n  \"network\": {\"httpProxyPort\": 8080, \"socksProxyPort\": 1080},\n"
			"  \"filesystem\": {\"disabled\": false},\n  \"allowPty\": true\n}");
	assert_int_equal(d.nr_warnings, 4);
	assert_string_equal(d.warnings[0], "t.json:2:15: ignoring 'network.httpProxyPort' "
			    "(sandbox-runtime setting with no meaning for sbx-bpf)");
	assert_string_equal(d.warnings[1], "t.json:2:38: ignoring 'network.socksProxyPort' "
			    "(sandbox-runtime setting with no meaning for sbx-bpf)");
	assert_string_equal(d.warnings[2], "t.json:3:18: ignoring 'filesystem.disabled' "
			    "(sandbox-runtime setting with no meaning for sbx-bpf)");
	assert_string_equal(d.warnings[3], "t.json:4:3: ignoring 'allowPty' "
			    "(sandbox-runtime setting with no meaning for sbx-bpf)");
	policy_free(&p);
}

/* More warnings than fit are counted, not lost silently. */
static void test_warning_overflow(void **state)
{
	char json[4096];
	struct policy_diag d;
	struct policy p;
	size_t len;

	(void)state;
	len = snprintf(json, sizeof(json), "{\"credentials\": {\"files\": [");
	for (int i = 0; i < POLICY_DIAG_MAX + 3; i++)
		len += snprintf(json + len, sizeof(json) - len,
				"%s{\"path\": \"/nonexistent-sbx/%d\", \"mode\": \"deny\", \"decode\": \"jwt\"}",
				i ? ", " : "", i);
	snprintf(json + len, sizeof(json) - len, "]}}");
	load_ok(&p, &d, json);
	assert_int_equal(p.nr_rules, POLICY_DIAG_MAX + 3);
	assert_int_equal(d.nr_warnings, POLICY_DIAG_MAX);
	assert_int_equal(d.nr_warnings_dropped, 3);
	policy_free(&p);
}

/* An error drops the warnings the failed load produced too. */
static void test_error_applies_nothing(void **state)
{
	struct policy_diag d = {};
	struct policy p = {};

	(void)state;
	assert_int_equal(policy_load_string(&p, "t.json",
		"{\"allowPty\": true, \"filesystem\": {\"denyRead\": [\"~/.ssh\", \"~/.aws\"],"
		" \"allowWrite\": [\"/a/*\"]}, \"network\": {\"allowedDomains\": [\"x.org\"]}}",
		&env, &d), -EINVAL);
	assert_empty(&p);
	assert_int_equal(d.nr_warnings, 0);
	assert_string_equal(d.error, "t.json:1:84: '/a/*': unsupported glob '*' " GLOB_HELP);
}

static void test_mandatory(void **state)
{
	static const char *const names[] = {
		".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile",
		".profile", ".ripgreprc", ".mcp.json", ".git/hooks", ".git/config", ".git/config.worktree",
		".git/commondir", ".vscode", ".idea",
		".claude/commands", ".claude/agents",
	};
	const size_t n = sizeof(names) / sizeof(names[0]);
	struct policy_diag d;
	struct policy p;

	(void)state;
	load_ok(&p, &d, "{\"filesystem\": {\"allowWrite\": [\".\"]}}");
	assert_int_equal(policy_add_mandatory(&p), 0);
	assert_int_equal(policy_add_mandatory(&p), 0);	/* idempotent */
	assert_int_equal(p.nr_rules, 1 + n + 4);	/* + /dev/null, zero, full, tty */
	assert_string_equal(p.rules[1 + n].text, "built-in: allowWrite /dev/null");
	assert_int_equal(p.rules[1 + n].kind, RULE_ALLOW_WRITE);
	assert_string_equal(p.rules[n + 4].path, "/dev/tty");
	for (size_t i = 0; i < n; i++) {
		const struct policy_rule *r = rule(&p, 1 + i, RULE_MANDATORY, RULE_ANY_DEPTH, names[i]);
		char text[64];

		snprintf(text, sizeof(text), "mandatory: %s", names[i]);
		assert_string_equal(r->text, text);
		assert_string_equal(r->origin, "built-in");
	}
	policy_free(&p);

	load_ok(&p, &d, "{\"filesystem\": {\"allowGitConfig\": true}}");
	assert_int_equal(policy_add_mandatory(&p), 0);
	assert_int_equal(p.nr_rules, n - 2 + 4);
	for (size_t i = 0; i < p.nr_rules; i++) {
		assert_string_not_equal(p.rules[i].path, ".git/config");
		assert_string_not_equal(p.rules[i].path, ".git/config.worktree");
	}
	assert_string_equal(p.rules[9].path, ".git/hooks");
	policy_free(&p);
}

static void test_env_default(void **state)
{
	char home[PATH_MAX], cwd[PATH_MAX], here[PATH_MAX], *old_home = getenv("HOME");
	char saved_home[PATH_MAX];
	struct policy_env e;
	struct passwd *pw;

	(void)state;
	snprintf(saved_home, sizeof(saved_home), "%s", old_home ? old_home : "");
	assert_non_null(getcwd(here, sizeof(here)));

	setenv("SUDO_USER", "root", 1);
	setenv("HOME", "/nonexistent-sbx-home/from-env", 1);
	assert_int_equal(policy_env_default(&e, home, sizeof(home), cwd, sizeof(cwd)), 0);
	assert_string_equal(e.cwd, here);
	if (geteuid() == 0) {
		pw = getpwnam("root");
		assert_non_null(pw);
		assert_string_equal(e.home, pw->pw_dir);
	} else {
		assert_string_equal(e.home, "/nonexistent-sbx-home/from-env");
	}

	unsetenv("SUDO_USER");
	assert_int_equal(policy_env_default(&e, home, sizeof(home), cwd, sizeof(cwd)), 0);
	assert_string_equal(e.home, "/nonexistent-sbx-home/from-env");

	/* A relative or missing $HOME: the password database. */
	setenv("HOME", "relative", 1);
	pw = getpwuid(getuid());
	assert_int_equal(policy_env_default(&e, home, sizeof(home), cwd, sizeof(cwd)), 0);
	if (pw)
		assert_string_equal(e.home, pw->pw_dir);
	unsetenv("HOME");
	assert_int_equal(policy_env_default(&e, home, sizeof(home), cwd, sizeof(cwd)), 0);
	if (pw)
		assert_string_equal(e.home, pw->pw_dir);
	setenv("HOME", "/nonexistent-sbx-home/from-env", 1);
	assert_int_equal(policy_env_default(&e, home, 2, cwd, sizeof(cwd)), -ENAMETOOLONG);

	if (saved_home[0])
		setenv("HOME", saved_home, 1);
}

static void test_presets(void **state)
{
	struct policy_diag d = {};
	struct policy p = {};
	size_t n = 0;

	(void)state;
	for (size_t i = 0; policy_preset_name(i); i++, n++) {
		memset(&p, 0, sizeof(p));
		if (policy_load_preset(&p, policy_preset_name(i), &env, &d))
			fail_msg("preset %s: %s", policy_preset_name(i), d.error);
		assert_string_equal(p.name, policy_preset_name(i));
		assert_non_null(p.description);
		assert_int_equal(p.mode, POLICY_ENFORCE);
		assert_true(p.nr_rules > 5);
		assert_int_equal(d.nr_warnings, 0);
		/* Every preset keeps ~/.ssh unreadable and lets the agent write its working dir. */
		assert_int_equal(policy_add_mandatory(&p), 0);
		policy_free(&p);
	}
	assert_int_equal(n, 4);
	assert_null(policy_preset_name(4));

	assert_int_equal(policy_load(&p, NULL, &env, &d), 0);	/* no file: agent-default */
	assert_string_equal(p.name, "agent-default");
	rule(&p, 0, RULE_DENY_READ, RULE_ABSOLUTE, HOME "/.ssh");
	assert_string_equal(p.rules[0].text, "denyRead ~/.ssh");
	assert_string_equal(p.rules[0].origin, "agent-default:7:7");
	assert_int_equal(p.net.nr_domains, 0);
	assert_int_equal(p.net.nr_rules, 0);
	policy_free(&p);

	assert_int_equal(policy_load_preset(&p, "training", &env, &d), 0);
	assert_int_equal(p.net.nr_domains, 0);
	assert_int_equal(p.net.nr_rules, 0);
	policy_free(&p);
	assert_int_equal(policy_load_preset(&p, "standard", &env, &d), 0);
	assert_true(p.net.nr_domains > 0);
	assert_int_equal(p.net.nr_rules, 4);	/* allowLoopback */
	policy_free(&p);

	assert_int_equal(policy_load_preset(&p, "lax", &env, &d), -ENOENT);
	assert_string_equal(d.error, "unknown preset 'lax' (one of: agent-default, training, "
			    "restricted, standard)");
	assert_empty(&p);
}

/* Does every preset contain @kind @text? */
static bool preset_has(const char *preset, enum rule_kind kind, const char *text)
{
	struct policy_diag d = {};
	struct policy p = {};
	bool found = false;

	assert_int_equal(policy_load_preset(&p, preset, &env, &d), 0);
	for (size_t i = 0; i < p.nr_rules; i++)
		found |= p.rules[i].kind == kind && !strcmp(p.rules[i].text, text);
	policy_free(&p);
	return found;
}

static void test_preset_contents(void **state)
{
	(void)state;
	for (size_t i = 0; policy_preset_name(i); i++) {
		const char *name = policy_preset_name(i);
		bool training = !strcmp(name, "training");

		assert_true(preset_has(name, RULE_ALLOW_WRITE, "allowWrite ."));
		assert_true(preset_has(name, RULE_ALLOW_WRITE, "allowWrite /tmp"));
		assert_true(preset_has(name, RULE_DENY_READ, "denyRead /etc/shadow"));
		assert_true(preset_has(name, RULE_DENY_READ, training ? "denyRead ~" : "denyRead ~/.ssh"));
		assert_true(preset_has(name, RULE_DENY_READ, training ? "denyRead /home" : "denyRead ~/.aws"));
	}
	assert_true(preset_has("training", RULE_ALLOW_READ, "allowRead ."));
	assert_true(preset_has("restricted", RULE_DENY_READ, "denyRead **/.env"));
	assert_true(preset_has("agent-default", RULE_ALLOW_WRITE, "allowWrite /var/tmp"));
	assert_false(preset_has("training", RULE_ALLOW_WRITE, "allowWrite /var/tmp"));
	assert_true(preset_has("standard", RULE_ALLOW_WRITE, "allowWrite ~/.cache"));
}

static void test_srt_settings_file(void **state)
{
	static const char *const warnings[] = {
		"11:48: '*:22': a denied name is denied on every port, not only 22",
		"12:5: ignoring 'network.deniedDomainReasons'",
		"15:5: ignoring 'network.strictAllowlist'",
		"19:5: ignoring 'network.httpProxyPort'",
		"20:5: ignoring 'network.mitmProxy'",
		"24:5: ignoring 'network.parentProxy'",
		"36:59: ignoring 'credentials.files[1].extract'",
		"36:51: 'credentials.files[1].mode' \"mask\" is enforced as \"deny\"",
		"38:5: ignoring 'credentials.envVars'",
		"40:3: ignoring 'ignoreViolations'",
		"44:3: ignoring 'enableWeakerNestedSandbox'",
		"45:3: ignoring 'ripgrep'",
		"46:3: ignoring 'mandatoryDenySearchDepth'",
		"47:3: ignoring 'allowPty'",
		"48:3: ignoring 'seccomp'",
	};
	const char *file = SBX_SRCDIR "/tests/unit/data/srt-settings.json";
	char sock[PATH_MAX] = "/var/run/docker.sock", tmp[PATH_MAX] = "/tmp", want[PATH_MAX];
	struct policy_diag d = {};
	struct policy p = {};

	(void)state;
	if (policy_load(&p, file, &env, &d))
		fail_msg("%s", d.error);
	assert_string_equal(p.name, file);
	assert_int_equal(d.nr_warnings, sizeof(warnings) / sizeof(warnings[0]));
	for (size_t i = 0; i < d.nr_warnings; i++) {
		snprintf(want, sizeof(want), "%s:%s", file, warnings[i]);
		if (strncmp(d.warnings[i], want, strlen(want)))
			fail_msg("warning %zu: got '%s', want '%s…'", i, d.warnings[i], want);
	}
	assert_true(p.allow_git_config);
	assert_int_equal(p.nr_rules, 12);
	/* network comes first in this file: its socket rule is rule 0 */
	assert_int_equal(path_resolve(sock, sizeof(sock)), 0);
	assert_string_equal(rule(&p, 0, RULE_ALLOW_UNIX, RULE_ABSOLUTE, sock)->text,
			    "allowUnixSockets /var/run/docker.sock");
	rule(&p, 1, RULE_DENY_READ, RULE_ABSOLUTE, HOME "/.ssh");
	rule(&p, 2, RULE_DENY_READ, RULE_ABSOLUTE, HOME "/.aws/credentials");
	rule(&p, 3, RULE_DENY_READ, RULE_ANY_DEPTH, ".env");
	rule(&p, 4, RULE_ALLOW_READ, RULE_ABSOLUTE, HOME "/.ssh/known_hosts");
	rule(&p, 5, RULE_ALLOW_WRITE, RULE_ABSOLUTE, CWD);
	rule(&p, 6, RULE_ALLOW_WRITE, RULE_ABSOLUTE, CWD "/src");
	assert_int_equal(path_resolve(tmp, sizeof(tmp)), 0);
	rule(&p, 7, RULE_ALLOW_WRITE, RULE_ABSOLUTE, tmp);
	rule(&p, 8, RULE_DENY_WRITE, RULE_ABSOLUTE, CWD "/.env");
	rule(&p, 9, RULE_DENY_WRITE, RULE_ABSOLUTE, CWD "/config/production.json");
	rule(&p, 10, RULE_DENY_READ, RULE_ABSOLUTE, HOME "/.netrc");
	rule(&p, 11, RULE_DENY_READ, RULE_ABSOLUTE, HOME "/.config/gh/hosts.yml");
	snprintf(want, sizeof(want), "%s:27:18", file);
	assert_string_equal(p.rules[1].origin, want);

	/* The IPv6 literal and localhost are address rules; the names are for the resolver. */
	assert_int_equal(p.net.nr_domains, 6);
	dom(&p, 0, false, false, "github.com", 0, 65535);
	dom(&p, 1, false, true, "github.com", 0, 65535);
	dom(&p, 3, false, false, "api.example.com", 443, 443);
	dom(&p, 4, true, false, "telemetry.example.net", 0, 65535);
	dom(&p, 5, true, true, "", 0, 65535);	/* "*:22": name-wide */
	assert_int_equal(p.net.nr_rules, 5);
	assert_string_equal(net(&p, 0, false, "2001:db8::10/128", 8443, 8443)->text,
			    "allowedDomains [2001:db8::10]:8443");
	snprintf(want, sizeof(want), "%s:9:7", file);
	loopback(&p, 1, false, 0, 65535, "allowedDomains localhost", want);
	assert_true(p.net.allow_local_binding);
	assert_false(p.net.allow_all_unix_sockets);
	policy_free(&p);
}

static void test_load_file_errors(void **state)
{
	char file[] = "/tmp/sbx-unit-policy-XXXXXX", want[256];
	struct policy_diag d = {};
	struct policy p = {};
	int fd;

	(void)state;
	assert_int_equal(policy_load(&p, "/nonexistent-sbx/p.json", &env, &d), -ENOENT);
	assert_string_equal(d.error, "/nonexistent-sbx/p.json: No such file or directory");
	assert_empty(&p);

	fd = mkstemp(file);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\n  \"mode\": \"audit\",\n  \"bogus\": 1\n}\n", 36), 36);
	close(fd);
	assert_int_equal(policy_load(&p, file, &env, &d), -EINVAL);
	snprintf(want, sizeof(want), "%s:3:3: unknown key 'bogus' at the top level", file);
	assert_true(!strncmp(d.error, want, strlen(want)));
	assert_empty(&p);

	fd = open(file, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "{}\0{}", 5), 5);
	close(fd);
	assert_int_equal(policy_load(&p, file, &env, &d), -EINVAL);
	snprintf(want, sizeof(want), "%s: contains a NUL byte", file);
	assert_string_equal(d.error, want);
	unlink(file);
}

/* @v equals @want, which is dropped. */
static bool json_is(json_t *v, json_t *want)
{
	bool same;

	assert_non_null(want);
	same = json_equal(v, want);
	if (!same) {
		char *got = json_dumps(v, JSON_COMPACT);

		print_message("got %s\n", got);
		free(got);
	}
	json_decref(want);
	return same;
}

static void test_to_json(void **state)
{
	struct policy_diag d;
	struct policy p;
	json_t *doc, *r, *net_json;
	char *s;

	(void)state;
	load_ok(&p, &d, "{\"description\": \"x\", \"filesystem\": {\"denyRead\": [\"~/.ssh\"]},"
			" \"network\": {\"allowedDomains\": [\"github.com\"], \"allowLoopback\": true},"
			" \"limits\": {\"pids\": 10}}");
	assert_int_equal(policy_add_mandatory(&p), 0);
	s = policy_to_json(&p);
	assert_non_null(s);
	doc = json_loads(s, 0, NULL);
	free(s);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "name")), "t.json");
	assert_string_equal(json_string_value(json_object_get(doc, "mode")), "enforce");
	assert_int_equal(json_array_size(json_object_get(doc, "rules")), p.nr_rules);
	r = json_array_get(json_object_get(doc, "rules"), 0);
	assert_int_equal(json_integer_value(json_object_get(r, "id")), 0);
	assert_string_equal(json_string_value(json_object_get(r, "kind")), "denyRead");
	assert_string_equal(json_string_value(json_object_get(r, "scope")), "absolute");
	assert_string_equal(json_string_value(json_object_get(r, "path")), HOME "/.ssh");
	assert_string_equal(json_string_value(json_object_get(r, "text")), "denyRead ~/.ssh");
	assert_string_equal(json_string_value(json_object_get(r, "origin")), "t.json:1:50");
	r = json_array_get(json_object_get(doc, "rules"), 1);
	assert_string_equal(json_string_value(json_object_get(r, "scope")), "any-depth");
	assert_string_equal(json_string_value(json_object_get(r, "kind")), "mandatory");
	r = json_object_get(doc, "network");
	assert_true(json_is_true(json_object_get(r, "allowLoopback")));
	assert_true(json_is_false(json_object_get(r, "allowLocalBinding")));
	assert_true(json_is_false(json_object_get(r, "allowRawSockets")));
	assert_int_equal(json_array_size(json_object_get(r, "unixSockets")), 0);
	assert_int_equal(json_array_size(json_object_get(r, "domains")), 1);
	net_json = json_array_get(json_object_get(r, "domains"), 0);
	assert_true(json_is(net_json, json_pack("{s:I, s:i, s:s, s:s, s:s, s:b, s:[i, i], s:s, s:s}",
		"id", (json_int_t)SBX_RULE_DOMAIN_BASE, "index", 0, "verdict", "allow",
		"pattern", "github.com", "name", "github.com", "wildcard", 0, "ports", 0, 65535,
		"text", "allowedDomains github.com", "origin", "t.json:1:93")));
	assert_int_equal(json_array_size(json_object_get(r, "rules")), 4);
	net_json = json_array_get(json_object_get(r, "rules"), 1);
	assert_true(json_is(net_json, json_pack("{s:I, s:i, s:s, s:s, s:[i, i], s:s, s:s}",
		"id", (json_int_t)SBX_RULE_NET_BASE + 1, "index", 1, "verdict", "allow",
		"cidr", "::1/128", "ports", 0, 65535, "text", "allowLoopback",
		"origin", "t.json:1:125")));
	r = json_object_get(doc, "limits");
	assert_string_equal(json_string_value(json_object_get(r, "pids.max")), "10");
	assert_string_equal(json_string_value(json_object_get(r, "memory.oom.group")), "1");
	assert_true(json_is_null(json_object_get(r, "timeout_ms")));
	assert_null(json_object_get(r, "io.max"));
	assert_int_equal(json_object_size(r), 3);
	json_decref(doc);
	policy_free(&p);
}

static void test_print(void **state)
{
	struct policy_diag d;
	struct policy p;
	char *buf = NULL;
	size_t sz = 0;
	FILE *f;

	(void)state;
	load_ok(&p, &d, "{\"mode\": \"audit\", \"filesystem\": {\"denyRead\": [\"**/.env\"]}}");
	f = open_memstream(&buf, &sz);
	policy_print(&p, f);
	fclose(f);
	assert_non_null(strstr(buf, "policy t.json (audit)\n"));
	assert_non_null(strstr(buf, "denyRead   any-depth .env"));
	assert_non_null(strstr(buf, "denyRead **/.env  [t.json:1:47]"));
	assert_non_null(strstr(buf, "network:\n  addresses (rule id 0x40000000 + #; per port, any deny "
				    "beats any allow): (none)\n"));
	assert_non_null(strstr(buf, "\n  domains (rule id 0x50000000 + #; denied beats allowed, then "
				    "the most specific): (none)\n"));
	assert_non_null(strstr(buf, "  allowRawSockets          false\n"));
	free(buf);
	policy_free(&p);
}

/* CIDRs become rules in the kernel's form: IPv4 as ::ffff:a.b.c.d, its prefix 96 bits longer. */
static void test_network_cidrs(void **state)
{
	const char *json =
		"{\"network\": {\n"
		"  \"allow\": [\"10.0.0.0/8:443\", \"192.168.1.10\", \"0.0.0.0/0:80\", \"2001:db8::/32\",\n"
		"            \"[fe80::1]:22\", \"::ffff:10.0.0.1\", \"::ffff:10.0.0.0/104\", \"[::/0]:53\"],\n"
		"  \"deny\": [\"10.1.0.0/16:8000-8999\"]\n"
		"}}";
	struct policy_diag d;
	struct policy p;

	(void)state;
	load_ok(&p, &d, json);
	assert_int_equal(p.nr_rules, 0);
	assert_int_equal(p.net.nr_rules, 9);
	assert_int_equal(p.net.nr_domains, 0);
	net(&p, 0, false, "10.0.0.0/8", 443, 443);
	assert_int_equal(p.net.rules[0].plen, 104);
	assert_int_equal(p.net.rules[0].addr[10], 0xff);
	assert_int_equal(p.net.rules[0].addr[12], 10);
	assert_string_equal(p.net.rules[0].origin, "t.json:2:13");
	net(&p, 1, false, "192.168.1.10/32", 0, 65535);
	assert_string_equal(p.net.rules[1].origin, "t.json:2:31");
	net(&p, 2, false, "0.0.0.0/0", 80, 80);
	assert_int_equal(p.net.rules[2].plen, 96);
	net(&p, 3, false, "2001:db8::/32", 0, 65535);
	assert_int_equal(p.net.rules[3].plen, 32);
	net(&p, 4, false, "fe80::1/128", 22, 22);
	assert_string_equal(p.net.rules[4].text, "allow [fe80::1]:22");
	assert_string_equal(p.net.rules[4].origin, "t.json:3:13");
	/* A v4-mapped IPv6 address is that IPv4 address. */
	net(&p, 5, false, "10.0.0.1/32", 0, 65535);
	assert_int_equal(p.net.rules[5].plen, 128);
	assert_string_equal(p.net.rules[5].text, "allow ::ffff:10.0.0.1");
	net(&p, 6, false, "10.0.0.0/8", 0, 65535);
	net(&p, 7, false, "::/0", 53, 53);
	net(&p, 8, true, "10.1.0.0/16", 8000, 8999);
	assert_string_equal(p.net.rules[8].text, "deny 10.1.0.0/16:8000-8999");
	assert_string_equal(p.net.rules[8].origin, "t.json:4:12");
	/* ::/0 holds ::ffff:0:0/96 too: say so. */
	assert_int_equal(d.nr_warnings, 1);
	assert_string_equal(d.warnings[0], "t.json:3:71: '[::/0]:53' also covers every IPv4 address "
			    "(IPv4 is judged as ::ffff:a.b.c.d)");
	policy_free(&p);
	assert_empty(&p);
}

static void test_network_loopback(void **state)
{
	struct policy_diag d;
	struct policy p;

	(void)state;
	load_ok(&p, &d, "{\"network\": {\"deny\": [\"10.0.0.0/8\"],\n \"allowLoopback\": true}}");
	assert_int_equal(p.net.nr_rules, 5);
	net(&p, 0, true, "10.0.0.0/8", 0, 65535);
	loopback(&p, 1, false, 0, 65535, "allowLoopback", "t.json:2:19");
	assert_true(p.net.allow_loopback);
	policy_free(&p);
	load_ok(&p, &d, "{\"network\": {\"allowLoopback\": false}}");
	assert_int_equal(p.net.nr_rules, 0);
	assert_false(p.net.allow_loopback);
	policy_free(&p);
	load_ok(&p, &d, "{\"network\": {\"allowRawSockets\": true}}");
	assert_true(p.net.allow_raw_sockets);
	policy_free(&p);
	expect_error("{\"network\": {\"allowRawSockets\": \"yes\"}}",
		     "t.json:1:33: 'network.allowRawSockets' must be true or false, not a string");
	/* The resolver's query rate limit: defaults unless set, a whole number in range. */
	load_ok(&p, &d, "{\"network\": {\"allowedDomains\": [\"a.test\"]}}");
	assert_int_equal(p.net.dns_rate, 0);
	assert_int_equal(p.net.dns_burst, 0);
	policy_free(&p);
	load_ok(&p, &d, "{\"network\": {\"dnsQueryRate\": 500, \"dnsQueryBurst\": 1000}}");
	assert_int_equal(p.net.dns_rate, 500);
	assert_int_equal(p.net.dns_burst, 1000);
	policy_free(&p);
	expect_error("{\"network\": {\"dnsQueryRate\": 0}}",
		     "t.json:1:30: 'network.dnsQueryRate' must be from 1 to 1000000, not 0");
	expect_error("{\"network\": {\"dnsQueryBurst\": 2.5}}",
		     "t.json:1:31: 'network.dnsQueryBurst' must be a whole number, not a number");
}

/* Names for the resolver; localhost and IP literals never go through DNS: address rules. */
static void test_network_domains(void **state)
{
	const char *json =
		"{\"network\": {\n"
		"  \"allowedDomains\": [\"localhost:8080\", \"127.0.0.1\", \"[::1]:8443\", \"Example.COM.\",\n"
		"                     \"*.Foo.example.com:443\", \"LOCALHOST\"],\n"
		"  \"deniedDomains\": [\"localhost\", \"10.1.2.3:22\", \"evil.example.org\", \"*.ads.example.net\"]\n"
		"}}";
	struct policy_diag d;
	struct policy p;

	(void)state;
	load_ok(&p, &d, json);
	assert_int_equal(d.nr_warnings, 0);
	assert_int_equal(p.net.nr_rules, 4 + 1 + 1 + 4 + 4 + 1);
	loopback(&p, 0, false, 8080, 8080, "allowedDomains localhost:8080", "t.json:2:22");
	assert_string_equal(net(&p, 4, false, "127.0.0.1/32", 0, 65535)->text,
			    "allowedDomains 127.0.0.1");
	assert_string_equal(net(&p, 5, false, "::1/128", 8443, 8443)->origin, "t.json:2:53");
	loopback(&p, 6, false, 0, 65535, "allowedDomains LOCALHOST", "t.json:3:47");
	loopback(&p, 10, true, 0, 65535, "deniedDomains localhost", "t.json:4:21");
	assert_string_equal(net(&p, 14, true, "10.1.2.3/32", 22, 22)->text, "deniedDomains 10.1.2.3:22");

	assert_int_equal(p.net.nr_domains, 4);
	assert_string_equal(dom(&p, 0, false, false, "example.com", 0, 65535)->text,
			    "allowedDomains Example.COM.");
	assert_string_equal(dom(&p, 1, false, true, "foo.example.com", 443, 443)->origin, "t.json:3:22");
	dom(&p, 2, true, false, "evil.example.org", 0, 65535);
	dom(&p, 3, true, true, "ads.example.net", 0, 65535);
	policy_free(&p);
}

static void test_network_domain_warnings(void **state)
{
	struct policy_diag d;
	struct policy p;

	(void)state;
	/* A denied name with a port is denied on every port. */
	load_ok(&p, &d, "{\"network\": {\"deniedDomains\": [\"evil.example.org:22\", \"*:25\"]}}");
	assert_int_equal(d.nr_warnings, 2);
	assert_string_equal(d.warnings[0], "t.json:1:32: 'evil.example.org:22': a denied name is denied "
			    "on every port, not only 22 (the resolver cannot refuse a name for one port)");
	assert_string_equal(d.warnings[1], "t.json:1:55: '*:25': a denied name is denied on every port, "
			    "not only 25 (the resolver cannot refuse a name for one port); '*' denies "
			    "every name");
	dom(&p, 0, true, false, "evil.example.org", 0, 65535);
	dom(&p, 1, true, true, "", 0, 65535);
	policy_free(&p);
	/* One name, different ports: the first entry counts. The same ports again: quiet. */
	load_ok(&p, &d, "{\"network\": {\"allowedDomains\": [\"a.example.com:443\", \"a.example.com:80\","
		" \"A.example.com:443\", \"*.a.example.com:80\"]}}");
	assert_int_equal(d.nr_warnings, 1);
	assert_string_equal(d.warnings[0], "t.json:1:54: 'a.example.com:80': the name is already allowed "
			    "by 'allowedDomains a.example.com:443' (t.json:1:33), whose ports count");
	assert_int_equal(p.net.nr_domains, 4);
	policy_free(&p);
}

/* allowUnixSockets entries are rules, with ids, texts and origins like the file rules. */
static void test_unix_sockets(void **state)
{
	struct policy_diag d;
	struct policy p;

	(void)state;
	load_ok(&p, &d, "{\"filesystem\": {\"denyRead\": [\"~/.ssh\"]},\n"
			" \"network\": {\"allowUnixSockets\": [\"/nonexistent-sbx/run/a.sock\", \"~/.x/**\"]}}");
	assert_int_equal(p.nr_rules, 3);
	assert_string_equal(rule(&p, 1, RULE_ALLOW_UNIX, RULE_ABSOLUTE, "/nonexistent-sbx/run/a.sock")->text,
			    "allowUnixSockets /nonexistent-sbx/run/a.sock");
	assert_string_equal(p.rules[1].origin, "t.json:2:35");
	rule(&p, 2, RULE_ALLOW_UNIX, RULE_ABSOLUTE, HOME "/.x");
	assert_string_equal(policy_rule_text(&p, 2), "allowUnixSockets ~/.x/**");
	assert_string_equal(rule_kind_name(RULE_ALLOW_UNIX), "allowUnixSockets");
	policy_free(&p);
	expect_error("{\"network\": {\"allowUnixSockets\": [\"**/docker.sock\"]}}",
		     "t.json:1:35: '**/docker.sock': unsupported glob '*' " GLOB_HELP);
	expect_error("{\"network\": {\"allowUnixSockets\": [\"/run/*.sock\"]}}",
		     "t.json:1:35: '/run/*.sock': unsupported glob '*' " GLOB_HELP);
}

static void test_print_network(void **state)
{
	struct policy_diag d;
	struct policy p;
	char *buf = NULL;
	size_t sz = 0;
	FILE *f;

	(void)state;
	load_ok(&p, &d, "{\"network\": {\"allow\": [\"10.0.0.0/8:443\", \"[2001:db8::/32]:8000-8999\"],"
		" \"deniedDomains\": [\"*.evil.example\"], \"allowedDomains\": [\"github.com\"],"
		" \"allowUnixSockets\": [\"/nonexistent-sbx/s\"], \"allowLocalBinding\": true}}");
	f = open_memstream(&buf, &sz);
	policy_print(&p, f);
	fclose(f);
	assert_non_null(strstr(buf, "    0  allowUnixSockets absolute  /nonexistent-sbx/s"));
	assert_non_null(strstr(buf,
		"  addresses (rule id 0x40000000 + #; per port, any deny beats any allow):\n"
		"    0  allow 10.0.0.0/8                       port 443          allow 10.0.0.0/8:443  "
		"[t.json:1:24]\n"
		"    1  allow 2001:db8::/32                    ports 8000-8999   "
		"allow [2001:db8::/32]:8000-8999  [t.json:1:42]\n"
		"  domains (rule id 0x50000000 + #; denied beats allowed, then the most specific):\n"
		"    0  deny  *.evil.example                   all ports         "
		"deniedDomains *.evil.example  [t.json:1:90]\n"
		"    1  allow github.com                       all ports         "
		"allowedDomains github.com  [t.json:1:128]\n"));
	assert_non_null(strstr(buf, "  allowLocalBinding        true\n"));
	free(buf);
	policy_free(&p);
}

/* --- network entries from flags (policy_add_net) ------------------------------------ */

static void add_net(struct policy *p, struct policy_diag *d, enum policy_net_flag what,
		    const char *value, const char *origin)
{
	if (policy_add_net(p, what, value, origin, &env, d))
		fail_msg("unexpected error: %s", d->error);
}

/* Each kind lands where its policy key would, with the flag as origin. */
static void test_add_net(void **state)
{
	struct policy_diag d = {};
	struct policy p = {};

	(void)state;
	add_net(&p, &d, POLICY_NET_ALLOW_DOMAIN, "GitHub.com", "--allow-domain");
	add_net(&p, &d, POLICY_NET_DENY_DOMAIN, "*.ads.example.net", "--deny-domain");
	add_net(&p, &d, POLICY_NET_ALLOW_CIDR, "10.0.0.0/8:443", "--allow-net");
	add_net(&p, &d, POLICY_NET_DENY_CIDR, "[2001:db8::/32]:8000-8999", "--deny-net");
	add_net(&p, &d, POLICY_NET_ALLOW_DOMAIN, "localhost:8080", "--allow-domain");
	add_net(&p, &d, POLICY_NET_DENY_DOMAIN, "10.1.2.3:22", "--deny-domain");
	add_net(&p, &d, POLICY_NET_ALLOW_UNIX, "~/.x/**", "--allow-unix");
	assert_int_equal(d.nr_warnings, 0);

	assert_int_equal(p.net.nr_domains, 2);
	assert_string_equal(dom(&p, 0, false, false, "github.com", 0, 65535)->text,
			    "allowedDomains GitHub.com");
	assert_string_equal(p.net.domains[0].origin, "--allow-domain");
	assert_string_equal(dom(&p, 1, true, true, "ads.example.net", 0, 65535)->origin, "--deny-domain");
	assert_int_equal(p.net.nr_rules, 1 + 1 + 4 + 1);
	assert_string_equal(net(&p, 0, false, "10.0.0.0/8", 443, 443)->text, "allow 10.0.0.0/8:443");
	assert_string_equal(p.net.rules[0].origin, "--allow-net");
	assert_string_equal(net(&p, 1, true, "2001:db8::/32", 8000, 8999)->text,
			    "deny [2001:db8::/32]:8000-8999");
	assert_string_equal(p.net.rules[1].origin, "--deny-net");
	/* localhost and IP literals never go through DNS: address rules, as in a file. */
	loopback(&p, 2, false, 8080, 8080, "allowedDomains localhost:8080", "--allow-domain");
	assert_string_equal(net(&p, 6, true, "10.1.2.3/32", 22, 22)->text, "deniedDomains 10.1.2.3:22");
	assert_string_equal(p.net.rules[6].origin, "--deny-domain");
	assert_int_equal(p.nr_rules, 1);
	assert_string_equal(rule(&p, 0, RULE_ALLOW_UNIX, RULE_ABSOLUTE, HOME "/.x")->text,
			    "allowUnixSockets ~/.x/**");
	assert_string_equal(p.rules[0].origin, "--allow-unix");
	assert_false(p.net.allow_loopback);
	assert_false(p.net.allow_local_binding || p.net.allow_all_unix_sockets || p.net.allow_raw_sockets);
	policy_free(&p);
}

/* The booleans are set to true; --allow-loopback also adds allowLoopback's rules, once. */
static void test_add_net_bools(void **state)
{
	struct policy_diag d = {};
	struct policy p = {};

	(void)state;
	add_net(&p, &d, POLICY_NET_ALLOW_LOCAL_BINDING, NULL, "--allow-local-binding");
	assert_true(p.net.allow_local_binding);
	assert_false(p.net.allow_all_unix_sockets || p.net.allow_raw_sockets || p.net.allow_loopback);
	add_net(&p, &d, POLICY_NET_ALLOW_ALL_UNIX, NULL, "--allow-all-unix-sockets");
	assert_true(p.net.allow_all_unix_sockets);
	assert_false(p.net.allow_raw_sockets);
	add_net(&p, &d, POLICY_NET_ALLOW_RAW, "ignored", "--allow-raw-sockets");
	assert_true(p.net.allow_raw_sockets);
	assert_int_equal(p.net.nr_rules + p.net.nr_domains + p.nr_rules, 0);
	add_net(&p, &d, POLICY_NET_ALLOW_LOOPBACK, NULL, "--allow-loopback");
	assert_true(p.net.allow_loopback);
	assert_int_equal(p.net.nr_rules, 4);
	loopback(&p, 0, false, 0, 65535, "allowLoopback", "--allow-loopback");
	add_net(&p, &d, POLICY_NET_ALLOW_LOOPBACK, NULL, "--allow-loopback");
	assert_int_equal(p.net.nr_rules, 4);
	assert_false(p.net.allow_all_domains || p.net.allow_abstract_unix_sockets);
	policy_free(&p);

	/* The policy's own allowLoopback already holds the rules: the flag adds none. */
	load_ok(&p, &d, "{\"network\": {\"allowLoopback\": true}}");
	add_net(&p, &d, POLICY_NET_ALLOW_LOOPBACK, NULL, "--allow-loopback");
	assert_int_equal(p.net.nr_rules, 4);
	assert_string_equal(p.net.rules[0].origin, "t.json:1:31");
	policy_free(&p);
}

/* The flags' names (options and origins) follow the enum; only the lists take a value. */
static void test_net_flag_names(void **state)
{
	static const char *const names[] = {	/* in enum policy_net_flag's order */
		"--allow-domain", "--deny-domain", "--allow-net", "--deny-net", "--allow-unix",
		"--allow-local-binding", "--allow-loopback", "--allow-all-unix-sockets",
		"--allow-raw-sockets",
	};

	(void)state;
	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++) {
		assert_string_equal(policy_net_flag_name(i), names[i]);
		assert_int_equal(policy_net_flag_has_value(i), i <= POLICY_NET_ALLOW_UNIX);
	}
	assert_null(policy_net_flag_name(sizeof(names) / sizeof(names[0])));
	assert_false(policy_net_flag_has_value(sizeof(names) / sizeof(names[0])));
}

/* The call fails with exactly @want and adds nothing to a policy holding one rule of each list. */
static void expect_net_error(enum policy_net_flag what, const char *value, const char *origin,
			     const char *want)
{
	struct policy_diag d = {};
	struct policy p;

	load_ok(&p, &d, "{\"network\": {\"allow\": [\"10.0.0.0/8\"], \"allowedDomains\": [\"a.example.com\"],"
		" \"allowUnixSockets\": [\"/nonexistent-sbx/s\"]}}");
	assert_int_equal(policy_add_net(&p, what, value, origin, &env, &d), -EINVAL);
	assert_string_equal(d.error, want);
	assert_int_equal(d.nr_warnings, 0);
	assert_int_equal(p.net.nr_rules, 1);
	assert_int_equal(p.net.nr_domains, 1);
	assert_int_equal(p.nr_rules, 1);
	policy_free(&p);
}

static void test_add_net_errors(void **state)
{
	struct policy p = {};

	(void)state;
	expect_net_error(POLICY_NET_ALLOW_CIDR, "10.0.0.1/8", "--allow-net", "--allow-net: '10.0.0.1/8': "
			 "address bits set beyond the /8 prefix (did you mean '10.0.0.0/8'?)");
	expect_net_error(POLICY_NET_DENY_CIDR, "10.0.0.0/8:0", "--deny-net",
			 "--deny-net: '10.0.0.0/8:0': bad port '0' (1-65535, or LO-HI)");
	expect_net_error(POLICY_NET_ALLOW_CIDR, "example.com", "--allow-net",
			 "--allow-net: 'example.com': 'example.com' is not an IPv4 address");
	expect_net_error(POLICY_NET_ALLOW_DOMAIN, "*.com", "--allow-domain",
			 "--allow-domain: '*.com' " DOMAIN_HELP "; '*.com' or '*' is too broad");
	expect_net_error(POLICY_NET_ALLOW_DOMAIN, "*", "--allow-domain",
			 "--allow-domain: '*' " DOMAIN_HELP "; '*.com' or '*' is too broad");
	expect_net_error(POLICY_NET_DENY_DOMAIN, "https://x.example.com", "--deny-domain",
			 "--deny-domain: 'https://x.example.com' " DOMAIN_HELP ", or '*'; '*.com' is too broad");
	expect_net_error(POLICY_NET_ALLOW_UNIX, "**/docker.sock", "--allow-unix",
			 "--allow-unix: '**/docker.sock': unsupported glob '*' " GLOB_HELP);
	expect_net_error(POLICY_NET_ALLOW_UNIX, "/run/*.sock", "--allow-unix",
			 "--allow-unix: '/run/*.sock': unsupported glob '*' " GLOB_HELP);
	expect_net_error(POLICY_NET_ALLOW_CIDR, "", "--allow-net", "--allow-net: empty value");
	expect_net_error(POLICY_NET_ALLOW_DOMAIN, NULL, "--allow-domain", "--allow-domain: empty value");
	expect_net_error(POLICY_NET_ALLOW_UNIX, "", "--allow-unix", "--allow-unix: empty value");
	expect_net_error((enum policy_net_flag)99, "x", "--x", "--x: not a network flag (99)");
	/* No diag: the error is still an error. */
	assert_int_equal(policy_add_net(&p, POLICY_NET_ALLOW_CIDR, "10.0.0.1/8", "--allow-net", &env,
					NULL), -EINVAL);
	assert_int_equal(policy_add_net(&p, POLICY_NET_ALLOW_CIDR, "10.0.0.0/8", "--allow-net", &env,
					NULL), 0);
	assert_int_equal(p.net.nr_rules, 1);
	policy_free(&p);
}

/* A flag warns as its file entry does, at the flag. */
static void test_add_net_warnings(void **state)
{
	struct policy_diag d = {};
	struct policy p;

	(void)state;
	load_ok(&p, &d, "{\"network\": {\"allowedDomains\": [\"a.example.com:443\"]}}");
	add_net(&p, &d, POLICY_NET_DENY_DOMAIN, "evil.example.org:22", "--deny-domain");
	add_net(&p, &d, POLICY_NET_DENY_CIDR, "[::/0]:22", "--deny-net");
	add_net(&p, &d, POLICY_NET_ALLOW_DOMAIN, "a.example.com:80", "--allow-domain");
	assert_int_equal(d.nr_warnings, 3);
	assert_string_equal(d.warnings[0], "--deny-domain: 'evil.example.org:22': a denied name is denied "
			    "on every port, not only 22 (the resolver cannot refuse a name for one port)");
	assert_string_equal(d.warnings[1], "--deny-net: '[::/0]:22' also covers every IPv4 address "
			    "(IPv4 is judged as ::ffff:a.b.c.d)");
	assert_string_equal(d.warnings[2], "--allow-domain: 'a.example.com:80': the name is already "
			    "allowed by 'allowedDomains a.example.com:443' (t.json:1:33), whose ports count");
	dom(&p, 1, true, false, "evil.example.org", 0, 65535);
	net(&p, 0, true, "::/0", 22, 22);
	policy_free(&p);
}

/* Flags and the same entries in a file compile to the same network section, origins aside. */
static void test_add_net_same_as_file(void **state)
{
	static const struct {
		enum policy_net_flag what;
		const char *value;
	} flags[] = {
		{ POLICY_NET_ALLOW_DOMAIN, "*.npmjs.org:443" }, { POLICY_NET_ALLOW_DOMAIN, "[::1]:8443" },
		{ POLICY_NET_DENY_DOMAIN, "*" }, { POLICY_NET_DENY_DOMAIN, "localhost" },
		{ POLICY_NET_ALLOW_CIDR, "192.168.1.0/24:22" }, { POLICY_NET_DENY_CIDR, "::ffff:10.0.0.0/104" },
		{ POLICY_NET_ALLOW_UNIX, "/nonexistent-sbx/run/a.sock" },
		{ POLICY_NET_ALLOW_LOOPBACK, NULL }, { POLICY_NET_ALLOW_LOCAL_BINDING, NULL },
		{ POLICY_NET_ALLOW_ALL_UNIX, NULL }, { POLICY_NET_ALLOW_RAW, NULL },
	};
	struct policy_diag d = {};
	struct policy f, p = {};
	char *a, *b;

	(void)state;
	load_ok(&f, &d, "{\"network\": {\"allowedDomains\": [\"*.npmjs.org:443\", \"[::1]:8443\"],"
		" \"deniedDomains\": [\"*\", \"localhost\"], \"allow\": [\"192.168.1.0/24:22\"],"
		" \"deny\": [\"::ffff:10.0.0.0/104\"], \"allowUnixSockets\": [\"/nonexistent-sbx/run/a.sock\"],"
		" \"allowLoopback\": true, \"allowLocalBinding\": true, \"allowAllUnixSockets\": true,"
		" \"allowRawSockets\": true}}");
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		add_net(&p, &d, flags[i].what, flags[i].value, "--flag");
	/* The file's name, its unset limits and the origins are all that may differ. */
	p.name = strdup(f.name);
	limits_init(&p.limits);
	for (size_t i = 0; i < f.nr_rules; i++)
		assert_non_null(strcpy(f.rules[i].origin, "--flag"));
	for (size_t i = 0; i < f.net.nr_rules; i++)
		assert_non_null(strcpy(f.net.rules[i].origin, "--flag"));
	for (size_t i = 0; i < f.net.nr_domains; i++)
		assert_non_null(strcpy(f.net.domains[i].origin, "--flag"));
	a = policy_to_json(&f);
	b = policy_to_json(&p);
	assert_non_null(a);
	assert_string_equal(b, a);
	free(a);
	free(b);
	policy_free(&f);
	policy_free(&p);
}

static void test_limits_values(void **state)
{
	const char *json =
		"{\n"
		"  \"limits\": {\n"
		"    \"cpu\": \"150%\",\n"
		"    \"cpuWeight\": 200,\n"
		"    \"memory\": \"2G\",\n"
		"    \"memoryHigh\": \"1536M\",\n"
		"    \"swapMax\": 0,\n"
		"    \"ioReadBps\": [\"/proc/self/status=5M\"],\n"
		"    \"pids\": \"256\",\n"
		"    \"timeout\": \"1h30m\",\n"
		"    \"oomGroup\": false\n"
		"  }\n"
		"}\n";
	struct policy_diag d;
	struct policy p;

	(void)state;
	/* ioReadBps on a file of procfs is an error: without it the rest parses. */
	expect_error(json, "t.json:8:19: limits.ioReadBps /proc/self/status=5M: /proc/self/status is "
		     "not on a block device (tmpfs, overlayfs, btrfs and other virtual file systems "
		     "have none to limit: name the disk, e.g. /dev/vda)");
	load_ok(&p, &d, "{\"limits\": {\"cpu\": \"150%\", \"cpuWeight\": 200, \"memory\": \"2G\","
		" \"memoryHigh\": \"1536M\", \"swapMax\": 0, \"pids\": \"256\", \"timeout\": \"1h30m\","
		" \"oomGroup\": false}}");
	assert_int_equal(p.limits.cpu_quota_us, 150000);
	assert_int_equal(p.limits.cpu_period_us, 100000);
	assert_int_equal(p.limits.cpu_weight, 200);
	assert_int_equal(p.limits.memory_max, 2LL << 30);
	assert_int_equal(p.limits.memory_high, 1536LL << 20);
	assert_int_equal(p.limits.swap_max, 0);
	assert_int_equal(p.limits.pids_max, 256);
	assert_int_equal(p.limits.timeout_ms, 5400000);
	assert_false(p.limits.oom_group);
	assert_int_equal(p.limits.nr_io, 0);
	policy_free(&p);

	/* Whole numbers as JSON numbers; the words "max" and "infinity". */
	load_ok(&p, &d, "{\"limits\": {\"pids\": 100, \"memory\": 1048576, \"timeout\": 90,"
		" \"cpu\": \"max\", \"swapMax\": \"infinity\", \"oomGroup\": true}}");
	assert_int_equal(p.limits.pids_max, 100);
	assert_int_equal(p.limits.memory_max, 1048576);
	assert_int_equal(p.limits.timeout_ms, 90000);
	assert_int_equal(p.limits.cpu_quota_us, LIMIT_MAX);
	assert_int_equal(p.limits.swap_max, LIMIT_MAX);
	assert_true(p.limits.oom_group);
	policy_free(&p);
	load_ok(&p, &d, "{\"limits\": {}}");
	assert_no_limits(&p.limits);
	policy_free(&p);
}

/* io: an array of the flag's "DEV=RATE" strings, merged per device. */
static void test_limits_io(void **state)
{
	char file[] = "/tmp/sbx-unit-io-XXXXXX", json[512];
	struct policy_diag d;
	struct policy p;
	struct stat st;
	int fd;

	(void)state;
	fd = mkstemp(file);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stat(file, &st), 0);
	if (!major(st.st_dev)) {
		unlink(file);
		return;	/* /tmp is tmpfs here */
	}
	snprintf(json, sizeof(json), "{\"limits\": {\"ioReadBps\": [\"%s=5M\"], \"ioWriteBps\": "
		 "[\"%s=1G\"], \"ioReadIops\": [\"%s=1k\"], \"ioWriteIops\": [\"%s=max\"]}}",
		 file, file, file, file);
	load_ok(&p, &d, json);
	unlink(file);
	assert_int_equal(p.limits.nr_io, 1);
	assert_int_equal(p.limits.io[0].rbps, 5000000);
	assert_int_equal(p.limits.io[0].wbps, 1000000000);
	assert_int_equal(p.limits.io[0].riops, 1000);
	assert_int_equal(p.limits.io[0].wiops, LIMIT_MAX);
	policy_free(&p);
}

static void test_limits_errors(void **state)
{
	(void)state;
	expect_error("{\"limits\": {\"memory\": \"2X\"}}",
		     "t.json:1:23: limits.memory 2X: not a size; use a number with an optional K, M, G "
		     "or T suffix (base 1024), or 'max'");
	expect_error("{\n  \"limits\": {\n    \"pids\": 10,\n    \"cpu\": \"0%\"\n  }\n}",
		     "t.json:4:12: limits.cpu 0%: must be at least 1%; use a percentage of one CPU "
		     "such as '50%' or '250%' (above 100% spans several CPUs), or 'max'");
	expect_error("{\"limits\": {\"cpu\": 150}}",
		     "t.json:1:20: limits.cpu 150: not a percentage; use a percentage of one CPU such "
		     "as '50%' or '250%' (above 100% spans several CPUs), or 'max'");
	expect_error("{\"limits\": {\"pids\": -1}}",
		     "t.json:1:21: limits.pids -1: not a number of tasks; use a whole number from 1 to "
		     "4194304, or 'max'");
	expect_error("{\"limits\": {\"cpuWeight\": 0}}",
		     "t.json:1:26: limits.cpuWeight 0: not a weight; use a whole number from 1 to 10000 "
		     "(the default weight is 100)");
	expect_error("{\"limits\": {\"swapMax\": \"99999999T\"}}",
		     "t.json:1:24: limits.swapMax 99999999T: too large; the most is 8388607T, or 'max'");
	expect_error("{\"limits\": {\"timeout\": \"0\"}}",
		     "t.json:1:24: limits.timeout 0: must be more than 0; use a number with a unit such "
		     "as '90s', '30m' or '1h30m' (units ms, s, m, h, d; a bare number is seconds)");
	expect_error("{\"limits\": {\"memoryHigh\": 0}}",
		     "t.json:1:27: limits.memoryHigh 0: must be more than 0; use a number with an "
		     "optional K, M, G or T suffix (base 1024), or 'max'");
	/* An io error points at the string in the array. */
	expect_error("{\"limits\": {\"ioWriteBps\": [\"/dev/null=1M\", \"/nonexistent-sbx/d=5M\"]}}",
		     "t.json:1:28: limits.ioWriteBps /dev/null=1M: /dev/null is a character device, "
		     "not a block device");
	expect_error("{\"limits\": {\"ioReadIops\": [\"/proc=5\", \"/nonexistent-sbx/d=5\"]}}",
		     "t.json:1:28: limits.ioReadIops /proc=5: /proc is not on a block device (tmpfs, "
		     "overlayfs, btrfs and other virtual file systems have none to limit: name the "
		     "disk, e.g. /dev/vda)");
	expect_error("{\"limits\": {\"ioReadBps\": [\"/nonexistent-sbx/d=5M\"]}}",
		     "t.json:1:27: limits.ioReadBps /nonexistent-sbx/d=5M: /nonexistent-sbx/d: No such "
		     "file or directory");
	expect_error("{\"limits\": {\"ioReadBps\": [\"/tmp\"]}}",
		     "t.json:1:27: limits.ioReadBps /tmp: not DEV=RATE; use a block device or a file on "
		     "one, '=', and bytes per second with an optional K, M, G or T suffix (base 1000), "
		     "or 'max', e.g. /dev/vda=5M");
	/* Types and keys. */
	expect_error("{\"limits\": {\"ioReadBps\": {\"/dev/vda\": \"5M\"}}}",
		     "t.json:1:26: 'limits.ioReadBps' must be an array of \"DEV=RATE\" strings, not an "
		     "object");
	expect_error("{\"limits\": {\"ioReadBps\": [5]}}",
		     "t.json:1:27: 'limits.ioReadBps[0]' must be a string, not a number");
	expect_error("{\"limits\": {\"memory\": 1.5}}",
		     "t.json:1:23: 'limits.memory' must be a string or a whole number, not a number");
	expect_error("{\"limits\": {\"pids\": null}}",
		     "t.json:1:21: 'limits.pids' must be a string or a whole number, not null");
	expect_error("{\"limits\": {\"oomGroup\": \"no\"}}",
		     "t.json:1:25: 'limits.oomGroup' must be true or false, not a string");
	expect_error("{\"limits\": {\"memroy\": \"1G\"}}",
		     "t.json:1:13: unknown key 'memroy' in 'limits' (did you mean 'memory'?)");
	expect_error("{\"limits\": {\"io-read-bps\": []}}",
		     "t.json:1:13: unknown key 'io-read-bps' in 'limits' (did you mean 'ioReadBps'?)");
	expect_error("{\"limits\": {\"nice\": 5}}",
		     "t.json:1:13: unknown key 'nice' in 'limits' (known keys: cpu, cpuWeight, memory, "
		     "memoryHigh, swapMax, ioReadBps, ioWriteBps, ioReadIops, ioWriteIops, pids, "
		     "timeout, oomGroup)");
}

/*
 * The digest the records carry follows policy_to_json(): one policy key
 * changed at a time, the document and the digest both change; the same policy
 * loaded twice gives the same digest; no two of these policies share one.
 */
static void test_digest(void **state)
{
	static const char *const variants[] = {
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/y\"], \"allowWrite\": [\"/tmp\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/var\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\", \"/etc/y\"], \"allowWrite\": [\"/tmp\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"], \"denyWrite\": [\"**/.env\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"], \"allowGitConfig\": true}}",
		"{\"mode\": \"audit\", \"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}}",
		"{\"description\": \"d\", \"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]},"
		" \"network\": {\"allow\": [\"10.0.0.0/8:443\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]},"
		" \"network\": {\"allow\": [\"10.0.0.0/8:444\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]},"
		" \"network\": {\"deny\": [\"10.0.0.0/8:443\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]},"
		" \"network\": {\"allowedDomains\": [\"github.com\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]},"
		" \"network\": {\"allowedDomains\": [\"*.github.com\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]},"
		" \"network\": {\"deniedDomains\": [\"github.com\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]},"
		" \"network\": {\"allowUnixSockets\": [\"/run/a.sock\"]}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}, \"network\": {\"allowLoopback\": true}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}, \"network\": {\"allowLocalBinding\": true}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}, \"network\": {\"allowAllUnixSockets\": true}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]},"
		" \"network\": {\"allowAbstractUnixSockets\": true}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}, \"network\": {\"allowRawSockets\": true}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}, \"network\": {\"allowAllDomains\": true}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}, \"limits\": {\"pids\": 10}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}, \"limits\": {\"pids\": 11}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}, \"limits\": {\"memory\": \"1G\"}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}, \"acceptMissing\": [\"bpf\"]}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}, \"limits\": {\"timeout\": \"1h\"}}",
		"{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]}, \"network\": {\"dnsQueryRate\": 500}}",
	};
	enum { N = sizeof(variants) / sizeof(variants[0]) };
	__u64 digest[N];
	char *doc[N];
	struct policy_diag d;
	struct policy p;

	(void)state;
	for (size_t i = 0; i < N; i++) {
		load_ok(&p, &d, variants[i]);
		assert_int_equal(policy_add_mandatory(&p), 0);
		digest[i] = policy_digest(&p);
		doc[i] = policy_to_json(&p);
		assert_non_null(doc[i]);
		policy_free(&p);
		load_ok(&p, &d, variants[i]);
		assert_int_equal(policy_add_mandatory(&p), 0);
		assert_true(policy_digest(&p) == digest[i]);
		policy_free(&p);
	}
	for (size_t i = 0; i < N; i++) {
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(doc[i], doc[j]))
				fail_msg("variants %zu and %zu compile to the same document", j, i);
			if (digest[i] == digest[j])
				fail_msg("variants %zu and %zu have the same digest", j, i);
		}
	}
	for (size_t i = 0; i < N; i++)
		free(doc[i]);
}

/* Field @i of @p changed, in place: every field policy_to_json() writes, one at a time. */
static bool mutate(struct policy *p, int i)
{
	struct net_rule *n = &p->net.rules[0];
	struct domain_rule *d = &p->net.domains[0];
	struct policy_rule *r = &p->rules[0];
	bool *flags[] = { &p->net.allow_all_domains, &p->net.allow_all_unix_sockets,
			  &p->net.allow_abstract_unix_sockets, &p->net.allow_local_binding,
			  &p->net.allow_loopback, &p->net.allow_raw_sockets };

	switch (i) {
	case 0: r->kind = RULE_ALLOW_READ; break;
	case 1: r->scope = RULE_ANY_DEPTH; break;
	case 2: r->path[1]++; break;
	case 3: r->text[0]++; break;
	case 4: r->origin[0]++; break;
	case 5: n->deny = !n->deny; break;
	case 6: n->addr[12]++; break;
	case 7: n->plen--; break;
	case 8: n->lo++; break;
	case 9: n->hi--; break;
	case 10: n->text[0]++; break;
	case 11: n->origin[0]++; break;
	case 12: d->deny = !d->deny; break;
	case 13: d->wildcard = !d->wildcard; break;
	case 14: d->name[0]++; break;
	case 15: d->lo++; break;
	case 16: d->hi--; break;
	case 17: d->text[0]++; break;
	case 18: d->origin[0]++; break;
	case 19: case 20: case 21: case 22: case 23: case 24:
		*flags[i - 19] = !*flags[i - 19];
		break;
	case 25: p->net.dns_rate = 777; break;
	case 26: p->net.dns_burst = 777; break;
	case 27: p->mode = POLICY_AUDIT; break;
	case 28: p->allow_git_config = !p->allow_git_config; break;
	case 29: p->name[0]++; break;
	case 30: p->description = strdup(""); break;	/* NULL before */
	case 31: p->limits.pids_max++; break;
	case 32: p->limits.memory_max = 1 << 30; break;
	case 33: p->limits.cpu_weight = 50; break;
	case 34: p->limits.timeout_ms = 60000; break;
	case 35: p->limits.oom_group = !p->limits.oom_group; break;
	case 36: p->accept_missing[0][0]++; break;
	default: return false;
	}
	return true;
}

/*
 * The same, from the structure: each field policy_to_json() writes changed
 * alone (a port without its rule's text, a flag without anything else)
 * changes both the document and the digest.
 */
static void test_digest_fields(void **state)
{
	static const char *base = "{\"filesystem\": {\"denyRead\": [\"/etc/x\"], \"allowWrite\": [\"/tmp\"]},"
		" \"network\": {\"allow\": [\"10.0.0.0/8:443\"], \"allowedDomains\": [\"github.com:443\"]},"
		" \"limits\": {\"pids\": 10}, \"acceptMissing\": [\"bpf\"]}";
	struct policy_diag d;
	struct policy p;
	char *doc0, *doc;
	__u64 dg0;
	int i;

	(void)state;
	load_ok(&p, &d, base);
	assert_int_equal(policy_add_mandatory(&p), 0);
	assert_null(p.description);
	assert_true(p.net.nr_rules >= 1 && p.net.nr_domains >= 1 && p.nr_accept_missing == 1);
	dg0 = policy_digest(&p);
	doc0 = policy_to_json(&p);
	assert_non_null(doc0);
	policy_free(&p);
	for (i = 0;; i++) {
		load_ok(&p, &d, base);
		assert_int_equal(policy_add_mandatory(&p), 0);
		if (!mutate(&p, i)) {
			policy_free(&p);
			break;
		}
		doc = policy_to_json(&p);
		assert_non_null(doc);
		if (!strcmp(doc, doc0))
			fail_msg("field %d: the document did not change", i);
		if (policy_digest(&p) == dg0)
			fail_msg("field %d: the document changed, the digest did not", i);
		free(doc);
		policy_free(&p);
	}
	assert_int_equal(i, 37);
	free(doc0);
}

static void test_limits_print(void **state)
{
	struct policy_diag d;
	struct policy p;
	char *buf = NULL, *s;
	size_t sz = 0;
	json_t *doc, *l;
	FILE *f;

	(void)state;
	load_ok(&p, &d, "{\"limits\": {\"cpu\": \"150%\", \"memory\": \"2G\", \"memoryHigh\": \"1G\","
		" \"pids\": \"max\", \"timeout\": \"1h30m\"}}");
	f = open_memstream(&buf, &sz);
	policy_print(&p, f);
	fclose(f);
	assert_non_null(strstr(buf, "limits:\n"
				    "  cpu.max                  150000 100000\n"
				    "  memory.high              1073741824\n"
				    "  memory.max               2147483648\n"
				    "  memory.oom.group         1\n"
				    "  pids.max                 max\n"
				    "  timeout                  1h30m (5400000 ms)\n"));
	free(buf);
	s = policy_to_json(&p);
	assert_non_null(s);
	doc = json_loads(s, 0, NULL);
	free(s);
	l = json_object_get(doc, "limits");
	assert_string_equal(json_string_value(json_object_get(l, "cpu.max")), "150000 100000");
	assert_string_equal(json_string_value(json_object_get(l, "memory.max")), "2147483648");
	assert_string_equal(json_string_value(json_object_get(l, "pids.max")), "max");
	assert_int_equal(json_integer_value(json_object_get(l, "timeout_ms")), 5400000);
	json_decref(doc);
	policy_free(&p);

	load_ok(&p, &d, "{\"limits\": {\"oomGroup\": false}}");
	buf = NULL;
	f = open_memstream(&buf, &sz);
	policy_print(&p, f);
	fclose(f);
	assert_non_null(strstr(buf, "limits:\n  timeout                  (none)\n"));
	free(buf);
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_resolve_symlinked_prefix),
		cmocka_unit_test(test_jloc),
		cmocka_unit_test(test_jloc_every_value),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_accept_missing),
		cmocka_unit_test(test_accept_missing_list),
		cmocka_unit_test(test_type_errors),
		cmocka_unit_test(test_patterns_rejected),
		cmocka_unit_test(test_glob_error_position),
		cmocka_unit_test(test_patterns_accepted),
		cmocka_unit_test(test_relative_needs_cwd),
		cmocka_unit_test(test_symlinked_rules),
		cmocka_unit_test(test_rules_in_one_directory),
		cmocka_unit_test(test_stdio_paths),
		cmocka_unit_test(test_add_rule),
		cmocka_unit_test(test_network_values),
		cmocka_unit_test(test_network_errors),
		cmocka_unit_test(test_network_cidrs),
		cmocka_unit_test(test_network_loopback),
		cmocka_unit_test(test_network_domains),
		cmocka_unit_test(test_network_domain_warnings),
		cmocka_unit_test(test_unix_sockets),
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_srt_only_keys_warn),
		cmocka_unit_test(test_warning_overflow),
		cmocka_unit_test(test_error_applies_nothing),
		cmocka_unit_test(test_mandatory),
		cmocka_unit_test(test_env_default),
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_preset_contents),
		cmocka_unit_test(test_srt_settings_file),
		cmocka_unit_test(test_load_file_errors),
		cmocka_unit_test(test_to_json),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_print_network),
		cmocka_unit_test(test_add_net),
		cmocka_unit_test(test_add_net_bools),
		cmocka_unit_test(test_add_net_errors),
		cmocka_unit_test(test_net_flag_names),
		cmocka_unit_test(test_add_net_warnings),
		cmocka_unit_test(test_add_net_same_as_file),
		cmocka_unit_test(test_limits_values),
		cmocka_unit_test(test_limits_io),
		cmocka_unit_test(test_limits_errors),
		cmocka_unit_test(test_limits_print),
		cmocka_unit_test(test_digest),
		cmocka_unit_test(test_digest_fields),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
