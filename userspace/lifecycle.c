// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lifecycle.c — `sbx-bpf kill|freeze|thaw|stats NAME|CGROUP`: act on a live
 * sandbox from outside it. None of them creates or removes a cgroup: the
 * `run` that made the sandbox removes it when its command is gone.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgstat.h"
#include "cli.h"
#include "util.h"

#define DEFAULT_TIMEOUT_S 10

struct lc_cmd {
	const char *name;
	const char *summary;	/* the paragraph of COMMAND --help */
	bool acts;		/* kill/freeze/thaw: --timeout, refuse the root and our own cgroup */
};

static const struct lc_cmd lc_kill = { "kill",
	"SIGKILL every process in the sandbox and its child cgroups, through\n"
	"cgroup.kill (Linux 5.14+; before that: freeze, then SIGKILL pid by pid\n"
	"until it is empty), and wait until cgroup.events says \"populated 0\".\n"
	"The cgroup itself stays: the `sbx-bpf run` that owns it removes it.\n", true };
static const struct lc_cmd lc_freeze = { "freeze",
	"Stop every process in the sandbox (cgroup.freeze) and wait until\n"
	"cgroup.events says \"frozen 1\". `thaw` resumes them; `kill` still works.\n", true };
static const struct lc_cmd lc_thaw = { "thaw",
	"Resume a frozen sandbox (cgroup.freeze 0) and wait until cgroup.events\n"
	"says \"frozen 0\" (it cannot while an ancestor cgroup is frozen).\n", true };
static const struct lc_cmd lc_stats = { "stats",
	"Show the sandbox's usage: cpu (cpu.stat), memory (memory.current, .peak,\n"
	".max, .events), io (io.stat, summed over devices), pids (pids.current,\n"
	".max, .events) and its state (cgroup.events). A controller that is not\n"
	"enabled shows \"-\" (null in JSON). Fields: docs/commands.md.\n", false };

static void lc_usage(const struct lc_cmd *c, FILE *out)
{
	fprintf(out, "Usage: sbx-bpf %s [--json]%s NAME|CGROUP\n\n%s\n", c->name,
		c->acts ? " [--timeout SECONDS]" : "", c->summary);
	fprintf(out,
		"  NAME     a sandbox, as given to `run --name`: <cgroup2>/sbx-bpf/NAME\n"
		"  CGROUP   a cgroup path with a '/': absolute (/sys/fs/cgroup/a/b) or\n"
		"           relative to the cgroup2 mount (a/b, or a/ for a top-level one)\n");
	if (c->acts)
		fprintf(out, "  -t, --timeout SECONDS    how long to wait (default %d)\n", DEFAULT_TIMEOUT_S);
	fprintf(out,
		"  -j, --json               the result (or {\"error\": …}) as one JSON object\n"
		"\n"
		"Exit status: 0 done; 1 no such sandbox or cgroup, or not done in time;\n"
		"2 usage error.\n");
}

/* Options and the one argument. 0, or the exit code to return now (-1: help shown). */
static int lc_parse(const struct lc_cmd *c, int argc, char **argv, const char **arg, int *timeout_ms)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char *end;
	double s;
	int o;

	*timeout_ms = DEFAULT_TIMEOUT_S * 1000;
	while ((o = getopt_long(argc, argv, c->acts ? "t:jvh" : "jvh", opts, NULL)) != -1) {
		if (cli_common_opt(o))
			continue;
		if (o == 'h') {
			lc_usage(c, stdout);
			return -1;
		}
		if (o == 't' && c->acts) {
			s = strtod(optarg, &end);
			if (end == optarg || *end || !(s > 0 && s <= 3600)) {
				p_err("%s: --timeout '%s': give seconds, more than 0 and at most 3600", c->name, optarg);
				return EXIT_USAGE;
			}
			*timeout_ms = (int)(s * 1000 + 0.5);
			continue;
		}
		fprintf(stderr, "Try 'sbx-bpf %s --help'.\n", c->name);
		return EXIT_USAGE;
	}
	if (argc - optind != 1) {
		p_err("%s takes one sandbox NAME or CGROUP path (try 'sbx-bpf %s --help')", c->name, c->name);
		return EXIT_USAGE;
	}
	*arg = argv[optind];
	return 0;
}

/* Resolve @arg; 0, or the exit code after saying why not. */
static int lc_resolve(const struct lc_cmd *c, const char *arg, struct cgstat_target *t)
{
	int err = cgstat_resolve(arg, t);

	switch (err) {
	case 0:
		break;
	case -EINVAL:
		p_err("%s: invalid sandbox name '%s' (no '/', not empty, not '.' or '..')", c->name, arg);
		return EXIT_USAGE;
	case -ENAMETOOLONG:
		p_err("%s: '%s' is too long", c->name, arg);
		return EXIT_USAGE;
	case -EXDEV:
		p_err("%s: '%s' is not in the cgroup v2 hierarchy (%s)", c->name, arg, t->v2);
		return EXIT_USAGE;
	case -ENOTDIR:
		p_err("%s: '%s' is not a cgroup directory", c->name, arg);
		return EXIT_USAGE;
	case -ENOTSUP:
		p_err("%s: no cgroup v2 file system is mounted (see 'sbx-bpf doctor')", c->name);
		return 1;
	case -ENOENT:
		if (!t->by_name) {
			p_err("%s: no cgroup '%s'", c->name, arg);
			return 1;
		}
		p_err("%s: no sandbox named '%s' (%s/%s/%s does not exist)%s", c->name, arg, t->v2,
		      SBX_CGROUP_ROOT_NAME, arg, t->layout == CGROUP_UNIFIED ? "" :
		      "; sandboxes need cgroup v2 as the only hierarchy, and this host's layout is "
		      "not, so `run` cannot create them here (see 'sbx-bpf doctor')");
		return 1;
	default:
		p_err("%s: cannot open '%s': %s", c->name, arg, strerror(-err));
		return 1;
	}
	if (c->acts && t->is_root) {
		p_err("%s: '%s' is the root of the cgroup hierarchy: refusing to %s the whole machine",
		      c->name, arg, c->name);
		return EXIT_USAGE;
	}
	if (c->acts && cgstat_contains_self(t)) {
		p_err("%s: '%s' contains this sbx-bpf process itself: refusing", c->name, arg);
		return EXIT_USAGE;
	}
	return 0;
}

/* "sandbox 'x' (/sys/fs/cgroup/sbx-bpf/x)" or "cgroup /sys/fs/cgroup/a/b". */
static const char *describe(const struct cgstat_target *t, char *buf, size_t sz)
{
	if (t->name[0])
		snprintf(buf, sz, "sandbox '%s' (%s)", t->name, t->path);
	else
		snprintf(buf, sz, "cgroup %s", t->path);
	return buf;
}

static json_t *jname(const struct cgstat_target *t)
{
	return t->name[0] ? json_string(t->name) : json_null();
}

int do_kill(int argc, char **argv)
{
	char what[PATH_MAX + 300];
	struct cgstat_kill_result r;
	struct cgstat_target t;
	const char *arg;
	int ms, rc, err;
	bool exists;

	rc = lc_parse(&lc_kill, argc, argv, &arg, &ms);
	if (rc)
		return rc < 0 ? 0 : rc;
	rc = lc_resolve(&lc_kill, arg, &t);
	if (rc)
		return rc;
	/* SBX_KILL_SIGNALS=1 forces the pre-5.14 path, so tests can reach it. */
	err = cgstat_kill(t.path, getenv("SBX_KILL_SIGNALS") ? CGSTAT_KILL_SIGNALS : 0, ms, &r);
	describe(&t, what, sizeof(what));
	if (err == -ETIMEDOUT) {
		p_err("kill: %d process(es) still in %s after %.1f s (in uninterruptible sleep?)",
		      cgstat_count_procs(t.path), what, ms / 1000.0);
		return 1;
	}
	if (err) {
		p_err("kill: %s: %s", what, strerror(-err));
		return 1;
	}
	exists = access(t.path, F_OK) == 0;
	if (cli.json) {
		print_json(json_pack("{s:s, s:o, s:o, s:s, s:b, s:b}", "cgroup", t.path, "name", jname(&t),
				     "killed", r.procs < 0 ? json_null() : json_integer(r.procs),
				     "method", r.used_cgroup_kill ? "cgroup.kill" : "signals",
				     "populated", 0, "exists", exists));
		return 0;
	}
	printf("killed %d process%s in %s; it is empty\n", r.procs < 0 ? 0 : r.procs,
	       r.procs == 1 ? "" : "es", what);
	if (exists)
		printf("the cgroup stays until %s removes it\n",
		       t.name[0] ? "the `sbx-bpf run` that owns it" : "its owner");
	return 0;
}

static int do_freeze_thaw(const struct lc_cmd *c, bool freeze, int argc, char **argv)
{
	char what[PATH_MAX + 300];
	struct cgstat_target t;
	const char *arg;
	int ms, rc, err, n;

	rc = lc_parse(c, argc, argv, &arg, &ms);
	if (rc)
		return rc < 0 ? 0 : rc;
	rc = lc_resolve(c, arg, &t);
	if (rc)
		return rc;
	describe(&t, what, sizeof(what));
	err = cgstat_freeze(t.path, freeze, ms);
	if (err == -ETIMEDOUT) {
		p_err("%s: %s is still %s after %.1f s%s", c->name, what, freeze ? "not frozen" : "frozen",
		      ms / 1000.0, freeze ? "" : " (is an ancestor cgroup frozen?)");
		return 1;
	}
	if (err == -ENOTSUP) {
		p_err("%s: this kernel has no cgroup.freeze (Linux 5.2+)", c->name);
		return 1;
	}
	if (err) {
		p_err("%s: %s: %s", c->name, what, strerror(-err));
		return 1;
	}
	n = cgstat_count_procs(t.path);
	if (cli.json)
		print_json(json_pack("{s:s, s:o, s:b, s:o}", "cgroup", t.path, "name", jname(&t),
				     "frozen", freeze, "procs", n < 0 ? json_null() : json_integer(n)));
	else
		printf("%s %s: %d process%s %s\n", freeze ? "froze" : "thawed", what, n < 0 ? 0 : n,
		       n == 1 ? "" : "es", freeze ? "stopped" : "running");
	return 0;
}

int do_freeze(int argc, char **argv)
{
	return do_freeze_thaw(&lc_freeze, true, argc, argv);
}

int do_thaw(int argc, char **argv)
{
	return do_freeze_thaw(&lc_thaw, false, argc, argv);
}

/* --- stats, human ---------------------------------------------------------- */

static const char *num(long long v, char *buf, size_t sz)
{
	if (v == CGSTAT_MAX)
		return "max";
	if (v < 0)
		return "-";
	snprintf(buf, sz, "%lld", v);
	return buf;
}

static const char *bytes(long long v, char *buf, size_t sz)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	size_t u = 0;

	if (v < 0)
		return num(v, buf, sz);
	while (d >= 1024 && u + 1 < ARRAY_SIZE(unit)) {
		d /= 1024;
		u++;
	}
	snprintf(buf, sz, u ? "%.1f %s" : "%.0f %s", d, unit[u]);
	return buf;
}

static const char *secs(long long usec, char *buf, size_t sz)
{
	if (usec < 0)
		return "-";
	snprintf(buf, sz, "%.3f s", usec / 1e6);
	return buf;
}

static const char *tri(int v, const char *yes, const char *no)
{
	return v < 0 ? "-" : v ? yes : no;
}

static void print_stats(const struct cgstat_target *t, const struct cgstat *st)
{
	const struct cgstat_cpu *c = &st->cpu;
	const struct cgstat_memory *m = &st->memory;
	const struct cgstat_io *io = &st->io;
	const struct cgstat_pids *p = &st->pids;
	char a[32], b[32], d[32], e[32], f[32], g[32];

	printf("%-8s %s\n", t->name[0] ? "sandbox" : "cgroup", t->name[0] ? t->name : t->path);
	if (t->name[0])
		printf("%-8s %s\n", "cgroup", t->path);
	printf("%-8s %s, %s\n", "state", tri(st->populated, "populated", "empty"),
	       tri(st->frozen, "frozen", "not frozen"));
	if (c->present)
		printf("%-8s usage %s  user %s  system %s  throttled %s of %s periods, %s\n", "cpu",
		       secs(c->usage_usec, a, sizeof(a)), secs(c->user_usec, b, sizeof(b)),
		       secs(c->system_usec, d, sizeof(d)), num(c->nr_throttled, e, sizeof(e)),
		       num(c->nr_periods, f, sizeof(f)), secs(c->throttled_usec, g, sizeof(g)));
	else
		printf("%-8s -\n", "cpu");
	if (m->present)
		printf("%-8s current %s  peak %s  max %s  oom %s  oom_kill %s\n", "memory",
		       bytes(m->current, a, sizeof(a)), bytes(m->peak, b, sizeof(b)),
		       bytes(m->max, d, sizeof(d)), num(m->oom, e, sizeof(e)), num(m->oom_kill, f, sizeof(f)));
	else
		printf("%-8s -\n", "memory");
	if (io->present)
		printf("%-8s read %s in %lld ops  write %s in %lld ops\n", "io", bytes(io->rbytes, a, sizeof(a)),
		       io->rios, bytes(io->wbytes, b, sizeof(b)), io->wios);
	else
		printf("%-8s -\n", "io");
	if (p->present)
		printf("%-8s current %s  max %s  forks refused at max %s\n", "pids",
		       num(p->current, a, sizeof(a)), num(p->max, b, sizeof(b)), num(p->events_max, d, sizeof(d)));
	else
		printf("%-8s -\n", "pids");
}

int do_stats(int argc, char **argv)
{
	struct cgstat_target t;
	struct cgstat st;
	const char *arg;
	int ms, rc, err;

	rc = lc_parse(&lc_stats, argc, argv, &arg, &ms);
	if (rc)
		return rc < 0 ? 0 : rc;
	rc = lc_resolve(&lc_stats, arg, &t);
	if (rc)
		return rc;
	err = cgstat_read(t.path, &st);
	if (err) {
		p_err("stats: %s: %s", t.path, strerror(-err));
		return 1;
	}
	if (cli.json)
		print_json(cgstat_to_json(&t, &st));
	else
		print_stats(&t, &st);
	return 0;
}
