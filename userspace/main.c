// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * main.c — `sbx-bpf` command dispatch, bpftool style: global options, then
 * a command from the table, each command parsing its own options.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "doctor.h"
#include "loader.h"
#include "sbx_abi.h"
#include "util.h"
#include "version.h"

struct cli_opts cli;

struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
	const char *summary;
};

static int do_help(int argc, char **argv);
static int do_version(int argc, char **argv);

static const struct cmd cmds[] = {
	{ "run", do_run, "run a command inside a new sandbox" },
	{ "doctor", do_doctor, "check whether this host can enforce, and how to fix it" },
	{ "hooks", do_hooks, "which program fits each kernel hook, and what each protects" },
	{ "check", do_check, "validate a policy and show the rules it compiles to" },
	{ "stats", do_stats, "show a sandbox's cpu, memory, io and pids usage" },
	{ "freeze", do_freeze, "stop every process of a sandbox (cgroup.freeze)" },
	{ "thaw", do_thaw, "resume a frozen sandbox" },
	{ "kill", do_kill, "SIGKILL every process of a sandbox, now" },
	{ "daemon", do_daemon, "load and pin the programs, collect every event (host agent)" },
	{ "unload", do_unload, "remove the pinned programs" },
	{ "attach", do_attach, "put a cgroup under a policy (needs the daemon)" },
	{ "detach", do_detach, "take a cgroup's policy off" },
	{ "list", do_list, "list the cgroups under a policy" },
	{ "oci-hook", do_oci_hook, "OCI runtime hook: attach a container at createRuntime, detach at poststop" },
	{ "grant", do_grant, "allow a path or an address to a cgroup for a while" },
	{ "revoke", do_revoke, "take grants back now" },
	{ "grants", do_grants, "list a cgroup's grants" },
	{ "status", do_status, "pinned programs, map fill levels, drops, daemon health" },
	{ "events", do_events, "watch the daemon's events, live (--follow)" },
	{ "version", do_version, "print the version" },
	{ "help", do_help, "show this help" },
};

void p_err(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (cli.json)
		print_json(json_pack("{s:s}", "error", msg));
	else
		fprintf(stderr, "sbx-bpf: error: %s\n", msg);
	if (cli.syslog)
		syslog(LOG_ERR, "%s", msg);
}

void p_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sbx-bpf: warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void print_json(json_t *v)
{
	if (!v)
		return;
	json_dumpf(v, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	fflush(stdout);
	json_decref(v);
}

/*
 * libbpf talks only with -v: its load logs are for developers. With
 * SBX_TRACE_LIBBPF every message, debug ones too, starts a line with the
 * monotonic clock: under the benchmarks' icount, where each step of a load
 * goes (bench/startup.sh SBX_BENCH_STARTUP_LIBBPF).
 */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static int stamped = -1;

	(void)level;
	if (stamped < 0)
		stamped = getenv("SBX_TRACE_LIBBPF") != NULL;
	if (stamped) {
		fprintf(stderr, "\nlibbpf %llu ", clock_ns(CLOCK_MONOTONIC));
		return vfprintf(stderr, fmt, ap);
	}
	if (!cli.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: sbx-bpf [OPTIONS] COMMAND [ARGS…]\n"
		"\n"
		"Sandbox AI agents with BPF-LSM: per-cgroup file and network policy\n"
		"enforced in the kernel, with every violation reported.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(out, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(out,
		"\n"
		"Options (before or after the command):\n"
		"  -j, --json      machine-readable output (errors too)\n"
		"  -v, --verbose   show libbpf and verifier messages\n"
		"  -V, --version   print the version\n"
		"  -h, --help      help (COMMAND --help for a command)\n"
		"\n"
		"Exit codes: 0 success; 1 failure; 2 usage error or invalid input.\n");
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

static int do_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (cli.json)
		print_json(json_pack("{s:s, s:i, s:s}", "version", SBX_VERSION, "abi", SBX_ABI_VERSION,
				     "libbpf", libbpf_version_string()));
	else
		printf("sbx-bpf %s (libbpf %s)\n", SBX_VERSION, libbpf_version_string());
	return 0;
}

/* Options every command takes; returns 1 if handled, -1 on a bad option. */
int cli_common_opt(int c)
{
	switch (c) {
	case 'j': cli.json = true; return 1;
	case 'v': cli.verbose = true; return 1;
	}
	return 0;
}

static int by_insns(const void *a, const void *b)
{
	const struct loader_prog_stats *x = a, *y = b;

	if (x->insns_processed != y->insns_processed)
		return x->insns_processed < y->insns_processed ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * doctor --verifier-stats: what the verifier spends on each program this
 * host loads (bench/verifier.sh), most expensive first, and the total.
 */
static int verifier_stats(void)
{
	struct loader_prog_stats *st;
	unsigned long long total = 0, total_us = 0;
	json_t *progs;
	size_t n;
	int err;

	err = loader__verifier_stats(&st, &n);
	if (err) {
		p_err("cannot load the programs: %s (run 'sbx-bpf doctor'; -v shows the verifier's log)",
		      strerror(-err));
		return 1;
	}
	qsort(st, n, sizeof(*st), by_insns);
	for (size_t i = 0; i < n; i++) {
		total += st[i].insns_processed;
		total_us += st[i].verify_us;
	}
	if (cli.json) {
		progs = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(progs, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I}",
				"program", st[i].name, "section", st[i].section,
				"insns_processed", (json_int_t)st[i].insns_processed,
				"total_states", (json_int_t)st[i].total_states,
				"peak_states", (json_int_t)st[i].peak_states,
				"verify_us", (json_int_t)st[i].verify_us,
				"xlated_insns", (json_int_t)st[i].xlated_insns));
		print_json(json_pack("{s:o, s:I, s:I}", "programs", progs, "total_insns_processed",
				     (json_int_t)total, "total_verify_us", (json_int_t)total_us));
	} else {
		printf("%-30s %-30s %10s %8s %6s %10s %7s\n", "program", "section", "insns", "states", "peak",
		       "verify_us", "xlated");
		for (size_t i = 0; i < n; i++)
			printf("%-30s %-30s %10u %8u %6u %10u %7u\n", st[i].name, st[i].section,
			       st[i].insns_processed, st[i].total_states, st[i].peak_states, st[i].verify_us,
			       st[i].xlated_insns);
		printf("%-30s %-30s %10llu %8s %6s %10llu\n", "total", "", total, "", "", total_us);
		printf("\ninsns: instructions the verifier processed (its limit is 1,000,000 per program);\n"
		       "states: verifier states stored (peak: at once); xlated: program size after rewrites.\n");
	}
	free(st);
	return 0;
}

int do_doctor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "verifier-stats", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct doctor_report r;
	bool vstats = false;
	int c;

	while ((c = getopt_long(argc, argv, "jvh", opts, NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		if (c == 'S') {
			vstats = true;
			continue;
		}
		if (c == 'h') {
			printf("Usage: sbx-bpf doctor [--json]\n\n"
			       "Check whether this host can enforce sandboxes: kernel version, BTF,\n"
			       "active LSMs, an actual BPF-LSM program load, lockdown, bpffs, cgroup v2\n"
			       "and its controllers, capabilities. Each line is PASS, WARN or FAIL with\n"
			       "the fix. Exit status 0 only when enforcement can work, else 1.\n"
			       "\n"
			       "Debugging: 'doctor --verifier-stats [--json]' loads (never attaches) the\n"
			       "programs and shows what the verifier spent on each (bench/verifier.sh).\n");
			return 0;
		}
		fprintf(stderr, "Try 'sbx-bpf doctor --help'.\n");
		return EXIT_USAGE;
	}
	if (optind < argc) {
		p_err("doctor takes no arguments (got '%s')", argv[optind]);
		return EXIT_USAGE;
	}
	if (vstats)
		return verifier_stats();
	doctor_run(&r);
	if (cli.json)
		print_json(doctor_to_json(&r));
	else
		doctor_print(&r, stdout);
	return doctor_ok(&r) ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	/* "+": stop at the command; its own options are its business. */
	while ((c = getopt_long(argc, argv, "+jvVh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': cli.json = true; break;
		case 'v': cli.verbose = true; break;
		case 'V': return do_version(0, NULL);
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "Try 'sbx-bpf --help'.\n");
			return EXIT_USAGE;
		}
	}
	libbpf_set_print(libbpf_print);
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (!strcmp(argv[optind], cmds[i].name)) {
			argv += optind;
			argc -= optind;
			optind = 0;	/* reset getopt for the command */
			return cmds[i].func(argc, argv);
		}
	}
	p_err("unknown command '%s' (try 'sbx-bpf --help')", argv[optind]);
	return EXIT_USAGE;
}
