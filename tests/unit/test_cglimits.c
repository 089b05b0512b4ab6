// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Limits on a cgroup sbx-bpf did not create (attach): the plan from the
 * last attach's originals to a new set of limits, the snapshot, writes
 * that are all made or none, and detach's restore. The cgroup is a table
 * that behaves as the kernel's files do, io.max included (one line per
 * limited device, keys merged by each write, a line of all max removed).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include <sys/stat.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cgroup.h"
#include "util.h"
#include "cglimits.h"
#include "sbx_limits.h"

/* --- a fake cgroup ---------------------------------------------------------------------- */

struct fake_dev {
	char dev[16];
	char key[4][32];	/* rbps wbps riops wiops */
};

struct fake_cg {
	struct { const char *file; char text[128]; int fail; } f[8];
	size_t nr;
	struct fake_dev io[4];
	size_t nr_io;
	int io_fail;
	int writes;
};

static const char *const io_keys[4] = { "rbps", "wbps", "riops", "wiops" };

static void fake_init(struct fake_cg *cg)
{
	static const char *const init[][2] = {
		{ "cpu.max", "max 100000\n" }, { "cpu.weight", "100\n" }, { "memory.high", "max\n" },
		{ "memory.max", "max\n" }, { "memory.swap.max", "max\n" }, { "memory.oom.group", "0\n" },
		{ "pids.max", "max\n" },
	};

	memset(cg, 0, sizeof(*cg));
	for (size_t i = 0; i < sizeof(init) / sizeof(init[0]); i++) {
		cg->f[i].file = init[i][0];
		snprintf(cg->f[i].text, sizeof(cg->f[i].text), "%s", init[i][1]);
	}
	cg->nr = sizeof(init) / sizeof(init[0]);
}

static int fake_find(struct fake_cg *cg, const char *file)
{
	for (size_t i = 0; i < cg->nr; i++)
		if (cg->f[i].file && !strcmp(cg->f[i].file, file))
			return (int)i;
	return -1;
}

static void io_render(struct fake_cg *cg, char *buf, size_t sz)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < cg->nr_io; i++) {
		struct fake_dev *d = &cg->io[i];
		bool limited = false;

		for (int k = 0; k < 4; k++)
			limited |= strcmp(d->key[k], "max") != 0;
		if (limited)
			len += snprintf(buf + len, sz - len, "%s %s=%s %s=%s %s=%s %s=%s\n", d->dev,
					io_keys[0], d->key[0], io_keys[1], d->key[1], io_keys[2],
					d->key[2], io_keys[3], d->key[3]);
	}
}

static struct fake_dev *io_dev(struct fake_cg *cg, const char *dev, size_t len)
{
	struct fake_dev *d;

	for (size_t i = 0; i < cg->nr_io; i++)
		if (strlen(cg->io[i].dev) == len && !strncmp(cg->io[i].dev, dev, len))
			return &cg->io[i];
	d = &cg->io[cg->nr_io++];
	snprintf(d->dev, sizeof(d->dev), "%.*s", (int)len, dev);
	for (int k = 0; k < 4; k++)
		snprintf(d->key[k], sizeof(d->key[k]), "max");
	return d;
}

/* "8:0 wbps=5 riops=max": the keys given change, the others stay. */
static int io_write(struct fake_cg *cg, const char *value)
{
	char buf[256], *tok, *save;
	struct fake_dev *d;

	if (cg->io_fail)
		return cg->io_fail;
	snprintf(buf, sizeof(buf), "%s", value);
	tok = strtok_r(buf, " ", &save);
	d = io_dev(cg, tok, strlen(tok));
	while ((tok = strtok_r(NULL, " ", &save))) {
		char *eq = strchr(tok, '=');
		int k;

		assert_non_null(eq);
		for (k = 0; k < 4 && strncmp(tok, io_keys[k], (size_t)(eq - tok)); k++)
			;
		assert_true(k < 4);
		snprintf(d->key[k], sizeof(d->key[k]), "%s", eq + 1);
	}
	return 0;
}

static int fake_read(void *ctx, const char *file, char *buf, size_t sz)
{
	struct fake_cg *cg = ctx;
	int i = fake_find(cg, file);

	if (!strcmp(file, "io.max")) {
		io_render(cg, buf, sz);
		return (int)strlen(buf);
	}
	if (i < 0)
		return -ENOENT;
	snprintf(buf, sz, "%s", cg->f[i].text);
	return (int)strlen(buf);
}

static int fake_write(void *ctx, const char *file, const char *value)
{
	struct fake_cg *cg = ctx;
	int i = fake_find(cg, file);

	cg->writes++;
	if (!strcmp(file, "io.max"))
		return io_write(cg, value);
	if (i < 0)
		return -ENOENT;
	if (cg->f[i].fail)
		return cg->f[i].fail;
	snprintf(cg->f[i].text, sizeof(cg->f[i].text), "%s\n", value);
	return 0;
}

static const char *fake_get(struct fake_cg *cg, const char *file)
{
	static char buf[512];

	fake_read(cg, file, buf, sizeof(buf));
	if (strcmp(file, "io.max"))	/* io.max: every line */
		buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static struct cgfile_ops fake_ops(struct fake_cg *cg)
{
	return (struct cgfile_ops){ .read = fake_read, .write = fake_write, .ctx = cg };
}

/* --- helpers ---------------------------------------------------------------------------- */

static struct limit_write lw(const char *file, const char *value)
{
	struct limit_write w;

	snprintf(w.file, sizeof(w.file), "%s", file);
	snprintf(w.value, sizeof(w.value), "%s", value);
	return w;
}

/* The writes of `attach --memory 64M --pids 20` (memory.oom.group comes with the memory limit). */
static size_t mem_pids(struct limit_write *w)
{
	w[0] = lw("memory.max", "67108864");
	w[1] = lw("memory.oom.group", "1");
	w[2] = lw("pids.max", "20");
	return 3;
}

/* --- tests ------------------------------------------------------------------------------ */

static void test_first_attach(void **state)
{
	struct limit_write want[8], orig[8];
	struct cglimits_plan p;
	struct fake_cg cg;
	struct cgfile_ops ops = fake_ops(&cg);
	size_t nw = mem_pids(want), failed = 99;

	(void)state;
	fake_init(&cg);
	assert_int_equal(cglimits_plan(&p, want, nw, NULL, 0), 0);
	assert_int_equal(p.nr, 3);
	assert_int_equal(cglimits_snapshot(&p, &ops, &failed), 0);
	assert_string_equal(p.step[0].prev, "max");
	assert_string_equal(p.step[1].prev, "0");
	assert_int_equal(cglimits_apply(&p, &ops, &failed), 0);
	assert_string_equal(fake_get(&cg, "memory.max"), "67108864");
	assert_string_equal(fake_get(&cg, "memory.oom.group"), "1");
	assert_string_equal(fake_get(&cg, "pids.max"), "20");

	/* What detach puts back, in the order of the writes. */
	assert_int_equal(cglimits_originals(&p, orig, 8), 3);
	assert_string_equal(orig[0].file, "memory.max");
	assert_string_equal(orig[0].value, "max");
	assert_string_equal(orig[1].value, "0");
	assert_string_equal(orig[2].file, "pids.max");
	assert_string_equal(orig[2].value, "max");
	assert_int_equal(cglimits_restore(orig, 3, &ops, &failed), 0);
	assert_string_equal(fake_get(&cg, "memory.max"), "max");
	assert_string_equal(fake_get(&cg, "memory.oom.group"), "0");
	assert_string_equal(fake_get(&cg, "pids.max"), "max");
}

/* A write the kernel refuses midway: the ones made before it get their values back. */
static void test_failure_midway_rolls_back(void **state)
{
	struct limit_write want[8];
	struct cglimits_plan p;
	struct fake_cg cg;
	struct cgfile_ops ops = fake_ops(&cg);
	size_t nw = mem_pids(want), failed = 99;

	(void)state;
	fake_init(&cg);
	snprintf(cg.f[fake_find(&cg, "memory.max")].text, 128, "1073741824\n");
	cg.f[fake_find(&cg, "pids.max")].fail = -EINVAL;
	assert_int_equal(cglimits_plan(&p, want, nw, NULL, 0), 0);
	assert_int_equal(cglimits_snapshot(&p, &ops, &failed), 0);
	assert_int_equal(cglimits_apply(&p, &ops, &failed), -EINVAL);
	assert_int_equal(failed, 2);
	assert_string_equal(fake_get(&cg, "memory.max"), "1073741824");
	assert_string_equal(fake_get(&cg, "memory.oom.group"), "0");
	for (size_t i = 0; i < p.nr; i++)
		assert_false(p.step[i].done);
}

/* A later step of attach failed: rollback puts back what the files held before this attach. */
static void test_rollback_after_success(void **state)
{
	struct limit_write want[8];
	struct cglimits_plan p;
	struct fake_cg cg;
	struct cgfile_ops ops = fake_ops(&cg);
	size_t nw = mem_pids(want), failed;

	(void)state;
	fake_init(&cg);
	assert_int_equal(cglimits_plan(&p, want, nw, NULL, 0), 0);
	assert_int_equal(cglimits_snapshot(&p, &ops, &failed), 0);
	assert_int_equal(cglimits_apply(&p, &ops, &failed), 0);
	assert_int_equal(cglimits_rollback(&p, &ops), 0);
	assert_string_equal(fake_get(&cg, "memory.max"), "max");
	assert_string_equal(fake_get(&cg, "pids.max"), "max");
	cg.writes = 0;
	assert_int_equal(cglimits_rollback(&p, &ops), 0);	/* twice: nothing more */
	assert_int_equal(cg.writes, 0);
}

/*
 * Re-attach: the originals of the first attach stay the originals, a limit
 * the new attach drops goes back to its original first, a new one is read.
 */
static void test_reattach_keeps_originals(void **state)
{
	struct limit_write saved[8], want[8], orig[8];
	struct cglimits_plan p;
	struct fake_cg cg;
	struct cgfile_ops ops = fake_ops(&cg);
	size_t failed, n;

	(void)state;
	fake_init(&cg);
	/* The first attach: --memory 64M --pids 20 on a cgroup whose memory.max was 1G. */
	snprintf(cg.f[fake_find(&cg, "memory.max")].text, 128, "67108864\n");
	snprintf(cg.f[fake_find(&cg, "memory.oom.group")].text, 128, "1\n");
	snprintf(cg.f[fake_find(&cg, "pids.max")].text, 128, "20\n");
	saved[0] = lw("memory.max", "1073741824");
	saved[1] = lw("memory.oom.group", "0");
	saved[2] = lw("pids.max", "max");
	/* The second: --cpu 50% --memory 128M. */
	want[0] = lw("cpu.max", "50000 100000");
	want[1] = lw("memory.max", "134217728");
	want[2] = lw("memory.oom.group", "1");
	assert_int_equal(cglimits_plan(&p, want, 3, saved, 3), 0);
	assert_int_equal(p.nr, 4);
	assert_true(p.step[0].revert);
	assert_string_equal(p.step[0].w.file, "pids.max");
	assert_string_equal(p.step[0].w.value, "max");
	assert_int_equal(cglimits_snapshot(&p, &ops, &failed), 0);
	assert_string_equal(p.step[0].prev, "20");
	assert_string_equal(p.step[2].prev, "67108864");	/* for a rollback */
	assert_string_equal(p.step[2].orig, "1073741824");	/* for detach */
	assert_int_equal(cglimits_apply(&p, &ops, &failed), 0);
	assert_string_equal(fake_get(&cg, "pids.max"), "max");
	assert_string_equal(fake_get(&cg, "cpu.max"), "50000 100000");
	assert_string_equal(fake_get(&cg, "memory.max"), "134217728");

	n = cglimits_originals(&p, orig, 8);
	assert_int_equal(n, 3);
	assert_string_equal(orig[0].file, "cpu.max");
	assert_string_equal(orig[0].value, "max 100000");
	assert_string_equal(orig[1].value, "1073741824");
	assert_string_equal(orig[2].value, "0");
	assert_int_equal(cglimits_restore(orig, n, &ops, &failed), 0);
	assert_string_equal(fake_get(&cg, "cpu.max"), "max 100000");
	assert_string_equal(fake_get(&cg, "memory.max"), "1073741824");
	assert_string_equal(fake_get(&cg, "memory.oom.group"), "0");
	assert_string_equal(fake_get(&cg, "pids.max"), "max");
}

/* Re-attach without limits: every limit of the last attach goes back, nothing is left to restore. */
static void test_reattach_without_limits(void **state)
{
	struct limit_write saved[2], orig[8];
	struct cglimits_plan p;
	struct fake_cg cg;
	struct cgfile_ops ops = fake_ops(&cg);
	size_t failed;

	(void)state;
	fake_init(&cg);
	snprintf(cg.f[fake_find(&cg, "pids.max")].text, 128, "20\n");
	saved[0] = lw("pids.max", "max");
	saved[1] = lw("io.max", "8:0 rbps=max wbps=max riops=max wiops=max");
	assert_int_equal(cglimits_plan(&p, NULL, 0, saved, 2), 0);
	assert_int_equal(p.nr, 2);
	assert_int_equal(cglimits_snapshot(&p, &ops, &failed), 0);
	assert_int_equal(cglimits_apply(&p, &ops, &failed), 0);
	assert_string_equal(fake_get(&cg, "pids.max"), "max");
	assert_int_equal(cglimits_originals(&p, orig, 8), 0);
}

/* A limit to revert whose file went with its controller: nothing to put back, not an error. */
static void test_revert_of_vanished_file(void **state)
{
	struct limit_write saved[1] = { lw("memory.max", "max") };
	struct cglimits_plan p;
	struct fake_cg cg;
	struct cgfile_ops ops = fake_ops(&cg);
	size_t failed;

	(void)state;
	fake_init(&cg);
	cg.f[fake_find(&cg, "memory.max")].file = NULL;
	assert_int_equal(cglimits_plan(&p, NULL, 0, saved, 1), 0);
	assert_int_equal(cglimits_snapshot(&p, &ops, &failed), 0);
	assert_true(p.step[0].skip);
	cg.writes = 0;
	assert_int_equal(cglimits_apply(&p, &ops, &failed), 0);
	assert_int_equal(cg.writes, 0);

	/* A file this attach writes must be there. */
	saved[0] = lw("memory.max", "1");
	assert_int_equal(cglimits_plan(&p, saved, 1, NULL, 0), 0);
	assert_int_equal(cglimits_snapshot(&p, &ops, &failed), -ENOENT);
	assert_int_equal(failed, 0);
}

/* io.max: each device on its own line, put back exactly, whether it had a line or not. */
static void test_io_per_device(void **state)
{
	struct limit_write want[2], orig[8];
	struct cglimits_plan p;
	struct fake_cg cg;
	struct cgfile_ops ops = fake_ops(&cg);
	size_t failed, n;
	char before[512];

	(void)state;
	fake_init(&cg);
	assert_int_equal(io_write(&cg, "8:0 rbps=1000"), 0);
	snprintf(before, sizeof(before), "%s", fake_get(&cg, "io.max"));
	assert_string_equal(before, "8:0 rbps=1000 wbps=max riops=max wiops=max\n");
	want[0] = lw("io.max", "8:0 wbps=5000000");
	want[1] = lw("io.max", "8:16 riops=100");
	assert_int_equal(cglimits_plan(&p, want, 2, NULL, 0), 0);
	assert_int_equal(cglimits_snapshot(&p, &ops, &failed), 0);
	assert_string_equal(p.step[0].prev, "8:0 rbps=1000 wbps=max riops=max wiops=max");
	assert_string_equal(p.step[1].prev, "8:16 rbps=max wbps=max riops=max wiops=max");
	assert_int_equal(cglimits_apply(&p, &ops, &failed), 0);
	assert_string_equal(fake_get(&cg, "io.max"),
			    "8:0 rbps=1000 wbps=5000000 riops=max wiops=max\n"
			    "8:16 rbps=max wbps=max riops=100 wiops=max\n");
	n = cglimits_originals(&p, orig, 8);
	assert_int_equal(cglimits_restore(orig, n, &ops, &failed), 0);
	assert_string_equal(fake_get(&cg, "io.max"), before);
}

/* detach goes on past a failed write, says which, and ignores a file that is gone. */
static void test_restore_reports_first_failure(void **state)
{
	struct limit_write saved[3] = { lw("memory.max", "max"), lw("cpu.weight", "100"),
					lw("pids.max", "max") };
	struct fake_cg cg;
	struct cgfile_ops ops = fake_ops(&cg);
	size_t failed = 99;

	(void)state;
	fake_init(&cg);
	snprintf(cg.f[fake_find(&cg, "memory.max")].text, 128, "5\n");
	snprintf(cg.f[fake_find(&cg, "pids.max")].text, 128, "5\n");
	cg.f[fake_find(&cg, "cpu.weight")].file = NULL;		/* gone: fine */
	assert_int_equal(cglimits_restore(saved, 3, &ops, &failed), 0);
	cg.f[fake_find(&cg, "pids.max")].fail = -EBUSY;
	snprintf(cg.f[fake_find(&cg, "memory.max")].text, 128, "5\n");
	assert_int_equal(cglimits_restore(saved, 3, &ops, &failed), -EBUSY);
	assert_int_equal(failed, 2);
	assert_string_equal(fake_get(&cg, "memory.max"), "max");	/* still written */
}

static void test_current_values(void **state)
{
	char out[128];

	(void)state;
	assert_int_equal(cglimits_current("memory.max", "max\n", "", out, sizeof(out)), 0);
	assert_string_equal(out, "max");
	assert_int_equal(cglimits_current("cpu.max", "max 100000\n", "", out, sizeof(out)), 0);
	assert_string_equal(out, "max 100000");
	assert_int_equal(cglimits_current("io.max", "8:16 rbps=1 wbps=max riops=max wiops=max\n"
					  "8:1 rbps=max wbps=2 riops=max wiops=max\n",
					  "8:1 wbps=9", out, sizeof(out)), 0);
	assert_string_equal(out, "8:1 rbps=max wbps=2 riops=max wiops=max");
	/* 8:1 is not 8:16's prefix match. */
	assert_int_equal(cglimits_current("io.max", "8:16 rbps=1 wbps=max riops=max wiops=max\n",
					  "8:1 wbps=9", out, sizeof(out)), 0);
	assert_string_equal(out, "8:1 rbps=max wbps=max riops=max wiops=max");
	assert_int_equal(cglimits_current("io.max", "", "254:0 riops=5", out, sizeof(out)), 0);
	assert_string_equal(out, "254:0 rbps=max wbps=max riops=max wiops=max");
	assert_int_equal(cglimits_current("pids.max", "12345678", "", out, 4), -ENOSPC);
}

static void test_same_key(void **state)
{
	struct limit_write a = lw("io.max", "8:0 wbps=1"), b = lw("io.max", "8:0 rbps=max wbps=max"),
			   c = lw("io.max", "8:01 wbps=1"), d = lw("pids.max", "1"), e = lw("pids.max", "2");

	(void)state;
	assert_true(cglimits_same_key(&a, &b));
	assert_false(cglimits_same_key(&a, &c));
	assert_true(cglimits_same_key(&d, &e));
	assert_false(cglimits_same_key(&a, &d));
}

/* limits_file_name() lists the files in the order limits_writes() writes them. */
static void test_file_order(void **state)
{
	struct limit_write w[LIMITS_WRITES_MAX];
	struct sbx_limits l;
	char err[256];
	size_t f = 0;
	int n;

	(void)state;
	limits_init(&l);
	assert_int_equal(limits_set(&l, "cpu", "50%", err, sizeof(err)), 0);
	assert_int_equal(limits_set(&l, "cpu-weight", "50", err, sizeof(err)), 0);
	assert_int_equal(limits_set(&l, "memory", "1G", err, sizeof(err)), 0);
	assert_int_equal(limits_set(&l, "memory-high", "512M", err, sizeof(err)), 0);
	assert_int_equal(limits_set(&l, "swap-max", "0", err, sizeof(err)), 0);
	assert_int_equal(limits_set(&l, "pids", "9", err, sizeof(err)), 0);
	l.nr_io = 1;
	l.io[0] = (struct io_limit){ .major = 8, .minor = 0, .rbps = 5, .wbps = LIMIT_UNSET,
				     .riops = LIMIT_UNSET, .wiops = LIMIT_UNSET };
	n = limits_writes(&l, w, LIMITS_WRITES_MAX);
	assert_int_equal(n, 8);
	for (int i = 0; i < n; i++, f++)
		assert_string_equal(w[i].file, limits_file_name(f));
	assert_null(limits_file_name(f));
}

static void test_controller_list(void **state)
{
	char buf[64];

	(void)state;
	cgroup_controller_list(CGROUP_CTRL_MEMORY | CGROUP_CTRL_PIDS, '+', buf, sizeof(buf));
	assert_string_equal(buf, "+memory +pids");
	cgroup_controller_list(CGROUP_CTRL_CPU, '-', buf, sizeof(buf));
	assert_string_equal(buf, "-cpu");
	cgroup_controller_list(0, '+', buf, sizeof(buf));
	assert_string_equal(buf, "");
}

/* A cgroup is told alive or gone by its id alone (the daemon's sweep), on this host's real cgroup2. */
static void test_id_alive(void **state)
{
	char mnt[PATH_MAX], path[PATH_MAX + 32];
	__u64 id;
	int fd;

	(void)state;
	if (cgroup_layout(mnt, sizeof(mnt)) == CGROUP_NONE || !mnt[0] || geteuid() != 0)
		skip();
	fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	snprintf(path, sizeof(path), "%s/sbx-unit-alive-%d", mnt, (int)getpid());
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(cgroup_id_of(path, &id), 0);
	assert_int_equal(cgroup_id_alive(fd, id), 1);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(cgroup_id_alive(fd, id), 0);
	assert_int_equal(cgroup_id_of(mnt, &id), 0);
	assert_int_equal(cgroup_id_alive(fd, id), 1);	/* the root */
	close(fd);
}

/* The layout, found with or without mountinfo, is what mountinfo says. */
static void test_layout_agrees(void **state)
{
	static char info[1 << 16];
	char mnt[PATH_MAX], want[PATH_MAX];
	enum cgroup_layout l;

	(void)state;
	assert_true(read_file("/proc/self/mountinfo", info, sizeof(info)) > 0);
	l = cgroup_parse_layout(info, want, sizeof(want));
	assert_int_equal(cgroup_layout(mnt, sizeof(mnt)), l);
	if (l == CGROUP_UNIFIED)
		assert_string_equal(mnt, want);
	assert_int_equal(cgroup_layout(mnt, sizeof(mnt)), l);	/* remembered, or asked again */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_agrees),
		cmocka_unit_test(test_first_attach),
		cmocka_unit_test(test_id_alive),
		cmocka_unit_test(test_failure_midway_rolls_back),
		cmocka_unit_test(test_rollback_after_success),
		cmocka_unit_test(test_reattach_keeps_originals),
		cmocka_unit_test(test_reattach_without_limits),
		cmocka_unit_test(test_revert_of_vanished_file),
		cmocka_unit_test(test_io_per_device),
		cmocka_unit_test(test_restore_reports_first_failure),
		cmocka_unit_test(test_current_values),
		cmocka_unit_test(test_same_key),
		cmocka_unit_test(test_file_order),
		cmocka_unit_test(test_controller_list),
	};

	return cmocka_run_group_tests_name("cglimits", tests, NULL, NULL);
}
