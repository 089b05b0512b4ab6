/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cgstat.h — an existing cgroup seen from outside: find it by sandbox name or
 * path, read its usage (cpu.stat, memory.*, io.stat, pids.*, cgroup.events),
 * and stop it (cgroup.kill, cgroup.freeze), waiting on cgroup.events.
 *
 * Library code: nothing prints; errors are -errno. The parsers take the text
 * of one cgroupfs file and do no I/O, for unit tests.
 */
#ifndef SBX_CGSTAT_H
#define SBX_CGSTAT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "cgroup.h"

#define CGSTAT_UNSET	(-1LL)	/* the key or file is not there (JSON null) */
#define CGSTAT_MAX	(-2LL)	/* the word "max": no limit (JSON null) */

struct cgstat_cpu {
	bool present;		/* cpu.stat exists */
	long long usage_usec, user_usec, system_usec;
	long long nr_periods, nr_throttled, throttled_usec;	/* cpu controller only */
};

struct cgstat_memory {
	bool present;		/* memory.current exists (memory controller enabled) */
	long long current, peak, max;	/* bytes; peak needs 5.19 */
	long long oom, oom_kill;	/* memory.events */
};

struct cgstat_io {
	bool present;		/* io.stat exists (io controller enabled) */
	long long rbytes, wbytes, rios, wios;	/* summed over devices */
};

struct cgstat_pids {
	bool present;		/* pids.current exists (pids controller enabled) */
	long long current, max;
	long long events_max;	/* pids.events "max": forks refused at the limit */
};

struct cgstat {
	int populated, frozen;	/* cgroup.events: 1, 0, or -1 when unknown */
	struct cgstat_cpu cpu;
	struct cgstat_memory memory;
	struct cgstat_io io;
	struct cgstat_pids pids;
};

/* A cgroup named on the command line, resolved. */
struct cgstat_target {
	char path[PATH_MAX];	/* real path of the cgroup directory */
	char v2[PATH_MAX];	/* the cgroup2 mount it lies in */
	char name[256];		/* sandbox name when it is <v2>/sbx-bpf/NAME, else "" */
	bool by_name;		/* the argument was a NAME, not a path */
	bool is_root;		/* the root of the hierarchy (no cgroup.kill/freeze) */
	int level;		/* levels below the root (cgroup_level) */
	enum cgroup_layout layout;	/* set by cgstat_resolve, for messages */
};

/* --- parsers (no I/O) --- */

/* "key value" lines (cpu.stat, memory.events, …): 0, or -ENOENT if @key is absent. */
int cgstat_keyed(const char *text, const char *key, long long *val);
/* KEY of the flat-keyed FILE (memory.events, pids.events) of the cgroup at @path, or -1. */
long long cgstat_keyed_file(const char *path, const char *file, const char *key);
/* A single-value file ("123\n", "max\n" → CGSTAT_MAX): 0 or -EINVAL. */
int cgstat_value(const char *text, long long *val);
/* Fill the fields each file provides; absent keys become CGSTAT_UNSET. */
void cgstat_parse_cpu(const char *cpu_stat, struct cgstat_cpu *c);
void cgstat_parse_memory_events(const char *memory_events, struct cgstat_memory *m);
void cgstat_parse_pids_events(const char *pids_events, struct cgstat_pids *p);
/* io.stat: "MAJ:MIN rbytes=… wbytes=… rios=… wios=… …" per device, summed. 0 or -EINVAL. */
int cgstat_parse_io(const char *io_stat, struct cgstat_io *io);
/* cgroup.events: populated/frozen as 1, 0 or -1 when absent. */
void cgstat_parse_events(const char *cgroup_events, int *populated, int *frozen);
/* /proc/PID/cgroup: the v2 ("0::") path, e.g. "/user.slice/x". 0 or -ENOENT. */
int cgstat_parse_self_cgroup(const char *proc_cgroup, char *out, size_t sz);

/* --- resolving NAME | CGROUP --- */

/*
 * @arg without '/' is a sandbox NAME: <v2>/sbx-bpf/NAME. With one it is a
 * path, absolute or relative to @v2. The real path must be @v2 or beneath it.
 * -EINVAL bad name (empty, "." or ".."), -ENOENT nonexistent, -EXDEV outside
 * @v2, -ENOTDIR not a cgroup directory, -ENAMETOOLONG.
 */
int cgstat_resolve_in(const char *v2, const char *arg, struct cgstat_target *t);
/* The same against this host's cgroup2 mount; -ENOTSUP when there is none. */
int cgstat_resolve(const char *arg, struct cgstat_target *t);
/* Does @t contain the calling process (it is our cgroup or an ancestor)? */
bool cgstat_contains_self(const struct cgstat_target *t);

/* --- reading and acting --- */

/* Read every file of @path; missing files leave their section absent. 0 or -errno. */
int cgstat_read(const char *path, struct cgstat *st);
/* {"cgroup":…, "name":…|null, "populated":…, "frozen":…, "cpu":{…}|null, …} */
json_t *cgstat_to_json(const struct cgstat_target *t, const struct cgstat *st);

/*
 * Block until cgroup.events shows "@key @want" (poll(2) on the file, which
 * kernfs wakes on every change), at most @timeout_ms. 0, -ETIMEDOUT, or
 * -ENOENT when the cgroup went away (which counts as "populated 0" for
 * callers that wait for it to empty).
 */
int cgstat_wait_event(const char *path, const char *key, int want, int timeout_ms);

/* Processes in @path and every descendant (cgroup.procs), or -errno. */
int cgstat_count_procs(const char *path);

/* Write cgroup.freeze and wait for "frozen 1/0". -ENOTSUP before 5.2. */
int cgstat_freeze(const char *path, bool freeze, int timeout_ms);

#define CGSTAT_KILL_SIGNALS	(1u << 0)	/* skip cgroup.kill: signal pid by pid */

struct cgstat_kill_result {
	int procs;		/* processes found before the kill (-1: unknown) */
	bool used_cgroup_kill;	/* cgroup.kill (5.14+), else SIGKILL pid by pid */
	int rounds;		/* signal rounds in the fallback */
};

/*
 * SIGKILL everything in @path and its descendants and wait until it is empty.
 * cgroup.kill when the kernel has it; else freeze (so forks cannot race),
 * SIGKILL each listed pid, and repeat until "populated 0". 0, -ETIMEDOUT if
 * processes remain after @timeout_ms, or -errno.
 */
int cgstat_kill(const char *path, unsigned flags, int timeout_ms, struct cgstat_kill_result *r);

#endif
