// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "forget.h"
#include "ocistate.h"

static void test_stage(void **state)
{
	(void)state;
	assert_string_equal(oci_stage("createRuntime", NULL), "createRuntime");
	assert_string_equal(oci_stage("prestart", "stopped"), "createRuntime");	/* the argument wins */
	assert_string_equal(oci_stage("poststop", NULL), "poststop");
	assert_null(oci_stage("poststart", "running"));
	assert_string_equal(oci_stage(NULL, "creating"), "createRuntime");
	assert_string_equal(oci_stage(NULL, "stopped"), "poststop");
	assert_null(oci_stage(NULL, "created"));
	assert_null(oci_stage(NULL, NULL));
}

static void test_cgroup_rel(void **state)
{
	char rel[64];

	(void)state;
	assert_int_equal(oci_cgroup_rel("0::/machine.slice/libpod-ab.scope/container\n", rel, sizeof(rel)), 0);
	assert_string_equal(rel, "/machine.slice/libpod-ab.scope/container");
	/* a hybrid host: the v2 line among v1 ones */
	assert_int_equal(oci_cgroup_rel("12:pids:/x\n1:name=systemd:/y\n0::/sbx-e2e-c1\n", rel, sizeof(rel)), 0);
	assert_string_equal(rel, "/sbx-e2e-c1");
	assert_int_equal(oci_cgroup_rel("12:pids:/x\n1:name=systemd:/y\n", rel, sizeof(rel)), -ENOENT);
	assert_int_equal(oci_cgroup_rel("10:cpu:0::/not-v2\n", rel, sizeof(rel)), -ENOENT);
	assert_int_equal(oci_cgroup_rel("0::/\n", rel, sizeof(rel)), -EPERM);		/* the whole host */
	assert_int_equal(oci_cgroup_rel("0::/../../other\n", rel, sizeof(rel)), -EPERM);	/* outside our namespace */
	assert_int_equal(oci_cgroup_rel("0::/a/..\n", rel, sizeof(rel)), -EPERM);
	assert_int_equal(oci_cgroup_rel("0::/a/..b\n", rel, sizeof(rel)), 0);		/* a name, not ".." */
	assert_int_equal(oci_cgroup_rel("0::/a-very-long-cgroup-path-that-will-not-fit-in-the-buffer-given\n",
					rel, 16), -ENAMETOOLONG);
}

static void test_labels(void **state)
{
	json_t *st = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s}}", "id", "c0ffee", "bundle", "/b",
			       "annotations", "io.sbx-bpf.policy", "agent-default",
			       "io.kubernetes.container.name", "web", "io.kubernetes.pod.name", "web-7d",
			       "io.kubernetes.pod.namespace", "shop", "io.sbx-bpf.label.team", "payments");
	json_t *l = json_object();
	char why[256];

	(void)state;
	assert_int_equal(oci_labels(st, "stored-name", l, why, sizeof(why)), 0);
	assert_string_equal(json_string_value(json_object_get(l, "container.id")), "c0ffee");
	assert_string_equal(json_string_value(json_object_get(l, "container.name")), "web");	/* CRI's first */
	assert_string_equal(json_string_value(json_object_get(l, "k8s.pod.name")), "web-7d");
	assert_string_equal(json_string_value(json_object_get(l, "k8s.pod.namespace")), "shop");
	assert_string_equal(json_string_value(json_object_get(l, "team")), "payments");
	assert_int_equal(json_object_size(l), 5);
	json_decref(l);

	/* io.sbx-bpf.name wins; without either, the engine's stored name; without that, none */
	json_object_set_new(json_object_get(st, "annotations"), "io.sbx-bpf.name", json_string("given"));
	l = json_object();
	assert_int_equal(oci_labels(st, "stored-name", l, why, sizeof(why)), 0);
	assert_string_equal(json_string_value(json_object_get(l, "container.name")), "given");
	json_decref(l);
	json_object_clear(json_object_get(st, "annotations"));
	l = json_object();
	assert_int_equal(oci_labels(st, "stored-name", l, why, sizeof(why)), 0);
	assert_string_equal(json_string_value(json_object_get(l, "container.name")), "stored-name");
	json_decref(l);
	l = json_object();
	assert_int_equal(oci_labels(st, NULL, l, why, sizeof(why)), 0);
	assert_null(json_object_get(l, "container.name"));
	json_decref(l);

	/* a label key that syslog could not carry, a value with a newline: refused, with the reason */
	json_object_set_new(json_object_get(st, "annotations"), "io.sbx-bpf.label.bad key", json_string("v"));
	l = json_object();
	assert_int_equal(oci_labels(st, NULL, l, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "bad key"));
	json_decref(l);
	json_object_clear(json_object_get(st, "annotations"));
	json_object_set_new(json_object_get(st, "annotations"), "io.sbx-bpf.name", json_string("a\nb"));
	l = json_object();
	assert_int_equal(oci_labels(st, NULL, l, why, sizeof(why)), -EINVAL);
	json_decref(l);
	json_object_del(st, "id");
	l = json_object();
	assert_int_equal(oci_labels(st, NULL, l, why, sizeof(why)), -EINVAL);
	json_decref(l);
	json_decref(st);
}

static void test_storage_name(void **state)
{
	char dir[] = "/tmp/sbx-oci-XXXXXX", bundle[PATH_MAX], file[PATH_MAX];
	json_t *name;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(bundle, sizeof(bundle), "%s/abc/userdata", dir);
	snprintf(file, sizeof(file), "%s/abc", dir);
	assert_int_equal(mkdir(file, 0700), 0);
	assert_int_equal(mkdir(bundle, 0700), 0);
	assert_null(oci_storage_name(bundle, "abc"));		/* no containers.json */
	snprintf(file, sizeof(file), "%s/containers.json", dir);
	f = fopen(file, "w");
	fputs("[{\"id\":\"zzz\",\"names\":[\"other\"]},{\"id\":\"abc\",\"names\":[\"quirky_hopper\",\"alias\"]}]", f);
	fclose(f);
	name = oci_storage_name(bundle, "abc");
	assert_string_equal(json_string_value(name), "quirky_hopper");
	json_decref(name);
	assert_null(oci_storage_name(bundle, "nope"));
	assert_null(oci_storage_name(NULL, "abc"));
	unlink(file);
	snprintf(file, sizeof(file), "%s/abc", dir);
	rmdir(bundle);
	rmdir(file);
	rmdir(dir);
}

static void test_process_env(void **state)
{
	json_t *cfg = json_pack("{s:{s:[s, s], s:s}}", "process", "env", "PATH=/bin", "HOME=/home/app", "cwd", "/work");
	char home[64], cwd[64];

	(void)state;
	oci_process_env(cfg, home, sizeof(home), cwd, sizeof(cwd));
	assert_string_equal(home, "/home/app");
	assert_string_equal(cwd, "/work");
	json_decref(cfg);
	cfg = json_pack("{s:{s:[s], s:s}}", "process", "env", "HOME=relative", "cwd", "relative");
	oci_process_env(cfg, home, sizeof(home), cwd, sizeof(cwd));
	assert_string_equal(home, "/root");	/* only absolute values count */
	assert_string_equal(cwd, "/");
	json_decref(cfg);
}

/* A cgroup is gone when nothing is at its path, or another directory (another inode) is. */
static void test_cgroup_gone(void **state)
{
	char dir[] = "/tmp/sbx-gone-XXXXXX";
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(stat(dir, &st), 0);
	assert_false(sandbox_cgroup_gone(dir, st.st_ino));
	assert_true(sandbox_cgroup_gone(dir, st.st_ino + 1));
	assert_false(sandbox_cgroup_gone(NULL, 5));		/* nothing to go by: kept */
	assert_false(sandbox_cgroup_gone("", 5));
	rmdir(dir);
	assert_true(sandbox_cgroup_gone(dir, st.st_ino));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage),
		cmocka_unit_test(test_cgroup_rel),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_storage_name),
		cmocka_unit_test(test_process_env),
		cmocka_unit_test(test_cgroup_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
