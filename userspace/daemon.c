// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon.c — `sbx-bpf daemon`: load the enforcement programs once and pin
 * them under bpffs, so they keep enforcing when this process exits,
 * crashes or is killed; or adopt the pinned set a previous daemon left.
 * Then be the single consumer of the events ring buffer.
 *
 * `sbx-bpf unload` removes the pinned set: enforcement ends when no process
 * holds the programs any more.
 *
 * It also runs the resolvers of attached cgroups whose policies have
 * domain rules (resolvers.h): `attach` asks for one over the events
 * socket, and once a second the daemon starts and stops them to match the
 * sandbox entries, which is how a restarted daemon takes over those of
 * one that died.
 *
 * First slice of the host agent (issue 6): attach/detach/list, nested
 * policies, grants and the telemetry sinks build on this; see
 * docs/agent-plan.md.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "cgstat.h"
#include "cli.h"
#include "events.h"
#include "evsweep.h"
#include "evsock.h"
#include "forget.h"
#include "hooks.h"
#include "labels.h"
#include "loader.h"
#include "resolvers.h"
#include "sbxstate.h"
#include "agentconf.h"
#include "sinks.h"
#include "grants.h"
#include "version.h"

#define PIN_DIR_DEFAULT	SBX_PIN_DIR
#define DAEMON_LOCK	"/run/sbx-bpf/daemon.pid"	/* flock()ed while a daemon runs; holds its pid */

struct daemon_opts {
	const char *pin_dir;
	const char *events_path;
	const char *config;
	const char *socket;
	/* Event volume (loader.h): the daemon sets these on the set it loads or adopts. */
	unsigned long coalesce_ms, rate, burst;
	const char *accept;		/* --accept-missing HOOK[,HOOK…] */
};

/* How a user accepts running without a protection, for the daemon's refusal. */
#define DAEMON_ACCEPT_HOW	"--accept-missing (or \"accept_missing\" in agent.json)"

/* What each command takes beyond --pin-dir. */
#define OPT_SINKS	(1u << 0)	/* --events, --config: daemon */
#define OPT_SOCKET	(1u << 1)	/* --socket: daemon, status */

static void daemon_usage(FILE *out)
{
	fprintf(out,
		"Usage: sbx-bpf daemon [--pin-dir DIR] [--events FILE] [--config FILE] [--socket PATH]\n"
		"                      [--coalesce-ms N] [--event-rate N] [--event-burst N]\n"
		"                      [--accept-missing HOOK[,HOOK…]]\n"
		"       sbx-bpf unload [--pin-dir DIR]\n"
		"       sbx-bpf status [--json] [--pin-dir DIR] [--socket PATH]\n"
		"\n"
		"daemon: load the enforcement programs and pin them under DIR (default\n"
		"%s), or adopt the set pinned there by an earlier daemon of\n"
		"this build; then print every event (stderr; --events FILE: JSON lines,\n"
		"'-' = stdout) until SIGTERM/SIGINT. The programs stay attached when the\n"
		"daemon exits, however it exits.\n"
		"--config FILE: the sinks (JSON lines, OCSF, syslog, Prometheus; docs/agent.md),\n"
		"default %s when it exists. SIGHUP reopens their files.\n"
		"It also runs the DNS resolvers of cgroups attached with domain rules\n"
		"(upstream: /etc/resolv.conf, or SBX_DNS_UPSTREAM=ADDR[:PORT]).\n"
		"--socket PATH: the events socket that 'sbx-bpf events' and 'status' use\n"
		"(default %s).\n"
		"--coalesce-ms N: identical violations within N ms make one record with a\n"
		"repeat count (default %llu; 0: off). --event-rate N, --event-burst N: at\n"
		"most N records per second per sandbox, N at once (default %u, %u; rate 0:\n"
		"no limit); the rest are counted in a 'throttled' record.\n"
		"--accept-missing HOOK,…: go on even if this kernel does not load the\n"
		"programs of these hooks (also \"accept_missing\" in the configuration);\n"
		"any other missing protection stops the daemon before anything is pinned.\n"
		"unload: remove the pinned set; enforcement ends with its last user.\n"
		"status: the pinned set, map fill levels, drops, and the daemon's health.\n",
		PIN_DIR_DEFAULT, AGENT_CONFIG_PATH, EVSOCK_PATH, SBX_COALESCE_NS_DEFAULT / 1000000ULL,
		SBX_RATE_DEFAULT, SBX_BURST_DEFAULT);
}

/* --coalesce-ms, --event-rate, --event-burst: a whole number in range, or a usage error. */
static int volume_opt(int c, const char *arg, struct daemon_opts *o)
{
	static const struct { int c; const char *name; unsigned long max; } opt[] = {
		{ 'C', "--coalesce-ms", 3600000 }, { 'R', "--event-rate", 1000000000 },
		{ 'B', "--event-burst", 1000000 },
	};
	unsigned long *dst[] = { &o->coalesce_ms, &o->rate, &o->burst };
	char *end;
	unsigned long v;

	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++) {
		if (opt[i].c != c)
			continue;
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || v > opt[i].max) {
			p_err("%s: '%s' is not a whole number from 0 to %lu", opt[i].name, arg, opt[i].max);
			return -EINVAL;
		}
		*dst[i] = v;
		return 0;
	}
	return -EINVAL;
}

static int parse_opts(int argc, char **argv, struct daemon_opts *o, unsigned allow)
{
	static const struct option longopts[] = {
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "events", required_argument, NULL, 'e' },
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "coalesce-ms", required_argument, NULL, 'C' },
		{ "event-rate", required_argument, NULL, 'R' },
		{ "event-burst", required_argument, NULL, 'B' },
		{ "accept-missing", required_argument, NULL, 'A' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	o->pin_dir = PIN_DIR_DEFAULT;
	o->socket = EVSOCK_PATH;
	o->coalesce_ms = SBX_COALESCE_NS_DEFAULT / 1000000ULL;
	o->rate = SBX_RATE_DEFAULT;
	o->burst = SBX_BURST_DEFAULT;
	while ((c = getopt_long(argc, argv, "jvh", longopts, NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		switch (c) {
		case 'p': o->pin_dir = optarg; break;
		case 'e':
			if (!(allow & OPT_SINKS))
				goto usage;
			o->events_path = optarg;
			break;
		case 'c':
			if (!(allow & OPT_SINKS))
				goto usage;
			o->config = optarg;
			break;
		case 's':
			if (!(allow & OPT_SOCKET))
				goto usage;
			o->socket = optarg;
			break;
		case 'C': case 'R': case 'B':
			if (!(allow & OPT_SINKS) || volume_opt(c, optarg, o))
				goto usage;
			break;
		case 'A':
			if (!(allow & OPT_SINKS))
				goto usage;
			o->accept = optarg;
			break;
		case 'h': daemon_usage(stdout); return -1;
		default: goto usage;
		}
	}
	if (optind == argc)
		return 0;
usage:
	daemon_usage(stderr);
	return EXIT_USAGE;
}

/*
 * Rule texts for events: the daemon never saw the policies, `attach`
 * recorded them (sbxstate.h). One cached record per sandbox cgroup, read
 * again when its file changed (a replaced policy).
 */
#define RULE_CACHE	64

struct rule_cache {
	struct {
		__u64 cgid;
		struct timespec mtime;
		json_t *st;
	} e[RULE_CACHE];
	unsigned next;
};

static json_t *cached_state(struct rule_cache *c, __u64 cgid)
{
	char path[PATH_MAX];
	struct stat sb;
	unsigned i, slot;

	snprintf(path, sizeof(path), "%s/%llu.json", SBX_STATE_DIR, (unsigned long long)cgid);
	if (stat(path, &sb))
		return NULL;
	for (i = 0; i < RULE_CACHE; i++)
		if (c->e[i].st && c->e[i].cgid == cgid &&
		    c->e[i].mtime.tv_sec == sb.st_mtim.tv_sec && c->e[i].mtime.tv_nsec == sb.st_mtim.tv_nsec)
			return c->e[i].st;
	slot = c->next++ % RULE_CACHE;
	json_decref(c->e[slot].st);
	c->e[slot].st = state_read(SBX_STATE_DIR, cgid);
	c->e[slot].cgid = cgid;
	c->e[slot].mtime = sb.st_mtim;
	return c->e[slot].st;
}

static const char *rule_text_cb(void *ctx, const struct sbx_event *ev)
{
	json_t *st = cached_state(ctx, ev->sandbox_cgroup_id);

	return st ? state_rule_text(st, ev->rule_id) : NULL;
}

/* The labels attach recorded (--label, the OCI hook's): on every event of the cgroup. */
static const json_t *labels_cb(void *ctx, const struct sbx_event *ev)
{
	json_t *st = cached_state(ctx, ev->sandbox_cgroup_id);
	json_t *labels = json_object_get(st, "labels");

	return labels_valid(labels) ? labels : NULL;
}

static void rule_cache_free(struct rule_cache *c)
{
	for (unsigned i = 0; i < RULE_CACHE; i++)
		json_decref(c->e[i].st);
}

/*
 * Adopt the pinned set, or load and pin a new one; either way, only with
 * every protection it lacks named in @accept. NULL after saying why.
 */
static struct sbx_loader *adopt_or_load(const char *dir, const char *const *accept)
{
	struct sbx_loader *l = loader__open_pinned(dir);
	int err;

	if (l) {
		if (cli_gaps_accepted(loader__gaps(l), accept, DAEMON_ACCEPT_HOW)) {
			p_err("the set pinned at %s goes on enforcing what it has; 'sbx-bpf unload' removes it",
			      dir);
			loader__destroy(l);
			return NULL;
		}
		p_warn("adopted the programs pinned at %s (enforcement never stopped)", dir);
		return l;
	}
	if (errno == ESTALE) {
		p_err("%s holds programs of another sbx-bpf build; 'sbx-bpf unload' removes them", dir);
		return NULL;
	}
	l = cli_load_programs(accept, DAEMON_ACCEPT_HOW, 0);
	if (!l)
		return NULL;
	err = loader__pin(l, dir);
	if (err) {
		p_err("cannot pin the programs under %s: %s (is bpffs mounted at /sys/fs/bpf?)", dir,
		      strerror(-err));
		loader__destroy(l);
		return NULL;
	}
	p_warn("loaded the programs and pinned them at %s", dir);
	return l;
}

/*
 * Steer the DNS of every sandbox below the sandboxes' parent here, once:
 * a `run` under it then attaches and pins no steering of its own. Without
 * it, each run pins its own set, as for an attached cgroup elsewhere.
 */
static void steer_root(struct sbx_loader *l, const char *dir)
{
	char root[PATH_MAX] = "the sandboxes' parent cgroup";
	__u64 id = 0;
	int fd = cgroup_sbx_root_open(root, sizeof(root), &id);
	int err = fd < 0 ? fd : loader__pin_root_steer(l, dir, id, fd);

	if (fd >= 0)
		close(fd);
	if (err)
		p_warn("cannot steer DNS below %s (%s): each run steers its own", root, strerror(-err));
}

/* Where every event goes beyond the daemon's own outputs. */
struct daemon_out {
	struct sink_set *set;		/* the sinks of --config, or NULL */
	struct evsock *es;		/* the events socket, or NULL */
	const struct event_sink *sink;	/* its counters, for status */
	struct resolvers *rs;		/* the attached cgroups' resolvers */
	struct sbx_loader *l;		/* the programs: the sandboxes, for the runs' resolvers */
	const char *pin_dir;		/* where they are pinned */
	struct rule_cache *rules;	/* the sandboxes' records, cached */
	struct limit_watch *limits;	/* what attached cgroups' limits refused, seen so far */
};

/*
 * The resolvers of `run`s on our programs: sandboxes whose DNS is steered
 * and whose run published its resolver's counters (SBX_DNS_COUNTS_DIR);
 * @fn for each. Attached cgroups' resolvers are ours (out->rs), not here.
 */
static void each_run_resolver(struct sbx_loader *l,
			      void (*fn)(void *ctx, __u64 cgid, const struct sbx_sandbox *sb, json_t *counts),
			      void *ctx)
{
	struct sbx_sandbox sb;
	__u64 cgid, prev = 0;
	bool first = true;

	while (l && !loader__next_sandbox(l, first ? NULL : &prev, &cgid, &sb)) {
		json_t *counts = (sb.flags & SBX_SANDBOX_DNS) ? state_read(SBX_DNS_COUNTS_DIR, cgid) : NULL;

		if (counts)
			fn(ctx, cgid, &sb, counts);
		json_decref(counts);
		first = false;
		prev = cgid;
	}
}

static void run_resolver_json(void *ctx, __u64 cgid, const struct sbx_sandbox *sb, json_t *counts)
{
	json_array_append_new(ctx, json_pack("{s:I, s:i, s:i, s:s, s:O}", "cgroup_id", (json_int_t)cgid,
					     "port4", (int)sb->dns_port4, "port6", (int)sb->dns_port6,
					     "owner", "run", "counters", counts));
}

/* Every resolver serving a sandbox of ours: the attached cgroups' (the daemon's), then the runs'. */
static json_t *all_resolvers_json(const struct daemon_out *out)
{
	json_t *a = resolvers_json(out->rs);

	if (a)
		each_run_resolver(out->l, run_resolver_json, a);
	return a;
}

/*
 * To the configured sinks and to the socket's watchers, with the texts
 * events.c resolved. With sinks, watchers get the very record the jsonl
 * sink writes (host, boot_id, seq); without, the record of --events.
 */
static void forward_cb(void *ctx, const struct sbx_event *ev, const char *rule_text, const char *domain,
		       const json_t *labels)
{
	struct daemon_out *out = ctx;
	struct sink_ctx c = { .rule_text = rule_text, .domain = domain, .labels = labels };
	json_t *obj;

	if (out->set) {
		c.seq = sink_set_next_seq(out->set);	/* the number sink_set_emit() gives it */
		c.host = sink_set_host(out->set);
		c.boot_id = sink_set_boot_id(out->set);
		sink_set_emit(out->set, ev, &c);
	}
	if (!out->es)
		return;
	obj = out->set ? sink_json_event(ev, &c) : event_to_json(ev, rule_text, domain, NULL);
	if (!out->set && event_json_set_labels(obj, labels)) {
		json_decref(obj);
		obj = NULL;
	}
	/* A name only the sandbox's own resolver knows (a `run`'s): its id, for the run to name it. */
	if (obj && !domain && ev->domain_id)
		json_object_set_new(obj, "domain_id", json_integer((json_int_t)ev->domain_id));
	if (obj)
		evsock_publish(out->es, obj);
	json_decref(obj);
}

/* The daemon's part of a status answer (evsock adds pid, uptime, watchers). */
static json_t *status_cb(void *ctx)
{
	const struct daemon_out *out = ctx;

	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:o}", "version", SBX_VERSION,
			 "events_received", (json_int_t)out->sink->received,
			 "events_malformed", (json_int_t)out->sink->malformed,
			 /* coalesced counts with no record to name them (e.g. after a restart) */
			 "summaries_unattributed", (json_int_t)evsweep_unattributed(out->sink->sweep),
			 "sink_records_dropped", (json_int_t)(out->set ? sink_set_dropped(out->set) : 0),
			 "resolvers", all_resolvers_json(out));
}

/* `attach` (start) and `detach` (stop) asking for an attached cgroup's resolver. */
static json_t *resolver_cb(void *ctx, bool start, __u64 cgid)
{
	struct daemon_out *out = ctx;
	char why[512];
	__u16 p4, p6;
	int err;

	if (!start) {
		err = resolvers_stop(out->rs, cgid);
		if (!err)
			p_warn("stopped the resolver of cgroup %llu (detached)", (unsigned long long)cgid);
		return json_pack("{s:b}", "stopped", !err);
	}
	err = resolvers_start(out->rs, cgid, &p4, &p6, why, sizeof(why));
	if (err) {
		p_warn("refused a resolver for cgroup %llu: %s", (unsigned long long)cgid, why);
		return json_pack("{s:s}", "error", why);
	}
	p_warn("started the resolver of cgroup %llu (127.0.0.1:%u, [::1]:%u)", (unsigned long long)cgid, p4, p6);
	return json_pack("{s:i, s:i}", "port4", (int)p4, "port6", (int)p6);
}

/* The events socket; without it the daemon still enforces and collects. */
static json_t *watch_cb(void *ctx, __u64 cgid);

static struct evsock *open_socket(const char *path, struct daemon_out *out)
{
	struct evsock *es = evsock_open(path, &(struct evsock_opts){ .status = status_cb, .status_ctx = out,
								     .resolver = resolver_cb, .resolver_ctx = out,
								     .watch = watch_cb, .watch_ctx = out });

	if (!es)
		p_warn("cannot listen at %s: %s ('sbx-bpf events' and 'status' will not reach the daemon, "
		       "nor 'attach' for a resolver)", path, strerror(errno));
	return es;
}

/* The names behind domain ids: the resolver of the event's sandbox has them. */
static const char *domain_name_cb(void *ctx, const struct sbx_event *ev)
{
	return resolvers_domain_name(ctx, ev->sandbox_cgroup_id, ev->domain_id);
}

static void note_cb(void *ctx, const char *msg)
{
	(void)ctx;
	p_warn("%s", msg);
}

/*
 * Resolvers to match the sandbox entries (resolvers_sync). Under the
 * records' lock, so never halfway through an attach; when a command holds
 * it, next second.
 */
static void sync_resolvers(struct resolvers *rs)
{
	int lock = state_trylock(SBX_STATE_DIR);

	if (lock < 0)
		return;
	resolvers_sync(rs, note_cb, NULL);
	close(lock);
}

/*
 * The attached cgroups' resolvers, none running yet (the first second
 * adopts those of a daemon that died). Each takes half a dozen
 * descriptors and up to DNS_MAX_CONNS more: the soft limit (often 1024)
 * goes up to the hard one; a start that still runs out fails (EMFILE),
 * and so does its attach. NULL after saying why.
 */
static struct resolvers *open_resolvers(struct sbx_loader *l, const char *pin_dir, struct event_sink *sink)
{
	struct resolvers *rs;
	struct rlimit r;

	if (!getrlimit(RLIMIT_NOFILE, &r) && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
	rs = resolvers_new(&(struct resolvers_opts){ .l = l, .pin_dir = pin_dir, .state_dir = SBX_STATE_DIR,
						     .sink = sink, .upstream = getenv("SBX_DNS_UPSTREAM") });
	if (!rs) {
		p_err("out of memory");
		return NULL;
	}
	sink->domain_name = domain_name_cb;
	sink->domain_ctx = rs;
	return rs;
}

/*
 * --config (or the default file when it exists), read and checked before
 * anything is opened or created. *@have: there is one. 0 or EXIT_USAGE.
 */
static int load_config(const struct daemon_opts *o, struct agent_config *cfg, bool *have)
{
	const char *file = o->config ? o->config : AGENT_CONFIG_PATH;
	struct agent_diag d = {};

	*have = o->config || !access(file, F_OK);
	if (*have && agent_config_load(cfg, file, &d)) {
		p_err("%s", d.error);
		return EXIT_USAGE;
	}
	return 0;
}

/* The sinks of the configuration load_config() read; NULL set without one. 0 or 1. */
static int open_sinks(const struct agent_config *cfg, bool have, struct sink_set **set)
{
	struct agent_diag d = {};

	*set = NULL;
	if (!have)
		return 0;
	*set = sink_set_new(&(struct sink_ident){ .host = cfg->host, .version = SBX_VERSION });
	if (!*set) {
		p_err("out of memory");
		return 1;
	}
	if (sink_set_seq_file(*set, "/run/sbx-bpf/seq"))
		p_warn("cannot keep the sequence in /run/sbx-bpf/seq: a restart starts it again");
	if (agent_sinks_open(cfg, *set, SBX_VERSION, &d)) {
		p_err("%s", d.error);
		return 1;
	}
	return 0;
}

/*
 * Live grants over every sandbox, from their records: counted at most every
 * 10 s, whatever the scrape rate, and a record parsed again only when its
 * file changed (grants_tally).
 */
static long long live_grants(struct sbx_loader *l)
{
	static struct grants_tally tally;
	static long long cached;
	static time_t when;
	struct sbx_sandbox sb;
	__u64 cgid, prev, now = cli_boottime_ns();
	char path[PATH_MAX];
	long long n = 0;
	bool first = true;

	if (when && time(NULL) - when < 10)
		return cached;
	grants_tally_begin(&tally);
	while (!loader__next_sandbox(l, first ? NULL : &prev, &cgid, &sb)) {
		if (!state_path(SBX_STATE_DIR, cgid, "", path, sizeof(path)))
			n += (long long)grants_tally_record(&tally, cgid, path, now);
		first = false;
		prev = cgid;
	}
	grants_tally_end(&tally);
	when = time(NULL);
	cached = n;
	return n;
}

static struct sink_dns_count dns_count(__u64 cgid, const struct dns_counters *c)
{
	return (struct sink_dns_count){ .cgroup_id = cgid, .queries = c->queries, .forwarded = c->forwarded,
					.refused_names = c->refused_names, .refused_types = c->refused_types,
					.rate_limited = c->rate_limited, .allowed_names = c->allowed_names };
}

static void run_resolver_count(void *ctx, __u64 cgid, const struct sbx_sandbox *sb, json_t *counts)
{
	struct sink_gauges *g = ctx;
	struct dns_counters c;

	(void)sb;
	if (g->nr_dns < SINK_MAX_RESOLVERS && !dns_counts_parse(counts, &c))
		g->dns[g->nr_dns++] = dns_count(cgid, &c);
}

/* What the resolvers of the sandboxes counted (attached cgroups', then runs'), into @g. */
static void dns_gauges(struct sbx_loader *l, const struct resolvers *rs, struct sink_gauges *g)
{
	static struct resolver_counts c[SINK_MAX_RESOLVERS];
	size_t n = resolvers_counts(rs, c, SINK_MAX_RESOLVERS);

	g->nr_dns = n < SINK_MAX_RESOLVERS ? n : SINK_MAX_RESOLVERS;
	for (unsigned int i = 0; i < g->nr_dns; i++)
		g->dns[i] = dns_count(c[i].cgid, &c[i].c);
	each_run_resolver(l, run_resolver_count, g);
}

static void gauges(struct sbx_loader *l, const struct resolvers *rs, struct sink_set *set)
{
	static struct sink_gauges g;
	__u32 used, max;
	int n;

	memset(&g, 0, sizeof(g));
	/* One read of the per-CPU drops gives both the series and their sum. */
	n = loader__stat_percpu(l, SBX_STAT_EVENTS_LOST, (__u64 *)g.lost_cpu, SINK_MAX_CPUS);
	g.ncpu = n > 0 ? (n < SINK_MAX_CPUS ? n : SINK_MAX_CPUS) : 0;
	for (unsigned int i = 0; i < g.ncpu; i++)
		g.events_dropped += g.lost_cpu[i];
	loader__stat(l, SBX_STAT_VIOLATIONS, (__u64 *)&g.violations);
	loader__stat(l, SBX_STAT_COALESCED, (__u64 *)&g.coalesced);
	loader__stat(l, SBX_STAT_THROTTLED, (__u64 *)&g.throttled);
	if (loader__ringbuf_fill(l, &g.ringbuf_fill_ratio))
		g.ringbuf_fill_ratio = 0;
	if (!loader__fill(l, LOADER_FILL_SANDBOXES, &used, &max))
		g.policies = used;
	g.grants = live_grants(l);
	dns_gauges(l, rs, &g);
	sink_set_gauges(set, &g);
}

/*
 * Gaps: records the ring buffer could not take are counted by the kernel
 * (SBX_STAT_EVENTS_LOST). The daemon turns every increase into a "gap"
 * record on all its outputs, and keeps the count it last reported in
 * DAEMON_STATE so that a restarted daemon reports what was lost while none
 * was collecting (same boot only: the counters start again with the kernel).
 */
#define DAEMON_STATE	"/run/sbx-bpf/daemon.state"

struct gap_watch {
	__u64 lost_seen;
	__u32 set_id;		/* the counters belong to one loaded set */
	char boot_id[64];
};

static void report_gap(struct event_sink *sink, struct daemon_out *out, const char *detail)
{
	json_t *obj;

	events_lifecycle(sink, "gap", detail);
	if (out->set)
		sink_set_lifecycle(out->set, &(struct sink_lifecycle){ .event = "gap", .detail = detail }, NULL);
	obj = out->es ? event_lifecycle_to_json("gap", detail, NULL, event_mono_now()) : NULL;
	if (obj)
		evsock_publish(out->es, obj);
	json_decref(obj);
}

/*
 * A set that lacks protections (accepted): one `start` record on every
 * output, naming them, so that a fleet sees which hosts enforce less.
 */
static void report_start(const struct hook_gaps *g, struct event_sink *sink, struct daemon_out *out)
{
	char detail[1024], list[900];
	json_t *missing, *obj;

	if (!g->nr && !g->dropped)
		return;
	hooks__gaps_line(g, list, sizeof(list));
	snprintf(detail, sizeof(detail), "enforcing without %u protection(s), accepted: %s",
		 g->nr + g->dropped, list);
	missing = hooks__gaps_json(g);
	if (out->set)
		sink_set_lifecycle(out->set, &(struct sink_lifecycle){ .event = "start", .detail = detail,
								   .missing = missing }, NULL);
	obj = out->es ? event_lifecycle_to_json("start", detail, NULL, event_mono_now()) : NULL;
	if (obj) {
		json_object_set(obj, "missing", missing);
		evsock_publish(out->es, obj);
	}
	json_decref(obj);
	events_lifecycle_missing(sink, "start", detail, missing);	/* takes the reference */
}

/*
 * A fact about one attached sandbox (gone, oom_kill, pids_max): a
 * lifecycle record on every output, with its cgroup id and labels.
 */
static void report_sandbox(struct event_sink *sink, struct daemon_out *out, const char *event,
			   const char *detail, __u64 cgid, const json_t *labels)
{
	json_t *obj, *fields;

	if (!labels_valid(labels))
		labels = NULL;
	fields = json_pack("{s:I}", "sandbox_cgroup_id", (json_int_t)cgid);
	if (fields && event_json_set_labels(fields, labels)) {
		json_decref(fields);
		fields = NULL;
	}
	if (out->set)
		sink_set_lifecycle(out->set, &(struct sink_lifecycle){ .event = event, .detail = detail,
								   .cgroup_id = cgid, .labels = labels }, NULL);
	obj = out->es ? event_lifecycle_to_json(event, detail, NULL, event_mono_now()) : NULL;
	if (obj && fields && !json_object_update(obj, fields))
		evsock_publish(out->es, obj);
	json_decref(obj);
	events_lifecycle_with(sink, event, detail, fields);	/* takes the reference */
}

struct gone_ctx {
	struct event_sink *sink;
	struct daemon_out *out;
};

/* A sandbox whose cgroup is gone, forgotten. */
static void report_gone(void *ctx, __u64 cgid, const json_t *record)
{
	struct gone_ctx *g = ctx;
	char detail[PATH_MAX + 128];

	snprintf(detail, sizeof(detail), "cgroup %s is gone: its policy, rules and grants are taken away",
		 json_string_value(json_object_get(record, "cgroup")) ?: "?");
	report_sandbox(g->sink, g->out, "gone", detail, cgid, json_object_get(record, "labels"));
}

/*
 * What the limits of attached cgroups refused: memory.events oom_kill and
 * pids.events max, compared once a second with what was seen (at first,
 * what attach recorded in "limit_events"). A `run` watches its own.
 */
struct limit_seen {
	__u64 cgid;
	long long oom_kill, pids_max;
	char *path;		/* the cgroup's; NULL: not watched (a run's sandbox, which watches its own) */
};

struct limit_watch {
	struct limit_seen *e;
	size_t n;
	/*
	 * IN_MODIFY on each watched cgroup's two files: a container that hits
	 * its limit and ends within the second is still seen, before its
	 * poststop detaches it. -1: the once-a-second look alone.
	 */
	int ifd;
};

static int seen_cmp(const void *a, const void *b)
{
	__u64 x = ((const struct limit_seen *)a)->cgid, y = ((const struct limit_seen *)b)->cgid;

	return x < y ? -1 : x > y;
}

/* w->e is kept sorted by cgroup id: one look each second per sandbox is a search, not a scan. */
static struct limit_seen *seen_before(const struct limit_watch *w, __u64 cgid)
{
	struct limit_seen key = { .cgid = cgid };

	return w->n ? bsearch(&key, w->e, w->n, sizeof(*w->e), seen_cmp) : NULL;
}

/* Watch @cg's memory.events and pids.events (absent without their controller: no watch). */
static void limits_notify(int ifd, const char *cg)
{
	char p[PATH_MAX + 32];

	if (ifd < 0)
		return;
	snprintf(p, sizeof(p), "%s/memory.events", cg);
	inotify_add_watch(ifd, p, IN_MODIFY);
	snprintf(p, sizeof(p), "%s/pids.events", cg);
	inotify_add_watch(ifd, p, IN_MODIFY);
}

/* A sandbox seen for the first time: from its record, what attach saw at the attach. */
static struct limit_seen first_sight(struct daemon_out *out, __u64 cgid)
{
	json_t *st = cached_state(out->rules, cgid), *base = json_object_get(st, "limit_events");
	const char *cg = json_string_value(json_object_get(st, "cgroup"));
	struct limit_seen s = { .cgid = cgid, .oom_kill = -1, .pids_max = -1 };

	if (!json_is_object(base) || !cg)
		return s;
	s.oom_kill = json_integer_value(json_object_get(base, "oom_kill"));
	s.pids_max = json_integer_value(json_object_get(base, "pids_max"));
	s.path = strdup(cg);
	if (s.path)
		limits_notify(out->limits->ifd, cg);
	return s;
}

/* One watched sandbox: its counters now, what grew reported. */
static void limits_check(struct event_sink *sink, struct daemon_out *out, struct limit_seen *s)
{
	long long oom = cgstat_keyed_file(s->path, "memory.events", "oom_kill");
	long long pids = cgstat_keyed_file(s->path, "pids.events", "max");
	char detail[128];

	if (s->oom_kill >= 0 && oom > s->oom_kill) {
		snprintf(detail, sizeof(detail), "%lld process(es) killed for exceeding memory.max", oom - s->oom_kill);
		report_sandbox(sink, out, "oom_kill", detail, s->cgid,
			       json_object_get(cached_state(out->rules, s->cgid), "labels"));
	}
	if (s->pids_max >= 0 && pids > s->pids_max) {
		snprintf(detail, sizeof(detail), "%lld fork(s) refused at pids.max", pids - s->pids_max);
		report_sandbox(sink, out, "pids_max", detail, s->cgid,
			       json_object_get(cached_state(out->rules, s->cgid), "labels"));
	}
	s->oom_kill = oom;
	s->pids_max = pids;
}

/* Every sandbox of the set: the new ones looked up, the watched ones checked, the gone ones dropped. */
static void watch_limits(struct event_sink *sink, struct daemon_out *out)
{
	struct limit_watch *w = out->limits;
	struct limit_seen *next = NULL, *was, *grown;
	struct sbx_sandbox sb;
	__u64 cgid, prev = 0;
	bool first = true;
	size_t n = 0, cap = 0;

	while (!loader__next_sandbox(out->l, first ? NULL : &prev, &cgid, &sb)) {
		first = false;
		prev = cgid;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			grown = realloc(next, cap * sizeof(*next));
			if (!grown)
				break;
			next = grown;
		}
		was = seen_before(w, cgid);
		next[n] = was ? *was : first_sight(out, cgid);
		if (was)
			was->path = NULL;	/* moved */
		if (next[n].path)
			limits_check(sink, out, &next[n]);
		n++;
	}
	for (size_t i = 0; i < w->n; i++)
		free(w->e[i].path);	/* sandboxes that went */
	free(w->e);
	if (n)
		qsort(next, n, sizeof(*next), seen_cmp);
	w->e = next;
	w->n = n;
}

/* "watch" (attach, once the sandbox is in place): its files watched now, from what attach recorded. */
static json_t *watch_cb(void *ctx, __u64 cgid)
{
	struct daemon_out *out = ctx;
	struct limit_watch *w = out->limits;
	struct limit_seen *was = seen_before(w, cgid), *grown;

	if (was && was->path)
		return json_pack("{s:b}", "watching", true);
	if (was)	/* seen before its record was there: look again */
		*was = first_sight(out, cgid);
	else if ((grown = realloc(w->e, (w->n + 1) * sizeof(*w->e)))) {
		size_t at = 0;

		w->e = grown;
		while (at < w->n && w->e[at].cgid < cgid)	/* where it goes in the order */
			at++;
		memmove(&w->e[at + 1], &w->e[at], (w->n - at) * sizeof(*w->e));
		w->n++;
		was = &w->e[at];
		*was = first_sight(out, cgid);
	} else {
		return NULL;
	}
	return json_pack("{s:b}", "watching", was->path != NULL);
}

/* The inotify descriptor is readable: something changed in a watched file. */
static void limits_changed(struct event_sink *sink, struct daemon_out *out)
{
	char buf[4096];

	while (read(out->limits->ifd, buf, sizeof(buf)) > 0)
		;
	watch_limits(sink, out);
}

/*
 * Sandboxes of cgroups that are gone (a container whose engine never ran
 * its poststop hook, an orchestrator killed before its detach): forgotten,
 * so that nothing piles up in the maps. Never while an attach or detach
 * holds the records.
 */
static void sweep_gone(struct event_sink *sink, struct daemon_out *out)
{
	struct gone_ctx g = { sink, out };
	int lock = state_trylock(SBX_STATE_DIR);

	if (lock < 0)
		return;
	sandbox_forget_gone(out->l, out->pin_dir, report_gone, &g);
	loader__arming_settle(out->l);
	close(lock);
}

/* Append a copy of @name to the NULL-terminated list *@l (size *@n, room *@cap). 0 or -ENOMEM. */
static int push_name(char ***l, size_t *n, size_t *cap, const char *name)
{
	if (*n + 1 >= *cap) {
		char **m = realloc(*l, 2 * *cap * sizeof(**l));

		if (!m)
			return -ENOMEM;
		*l = m;
		*cap *= 2;
	}
	(*l)[*n] = strdup(name);
	if (!(*l)[*n])
		return -ENOMEM;
	(*l)[++*n] = NULL;
	return 0;
}

static void free_list(char **list)
{
	for (size_t i = 0; list && list[i]; i++)
		free(list[i]);
	free(list);
}

/*
 * --accept-missing and the configuration's "accept_missing", as one
 * NULL-terminated list into *@out. 0, or EXIT_USAGE after saying why.
 */
static int accept_list(const struct daemon_opts *o, const struct agent_config *cfg, char ***out)
{
	size_t n = 0, cap = 8;
	char **l = calloc(cap, sizeof(*l)), *buf = o->accept ? strdup(o->accept) : NULL, *save, *h;
	int err = l && (buf || !o->accept) ? 0 : -ENOMEM;

	for (size_t i = 0; !err && cfg->accept_missing && cfg->accept_missing[i]; i++)
		err = push_name(&l, &n, &cap, cfg->accept_missing[i]);
	for (h = buf ? strtok_r(buf, ",", &save) : NULL; !err && h; h = strtok_r(NULL, ",", &save)) {
		if (!hooks__known(h)) {
			p_err("--accept-missing: '%s' is not a hook of sbx-bpf's programs (see 'sbx-bpf hooks')", h);
			err = EXIT_USAGE;
			break;
		}
		err = push_name(&l, &n, &cap, h);
	}
	free(buf);
	if (err < 0)
		p_err("%s", strerror(-err));
	if (err) {
		free_list(l);
		return EXIT_USAGE;
	}
	*out = l;
	return 0;
}

static void gap_save(const struct gap_watch *g)
{
	json_t *st = json_pack("{s:s, s:I, s:I}", "boot_id", g->boot_id, "set_id", (json_int_t)g->set_id,
			       "events_lost", (json_int_t)g->lost_seen);

	if (st && json_dump_file(st, DAEMON_STATE ".tmp", JSON_COMPACT) == 0)
		rename(DAEMON_STATE ".tmp", DAEMON_STATE);
	json_decref(st);
}

/* At start, after the backlog was read: what was lost while no daemon ran. */
static void gap_start(struct gap_watch *g, struct sbx_loader *l, struct event_sink *sink,
		      struct daemon_out *out)
{
	json_t *st = json_load_file(DAEMON_STATE, 0, NULL);
	const char *boot = json_string_value(json_object_get(st, "boot_id"));
	__u64 lost = 0, before = 0;
	char detail[256];

	loader__stat(l, SBX_STAT_EVENTS_LOST, &lost);
	if (sink_boot_id(g->boot_id, sizeof(g->boot_id)) < 0)
		snprintf(g->boot_id, sizeof(g->boot_id), "-");
	g->set_id = loader__set_id(l);
	if (boot && !strcmp(boot, g->boot_id) &&
	    json_integer_value(json_object_get(st, "set_id")) == (json_int_t)g->set_id)
		before = (__u64)json_integer_value(json_object_get(st, "events_lost"));
	json_decref(st);
	/* Same boot, same set: the difference; otherwise all the set ever lost (a fresh load: 0). */
	if (lost > before) {
		snprintf(detail, sizeof(detail), "%llu records were lost while no daemon was collecting"
			 " (the ring buffer was full; the verdicts were applied); %llu waited and were collected",
			 (unsigned long long)(lost - before), sink->received);
		report_gap(sink, out, detail);
	}
	g->lost_seen = lost;
	gap_save(g);
}

/* While running: every increase of the kernel's count is a gap, reported once. */
static void gap_tick(struct gap_watch *g, struct sbx_loader *l, struct event_sink *sink,
		     struct daemon_out *out)
{
	__u64 lost = 0;
	char detail[200];

	if (loader__stat(l, SBX_STAT_EVENTS_LOST, &lost) || lost <= g->lost_seen)
		return;
	snprintf(detail, sizeof(detail), "%llu records were lost: the ring buffer was full"
		 " (the verdicts were applied)", (unsigned long long)(lost - g->lost_seen));
	g->lost_seen = lost;
	report_gap(sink, out, detail);
	gap_save(g);
}

#define SINK_FDS	64
#define SERVE_FDS	(2 + SINK_FDS + EVSOCK_FDS + RESOLVERS_FDS + 1)

/* What serve() polls, beyond the ring buffer and the signals (fds[0], fds[1]). */
struct serve_fds {
	struct pollfd *fds;
	size_t sinks, sock, dns;	/* how many of each follow fds[2] */
	size_t limits;			/* then the limit watch's inotify descriptor (0 or 1) */
};

static void serve_pollfds(struct serve_fds *p, struct daemon_out *out, int *timeout)
{
	struct pollfd *f = p->fds + 2;

	*timeout = 1000;
	p->sinks = out->set ? sink_set_pollfds(out->set, f, SINK_FDS, timeout) : 0;
	p->sock = out->es ? evsock_pollfds(out->es, f + p->sinks, EVSOCK_FDS, timeout) : 0;
	p->dns = resolvers_pollfds(out->rs, f + p->sinks + p->sock, RESOLVERS_FDS, timeout);
	p->limits = out->limits->ifd >= 0;
	f[p->sinks + p->sock + p->dns] = (struct pollfd){ .fd = out->limits->ifd, .events = POLLIN };
	if (*timeout < 0 || *timeout > 1000)
		*timeout = 1000;
}

/* Once a second: gaps, gauges, the resolvers' housekeeping and their match with the entries. */
static void serve_second(struct sbx_loader *l, struct event_sink *sink, struct daemon_out *out,
			 struct gap_watch *gap)
{
	gap_tick(gap, l, sink, out);
	if (out->set)
		gauges(l, out->rs, out->set);
	resolvers_tick(out->rs);
	sync_resolvers(out->rs);
	/* A run killed with -9 cannot take descriptor judging away after itself: this does. */
	if (time(NULL) % 10 == 0 && loader__fd_judging(l))
		loader__fd_judging_sweep(l);
	if (time(NULL) % 5 == 0)
		sweep_gone(sink, out);
	watch_limits(sink, out);
}

static int serve(struct sbx_loader *l, struct event_sink *sink, struct daemon_out *out)
{
	struct ring_buffer *rb = events_open(loader__events_fd(l), sink);
	struct serve_fds p = { .fds = calloc(SERVE_FDS, sizeof(*p.fds)) };
	struct sink_set *set = out->set;
	struct signalfd_siginfo si;
	struct gap_watch gap = {};
	time_t last_second = 0;
	sigset_t mask;
	int sfd, timeout;

	if (!rb || !p.fds) {
		if (!rb)
			p_err("cannot open the event ring buffer: %s", strerror(errno));
		else
			p_err("out of memory");
		ring_buffer__free(rb);
		free(p.fds);
		return 1;
	}
	if (events_sweep_open(sink, l))
		p_warn("cannot map the coalescing slots: repeated violations are only counted");
	signal(SIGPIPE, SIG_IGN);	/* a sink's reader that went away is a drop, not our death */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	p.fds[0] = (struct pollfd){ .fd = ring_buffer__epoll_fd(rb), .events = POLLIN };
	p.fds[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	ring_buffer__consume(rb);	/* what waited while no daemon ran */
	gap_start(&gap, l, sink, out);
	for (;;) {
		serve_pollfds(&p, out, &timeout);
		if (poll(p.fds, 2 + p.sinks + p.sock + p.dns + p.limits, timeout) < 0 && errno != EINTR)
			break;
		if (p.limits && (p.fds[2 + p.sinks + p.sock + p.dns].revents & POLLIN))
			limits_changed(sink, out);
		ring_buffer__consume(rb);
		events_tick(sink);
		/* Before the socket's requests, which may start and stop resolvers. */
		resolvers_handle(out->rs, p.fds + 2 + p.sinks + p.sock, p.dns);
		if (out->es)
			evsock_handle(out->es, p.fds + 2 + p.sinks, p.sock);
		if (time(NULL) != last_second) {
			last_second = time(NULL);
			serve_second(l, sink, out, &gap);
		}
		if (set)
			sink_set_handle(set, p.fds + 2, p.sinks);
		if (!(p.fds[1].revents & POLLIN) || read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo != SIGHUP)
			break;
		if (set)
			sink_set_reopen(set);
	}
	ring_buffer__consume(rb);
	events_sweep_close(sink);
	if (out->es)
		evsock_handle(out->es, NULL, 0);	/* what the watchers can still take */
	ring_buffer__free(rb);
	free(p.fds);
	close(sfd);
	return 0;
}

/*
 * One daemon at a time: two would race for the ring buffer. The lock is
 * the pid file itself, held (flock) for the daemon's life, so a crashed
 * daemon never leaves a stale lock. Returns the fd, or -1 after saying why.
 */
static int daemon_lock(void)
{
	char pid[32];
	int fd;

	mkdir("/run/sbx-bpf", 0755);
	fd = open(DAEMON_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		p_err("cannot open %s: %s", DAEMON_LOCK, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		p_err("another sbx-bpf daemon is running (%s is locked)", DAEMON_LOCK);
		close(fd);
		return -1;
	}
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, strlen(pid), 0) < 0)
		p_warn("cannot write %s: %s", DAEMON_LOCK, strerror(errno));
	return fd;
}

/* The running daemon's pid, or 0 when none holds the lock. */
static int daemon_pid(void)
{
	char buf[32] = "";
	int fd = open(DAEMON_LOCK, O_RDONLY | O_CLOEXEC), pid = 0;

	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK && read(fd, buf, sizeof(buf) - 1) > 0)
		pid = atoi(buf);
	close(fd);
	return pid;
}

int do_daemon(int argc, char **argv)
{
	static struct rule_cache cache;
	struct event_sink sink = { .human = stderr, .rule_text = rule_text_cb, .rule_ctx = &cache,
				   .labels = labels_cb, .labels_ctx = &cache };
	static struct limit_watch limits = { .ifd = -1 };
	struct daemon_out out = { .sink = &sink, .rules = &cache, .limits = &limits };
	struct daemon_opts o = {};
	struct agent_config cfg = {};
	struct sink_set *set = NULL;
	struct sbx_loader *l = NULL;
	char **accept = NULL;
	bool have_config;
	int ret, lock = -1;

	ret = parse_opts(argc, argv, &o, OPT_SINKS | OPT_SOCKET);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = load_config(&o, &cfg, &have_config);	/* on error @cfg stays empty */
	if (!ret)
		ret = accept_list(&o, &cfg, &accept);
	if (ret) {
		agent_config_free(&cfg);
		return ret;
	}
	if (o.events_path) {
		sink.json = strcmp(o.events_path, "-") ? fopen(o.events_path, "ae") : stdout;
		if (!sink.json) {
			p_err("cannot open events file '%s': %s", o.events_path, strerror(errno));
			agent_config_free(&cfg);
			free_list(accept);
			return EXIT_USAGE;
		}
	}
	ret = open_sinks(&cfg, have_config, &set);
	if (ret)
		goto out;
	out.set = set;
	sink.forward = forward_cb;
	sink.forward_ctx = &out;
	lock = daemon_lock();
	l = lock >= 0 ? adopt_or_load(o.pin_dir, (const char *const *)accept) : NULL;
	if (l) {	/* also on an adopted set: what this daemon was told, not what the last one was */
		loader__set_event_limits(l, o.coalesce_ms * 1000000ULL, o.rate, o.burst);
		report_start(loader__gaps(l), &sink, &out);
		steer_root(l, o.pin_dir);
		out.rs = open_resolvers(l, o.pin_dir, &sink);
		out.l = l;
		out.pin_dir = o.pin_dir;
		limits.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	}
	/* After the lock: the one daemon replaces a dead one's socket. */
	out.es = out.rs ? open_socket(o.socket, &out) : NULL;
	ret = out.rs ? serve(l, &sink, &out) : 1;
	evsock_free(out.es);	/* watchers see the end of the stream */
	resolvers_free(out.rs);	/* their cgroups' DNS fails until a daemon is back */
	if (limits.ifd >= 0)
		close(limits.ifd);
	for (size_t i = 0; i < limits.n; i++)
		free(limits.e[i].path);
	free(limits.e);
	loader__destroy(l);	/* the pinned links keep the programs attached */
	if (lock >= 0)
		close(lock);
out:
	if (set) {
		sink_set_flush(set);
		sink_set_free(set);
	}
	agent_config_free(&cfg);
	free_list(accept);
	if (sink.json && sink.json != stdout)
		fclose(sink.json);
	rule_cache_free(&cache);
	return ret;
}

int do_unload(int argc, char **argv)
{
	struct daemon_opts o = {};
	int ret, err;

	ret = parse_opts(argc, argv, &o, 0);
	if (ret)
		return ret < 0 ? 0 : ret;
	err = loader__unpin(o.pin_dir);
	if (err == -EXDEV) {
		p_err("unload: %s is not on a BPF file system (bpffs): nothing sbx-bpf pins can be there, "
		      "so nothing is removed", o.pin_dir);
		return EXIT_USAGE;
	}
	if (err) {
		p_err("cannot remove %s: %s", o.pin_dir, strerror(-err));
		return 1;
	}
	return 0;
}

static json_t *fill_json(struct sbx_loader *l, enum loader_fill which)
{
	__u32 used, max;

	if (loader__fill(l, which, &used, &max))
		return json_null();
	return json_pack("{s:i, s:i}", "used", (int)used, "max", (int)max);
}

/*
 * The running daemon's own account (evsock_status() and status_cb()), with
 * the pid of the lock; {"pid", "socket_error"} when it does not answer in 1 s.
 */
static json_t *daemon_health(int pid, const char *socket)
{
	json_t *req = json_pack("{s:s}", "cmd", "status"), *ans = NULL;
	int err = evsock_query(socket, req, 1000, &ans);
	char msg[PATH_MAX + 128];
	const char *why;

	json_decref(req);
	if (!err && json_is_object(ans) && !json_object_get(ans, "error")) {
		json_object_set_new(ans, "pid", json_integer(pid));
		return ans;
	}
	why = err ? strerror(-err) : json_string_value(json_object_get(ans, "error"));
	snprintf(msg, sizeof(msg), "%s: %s", socket, why ? why : "not a status answer");
	json_decref(ans);
	return json_pack("{s:i, s:s}", "pid", pid, "socket_error", msg);
}

/* One line per resolver: what it was asked and what it refused. */
static void print_resolvers(const json_t *rs)
{
	size_t i;
	json_t *r;

	json_array_foreach(rs, i, r) {
		const json_t *c = json_object_get(r, "counters");
#define N(k) json_integer_value(json_object_get(c, k))
		const char *owner = json_string_value(json_object_get(r, "owner"));

		printf("  cgroup %lld%s: %lld queries, refused %lld names, %lld types, %lld over the rate limit; "
		       "%lld names allowed\n",
		       json_integer_value(json_object_get(r, "cgroup_id")), owner && !strcmp(owner, "run") ? " (run)" : "",
		       N("queries"), N("refused_names"), N("refused_types"), N("rate_limited"), N("allowed_names"));
#undef N
	}
}

static void print_daemon(const json_t *d)
{
	const char *err = json_string_value(json_object_get(d, "socket_error"));
	long long pid = json_integer_value(json_object_get(d, "pid"));

	if (!pid) {
		printf("daemon:      not running (events wait in the ring buffer)\n");
		return;
	}
	if (err) {
		printf("daemon:      running (pid %lld), but it does not answer on %s\n", pid, err);
		return;
	}
	printf("daemon:      running (pid %lld, up %llds, %lld events received)\n", pid,
	       json_integer_value(json_object_get(d, "uptime")),
	       json_integer_value(json_object_get(d, "events_received")));
	printf("watchers:    %lld, %lld lines dropped for slow watchers\n",
	       json_integer_value(json_object_get(d, "watchers_connected")),
	       json_integer_value(json_object_get(d, "lines_dropped")));
	printf("resolvers:   %zu (attached cgroups with domain rules)\n",
	       json_array_size(json_object_get(d, "resolvers")));
	print_resolvers(json_object_get(d, "resolvers"));
}

/* `status`: is enforcement pinned, how full are the maps, is a daemon collecting. */
int do_status(int argc, char **argv)
{
	static const char *const names[] = { "sandboxes", "fs_rules", "net_rules", "dns_allow" };
	struct daemon_opts o = {};
	static const char *const stat_names[SBX_STAT__MAX] = {
		[SBX_STAT_EVENTS_LOST] = "events_lost", [SBX_STAT_DENIED] = "denied",
		[SBX_STAT_VIOLATIONS] = "violations", [SBX_STAT_COALESCED] = "coalesced",
		[SBX_STAT_THROTTLED] = "throttled", [SBX_STAT_UNREPORTED] = "unreported",
		[SBX_STAT_THROTTLE_RECORDS] = "throttle_records",
	};
	struct sbx_loader *l;
	__u64 lost = 0, denied = 0;
	char missing[1024] = "";
	json_t *st, *maps, *counters, *daemon;
	bool pinned;
	int ret, pid;

	ret = parse_opts(argc, argv, &o, OPT_SOCKET);
	if (ret)
		return ret < 0 ? 0 : ret;
	pid = daemon_pid();
	daemon = pid ? daemon_health(pid, o.socket) : json_null();
	l = loader__open_pinned(o.pin_dir);	/* errno says why not, for "reason" */
	maps = json_object();
	for (int i = 0; l && i < 4; i++)
		json_object_set_new(maps, names[i], fill_json(l, (enum loader_fill)i));
	if (l) {
		loader__stat(l, SBX_STAT_EVENTS_LOST, &lost);
		loader__stat(l, SBX_STAT_DENIED, &denied);
	}
	/* The kernel's own count of every violation and of what became of each (sbx_abi.h "stats"). */
	counters = json_object();
	for (int i = 0; l && i < SBX_STAT__MAX; i++) {
		__u64 v = 0;

		loader__stat(l, (enum sbx_stat)i, &v);
		json_object_set_new(counters, stat_names[i], json_integer((json_int_t)v));
	}
	if (l) {
		__u64 cpu[SINK_MAX_CPUS];
		int n = loader__stat_percpu(l, SBX_STAT_EVENTS_LOST, cpu, SINK_MAX_CPUS);
		json_t *per = json_array();
		double fill;

		for (int i = 0; i < n && i < SINK_MAX_CPUS; i++)
			json_array_append_new(per, json_integer((json_int_t)cpu[i]));
		json_object_set_new(counters, "events_lost_per_cpu", per);
		if (!loader__ringbuf_fill(l, &fill))
			json_object_set_new(counters, "ringbuf_fill_ratio", json_real(fill));
	}
	pinned = l != NULL;
	st = json_pack("{s:s, s:b, s:o, s:o, s:o, s:I, s:I}", "pin_dir", o.pin_dir, "pinned", pinned,
		       "reason", pinned ? json_null() : json_string(strerror(errno)),
		       "daemon", daemon, "maps", maps,
		       "denied", (json_int_t)denied, "events_lost", (json_int_t)lost);
	json_object_set_new(st, "counters", counters);
	json_object_set_new(st, "missing", l ? hooks__gaps_json(loader__gaps(l)) : json_null());
	/* Whether every read and write of the host pays for file_permission now (loader.h). */
	json_object_set_new(st, "descriptor_judging", l ? json_boolean(loader__fd_judging(l)) : json_null());
	if (l)
		hooks__gaps_names(loader__gaps(l), missing, sizeof(missing));
	loader__destroy(l);
	if (cli.json) {
		print_json(st);
		return pinned ? 0 : 1;
	}
	printf("enforcement: %s\n", json_is_true(json_object_get(st, "pinned")) ? "pinned" : "not pinned");
	if (pinned) {
		printf("missing:     %s\n", missing[0] ? missing : "nothing (every protection loaded)");
		printf("descriptors: %s\n", json_is_true(json_object_get(st, "descriptor_judging")) ?
		       "uses judged (a sandbox may hold descriptors from before its policy)" :
		       "uses not judged (no sandbox needs it: reads and writes cost nothing)");
	}
	print_daemon(json_object_get(st, "daemon"));
	for (int i = 0; i < 4; i++) {
		json_t *m = json_object_get(maps, names[i]);

		if (m)
			printf("%-12s %lld / %lld\n", names[i], json_integer_value(json_object_get(m, "used")),
			       json_integer_value(json_object_get(m, "max")));
	}
	printf("denied:      %llu\nevents lost: %llu\n", (unsigned long long)denied, (unsigned long long)lost);
	printf("violations:  %lld (coalesced %lld, throttled %lld)\n",
	       json_integer_value(json_object_get(counters, "violations")),
	       json_integer_value(json_object_get(counters, "coalesced")),
	       json_integer_value(json_object_get(counters, "throttled")));
	json_decref(st);
	return pinned ? 0 : 1;
}
