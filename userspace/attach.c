// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attach.c — `sbx-bpf attach|detach|list`: put an existing cgroup under a
 * policy in the pinned set the daemon keeps (what an orchestrator calls for
 * a container or an agent it started), take it out again, list them.
 *
 * attach on a cgroup that already has a policy installs the new rules under
 * a new policy id, switches the sandbox entry in one map update, then
 * removes the old rules: at every moment one of the two policies applies.
 *
 * Limits (run's flags, and the policy's "limits") go into the cgroup's own
 * control files. attach goes in this order, each step undone (last first)
 * when a later one fails, so that the old policy, the old limit values and
 * the old record stay when anything fails:
 *   1. check everything: flags, devices, the policy, a daemon to run the
 *      resolver (domain rules), the cgroup, the pinned programs, the
 *      controllers the limits need;
 *   2. the new rules into the maps, under an id nothing uses yet;
 *   3. the controllers into the parent's cgroup.subtree_control;
 *   4. every limit file read, then written (cglimits.h);
 *   5. the record, with what the limit files held before sbx-bpf (and the
 *      domain rules, for the daemon's resolver);
 *   6. with domain rules: the daemon starts the cgroup's resolver from that
 *      record (a re-attach restarts it) and answers its ports;
 *   7. the sandbox entry switched to the new policy (with those ports);
 *   8. the old rules out.
 * Limits come before the switch so the cgroup is never under the new
 * policy without its limits; the rules come before the limits because
 * they are what fails most (full maps) and nothing sees them until the
 * switch; the record comes before the switch because the daemon reads the
 * domain rules from it. detach writes the old limit values back before it
 * removes the policy, and keeps both when a write fails, so it can be run
 * again.
 *
 * Domain rules (allowedDomains, deniedDomains) need a resolver, and an
 * attached cgroup has no sbx-bpf process of its own: the daemon runs one
 * per cgroup (resolvers.h). Without a daemon, an attach with domain rules
 * fails: dropping them silently would leave the cgroup without the names
 * its policy allows (or worse, with names it denies going elsewhere). A
 * resolver that the switch does not follow (step 7 failed) is put right by
 * the daemon within a second, from the old record put back.
 *
 * A re-attach keeps the cgroup's grants (grant.c): file grants are compiled
 * on top of the new policy and installed with it in step 2, connect grants
 * are slots of the cgroup, not of the policy, and stay as they are. detach
 * takes them all away with the policy.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cglimits.h"
#include "cgstat.h"
#include "cli.h"
#include "evsock.h"
#include "fdscan.h"
#include "forget.h"
#include "fsrules.h"
#include "grants.h"
#include "hooks.h"
#include "labels.h"
#include "loader.h"
#include "netrules.h"
#include "policy.h"
#include "sbx_limits.h"
#include "sbxstate.h"
#include "util.h"

#define PIN_DIR_DEFAULT	"/sys/fs/bpf/sbx"
/* --fresh: how long the cgroup may take to freeze (and thaw) for its descriptors to be looked at. */
#define FRESH_FREEZE_MS	2000
/* The daemon answers a resolver request at once; this is for a daemon that hangs. */
#define RESOLVER_MS	5000
/* The limit flags (--cpu, --memory, …) are limits_flag_name(0..): OPT_LIMIT + their index. */
#define OPT_LIMIT	512
#define MAX_LIMIT_FLAGS	16

struct attach_opts {
	const char *pin_dir;
	const char *policy_file;
	const char *preset;
	bool audit;
	const char *accept;		/* --accept-missing HOOK[,HOOK…] */
	bool fresh;			/* --fresh: processes join only as an engine starts them */
	bool from_exec;			/* --from-exec: in force from the cgroup's first exec */
	const char *target;
	struct sbx_limits *flag_limits;	/* attach only: limit flags are refused elsewhere */
	json_t *labels;			/* --label KEY=VALUE…; NULL: none given (a re-attach keeps its own) */
	const char *home, *cwd;		/* "~" and "." of the policy, when not the caller's (a container's) */
	bool need_daemon;		/* the OCI hook's: no daemon to stream the events, no attach */
};

/* What attach does to the cgroup's limit files: to check, make, record or undo. */
struct limits_change {
	const char *path;		/* the cgroup */
	char parent[PATH_MAX];
	struct limit_write want[LIMITS_WRITES_MAX];
	size_t nr_want;
	unsigned ctrl;			/* controllers the limits need (CGROUP_CTRL_*) */
	unsigned enabled;		/* those attach enabled in the parent */
	struct cglimits_plan plan;
	struct limit_write restore[LIMITS_WRITES_MAX];	/* the originals, for the record */
	size_t nr_restore;
	struct cgfile_ops ops;
};

static void attach_usage(FILE *out)
{
	fprintf(out,
		"Usage: sbx-bpf attach CGROUP (--policy FILE | --preset NAME) [--audit] [LIMITS] [--pin-dir DIR]\n"
		"                     [--accept-missing HOOK[,HOOK…]] [--fresh] [--from-exec] [--label KEY=VALUE]…\n"
		"       sbx-bpf detach CGROUP [--pin-dir DIR]\n"
		"       sbx-bpf list [--json] [--pin-dir DIR]\n"
		"\n"
		"CGROUP: a sandbox name, or a cgroup v2 path (as for 'stats'). Needs the\n"
		"programs pinned by 'sbx-bpf daemon'. attach replaces a policy atomically;\n"
		"the cgroup's grants ('sbx-bpf grant') stay. detach ends them.\n"
		"A policy with domain rules (allowedDomains, deniedDomains) needs the daemon\n"
		"running: it runs the cgroup's resolver. Without it, attach fails.\n"
		"If the pinned programs lack a protection (a hook this kernel did not load,\n"
		"accepted by the daemon), attach refuses unless --accept-missing or the\n"
		"policy's \"acceptMissing\" names that hook too.\n"
		"Reads and writes through descriptors the cgroup's processes opened before\n"
		"the policy (or carry in later) are judged again on every use. --fresh says\n"
		"processes join this cgroup only as fresh ones (a container engine's, at\n"
		"createRuntime): its processes are then frozen and looked at, and only a\n"
		"descriptor of a file, directory or memory device among them turns judging on.\n"
		"--from-exec: the policy goes in force at the cgroup's first exec, not before: a\n"
		"container engine attaching at createRuntime still mounts, pivots and makes\n"
		"device nodes for the container, then execs its command, which is judged (only\n"
		"for a cgroup without a policy; 'list' shows it as arming until then).\n"
		"--label KEY=VALUE (up to 16; KEY 1-32 of A-Z a-z 0-9 . _ / -, VALUE up to 256\n"
		"bytes of UTF-8) names the sandbox in every event of the cgroup, in every sink,\n"
		"and in 'list'. A re-attach without --label keeps the labels it had.\n"
		"\n"
		"LIMITS: the flags of 'run' but --timeout (--cpu 150%%, --cpu-weight N, --memory 2G,\n"
		"--memory-high 1G, --swap-max 0, --io-read-bps DEV=5M, --io-write-bps DEV=5M,\n"
		"--io-read-iops DEV=N, --io-write-iops DEV=N, --pids 256), over the policy's\n"
		"\"limits\". They go into CGROUP's files (memory.oom.group=1 with a memory limit);\n"
		"the controllers they need are enabled in its parent. A new attach replaces\n"
		"the limits of the last one. detach writes back what the files held before\n"
		"the first attach.\n");
}

/* The fixed options, then one per limit flag (OPT_LIMIT + i). */
static const struct option *attach_options(void)
{
	static const struct option fixed[] = {
		{ "pin-dir", required_argument, NULL, 'd' },
		{ "policy", required_argument, NULL, 'p' },
		{ "preset", required_argument, NULL, 'P' },
		{ "audit", no_argument, NULL, 'a' },
		{ "accept-missing", required_argument, NULL, 'A' },
		{ "fresh", no_argument, NULL, 'F' },
		{ "label", required_argument, NULL, 'L' },
		{ "from-exec", no_argument, NULL, 'X' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static struct option all[ARRAY_SIZE(fixed) + MAX_LIMIT_FLAGS];
	size_t n = 0;

	if (all[0].name)
		return all;
	for (; fixed[n].name; n++)
		all[n] = fixed[n];
	for (size_t i = 0; limits_flag_name(i) && i < MAX_LIMIT_FLAGS; i++, n++)
		all[n] = (struct option){ limits_flag_name(i), required_argument, NULL,
					  OPT_LIMIT + (int)i };
	return all;
}

/* One limit flag of attach: 0 or EXIT_USAGE after saying why. */
static int limit_flag(struct sbx_limits *lim, int c)
{
	const char *name = limits_flag_name((size_t)(c - OPT_LIMIT));
	char msg[512];

	if (!strcmp(name, "timeout")) {
		p_err("attach: --timeout is for 'run' only: an attached cgroup has no command to time");
		return EXIT_USAGE;
	}
	if (limits_set(lim, name, optarg, msg, sizeof(msg))) {
		p_err("attach: %s", msg);
		return EXIT_USAGE;
	}
	return 0;
}

/* One --label: 0, or EXIT_USAGE after saying why. */
static int label_opt(struct attach_opts *o, const char *kv)
{
	char why[256];

	if (!o->labels && !(o->labels = json_object()))
		return EXIT_USAGE;
	if (labels_add(o->labels, kv, why, sizeof(why))) {
		p_err("attach: --label: %s", why);
		return EXIT_USAGE;
	}
	return 0;
}

static int parse(int argc, char **argv, struct attach_opts *o, int nargs)
{
	int c;

	o->pin_dir = PIN_DIR_DEFAULT;
	if (o->flag_limits)
		limits_init(o->flag_limits);
	while ((c = getopt_long(argc, argv, "jvh", attach_options(), NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		if (c >= OPT_LIMIT && c < OPT_LIMIT + MAX_LIMIT_FLAGS) {
			if (!o->flag_limits)
				goto usage;
			if (limit_flag(o->flag_limits, c))
				return EXIT_USAGE;
			continue;
		}
		if (!o->flag_limits && strchr("AFXL", c))	/* options of attach only */
			goto usage;
		switch (c) {
		case 'd': o->pin_dir = optarg; break;
		case 'p': o->policy_file = optarg; break;
		case 'P': o->preset = optarg; break;
		case 'a': o->audit = true; break;
		case 'A': o->accept = optarg; break;
		case 'F': o->fresh = true; break;
		case 'X': o->from_exec = true; break;
		case 'L':
			if (label_opt(o, optarg))
				return EXIT_USAGE;
			break;
		case 'h': attach_usage(stdout); return -1;
		default: goto usage;
		}
	}
	if (argc - optind != nargs)
		goto usage;
	o->target = nargs ? argv[optind] : NULL;
	return 0;
usage:
	attach_usage(stderr);
	return EXIT_USAGE;
}

/* --accept-missing's hooks (comma-separated) into the policy's list. 0 or -1 after saying why. */
static int add_accepted(struct policy *p, const char *list)
{
	char bad[64] = "";
	int err = policy_accept_missing_list(p, list, bad, sizeof(bad));

	if (err)
		p_err("attach: --accept-missing: '%s' %s", bad, err == -ENOENT ?
		      "is not a hook of sbx-bpf's programs (see 'sbx-bpf hooks')" : strerror(-err));
	return err ? -1 : 0;
}

/* Does @p allow writes to "/" (for a container: '.' where its working directory is "/")? */
static bool writes_everywhere(const struct policy *p)
{
	for (size_t i = 0; i < p->nr_rules; i++)
		if (p->rules[i].kind == RULE_ALLOW_WRITE && p->rules[i].scope == RULE_ABSOLUTE &&
		    !strcmp(p->rules[i].path, "/"))
			return true;
	return false;
}

static int load(const struct attach_opts *o, struct policy *p)
{
	char home[PATH_MAX], cwd[PATH_MAX];
	struct policy_diag diag = {};
	struct policy_env env;
	int err;

	/* A container's own "~" and "." (the OCI hook): the caller's would mean nothing inside it. */
	if (o->home && o->cwd) {
		env = (struct policy_env){ .home = o->home, .cwd = o->cwd };
		err = 0;
	} else {
		err = policy_env_default(&env, home, sizeof(home), cwd, sizeof(cwd));
	}
	if (!err)
		err = o->policy_file ? policy_load(p, o->policy_file, &env, &diag) :
				       policy_load_preset(p, o->preset, &env, &diag);
	for (size_t i = 0; i < diag.nr_warnings; i++)
		p_warn("%s", diag.warnings[i]);
	if (!err)
		err = policy_add_mandatory(p);
	if (!err && o->accept && add_accepted(p, o->accept))
		return EXIT_USAGE;
	if (!err) {	/* what the kernel cannot take (too many port ranges) is the policy's fault too */
		struct net_compiled net;

		err = net_compile(p, 0, &net, diag.error, sizeof(diag.error));
		net_compiled_free(&net);
	}
	if (err)
		p_err("%s", diag.error[0] ? diag.error : strerror(-err));
	if (!err && o->cwd && writes_everywhere(p)) {
		p_err("attach: %s lets the container write everywhere (allowWrite '/'; '.' is its working "
		      "directory %s): give the container another working directory, or use a policy without it",
		      p->name, o->cwd);
		err = -EINVAL;
	}
	return err ? EXIT_USAGE : 0;
}

/*
 * Sandboxes on @path's ancestors: the kernel judges at most SBX_NEST_MAX
 * levels for one task (a deeper one is denied everything), so attach
 * refuses to go deeper. How many, or -errno when they cannot be read.
 */
static int ancestors_with_policy(struct sbx_loader *l, const char *path)
{
	struct cgroup_ids above;
	struct sbx_sandbox sb;
	int err = cgroup_ancestor_ids(path, &above), n = 0;

	for (int i = 0; !err && i < above.n; i++)
		n += !loader__get_sandbox(l, above.id[i], &sb);
	return err ?: n;
}

/* --- limits ---------------------------------------------------------------------- */

/*
 * The limit writes of this attach: the policy's limits with the flags over
 * them, without a timeout (no command to time). memory.oom.group only with
 * a memory limit: a cgroup someone else set up keeps its OOM behaviour
 * unless attach limits its memory. 0 or EXIT_USAGE after saying why.
 */
static int plan_writes(const struct attach_opts *o, const struct policy *p, struct limits_change *lc)
{
	struct sbx_limits lim = p->limits;
	int n;

	if (lim.timeout_ms != LIMIT_UNSET)
		p_warn("attach: the policy's limits.timeout is ignored: an attached cgroup has no command to time");
	if (limits_merge(&lim, o->flag_limits)) {
		p_err("attach: more than %d devices with io limits", LIMITS_IO_MAX);
		return EXIT_USAGE;
	}
	lim.timeout_ms = LIMIT_UNSET;
	if (lim.memory_max == LIMIT_UNSET && lim.memory_high == LIMIT_UNSET && lim.swap_max == LIMIT_UNSET)
		lim.oom_group = false;
	lc->ctrl = limits_controllers(&lim);
	n = limits_writes(&lim, lc->want, ARRAY_SIZE(lc->want));
	if (n < 0) {
		p_err("attach: too many limits: %s", strerror(-n));
		return EXIT_USAGE;
	}
	lc->nr_want = (size_t)n;
	return 0;
}

/*
 * The steps from the limits of the last attach (its record keeps what the
 * files held before it) to this one's. 0, or 1 after saying why.
 */
static int plan_steps(struct limits_change *lc, __u64 cgid, const char *path)
{
	struct limit_write saved[LIMITS_WRITES_MAX];
	json_t *st = state_read(SBX_STATE_DIR, cgid);
	int n = state_limits(st, "limits_restore", saved, ARRAY_SIZE(saved));

	json_decref(st);
	lc->path = path;
	lc->ops = cgfile_dir(path);
	snprintf(lc->parent, sizeof(lc->parent), "%s", path);
	*strrchr(lc->parent, '/') = '\0';
	if (n < 0) {
		p_err("attach: the record %s/%llu.json holds limit values this build cannot read: %s",
		      SBX_STATE_DIR, (unsigned long long)cgid, strerror(-n));
		return 1;
	}
	n = cglimits_plan(&lc->plan, lc->want, lc->nr_want, saved, (size_t)n);
	if (n)
		p_err("attach: too many limits: %s", strerror(-n));
	return n ? 1 : 0;
}

/*
 * The controllers the limits need must be there for the cgroup, or its
 * parent must be able to enable them. Checked before anything changes.
 * 0, or 1 after naming the file.
 */
static int check_controllers(struct limits_change *lc)
{
	unsigned have = 0, avail = 0, missing;
	int err;

	if (!lc->nr_want)
		return 0;
	err = cgroup_controllers_of(lc->path, &have);
	if (err) {
		p_err("attach: cannot read %s/cgroup.controllers: %s", lc->path, strerror(-err));
		return 1;
	}
	lc->ctrl &= ~have;	/* what the parent has to enable */
	if (!lc->ctrl)
		return 0;
	err = cgroup_controllers_of(lc->parent, &avail);
	if (err) {
		p_err("attach: cannot read %s/cgroup.controllers: %s", lc->parent, strerror(-err));
		return 1;
	}
	missing = lc->ctrl & ~avail;
	for (unsigned i = 0; i < CGROUP_CTRL__COUNT; i++) {
		if (missing & (1u << i)) {
			p_err("attach: the %s controller is not in %s/cgroup.controllers, so its limits "
			      "cannot be set on %s: enable it in the cgroups above first",
			      cgroup_controller_name(i), lc->parent, lc->path);
			return 1;
		}
	}
	return 0;
}

/* Steps 3 and 4: controllers, then the files, all or none. 0, or 1 after saying why. */
static int limits_in(struct limits_change *lc)
{
	char list[128];
	size_t failed = 0;
	int err;

	if (!lc->plan.nr)
		return 0;
	err = cgroup_subtree_control(lc->parent, lc->ctrl, true);
	if (err) {
		cgroup_controller_list(lc->ctrl, '+', list, sizeof(list));
		p_err("attach: cannot write '%s' to %s/cgroup.subtree_control: %s%s", list, lc->parent,
		      strerror(-err), err == -EBUSY ? " (the parent holds processes: cgroup v2 gives "
		      "controllers only to the children of a cgroup without processes of its own)" : "");
		return 1;
	}
	lc->enabled = lc->ctrl;
	err = cglimits_snapshot(&lc->plan, &lc->ops, &failed);
	if (err)
		p_err("attach: cannot read %s/%s: %s", lc->path, lc->plan.step[failed].w.file, strerror(-err));
	else if ((err = cglimits_apply(&lc->plan, &lc->ops, &failed)))
		p_err("attach: the kernel refused %s/%s = '%s': %s", lc->path, lc->plan.step[failed].w.file,
		      lc->plan.step[failed].w.value, strerror(-err));
	if (err) {
		/* apply put back what it had written */
		if (cgroup_subtree_control(lc->parent, lc->enabled, false))
			p_warn("cannot disable the controllers attach enabled in %s/cgroup.subtree_control",
			       lc->parent);
		return 1;
	}
	lc->nr_restore = cglimits_originals(&lc->plan, lc->restore, ARRAY_SIZE(lc->restore));
	return 0;
}

/* Undo limits_in (a later step failed): the files, then the controllers. */
static void limits_out(struct limits_change *lc)
{
	int err = cglimits_rollback(&lc->plan, &lc->ops);

	if (err)
		p_warn("cannot put back every limit value of %s: %s", lc->path, strerror(-err));
	if (lc->enabled && cgroup_subtree_control(lc->parent, lc->enabled, false))
		p_warn("cannot disable the controllers attach enabled in %s/cgroup.subtree_control",
		       lc->parent);
}

/* --- grants kept by a re-attach ---------------------------------------------------- */

/* The grants of the record being replaced: they stay, on the new policy id. */
struct kept_grants {
	json_t *old;			/* the old record */
	struct grant *g;
	size_t n;
	bool dropped;			/* unreadable: they end, connect grants too */
	__u32 next_id;
	__u64 until;			/* the file grants' expiry on the new policy */
};

static void keep_grants(struct kept_grants *k, __u64 cgid)
{
	__u64 until;

	k->old = state_read(SBX_STATE_DIR, cgid);
	if (grants_from_record(k->old, &k->g, &k->n, &k->next_id, &until)) {
		p_warn("attach: the grants in %s/%llu.json cannot be read: they end with the old policy",
		       SBX_STATE_DIR, (unsigned long long)cgid);
		k->n = 0;
		k->dropped = true;
	}
}

/*
 * The file grants on top of the new policy: @fs becomes the whole entry set
 * (grants_fs_entries), ending with the earliest of them. 0 or -errno.
 */
static int grants_on(struct kept_grants *k, const struct policy *p, __u32 policy_id,
		     struct fs_compiled *fs)
{
	struct fs_compiled with, all;
	int err;

	if (!k->n)
		return 0;
	err = grants_compile_fs(p, k->g, k->n, cli_boottime_ns(), policy_id, &with, &k->until);
	if (err)
		return err;
	err = grants_fs_entries(fs, &with, k->until, true, &all);
	fs_compiled_free(&with);
	if (err)
		return err;
	fs_compiled_free(fs);
	*fs = all;
	return 0;
}

/* Grants outlive a policy change: said, since whoever replaces a policy may not expect it. */
static void say_kept(const struct kept_grants *k, const char *path)
{
	__u64 now = cli_boottime_ns();
	size_t live = 0;

	for (size_t i = 0; i < k->n; i++)
		live += k->g[i].expires_ns > now;
	if (live)
		p_warn("attach: %zu live grant%s of %s stay in force on the new policy ('sbx-bpf grants %s' "
		       "lists them, 'sbx-bpf revoke %s --all' ends them)", live, live == 1 ? "" : "s", path,
		       path, path);
}

static void kept_grants_free(struct kept_grants *k)
{
	json_decref(k->old);
	free(k->g);
}

/* --- the daemon's resolver ---------------------------------------------------------- */

static void no_daemon(int err)
{
	if (err == -ENOENT || err == -ECONNREFUSED)
		p_err("allowedDomains on an attached cgroup need the daemon's resolver: start 'sbx-bpf daemon'");
	else
		p_err("allowedDomains on an attached cgroup need the daemon's resolver, and the daemon at %s "
		      "does not answer: %s", EVSOCK_PATH, strerror(-err));
}

/* Step 1: a daemon to ask, before anything changes. 0, or 1 after saying why. */
static int check_daemon(void)
{
	json_t *req = json_pack("{s:s}", "cmd", "status"), *ans = NULL;
	int err = req ? evsock_query(EVSOCK_PATH, req, RESOLVER_MS, &ans) : -ENOMEM;

	json_decref(req);
	json_decref(ans);
	if (err)
		no_daemon(err);
	return err ? 1 : 0;
}

/*
 * Step 6: the daemon starts (or restarts) the resolver of @cgid from its
 * record, and its ports go into @sb. 0, or 1 after saying why.
 */
static int resolver_in(__u64 cgid, struct sbx_sandbox *sb)
{
	json_t *req = json_pack("{s:s, s:I}", "cmd", "resolver", "cgroup", (json_int_t)cgid), *ans = NULL;
	int err = req ? evsock_query(EVSOCK_PATH, req, RESOLVER_MS, &ans) : -ENOMEM;
	const char *why = json_string_value(json_object_get(ans, "error"));
	json_int_t p4 = json_integer_value(json_object_get(ans, "port4"));
	json_int_t p6 = json_integer_value(json_object_get(ans, "port6"));
	int ret = 1;

	json_decref(req);
	if (err) {
		no_daemon(err);
	} else if (why) {
		p_err("attach: the daemon cannot run a resolver for the cgroup's domain rules: %s", why);
	} else if (p4 <= 0 || p4 > 65535 || p6 < 0 || p6 > 65535) {
		p_err("attach: the daemon's answer names no resolver ports (is it of another build?)");
	} else {
		sb->dns_port4 = (__u16)p4;
		sb->dns_port6 = (__u16)p6;
		ret = 0;
	}
	json_decref(ans);
	return ret;
}

/*
 * The daemon watches the new sandbox's limits at once, rather than from
 * its next second on: a container that hits one and ends within that
 * second is reported too. Best effort: without a daemon nobody reports.
 */
static void watch_in(__u64 cgid)
{
	json_t *req = json_pack("{s:s, s:I}", "cmd", "watch", "cgroup", (json_int_t)cgid), *ans = NULL;

	if (req)
		evsock_query(EVSOCK_PATH, req, RESOLVER_MS, &ans);
	json_decref(req);
	json_decref(ans);
}

/*
 * The resolver of @cgid goes (detach, or a re-attach without domain
 * rules): at once rather than at the daemon's next check. Best effort: no
 * daemon, no resolver.
 */
static void resolver_out(__u64 cgid)
{
	json_t *req = json_pack("{s:s, s:I}", "cmd", "resolver-stop", "cgroup", (json_int_t)cgid), *ans = NULL;

	if (req && !evsock_query(EVSOCK_PATH, req, RESOLVER_MS, &ans) && json_object_get(ans, "error"))
		p_warn("the daemon did not stop the resolver of cgroup %llu: %s (it does within a second)",
		       (unsigned long long)cgid, json_string_value(json_object_get(ans, "error")));
	json_decref(req);
	json_decref(ans);
}

static bool had_resolver(const json_t *record)
{
	return json_is_object(json_object_get(record, "resolver"));
}

/* --- the policy -------------------------------------------------------------------- */

/* Step 2: the rules into the maps, under sb->policy_id. 0, or 1 after saying why. */
static int rules_in(struct sbx_loader *l, const struct policy *p, bool audit, bool resolver,
		    struct sbx_sandbox *sb, struct fs_compiled *fs, struct net_compiled *net,
		    struct kept_grants *kept)
{
	char why[256] = "";
	int err;

	err = net_compile(p, sb->policy_id, net, why, sizeof(why));
	if (!err)
		err = fs_compile(p, sb->policy_id, fs);
	if (!err)
		err = grants_on(kept, p, sb->policy_id, fs);
	if (!err)
		err = fs_install(l, fs) ?: net_install(l, net);
	if (err) {
		p_err("cannot install the policy: %s", why[0] ? why : rules_install_strerror(err));
		return 1;
	}
	/*
	 * Without a resolver (no names to judge: it would refuse every one),
	 * port 53 is judged like any other port, and no answer opens an address.
	 */
	sb->flags = (audit ? SBX_SANDBOX_AUDIT : 0) |
		    (resolver ? net->sandbox_flags : net->sandbox_flags & ~SBX_SANDBOX_DNS);
	sb->any_depth_mask = fs->any_depth_mask;
	return 0;
}

/* Step 7: the sandbox entry, new or switched in one update. 0, or 1 after saying why. */
static int switch_to(struct sbx_loader *l, __u64 cgid, const struct sbx_sandbox *sb, bool had)
{
	int err = had ? loader__replace_sandbox(l, cgid, sb) :
			loader__add_sandbox(l, cgid, sb);

	if (err)
		p_err("cannot install the policy: %s", sandbox_install_strerror(err));
	return err ? 1 : 0;
}

/*
 * Step 5. Without the record events lose their rule texts, which attach
 * survives as before; limit values to put back, grants and domain rules
 * are not, since detach could not put the values back, nor grant see the
 * grants, nor the daemon run the resolver. 0 with *@written, or 1 after
 * saying why.
 */
static int record(const struct state_entry *e, const struct policy *p, bool *written)
{
	int err = state_write(SBX_STATE_DIR, e, p);

	*written = !err;
	if (!err)
		return 0;
	if (!e->nr_restore && !json_array_size(e->grants) && !e->resolver) {
		p_warn("cannot record the policy under %s: events will not name rules", SBX_STATE_DIR);
		return 0;
	}
	p_err("attach: cannot record the %s under %s: %s", e->nr_restore ? "old limit values" :
	      e->resolver ? "domain rules for the daemon's resolver" : "grants", SBX_STATE_DIR, strerror(-err));
	return 1;
}

/* Undo record(): the old record back (@old), or none. */
static void record_back(__u64 cgid, const json_t *old)
{
	int err = old ? state_write_record(SBX_STATE_DIR, cgid, old) : state_remove(SBX_STATE_DIR, cgid);

	if (err)
		p_warn("attach: cannot put back the record %s/%llu.json (%s): events may name the wrong rules",
		       SBX_STATE_DIR, (unsigned long long)cgid, strerror(-err));
}

/* Steps 5 to 7 (see the top of the file). 0, or 1 after saying why (the record is put back). */
static int switch_all(struct sbx_loader *l, const struct state_entry *e, const struct policy *p,
		      struct sbx_sandbox *sb, bool had, const json_t *old_record)
{
	bool written;
	int ret = record(e, p, &written);

	if (!ret && e->resolver)
		ret = resolver_in(e->cgroup_id, sb);
	if (!ret)
		ret = switch_to(l, e->cgroup_id, sb, had);
	if (ret && written)
		record_back(e->cgroup_id, old_record);
	return ret;
}

/*
 * Step 4: may the cgroup's tasks hold descriptors this policy never saw
 * opened? Yes after an attach before (they were judged by another policy),
 * without --fresh (a process may still join carrying some), or when it
 * cannot be told. With --fresh, a populated cgroup is frozen and its
 * processes' descriptors looked at; it stays frozen until the policy is in
 * force (*@thaw: thaw_after()), so none opens one meanwhile.
 */
static bool held_from_before(const char *path, bool fresh, bool had, bool *thaw)
{
	char p[PATH_MAX + 16], v[16] = "";

	*thaw = false;
	if (had || !fresh)
		return true;
	snprintf(p, sizeof(p), "%s/cgroup.events", path);
	if (read_file(p, v, sizeof(v)) > 0 && strstr(v, "populated 0"))
		return false;
	snprintf(p, sizeof(p), "%s/cgroup.freeze", path);
	if (read_file(p, v, sizeof(v)) <= 0)
		return true;	/* the root, or no freezer: cannot hold them still */
	if (v[0] == '0') {
		if (cgstat_freeze(path, true, FRESH_FREEZE_MS)) {
			cgstat_freeze(path, false, FRESH_FREEZE_MS);
			return true;
		}
		*thaw = true;
	}
	return fdscan_cgroup(path) != 0;
}

static void thaw_after(const char *path, bool thaw)
{
	if (thaw && cgstat_freeze(path, false, FRESH_FREEZE_MS))
		p_warn("attach: %s is still frozen; thaw it with 'sbx-bpf thaw %s'", path, path);
}

/*
 * The replaced policy's rules out, once no call can still be judging by
 * them: a call that read the old entry and looked its rules up after they
 * were gone would find no denyRead rule, and reads are allowed by default.
 */
static void purge_replaced(struct sbx_loader *l, __u32 policy_id)
{
	int err = loader__wait_judging();

	if (err)
		p_warn("attach: cannot wait for judging calls to end (membarrier: %s); "
		       "a call that started under the old policy may find its rules gone",
		       strerror(-err));
	loader__purge_policy(l, policy_id);
}

/* Steps 2 to 8 (see the top of the file). 0, or 1 after saying why. */
static int install(struct sbx_loader *l, const struct policy *p, const struct attach_opts *o, bool audit,
		   __u64 cgid, struct limits_change *lc)
{
	struct fs_compiled fs = {};
	struct net_compiled net = {};
	struct sbx_sandbox old, sb = { .policy_id = loader__new_policy_id(l) };
	bool had = !loader__get_sandbox(l, cgid, &old), resolver = net_wants_resolver(p);
	struct state_entry e = { .cgroup = lc->path, .cgroup_id = cgid, .policy_id = sb.policy_id,
				 .audit = audit, .limits = lc->want, .nr_limits = lc->nr_want,
				 .restore = lc->restore, .resolver = resolver };
	struct kept_grants kept = {};
	bool thaw = false;
	int ret;

	if (had && o->from_exec) {
		/* Switching an enforced cgroup to "not yet" would leave it open until some exec. */
		p_err("attach: %s has a policy already; --from-exec is for a cgroup's first attach", lc->path);
		return EXIT_USAGE;
	}
	if (had)
		keep_grants(&kept, cgid);
	e.labels = o->labels ? o->labels : json_object_get(kept.old, "labels");
	ret = rules_in(l, p, audit, resolver, &sb, &fs, &net, &kept);
	if (!ret && o->from_exec)
		sb.flags |= SBX_SANDBOX_ARMING;
	if (!ret && held_from_before(lc->path, o->fresh, had, &thaw) && cli_judge_uses(l, &sb))
		ret = 1;
	/* Even with none left, so that ids stay unique in the cgroup's record. */
	if (!kept.dropped && json_is_array(json_object_get(kept.old, "grants"))) {
		e.grants = json_object_get(kept.old, "grants");
		e.next_grant_id = kept.next_id;
		e.grants_fs_until_ns = kept.until;
	}
	if (!ret && !(ret = limits_in(lc))) {
		e.nr_restore = lc->nr_restore;
		/* The counters as they are: the daemon reports what the limits refuse from here on. */
		e.watch_limits = true;
		e.oom_kill_at = cgstat_keyed_file(lc->path, "memory.events", "oom_kill");
		e.pids_max_at = cgstat_keyed_file(lc->path, "pids.events", "max");
		ret = switch_all(l, &e, p, &sb, had, kept.old);
		if (ret)
			limits_out(lc);
	}
	thaw_after(lc->path, thaw);
	if (ret && (sb.flags & SBX_SANDBOX_FD_JUDGE))
		loader__fd_judging_settle(l);
	if (ret)
		loader__purge_policy(l, sb.policy_id);
	else if (had)	/* the new policy is in force */
		purge_replaced(l, old.policy_id);
	if (!ret && kept.dropped)
		loader__purge_dns(l, cgid);
	if (!ret && !resolver && had_resolver(kept.old))
		resolver_out(cgid);
	if (!ret)
		say_kept(&kept, lc->path);
	if (!ret)
		watch_in(cgid);
	kept_grants_free(&kept);
	fs_compiled_free(&fs);
	net_compiled_free(&net);
	return ret;
}

/*
 * The programs look for sandboxes from level 1 to SBX_CGROUP_DEEPEST of a
 * task's cgroups: a policy on the root, or deeper, would judge no task
 * below it. 0, or EXIT_USAGE after saying why.
 */
static int check_level(const char *path, int level)
{
	if (level < 0) {
		p_err("attach: cannot tell how deep %s lies below the cgroup2 root", path);
		return 1;
	}
	if (level == 0) {
		p_err("attach: %s is the cgroup2 root, which cannot be a sandbox (the programs look for "
		      "sandboxes below it, and it has no limit files): attach a cgroup below it", path);
		return EXIT_USAGE;
	}
	if (level > SBX_CGROUP_DEEPEST) {
		p_err("attach: %s lies %d levels below the cgroup2 root; the programs look for sandboxes "
		      "at most %d levels down: attach a cgroup higher up", path, level, SBX_CGROUP_DEEPEST);
		return EXIT_USAGE;
	}
	return 0;
}

/* Everything after the options (see the top of the file). 0, or 1 / EXIT_USAGE after saying why. */
static int attach_with(const struct attach_opts *o)
{
	struct limits_change lc = {};
	struct policy p = {};
	struct sbx_loader *l = NULL;
	char path[PATH_MAX];
	int ret, lock = -1, level = 0, n = 0;
	__u64 cgid;

	if (!o->policy_file == !o->preset) {
		p_err("attach: give exactly one of --policy and --preset");
		return EXIT_USAGE;
	}
	ret = load(o, &p);
	if (!ret)
		ret = plan_writes(o, &p, &lc);
	if (!ret && (o->need_daemon || net_wants_resolver(&p)))
		ret = check_daemon();
	if (!ret && !(cgid = cli_cgroup_target(o->target, path, sizeof(path), &level)))
		ret = 1;
	if (!ret)
		ret = check_level(path, level);
	if (!ret && !(l = cli_open_pinned(o->pin_dir)))
		ret = 1;
	/* The daemon accepted what its set lacks; this policy must too. */
	if (!ret && cli_gaps_accepted(loader__gaps(l), (const char *const *)p.accept_missing,
				      "--accept-missing (or \"acceptMissing\" in the policy)"))
		ret = 1;
	if (!ret && (n = ancestors_with_policy(l, path)) < 0) {
		p_err("attach: cannot read the cgroups above %s: %s", path, strerror(-n));
		ret = 1;
	}
	if (!ret && n >= SBX_NEST_MAX) {
		p_err("attach: %s already lies below %d cgroups with policies, the most one task can have",
		      path, SBX_NEST_MAX - 1);
		ret = EXIT_USAGE;
	}
	if (!ret && (lock = cli_lock_records()) < 0)
		ret = 1;
	if (!ret)
		ret = plan_steps(&lc, cgid, path) ?: check_controllers(&lc);
	if (!ret)
		ret = install(l, &p, o, o->audit || p.mode == POLICY_AUDIT, cgid, &lc);
	if (lock >= 0)
		close(lock);
	loader__destroy(l);
	policy_free(&p);
	return ret;
}

int do_attach(int argc, char **argv)
{
	struct sbx_limits flag_limits;
	struct attach_opts o = { .flag_limits = &flag_limits };
	int ret = parse(argc, argv, &o, 1);

	if (!ret)
		ret = attach_with(&o);
	json_decref(o.labels);
	return ret < 0 ? 0 : ret;
}

int cli_attach(const struct cli_attach_req *r)
{
	struct sbx_limits flag_limits;
	struct attach_opts o = { .pin_dir = r->pin_dir ?: PIN_DIR_DEFAULT, .policy_file = r->policy_file,
				 .preset = r->preset, .fresh = r->fresh, .from_exec = r->from_exec,
				 .home = r->home, .cwd = r->cwd,
				 .target = r->cgroup,
				 .flag_limits = &flag_limits, .labels = (json_t *)r->labels,
				 .need_daemon = true };

	limits_init(&flag_limits);
	return attach_with(&o);
}

/*
 * Write back what the limit files held before the first attach. 0, or 1
 * after naming the file: the policy and the record then stay, so detach
 * can be run again.
 */
static int restore_limits(__u64 cgid, const char *path)
{
	struct limit_write saved[LIMITS_WRITES_MAX];
	struct cgfile_ops ops = cgfile_dir(path);
	json_t *st = state_read(SBX_STATE_DIR, cgid);
	int n = state_limits(st, "limits_restore", saved, ARRAY_SIZE(saved));
	size_t failed = 0;
	int err;

	json_decref(st);
	if (n < 0) {
		p_warn("detach: the record of %s holds limit values this build cannot read (%s): the "
		       "limits stay as they are", path, strerror(-n));
		return 0;
	}
	err = cglimits_restore(saved, (size_t)n, &ops, &failed);
	if (err)
		p_err("detach: cannot write '%s' back to %s/%s: %s; the policy stays, run detach again",
		      saved[failed].value, path, saved[failed].file, strerror(-err));
	return err ? 1 : 0;
}

/*
 * The daemon stops the cgroup's resolver (its DNS fails from here on), so
 * that no answer of it comes after the purge. The steering pins go with
 * the entry (sandbox_forget), also for a daemon that is not running.
 */
static void detach_resolver(__u64 cgid)
{
	json_t *st = state_read(SBX_STATE_DIR, cgid);

	if (had_resolver(st))
		resolver_out(cgid);
	json_decref(st);
}

/*
 * Take @cgid's policy away: the limit values back into @path's files (NULL:
 * the cgroup is gone, and its files with it), then the entry, its rules,
 * grants, resolver and record. 0, or 1 after saying why.
 */
static int detach_id(const char *pin_dir, __u64 cgid, const char *path)
{
	struct sbx_loader *l = cli_open_pinned(pin_dir);
	struct sbx_sandbox sb;
	int ret, lock;

	if (!l)
		return 1;
	lock = cli_lock_records();
	ret = lock < 0 ? 1 : loader__get_sandbox(l, cgid, &sb);
	if (ret && lock >= 0)
		p_err("detach: %s has no policy", path ?: "the cgroup");
	if (!ret && path)
		ret = restore_limits(cgid, path);
	if (!ret) {
		detach_resolver(cgid);
		if ((ret = sandbox_forget(l, pin_dir, cgid, &sb, path != NULL)))
			p_err("detach: %s", strerror(-ret));
	}
	if (lock >= 0)
		close(lock);
	loader__destroy(l);
	return ret ? 1 : 0;
}

int do_detach(int argc, char **argv)
{
	struct attach_opts o = {};
	char path[PATH_MAX];
	__u64 cgid;
	int ret;

	ret = parse(argc, argv, &o, 1);
	if (ret)
		return ret < 0 ? 0 : ret;
	cgid = cli_cgroup_id(o.target, path, sizeof(path));
	return cgid ? detach_id(o.pin_dir, cgid, path) : 1;
}

int cli_detach(const char *pin_dir, __u64 cgid, const char *path)
{
	return detach_id(pin_dir ?: PIN_DIR_DEFAULT, cgid, path);
}

/* "memory.max=67108864, pids.max=20", or "-". */
static void format_limits(const json_t *st, char *buf, size_t sz)
{
	struct limit_write w[LIMITS_WRITES_MAX];
	int n = state_limits(st, "limits", w, ARRAY_SIZE(w));
	size_t len = 0;

	snprintf(buf, sz, "-");
	for (int i = 0; i < n && len < sz; i++)
		len += snprintf(buf + len, sz - len, "%s%s=%s", i ? ", " : "", w[i].file, w[i].value);
}

static json_t *limits_of(const json_t *st)
{
	json_t *lim = json_object_get(st, "limits");

	return json_is_object(lim) ? json_incref(lim) : json_object();
}

static json_t *labels_of(const json_t *st)
{
	json_t *labels = json_object_get(st, "labels");

	return json_is_object(labels) ? json_incref(labels) : json_object();
}

/* "\tlabels=container.id=…,container.name=…", or "" for a sandbox without. */
static const char *format_labels(const json_t *st, char *buf, size_t sz)
{
	json_t *labels = json_object_get(st, "labels"), *v;
	const char *key;
	size_t len = 0;

	buf[0] = '\0';
	json_object_foreach(labels, key, v)
		if (len < sz)
			len += snprintf(buf + len, sz - len, "%s%s=%s", len ? "," : "\tlabels=", key,
					json_string_value(v) ?: "");
	return buf;
}

static size_t active_grants(const json_t *st)
{
	return grants_active(st, cli_boottime_ns());
}

/* A sandbox's counts by kind, for `list --json`. */
static json_t *counts_json(const struct sbx_sandbox_stats *n)
{
	return json_pack("{s:{s:I, s:I, s:I, s:I, s:I}, s:I, s:I}",
			 "denied", "read", (json_int_t)n->n[SBX_KIND_READ], "write", (json_int_t)n->n[SBX_KIND_WRITE],
			 "namespace", (json_int_t)n->n[SBX_KIND_NAMESPACE],
			 "network", (json_int_t)n->n[SBX_KIND_NETWORK],
			 "task", (json_int_t)n->n[SBX_KIND_TASK],
			 "audit", (json_int_t)n->n[SBX_KIND_AUDIT], "granted", (json_int_t)n->n[SBX_KIND_GRANTED]);
}

int do_list(int argc, char **argv)
{
	struct attach_opts o = {};
	struct sbx_sandbox_stats n;
	struct sbx_loader *l;
	struct sbx_sandbox sb;
	json_t *arr = json_array();
	__u64 cgid, prev;
	bool first = true;
	char lims[2048], missing[1024], labs[LABELS_MAX * (LABEL_KEY_MAX + LABEL_VALUE_MAX + 2) + 16];
	int ret;

	ret = parse(argc, argv, &o, 0);
	if (ret) {
		json_decref(arr);
		return ret < 0 ? 0 : ret;
	}
	l = cli_open_pinned(o.pin_dir);
	if (!l) {
		json_decref(arr);
		return 1;
	}
	/* The set's gaps are every sandbox's: each line says what it runs without. */
	hooks__gaps_names(loader__gaps(l), missing, sizeof(missing));
	while (!loader__next_sandbox(l, first ? NULL : &prev, &cgid, &sb)) {
		json_t *st = state_read(SBX_STATE_DIR, cgid);
		const char *name = json_string_value(json_object_get(st, "policy"));
		const char *hash = json_string_value(json_object_get(st, "policy_hash"));
		const char *cg = json_string_value(json_object_get(st, "cgroup"));
		const char *mode = sb.flags & SBX_SANDBOX_AUDIT ? "audit" : "enforce";
		bool arming = sb.flags & SBX_SANDBOX_ARMING;

		first = false;
		prev = cgid;
		format_limits(st, lims, sizeof(lims));
		loader__sandbox_stats(l, cgid, &n);
		if (cli.json)
			json_array_append_new(arr, json_pack("{s:s?, s:I, s:i, s:s?, s:s?, s:s, s:o, s:I, s:o, s:o, s:b, s:o, s:b}",
							     "cgroup", cg, "cgroup_id", (json_int_t)cgid,
							     "policy_id", (int)sb.policy_id, "policy", name,
							     "policy_hash", hash, "mode", mode,
							     "limits", limits_of(st),
							     "active_grants", (json_int_t)active_grants(st),
							     "counts", counts_json(&n),
							     "missing", hooks__gaps_json(loader__gaps(l)),
							     "judges_descriptor_uses",
							     !!(sb.flags & SBX_SANDBOX_FD_JUDGE),
							     "labels", labels_of(st), "arming", arming));
		else
			printf("%s\t%s\t%s\t%s%s%s\t%s\tgrants=%zu\tdenied read=%llu write=%llu ns=%llu net=%llu"
			       " task=%llu audit=%llu granted=%llu%s%s%s\n", cg ? cg : "?", name ? name : "?",
			       hash ? hash : "?", mode, sb.flags & SBX_SANDBOX_FD_JUDGE ? ",fd-uses" : "",
			       arming ? ",arming" : "",
			       lims, active_grants(st),
			       n.n[SBX_KIND_READ], n.n[SBX_KIND_WRITE], n.n[SBX_KIND_NAMESPACE],
			       n.n[SBX_KIND_NETWORK], n.n[SBX_KIND_TASK], n.n[SBX_KIND_AUDIT],
			       n.n[SBX_KIND_GRANTED], missing[0] ? "\tmissing=" : "", missing,
			       format_labels(st, labs, sizeof(labs)));
		json_decref(st);
	}
	if (cli.json)
		print_json(arr);
	else
		json_decref(arr);
	loader__destroy(l);
	return 0;
}
