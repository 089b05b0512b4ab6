// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mapmem — what the pinned sbx-bpf maps hold and what the kernel charges
 * for them, for bench/scale.sh (bpftool is not in the VM).
 *
 *   mapmem [DIR]        (default /sys/fs/bpf/sbx/maps)
 *
 * For every map pinned in DIR: BPF_OBJ_GET (read-only), the map's info
 * (BPF_OBJ_GET_INFO_BY_FD: type, key and value size, max_entries, flags),
 * the kernel's "memlock" figure from /proc/self/fdinfo/FD, and, for hash
 * and LPM-trie maps, the number of entries (BPF_MAP_GET_NEXT_KEY over the
 * keys). One line per map, then the totals:
 *
 *   map=sandboxes type=hash key=8 value=32 max=4096 flags=0x1 entries=1000 entry_bytes=40000 memlock=123456
 *   total maps=11 entries=3012 entry_bytes=152340 memlock=9876543
 *
 * entry_bytes = entries × (key + value): the payload, without the kernel's
 * per-element overhead (hash node, LPM node). memlock is the kernel's own
 * account of the map: from Linux 6.4 (map_mem_usage) it follows the
 * elements a BPF_F_NO_PREALLOC hash holds; before, it is the size computed
 * from max_entries when the map was made, the same whatever the map holds.
 * entries=- for arrays, ring buffers and other maps without keys to walk.
 *
 * Exit 0; 1 when DIR cannot be read or a map cannot be opened.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/syscall.h>

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static const char *type_name(__u32 t)
{
	switch (t) {
	case BPF_MAP_TYPE_HASH: return "hash";
	case BPF_MAP_TYPE_ARRAY: return "array";
	case BPF_MAP_TYPE_PERCPU_HASH: return "percpu_hash";
	case BPF_MAP_TYPE_PERCPU_ARRAY: return "percpu_array";
	case BPF_MAP_TYPE_LRU_HASH: return "lru_hash";
	case BPF_MAP_TYPE_LRU_PERCPU_HASH: return "lru_percpu_hash";
	case BPF_MAP_TYPE_LPM_TRIE: return "lpm_trie";
	case BPF_MAP_TYPE_RINGBUF: return "ringbuf";
	case BPF_MAP_TYPE_TASK_STORAGE: return "task_storage";
	case BPF_MAP_TYPE_INODE_STORAGE: return "inode_storage";
	default: return "other";
	}
}

/* Maps whose keys can be walked to count what they hold. */
static int countable(__u32 t)
{
	return t == BPF_MAP_TYPE_HASH || t == BPF_MAP_TYPE_PERCPU_HASH || t == BPF_MAP_TYPE_LRU_HASH ||
	       t == BPF_MAP_TYPE_LRU_PERCPU_HASH || t == BPF_MAP_TYPE_LPM_TRIE;
}

/* The kernel's "memlock:" line of @fd's fdinfo; -1 when missing. */
static long long memlock(int fd)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Keys in the map (a walk over them); -1 on error. */
static long long count_entries(int fd, __u32 key_size)
{
	unsigned char *prev = calloc(2, key_size), *next = prev + key_size;
	union bpf_attr attr;
	long long n = 0;
	int first = 1;

	if (!prev)
		return -1;
	for (;;) {
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = fd;
		attr.key = first ? 0 : (uintptr_t)prev;
		attr.next_key = (uintptr_t)next;
		if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &attr)) {
			if (errno != ENOENT)
				n = -1;
			break;
		}
		n++;
		first = 0;
		memcpy(prev, next, key_size);
	}
	free(prev);
	return n;
}

struct totals {
	int maps;
	long long entries, entry_bytes, memlock;
};

static int one_map(const char *dir, const char *name, struct totals *t)
{
	char path[4096];
	struct bpf_map_info info = {};
	union bpf_attr attr = {};
	long long entries = -1, ml;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	attr.pathname = (uintptr_t)path;
	attr.file_flags = BPF_F_RDONLY;
	fd = sys_bpf(BPF_OBJ_GET, &attr);
	if (fd < 0) {
		fprintf(stderr, "mapmem: %s: %s\n", path, strerror(errno));
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr)) {
		fprintf(stderr, "mapmem: %s: not a map (%s)\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (countable(info.type))
		entries = count_entries(fd, info.key_size);
	ml = memlock(fd);
	printf("map=%s type=%s key=%u value=%u max=%u flags=0x%x", name, type_name(info.type), info.key_size,
	       info.value_size, info.max_entries, info.map_flags);
	if (entries >= 0)
		printf(" entries=%lld entry_bytes=%lld", entries,
		       entries * (info.key_size + info.value_size));
	else
		printf(" entries=- entry_bytes=-");
	printf(" memlock=%lld\n", ml);
	t->maps++;
	if (entries > 0) {
		t->entries += entries;
		t->entry_bytes += entries * (info.key_size + info.value_size);
	}
	if (ml > 0)
		t->memlock += ml;
	close(fd);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/sys/fs/bpf/sbx/maps";
	struct totals t = {};
	char *names[256];
	struct dirent *de;
	int n = 0, ret = 0;
	DIR *d;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "Usage: mapmem [DIR]\n");
		return 2;
	}
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "mapmem: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	while ((de = readdir(d)) && n < (int)(sizeof(names) / sizeof(names[0])))
		if (de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), by_name);
	for (int i = 0; i < n; i++) {
		if (!names[i] || one_map(dir, names[i], &t))
			ret = 1;
		free(names[i]);
	}
	printf("total maps=%d entries=%lld entry_bytes=%lld memlock=%lld\n", t.maps, t.entries, t.entry_bytes,
	       t.memlock);
	return ret;
}
