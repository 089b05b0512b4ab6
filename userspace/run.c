// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * run.c — `sbx-bpf run`: a new cgroup, the policy in the kernel, the command
 * started inside the cgroup, violations streamed until it exits, then
 * everything removed again.
 *
 * Order matters for failing closed: rules are in the maps before the cgroup
 * is registered as a sandbox, and the cgroup is a sandbox before the first
 * instruction of the command runs in it (clone3 CLONE_INTO_CGROUP).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "cli.h"
#include "events.h"
#include "fsrules.h"
#include "loader.h"
#include "policy.h"
#include "util.h"

#define POLICY_ID 1	/* one policy per loaded program set, until programs are shared */

struct run_flag_rule {
	enum rule_kind kind;
	const char *pattern;
	const char *origin;
};

struct run_opts {
	const char *name;
	const char *events_path;
	const char *policy_file;
	const char *preset;
	bool audit;
	struct run_flag_rule *flag_rules;
	size_t nr_flag_rules;
	struct policy policy;
	char **argv;
};

static void run_usage(FILE *out)
{
	fprintf(out,
		"Usage: sbx-bpf run [OPTIONS] -- COMMAND [ARGS…]\n"
		"\n"
		"Run COMMAND in a new sandbox cgroup under a policy; every denial is printed\n"
		"on stderr as it happens. Without --policy/--preset the built-in\n"
		"'agent-default' preset applies (see docs/policy.md).\n"
		"\n"
		"  --policy FILE        policy file (JSON; sandbox-runtime settings files work)\n"
		"  --preset NAME        built-in preset: agent-default, training, restricted, standard\n"
		"  --name NAME          sandbox (cgroup) name; default run-PID\n"
		"  --deny-read PATH     add rules to the policy, same syntax as its entries\n"
		"  --allow-read PATH      (~, relative paths, DIR/**, **/NAME); the most\n"
		"  --allow-write PATH     specific rule wins\n"
		"  --deny-write PATH\n"
		"  --audit              deny nothing; report what would be denied\n"
		"  --events FILE        also write events as JSON lines to FILE ('-' = stdout)\n"
		"  -j, --json           JSON errors\n"
		"  -v, --verbose        libbpf messages\n"
		"\n"
		"Exit status: COMMAND's own; 128+N if it was killed by signal N;\n"
		"1 if the sandbox could not be set up; 2 for a bad command line or policy;\n"
		"127 if COMMAND could not be executed.\n");
}

static int add_flag_rule(struct run_opts *o, enum rule_kind kind, const char *origin)
{
	struct run_flag_rule *r = realloc(o->flag_rules, (o->nr_flag_rules + 1) * sizeof(*r));

	if (!r)
		return -ENOMEM;
	o->flag_rules = r;
	r[o->nr_flag_rules++] = (struct run_flag_rule){ kind, optarg, origin };
	return 0;
}

static int parse_run_opts(int argc, char **argv, struct run_opts *o)
{
	enum { OPT_DENY_READ = 256, OPT_ALLOW_READ, OPT_ALLOW_WRITE, OPT_DENY_WRITE, OPT_AUDIT,
	       OPT_EVENTS, OPT_NAME, OPT_POLICY, OPT_PRESET };
	static const struct option opts[] = {
		{ "name", required_argument, NULL, OPT_NAME },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "preset", required_argument, NULL, OPT_PRESET },
		{ "deny-read", required_argument, NULL, OPT_DENY_READ },
		{ "allow-read", required_argument, NULL, OPT_ALLOW_READ },
		{ "allow-write", required_argument, NULL, OPT_ALLOW_WRITE },
		{ "deny-write", required_argument, NULL, OPT_DENY_WRITE },
		{ "audit", no_argument, NULL, OPT_AUDIT },
		{ "events", required_argument, NULL, OPT_EVENTS },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c, err = 0;

	/* "+": options end at the command, even without "--". */
	while ((c = getopt_long(argc, argv, "+jvh", opts, NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		switch (c) {
		case OPT_NAME: o->name = optarg; break;
		case OPT_POLICY: o->policy_file = optarg; break;
		case OPT_PRESET: o->preset = optarg; break;
		case OPT_AUDIT: o->audit = true; break;
		case OPT_EVENTS: o->events_path = optarg; break;
		case OPT_DENY_READ: err = add_flag_rule(o, RULE_DENY_READ, "--deny-read"); break;
		case OPT_ALLOW_READ: err = add_flag_rule(o, RULE_ALLOW_READ, "--allow-read"); break;
		case OPT_ALLOW_WRITE: err = add_flag_rule(o, RULE_ALLOW_WRITE, "--allow-write"); break;
		case OPT_DENY_WRITE: err = add_flag_rule(o, RULE_DENY_WRITE, "--deny-write"); break;
		case 'h': run_usage(stdout); return -1;
		default:
			fprintf(stderr, "Try 'sbx-bpf run --help'.\n");
			return EXIT_USAGE;
		}
		if (err) {
			p_err("run: %s", strerror(-err));
			return 1;
		}
	}
	if (optind >= argc) {
		p_err("run: no command given (sbx-bpf run [OPTIONS] -- COMMAND)");
		return EXIT_USAGE;
	}
	if (o->policy_file && o->preset) {
		p_err("run: --policy and --preset exclude each other");
		return EXIT_USAGE;
	}
	if (o->name && (!o->name[0] || strchr(o->name, '/') || !strcmp(o->name, ".") ||
			!strcmp(o->name, ".."))) {
		p_err("run: invalid sandbox name '%s' (no '/', not empty)", o->name);
		return EXIT_USAGE;
	}
	o->argv = argv + optind;
	return 0;
}

/* The policy file or preset, the flag rules, the mandatory set. 0 or EXIT_USAGE. */
static int load_policy(struct run_opts *o)
{
	char home[PATH_MAX], cwd[PATH_MAX];
	struct policy_diag diag = {};
	struct policy_env env;
	int err;

	err = policy_env_default(&env, home, sizeof(home), cwd, sizeof(cwd));
	if (err) {
		policy_env_strerror(err, diag.error, sizeof(diag.error));
		p_err("run: %s", diag.error);
		return EXIT_USAGE;
	}
	if (o->policy_file)
		err = policy_load(&o->policy, o->policy_file, &env, &diag);
	else
		err = policy_load_preset(&o->policy, o->preset ? o->preset : "agent-default", &env, &diag);
	for (size_t i = 0; !err && i < o->nr_flag_rules; i++)
		err = policy_add_rule(&o->policy, o->flag_rules[i].kind, o->flag_rules[i].pattern,
				      o->flag_rules[i].origin, &env, &diag);
	for (size_t i = 0; i < diag.nr_warnings; i++)
		p_warn("%s", diag.warnings[i]);
	if (!err)
		err = policy_add_mandatory(&o->policy);
	if (err) {
		p_err("%s", diag.error[0] ? diag.error : strerror(-err));
		return EXIT_USAGE;
	}
	if (o->policy.mode == POLICY_AUDIT)
		o->audit = true;
	return 0;
}

/* Wait for the child while relaying signals and events. Returns its wait status. */
static int supervise(pid_t child, struct ring_buffer *rb, int sfd)
{
	struct pollfd fds[2] = {
		{ .fd = ring_buffer__epoll_fd(rb), .events = POLLIN },
		{ .fd = sfd, .events = POLLIN },
	};
	struct signalfd_siginfo si;
	int status;

	for (;;) {
		if (poll(fds, 2, 1000) < 0 && errno != EINTR)
			break;
		ring_buffer__consume(rb);
		if (!(fds[1].revents & POLLIN))
			continue;
		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD) {
			kill(child, (int)si.ssi_signo);	/* forward INT/TERM/HUP */
			continue;
		}
		if (waitpid(child, &status, WNOHANG) == child)
			return status;
	}
	waitpid(child, &status, 0);
	return status;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

int do_run(int argc, char **argv)
{
	struct run_opts o = {};
	struct sbx_cgroup cg = { .fd = -1, .root_fd = -1 };
	struct event_sink sink = { .human = stderr };
	struct sbx_loader *l = NULL;
	struct ring_buffer *rb = NULL;
	char name[64], cg_path[PATH_MAX];
	sigset_t mask, old;
	int sfd = -1, err, ret = 1, status;
	struct fs_compiled rules = {};
	bool registered = false, installed = false;
	__u64 lost = 0;
	pid_t child;

	err = parse_run_opts(argc, argv, &o);
	if (!err)
		err = load_policy(&o);
	if (err) {
		ret = err < 0 ? 0 : err;
		goto out;
	}
	snprintf(name, sizeof(name), "run-%d", (int)getpid());
	if (!o.name)
		o.name = name;
	sink.policy = &o.policy;
	sink.sandbox = o.name;
	if (o.events_path) {
		sink.json = strcmp(o.events_path, "-") ? fopen(o.events_path, "we") : stdout;
		if (!sink.json) {
			p_err("cannot open events file '%s': %s", o.events_path, strerror(errno));
			ret = EXIT_USAGE;
			goto out;
		}
	}

	l = loader__open_and_attach();
	if (!l) {
		p_err("cannot load the enforcement programs: %s (run 'sbx-bpf doctor')", strerror(errno));
		goto out;
	}
	err = cgroup_create(o.name, &cg);
	if (err) {
		p_err("cannot create the sandbox cgroup '%s': %s%s", o.name, strerror(-err),
		      err == -ENOTSUP ? " (cgroup v2 is not the unified hierarchy; run 'sbx-bpf doctor')" : "");
		goto out;
	}
	if (cg.root_fd >= 0 && loader__set_scope(l, cg.root_fd))
		p_warn("cannot limit the hooks to %s/..: every task pays a lookup per cgroup level",
		       SBX_CGROUP_ROOT_NAME);
	err = fs_compile(&o.policy, POLICY_ID, &rules);
	if (!err)
		err = fs_install(l, &rules);
	if (err) {
		p_err("cannot install the policy: %s", strerror(-err));
		goto out;
	}
	installed = true;
	err = loader__add_sandbox(l, cg.id, POLICY_ID, o.audit ? SBX_SANDBOX_AUDIT : 0,
				  rules.any_depth_mask);
	if (err) {
		p_err("cannot register the sandbox: %s", strerror(-err));
		goto out;
	}
	registered = true;
	rb = events_open(loader__events_fd(l), &sink);
	if (!rb) {
		p_err("cannot open the event ring buffer: %s", strerror(errno));
		goto out;
	}

	/* Signals arrive through signalfd; the child gets them unblocked. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		p_err("signalfd: %s", strerror(errno));
		goto out;
	}
	child = cgroup_spawn(&cg, o.argv);
	if (child < 0) {
		p_err("cannot execute '%s': %s", o.argv[0], strerror(-child));
		ret = 127;
		goto out;
	}
	status = supervise(child, rb, sfd);
	ret = exit_code(status);
out:
	/*
	 * Leftover descendants (daemons, double forks) die with the cgroup. Ones
	 * that survive (stuck in the kernel) lose their confinement when the
	 * programs go with this process: say so, loudly.
	 */
	snprintf(cg_path, sizeof(cg_path), "%s", cg.path);
	if (cgroup_destroy(&cg))
		p_err("processes survive in the sandbox cgroup %s and are no longer confined; "
		      "kill them with: echo 1 > %s/cgroup.kill", cg_path, cg_path);
	if (rb) {
		ring_buffer__consume(rb);
		ring_buffer__free(rb);
	}
	if (registered) {
		loader__remove_sandbox(l, cg.id);
		if (!loader__stat(l, SBX_STAT_EVENTS_LOST, &lost) && lost)
			p_warn("%llu events lost: the ring buffer was full (verdicts were applied)",
			       (unsigned long long)lost);
	}
	if (installed)
		fs_uninstall(l, &rules);
	fs_compiled_free(&rules);
	free(o.flag_rules);
	if (sink.malformed)
		p_warn("%llu malformed event records ignored", sink.malformed);
	if (sink.json && sink.json != stdout)
		fclose(sink.json);
	if (sfd >= 0)
		close(sfd);
	loader__destroy(l);
	policy_free(&o.policy);
	return ret;
}
