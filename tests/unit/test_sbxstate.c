// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sbxstate.c: the host agent's per-cgroup policy records. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "netrules.h"
#include "policy.h"
#include "sbx_abi.h"
#include "sbxstate.h"

static void load(struct policy *p, const char *json)
{
	struct policy_env env = { .home = "/home/u", .cwd = "/w" };
	struct policy_diag diag = {};

	memset(p, 0, sizeof(*p));
	assert_int_equal(policy_load_string(p, "t.json", json, &env, &diag), 0);
}

static void test_roundtrip(void **state)
{
	char dir[] = "/tmp/sbxstate.XXXXXX";
	struct policy p;
	struct state_entry e = { .cgroup = "/sys/fs/cgroup/a", .cgroup_id = 4242, .policy_id = 7 };
	json_t *st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	load(&p, "{ \"filesystem\": { \"denyRead\": [ \"/etc/x\" ] },"
		 "  \"network\": { \"allow\": [ \"10.0.0.0/8:443\" ], \"allowedDomains\": [ \"a.example\" ] } }");
	assert_int_equal(state_write(dir, &e, &p), 0);
	st = state_read(dir, 4242);
	assert_non_null(st);
	assert_string_equal(json_string_value(json_object_get(st, "cgroup")), "/sys/fs/cgroup/a");
	assert_int_equal(json_integer_value(json_object_get(st, "policy_id")), 7);
	assert_string_equal(json_string_value(json_object_get(st, "mode")), "enforce");
	assert_int_equal(strlen(json_string_value(json_object_get(st, "policy_hash"))), 16);
	/* Rule ids of every space map to the texts events show. */
	assert_string_equal(state_rule_text(st, 0), "denyRead /etc/x");
	assert_string_equal(state_rule_text(st, SBX_RULE_NET_BASE), "allow 10.0.0.0/8:443");
	assert_string_equal(state_rule_text(st, SBX_RULE_DOMAIN_BASE), "allowedDomains a.example");
	assert_null(state_rule_text(st, 99));
	assert_null(state_rule_text(st, SBX_RULE_NET_DEFAULT));
	json_decref(st);
	policy_free(&p);

	assert_int_equal(state_remove(dir, 4242), 0);
	assert_null(state_read(dir, 4242));
	assert_int_equal(state_remove(dir, 4242), 0);	/* already gone: fine */
	rmdir(dir);
}

static size_t builtin_files(const char *dir, char *name, size_t sz)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "builtin-", 8)) {
			snprintf(name, sz, "%s/%s", dir, de->d_name);
			n++;
		}
	closedir(d);
	return n;
}

static json_t *raw_record(const char *dir, __u64 cgid)
{
	char path[PATH_MAX];

	assert_int_equal(state_path(dir, cgid, "", path, sizeof(path)), 0);
	return json_load_file(path, 0, NULL);
}

/* The record's directory and the lock's are made when missing (two levels), and only then. */
static void test_makes_missing_dirs(void **state)
{
	char dir[] = "/tmp/sbxstate.XXXXXX", sub[64], file[80], under_file[96];
	struct state_entry e = { .cgroup = "/sys/fs/cgroup/a", .cgroup_id = 5, .policy_id = 1 };
	struct policy p;
	json_t *st;
	FILE *f;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	load(&p, "{ \"filesystem\": { \"denyRead\": [ \"/etc/x\" ] } }");
	assert_int_equal(policy_add_mandatory(&p), 0);		/* a builtin file, made there first */
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	assert_int_equal(state_write(sub, &e, &p), 0);
	st = state_read(sub, 5);
	assert_non_null(st);
	assert_int_equal(json_array_size(json_object_get(st, "fs")), p.nr_rules);
	json_decref(st);
	assert_int_equal(state_remove(sub, 5), 0);
	assert_int_equal(builtin_files(sub, file, sizeof(file)), 1);
	unlink(file);
	rmdir(sub);
	fd = state_lock(sub);				/* gone again: the lock makes it */
	assert_true(fd >= 0);
	close(fd);
	snprintf(file, sizeof(file), "%s/.lock", sub);
	unlink(file);
	rmdir(sub);

	/* Below a file: said, not made. */
	snprintf(file, sizeof(file), "%s/file", dir);
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(under_file, sizeof(under_file), "%s/x", file);
	assert_int_equal(state_write(under_file, &e, &p), -ENOTDIR);
	assert_int_equal(state_lock(under_file), -ENOTDIR);
	unlink(file);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	rmdir(sub);
	rmdir(dir);
	policy_free(&p);
}

/*
 * The built-in rules go once into a builtin file the records name; a
 * record read back is whole (every rule's text and "fs" string, by rule
 * id), written back is whole on disk, and without its builtin file (gone,
 * or not what its name says) loses "fs" rather than rules.
 */
static void test_builtin_rules_shared(void **state)
{
	char dir[] = "/tmp/sbxstate.XXXXXX", bfile[PATH_MAX], other[PATH_MAX];
	struct state_entry e = { .cgroup = "/sys/fs/cgroup/a", .cgroup_id = 11, .policy_id = 1 };
	struct policy p, q;
	json_t *st, *raw;
	size_t n, own;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	load(&p, "{ \"filesystem\": { \"denyRead\": [ \"/etc/x\", \"/etc/y\" ] } }");
	own = p.nr_rules;
	assert_int_equal(policy_add_mandatory(&p), 0);
	n = p.nr_rules;
	assert_true(n > own + 10);
	assert_int_equal(state_write(dir, &e, &p), 0);
	e.cgroup_id = 12;
	assert_int_equal(state_write(dir, &e, &p), 0);
	assert_int_equal(builtin_files(dir, bfile, sizeof(bfile)), 1);	/* one for both */

	/* On disk: the record's own rules and the file's name. */
	raw = raw_record(dir, 11);
	assert_int_equal(json_array_size(json_object_get(raw, "rules")), own);
	assert_int_equal(json_array_size(json_object_get(raw, "fs")), own);
	assert_non_null(strstr(bfile, json_string_value(json_object_get(raw, "builtin"))));
	json_decref(raw);

	/* Read back: whole, by rule id. */
	st = state_read(dir, 11);
	assert_non_null(st);
	assert_null(json_object_get(st, "builtin"));
	assert_int_equal(json_array_size(json_object_get(st, "rules")), n);
	assert_int_equal(json_array_size(json_object_get(st, "fs")), n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(state_rule_text(st, (__u32)i), p.rules[i].text);
	assert_string_equal(json_string_value(json_array_get(json_object_get(st, "fs"), n - 1)),
			    "allowWrite absolute /dev/tty");

	/* Written back (as grant does): whole on disk, and read again the same. */
	assert_int_equal(state_write_record(dir, 11, st), 0);
	json_decref(st);
	raw = raw_record(dir, 11);
	assert_int_equal(json_array_size(json_object_get(raw, "rules")), n);
	assert_null(json_object_get(raw, "builtin"));
	json_decref(raw);
	st = state_read(dir, 11);
	assert_int_equal(json_array_size(json_object_get(st, "fs")), n);
	json_decref(st);

	/* Another set of built-in rules, another file. */
	load(&q, "{ \"filesystem\": { \"allowGitConfig\": true, \"denyRead\": [ \"/etc/x\" ] } }");
	assert_int_equal(policy_add_mandatory(&q), 0);
	e.cgroup_id = 13;
	assert_int_equal(state_write(dir, &e, &q), 0);
	assert_int_equal(builtin_files(dir, other, sizeof(other)), 2);
	policy_free(&q);

	/* Not what its name says: the record keeps its own texts, loses "fs". */
	f = fopen(bfile, "w");
	assert_non_null(f);
	fputs("{\"rules\":[\"mandatory: .x\"],\"fs\":[\"allowWrite absolute /\"]}", f);
	fclose(f);
	st = state_read(dir, 12);
	assert_non_null(st);
	assert_int_equal(json_array_size(json_object_get(st, "rules")), own);
	assert_null(json_object_get(st, "fs"));
	assert_null(state_rule_text(st, (__u32)own));
	json_decref(st);
	/* Gone: the same; the next record writes it again. */
	unlink(bfile);
	st = state_read(dir, 12);
	assert_null(json_object_get(st, "fs"));
	json_decref(st);
	e.cgroup_id = 12;
	assert_int_equal(state_write(dir, &e, &p), 0);
	st = state_read(dir, 12);
	assert_int_equal(json_array_size(json_object_get(st, "fs")), n);
	json_decref(st);

	for (__u64 id = 11; id <= 13; id++)
		state_remove(dir, id);
	unlink(bfile);
	builtin_files(dir, other, sizeof(other));
	unlink(other);
	assert_int_equal(rmdir(dir), 0);
	policy_free(&p);
}

static void test_hash_follows_policy(void **state)
{
	char dir[] = "/tmp/sbxstate.XXXXXX";
	struct state_entry e = { .cgroup = "/c", .cgroup_id = 1, .policy_id = 2, .audit = true };
	struct policy a, b;
	char h1[32];
	json_t *st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	load(&a, "{ \"filesystem\": { \"denyRead\": [ \"/etc/x\" ] } }");
	load(&b, "{ \"filesystem\": { \"denyRead\": [ \"/etc/y\" ] } }");
	assert_int_equal(state_write(dir, &e, &a), 0);
	st = state_read(dir, 1);
	snprintf(h1, sizeof(h1), "%s", json_string_value(json_object_get(st, "policy_hash")));
	assert_string_equal(json_string_value(json_object_get(st, "mode")), "audit");
	json_decref(st);
	assert_int_equal(state_write(dir, &e, &b), 0);	/* replaced in place */
	st = state_read(dir, 1);
	assert_string_not_equal(json_string_value(json_object_get(st, "policy_hash")), h1);
	assert_string_equal(state_rule_text(st, 0), "denyRead /etc/y");
	json_decref(st);
	policy_free(&a);
	policy_free(&b);
	state_remove(dir, 1);
	rmdir(dir);
}

/* The limits attach wrote and what they replaced come back as written, in the order of the writes. */
static void test_limits_roundtrip(void **state)
{
	char dir[] = "/tmp/sbxstate.XXXXXX";
	const struct limit_write lim[] = {
		{ "memory.max", "67108864" }, { "memory.oom.group", "1" },
		{ "io.max", "8:0 wbps=5000000" }, { "io.max", "8:16 riops=100" }, { "pids.max", "20" },
	};
	const struct limit_write orig[] = {
		{ "memory.max", "max" }, { "memory.oom.group", "0" },
		{ "io.max", "8:0 rbps=max wbps=max riops=max wiops=max" },
		{ "io.max", "8:16 rbps=1000 wbps=max riops=max wiops=max" }, { "pids.max", "max" },
	};
	struct state_entry e = { .cgroup = "/sys/fs/cgroup/a", .cgroup_id = 77, .policy_id = 3,
				 .limits = lim, .nr_limits = 5, .restore = orig, .nr_restore = 5 };
	struct limit_write got[LIMITS_WRITES_MAX];
	struct policy p;
	json_t *st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	load(&p, "{ \"filesystem\": { \"denyRead\": [ \"/etc/x\" ] } }");
	assert_int_equal(state_write(dir, &e, &p), 0);
	st = state_read(dir, 77);
	assert_non_null(st);
	/* The shape `list --json` shows: one key per file, io.max a list of lines. */
	assert_string_equal(json_string_value(json_object_get(json_object_get(st, "limits"), "pids.max")), "20");
	assert_int_equal(json_array_size(json_object_get(json_object_get(st, "limits"), "io.max")), 2);
	assert_int_equal(state_limits(st, "limits", got, LIMITS_WRITES_MAX), 5);
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(got[i].file, lim[i].file);
		assert_string_equal(got[i].value, lim[i].value);
	}
	assert_int_equal(state_limits(st, "limits_restore", got, LIMITS_WRITES_MAX), 5);
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(got[i].file, orig[i].file);
		assert_string_equal(got[i].value, orig[i].value);
	}
	assert_int_equal(state_limits(st, "limits_restore", got, 4), -E2BIG);
	json_decref(st);

	/* No limits: empty objects, nothing to restore. */
	e.nr_limits = e.nr_restore = 0;
	assert_int_equal(state_write(dir, &e, &p), 0);
	st = state_read(dir, 77);
	assert_int_equal(json_object_size(json_object_get(st, "limits")), 0);
	assert_int_equal(state_limits(st, "limits_restore", got, LIMITS_WRITES_MAX), 0);
	json_decref(st);
	policy_free(&p);
	state_remove(dir, 77);
	rmdir(dir);
}

/* Records of older builds have no limits; ones this build cannot read are refused, not half-read. */
static void test_limits_read_back(void **state)
{
	struct limit_write got[LIMITS_WRITES_MAX];
	json_t *st;

	(void)state;
	st = json_pack("{s:s}", "cgroup", "/c");
	assert_int_equal(state_limits(st, "limits_restore", got, LIMITS_WRITES_MAX), 0);
	json_decref(st);
	assert_int_equal(state_limits(NULL, "limits", got, LIMITS_WRITES_MAX), 0);

	/* Whatever order the keys come in, the writes' order comes out. */
	st = json_loads("{\"limits\": {\"pids.max\": \"5\", \"cpu.max\": \"max 100000\", "
			"\"memory.high\": \"1\", \"memory.max\": \"2\"}}", 0, NULL);
	assert_int_equal(state_limits(st, "limits", got, LIMITS_WRITES_MAX), 4);
	assert_string_equal(got[0].file, "cpu.max");
	assert_string_equal(got[1].file, "memory.high");
	assert_string_equal(got[2].file, "memory.max");
	assert_string_equal(got[3].file, "pids.max");
	json_decref(st);

	st = json_loads("{\"limits\": {\"hugetlb.2MB.max\": \"5\"}}", 0, NULL);
	assert_int_equal(state_limits(st, "limits", got, LIMITS_WRITES_MAX), -EINVAL);
	json_decref(st);
	st = json_loads("{\"limits\": {\"pids.max\": 5}}", 0, NULL);
	assert_int_equal(state_limits(st, "limits", got, LIMITS_WRITES_MAX), -EINVAL);
	json_decref(st);
	st = json_loads("{\"limits\": [\"pids.max\"]}", 0, NULL);
	assert_int_equal(state_limits(st, "limits", got, LIMITS_WRITES_MAX), -EINVAL);
	json_decref(st);
}

/* The verdict of every name is the same from the record as from the policy. */
static void same_verdicts(const struct policy *a, const struct policy *b)
{
	static const char *const names[] = {
		"one.test", "ONE.test.", "x.one.test", "api.npm.example", "npm.example", "a.b.npm.example",
		"bad.npm.example", "two.test", "ported.test", "x.ported.test", "", "test",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct domain_verdict va, vb;

		net_domain_verdict(a, names[i], &va);
		net_domain_verdict(b, names[i], &vb);
		if (va.allowed != vb.allowed || va.rule_id != vb.rule_id || va.lo != vb.lo || va.hi != vb.hi)
			fail_msg("'%s': policy %d/%x/%u-%u, record %d/%x/%u-%u", names[i], va.allowed, va.rule_id,
				 va.lo, va.hi, vb.allowed, vb.rule_id, vb.lo, vb.hi);
	}
}

/* What an attach with domain rules records for the daemon's resolver, and reads back. */
static void test_resolver_roundtrip(void **state)
{
	char dir[] = "/tmp/sbxstate.XXXXXX";
	struct state_entry e = { .cgroup = "/sys/fs/cgroup/a", .cgroup_id = 99, .policy_id = 5,
				 .audit = true, .resolver = true };
	struct policy p, back = {};
	json_t *st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	load(&p, "{ \"network\": { \"allowedDomains\": [ \"one.test\", \"*.npm.example\", \"10.1.2.3\","
		 "  \"ported.test:8080\" ], \"deniedDomains\": [ \"bad.npm.example\" ] } }");
	assert_int_equal(state_write(dir, &e, &p), 0);
	st = state_read(dir, 99);
	assert_int_equal(state_resolver(st, &back), 0);
	/* Names only (10.1.2.3 is a CIDR rule), in the policy's order: rule ids and texts stay the policy's. */
	assert_int_equal(back.net.nr_domains, p.net.nr_domains);
	for (size_t i = 0; i < p.net.nr_domains; i++) {
		assert_string_equal(back.net.domains[i].name, p.net.domains[i].name);
		assert_int_equal(back.net.domains[i].wildcard, p.net.domains[i].wildcard);
		assert_int_equal(back.net.domains[i].deny, p.net.domains[i].deny);
		assert_int_equal(back.net.domains[i].lo, p.net.domains[i].lo);
		assert_int_equal(back.net.domains[i].hi, p.net.domains[i].hi);
		assert_string_equal(back.net.domains[i].text, p.net.domains[i].text);
		assert_string_equal(state_rule_text(st, SBX_RULE_DOMAIN_BASE + (__u32)i), p.net.domains[i].text);
	}
	assert_int_equal(back.net.domains[2].lo, 8080);
	assert_int_equal(back.net.domains[2].hi, 8080);
	assert_false(back.net.allow_all_domains);
	assert_int_equal(back.mode, POLICY_AUDIT);
	same_verdicts(&p, &back);
	json_decref(st);
	policy_free(&back);
	policy_free(&p);

	/* allowAllDomains with names to refuse; the query rate limit the daemon's resolver is to apply. */
	e.audit = false;
	load(&p, "{ \"network\": { \"allowAllDomains\": true, \"deniedDomains\": [ \"two.test\" ],"
		 " \"dnsQueryRate\": 7, \"dnsQueryBurst\": 9 } }");
	assert_int_equal(state_write(dir, &e, &p), 0);
	st = state_read(dir, 99);
	assert_int_equal(state_resolver(st, &back), 0);
	assert_true(back.net.allow_all_domains);
	assert_int_equal(back.net.dns_rate, 7);
	assert_int_equal(back.net.dns_burst, 9);
	assert_int_equal(back.mode, POLICY_ENFORCE);
	same_verdicts(&p, &back);
	json_decref(st);
	policy_free(&back);

	/* Not the daemon's to resolve: no "resolver" (a `run`'s record, an attach without domains). */
	e.resolver = false;
	assert_int_equal(state_write(dir, &e, &p), 0);
	st = state_read(dir, 99);
	assert_int_equal(state_resolver(st, &back), -ENOENT);
	assert_int_equal(back.net.nr_domains, 0);
	json_decref(st);
	policy_free(&p);
	state_remove(dir, 99);
	rmdir(dir);
}

/* A record this build cannot read gives no resolver rather than other rules. */
static void test_resolver_bad_records(void **state)
{
	static const char *const bad[] = {
		"{\"resolver\": []}",
		"{\"resolver\": {\"domains\": []}}",
		"{\"resolver\": {\"allow_all_domains\": false}}",
		"{\"resolver\": {\"allow_all_domains\": 0, \"domains\": []}}",
		"{\"resolver\": {\"allow_all_domains\": false, \"domains\": [\"one.test\"]}}",
		"{\"resolver\": {\"allow_all_domains\": false, \"domains\": [{\"name\": \"a\", \"wildcard\": false,"
		"  \"deny\": false, \"lo\": 0}]}}",
		"{\"resolver\": {\"allow_all_domains\": false, \"domains\": [{\"name\": \"a\", \"wildcard\": false,"
		"  \"deny\": false, \"lo\": 90, \"hi\": 80}]}}",
		"{\"resolver\": {\"allow_all_domains\": false, \"domains\": [{\"name\": \"a\", \"wildcard\": false,"
		"  \"deny\": false, \"lo\": 0, \"hi\": 65536}]}}",
		"{\"resolver\": {\"allow_all_domains\": false, \"domains\": [{\"name\": \"ok\", \"wildcard\": false,"
		"  \"deny\": false, \"lo\": 0, \"hi\": 1}, {\"name\": 7, \"wildcard\": false, \"deny\": false,"
		"  \"lo\": 0, \"hi\": 1}]}}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *st = json_loads(bad[i], 0, NULL);
		struct policy p = {};

		assert_non_null(st);
		if (state_resolver(st, &p) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_int_equal(p.net.nr_domains, 0);	/* nothing half read is left */
		json_decref(st);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_makes_missing_dirs),
		cmocka_unit_test(test_builtin_rules_shared),
		cmocka_unit_test(test_hash_follows_policy),
		cmocka_unit_test(test_limits_roundtrip),
		cmocka_unit_test(test_limits_read_back),
		cmocka_unit_test(test_resolver_roundtrip),
		cmocka_unit_test(test_resolver_bad_records),
	};

	return cmocka_run_group_tests_name("sbxstate", tests, NULL, NULL);
}
