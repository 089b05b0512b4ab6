// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * limits.c — resource limits in systemd-run's words and units, turned into
 * cgroup v2 control-file writes. The unit rules (documented for users in
 * docs/policy.md):
 *
 *   cpu          PERCENT% of one CPU ("150%" = 1.5 CPUs), period 100 ms; or max
 *   cpu-weight   1..10000
 *   memory, memory-high, swap-max
 *                bytes with an optional K, M, G or T suffix, base 1024 ("2G",
 *                "1.5G", "512"); or max / infinity. No "B", "GB" or "GiB":
 *                "GB" reads as base 1000, so it is refused rather than guessed.
 *   io-*-bps, io-*-iops
 *                DEV=RATE, RATE with an optional K, M, G or T suffix, base
 *                1000 as systemd's IO*Max=; or max
 *   pids         1..4194304 (the kernel's PID_MAX_LIMIT); or max / infinity
 *   timeout      "90" (seconds), "500ms", "30m", "1h30m", "2d 4h": units ms, s,
 *                m, h, d
 *
 * Library code: nothing prints; every error names the value and what is
 * accepted.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sbx_limits.h"
#include "util.h"

#define CPU_PERIOD_US	100000LL
#define CPU_PCT_MAX	1000000LL	/* 10000 CPUs: beyond any real machine */
#define PIDS_LIMIT_MAX	4194304LL	/* PID_MAX_LIMIT: pids.max refuses more */

#define SIZE_HELP	"use a number with an optional K, M, G or T suffix (base 1024), or 'max'"
#define CPU_HELP	"use a percentage of one CPU such as '50%%' or '250%%' (above 100%% spans " \
			"several CPUs), or 'max'"
#define WEIGHT_HELP	"use a whole number from 1 to 10000 (the default weight is 100)"
#define PIDS_HELP	"use a whole number from 1 to 4194304, or 'max'"
#define TIME_HELP	"use a number with a unit such as '90s', '30m' or '1h30m' (units ms, s, " \
			"m, h, d; a bare number is seconds)"
#define RATE_HELP	"with an optional K, M, G or T suffix (base 1000), or 'max'"

static int __attribute__((format(printf, 5, 6)))
bad(char *err, size_t errsz, const char *label, const char *value, const char *fmt, ...)
{
	char why[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(err, errsz, "%s %s: %s", label, value, why);
	return -EINVAL;
}

static bool is_max(const char *s)
{
	return !strcmp(s, "max") || !strcmp(s, "infinity");
}

/*
 * "D[.F]" times @mult, exactly (fractions truncated): 0, -EINVAL when no
 * digits come first, -ERANGE past LLONG_MAX. *@end is what follows.
 */
static int parse_scaled(const char *s, unsigned long long mult, const char **end, long long *out)
{
	unsigned __int128 v = 0, frac = 0, scale = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > LLONG_MAX)
			return -ERANGE;
	}
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -EINVAL;
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (scale >= 1000000000000000000ULL)
				continue;	/* past 18 decimals: ignored */
			frac = frac * 10 + (*p - '0');
			scale *= 10;
		}
	}
	v = v * mult + frac * mult / scale;
	if (v > LLONG_MAX)
		return -ERANGE;
	*end = p;
	*out = (long long)v;
	return 0;
}

/* An optional K, M, G or T (either case) at *@s, consumed: its multiplier in @base. */
static unsigned long long suffix(const char **s, unsigned long long base)
{
	static const char units[] = "KMGT";
	unsigned long long m = 1;
	char c = **s >= 'a' && **s <= 'z' ? **s - 'a' + 'A' : **s;

	for (size_t i = 0; c && i < sizeof(units) - 1; i++) {
		m *= base;
		if (c == units[i]) {
			(*s)++;
			return m;
		}
	}
	return 1;
}

/* NUMBER[K|M|G|T] in @base, the whole string: 0, -EINVAL or -ERANGE. */
static int parse_quantity(const char *s, unsigned long long base, long long *out)
{
	const char *num_end = s + strspn(s, "0123456789."), *rest = num_end, *p;
	unsigned long long mult = suffix(&rest, base);
	int err;

	if (*rest)
		return -EINVAL;
	err = parse_scaled(s, mult, &p, out);
	if (err)
		return err;
	return p == num_end ? 0 : -EINVAL;
}

int limits_parse_bytes(const char *s, long long *out)
{
	return parse_quantity(s, 1024, out);
}

/* --- one parser per kind of value ------------------------------------------------ */

struct limit_def;
typedef int (*limit_fn)(struct sbx_limits *l, const struct limit_def *d, const char *label,
			const char *value, char *err, size_t errsz);

struct limit_def {
	const char *name;	/* the flag without dashes */
	limit_fn parse;
	size_t field;		/* offsetof in struct sbx_limits, or in struct io_limit for io */
	bool zero_ok;		/* swap-max 0: no swap at all */
};

#define FIELD(l, d) ((long long *)((char *)(l) + (d)->field))

static int parse_size(struct sbx_limits *l, const struct limit_def *d, const char *label,
		      const char *value, char *err, size_t errsz)
{
	long long n;
	int r;

	if (is_max(value)) {
		*FIELD(l, d) = LIMIT_MAX;
		return 0;
	}
	r = parse_quantity(value, 1024, &n);
	if (r == -ERANGE)
		return bad(err, errsz, label, value, "too large; the most is 8388607T, or 'max'");
	if (r)
		return bad(err, errsz, label, value, "not a size; " SIZE_HELP);
	if (!n && !d->zero_ok)
		return bad(err, errsz, label, value, "must be more than 0; " SIZE_HELP);
	*FIELD(l, d) = n;
	return 0;
}

static int parse_cpu(struct sbx_limits *l, const struct limit_def *d, const char *label,
		     const char *value, char *err, size_t errsz)
{
	const char *end;
	long long us;
	int r;

	(void)d;
	if (is_max(value)) {
		l->cpu_quota_us = LIMIT_MAX;
		l->cpu_period_us = CPU_PERIOD_US;
		return 0;
	}
	/* One percent of one CPU is 1000 µs of every 100000 µs period. */
	r = parse_scaled(value, CPU_PERIOD_US / 100, &end, &us);
	if (!r && strcmp(end, "%"))
		r = -EINVAL;
	if (r == -ERANGE || (!r && us > CPU_PCT_MAX * (CPU_PERIOD_US / 100)))
		return bad(err, errsz, label, value, "too large; the most is 1000000%%, or 'max'");
	if (r)
		return bad(err, errsz, label, value, "not a percentage; " CPU_HELP);
	/* The kernel refuses a quota under 1 ms. */
	if (us < CPU_PERIOD_US / 100)
		return bad(err, errsz, label, value, "must be at least 1%%; " CPU_HELP);
	l->cpu_quota_us = us;
	l->cpu_period_us = CPU_PERIOD_US;
	return 0;
}

/* A whole number in [@lo, @hi], all digits. */
static bool whole(const char *s, long long lo, long long hi, long long *out)
{
	long long n = 0;

	if (!*s || strlen(s) > 19)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		n = n * 10 + (*s - '0');
		if (n > hi)
			return false;
	}
	*out = n;
	return n >= lo;
}

static int parse_weight(struct sbx_limits *l, const struct limit_def *d, const char *label,
			const char *value, char *err, size_t errsz)
{
	(void)d;
	if (!whole(value, 1, 10000, &l->cpu_weight))
		return bad(err, errsz, label, value, "not a weight; " WEIGHT_HELP);
	return 0;
}

static int parse_pids(struct sbx_limits *l, const struct limit_def *d, const char *label,
		      const char *value, char *err, size_t errsz)
{
	(void)d;
	if (is_max(value)) {
		l->pids_max = LIMIT_MAX;
		return 0;
	}
	if (!whole(value, 1, PIDS_LIMIT_MAX, &l->pids_max))
		return bad(err, errsz, label, value, "not a number of tasks; " PIDS_HELP);
	return 0;
}

int limits_parse_duration(const char *s, long long *ms)
{
	static const struct { const char *unit; long long ms; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "d", 86400000 },
	};
	unsigned __int128 total = 0;
	const char *p = s;

	if (whole(s, 0, LLONG_MAX / 1000, ms)) {	/* a bare number: seconds */
		*ms *= 1000;
		return 0;
	}
	while (*p) {
		long long n;
		size_t i;

		if (p != s)
			while (*p == ' ')
				p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (n = 0; *p >= '0' && *p <= '9'; p++)
			if ((n = n * 10 + (*p - '0')) > LLONG_MAX / 100)
				return -ERANGE;
		for (i = 0; i < ARRAY_SIZE(units); i++)
			if (!strncmp(p, units[i].unit, strlen(units[i].unit)) &&
			    !(p[strlen(units[i].unit)] >= 'a' && p[strlen(units[i].unit)] <= 'z'))
				break;
		if (i == ARRAY_SIZE(units))
			return -EINVAL;
		p += strlen(units[i].unit);
		total += (unsigned __int128)n * units[i].ms;
		if (total > LLONG_MAX)
			return -ERANGE;
	}
	if (p == s)
		return -EINVAL;
	*ms = (long long)total;
	return 0;
}

static int parse_timeout(struct sbx_limits *l, const struct limit_def *d, const char *label,
			 const char *value, char *err, size_t errsz)
{
	long long ms;
	int r = limits_parse_duration(value, &ms);

	(void)d;
	if (r == -ERANGE)
		return bad(err, errsz, label, value, "too long");
	if (r)
		return bad(err, errsz, label, value, "not a duration; " TIME_HELP);
	if (!ms)
		return bad(err, errsz, label, value, "must be more than 0; " TIME_HELP);
	l->timeout_ms = ms;
	return 0;
}

/* --- io: DEV=RATE ------------------------------------------------------------------ */

/*
 * io.max takes whole disks only: a partition (sysfs has a "partition" file
 * for it) becomes the disk it is on, as systemd does.
 */
static void whole_disk(__u32 *maj, __u32 *min)
{
	char path[96], buf[32];
	unsigned a, b;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", *maj, *min);
	if (access(path, F_OK))
		return;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../dev", *maj, *min);
	if (read_file(path, buf, sizeof(buf)) > 0 && sscanf(buf, "%u:%u", &a, &b) == 2) {
		*maj = a;
		*min = b;
	}
}

/* A block device node (its st_rdev) or any file on a block device (st_dev). */
static int resolve_device(const char *path, __u32 *maj, __u32 *min, char *why, size_t sz)
{
	struct stat st;
	dev_t dev;

	if (stat(path, &st)) {
		int err = errno;

		snprintf(why, sz, "%s: %s", path, strerror(err));
		return -err;
	}
	if (S_ISCHR(st.st_mode)) {
		snprintf(why, sz, "%s is a character device, not a block device", path);
		return -ENOTBLK;
	}
	dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	if (!major(dev)) {
		snprintf(why, sz, "%s is not on a block device (tmpfs, overlayfs, btrfs and other "
			 "virtual file systems have none to limit: name the disk, e.g. /dev/vda)", path);
		return -ENOTBLK;
	}
	*maj = major(dev);
	*min = minor(dev);
	whole_disk(maj, min);
	return 0;
}

static struct io_limit *io_slot(struct sbx_limits *l, __u32 maj, __u32 min)
{
	struct io_limit *io;

	for (size_t i = 0; i < l->nr_io; i++)
		if (l->io[i].major == maj && l->io[i].minor == min)
			return &l->io[i];
	if (l->nr_io >= LIMITS_IO_MAX)
		return NULL;
	io = &l->io[l->nr_io++];
	*io = (struct io_limit){ .major = maj, .minor = min, .rbps = LIMIT_UNSET,
				 .wbps = LIMIT_UNSET, .riops = LIMIT_UNSET, .wiops = LIMIT_UNSET };
	return io;
}

static int parse_io(struct sbx_limits *l, const struct limit_def *d, const char *label,
		    const char *value, char *err, size_t errsz)
{
	const char *eq = strrchr(value, '='), *what = strstr(d->name, "iops") ? "operations" : "bytes";
	char dev[4096], why[4200];
	struct io_limit *io;
	__u32 maj = 0, min = 0;
	long long rate;
	int r;

	if (!eq || eq == value || !eq[1] || (size_t)(eq - value) >= sizeof(dev))
		return bad(err, errsz, label, value, "not DEV=RATE; use a block device or a file on "
			   "one, '=', and %s per second " RATE_HELP ", e.g. /dev/vda=%s", what,
			   *what == 'b' ? "5M" : "1000");
	snprintf(dev, sizeof(dev), "%.*s", (int)(eq - value), value);
	if (is_max(eq + 1)) {
		rate = LIMIT_MAX;
	} else {
		r = parse_quantity(eq + 1, 1000, &rate);
		if (r == -ERANGE)
			return bad(err, errsz, label, value, "rate %s is too large", eq + 1);
		if (r || !rate)
			return bad(err, errsz, label, value, "%s is not a rate; use %s per second, more "
				   "than 0, " RATE_HELP, eq + 1, what);
	}
	if (resolve_device(dev, &maj, &min, why, sizeof(why)))
		return bad(err, errsz, label, value, "%s", why);
	io = io_slot(l, maj, min);
	if (!io)
		return bad(err, errsz, label, value, "at most %d devices can be limited",
			   LIMITS_IO_MAX);
	*FIELD(io, d) = rate;
	return 0;
}

#define LF(f) offsetof(struct sbx_limits, f)
#define IOF(f) offsetof(struct io_limit, f)

static const struct limit_def defs[] = {
	{ "cpu", parse_cpu, 0, false },
	{ "cpu-weight", parse_weight, 0, false },
	{ "memory", parse_size, LF(memory_max), false },
	{ "memory-high", parse_size, LF(memory_high), false },
	{ "swap-max", parse_size, LF(swap_max), true },
	{ "io-read-bps", parse_io, IOF(rbps), false },
	{ "io-write-bps", parse_io, IOF(wbps), false },
	{ "io-read-iops", parse_io, IOF(riops), false },
	{ "io-write-iops", parse_io, IOF(wiops), false },
	{ "pids", parse_pids, 0, false },
	{ "timeout", parse_timeout, 0, false },
};

/* --- public API ----------------------------------------------------------------------- */

void limits_init(struct sbx_limits *l)
{
	*l = (struct sbx_limits){
		.cpu_quota_us = LIMIT_UNSET, .cpu_period_us = CPU_PERIOD_US,
		.cpu_weight = LIMIT_UNSET, .memory_max = LIMIT_UNSET, .memory_high = LIMIT_UNSET,
		.swap_max = LIMIT_UNSET, .pids_max = LIMIT_UNSET, .timeout_ms = LIMIT_UNSET,
		.oom_group = true,
	};
}

const char *limits_flag_name(size_t i)
{
	return i < ARRAY_SIZE(defs) ? defs[i].name : NULL;
}

const char *limits_file_name(size_t i)
{
	/* The order of limits_writes(). */
	static const char *const files[] = {
		"cpu.max", "cpu.weight", "memory.high", "memory.max", "memory.swap.max",
		"memory.oom.group", "io.max", "pids.max",
	};

	return i < ARRAY_SIZE(files) ? files[i] : NULL;
}

int limits_parse(struct sbx_limits *l, const char *name, const char *value, const char *label,
		 char *err, size_t errsz)
{
	struct sbx_limits tmp = *l;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(defs); i++) {
		if (strcmp(name, defs[i].name))
			continue;
		/* On error @l stays as it was. */
		r = defs[i].parse(&tmp, &defs[i], label, value, err, errsz);
		if (!r)
			*l = tmp;
		return r;
	}
	snprintf(err, errsz, "unknown limit '%s'", name);
	return -EINVAL;
}

int limits_set(struct sbx_limits *l, const char *name, const char *value, char *err, size_t errsz)
{
	char label[64];

	snprintf(label, sizeof(label), "--%s", name);
	return limits_parse(l, name, value, label, err, errsz);
}

static void merge_value(long long *base, long long over)
{
	if (over != LIMIT_UNSET)
		*base = over;
}

int limits_merge(struct sbx_limits *base, const struct sbx_limits *over)
{
	if (over->cpu_quota_us != LIMIT_UNSET) {
		base->cpu_quota_us = over->cpu_quota_us;
		base->cpu_period_us = over->cpu_period_us;
	}
	merge_value(&base->cpu_weight, over->cpu_weight);
	merge_value(&base->memory_max, over->memory_max);
	merge_value(&base->memory_high, over->memory_high);
	merge_value(&base->swap_max, over->swap_max);
	merge_value(&base->pids_max, over->pids_max);
	merge_value(&base->timeout_ms, over->timeout_ms);
	/* No flag turns it off: the group stays on only while both want it. */
	base->oom_group = base->oom_group && over->oom_group;
	for (size_t i = 0; i < over->nr_io; i++) {
		const struct io_limit *o = &over->io[i];
		struct io_limit *b = io_slot(base, o->major, o->minor);

		if (!b)
			return -E2BIG;
		merge_value(&b->rbps, o->rbps);
		merge_value(&b->wbps, o->wbps);
		merge_value(&b->riops, o->riops);
		merge_value(&b->wiops, o->wiops);
	}
	return 0;
}

unsigned limits_controllers(const struct sbx_limits *l)
{
	unsigned c = 0;

	if (l->cpu_quota_us != LIMIT_UNSET || l->cpu_weight != LIMIT_UNSET)
		c |= LIMITS_CTRL_CPU;
	if (l->memory_max != LIMIT_UNSET || l->memory_high != LIMIT_UNSET ||
	    l->swap_max != LIMIT_UNSET || l->oom_group)
		c |= LIMITS_CTRL_MEMORY;
	if (l->nr_io)
		c |= LIMITS_CTRL_IO;
	if (l->pids_max != LIMIT_UNSET)
		c |= LIMITS_CTRL_PIDS;
	return c;
}

/* "max" or the number. */
static const char *num(long long v, char *buf, size_t sz)
{
	if (v == LIMIT_MAX)
		return "max";
	snprintf(buf, sz, "%lld", v);
	return buf;
}

static int push(struct limit_write *w, size_t max, int *n, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int push(struct limit_write *w, size_t max, int *n, const char *file, const char *fmt, ...)
{
	va_list ap;

	if ((size_t)*n >= max)
		return -E2BIG;
	snprintf(w[*n].file, sizeof(w[*n].file), "%s", file);
	va_start(ap, fmt);
	vsnprintf(w[*n].value, sizeof(w[*n].value), fmt, ap);
	va_end(ap);
	(*n)++;
	return 0;
}

static void io_line(const struct io_limit *io, char *buf, size_t sz)
{
	const struct { const char *key; long long v; } keys[] = {
		{ "rbps", io->rbps }, { "wbps", io->wbps }, { "riops", io->riops }, { "wiops", io->wiops },
	};
	size_t len = snprintf(buf, sz, "%u:%u", io->major, io->minor);
	char nb[24];

	for (size_t i = 0; i < ARRAY_SIZE(keys) && len < sz; i++)
		if (keys[i].v != LIMIT_UNSET)
			len += snprintf(buf + len, sz - len, " %s=%s", keys[i].key,
					num(keys[i].v, nb, sizeof(nb)));
}

int limits_writes(const struct sbx_limits *l, struct limit_write *w, size_t max)
{
	const struct { const char *file; long long v; } mem[] = {
		/* high first: lowering max below usage while high is above it reclaims twice */
		{ "memory.high", l->memory_high }, { "memory.max", l->memory_max },
		{ "memory.swap.max", l->swap_max },
	};
	char a[24], b[24], line[128];
	int n = 0, err = 0;

	if (l->cpu_quota_us != LIMIT_UNSET)
		err = push(w, max, &n, "cpu.max", "%s %s", num(l->cpu_quota_us, a, sizeof(a)),
			   num(l->cpu_period_us, b, sizeof(b)));
	if (!err && l->cpu_weight != LIMIT_UNSET)
		err = push(w, max, &n, "cpu.weight", "%lld", l->cpu_weight);
	for (size_t i = 0; i < ARRAY_SIZE(mem) && !err; i++)
		if (mem[i].v != LIMIT_UNSET)
			err = push(w, max, &n, mem[i].file, "%s", num(mem[i].v, a, sizeof(a)));
	if (!err && l->oom_group)
		err = push(w, max, &n, "memory.oom.group", "1");
	for (size_t i = 0; i < l->nr_io && !err; i++) {
		io_line(&l->io[i], line, sizeof(line));
		err = push(w, max, &n, "io.max", "%s", line);
	}
	if (!err && l->pids_max != LIMIT_UNSET)
		err = push(w, max, &n, "pids.max", "%s", num(l->pids_max, a, sizeof(a)));
	return err ? err : n;
}

void limits_format_duration(long long ms, char *buf, size_t sz)
{
	static const struct { const char *unit; long long ms; } units[] = {
		{ "d", 86400000 }, { "h", 3600000 }, { "m", 60000 }, { "s", 1000 }, { "ms", 1 },
	};
	size_t len = 0;

	buf[0] = '\0';
	if (ms <= 0) {
		snprintf(buf, sz, "0s");
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(units) && len < sz; i++) {
		if (ms < units[i].ms)
			continue;
		len += snprintf(buf + len, sz - len, "%lld%s", ms / units[i].ms, units[i].unit);
		ms %= units[i].ms;
	}
}
