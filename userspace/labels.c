// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * labels.c — checking a sandbox's labels (labels.h). The limits are the
 * narrowest of the places a label goes: syslog's SD-PARAM names, and a
 * record every event of the cgroup carries.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "labels.h"
#include "util.h"

bool label_key_ok(const char *key)
{
	size_t n = strlen(key);

	if (!n || n > LABEL_KEY_MAX || !isalnum((unsigned char)key[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)key[i]) && !strchr("._/-", key[i]))
			return false;
	return true;
}

bool label_value_ok(const char *value)
{
	if (strlen(value) > LABEL_VALUE_MAX || !utf8_valid(value))
		return false;
	for (const unsigned char *c = (const unsigned char *)value; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

int labels_set(json_t *labels, const char *key, const char *value, char *why, size_t wsz)
{
	if (!label_key_ok(key)) {
		snprintf(why, wsz, "label key '%.64s' is not 1 to %d of A-Z a-z 0-9 . _ / - starting with a "
			 "letter or digit", key, LABEL_KEY_MAX);
		return -EINVAL;
	}
	if (!label_value_ok(value)) {
		snprintf(why, wsz, "the value of label '%s' is longer than %d bytes, not UTF-8, or holds "
			 "control characters", key, LABEL_VALUE_MAX);
		return -EINVAL;
	}
	if (!json_object_get(labels, key) && json_object_size(labels) >= LABELS_MAX) {
		snprintf(why, wsz, "more than %d labels", LABELS_MAX);
		return -E2BIG;
	}
	if (json_object_set_new(labels, key, json_string(value))) {
		snprintf(why, wsz, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int labels_add(json_t *labels, const char *kv, char *why, size_t wsz)
{
	const char *eq = strchr(kv, '=');
	char key[LABEL_KEY_MAX + 2];

	if (!eq || (size_t)(eq - kv) > LABEL_KEY_MAX) {
		snprintf(why, wsz, "'%.64s' is not KEY=VALUE with a key of at most %d characters", kv,
			 LABEL_KEY_MAX);
		return -EINVAL;
	}
	snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
	return labels_set(labels, key, eq + 1, why, wsz);
}

bool labels_valid(const json_t *labels)
{
	const char *key;
	json_t *v;

	if (!labels)
		return true;
	if (!json_is_object(labels) || json_object_size(labels) > LABELS_MAX)
		return false;
	json_object_foreach((json_t *)labels, key, v)
		if (!json_is_string(v) || !label_key_ok(key) || !label_value_ok(json_string_value(v)))
			return false;
	return true;
}
