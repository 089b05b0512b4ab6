// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Resource limits: every flag's accepted forms and the exact message for
 * each kind of bad value, device resolution (a block node made with mknod,
 * a file on a disk, a file on tmpfs, a missing path), merging flags over a
 * policy, and the cgroup writes in their order.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <cmocka.h>

/*
 * By path: the build puts userspace/ after the system directories
 * (-idirafter), so that <limits.h> stays the C library's.
 */
#include "sbx_limits.h"

#define SIZE_HELP "use a number with an optional K, M, G or T suffix (base 1024), or 'max'"
#define CPU_HELP "use a percentage of one CPU such as '50%' or '250%' (above 100% spans several " \
		 "CPUs), or 'max'"
#define WEIGHT_HELP "use a whole number from 1 to 10000 (the default weight is 100)"
#define PIDS_HELP "use a whole number from 1 to 4194304, or 'max'"
#define TIME_HELP "use a number with a unit such as '90s', '30m' or '1h30m' (units ms, s, m, h, " \
		  "d; a bare number is seconds)"
#define RATE_HELP "with an optional K, M, G or T suffix (base 1000), or 'max'"

static struct sbx_limits set_ok(const char *name, const char *value)
{
	struct sbx_limits l;
	char err[512] = "";

	limits_init(&l);
	if (limits_set(&l, name, value, err, sizeof(err)))
		fail_msg("--%s %s: unexpected error: %s", name, value, err);
	return l;
}

/* The call fails with exactly @want and leaves the limits as they were. */
static void set_bad(const char *name, const char *value, const char *want)
{
	struct sbx_limits l, before;
	char err[512] = "";

	limits_init(&l);
	before = l;
	assert_int_equal(limits_set(&l, name, value, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, want);
	assert_memory_equal(&l, &before, sizeof(l));
}

static void test_init(void **state)
{
	struct sbx_limits l;

	(void)state;
	memset(&l, 0x5a, sizeof(l));
	limits_init(&l);
	assert_int_equal(l.cpu_quota_us, LIMIT_UNSET);
	assert_int_equal(l.cpu_period_us, 100000);
	assert_int_equal(l.cpu_weight, LIMIT_UNSET);
	assert_int_equal(l.memory_max, LIMIT_UNSET);
	assert_int_equal(l.memory_high, LIMIT_UNSET);
	assert_int_equal(l.swap_max, LIMIT_UNSET);
	assert_int_equal(l.pids_max, LIMIT_UNSET);
	assert_int_equal(l.timeout_ms, LIMIT_UNSET);
	assert_int_equal(l.nr_io, 0);
	assert_true(l.oom_group);
	assert_string_equal(limits_flag_name(0), "cpu");
	assert_string_equal(limits_flag_name(10), "timeout");
	assert_null(limits_flag_name(11));
}

static void test_cpu(void **state)
{
	(void)state;
	assert_int_equal(set_ok("cpu", "150%").cpu_quota_us, 150000);
	assert_int_equal(set_ok("cpu", "150%").cpu_period_us, 100000);
	assert_int_equal(set_ok("cpu", "250%").cpu_quota_us, 250000);
	assert_int_equal(set_ok("cpu", "100%").cpu_quota_us, 100000);
	assert_int_equal(set_ok("cpu", "1%").cpu_quota_us, 1000);
	assert_int_equal(set_ok("cpu", "12.5%").cpu_quota_us, 12500);
	assert_int_equal(set_ok("cpu", "1000000%").cpu_quota_us, 1000000000);
	assert_int_equal(set_ok("cpu", "max").cpu_quota_us, LIMIT_MAX);
	assert_int_equal(set_ok("cpu", "infinity").cpu_quota_us, LIMIT_MAX);

	set_bad("cpu", "0%", "--cpu 0%: must be at least 1%; use a percentage of one CPU such as "
		"'50%' or '250%' (above 100% spans several CPUs), or 'max'");
	set_bad("cpu", "0.5%", "--cpu 0.5%: must be at least 1%; " CPU_HELP);
	set_bad("cpu", "abc", "--cpu abc: not a percentage; " CPU_HELP);
	set_bad("cpu", "150", "--cpu 150: not a percentage; " CPU_HELP);
	set_bad("cpu", "-50%", "--cpu -50%: not a percentage; " CPU_HELP);
	set_bad("cpu", "150 %", "--cpu 150 %: not a percentage; " CPU_HELP);
	set_bad("cpu", "", "--cpu : not a percentage; " CPU_HELP);
	set_bad("cpu", "1.%", "--cpu 1.%: not a percentage; " CPU_HELP);
	set_bad("cpu", "1000001%", "--cpu 1000001%: too large; the most is 1000000%, or 'max'");
	set_bad("cpu", "99999999999999999999%",
		"--cpu 99999999999999999999%: too large; the most is 1000000%, or 'max'");
}

static void test_cpu_weight(void **state)
{
	(void)state;
	assert_int_equal(set_ok("cpu-weight", "1").cpu_weight, 1);
	assert_int_equal(set_ok("cpu-weight", "100").cpu_weight, 100);
	assert_int_equal(set_ok("cpu-weight", "10000").cpu_weight, 10000);
	set_bad("cpu-weight", "0", "--cpu-weight 0: not a weight; use a whole number from 1 to 10000 "
		"(the default weight is 100)");
	set_bad("cpu-weight", "10001", "--cpu-weight 10001: not a weight; " WEIGHT_HELP);
	set_bad("cpu-weight", "abc", "--cpu-weight abc: not a weight; " WEIGHT_HELP);
	set_bad("cpu-weight", "-1", "--cpu-weight -1: not a weight; " WEIGHT_HELP);
	set_bad("cpu-weight", "max", "--cpu-weight max: not a weight; " WEIGHT_HELP);
	set_bad("cpu-weight", "99999999999999999999999",
		"--cpu-weight 99999999999999999999999: not a weight; " WEIGHT_HELP);
}

static void test_memory(void **state)
{
	(void)state;
	assert_int_equal(set_ok("memory", "2G").memory_max, 2LL << 30);
	assert_int_equal(set_ok("memory", "2g").memory_max, 2LL << 30);
	assert_int_equal(set_ok("memory", "512").memory_max, 512);
	assert_int_equal(set_ok("memory", "1K").memory_max, 1024);
	assert_int_equal(set_ok("memory", "300M").memory_max, 300LL << 20);
	assert_int_equal(set_ok("memory", "1.5G").memory_max, 3LL << 29);
	assert_int_equal(set_ok("memory", "1T").memory_max, 1LL << 40);
	assert_int_equal(set_ok("memory", "8388607T").memory_max, 8388607LL << 40);
	assert_int_equal(set_ok("memory", "max").memory_max, LIMIT_MAX);
	assert_int_equal(set_ok("memory", "infinity").memory_max, LIMIT_MAX);
	assert_int_equal(set_ok("memory-high", "1G").memory_high, 1LL << 30);
	assert_int_equal(set_ok("memory-high", "max").memory_high, LIMIT_MAX);
	assert_int_equal(set_ok("swap-max", "0").swap_max, 0);
	assert_int_equal(set_ok("swap-max", "512M").swap_max, 512LL << 20);
	assert_int_equal(set_ok("swap-max", "max").swap_max, LIMIT_MAX);

	set_bad("memory", "2X", "--memory 2X: not a size; use a number with an optional K, M, G or T "
		"suffix (base 1024), or 'max'");
	set_bad("memory", "abc", "--memory abc: not a size; " SIZE_HELP);
	set_bad("memory", "-1", "--memory -1: not a size; " SIZE_HELP);
	set_bad("memory", "-1G", "--memory -1G: not a size; " SIZE_HELP);
	set_bad("memory", "2GB", "--memory 2GB: not a size; " SIZE_HELP);
	set_bad("memory", "2GiB", "--memory 2GiB: not a size; " SIZE_HELP);
	set_bad("memory", "G", "--memory G: not a size; " SIZE_HELP);
	set_bad("memory", "", "--memory : not a size; " SIZE_HELP);
	set_bad("memory", " 2G", "--memory  2G: not a size; " SIZE_HELP);
	set_bad("memory", "1.2.3G", "--memory 1.2.3G: not a size; " SIZE_HELP);
	set_bad("memory", "0", "--memory 0: must be more than 0; " SIZE_HELP);
	set_bad("memory", "0G", "--memory 0G: must be more than 0; " SIZE_HELP);
	set_bad("memory", "99999999T", "--memory 99999999T: too large; the most is 8388607T, or 'max'");
	set_bad("memory", "8388608T", "--memory 8388608T: too large; the most is 8388607T, or 'max'");
	set_bad("memory", "99999999999999999999", "--memory 99999999999999999999: too large; the most "
		"is 8388607T, or 'max'");
	set_bad("memory-high", "2X", "--memory-high 2X: not a size; " SIZE_HELP);
	set_bad("memory-high", "0", "--memory-high 0: must be more than 0; " SIZE_HELP);
	set_bad("swap-max", "2X", "--swap-max 2X: not a size; " SIZE_HELP);
	set_bad("swap-max", "-1", "--swap-max -1: not a size; " SIZE_HELP);
}

static void test_pids(void **state)
{
	(void)state;
	assert_int_equal(set_ok("pids", "1").pids_max, 1);
	assert_int_equal(set_ok("pids", "256").pids_max, 256);
	assert_int_equal(set_ok("pids", "4194304").pids_max, 4194304);
	assert_int_equal(set_ok("pids", "max").pids_max, LIMIT_MAX);
	assert_int_equal(set_ok("pids", "infinity").pids_max, LIMIT_MAX);
	set_bad("pids", "0", "--pids 0: not a number of tasks; use a whole number from 1 to 4194304, "
		"or 'max'");
	set_bad("pids", "-1", "--pids -1: not a number of tasks; " PIDS_HELP);
	set_bad("pids", "abc", "--pids abc: not a number of tasks; " PIDS_HELP);
	set_bad("pids", "1K", "--pids 1K: not a number of tasks; " PIDS_HELP);
	set_bad("pids", "4194305", "--pids 4194305: not a number of tasks; " PIDS_HELP);
	set_bad("pids", "99999999999999999999", "--pids 99999999999999999999: not a number of tasks; "
		PIDS_HELP);
}

static void test_timeout(void **state)
{
	(void)state;
	assert_int_equal(set_ok("timeout", "1h30m").timeout_ms, 5400000);
	assert_int_equal(set_ok("timeout", "30m").timeout_ms, 1800000);
	assert_int_equal(set_ok("timeout", "90").timeout_ms, 90000);
	assert_int_equal(set_ok("timeout", "90s").timeout_ms, 90000);
	assert_int_equal(set_ok("timeout", "500ms").timeout_ms, 500);
	assert_int_equal(set_ok("timeout", "2h").timeout_ms, 7200000);
	assert_int_equal(set_ok("timeout", "1d").timeout_ms, 86400000);
	assert_int_equal(set_ok("timeout", "1d2h3m4s5ms").timeout_ms, 93784005);
	assert_int_equal(set_ok("timeout", "2d 4h").timeout_ms, 187200000);
	assert_int_equal(set_ok("timeout", "1m1m").timeout_ms, 120000);	/* as systemd: they add */

	set_bad("timeout", "0", "--timeout 0: must be more than 0; use a number with a unit such as "
		"'90s', '30m' or '1h30m' (units ms, s, m, h, d; a bare number is seconds)");
	set_bad("timeout", "0s", "--timeout 0s: must be more than 0; " TIME_HELP);
	set_bad("timeout", "abc", "--timeout abc: not a duration; " TIME_HELP);
	set_bad("timeout", "-5", "--timeout -5: not a duration; " TIME_HELP);
	set_bad("timeout", "1h30", "--timeout 1h30: not a duration; " TIME_HELP);
	set_bad("timeout", "1x", "--timeout 1x: not a duration; " TIME_HELP);
	set_bad("timeout", "1min", "--timeout 1min: not a duration; " TIME_HELP);
	set_bad("timeout", "1H", "--timeout 1H: not a duration; " TIME_HELP);
	set_bad("timeout", "1.5h", "--timeout 1.5h: not a duration; " TIME_HELP);
	set_bad("timeout", "h", "--timeout h: not a duration; " TIME_HELP);
	set_bad("timeout", "", "--timeout : not a duration; " TIME_HELP);
	set_bad("timeout", " 5s", "--timeout  5s: not a duration; " TIME_HELP);
	set_bad("timeout", "5s ", "--timeout 5s : not a duration; " TIME_HELP);
	set_bad("timeout", "99999999999999999d", "--timeout 99999999999999999d: too long");
	set_bad("timeout", "999999999999999999999", "--timeout 999999999999999999999: too long");
}

static void test_format_duration(void **state)
{
	char buf[64];

	(void)state;
	limits_format_duration(5400000, buf, sizeof(buf));
	assert_string_equal(buf, "1h30m");
	limits_format_duration(93784005, buf, sizeof(buf));
	assert_string_equal(buf, "1d2h3m4s5ms");
	limits_format_duration(500, buf, sizeof(buf));
	assert_string_equal(buf, "500ms");
	limits_format_duration(90000, buf, sizeof(buf));
	assert_string_equal(buf, "1m30s");
	/* What it prints reads back as the same value. */
	assert_int_equal(set_ok("timeout", "1d2h3m4s5ms").timeout_ms, 93784005);
}

static void test_unknown_name(void **state)
{
	struct sbx_limits l;
	char err[128];

	(void)state;
	limits_init(&l);
	assert_int_equal(limits_set(&l, "memroy", "1G", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown limit 'memroy'");
	/* limits_parse names the value as the caller says (the policy's key). */
	assert_int_equal(limits_parse(&l, "memory", "2X", "limits.memory", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "limits.memory 2X: not a size; " SIZE_HELP);
}

/* --- devices --------------------------------------------------------------------- */

static char tmpdir[PATH_MAX];

static int make_tmpdir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/sbx-unit-limits-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

/* MAJ:MIN of the whole disk under @dev, as sysfs knows it (a partition's parent). */
static void whole_disk_of(dev_t dev, unsigned *maj, unsigned *min)
{
	char path[96];
	FILE *f;

	*maj = major(dev);
	*min = minor(dev);
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", *maj, *min);
	if (access(path, F_OK))
		return;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../dev", *maj, *min);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%u:%u", maj, min), 2);
	fclose(f);
}

static void test_io_block_node(void **state)
{
	struct sbx_limits l;
	char node[PATH_MAX + 16], arg[PATH_MAX + 32], err[512];

	(void)state;
	if (geteuid())
		return;	/* mknod needs root (the suites run as root) */
	snprintf(node, sizeof(node), "%s/loop0", tmpdir);
	assert_int_equal(mknod(node, S_IFBLK | 0600, makedev(7, 0)), 0);
	snprintf(arg, sizeof(arg), "%s=5M", node);
	l = set_ok("io-read-bps", arg);
	assert_int_equal(l.nr_io, 1);
	assert_int_equal(l.io[0].major, 7);
	assert_int_equal(l.io[0].minor, 0);
	assert_int_equal(l.io[0].rbps, 5000000);
	assert_int_equal(l.io[0].wbps, LIMIT_UNSET);
	assert_int_equal(l.io[0].riops, LIMIT_UNSET);
	assert_int_equal(l.io[0].wiops, LIMIT_UNSET);

	/* The other keys of the same device join its entry; a repeated key: the last wins. */
	snprintf(arg, sizeof(arg), "%s=1G", node);
	assert_int_equal(limits_set(&l, "io-write-bps", arg, err, sizeof(err)), 0);
	snprintf(arg, sizeof(arg), "%s=2k", node);
	assert_int_equal(limits_set(&l, "io-read-iops", arg, err, sizeof(err)), 0);
	snprintf(arg, sizeof(arg), "%s=max", node);
	assert_int_equal(limits_set(&l, "io-write-iops", arg, err, sizeof(err)), 0);
	snprintf(arg, sizeof(arg), "%s=1.5M", node);
	assert_int_equal(limits_set(&l, "io-read-bps", arg, err, sizeof(err)), 0);
	assert_int_equal(l.nr_io, 1);
	assert_int_equal(l.io[0].rbps, 1500000);
	assert_int_equal(l.io[0].wbps, 1000000000);
	assert_int_equal(l.io[0].riops, 2000);
	assert_int_equal(l.io[0].wiops, LIMIT_MAX);
}

/* A partition's node stands for its disk: io.max takes whole disks only. */
static void test_io_partition(void **state)
{
	char node[PATH_MAX + 16], arg[PATH_MAX + 32], path[300], buf[32];
	unsigned maj, min, wmaj, wmin;
	struct sbx_limits l;
	FILE *f = popen("ls -d /sys/class/block/*/partition 2>/dev/null | head -1", "r");

	(void)state;
	if (!f || !fgets(path, sizeof(path), f) || geteuid()) {
		if (f)
			pclose(f);
		return;	/* no partition on this machine */
	}
	pclose(f);
	path[strcspn(path, "\n")] = '\0';
	strcpy(strrchr(path, '/'), "/dev");
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_int_equal(sscanf(buf, "%u:%u", &maj, &min), 2);
	whole_disk_of(makedev(maj, min), &wmaj, &wmin);
	assert_false(wmaj == maj && wmin == min);
	snprintf(node, sizeof(node), "%s/part", tmpdir);
	assert_int_equal(mknod(node, S_IFBLK | 0600, makedev(maj, min)), 0);
	snprintf(arg, sizeof(arg), "%s=1M", node);
	l = set_ok("io-write-bps", arg);
	assert_int_equal(l.io[0].major, wmaj);
	assert_int_equal(l.io[0].minor, wmin);
}

static void test_io_file_on_disk(void **state)
{
	char file[PATH_MAX + 16], arg[PATH_MAX + 32];
	struct sbx_limits l;
	unsigned maj, min;
	struct stat st;
	int fd;

	(void)state;
	snprintf(file, sizeof(file), "%s/data", tmpdir);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stat(file, &st), 0);
	if (!major(st.st_dev))
		return;	/* /tmp is tmpfs here */
	whole_disk_of(st.st_dev, &maj, &min);
	snprintf(arg, sizeof(arg), "%s=100", file);
	l = set_ok("io-write-iops", arg);
	assert_int_equal(l.nr_io, 1);
	assert_int_equal(l.io[0].major, maj);
	assert_int_equal(l.io[0].minor, min);
	assert_int_equal(l.io[0].wiops, 100);
}

static void test_io_errors(void **state)
{
	char shm[] = "/dev/shm/sbx-unit-limits-XXXXXX", arg[128], want[512];
	struct stat st;
	int fd;

	(void)state;
	set_bad("io-read-bps", "/nonexistent-sbx/disk=5M",
		"--io-read-bps /nonexistent-sbx/disk=5M: /nonexistent-sbx/disk: No such file or directory");
	set_bad("io-write-bps", "/dev/null=5M",
		"--io-write-bps /dev/null=5M: /dev/null is a character device, not a block device");
	set_bad("io-read-bps", "/proc/self/status=5M",
		"--io-read-bps /proc/self/status=5M: /proc/self/status is not on a block device (tmpfs, "
		"overlayfs, btrfs and other virtual file systems have none to limit: name the disk, "
		"e.g. /dev/vda)");
	fd = mkstemp(shm);
	if (fd >= 0) {
		close(fd);
		assert_int_equal(stat(shm, &st), 0);
		if (!major(st.st_dev)) {
			snprintf(arg, sizeof(arg), "%s=5M", shm);
			snprintf(want, sizeof(want), "--io-read-bps %s: %s is not on a block device "
				 "(tmpfs, overlayfs, btrfs and other virtual file systems have none to "
				 "limit: name the disk, e.g. /dev/vda)", arg, shm);
			set_bad("io-read-bps", arg, want);
		}
		unlink(shm);
	}
	set_bad("io-read-bps", "/tmp", "--io-read-bps /tmp: not DEV=RATE; use a block device or a "
		"file on one, '=', and bytes per second " RATE_HELP ", e.g. /dev/vda=5M");
	set_bad("io-read-iops", "=5", "--io-read-iops =5: not DEV=RATE; use a block device or a file "
		"on one, '=', and operations per second " RATE_HELP ", e.g. /dev/vda=1000");
	set_bad("io-write-bps", "/tmp=", "--io-write-bps /tmp=: not DEV=RATE; use a block device or a "
		"file on one, '=', and bytes per second " RATE_HELP ", e.g. /dev/vda=5M");
	set_bad("io-read-bps", "/tmp=5X", "--io-read-bps /tmp=5X: 5X is not a rate; use bytes per "
		"second, more than 0, " RATE_HELP);
	set_bad("io-read-bps", "/tmp=0", "--io-read-bps /tmp=0: 0 is not a rate; use bytes per "
		"second, more than 0, " RATE_HELP);
	set_bad("io-write-iops", "/tmp=-1", "--io-write-iops /tmp=-1: -1 is not a rate; use "
		"operations per second, more than 0, " RATE_HELP);
	set_bad("io-read-bps", "/tmp=99999999T", "--io-read-bps /tmp=99999999T: rate 99999999T is too "
		"large");
}

static void test_io_device_count(void **state)
{
	char node[PATH_MAX + 16], arg[PATH_MAX + 32], err[512];
	struct sbx_limits l;

	(void)state;
	if (geteuid())
		return;	/* mknod needs root */
	limits_init(&l);
	for (unsigned i = 0; i <= LIMITS_IO_MAX; i++) {
		snprintf(node, sizeof(node), "%s/dev%u", tmpdir, i);
		assert_int_equal(mknod(node, S_IFBLK | 0600, makedev(240, 100 + i)), 0);
		snprintf(arg, sizeof(arg), "%s=%uM", node, i + 1);
		if (i < LIMITS_IO_MAX) {
			assert_int_equal(limits_set(&l, "io-read-bps", arg, err, sizeof(err)), 0);
			continue;
		}
		assert_int_equal(limits_set(&l, "io-read-bps", arg, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, ": at most 8 devices can be limited"));
	}
	assert_int_equal(l.nr_io, LIMITS_IO_MAX);
	assert_int_equal(l.io[7].minor, 107);
	assert_int_equal(l.io[7].rbps, 8000000);
}

/* --- merge, controllers, writes ------------------------------------------------- */

static void add_io(struct sbx_limits *l, __u32 maj, __u32 min, long long rbps, long long wbps)
{
	l->io[l->nr_io++] = (struct io_limit){ .major = maj, .minor = min, .rbps = rbps,
					       .wbps = wbps, .riops = LIMIT_UNSET,
					       .wiops = LIMIT_UNSET };
}

static void test_merge(void **state)
{
	struct sbx_limits policy, flags;

	(void)state;
	limits_init(&policy);
	limits_init(&flags);
	policy.memory_max = 1LL << 30;
	policy.pids_max = 100;
	policy.timeout_ms = 60000;
	policy.cpu_quota_us = 50000;
	add_io(&policy, 8, 0, 1000, 2000);
	add_io(&policy, 7, 0, 5, LIMIT_UNSET);
	flags.memory_max = 2LL << 30;
	flags.cpu_quota_us = LIMIT_MAX;
	flags.swap_max = 0;
	add_io(&flags, 8, 0, LIMIT_UNSET, 3000);
	add_io(&flags, 253, 1, 9, LIMIT_UNSET);

	assert_int_equal(limits_merge(&policy, &flags), 0);
	assert_int_equal(policy.memory_max, 2LL << 30);	/* flag wins */
	assert_int_equal(policy.cpu_quota_us, LIMIT_MAX);	/* "max" is a value too */
	assert_int_equal(policy.cpu_period_us, 100000);
	assert_int_equal(policy.swap_max, 0);
	assert_int_equal(policy.pids_max, 100);		/* the policy's, unset on the flags */
	assert_int_equal(policy.timeout_ms, 60000);
	assert_int_equal(policy.memory_high, LIMIT_UNSET);
	assert_int_equal(policy.nr_io, 3);
	assert_int_equal(policy.io[0].rbps, 1000);	/* per key within a device */
	assert_int_equal(policy.io[0].wbps, 3000);
	assert_int_equal(policy.io[1].rbps, 5);
	assert_int_equal(policy.io[2].major, 253);
	assert_int_equal(policy.io[2].rbps, 9);
	assert_true(policy.oom_group);

	/* The policy's oomGroup false survives flags that never set it. */
	policy.oom_group = false;
	assert_int_equal(limits_merge(&policy, &flags), 0);
	assert_false(policy.oom_group);

	/* More devices than fit. */
	limits_init(&flags);
	for (unsigned i = 0; i < LIMITS_IO_MAX; i++)
		add_io(&flags, 240, i, 1, LIMIT_UNSET);
	assert_int_equal(limits_merge(&policy, &flags), -E2BIG);
}

static void test_controllers(void **state)
{
	struct sbx_limits l;

	(void)state;
	limits_init(&l);
	assert_int_equal(limits_controllers(&l), LIMITS_CTRL_MEMORY);	/* oom.group */
	l.oom_group = false;
	assert_int_equal(limits_controllers(&l), 0);
	l.cpu_weight = 50;
	assert_int_equal(limits_controllers(&l), LIMITS_CTRL_CPU);
	l.cpu_weight = LIMIT_UNSET;
	l.cpu_quota_us = LIMIT_MAX;
	assert_int_equal(limits_controllers(&l), LIMITS_CTRL_CPU);
	l.swap_max = 0;
	assert_int_equal(limits_controllers(&l), LIMITS_CTRL_CPU | LIMITS_CTRL_MEMORY);
	add_io(&l, 8, 0, 1, LIMIT_UNSET);
	l.pids_max = 10;
	assert_int_equal(limits_controllers(&l), LIMITS_CTRL_CPU | LIMITS_CTRL_MEMORY |
			 LIMITS_CTRL_IO | LIMITS_CTRL_PIDS);
	/* A timeout alone needs no controller. */
	limits_init(&l);
	l.oom_group = false;
	l.timeout_ms = 1000;
	assert_int_equal(limits_controllers(&l), 0);
}

static void expect_write(const struct limit_write *w, const char *file, const char *value)
{
	assert_string_equal(w->file, file);
	assert_string_equal(w->value, value);
}

static void test_writes(void **state)
{
	struct limit_write w[LIMITS_WRITES_MAX];
	struct sbx_limits l;

	(void)state;
	limits_init(&l);
	assert_int_equal(limits_writes(&l, w, LIMITS_WRITES_MAX), 1);
	expect_write(&w[0], "memory.oom.group", "1");
	l.oom_group = false;
	assert_int_equal(limits_writes(&l, w, LIMITS_WRITES_MAX), 0);

	l = set_ok("cpu", "150%");
	assert_int_equal(limits_set(&l, "cpu-weight", "200", NULL, 0), 0);
	assert_int_equal(limits_set(&l, "memory", "2G", NULL, 0), 0);
	assert_int_equal(limits_set(&l, "memory-high", "1536M", NULL, 0), 0);
	assert_int_equal(limits_set(&l, "swap-max", "0", NULL, 0), 0);
	assert_int_equal(limits_set(&l, "pids", "256", NULL, 0), 0);
	assert_int_equal(limits_set(&l, "timeout", "30m", NULL, 0), 0);
	add_io(&l, 8, 0, 5000000, LIMIT_UNSET);
	add_io(&l, 7, 0, LIMIT_MAX, 1000);
	l.io[1].riops = 10;
	l.io[1].wiops = 20;
	assert_int_equal(limits_writes(&l, w, LIMITS_WRITES_MAX), 9);
	expect_write(&w[0], "cpu.max", "150000 100000");
	expect_write(&w[1], "cpu.weight", "200");
	expect_write(&w[2], "memory.high", "1610612736");
	expect_write(&w[3], "memory.max", "2147483648");
	expect_write(&w[4], "memory.swap.max", "0");
	expect_write(&w[5], "memory.oom.group", "1");
	expect_write(&w[6], "io.max", "8:0 rbps=5000000");
	expect_write(&w[7], "io.max", "7:0 rbps=max wbps=1000 riops=10 wiops=20");
	expect_write(&w[8], "pids.max", "256");

	/* "max" everywhere. */
	limits_init(&l);
	l.oom_group = false;
	assert_int_equal(limits_set(&l, "cpu", "max", NULL, 0), 0);
	assert_int_equal(limits_set(&l, "memory", "max", NULL, 0), 0);
	assert_int_equal(limits_set(&l, "memory-high", "infinity", NULL, 0), 0);
	assert_int_equal(limits_set(&l, "swap-max", "max", NULL, 0), 0);
	assert_int_equal(limits_set(&l, "pids", "max", NULL, 0), 0);
	assert_int_equal(limits_writes(&l, w, LIMITS_WRITES_MAX), 5);
	expect_write(&w[0], "cpu.max", "max 100000");
	expect_write(&w[1], "memory.high", "max");
	expect_write(&w[2], "memory.max", "max");
	expect_write(&w[3], "memory.swap.max", "max");
	expect_write(&w[4], "pids.max", "max");

	/* Too little room: -E2BIG, never a partial list passed off as complete. */
	assert_int_equal(limits_writes(&l, w, 4), -E2BIG);
	assert_int_equal(limits_writes(&l, w, 0), -E2BIG);
}

/* Every write at its widest still fits struct limit_write. */
static void test_writes_widest(void **state)
{
	struct limit_write w[LIMITS_WRITES_MAX];
	struct sbx_limits l;
	int n;

	(void)state;
	limits_init(&l);
	l.cpu_quota_us = 1000000000;
	l.cpu_weight = 10000;
	l.memory_max = l.memory_high = l.swap_max = 8388607LL << 40;
	l.pids_max = 4194304;
	for (unsigned i = 0; i < LIMITS_IO_MAX; i++)
		add_io(&l, 4095, 1048575 - i, LLONG_MAX, LLONG_MAX);
	for (unsigned i = 0; i < LIMITS_IO_MAX; i++)
		l.io[i].riops = l.io[i].wiops = LLONG_MAX;
	n = limits_writes(&l, w, LIMITS_WRITES_MAX);
	assert_int_equal(n, LIMITS_WRITES_MAX);
	expect_write(&w[6], "io.max", "4095:1048575 rbps=9223372036854775807 wbps=9223372036854775807 "
		     "riops=9223372036854775807 wiops=9223372036854775807");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_cpu_weight),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_pids),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_unknown_name),
		cmocka_unit_test(test_io_block_node),
		cmocka_unit_test(test_io_partition),
		cmocka_unit_test(test_io_file_on_disk),
		cmocka_unit_test(test_io_errors),
		cmocka_unit_test(test_io_device_count),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_controllers),
		cmocka_unit_test(test_writes),
		cmocka_unit_test(test_writes_widest),
	};

	return cmocka_run_group_tests_name("limits", tests, make_tmpdir, remove_tmpdir);
}
