/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sbx_limits.h — a sandbox's resource limits in the words and units of
 * systemd-run (--cpu 150%, --memory 2G, --io-write-bps /dev/vda=5M, …),
 * parsed from flags or the policy's "limits" object, and turned into the
 * cgroup v2 files that enforce them.
 *
 * Library code: nothing prints; errors are -EINVAL plus a message that names
 * the value and what is accepted.
 */
#ifndef SBX_SBX_LIMITS_H
#define SBX_SBX_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define LIMIT_UNSET	(-1LL)
#define LIMIT_MAX	(-2LL)		/* the word "max"/"infinity": explicitly no limit */
#define LIMITS_IO_MAX	8
/* The most writes limits_writes() can produce: 7 files plus one io.max line per device. */
#define LIMITS_WRITES_MAX	(7 + LIMITS_IO_MAX)

struct io_limit {
	__u32 major, minor;		/* resolved from a block device or any file on it */
	long long rbps, wbps, riops, wiops;	/* LIMIT_UNSET when not given */
};

struct sbx_limits {
	long long cpu_quota_us;		/* cpu.max "QUOTA PERIOD"; LIMIT_UNSET */
	long long cpu_period_us;	/* 100000 */
	long long cpu_weight;		/* cpu.weight 1..10000; LIMIT_UNSET */
	long long memory_max;		/* bytes; LIMIT_UNSET or LIMIT_MAX */
	long long memory_high;
	long long swap_max;
	long long pids_max;
	struct io_limit io[LIMITS_IO_MAX];
	size_t nr_io;
	long long timeout_ms;		/* wall clock; LIMIT_UNSET */
	bool oom_group;			/* memory.oom.group; true unless the policy says false */
};

/* Controllers a set of limits needs (for cgroup.subtree_control). */
#define LIMITS_CTRL_CPU		(1u << 0)
#define LIMITS_CTRL_MEMORY	(1u << 1)
#define LIMITS_CTRL_IO		(1u << 2)
#define LIMITS_CTRL_PIDS	(1u << 3)

void limits_init(struct sbx_limits *l);

/*
 * One flag of `run`: @name without dashes ("cpu", "cpu-weight", "memory",
 * "memory-high", "swap-max", "io-read-bps", "io-write-bps", "io-read-iops",
 * "io-write-iops", "pids", "timeout"). 0, or -EINVAL with @err filled:
 * "--memory 2X: not a size; use a number with an optional K, M, G or T suffix (base 1024), or 'max'".
 * On error @l is unchanged. The unit rules are at the top of limits.c and in docs/policy.md.
 */
int limits_set(struct sbx_limits *l, const char *name, const char *value, char *err, size_t errsz);
/*
 * The same, naming the value as @label in messages instead of "--NAME"
 * (the policy parser passes "limits.memory").
 */
int limits_parse(struct sbx_limits *l, const char *name, const char *value, const char *label,
		 char *err, size_t errsz);
/* "512", "64M", "1.5G": bytes, K/M/G/T base 1024, as memory limits read. 0, -EINVAL or -ERANGE. */
int limits_parse_bytes(const char *s, long long *out);
/*
 * "1h30m", "90" (seconds), "500ms", "2d 4h": units ms, s, m, h, d. The total
 * in ms; -EINVAL for anything else, -ERANGE past LLONG_MAX ms. 0 is accepted:
 * callers say what a zero means for them.
 */
int limits_parse_duration(const char *s, long long *ms);
/* The flag names limits_set() takes, in order; NULL past the last (for option tables). */
const char *limits_flag_name(size_t i);
/* The control files limits_writes() writes, in its order; NULL past the last. */
const char *limits_file_name(size_t i);

/*
 * Fold @over into @base: every limit @over sets wins (flags over the
 * policy), io per device and per key. oom_group stays on only if both have
 * it (no flag turns it on against a policy's false). 0, or -E2BIG when the
 * devices together are more than LIMITS_IO_MAX (@base then holds the first ones).
 */
int limits_merge(struct sbx_limits *base, const struct sbx_limits *over);

/* LIMITS_CTRL_* bits of the controllers @l needs. */
unsigned limits_controllers(const struct sbx_limits *l);

/* One cgroup file write: "cpu.max" ← "150000 100000". */
struct limit_write {
	char file[32];
	char value[128];
};

/*
 * The writes that apply @l, in a safe order: cpu.max, cpu.weight,
 * memory.high before memory.max, memory.swap.max, memory.oom.group ("1"
 * whenever oom_group: it also matters when the host runs out of memory, so
 * it does not wait for a memory limit), one io.max per device, pids.max.
 * Returns the count (≤ @max; LIMITS_WRITES_MAX always suffices) or -E2BIG.
 */
int limits_writes(const struct sbx_limits *l, struct limit_write *w, size_t max);

/* @ms as "1h30m", "2d4h1s", "500ms" (for people; limits_set reads it back). */
void limits_format_duration(long long ms, char *buf, size_t sz);

#endif
