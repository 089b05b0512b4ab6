// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * map_purge() and map_prune() (userspace/mappurge.c) on real maps of the
 * host kernel: a hash map read in batches, an LPM trie and a per-CPU hash
 * walked key by key. Needs root (or CAP_BPF), as the other tests of this
 * layer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mappurge.h"

/* Laid out as the rule maps' keys are: an id among other fields. */
struct hkey {
	__u64 hash;
	__u32 id;
	__u32 len;
	__u64 hash2;
};

struct lkey {
	__u32 prefixlen;
	__u32 id;		/* the trie matches it first, as net_rules' policy id */
	__u8 addr[4];
};

#define NIDS	10

static int hash_map(__u32 entries)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);

	return bpf_map_create(BPF_MAP_TYPE_HASH, "purge_test", sizeof(struct hkey), 16, entries, &o);
}

static void fill_hash(int fd, int n)
{
	char value[16] = "v";

	for (int i = 0; i < n; i++) {
		struct hkey k = { .hash = (__u64)i * 0x9e3779b97f4a7c15ull, .id = i % NIDS, .len = i,
				  .hash2 = i };

		assert_int_equal(bpf_map_update_elem(fd, &k, value, BPF_NOEXIST), 0);
	}
}

/* Keys of @fd (@key_size bytes) with id @id at @off, and all keys. */
static int count(int fd, size_t key_size, size_t off, __u32 id, int *all)
{
	char key[64], next[64];
	int n = 0;

	*all = 0;
	for (int first = 1; !bpf_map_get_next_key(fd, first ? NULL : key, next); first = 0) {
		memcpy(key, next, key_size);
		++*all;
		n += !memcmp(key + off, &id, sizeof(id));
	}
	return n;
}

static void hash_case(int n)
{
	int fd = hash_map(n + 16), all;
	__u32 id = 3;

	assert_true(fd >= 0);	/* root, as the layer's other tests */
	fill_hash(fd, n);
	assert_int_equal(map_purge(fd, sizeof(struct hkey), offsetof(struct hkey, id), &id, sizeof(id)), 0);
	assert_int_equal(count(fd, sizeof(struct hkey), offsetof(struct hkey, id), id, &all), 0);
	assert_int_equal(all, n - n / NIDS);	/* n is a multiple of NIDS */
	id = 4;
	assert_int_equal(count(fd, sizeof(struct hkey), offsetof(struct hkey, id), id, &all), n / NIDS);
	close(fd);
}

/* Fewer keys than a batch, and many batches' worth. */
static void test_hash_small(void **state) { (void)state; hash_case(50); }
static void test_hash_batches(void **state) { (void)state; hash_case(20000); }

static void test_hash_absent_id(void **state)
{
	int fd = hash_map(128), all;
	__u32 id = NIDS + 1;

	(void)state;
	assert_true(fd >= 0);
	fill_hash(fd, 100);
	assert_int_equal(map_purge(fd, sizeof(struct hkey), offsetof(struct hkey, id), &id, sizeof(id)), 0);
	count(fd, sizeof(struct hkey), 0, 0, &all);
	assert_int_equal(all, 100);
	close(fd);
}

static void test_lpm_walked(void **state)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	int fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "purge_lpm", sizeof(struct lkey), 8, 4096, &o), all;
	__u64 value = 1;
	__u32 id = 7;

	(void)state;
	assert_true(fd >= 0);
	for (int i = 0; i < 2000; i++) {
		struct lkey k = { .prefixlen = 32 + 24, .id = i % NIDS,
				  .addr = { 10, (__u8)(i >> 8), (__u8)i, 0 } };

		assert_int_equal(bpf_map_update_elem(fd, &k, &value, BPF_ANY), 0);
	}
	assert_int_equal(map_purge(fd, sizeof(struct lkey), offsetof(struct lkey, id), &id, sizeof(id)), 0);
	assert_int_equal(count(fd, sizeof(struct lkey), offsetof(struct lkey, id), id, &all), 0);
	assert_int_equal(all, 2000 - 2000 / NIDS);
	close(fd);
}

/*
 * map_prune: counters keyed by cgroup id, kept only for the ids the
 * sandboxes map still has (loader__prune_sandbox_stats). Every third of the
 * first @kept ids has a sandbox; @n ids have counters.
 */
static void prune_case(enum bpf_map_type type, int n, int kept)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	int keep = bpf_map_create(BPF_MAP_TYPE_HASH, "prune_keep", 8, 40, kept + 1, &o);
	int fd = bpf_map_create(type, "prune_stats", 8, 56, n + 1, &o), ncpu = libbpf_num_possible_cpus();
	char sandbox[40] = "sandbox", *counters = calloc(ncpu, 56);
	__u64 key, next;
	int left = 0;

	assert_true(keep >= 0 && fd >= 0 && counters);
	for (key = 0; key < (__u64)kept; key += 3)
		assert_int_equal(bpf_map_update_elem(keep, &key, sandbox, BPF_NOEXIST), 0);
	for (key = 0; key < (__u64)n; key++) {
		for (int c = 0; c < ncpu; c++)
			memcpy(counters + c * 56, &key, sizeof(key));	/* each entry's counters tell its key */
		assert_int_equal(bpf_map_update_elem(fd, &key, counters, BPF_NOEXIST), 0);
	}
	assert_int_equal(map_prune(fd, 8, keep), 0);
	for (int first = 1; !bpf_map_get_next_key(fd, first ? NULL : &key, &next); first = 0) {
		key = next;
		left++;
		assert_true(key < (__u64)kept && key % 3 == 0);
		assert_int_equal(bpf_map_lookup_elem(fd, &key, counters), 0);
		assert_memory_equal(counters, &key, sizeof(key));	/* a kept entry is untouched */
	}
	assert_int_equal(left, (kept + 2) / 3);
	key = 3;
	assert_int_equal(bpf_map_lookup_elem(keep, &key, sandbox), 0);	/* the kept map is only read */
	free(counters);
	close(fd);
	close(keep);
}

/* The sandboxes' counters are per-CPU (walked); a plain hash goes by batches. */
static void test_prune_percpu(void **state) { (void)state; prune_case(BPF_MAP_TYPE_PERCPU_HASH, 300, 100); }
static void test_prune_batches(void **state) { (void)state; prune_case(BPF_MAP_TYPE_HASH, 3000, 2500); }

static void test_prune_bad_arguments(void **state)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	int keep = bpf_map_create(BPF_MAP_TYPE_HASH, "prune_keep", 4, 8, 4, &o);

	(void)state;
	assert_true(keep >= 0);
	assert_int_equal(map_prune(-1, 8, keep), -EINVAL);	/* keys of another size */
	assert_int_equal(map_prune(-1, MAP_PURGE_KEY_MAX + 1, keep), -EINVAL);
	assert_true(map_prune(-1, 4, -1) < 0);	/* no map to keep by */
	close(keep);
}

static void test_bad_arguments(void **state)
{
	__u32 id = 0;

	(void)state;
	assert_int_equal(map_purge(-1, MAP_PURGE_KEY_MAX + 1, 0, &id, sizeof(id)), -EINVAL);
	assert_int_equal(map_purge(-1, 8, 6, &id, sizeof(id)), -EINVAL);	/* the id past the key */
	assert_true(map_purge(-1, 8, 0, &id, sizeof(id)) < 0);	/* no map */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_small),
		cmocka_unit_test(test_hash_batches),
		cmocka_unit_test(test_hash_absent_id),
		cmocka_unit_test(test_lpm_walked),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_prune_percpu),
		cmocka_unit_test(test_prune_batches),
		cmocka_unit_test(test_prune_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
