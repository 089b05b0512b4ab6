// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mappurge.c — see mappurge.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mappurge.h"

/* Keys of one map that are to go (purge). */
struct doomed {
	char (*key)[MAP_PURGE_KEY_MAX];
	size_t n, cap;
};

static int doom(struct doomed *d, const void *key, size_t key_size)
{
	if (d->n == d->cap) {
		void *p = realloc(d->key, (d->cap ? d->cap * 2 : 64) * sizeof(*d->key));

		if (!p)
			return -ENOMEM;
		d->key = p;
		d->cap = d->cap ? d->cap * 2 : 64;
	}
	memcpy(d->key[d->n++], key, key_size);
	return 0;
}

/*
 * Which keys go: those holding @id at @off (map_purge), or, with @keep set,
 * those the map @keep has no entry for (map_prune; @value takes the entry).
 */
struct doom_test {
	size_t off, id_len;
	const void *id;
	int keep;
	void *value;
};

static bool doomed(const struct doom_test *t, const char *key)
{
	if (!t->value)
		return !memcmp(key + t->off, t->id, t->id_len);
	return bpf_map_lookup_elem(t->keep, key, t->value) && errno == ENOENT;
}

#define PURGE_BATCH	1024	/* keys per BPF_MAP_LOOKUP_BATCH call */

/*
 * The keys of hash map @fd that @t dooms, PURGE_BATCH keys per
 * system call: with many sandboxes, a detach reads every rule of every
 * policy, and one call per key made that cost grow with all of them.
 * -EOPNOTSUPP where batches are not to be had (an LPM trie; a bucket
 * larger than a batch): the caller walks key by key.
 */
static int doom_batched(int fd, size_t key_size, const struct doom_test *t, struct doomed *d)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), count, token;
	char *keys = NULL, *values = NULL;
	bool first = true, last = false;
	int err = 0;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_HASH)
		return -EOPNOTSUPP;
	keys = calloc(PURGE_BATCH, key_size);
	values = calloc(PURGE_BATCH, info.value_size);
	if (!keys || !values)
		err = -ENOMEM;
	while (!err && !last) {
		count = PURGE_BATCH;
		if (bpf_map_lookup_batch(fd, first ? NULL : &token, &token, keys, values, &count, NULL)) {
			if (errno != ENOENT) {	/* ENOENT: the last batch, in @count */
				err = errno == ENOSPC || errno == EINVAL ? -EOPNOTSUPP : -errno;
				break;
			}
			last = true;
		}
		first = false;
		for (__u32 i = 0; !err && i < count; i++)
			if (doomed(t, keys + i * key_size))
				err = doom(d, keys + i * key_size, key_size);
	}
	free(keys);
	free(values);
	return err;
}

/* The same, one key per call: every map type has that. */
static int doom_walked(int fd, size_t key_size, const struct doom_test *t, struct doomed *d)
{
	char key[MAP_PURGE_KEY_MAX], next[MAP_PURGE_KEY_MAX];
	bool first = true;
	int err = 0;

	while (!err && !bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, key_size);
		if (doomed(t, key))
			err = doom(d, key, key_size);
	}
	return err;
}

static int purge(int fd, size_t key_size, const struct doom_test *t)
{
	struct doomed d = {};
	int err, del_err = 0;

	err = doom_batched(fd, key_size, t, &d);
	if (err == -EOPNOTSUPP) {
		d.n = 0;	/* a batch that failed midway: start over, key by key */
		err = doom_walked(fd, key_size, t, &d);
	}
	/* Deleted after the walk: deleting while walking restarts it. */
	for (size_t i = 0; !err && i < d.n; i++)
		if (bpf_map_delete_elem(fd, d.key[i]) && errno != ENOENT && !del_err)
			del_err = -errno;
	free(d.key);
	return err ?: del_err;
}

int map_purge(int fd, size_t key_size, size_t off, const void *id, size_t id_len)
{
	struct doom_test t = { .off = off, .id = id, .id_len = id_len };

	if (key_size > MAP_PURGE_KEY_MAX || off + id_len > key_size)
		return -EINVAL;
	return purge(fd, key_size, &t);
}

int map_prune(int fd, size_t key_size, int keep)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct doom_test t = { .keep = keep };
	int err, ncpu = libbpf_num_possible_cpus();

	if (key_size > MAP_PURGE_KEY_MAX)
		return -EINVAL;
	if (bpf_obj_get_info_by_fd(keep, &info, &len))
		return -errno;
	if (info.key_size != key_size)
		return -EINVAL;
	/* Per-CPU maps hold a value per possible CPU: room for the largest there is. */
	t.value = calloc(ncpu > 0 ? ncpu : 1, (info.value_size + 7) & ~7u);
	if (!t.value)
		return -ENOMEM;
	err = purge(fd, key_size, &t);
	free(t.value);
	return err;
}
