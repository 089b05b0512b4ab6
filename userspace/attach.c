// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attach.c — `sbx-bpf attach|detach|list`: put an existing cgroup under a
 * policy in the pinned set the daemon keeps (what an orchestrator calls for
 * a container or an agent it started), take it out again, list them.
 *
 * attach on a cgroup that already has a policy installs the new rules under
 * a new policy id, switches the sandbox entry in one map update, then
 * removes the old rules: at every moment one of the two policies applies.
 * A policy that does not load changes nothing.
 *
 * Not yet (issue 6): the daemon's resolver for domain rules (names do not
 * resolve in an attached cgroup), limits, nested policies, grants.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "cgstat.h"
#include "cli.h"
#include "fsrules.h"
#include "loader.h"
#include "netrules.h"
#include "policy.h"
#include "sbxstate.h"

#define PIN_DIR_DEFAULT	"/sys/fs/bpf/sbx"

struct attach_opts {
	const char *pin_dir;
	const char *policy_file;
	const char *preset;
	bool audit;
	const char *target;
};

static void attach_usage(FILE *out)
{
	fprintf(out,
		"Usage: sbx-bpf attach CGROUP (--policy FILE | --preset NAME) [--audit] [--pin-dir DIR]\n"
		"       sbx-bpf detach CGROUP [--pin-dir DIR]\n"
		"       sbx-bpf list [--json] [--pin-dir DIR]\n"
		"\n"
		"CGROUP: a sandbox name, or a cgroup v2 path (as for 'stats'). Needs the\n"
		"programs pinned by 'sbx-bpf daemon'. attach replaces a policy atomically.\n");
}

static int parse(int argc, char **argv, struct attach_opts *o, int nargs)
{
	static const struct option longopts[] = {
		{ "pin-dir", required_argument, NULL, 'd' },
		{ "policy", required_argument, NULL, 'p' },
		{ "preset", required_argument, NULL, 'P' },
		{ "audit", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	o->pin_dir = PIN_DIR_DEFAULT;
	while ((c = getopt_long(argc, argv, "jvh", longopts, NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		switch (c) {
		case 'd': o->pin_dir = optarg; break;
		case 'p': o->policy_file = optarg; break;
		case 'P': o->preset = optarg; break;
		case 'a': o->audit = true; break;
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

static struct sbx_loader *open_pinned(const char *dir)
{
	struct sbx_loader *l = loader__open_pinned(dir);

	if (!l)
		p_err("no usable programs pinned at %s: %s (start 'sbx-bpf daemon')", dir,
		      errno == ESTALE ? "they are from another build" : strerror(errno));
	return l;
}

__u64 cli_cgroup_id(const char *arg, char *path, size_t sz)
{
	struct cgstat_target t = {};
	__u64 id = 0;
	int err;

	err = cgstat_resolve(arg, &t);
	if (!err)
		err = cgroup_id_of(t.path, &id);
	if (err) {
		p_err("cannot find cgroup '%s': %s", arg, strerror(-err));
		return 0;
	}
	snprintf(path, sz, "%s", t.path);
	return id;
}

static int load(const struct attach_opts *o, struct policy *p)
{
	char home[PATH_MAX], cwd[PATH_MAX];
	struct policy_diag diag = {};
	struct policy_env env;
	int err;

	err = policy_env_default(&env, home, sizeof(home), cwd, sizeof(cwd));
	if (!err)
		err = o->policy_file ? policy_load(p, o->policy_file, &env, &diag) :
				       policy_load_preset(p, o->preset, &env, &diag);
	for (size_t i = 0; i < diag.nr_warnings; i++)
		p_warn("%s", diag.warnings[i]);
	if (!err)
		err = policy_add_mandatory(p);
	if (err)
		p_err("%s", diag.error[0] ? diag.error : strerror(-err));
	return err ? EXIT_USAGE : 0;
}

/*
 * Sandboxes on @path's ancestors: the kernel judges at most SBX_NEST_MAX
 * levels for one task (a deeper one is denied everything), so attach
 * refuses to go deeper.
 */
static int ancestors_with_policy(struct sbx_loader *l, const char *path)
{
	char p[PATH_MAX], *slash;
	struct sbx_sandbox sb;
	__u64 id;
	int n = 0;

	snprintf(p, sizeof(p), "%s", path);
	while ((slash = strrchr(p, '/')) && slash != p) {
		*slash = '\0';
		if (!cgroup_id_of(p, &id) && !loader__get_sandbox(l, id, &sb))
			n++;
	}
	return n;
}

/* Rules in, then the sandbox entry (new or switched), then the old rules out. */
static int install(struct sbx_loader *l, const struct policy *p, bool audit, __u64 cgid,
		   const char *path)
{
	struct fs_compiled fs = {};
	struct net_compiled net = {};
	struct sbx_sandbox old, sb = { .policy_id = loader__new_policy_id(l) };
	char why[256] = "";
	bool had = !loader__get_sandbox(l, cgid, &old);
	int err;

	err = net_compile(p, sb.policy_id, &net, why, sizeof(why));
	if (!err)
		err = fs_compile(p, sb.policy_id, &fs);
	if (!err)
		err = fs_install(l, &fs) ?: net_install(l, &net);
	if (!err) {
		/* No resolver here yet: port 53 is judged like any other port. */
		sb.flags = (audit ? SBX_SANDBOX_AUDIT : 0) | (net.sandbox_flags & ~SBX_SANDBOX_DNS);
		sb.any_depth_mask = fs.any_depth_mask;
		err = had ? loader__replace_sandbox(l, cgid, &sb) :
			    loader__add_sandbox(l, cgid, sb.policy_id, sb.flags, sb.any_depth_mask);
	}
	if (!err) {
		struct state_entry e = { .cgroup = path, .cgroup_id = cgid, .policy_id = sb.policy_id,
					 .audit = audit };

		/* Only the record is missing: events lose their rule texts, enforcement stands. */
		if (state_write(SBX_STATE_DIR, &e, p))
			p_warn("cannot record the policy under %s: events will not name rules", SBX_STATE_DIR);
	}
	if (err)
		loader__purge_policy(l, sb.policy_id);
	else if (had)
		loader__purge_policy(l, old.policy_id);
	if (err)
		p_err("cannot install the policy: %s", why[0] ? why : strerror(-err));
	fs_compiled_free(&fs);
	net_compiled_free(&net);
	return err ? 1 : 0;
}

int do_attach(int argc, char **argv)
{
	struct attach_opts o = {};
	struct policy p = {};
	struct sbx_loader *l = NULL;
	char path[PATH_MAX];
	__u64 cgid;
	int ret;

	ret = parse(argc, argv, &o, 1);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (!o.policy_file == !o.preset) {
		p_err("attach: give exactly one of --policy and --preset");
		return EXIT_USAGE;
	}
	ret = load(&o, &p);
	if (!ret && p.net.nr_domains)
		p_warn("attach: allowedDomains need the daemon's resolver, not there yet: names will not resolve");
	if (!ret && !(cgid = cli_cgroup_id(o.target, path, sizeof(path))))
		ret = 1;
	if (!ret && !(l = open_pinned(o.pin_dir)))
		ret = 1;
	if (!ret && ancestors_with_policy(l, path) >= SBX_NEST_MAX) {
		p_err("attach: %s already lies below %d cgroups with policies, the most one task can have",
		      path, SBX_NEST_MAX - 1);
		ret = EXIT_USAGE;
	}
	if (!ret)
		ret = install(l, &p, o.audit || p.mode == POLICY_AUDIT, cgid, path);
	loader__destroy(l);
	policy_free(&p);
	return ret;
}

int do_detach(int argc, char **argv)
{
	struct attach_opts o = {};
	struct sbx_loader *l;
	struct sbx_sandbox sb;
	char path[PATH_MAX];
	__u64 cgid;
	int ret;

	ret = parse(argc, argv, &o, 1);
	if (ret)
		return ret < 0 ? 0 : ret;
	cgid = cli_cgroup_id(o.target, path, sizeof(path));
	if (!cgid)
		return 1;
	l = open_pinned(o.pin_dir);
	if (!l)
		return 1;
	ret = loader__get_sandbox(l, cgid, &sb);
	if (ret)
		p_err("detach: %s has no policy", path);
	else if ((ret = loader__remove_sandbox(l, cgid)))
		p_err("detach: %s", strerror(-ret));
	else
		loader__purge_policy(l, sb.policy_id);
	if (!ret)
		state_remove(SBX_STATE_DIR, cgid);
	loader__destroy(l);
	return ret ? 1 : 0;
}

int do_list(int argc, char **argv)
{
	struct attach_opts o = {};
	struct sbx_loader *l;
	struct sbx_sandbox sb;
	json_t *arr = json_array();
	__u64 cgid, prev;
	bool first = true;
	int ret;

	ret = parse(argc, argv, &o, 0);
	if (ret) {
		json_decref(arr);
		return ret < 0 ? 0 : ret;
	}
	l = open_pinned(o.pin_dir);
	if (!l) {
		json_decref(arr);
		return 1;
	}
	while (!loader__next_sandbox(l, first ? NULL : &prev, &cgid, &sb)) {
		json_t *st = state_read(SBX_STATE_DIR, cgid);
		const char *name = json_string_value(json_object_get(st, "policy"));
		const char *hash = json_string_value(json_object_get(st, "policy_hash"));
		const char *cg = json_string_value(json_object_get(st, "cgroup"));
		const char *mode = sb.flags & SBX_SANDBOX_AUDIT ? "audit" : "enforce";

		first = false;
		prev = cgid;
		if (cli.json)
			json_array_append_new(arr, json_pack("{s:s?, s:I, s:i, s:s?, s:s?, s:s}",
							     "cgroup", cg, "cgroup_id", (json_int_t)cgid,
							     "policy_id", (int)sb.policy_id, "policy", name,
							     "policy_hash", hash, "mode", mode));
		else
			printf("%s\t%s\t%s\t%s\n", cg ? cg : "?", name ? name : "?", hash ? hash : "?", mode);
		json_decref(st);
	}
	if (cli.json)
		print_json(arr);
	else
		json_decref(arr);
	loader__destroy(l);
	return 0;
}
