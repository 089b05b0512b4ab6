// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ocistate.c — reading what a container engine hands the OCI hook (ocistate.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "labels.h"
#include "ocistate.h"

const char *oci_stage(const char *arg, const char *status)
{
	if (arg)
		return !strcmp(arg, "createRuntime") || !strcmp(arg, "prestart") ? "createRuntime" :
		       !strcmp(arg, "poststop") ? "poststop" : NULL;
	if (status && !strcmp(status, "creating"))
		return "createRuntime";
	if (status && !strcmp(status, "stopped"))
		return "poststop";
	return NULL;
}

/* Does @path have a ".." component? */
static bool has_dotdot(const char *path)
{
	for (const char *p = strstr(path, "/.."); p; p = strstr(p + 1, "/.."))
		if (p[3] == '/' || p[3] == '\0')
			return true;
	return false;
}

int oci_cgroup_rel(const char *proc, char *rel, size_t sz)
{
	const char *line = proc;
	size_t n;

	/* One line per hierarchy; cgroup v2's is "0::PATH". */
	while (line && strncmp(line, "0::/", 4)) {
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	if (!line)
		return -ENOENT;
	line += 3;
	n = strcspn(line, "\n");
	if (n >= sz)
		return -ENAMETOOLONG;
	snprintf(rel, sz, "%.*s", (int)n, line);
	/* "/" would put the whole host under the policy; a ".." lies outside our cgroup namespace. */
	if (!strcmp(rel, "/") || has_dotdot(rel))
		return -EPERM;
	return 0;
}

static const char *ann(const json_t *anns, const char *key)
{
	return json_string_value(json_object_get(anns, key));
}

int oci_labels(const json_t *state, const char *stored_name, json_t *labels, char *why, size_t wsz)
{
	const json_t *anns = json_object_get(state, "annotations");
	const char *id = json_string_value(json_object_get(state, "id"));
	const char *name = ann(anns, OCI_ANN_NAME) ?: ann(anns, "io.kubernetes.container.name") ?: stored_name;
	const char *key;
	json_t *v;
	int err;

	if (!id) {
		snprintf(why, wsz, "the state has no container id");
		return -EINVAL;
	}
	err = labels_set(labels, "container.id", id, why, wsz);
	if (!err && name)
		err = labels_set(labels, "container.name", name, why, wsz);
	if (!err && ann(anns, "io.kubernetes.pod.name"))
		err = labels_set(labels, "k8s.pod.name", ann(anns, "io.kubernetes.pod.name"), why, wsz);
	if (!err && ann(anns, "io.kubernetes.pod.namespace"))
		err = labels_set(labels, "k8s.pod.namespace", ann(anns, "io.kubernetes.pod.namespace"), why, wsz);
	json_object_foreach((json_t *)anns, key, v) {
		if (err || strncmp(key, OCI_ANN_LABEL, strlen(OCI_ANN_LABEL)))
			continue;
		if (!json_is_string(v)) {
			snprintf(why, wsz, "annotation %s is not a string", key);
			return -EINVAL;
		}
		err = labels_set(labels, key + strlen(OCI_ANN_LABEL), json_string_value(v), why, wsz);
	}
	return err;
}

json_t *oci_storage_name(const char *bundle, const char *id)
{
	char path[PATH_MAX];
	json_t *all, *c, *name = NULL;
	size_t i;

	if (!bundle || !id || (size_t)snprintf(path, sizeof(path), "%s/../../containers.json", bundle) >= sizeof(path))
		return NULL;
	all = json_load_file(path, 0, NULL);
	json_array_foreach(all, i, c) {
		const char *cid = json_string_value(json_object_get(c, "id"));

		if (cid && !strcmp(cid, id)) {
			name = json_array_get(json_object_get(c, "names"), 0);
			name = json_is_string(name) ? json_incref(name) : NULL;
			break;
		}
	}
	json_decref(all);
	return name;
}

void oci_process_env(const json_t *config, char *home, size_t hsz, char *cwd, size_t csz)
{
	const json_t *proc = json_object_get(config, "process"), *v;
	size_t i;

	snprintf(home, hsz, "/root");
	json_array_foreach(json_object_get(proc, "env"), i, v)
		if (json_is_string(v) && !strncmp(json_string_value(v), "HOME=/", 6))
			snprintf(home, hsz, "%s", json_string_value(v) + 5);
	v = json_object_get(proc, "cwd");
	snprintf(cwd, csz, "%s", json_is_string(v) && json_string_value(v)[0] == '/' ? json_string_value(v) : "/");
}
