// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "events.h"

static struct sbx_event ev;

static size_t make_event(const char *path)
{
	memset(&ev, 0, sizeof(ev));
	ev.tgid = 42; ev.pid = 43; ev.ppid = 1; ev.uid = 1000;
	ev.op = SBX_OP_READ;
	ev.verdict = SBX_VERDICT_DENY;
	ev.rule_id = 0;
	ev.error = -13;
	ev.cgroup_id = 77; ev.sandbox_cgroup_id = 77;
	memcpy(ev.comm, "cat", 4);
	ev.path_len = (__u32)strlen(path);
	memcpy(ev.path, path, ev.path_len + 1);
	return offsetof(struct sbx_event, path) + ev.path_len + 1;
}

static void test_validate(void **state)
{
	size_t n = make_event("/etc/shadow");

	(void)state;
	assert_int_equal(event_validate(&ev, n), 0);
	assert_int_not_equal(event_validate(&ev, n - 1), 0);		/* cut short */
	assert_int_not_equal(event_validate(&ev, 8), 0);
	ev.path[ev.path_len] = 'x';					/* no NUL */
	assert_int_not_equal(event_validate(&ev, n), 0);
	make_event("/x");
	ev.path_len = SBX_PATH_MAX;					/* out of range */
	assert_int_not_equal(event_validate(&ev, sizeof(ev)), 0);
}

static void test_human_line(void **state)
{
	char line[512];

	(void)state;
	make_event("/home/u/.ssh/id_rsa");
	event_format_human(&ev, "deny-read /home/u/.ssh", line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied read /home/u/.ssh/id_rsa (deny-read /home/u/.ssh) pid 42 cat");
	ev.flags = SBX_EV_PATH_UNRESOLVED;
	ev.rule_id = SBX_RULE_NONE;
	ev.path[0] = '\0';
	ev.path_len = 0;
	event_format_human(&ev, NULL, line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied read (unresolvable path) "
				  "(fail-closed: unresolvable path) pid 42 cat");
}

/* rename/link carry a second path; a refused move between rules says so. */
static void test_two_paths(void **state)
{
	char line[512];
	size_t n;
	json_t *j;

	(void)state;
	make_event("/w/.git");
	ev.op = SBX_OP_RENAME;
	ev.flags = SBX_EV_PATH2 | SBX_EV_RENAME_GUARD;
	ev.path2_len = 4;
	memcpy(ev.path2, "/w/g", 5);
	n = offsetof(struct sbx_event, path2) + ev.path2_len + 1;
	assert_int_equal(event_validate(&ev, n), 0);
	assert_int_not_equal(event_validate(&ev, n - 1), 0);	/* path2 cut short */
	ev.path2[4] = 'x';
	assert_int_not_equal(event_validate(&ev, n), 0);	/* path2 without NUL */
	ev.path2[4] = '\0';
	event_format_human(&ev, "mandatory: .git/hooks", line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied rename /w/.git -> /w/g (mandatory: .git/hooks; "
				  "it would move files between rules) pid 42 cat");
	j = event_to_json(&ev, "mandatory: .git/hooks", "s");
	assert_string_equal(json_string_value(json_object_get(j, "path2")), "/w/g");
	assert_true(json_is_true(json_object_get(j, "moves_between_rules")));
	json_decref(j);
}

/* Verdicts no policy rule made have fixed texts and a null id. */
static void test_builtin_rules(void **state)
{
	json_t *j;

	(void)state;
	make_event("/etc/x");
	ev.op = SBX_OP_WRITE;
	ev.rule_id = SBX_RULE_DEFAULT_WRITE;
	assert_string_equal(event_rule_text(&ev, NULL), "default: no allowWrite rule covers it");
	ev.rule_id = SBX_RULE_PSEUDO_FS;
	assert_string_equal(event_rule_text(&ev, NULL), "mandatory: cgroup, bpf and security file systems");
	j = event_to_json(&ev, NULL, "s");
	assert_true(json_is_null(json_object_get(json_object_get(j, "rule"), "id")));
	assert_true(json_is_null(json_object_get(j, "path2")));
	json_decref(j);
	ev.rule_id = 3;
	assert_string_equal(event_rule_text(&ev, "denyRead ~/.ssh"), "denyRead ~/.ssh");
}

static void test_json(void **state)
{
	json_t *j, *p;

	(void)state;
	make_event("/etc/shadow");
	j = event_to_json(&ev, "deny-read /etc/shadow", "agent-1");
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "schema")), SBX_EVENT_SCHEMA);
	assert_string_equal(json_string_value(json_object_get(j, "type")), "violation");
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "denied");
	assert_string_equal(json_string_value(json_object_get(j, "op")), "read");
	assert_string_equal(json_string_value(json_object_get(j, "path")), "/etc/shadow");
	assert_int_equal(json_integer_value(json_object_get(j, "errno")), 13);
	assert_string_equal(json_string_value(json_object_get(j, "sandbox")), "agent-1");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "rule"), "text")),
			    "deny-read /etc/shadow");
	p = json_object_get(j, "process");
	assert_int_equal(json_integer_value(json_object_get(p, "pid")), 42);
	assert_int_equal(json_integer_value(json_object_get(p, "tid")), 43);
	assert_string_equal(json_string_value(json_object_get(p, "comm")), "cat");
	assert_true(json_is_false(json_object_get(j, "path_unresolved")));
	assert_int_equal(strlen(json_string_value(json_object_get(j, "time"))), 30);
	json_decref(j);

	ev.rule_id = SBX_RULE_NONE;
	ev.flags = SBX_EV_PATH_UNRESOLVED;
	j = event_to_json(&ev, NULL, NULL);
	assert_true(json_is_null(json_object_get(json_object_get(j, "rule"), "id")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "rule"), "text")),
			    "fail-closed: unresolvable path");
	assert_true(json_is_true(json_object_get(j, "path_unresolved")));
	assert_true(json_is_null(json_object_get(j, "sandbox")));
	json_decref(j);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(sbx_op_name(SBX_OP_READ), "read");
	for (__u32 op = 1; op < SBX_OP__MAX; op++)	/* every op the kernel sends has a name */
		assert_string_not_equal(sbx_op_name(op), "unknown");
	assert_string_equal(sbx_op_name(SBX_OP_REMOVEXATTR), "removexattr");
	assert_string_equal(sbx_op_name(9999), "unknown");
	assert_string_equal(sbx_verdict_name(SBX_VERDICT_AUDIT), "audit");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_human_line),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_two_paths),
		cmocka_unit_test(test_builtin_rules),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests_name("events", tests, NULL, NULL);
}
