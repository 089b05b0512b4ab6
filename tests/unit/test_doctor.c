// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "doctor.h"

static void test_lsm_fix_keeps_order(void **state)
{
	char out[128];

	(void)state;
	doctor_lsm_with_bpf("lockdown,capability,landlock,yama,apparmor", out, sizeof(out));
	assert_string_equal(out, "lsm=lockdown,capability,landlock,yama,apparmor,bpf");
	doctor_lsm_with_bpf("capability,bpf", out, sizeof(out));
	assert_string_equal(out, "lsm=capability,bpf");
	doctor_lsm_with_bpf("", out, sizeof(out));
	assert_string_equal(out, "lsm=bpf");
}

static void test_lockdown_mode(void **state)
{
	char m[32];

	(void)state;
	assert_int_equal(doctor_lockdown_mode("none [integrity] confidentiality\n", m, sizeof(m)), 0);
	assert_string_equal(m, "integrity");
	assert_int_equal(doctor_lockdown_mode("[none] integrity confidentiality", m, sizeof(m)), 0);
	assert_string_equal(m, "none");
	assert_int_not_equal(doctor_lockdown_mode("none integrity", m, sizeof(m)), 0);
}

static void test_missing_controllers(void **state)
{
	char out[64];

	(void)state;
	doctor_missing_controllers("cpuset cpu io memory hugetlb pids rdma misc", out, sizeof(out));
	assert_string_equal(out, "");
	doctor_missing_controllers("cpuset memory pids", out, sizeof(out));
	assert_string_equal(out, "cpu io");	/* "cpuset" is not "cpu" */
	doctor_missing_controllers("", out, sizeof(out));
	assert_string_equal(out, "cpu memory io pids");
}

static void test_report_json_and_verdict(void **state)
{
	struct doctor_report r = { .nr = 2 };
	json_t *j;

	(void)state;
	r.checks[0] = (struct check){ .name = "kernel", .status = CHECK_PASS, .detail = "ok" };
	r.checks[1] = (struct check){ .name = "bpffs", .status = CHECK_WARN, .detail = "x", .fix = "mount" };
	assert_true(doctor_ok(&r));
	r.checks[1].status = CHECK_FAIL;
	assert_false(doctor_ok(&r));
	j = doctor_to_json(&r);
	assert_non_null(j);
	assert_true(json_is_false(json_object_get(j, "ok")));
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(json_object_get(j, "checks"), 1), "status")), "FAIL");
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(j, "checks"), 0), "fix")));
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lsm_fix_keeps_order),
		cmocka_unit_test(test_lockdown_mode),
		cmocka_unit_test(test_missing_controllers),
		cmocka_unit_test(test_report_json_and_verdict),
	};

	return cmocka_run_group_tests_name("doctor", tests, NULL, NULL);
}
