// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "events.h"
#include "labels.h"

static void test_keys(void **state)
{
	static const char *const good[] = { "container.id", "k8s.pod.namespace", "a", "team/app-1_x",
					    "0123456789abcdef0123456789abcdef" };
	static const char *const bad[] = { "", ".x", "-x", "a b", "a=b", "a]b", "a\"b", "é",
					   "0123456789abcdef0123456789abcdef0" };

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(label_key_ok(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(label_key_ok(bad[i]));
}

static void test_values(void **state)
{
	char longest[LABEL_VALUE_MAX + 2];

	(void)state;
	assert_true(label_value_ok(""));
	assert_true(label_value_ok("web-1 (café)"));
	assert_false(label_value_ok("a\nb"));
	assert_false(label_value_ok("tab\there"));
	assert_false(label_value_ok("\x7f"));
	assert_false(label_value_ok("caf\xe9"));	/* Latin-1, not UTF-8 */
	memset(longest, 'v', LABEL_VALUE_MAX);
	longest[LABEL_VALUE_MAX] = '\0';
	assert_true(label_value_ok(longest));
	longest[LABEL_VALUE_MAX] = 'v';
	longest[LABEL_VALUE_MAX + 1] = '\0';
	assert_false(label_value_ok(longest));
}

static void test_add(void **state)
{
	json_t *l = json_object();
	char why[256], kv[64];

	(void)state;
	assert_int_equal(labels_add(l, "team=core", why, sizeof(why)), 0);
	assert_int_equal(labels_add(l, "empty=", why, sizeof(why)), 0);
	assert_int_equal(labels_add(l, "team=edge", why, sizeof(why)), 0);	/* a later KEY replaces */
	assert_string_equal(json_string_value(json_object_get(l, "team")), "edge");
	assert_string_equal(json_string_value(json_object_get(l, "empty")), "");
	assert_int_equal(labels_add(l, "noequals", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "KEY=VALUE"));
	assert_int_equal(labels_add(l, "bad key=v", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "bad key"));
	assert_int_equal(labels_add(l, "k=line\nbreak", why, sizeof(why)), -EINVAL);
	assert_int_equal(json_object_size(l), 2);	/* nothing of the refused ones went in */
	for (int i = 0; i < LABELS_MAX - 2; i++) {
		snprintf(kv, sizeof(kv), "k%d=v", i);
		assert_int_equal(labels_add(l, kv, why, sizeof(why)), 0);
	}
	assert_int_equal(labels_add(l, "one.more=v", why, sizeof(why)), -E2BIG);
	assert_int_equal(labels_add(l, "team=again", why, sizeof(why)), 0);	/* a replacement still fits */
	assert_true(labels_valid(l));
	json_decref(l);
}

static void test_valid(void **state)
{
	json_t *j;

	(void)state;
	assert_true(labels_valid(NULL));
	j = json_pack("{s:s}", "container.id", "abc");
	assert_true(labels_valid(j));
	json_decref(j);
	j = json_pack("{s:i}", "n", 1);		/* a record edited by hand: not a label */
	assert_false(labels_valid(j));
	json_decref(j);
	j = json_pack("{s:s}", "a b", "x");
	assert_false(labels_valid(j));
	json_decref(j);
	j = json_pack("[s]", "x");
	assert_false(labels_valid(j));
	json_decref(j);
}

static void test_event_json(void **state)
{
	json_t *obj = json_object(), *l = json_pack("{s:s}", "container.name", "web");

	(void)state;
	assert_int_equal(event_json_set_labels(obj, NULL), 0);
	assert_null(json_object_get(obj, "labels"));		/* none: no key at all */
	assert_int_equal(event_json_set_labels(obj, l), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(obj, "labels"), "container.name")),
			    "web");
	json_object_set_new(l, "later", json_string("x"));	/* a copy: the event keeps what it was given */
	assert_null(json_object_get(json_object_get(obj, "labels"), "later"));
	json_decref(obj);
	json_decref(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_event_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
