// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sbxstate.c: the host agent's per-cgroup policy records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_hash_follows_policy),
	};

	return cmocka_run_group_tests_name("sbxstate", tests, NULL, NULL);
}
