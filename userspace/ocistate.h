/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ocistate.h — what the OCI hook (ocihook.c) reads from a container engine:
 * the state on its stdin, the bundle's config.json, /proc/PID/cgroup and
 * containers/storage's names. Each piece is checked here, so that the hook
 * only decides and says what went wrong.
 *
 * Library code: nothing prints; errors are -errno with the reason in @why.
 */
#ifndef SBX_OCISTATE_H
#define SBX_OCISTATE_H

#include <stddef.h>
#include <jansson.h>

#define OCI_ANN_POLICY	"io.sbx-bpf.policy"
#define OCI_ANN_NAME	"io.sbx-bpf.name"
#define OCI_ANN_LABEL	"io.sbx-bpf.label."	/* io.sbx-bpf.label.KEY=VALUE: one more label */

/*
 * The stage to act for: @arg when given ("prestart" counts as
 * createRuntime, the moment runc and crun run both), else the state's
 * @status ("creating": createRuntime, "stopped": poststop). NULL: neither
 * says.
 */
const char *oci_stage(const char *arg, const char *status);
/*
 * The cgroup v2 path in /proc/PID/cgroup's text @proc, relative to the
 * cgroup2 mount ("/machine.slice/libpod-….scope"). -ENOENT: no v2 line;
 * -EPERM: the root (the whole host) or a path outside the reader's cgroup
 * namespace ("/..").
 */
int oci_cgroup_rel(const char *proc, char *rel, size_t sz);
/*
 * The container's labels into @labels: container.id from the state,
 * container.name (io.sbx-bpf.name, io.kubernetes.container.name, else
 * @stored_name, may be NULL), k8s.pod.name and k8s.pod.namespace (CRI
 * annotations), and one per io.sbx-bpf.label.KEY annotation. 0, or
 * -EINVAL / -E2BIG with @why.
 */
int oci_labels(const json_t *state, const char *stored_name, json_t *labels, char *why, size_t wsz);
/*
 * The name containers/storage (podman, buildah, CRI-O) keeps for @id, read
 * from BUNDLE/../../containers.json (the bundle is …-containers/ID/userdata).
 * A new reference, or NULL.
 */
json_t *oci_storage_name(const char *bundle, const char *id);
/*
 * The container's own "~" and "." from its config.json: HOME from
 * process.env ("/root" without one), process.cwd ("/" without one).
 */
void oci_process_env(const json_t *config, char *home, size_t hsz, char *cwd, size_t csz);

#endif
