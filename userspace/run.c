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
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "cgstat.h"
#include "cli.h"
#include "dns.h"
#include "events.h"
#include "evsock.h"
#include "fdscan.h"
#include "sbxstate.h"
#include "fsrules.h"
#include "netrules.h"
#include "sbx_limits.h"
#include "hooks.h"
#include "loader.h"
#include "policy.h"
#include "util.h"

/*
 * The policy id of a sandbox in programs this run loaded itself (it is
 * their only one). With the daemon's pinned programs, the id comes from
 * the shared counter (loader__new_policy_id) and the rules are compiled
 * again under it.
 */
#define POLICY_ID 1

/* How a user accepts running without a protection, for run's refusal. */
#define ACCEPT_HOW	"--accept-missing"

/* A rule from a flag, added to the policy once it is loaded, in command-line order. */
struct run_flag_rule {
	bool net;			/* a network entry (@what), else a file rule (@kind) */
	enum rule_kind kind;
	enum policy_net_flag what;
	const char *value;		/* NULL for the boolean network flags */
	const char *origin;		/* the flag: "--deny-read", "--allow-net" */
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
	const char **accept;		/* --accept-missing values, added to the policy's list */
	size_t nr_accept;
	struct sbx_limits flag_limits;	/* limits from flags: they win over the policy's */
	struct sbx_limits limits;	/* what applies */
	struct net_compiled net;	/* the network part, compiled */
	char **argv;
};

/* The resolver of a sandbox with domain rules, and what its callbacks need. */
struct run_dns {
	struct dns_resolver *r;
	struct sbx_loader *l;
	const struct policy *policy;
	struct event_sink *sink;
	__u16 port4, port6;		/* where it listens: the sandbox entry carries them */
	bool pinned;			/* the daemon's programs: the steering is pinned too */
	bool steer_pinned;		/* …and this run pinned it: it unpins it */
	const char *cg_path;		/* the sandbox's cgroup */
	bool ids_listed;		/* above and self are filled (dns_via_cb) */
	struct cgroup_ids above;	/* the cgroups above the sandbox's: where its names go out */
	struct cgroup_ids self;		/* this process's cgroup and those above it */
};

/*
 * This sandbox's events when the daemon's pinned programs enforce it: the
 * daemon reads the ring buffer, and sends them on over its socket.
 */
struct run_feed {
	int fd;				/* -1: no daemon to ask */
	size_t len;
	char buf[2 * SBX_PATH_MAX + 4096];
};

/* Exit codes for what happened to the tree as a whole (documented in --help). */
#define EXIT_PIDS_MAX	122	/* the tree hit pids.max and the command failed */
#define EXIT_OOM	123	/* a process of the tree was killed for memory.max */
#define EXIT_TIMEOUT	124	/* --timeout expired: the tree was killed (as timeout(1)) */

/* The limit flags (--cpu, --memory, …) are limits_flag_name(0..); room for them in the option table. */
#define MAX_LIMIT_FLAGS	32
/* The network flags (--allow-net, …) are policy_net_flag_name(0..): OPT_NET + their enum. */
#define MAX_NET_FLAGS	16

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
		"  --accept-missing HOOK[,HOOK]  run even if this kernel does not load the\n"
		"                       programs of these hooks (the policy's \"acceptMissing\");\n"
		"                       without it, a missing protection refuses the start\n"
		"\n"
		"Network (each flag adds to the policy's network section; repeat the ones\n"
		"with a value for more entries; syntax as in docs/policy.md):\n"
		"  --allow-domain NAME  allowedDomains: example.com, *.example.com[:PORT],\n"
		"                       localhost, 10.1.2.3, [::1]\n"
		"  --deny-domain NAME   deniedDomains (also '*': every name)\n"
		"  --allow-net CIDR[:PORTS]  allow: 10.0.0.0/8:443, [2001:db8::/32]:8000-8999\n"
		"  --deny-net CIDR[:PORTS]   deny: never reachable, whatever allows it\n"
		"  --allow-unix PATH    allowUnixSockets: Unix sockets at or beneath PATH\n"
		"  --allow-loopback     allowLoopback: 127.0.0.0/8, ::1, 0.0.0.0, ::\n"
		"  --allow-local-binding     allowLocalBinding: bind(2) to a port, listen(2)\n"
		"  --allow-all-unix-sockets  allowAllUnixSockets\n"
		"  --allow-raw-sockets  allowRawSockets: raw and packet sockets\n"
		"\n"
		"Limits (they win over the policy's \"limits\"; see docs/policy.md):\n"
		"  --cpu 150%%          CPU time, percent of one CPU (cpu.max)\n"
		"  --cpu-weight N       1..10000 (cpu.weight)\n"
		"  --memory 2G          memory.max (K, M, G, T: base 1024; 'max')\n"
		"  --memory-high 1G     memory.high;  --swap-max 0  memory.swap.max\n"
		"  --io-read-bps DEV=5M, --io-write-bps DEV=5M, --io-read-iops DEV=N,\n"
		"  --io-write-iops DEV=N  io.max for the block device DEV or the one a file\n"
		"                       is on (K, M, G, T: base 1000)\n"
		"  --pids 256           pids.max\n"
		"  --timeout 30m        wall clock (ms, s, m, h, d; '1h30m'); then the tree is killed\n"
		"  An out-of-memory kill takes the whole tree (memory.oom.group=1).\n"
		"  --events FILE        also write events as JSON lines to FILE ('-' = stdout)\n"
		"  -j, --json           JSON errors\n"
		"  -v, --verbose        libbpf messages\n"
		"\n"
		"Exit status: COMMAND's own; 128+N if it was killed by signal N;\n"
		"1 if the sandbox could not be set up; 2 for a bad command line, policy or limit;\n"
		"127 if COMMAND could not be executed; and, overriding COMMAND's status:\n"
		"124 the timeout expired and the tree was killed; 123 the tree was killed\n"
		"for exceeding memory.max; 122 the tree hit pids.max and COMMAND failed.\n");
}

static int push_flag_rule(struct run_opts *o, struct run_flag_rule rule)
{
	struct run_flag_rule *r = realloc(o->flag_rules, (o->nr_flag_rules + 1) * sizeof(*r));

	if (!r)
		return -ENOMEM;
	o->flag_rules = r;
	r[o->nr_flag_rules++] = rule;
	return 0;
}

static int add_flag_rule(struct run_opts *o, enum rule_kind kind, const char *origin)
{
	return push_flag_rule(o, (struct run_flag_rule){ .kind = kind, .value = optarg,
							 .origin = origin });
}

static int add_net_flag(struct run_opts *o, enum policy_net_flag what)
{
	return push_flag_rule(o, (struct run_flag_rule){ .net = true, .what = what,
							 .value = policy_net_flag_has_value(what) ? optarg : NULL,
							 .origin = policy_net_flag_name(what) });
}

static int push_accept(struct run_opts *o, const char *v)
{
	const char **a = realloc(o->accept, (o->nr_accept + 1) * sizeof(*a));

	if (!a)
		return -ENOMEM;
	o->accept = a;
	a[o->nr_accept++] = v;
	return 0;
}

/* @fixed, then one option per limit flag (OPT_LIMIT + i) and per network flag (OPT_NET + i). */
static const struct option *run_options(const struct option *fixed, int opt_limit, int opt_net)
{
	static struct option all[64];
	size_t n = 0;

	if (all[0].name)
		return all;
	for (; fixed[n].name; n++)
		all[n] = fixed[n];
	for (size_t i = 0; limits_flag_name(i) && i < MAX_LIMIT_FLAGS; i++, n++)
		all[n] = (struct option){ limits_flag_name(i), required_argument, NULL,
					  opt_limit + (int)i };
	for (int i = 0; policy_net_flag_name(i) && i < MAX_NET_FLAGS; i++, n++)
		all[n] = (struct option){ policy_net_flag_name(i) + 2,	/* without "--" */
					  policy_net_flag_has_value(i) ? required_argument : no_argument,
					  NULL, opt_net + i };
	return all;
}

static int parse_run_opts(int argc, char **argv, struct run_opts *o)
{
	enum { OPT_DENY_READ = 256, OPT_ALLOW_READ, OPT_ALLOW_WRITE, OPT_DENY_WRITE, OPT_AUDIT,
	       OPT_EVENTS, OPT_NAME, OPT_POLICY, OPT_PRESET, OPT_ACCEPT, OPT_NET = 384, OPT_LIMIT = 512 };
	static const struct option opts[] = {
		{ "name", required_argument, NULL, OPT_NAME },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "preset", required_argument, NULL, OPT_PRESET },
		{ "deny-read", required_argument, NULL, OPT_DENY_READ },
		{ "allow-read", required_argument, NULL, OPT_ALLOW_READ },
		{ "allow-write", required_argument, NULL, OPT_ALLOW_WRITE },
		{ "deny-write", required_argument, NULL, OPT_DENY_WRITE },
		{ "audit", no_argument, NULL, OPT_AUDIT },
		{ "accept-missing", required_argument, NULL, OPT_ACCEPT },
		{ "events", required_argument, NULL, OPT_EVENTS },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const struct option *all = run_options(opts, OPT_LIMIT, OPT_NET);
	int c, err = 0;
	char msg[512];

	/* "+": options end at the command, even without "--". */
	limits_init(&o->flag_limits);
	while ((c = getopt_long(argc, argv, "+jvh", all, NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		if (c >= OPT_LIMIT && c < OPT_LIMIT + MAX_LIMIT_FLAGS) {
			if (limits_set(&o->flag_limits, limits_flag_name((size_t)(c - OPT_LIMIT)), optarg,
				       msg, sizeof(msg))) {
				p_err("run: %s", msg);
				return EXIT_USAGE;
			}
			continue;
		}
		switch (c) {
		case OPT_NAME: o->name = optarg; break;
		case OPT_POLICY: o->policy_file = optarg; break;
		case OPT_PRESET: o->preset = optarg; break;
		case OPT_AUDIT: o->audit = true; break;
		case OPT_ACCEPT: err = push_accept(o, optarg); break;
		case OPT_EVENTS: o->events_path = optarg; break;
		case OPT_DENY_READ: err = add_flag_rule(o, RULE_DENY_READ, "--deny-read"); break;
		case OPT_ALLOW_READ: err = add_flag_rule(o, RULE_ALLOW_READ, "--allow-read"); break;
		case OPT_ALLOW_WRITE: err = add_flag_rule(o, RULE_ALLOW_WRITE, "--allow-write"); break;
		case OPT_DENY_WRITE: err = add_flag_rule(o, RULE_DENY_WRITE, "--deny-write"); break;
		case 'h': run_usage(stdout); return -1;
		default:
			if (c >= OPT_NET && c < OPT_NET + MAX_NET_FLAGS) {
				err = add_net_flag(o, (enum policy_net_flag)(c - OPT_NET));
				break;
			}
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

static int add_to_policy(struct policy *p, const struct run_flag_rule *r,
			 const struct policy_env *env, struct policy_diag *diag)
{
	if (r->net)
		return policy_add_net(p, r->what, r->value, r->origin, env, diag);
	return policy_add_rule(p, r->kind, r->value, r->origin, env, diag);
}

/* The hooks of --accept-missing (comma-separated, repeatable) into the policy's list. 0 or -1 after saying why. */
static int add_accepted(struct run_opts *o)
{
	char bad[64];

	for (size_t i = 0; i < o->nr_accept; i++) {
		int err = policy_accept_missing_list(&o->policy, o->accept[i], bad, sizeof(bad));

		if (err) {
			p_err("run: --accept-missing: %s", err == -ENOENT ?
			      "not a hook of sbx-bpf's programs (see 'sbx-bpf hooks')" : strerror(-err));
			if (err == -ENOENT && !cli.json)
				fprintf(stderr, "  (got '%s')\n", bad);
			return -1;
		}
	}
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
		err = add_to_policy(&o->policy, &o->flag_rules[i], &env, &diag);
	for (size_t i = 0; i < diag.nr_warnings; i++)
		p_warn("%s", diag.warnings[i]);
	if (!err)
		err = policy_add_mandatory(&o->policy);
	if (err) {
		p_err("%s", diag.error[0] ? diag.error : strerror(-err));
		return EXIT_USAGE;
	}
	if (add_accepted(o))
		return EXIT_USAGE;
	if (o->policy.mode == POLICY_AUDIT)
		o->audit = true;
	err = net_compile(&o->policy, POLICY_ID, &o->net, diag.error, sizeof(diag.error));
	if (err) {
		p_err("%s", diag.error[0] ? diag.error : strerror(-err));
		return EXIT_USAGE;
	}
	o->limits = o->policy.limits;
	err = limits_merge(&o->limits, &o->flag_limits);
	if (err) {
		p_err("run: more than %d devices with io limits", LIMITS_IO_MAX);
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * The controllers the limits need must exist before anything is created:
 * a limit that cannot be enforced is an error, never silently dropped.
 * memory.oom.group is a default, not a limit asked for: it is only dropped.
 */
static int check_controllers(struct run_opts *o, unsigned *ctrl)
{
	unsigned need = limits_controllers(&o->limits), have = 0;
	int err = cgroup_available_controllers(&have);

	if (err == -ENOTSUP) {
		p_err("run: cgroup v2 is not the unified hierarchy here; boot with "
		      "systemd.unified_cgroup_hierarchy=1 (run 'sbx-bpf doctor')");
		return 1;	/* the host cannot sandbox: not a usage error */
	}
	if (err) {
		p_err("run: cannot read the available cgroup controllers: %s", strerror(-err));
		return 1;
	}
	if (o->limits.oom_group && !(have & CGROUP_CTRL_MEMORY) &&
	    o->limits.memory_max == LIMIT_UNSET && o->limits.memory_high == LIMIT_UNSET &&
	    o->limits.swap_max == LIMIT_UNSET) {
		o->limits.oom_group = false;
		need &= ~(unsigned)CGROUP_CTRL_MEMORY;
	}
	for (unsigned i = 0; i < CGROUP_CTRL__COUNT; i++) {
		if ((need & (1u << i)) && !(have & (1u << i))) {
			p_err("run: the %s controller is not available in this cgroup hierarchy, so its "
			      "limits cannot be enforced", cgroup_controller_name(i));
			return EXIT_USAGE;
		}
	}
	*ctrl = need;
	return 0;
}

/* Write every limit into the new cgroup; the kernel may still refuse one. */
static int apply_limits(const struct run_opts *o, const struct sbx_cgroup *cg)
{
	struct limit_write w[LIMITS_IO_MAX + 16];
	int n = limits_writes(&o->limits, w, sizeof(w) / sizeof(w[0]));

	if (n < 0) {
		p_err("run: too many limits: %s", strerror(-n));
		return EXIT_USAGE;
	}
	for (int i = 0; i < n; i++) {
		int err = cgroup_write(cg, w[i].file, w[i].value);

		if (err) {
			p_err("run: the kernel refused %s = '%s': %s", w[i].file, w[i].value,
			      strerror(-err));
			return err == -EINVAL || err == -ERANGE ? EXIT_USAGE : 1;
		}
	}
	return 0;
}

/* What the cgroup reports about the tree: counters seen, timer, results. */
/*
 * What the cgroup reports about the tree: counters seen, timer, results.
 * The event files are polled (POLLPRI: the kernel's "changed since you last
 * read it") rather than watched with inotify, whose instance costs an
 * fsnotify grace period to close on 6.1 and 6.12: most of `run`'s start-up
 * and exit there (bench/RESULTS.md).
 */
enum { W_MEMORY, W_PIDS, W_CGROUP, W_FILES };

struct tree_watch {
	int efd[W_FILES];	/* memory.events, pids.events, cgroup.events; -1: absent (no controller) */
	int tfd;		/* timerfd for --timeout, or -1 */
	long long oom_kill, pids_max, frozen;
	bool timed_out, oom, pids_hit;
};

/* KEY of the event file behind @fd, read again from its start (which also clears POLLPRI). */
static long long keyed_fd(int fd, const char *key)
{
	char buf[1024];
	long long v;
	ssize_t n;

	if (fd < 0 || (n = pread(fd, buf, sizeof(buf) - 1, 0)) < 0)
		return -1;
	buf[n] = '\0';
	return cgstat_keyed(buf, key, &v) ? -1 : v;
}

static void watch_open(struct tree_watch *tw, const struct sbx_cgroup *cg, long long timeout_ms)
{
	static const char *const files[W_FILES] = { "memory.events", "pids.events", "cgroup.events" };
	char p[PATH_MAX + 32];

	*tw = (struct tree_watch){ .tfd = -1 };
	for (size_t i = 0; i < W_FILES; i++) {
		snprintf(p, sizeof(p), "%s/%s", cg->path, files[i]);
		tw->efd[i] = open(p, O_RDONLY | O_CLOEXEC);
	}
	tw->oom_kill = keyed_fd(tw->efd[W_MEMORY], "oom_kill");
	tw->pids_max = keyed_fd(tw->efd[W_PIDS], "max");
	tw->frozen = keyed_fd(tw->efd[W_CGROUP], "frozen");
	if (timeout_ms > 0) {
		struct itimerspec its = { .it_value = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000 } };

		tw->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (tw->tfd >= 0)
			timerfd_settime(tw->tfd, 0, &its, NULL);
	}
}

static void watch_close(struct tree_watch *tw)
{
	for (size_t i = 0; i < W_FILES; i++)
		if (tw->efd[i] >= 0)
			close(tw->efd[i]);
	if (tw->tfd >= 0)
		close(tw->tfd);
}

/* Compare the counters with what was seen last; report what grew. */
static void watch_check(struct tree_watch *tw, struct event_sink *sink)
{
	char detail[128];
	long long v;

	v = keyed_fd(tw->efd[W_MEMORY], "oom_kill");
	if (v > tw->oom_kill && tw->oom_kill >= 0) {
		snprintf(detail, sizeof(detail), "%lld process(es) killed for exceeding memory.max",
			 v - tw->oom_kill);
		events_lifecycle(sink, "oom_kill", detail);
		tw->oom = true;
	}
	tw->oom_kill = v;
	v = keyed_fd(tw->efd[W_PIDS], "max");
	if (v > tw->pids_max && tw->pids_max >= 0) {
		snprintf(detail, sizeof(detail), "%lld fork(s) refused at pids.max", v - tw->pids_max);
		events_lifecycle(sink, "pids_max", detail);
		tw->pids_hit = true;
	}
	tw->pids_max = v;
	v = keyed_fd(tw->efd[W_CGROUP], "frozen");
	if (v >= 0 && tw->frozen >= 0 && v != tw->frozen)
		events_lifecycle(sink, v ? "frozen" : "thawed", v ? "the tree is frozen" : "the tree runs again");
	tw->frozen = v;
}

static void watch_timeout(struct tree_watch *tw, const struct sbx_cgroup *cg, struct event_sink *sink,
			  const struct run_opts *o)
{
	char detail[128];
	__u64 ticks;

	if (read(tw->tfd, &ticks, sizeof(ticks)) != sizeof(ticks) || tw->timed_out)
		return;
	tw->timed_out = true;
	snprintf(detail, sizeof(detail), "--timeout of %lld ms expired; killing the tree",
		 o->limits.timeout_ms);
	events_lifecycle(sink, "timeout", detail);
	cgroup_kill_all(cg);
}

/* --- the resolver's hooks into the kernel maps, the policy and the events ---- */

static int dns_update_cb(void *ctx, const struct sbx_dns_key *k, const struct sbx_dns_entry *e)
{
	return loader__dns_update(((struct run_dns *)ctx)->l, k, e);
}

static int dns_remove_cb(void *ctx, const struct sbx_dns_key *k)
{
	return loader__dns_delete(((struct run_dns *)ctx)->l, k);
}

static int dns_client_cb(void *ctx, __u32 key, struct sbx_dns_client *out)
{
	return loader__dns_client(((struct run_dns *)ctx)->l, key, out);
}

static bool dns_verdict_cb(void *ctx, const char *name, __u32 *rule_id, __u16 *lo, __u16 *hi)
{
	struct domain_verdict v;

	net_domain_verdict(((struct run_dns *)ctx)->policy, name, &v);
	*rule_id = v.rule_id;
	*lo = v.lo;
	*hi = v.hi;
	return v.allowed;
}

static void dns_event_cb(void *ctx, const struct sbx_event *ev)
{
	events_emit(((struct run_dns *)ctx)->sink, ev);
}

static const char *dns_name_cb(void *ctx, const struct sbx_event *ev)
{
	return dns_domain_name(((struct run_dns *)ctx)->r, ev->domain_id);
}

/*
 * Names go out through the resolver of the nearest sandbox above this one
 * with domain rules (dns_ops.via), unless this process lies below that
 * sandbox itself: then the kernel judges its queries as that sandbox's,
 * and steers those to the configured servers into the resolvers above it.
 */
static int dns_via_cb(void *ctx, __u16 *port4)
{
	struct run_dns *d = ctx;
	int err;

	/* Only the daemon's set holds sandboxes other than this run's: with our own there is none above. */
	if (!d->pinned)
		return 0;
	/*
	 * Listed at the first query, not at start: most commands ask none, and
	 * the lists cost a statfs and a file handle per cgroup level (0.15 M
	 * instructions of every run under the daemon, 6.1).
	 */
	if (!d->ids_listed) {
		if (!d->cg_path || !*d->cg_path)
			return -ENOENT;	/* no list: no telling what lies above, so nothing is asked */
		if (cgroup_self_ids(&d->self))
			d->self.n = 0;	/* then names go to the resolver above: refused if this process may not reach it */
		err = cgroup_ancestor_ids(d->cg_path, &d->above);
		if (err)
			return err;	/* this query gets SERVFAIL; the next one tries again */
		d->ids_listed = true;
	}
	return loader__outer_resolver(d->l, &d->above, &d->self, port4);
}

static const struct dns_ops run_dns_ops = {
	.update = dns_update_cb,
	.remove = dns_remove_cb,
	.client = dns_client_cb,
	.verdict = dns_verdict_cb,
	.event = dns_event_cb,
	.via = dns_via_cb,
};

/*
 * Domain rules need the resolver: start it and steer the sandbox's DNS to
 * it. Without it no name resolves, which denies every domain: that is said,
 * not hidden. 0 or -errno.
 */
static int start_dns(struct run_dns *d, const struct run_opts *o, const struct sbx_cgroup *cg,
		     __u32 *flags)
{
	struct dns_config cfg = {
		.sandbox_cgid = cg->id,
		.audit = o->audit,
		.rate = o->policy.net.dns_rate,
		.burst = o->policy.net.dns_burst,
		.upstream = getenv("SBX_DNS_UPSTREAM"),
		.ops = &run_dns_ops,
		.ctx = d,
	};
	__u16 port4, port6;
	bool by_root;
	int err;

	if (!(*flags & SBX_SANDBOX_DNS))
		return 0;
	d->cg_path = cg->path;
	err = dns_open(&d->r, &cfg);
	if (!err) {
		dns_ports(d->r, &port4, &port6);
		d->port4 = port4;
		d->port6 = port6;
		/*
		 * On the shared programs the steering is pinned: should this run be
		 * killed (-9) while its cgroup lives on, port-53 traffic still goes to
		 * the dead resolver and fails, instead of slipping past the rules.
		 * The daemon's, on the sandboxes' parent, steers this cgroup too
		 * (pinned, and the programs find each sandbox's resolver).
		 */
		by_root = d->pinned && loader__root_steered(SBX_PIN_DIR, cg->root_id);
		if (by_root)
			err = 0;
		else
			err = d->pinned ? loader__pin_steer(d->l, SBX_PIN_DIR, cg->id, cg->fd) :
					  loader__steer_dns(d->l, cg->fd);
		d->steer_pinned = d->pinned && !by_root && !err;
	}
	if (!err) {
		d->sink->domain_name = dns_name_cb;
		d->sink->domain_ctx = d;
		return 0;
	}
	dns_close(d->r);
	d->r = NULL;
	*flags &= ~SBX_SANDBOX_DNS;
	if (o->policy.net.nr_domains) {
		p_err("cannot start the DNS resolver for allowedDomains: %s%s", strerror(-err),
		      err == -ENOENT ? " (no nameserver in /etc/resolv.conf; set SBX_DNS_UPSTREAM)" : "");
		return err;
	}
	p_warn("no DNS resolver (%s): names will not resolve in the sandbox", strerror(-err));
	return 0;
}

/*
 * The daemon's pinned programs when there are some of this build (starting
 * the sandbox then loads nothing), else programs of our own. NULL after
 * saying why.
 */
static struct sbx_loader *open_programs(const struct policy *p, bool *pinned)
{
	const char *const *accept = (const char *const *)p->accept_missing;
	struct sbx_loader *l = loader__open_pinned(SBX_PIN_DIR);

	*pinned = l != NULL;
	if (l) {
		/* The daemon accepted what its set lacks; this policy must too. */
		if (!cli_gaps_accepted(loader__gaps(l), accept, ACCEPT_HOW))
			return l;
		loader__destroy(l);
		return NULL;
	}
	if (errno == ESTALE)
		p_warn("the programs pinned at %s are from another build of sbx-bpf: loading this one's",
		       SBX_PIN_DIR);
	/*
	 * Only this run's sandbox uses its own set, and only what the command
	 * inherits is judged on use (the scan after loading asks again, and
	 * fails if it now finds some): the largest program is verified only
	 * when needed.
	 */
	return cli_load_programs(accept, ACCEPT_HOW, fdscan_self_passes_on() ? 0 : LOADER_WITHOUT_FD_JUDGING);
}

/*
 * A sandbox on programs that lack a protection (accepted): a `start`
 * record says so, so that whoever reads the events knows what was not
 * enforced. A complete set sends none.
 */
static void start_record(const struct sbx_loader *l, struct event_sink *sink)
{
	const struct hook_gaps *g = loader__gaps(l);
	char detail[1024], list[900];

	if (!g->nr && !g->dropped)
		return;
	hooks__gaps_line(g, list, sizeof(list));
	snprintf(detail, sizeof(detail), "started without %u protection(s), accepted: %s", g->nr + g->dropped,
		 list);
	events_lifecycle_missing(sink, "start", detail, hooks__gaps_json(g));
}

/*
 * Ask the daemon for this cgroup's events. With a backlog: the daemon may
 * read the request after the first events, which it keeps meanwhile.
 */
/*
 * The command's stdin, stdout and stderr, where they are regular files: the
 * caller opened them (a shell redirect), so the kernel does not judge their
 * use (struct sbx_sandbox stdio_*). Other inherited descriptors are judged.
 */
static void stdio_files(struct sbx_sandbox *sb)
{
	struct stat st;

	for (int fd = 0; fd < 3; fd++) {
		if (fstat(fd, &st) || !S_ISREG(st.st_mode))
			continue;
		sb->stdio_ino[fd] = st.st_ino;
		sb->stdio_dev[fd] = major(st.st_dev) << 20 | minor(st.st_dev);	/* the kernel's dev_t */
	}
}

static void feed_open(struct run_feed *f, __u64 cgid)
{
	json_t *req = json_pack("{s:s, s:I, s:i}", "cmd", "follow", "cgroup", (json_int_t)cgid,
				"backlog", 1024);

	f->len = 0;
	f->fd = req ? evsock_connect(EVSOCK_PATH, req, 1000) : -ENOMEM;
	json_decref(req);
	if (f->fd >= 0)
		return;
	p_warn("no sbx-bpf daemon answers at %s (%s): this sandbox's events wait in the ring buffer for one",
	       EVSOCK_PATH, strerror(-f->fd));
	f->fd = -1;
}

/*
 * The name behind a "domain_id" the daemon could not name: this run's
 * resolver answered it. The id is this run's business: it goes.
 */
static void feed_domain(json_t *j, struct event_sink *sink)
{
	static struct sbx_event ev;
	json_t *id = json_object_get(j, "domain_id");
	const char *name;

	if (!json_is_integer(id))
		return;
	ev.domain_id = (__u32)json_integer_value(id);
	name = sink->domain_name ? sink->domain_name(sink->domain_ctx, &ev) : NULL;
	if (name && json_is_null(json_object_get(j, "domain")))
		json_object_set_new(j, "domain", json_string(name));
	json_object_del(j, "domain_id");
}

static void feed_line(const char *line, size_t len, struct event_sink *sink)
{
	json_t *j = json_loadb(line, len, 0, NULL);
	char text[2 * SBX_PATH_MAX + 512];

	if (!j)
		return;
	if (json_is_string(json_object_get(j, "error"))) {
		p_warn("the daemon refused the event stream: %s", json_string_value(json_object_get(j, "error")));
	} else {
		if (json_is_null(json_object_get(j, "sandbox")) && sink->sandbox)
			json_object_set_new(j, "sandbox", json_string(sink->sandbox));	/* the daemon has no name for it */
		feed_domain(j, sink);
		if (sink->human && event_json_format_human(j, text, sizeof(text)) >= 0)
			fprintf(sink->human, "%s\n", text);
		if (sink->json) {
			json_dumpf(j, sink->json, JSON_COMPACT);
			fputc('\n', sink->json);
			fflush(sink->json);
		}
		sink->received++;
	}
	json_decref(j);
}

/* What the daemon sent; a closed stream is said once and not read again. */
static void feed_read(struct run_feed *f, struct event_sink *sink)
{
	ssize_t n = read(f->fd, f->buf + f->len, sizeof(f->buf) - f->len);
	char *start = f->buf, *nl;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		p_warn("the daemon closed the event stream: this sandbox's events go to its outputs only");
		close(f->fd);
		f->fd = -1;
		return;
	}
	f->len += n;
	while ((nl = memchr(start, '\n', f->buf + f->len - start))) {
		feed_line(start, nl - start, sink);
		start = nl + 1;
	}
	f->len -= start - f->buf;
	memmove(f->buf, start, f->len);
	if (f->len == sizeof(f->buf))
		f->len = 0;	/* a line longer than any event: dropped */
}

static void feed_close(struct run_feed *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

/*
 * The last events reach the daemon after the command's end: take them until
 * the stream is silent for 300 ms. Only when the sandbox counted something
 * (loader__sandbox_quiet); a clean run does not wait.
 */
static void feed_drain(struct run_feed *f, struct event_sink *sink)
{
	struct pollfd p = { .fd = f->fd, .events = POLLIN };

	while (f->fd >= 0 && poll(&p, 1, 300) > 0)
		feed_read(f, sink);
	feed_close(f);
}

/* Wait for the child while relaying signals and events. Returns its wait status. */
/*
 * On the daemon's programs, `status` and /metrics are the daemon's, but the
 * resolver is ours: its counters go where the daemon reads them, when they
 * changed, at most once a second.
 */
static void publish_dns(const struct dns_resolver *dns, __u64 cgid)
{
	static struct dns_counters last;
	static time_t when;
	struct dns_counters c;
	json_t *o;

	if (dns_counters(dns, &c) || time(NULL) == when || !memcmp(&c, &last, sizeof(c)))
		return;
	o = dns_counts_json(&c);
	if (o && !state_write_record(SBX_DNS_COUNTS_DIR, cgid, o)) {
		last = c;
		when = time(NULL);
	}
	json_decref(o);
}

static int supervise(pid_t child, struct ring_buffer *rb, struct run_feed *feed, int sfd,
		     struct tree_watch *tw, const struct sbx_cgroup *cg, struct event_sink *sink,
		     const struct run_opts *o, struct dns_resolver *dns)
{
	struct pollfd fds[3 + W_FILES + DNS_POLLFDS_MAX] = {
		{ .fd = rb ? ring_buffer__epoll_fd(rb) : feed->fd, .events = POLLIN },
		{ .fd = sfd, .events = POLLIN },
		{ .fd = tw->tfd, .events = POLLIN },
		{ .fd = tw->efd[W_MEMORY], .events = POLLPRI },
		{ .fd = tw->efd[W_PIDS], .events = POLLPRI },
		{ .fd = tw->efd[W_CGROUP], .events = POLLPRI },
	};
	const int nfix = 3 + W_FILES;
	bool changed;
	struct signalfd_siginfo si;
	int status, ndns, timeout;

	for (;;) {
		ndns = dns ? dns_pollfds(dns, fds + nfix, DNS_POLLFDS_MAX) : 0;
		timeout = dns ? dns_next_timeout(dns) : -1;
		if (timeout < 0 || timeout > 1000)
			timeout = 1000;
		fds[0].fd = rb ? fds[0].fd : feed->fd;	/* -1 once the daemon went: not polled */
		if (poll(fds, nfix + ndns, timeout) < 0 && errno != EINTR)
			break;
		if (rb) {
			ring_buffer__consume(rb);
			events_tick(sink);
		} else if (fds[0].revents) {
			feed_read(feed, sink);
		}
		if (dns) {
			dns_handle(dns, fds + nfix, ndns);
			dns_tick(dns);
			if (!rb)
				publish_dns(dns, cg->id);
		}
		changed = false;
		for (int i = 3; i < nfix; i++)
			changed |= !!(fds[i].revents & (POLLPRI | POLLERR));
		if (changed)
			watch_check(tw, sink);
		if (fds[2].revents & POLLIN)
			watch_timeout(tw, cg, sink, o);
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

/* The exit status: the tree's fate first (see --help), else the command's own. */
static int run_status(int status, const struct tree_watch *tw, struct event_sink *sink)
{
	int ret;

	if (WIFEXITED(status))
		ret = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		ret = 128 + WTERMSIG(status);
	else
		ret = 1;
	if (tw->timed_out)
		return EXIT_TIMEOUT;
	if (tw->oom)
		return EXIT_OOM;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		events_lifecycle(sink, "killed", "the command was killed with SIGKILL");
	if (tw->pids_hit && ret != 0)
		return EXIT_PIDS_MAX;
	return ret;
}


/* The network rules again, under the policy id the pinned programs gave us. 0 or 1 after saying why. */
static int recompile_net(struct run_opts *o, __u32 policy_id)
{
	char error[512] = "";
	int err;

	net_compiled_free(&o->net);
	err = net_compile(&o->policy, policy_id, &o->net, error, sizeof(error));
	if (err)
		p_err("%s", error[0] ? error : strerror(-err));
	return err ? 1 : 0;
}

/*
 * Remove the sandbox's record (inode @ino when written); true when the
 * shared dns_allow may hold entries of it: @resolver ran with names to
 * allow (every run has a resolver, to refuse names; only allowed ones put
 * addresses in the map), or another command rewrote the record (a grant:
 * a connect grant's slots), or that cannot be told. Purging scans every
 * bucket of the map (1.4 M instructions on 6.1, a seventh of a run), so a
 * run that had neither skips it. Under the records lock (@lock, let go
 * here): a grant holds it from reading the record to its last map write,
 * and refuses once the sandbox entry is gone, which it is by now.
 */
static bool unrecord(__u64 cgid, __u64 ino, bool resolver, int lock)
{
	__u64 now_ino = 0;
	bool written = resolver || lock < 0 || !ino || state_ino(SBX_STATE_DIR, cgid, &now_ino) ||
		       now_ino != ino;

	state_remove(SBX_STATE_DIR, cgid);
	if (lock >= 0)
		close(lock);
	return written;
}

/*
 * Our own programs go when their links' last descriptors close, and on 6.1
 * and 6.12 the kernel then waits, idle, about 0.1 s per link, one link
 * after another (grace periods, as it takes each trampoline off its ftrace
 * site): 6.1 s for the 57 links, 6.17 s of it idle (6.12.117 under icount),
 * in which the caller would wait for nothing, the sandbox gone. A child
 * holds the links past our exit and takes that wait; if it cannot be
 * forked, we take it. The programs judge nothing of ours meanwhile, and a
 * run started then loads each hook's program once that hook's old one is
 * off (the kernel's lock on the trampoline). The extensions' links
 * (loader.c shared_load) go with them, to the same child.
 */
static void unload_later(const struct sbx_loader *l)
{
	size_t n = loader__link_fds(l, NULL, 0);
	_cleanup_free_ int *fds = n ? calloc(n, sizeof(*fds)) : NULL;

	if (fds)
		hold_until_exit(fds, loader__link_fds(l, fds, n), "sbx-bpf-unload");
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
	struct tree_watch tw = { .efd = { -1, -1, -1 }, .tfd = -1 };
	struct run_dns dns = { .sink = &sink, .policy = &o.policy };
	static struct run_feed feed = { .fd = -1 };
	bool registered = false, installed = false, net_installed = false, pinned = false, recorded = false;
	bool dns_written = true;
	__u64 record_ino = 0;
	int rec_lock = -1;
	bool survivors;
	struct sbx_sandbox sb = {};
	__u32 sb_flags, policy_id = POLICY_ID;
	unsigned ctrl = 0;
	__u64 lost = 0;
	pid_t child;

	trace_phase("start");
	err = parse_run_opts(argc, argv, &o);
	if (!err)
		err = load_policy(&o);
	if (!err)
		err = check_controllers(&o, &ctrl);
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

	trace_phase("policy");
	l = open_programs(&o.policy, &pinned);
	if (!l)
		goto out;
	trace_phase("programs");
	if (pinned) {
		policy_id = loader__new_policy_id(l);
		ret = recompile_net(&o, policy_id);
		if (ret)
			goto out;
		ret = 1;
	}
	err = cgroup_create(o.name, ctrl, &cg);
	if (!err) {
		ret = apply_limits(&o, &cg);
		if (ret)
			goto out;
		ret = 1;
	}
	if (err) {
		if ((err == -EINVAL || err == -EXDEV) && getenv("SBX_CGROUP_ROOT"))
			p_err("SBX_CGROUP_ROOT '%s' must be an existing cgroup below the cgroup2 mount",
			      getenv("SBX_CGROUP_ROOT"));
		else if (err == -EMLINK)
			p_err("SBX_CGROUP_ROOT '%s' is too deep: a sandbox below it would lie more than %d levels "
			      "below the cgroup2 root, deeper than the programs look for sandboxes",
			      getenv("SBX_CGROUP_ROOT"), SBX_CGROUP_DEEPEST);
		else
			p_err("cannot create the sandbox cgroup '%s': %s%s", o.name, strerror(-err),
			      err == -ENOTSUP ? " (cgroup v2 is not the unified hierarchy; run 'sbx-bpf doctor')" : "");
		goto out;
	}
	/* The daemon's programs serve attached cgroups anywhere: their scope is not ours to narrow. */
	if (!pinned && cg.root_fd >= 0 && loader__set_scope(l, cg.root_fd))
		p_warn("cannot limit the hooks to %s/..: every task pays a lookup per cgroup level",
		       SBX_CGROUP_ROOT_NAME);
	trace_phase("cgroup");
	err = fs_compile(&o.policy, policy_id, &rules);
	if (!err)
		err = fs_install(l, &rules);
	if (err) {
		p_err("cannot install the policy: %s", rules_install_strerror(err));
		goto out;
	}
	installed = true;
	err = net_install(l, &o.net);
	if (err) {
		p_err("cannot install the network rules: %s", rules_install_strerror(err));
		goto out;
	}
	net_installed = true;
	sb_flags = (o.audit ? SBX_SANDBOX_AUDIT : 0) | o.net.sandbox_flags;
	trace_phase("rules");
	dns.l = l;
	dns.pinned = pinned;
	if (start_dns(&dns, &o, &cg, &sb_flags))
		goto out;
	trace_phase("dns");
	sb = (struct sbx_sandbox){ .policy_id = policy_id, .flags = sb_flags,
				   .any_depth_mask = rules.any_depth_mask,
				   .dns_port4 = dns.port4, .dns_port6 = dns.port6 };
	stdio_files(&sb);
	/* What the command inherits beyond its stdio files was opened outside the policy: judged on use. */
	if (fdscan_self_passes_on() && cli_judge_uses(l, &sb))
		goto out;
	trace_phase("fds-scanned");
	if (pinned)	/* before the sandbox exists: the daemon names its rules from the first event */
		recorded = !state_write(SBX_STATE_DIR, &(struct state_entry){ .cgroup = cg.path,
					.cgroup_id = cg.id, .policy_id = policy_id, .audit = o.audit }, &o.policy);
	if (recorded && state_ino(SBX_STATE_DIR, cg.id, &record_ino))
		record_ino = 0;	/* unknown: purge at the end */
	trace_phase("recorded");
	/* A parent someone delegated may itself be, or lie below, a sandbox. */
	err = cg.delegated ? loader__add_sandbox(l, cg.id, &sb) : loader__add_leaf_sandbox(l, cg.id, &sb);
	if (err) {
		p_err("cannot register the sandbox: %s", sandbox_install_strerror(err));
		goto out;
	}
	registered = true;
	trace_phase("sandbox");
	start_record(l, &sink);
	if (pinned) {
		feed_open(&feed, cg.id);
	} else {
		rb = events_open(loader__events_fd(l), &sink);
		if (!rb) {
			p_err("cannot open the event ring buffer: %s", strerror(errno));
			goto out;
		}
		err = events_sweep_open(&sink, l);
		if (err)
			p_warn("cannot map the coalescing slots (%s): repeated violations are only counted",
			       strerror(-err));
	}

	trace_phase("events-open");
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
	watch_open(&tw, &cg, o.limits.timeout_ms);
	trace_phase("watched");
	child = cgroup_spawn(&cg, o.argv);
	if (child < 0) {
		p_err("cannot execute '%s': %s", o.argv[0], strerror(-child));
		ret = 127;
		goto out;
	}
	trace_phase("spawned");
	status = supervise(child, rb, &feed, sfd, &tw, &cg, &sink, &o, dns.r);
	trace_phase("exited");
	watch_check(&tw, &sink);	/* what happened just before the end */
	ret = run_status(status, &tw, &sink);
out:
	/*
	 * Leftover descendants (daemons, double forks) die with the cgroup. Ones
	 * that survive (stuck in the kernel) lose their confinement when the
	 * programs go with this process: say so, loudly.
	 */
	snprintf(cg_path, sizeof(cg_path), "%s", cg.path);
	/*
	 * From the cgroup's removal to the record's, the records lock: the
	 * daemon's sweep forgets sandboxes whose cgroup is gone (forget.c), and
	 * must not take this one, still being taken down, for such (a "gone"
	 * record among this run's events, its entry removed under it).
	 */
	rec_lock = recorded ? cli_lock_records() : -1;
	survivors = cgroup_destroy(&cg) != 0;
	trace_phase("cgroup-gone");
	if (survivors)
		p_err("processes survive in the sandbox cgroup %s and are no longer confined; "
		      "kill them with: echo 1 > %s/cgroup.kill", cg_path, cg_path);
	if (rb) {
		ring_buffer__consume(rb);
		events_sweep_close(&sink);
		ring_buffer__free(rb);
	}
	/* Nothing counted, nobody left: the daemon has nothing of ours to pass on. */
	if (feed.fd >= 0 && registered && !survivors && loader__sandbox_quiet(l, cg.id))
		feed_close(&feed);
	if (feed.fd >= 0)
		feed_drain(&feed, &sink);
	trace_phase("events");
	if (registered) {
		loader__remove_sandbox(l, cg.id);
		/* The last sandbox that needed it takes it away; our own set goes whole (unload_later). */
		if ((sb.flags & SBX_SANDBOX_FD_JUDGE) && pinned)
			loader__fd_judging_settle(l);
		/* The pinned counters are every sandbox's: only our own programs' are ours to report. */
		if (!pinned && !loader__stat(l, SBX_STAT_EVENTS_LOST, &lost) && lost)
			p_warn("%llu events lost: the ring buffer was full (verdicts were applied)",
			       (unsigned long long)lost);
	}
	if (dns.steer_pinned)	/* after the entry went: no moment with ports but no steering */
		loader__unpin_steer(SBX_PIN_DIR, cg.id);
	if (installed)
		fs_uninstall(l, &rules);
	if (net_installed)
		net_uninstall(l, &o.net);
	if (recorded)
		dns_written = unrecord(cg.id, record_ino, dns.r && net_wants_resolver(&o.policy), rec_lock);
	if (pinned && dns.r)
		state_remove(SBX_DNS_COUNTS_DIR, cg.id);
	dns_close(dns.r);
	trace_phase("entries");
	if (pinned && registered && dns_written)
		loader__purge_dns(l, cg.id);	/* the shared map keeps nothing of a sandbox that went */
	trace_phase("dns-purged");
	net_compiled_free(&o.net);
	fs_compiled_free(&rules);
	free(o.flag_rules);
	free(o.accept);
	if (sink.malformed)
		p_warn("%llu malformed event records ignored", sink.malformed);
	if (sink.json && sink.json != stdout)
		fclose(sink.json);
	if (sfd >= 0)
		close(sfd);
	watch_close(&tw);
	trace_phase("closed");
	if (l && !pinned)
		unload_later(l);
	loader__destroy(l);
	policy_free(&o.policy);
	trace_phase("done");
	return ret;
}
