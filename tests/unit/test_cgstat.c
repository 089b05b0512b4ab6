// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The cgroupfs parsers and NAME|CGROUP resolution behind stats/kill/freeze/thaw. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup.h"
#include "cgstat.h"

/* As a 6.12 kernel prints them. */
static const char cpu_stat_full[] =
	"usage_usec 1234567\n"
	"user_usec 1000000\n"
	"system_usec 234567\n"
	"core_sched.force_idle_usec 0\n"
	"nr_periods 50\n"
	"nr_throttled 7\n"
	"throttled_usec 89012\n"
	"nr_bursts 0\n"
	"burst_usec 0\n";
/* The cpu controller not enabled: only the core keys. */
static const char cpu_stat_core[] =
	"usage_usec 42\n"
	"user_usec 40\n"
	"system_usec 2\n";

static void test_cpu(void **state)
{
	struct cgstat_cpu c;

	(void)state;
	cgstat_parse_cpu(cpu_stat_full, &c);
	assert_int_equal(c.usage_usec, 1234567);
	assert_int_equal(c.user_usec, 1000000);
	assert_int_equal(c.system_usec, 234567);
	assert_int_equal(c.nr_periods, 50);
	assert_int_equal(c.nr_throttled, 7);
	assert_int_equal(c.throttled_usec, 89012);

	cgstat_parse_cpu(cpu_stat_core, &c);
	assert_int_equal(c.usage_usec, 42);
	assert_int_equal(c.system_usec, 2);
	assert_int_equal(c.nr_periods, CGSTAT_UNSET);
	assert_int_equal(c.nr_throttled, CGSTAT_UNSET);
	assert_int_equal(c.throttled_usec, CGSTAT_UNSET);

	cgstat_parse_cpu("", &c);
	assert_int_equal(c.usage_usec, CGSTAT_UNSET);
}

static void test_keyed(void **state)
{
	long long v = 99;

	(void)state;
	/* A key is a whole word: "oom" is not "oom_kill", "max" is not "max.imposed". */
	assert_int_equal(cgstat_keyed("oom_kill 3\noom 1\n", "oom", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(cgstat_keyed("max.imposed 4\n", "max", &v), -ENOENT);
	assert_int_equal(cgstat_keyed("max 9", "max", &v), 0);	/* no trailing newline */
	assert_int_equal(v, 9);
	assert_int_equal(cgstat_keyed("max x\n", "max", &v), -EINVAL);
	assert_int_equal(cgstat_keyed("", "max", &v), -ENOENT);
}

static void test_value(void **state)
{
	long long v;

	(void)state;
	assert_int_equal(cgstat_value("1073741824\n", &v), 0);
	assert_int_equal(v, 1073741824LL);
	assert_int_equal(cgstat_value("max\n", &v), 0);
	assert_int_equal(v, CGSTAT_MAX);
	assert_int_equal(cgstat_value("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(cgstat_value("maxx\n", &v), -EINVAL);
	assert_int_equal(cgstat_value("12 34\n", &v), -EINVAL);
	assert_int_equal(cgstat_value("", &v), -EINVAL);
	assert_int_equal(cgstat_value("-5\n", &v), -EINVAL);
}

static void test_memory_events(void **state)
{
	struct cgstat_memory m;

	(void)state;
	cgstat_parse_memory_events("low 0\nhigh 12\nmax 5\noom 2\noom_kill 1\noom_group_kill 0\n", &m);
	assert_int_equal(m.oom, 2);
	assert_int_equal(m.oom_kill, 1);
	/* Old kernels: no oom_kill line. */
	cgstat_parse_memory_events("low 0\nhigh 0\nmax 0\noom 0\n", &m);
	assert_int_equal(m.oom, 0);
	assert_int_equal(m.oom_kill, CGSTAT_UNSET);
}

static void test_pids_events(void **state)
{
	struct cgstat_pids p;

	(void)state;
	cgstat_parse_pids_events("max 17\n", &p);
	assert_int_equal(p.events_max, 17);
	/* 6.12+ adds max.imposed first: it must not be taken for max. */
	cgstat_parse_pids_events("max.imposed 3\nmax 4\n", &p);
	assert_int_equal(p.events_max, 4);
	cgstat_parse_pids_events("", &p);
	assert_int_equal(p.events_max, CGSTAT_UNSET);
}

static void test_io(void **state)
{
	struct cgstat_io io;

	(void)state;
	/* Two disks plus a device-mapper line; unknown keys (dbytes, dios) ignored. */
	assert_int_equal(cgstat_parse_io(
		"254:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n"
		"8:0 rbytes=1048576 wbytes=0 rios=256 wios=0 dbytes=512 dios=1\n"
		"253:1 rbytes=10 wbytes=20 rios=3 wios=4 dbytes=0 dios=0\n", &io), 0);
	assert_int_equal(io.rbytes, 4096 + 1048576 + 10);
	assert_int_equal(io.wbytes, 8192 + 20);
	assert_int_equal(io.rios, 1 + 256 + 3);
	assert_int_equal(io.wios, 2 + 4);

	/* No I/O yet: the file is empty, every sum is 0. */
	assert_int_equal(cgstat_parse_io("", &io), 0);
	assert_int_equal(io.rbytes, 0);
	assert_int_equal(io.wios, 0);

	/* A device line with only some keys (older kernels lack dbytes/dios). */
	assert_int_equal(cgstat_parse_io("8:16 rbytes=5 wbytes=6 rios=7 wios=8\n", &io), 0);
	assert_int_equal(io.rbytes, 5);
	assert_int_equal(io.wios, 8);

	assert_int_equal(cgstat_parse_io("garbage here\n", &io), -EINVAL);
	assert_int_equal(cgstat_parse_io("8:0 rbytes=x\n", &io), -EINVAL);
}

static void test_events(void **state)
{
	int pop, frz;

	(void)state;
	cgstat_parse_events("populated 1\nfrozen 0\n", &pop, &frz);
	assert_int_equal(pop, 1);
	assert_int_equal(frz, 0);
	cgstat_parse_events("populated 0\nfrozen 1\n", &pop, &frz);
	assert_int_equal(pop, 0);
	assert_int_equal(frz, 1);
	/* Before 5.2 there is no frozen line. */
	cgstat_parse_events("populated 1\n", &pop, &frz);
	assert_int_equal(pop, 1);
	assert_int_equal(frz, -1);
}

static void test_self_cgroup(void **state)
{
	char out[256];

	(void)state;
	assert_int_equal(cgstat_parse_self_cgroup("0::/user.slice/session-3.scope\n", out, sizeof(out)), 0);
	assert_string_equal(out, "/user.slice/session-3.scope");
	/* Hybrid: v1 lines first, the v2 line last. */
	assert_int_equal(cgstat_parse_self_cgroup(
		"12:pids:/user.slice\n1:name=systemd:/user.slice/x\n0::/user.slice/x\n", out, sizeof(out)), 0);
	assert_string_equal(out, "/user.slice/x");
	assert_int_equal(cgstat_parse_self_cgroup("0::/", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(cgstat_parse_self_cgroup("4:memory:/\n", out, sizeof(out)), -ENOENT);
}

static void test_to_json(void **state)
{
	struct cgstat_target t = { .path = "/sys/fs/cgroup/sbx-bpf/a", .name = "a" };
	struct cgstat st = { .populated = 1, .frozen = -1 };
	json_t *j;

	(void)state;
	st.cpu.present = true;
	cgstat_parse_cpu(cpu_stat_core, &st.cpu);
	st.pids = (struct cgstat_pids){ .present = true, .current = 3, .max = CGSTAT_MAX, .events_max = 0 };
	j = cgstat_to_json(&t, &st);
	assert_string_equal(json_string_value(json_object_get(j, "name")), "a");
	assert_true(json_is_true(json_object_get(j, "populated")));
	assert_true(json_is_null(json_object_get(j, "frozen")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "cpu"), "usage_usec")), 42);
	assert_true(json_is_null(json_object_get(json_object_get(j, "cpu"), "nr_periods")));
	/* Missing controllers: null sections, present as keys. */
	assert_true(json_is_null(json_object_get(j, "memory")));
	assert_true(json_is_null(json_object_get(j, "io")));
	assert_non_null(json_object_get(j, "memory"));
	/* "max" (no limit) is null. */
	assert_true(json_is_null(json_object_get(json_object_get(j, "pids"), "max")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "pids"), "current")), 3);
	json_decref(j);
}

/* A fake cgroup2 mount in a temp dir: directories with a cgroup.procs file. */
static char fake[PATH_MAX];

static void mkcg(const char *rel)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", fake, rel);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/%s/cgroup.procs", fake, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
}

static int fake_setup(void **state)
{
	char p[PATH_MAX + 64];
	(void)state;
	snprintf(fake, sizeof(fake), "/tmp/test_cgstat.XXXXXX");
	if (!mkdtemp(fake))
		return -1;
	snprintf(p, sizeof(p), "%s/cgroup.procs", fake);
	fclose(fopen(p, "w"));
	mkcg("sbx-bpf");
	mkcg("sbx-bpf/agent");
	mkcg("sbx-bpf/agent/inner");
	mkcg("user.slice");
	snprintf(p, sizeof(p), "%s/notacg", fake);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/escape", fake);
	if (symlink("/tmp", p))	/* cgroupfs has no symlinks, but a path may still go through one */
		return -1;
	return 0;
}

static int fake_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fake);
	return system(cmd) ? -1 : 0;
}

static void test_resolve(void **state)
{
	struct cgstat_target t;
	char want[PATH_MAX + 64], rel[PATH_MAX + 64];

	(void)state;
	/* NAME: <v2>/sbx-bpf/NAME. */
	assert_int_equal(cgstat_resolve_in(fake, "agent", &t), 0);
	snprintf(want, sizeof(want), "%s/sbx-bpf/agent", fake);
	assert_string_equal(t.path, want);
	assert_string_equal(t.name, "agent");
	assert_true(t.by_name);
	assert_false(t.is_root);
	assert_int_equal(t.level, 2);

	/* The same cgroup as an absolute path, and relative to the mount. */
	assert_int_equal(cgstat_resolve_in(fake, want, &t), 0);
	assert_string_equal(t.name, "agent");
	assert_false(t.by_name);
	assert_int_equal(cgstat_resolve_in(fake, "sbx-bpf/agent/", &t), 0);
	assert_string_equal(t.path, want);

	/* A nested cgroup is not a sandbox by name. */
	assert_int_equal(cgstat_resolve_in(fake, "sbx-bpf/agent/inner", &t), 0);
	assert_string_equal(t.name, "");
	assert_int_equal(t.level, 3);
	/* A top-level cgroup needs the slash to be a path. */
	assert_int_equal(cgstat_resolve_in(fake, "user.slice/", &t), 0);
	assert_int_equal(cgstat_resolve_in(fake, "user.slice", &t), -ENOENT);
	assert_true(t.by_name);
	/* The root itself. */
	assert_int_equal(cgstat_resolve_in(fake, "/", &t), -EXDEV);	/* "/" is the host's root */
	snprintf(rel, sizeof(rel), "%s/", fake);
	assert_int_equal(cgstat_resolve_in(fake, rel, &t), 0);
	assert_true(t.is_root);
	assert_int_equal(t.level, 0);

	/* Bad names, missing, escaping, not a cgroup. */
	assert_int_equal(cgstat_resolve_in(fake, "", &t), -EINVAL);
	assert_int_equal(cgstat_resolve_in(fake, "..", &t), -EINVAL);
	assert_int_equal(cgstat_resolve_in(fake, ".", &t), -EINVAL);
	assert_int_equal(cgstat_resolve_in(fake, "ghost", &t), -ENOENT);
	assert_int_equal(cgstat_resolve_in(fake, "sbx-bpf/ghost", &t), -ENOENT);
	assert_int_equal(cgstat_resolve_in(fake, "../../etc", &t), -EXDEV);
	assert_int_equal(cgstat_resolve_in(fake, "sbx-bpf/../../nonexistent", &t), -EXDEV);
	assert_int_equal(cgstat_resolve_in(fake, "/etc", &t), -EXDEV);
	assert_int_equal(cgstat_resolve_in(fake, "escape/", &t), -EXDEV);	/* symlink out */
	assert_int_equal(cgstat_resolve_in(fake, "notacg/", &t), -ENOTDIR);
	assert_int_equal(cgstat_resolve_in(fake, "sbx-bpf/agent/cgroup.procs", &t), -ENOTDIR);
}

/* Levels below the mount, as the kernel counts them (what attach and run refuse past SBX_CGROUP_DEEPEST). */
static void test_level(void **state)
{
	(void)state;
	assert_int_equal(cgroup_level("/sys/fs/cgroup", "/sys/fs/cgroup"), 0);
	assert_int_equal(cgroup_level("/sys/fs/cgroup", "/sys/fs/cgroup/"), 0);
	assert_int_equal(cgroup_level("/sys/fs/cgroup", "/sys/fs/cgroup/a"), 1);
	assert_int_equal(cgroup_level("/sys/fs/cgroup/", "/sys/fs/cgroup/a/b/"), 2);
	assert_int_equal(cgroup_level("/sys/fs/cgroup", "/sys/fs/cgroup//a//b"), 2);
	assert_int_equal(cgroup_level("/", "/a/b/c"), 3);
	assert_int_equal(cgroup_level("/", "/"), 0);
	/* Not below the mount: a sibling sharing its prefix, or elsewhere. */
	assert_int_equal(cgroup_level("/sys/fs/cgroup", "/sys/fs/cgroup2/a"), -EXDEV);
	assert_int_equal(cgroup_level("/sys/fs/cgroup", "/etc"), -EXDEV);
}

static void test_read_fake(void **state)
{
	char p[PATH_MAX + 64];
	struct cgstat st;
	FILE *f;

	(void)state;
	/* Only cpu.stat and cgroup.events: the rest stays absent, no error. */
	snprintf(p, sizeof(p), "%s/sbx-bpf/agent/cpu.stat", fake);
	f = fopen(p, "w");
	fputs(cpu_stat_full, f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/sbx-bpf/agent/cgroup.events", fake);
	f = fopen(p, "w");
	fputs("populated 1\nfrozen 0\n", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/sbx-bpf/agent", fake);
	assert_int_equal(cgstat_read(p, &st), 0);
	assert_true(st.cpu.present);
	assert_int_equal(st.cpu.nr_throttled, 7);
	assert_false(st.memory.present);
	assert_false(st.io.present);
	assert_false(st.pids.present);
	assert_int_equal(st.populated, 1);
	assert_int_equal(st.frozen, 0);
	snprintf(p, sizeof(p), "%s/sbx-bpf/ghost", fake);
	assert_int_equal(cgstat_read(p, &st), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keyed),
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_memory_events),
		cmocka_unit_test(test_pids_events),
		cmocka_unit_test(test_io),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_self_cgroup),
		cmocka_unit_test(test_to_json),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_level),
		cmocka_unit_test(test_read_fake),
	};

	return cmocka_run_group_tests_name("cgstat", tests, fake_setup, fake_teardown);
}
