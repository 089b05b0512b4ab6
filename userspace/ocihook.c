// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ocihook.c — `sbx-bpf oci-hook`: an OCI runtime hook that puts a container
 * under a policy before its command runs, and takes it off when it ends.
 *
 * The engine (podman and CRI-O through hooks.d, runc and crun through a
 * bundle's config.json) runs it with the container's state on stdin:
 *
 *   createRuntime  the container's first process exists in its cgroup, its
 *                  command has not run: the cgroup (from /proc/PID/cgroup)
 *                  is attached through the daemon's pinned set with the
 *                  policy the annotation io.sbx-bpf.policy names (a preset,
 *                  or an absolute path to a policy file; its limits apply
 *                  too), in force from the container's first exec
 *                  (--from-exec: the engine still mounts and pivots), and
 *                  labelled with the container's identity.
 *   poststop       the container's record is found by its id, and detached.
 *
 * Without the annotation nothing is done (exit 0). At createRuntime any
 * failure — a bad policy, no daemon, a cgroup not found — exits 1 with the
 * reason on stderr, which the engine shows as it refuses to start the
 * container: fail closed.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "cli.h"
#include "forget.h"
#include "labels.h"
#include "ocistate.h"
#include "sbxstate.h"
#include "util.h"

#define CGROUP2_MOUNT	"/sys/fs/cgroup"
#define CGROUP2_MAGIC	0x63677270
#define STATE_MAX	(1 << 20)

static void oci_usage(FILE *out)
{
	fprintf(out,
		"Usage: sbx-bpf oci-hook [createRuntime|poststop] [--pin-dir DIR]   (OCI state JSON on stdin)\n"
		"\n"
		"An OCI runtime hook. At createRuntime a container annotated\n"
		"  io.sbx-bpf.policy=PRESET | /ABSOLUTE/POLICY.json\n"
		"is attached ('sbx-bpf attach --fresh --from-exec') with labels container.id,\n"
		"container.name (io.sbx-bpf.name, the Kubernetes container name, or the\n"
		"engine's storage), k8s.pod.name, k8s.pod.namespace, and one per annotation\n"
		"io.sbx-bpf.label.KEY=VALUE. At poststop it is detached. Without a stage the\n"
		"state's status says which (creating: createRuntime, stopped: poststop).\n"
		"Any failure at createRuntime exits 1 and the engine does not start the\n"
		"container. A container without the annotation is left alone.\n"
		"See docs/containers.md.\n");
}

static json_t *read_state(void)
{
	json_error_t err;
	json_t *st = json_loadf(stdin, JSON_REJECT_DUPLICATES, &err);

	if (!st)
		p_err("oci-hook: the OCI state on stdin is not JSON: %s (line %d, column %d)", err.text,
		      err.line, err.column);
	else if (!json_is_object(st) || !json_is_string(json_object_get(st, "id")))
		p_err("oci-hook: the OCI state on stdin has no container id");
	else
		return st;
	json_decref(st);
	return NULL;
}

/* The cgroup v2 directory of @pid as this (the host's) cgroup namespace sees it. 0, or -1 after saying why. */
static int pid_cgroup(json_int_t pid, char *path, size_t sz)
{
	char file[64], buf[PATH_MAX + 16], rel[PATH_MAX];
	struct statfs fs;
	int err;

	snprintf(file, sizeof(file), "/proc/%lld/cgroup", (long long)pid);
	if (read_file(file, buf, sizeof(buf)) < 0) {
		p_err("oci-hook: cannot read %s: %s (is the container's process gone?)", file, strerror(errno));
		return -1;
	}
	err = oci_cgroup_rel(buf, rel, sizeof(rel));
	if (err == -ENOENT)
		p_err("oci-hook: process %lld is in no cgroup v2 (sbx-bpf needs the unified hierarchy)",
		      (long long)pid);
	else if (err == -EPERM)
		p_err("oci-hook: process %lld is in cgroup '%s', not one of its own: refusing to attach it",
		      (long long)pid, rel);
	else if (err || (size_t)snprintf(path, sz, "%s%s", CGROUP2_MOUNT, rel) >= sz ||
		 statfs(path, &fs) || fs.f_type != CGROUP2_MAGIC)
		p_err("oci-hook: %s%s is not a cgroup v2 directory", CGROUP2_MOUNT, rel);
	else
		return 0;
	return -1;
}

/* The container's labels into @labels. 0, or -1 after saying why. */
static int container_labels(const json_t *st, json_t *labels)
{
	const char *id = json_string_value(json_object_get(st, "id"));
	json_t *stored = oci_storage_name(json_string_value(json_object_get(st, "bundle")), id);
	char why[256];
	int err = oci_labels(st, json_string_value(stored), labels, why, sizeof(why));

	json_decref(stored);
	if (err)
		p_err("oci-hook: container %s: %s", id, why);
	return err ? -1 : 0;
}

/* The container's own "~" and "." for its policy (ocistate.h). 0, or -1 after saying why. */
static int container_env(const json_t *st, char *home, size_t hsz, char *cwd, size_t csz)
{
	const char *bundle = json_string_value(json_object_get(st, "bundle"));
	char path[PATH_MAX];
	json_t *cfg;

	if (!bundle || (size_t)snprintf(path, sizeof(path), "%s/config.json", bundle) >= sizeof(path) ||
	    !(cfg = json_load_file(path, 0, NULL))) {
		p_err("oci-hook: cannot read the bundle's config.json (%s)", bundle ? path : "no bundle in the state");
		return -1;
	}
	oci_process_env(cfg, home, hsz, cwd, csz);
	json_decref(cfg);
	return 0;
}

/* A preset's name: a word of lower-case letters, digits and dashes. */
static bool preset_word(const char *s)
{
	return *s && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(s);
}

static int create_runtime(const json_t *st, const char *pin_dir)
{
	const char *policy = json_string_value(json_object_get(json_object_get(st, "annotations"), OCI_ANN_POLICY));
	const char *id = json_string_value(json_object_get(st, "id"));
	json_t *pid = json_object_get(st, "pid");
	struct cli_attach_req r = { .fresh = true, .from_exec = true, .pin_dir = pin_dir };
	char cg[PATH_MAX], home[PATH_MAX], cwd[PATH_MAX];
	json_t *labels;
	int ret;

	if (!policy)
		return 0;	/* not ours */
	if (policy[0] == '/') {
		r.policy_file = policy;
	} else if (preset_word(policy)) {
		r.preset = policy;
	} else {
		p_err("oci-hook: container %s: %s='%s' is neither a preset name nor an absolute path to a policy "
		      "file", id, OCI_ANN_POLICY, policy);
		return 1;
	}
	if (!json_is_integer(pid) || json_integer_value(pid) <= 0) {
		p_err("oci-hook: container %s: the state names no process (is this the createRuntime stage?)", id);
		return 1;
	}
	if (pid_cgroup(json_integer_value(pid), cg, sizeof(cg)) ||
	    container_env(st, home, sizeof(home), cwd, sizeof(cwd)))
		return 1;
	r.home = home;
	r.cwd = cwd;
	labels = json_object();
	if (!labels || container_labels(st, labels)) {
		json_decref(labels);
		return 1;
	}
	r.cgroup = cg;
	r.labels = labels;
	ret = cli_attach(&r);
	json_decref(labels);
	if (ret)
		p_err("oci-hook: container %s not attached: it must not start", id);
	return ret ? 1 : 0;
}

/* The record whose label container.id is @id: its cgroup id and path. 0, or -ENOENT. */
static int find_container(const char *id, __u64 *cgid, char *path, size_t sz)
{
	DIR *d = opendir(SBX_STATE_DIR);
	struct dirent *e;
	int err = -ENOENT;

	while (d && err && (e = readdir(d))) {
		unsigned long long n;
		char tail[8];
		json_t *rec;
		const char *rid, *cg;

		if (sscanf(e->d_name, "%llu.%7s", &n, tail) != 2 || strcmp(tail, "json"))
			continue;
		rec = state_read(SBX_STATE_DIR, n);
		rid = json_string_value(json_object_get(json_object_get(rec, "labels"), "container.id"));
		cg = json_string_value(json_object_get(rec, "cgroup"));
		if (rid && !strcmp(rid, id)) {
			*cgid = n;
			snprintf(path, sz, "%s", cg ?: "");
			err = 0;
		}
		json_decref(rec);
	}
	if (d)
		closedir(d);
	return err;
}

static int post_stop(const json_t *st, const char *pin_dir)
{
	const char *id = json_string_value(json_object_get(st, "id"));
	char path[PATH_MAX];
	__u64 cgid;

	if (find_container(id, &cgid, path, sizeof(path)))
		return 0;	/* never attached, or already forgotten */
	return cli_detach(pin_dir, cgid, sandbox_cgroup_gone(path, cgid) ? NULL : path);
}

int do_oci_hook(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pin-dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *pin_dir = NULL, *stage, *status;
	json_t *st;
	int c, ret;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': pin_dir = optarg; break;
		case 'h': oci_usage(stdout); return 0;
		default: oci_usage(stderr); return EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		oci_usage(stderr);
		return EXIT_USAGE;
	}
	/* crun drops a hook's stderr (unless run.oci.hooks.stderr names a file): the journal keeps it. */
	openlog("sbx-bpf", LOG_PID, LOG_AUTHPRIV);
	cli.syslog = true;
	st = read_state();
	if (!st)
		return 1;
	status = json_string_value(json_object_get(st, "status"));
	stage = oci_stage(optind < argc ? argv[optind] : NULL, status);
	if (stage && !strcmp(stage, "createRuntime")) {
		ret = create_runtime(st, pin_dir);
	} else if (stage) {
		ret = post_stop(st, pin_dir);
	} else {
		p_err("oci-hook: %s%s%s: run it at createRuntime or poststop",
		      optind < argc ? "unknown stage '" : "no stage given and the state's status is '",
		      optind < argc ? argv[optind] : status ?: "?", "'");
		ret = EXIT_USAGE;
	}
	json_decref(st);
	return ret;
}
