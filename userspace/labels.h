/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * labels.h — a sandbox's labels: KEY=VALUE pairs (`attach --label`, the OCI
 * hook's container.id, container.name, k8s.pod.name, …) kept in its
 * record and carried by every event of its cgroup in every sink.
 *
 * A key is 1..32 of [A-Za-z0-9._/-], starting with a letter or digit: it
 * goes unchanged into a syslog SD-PARAM name (RFC 5424 allows 32 printable
 * ASCII), a JSON key and an OCSF label. A value is 0..256 bytes of UTF-8
 * without control characters. At most LABELS_MAX per sandbox.
 *
 * Library code: nothing prints; errors are -errno with the reason in @why.
 */
#ifndef SBX_LABELS_H
#define SBX_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#define LABELS_MAX		16
#define LABEL_KEY_MAX		32
#define LABEL_VALUE_MAX		256

bool label_key_ok(const char *key);
bool label_value_ok(const char *value);
/*
 * Add "KEY=VALUE" to the object @labels (a later KEY replaces an earlier
 * one). 0, or -EINVAL / -E2BIG with the reason in @why.
 */
int labels_add(json_t *labels, const char *kv, char *why, size_t wsz);
/* Set @key to @value in @labels after the same checks. 0 or -EINVAL / -E2BIG. */
int labels_set(json_t *labels, const char *key, const char *value, char *why, size_t wsz);
/* Does @labels (a record's "labels", or NULL) hold only what labels_set accepts? */
bool labels_valid(const json_t *labels);

#endif
