// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbx-global — read or write one global variable of the loaded programs,
 * for tests that must reach a path no ordinary input takes (such as
 * tests/e2e/22-rare-walks.sh: bpf_loop failing in the walks of rare paths,
 * bpf/sandbox.h rare_loop_flags).
 *
 *   sbx-global NAME           print NAME's value in every set of programs
 *   sbx-global NAME VALUE     set it (a 4- or 8-byte unsigned variable)
 *
 * The variable is found by its BTF: every loaded map whose value is a data
 * section (.bss, .data) holding a variable NAME. The map is mapped into
 * memory (libbpf makes global data mmapable) and the one variable stored
 * there, so the programs' concurrent updates of its neighbours are not
 * undone, as a whole-value map update would. Exit 0; 1 when no loaded map
 * holds NAME (said on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

struct where {
	__u32 offset, size;
};

/* NAME's place in the data section @sec_id of @btf: 1 found, 0 not there. */
static int find_var(const struct btf *btf, __u32 sec_id, const char *name, struct where *at)
{
	const struct btf_type *sec = btf__type_by_id(btf, sec_id);
	const struct btf_var_secinfo *vs;

	if (!sec || !btf_is_datasec(sec))
		return 0;
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);

		if (var && btf_is_var(var) && !strcmp(btf__name_by_offset(btf, var->name_off), name)) {
			at->offset = vs->offset;
			at->size = vs->size;
			return 1;
		}
	}
	return 0;
}

/* NAME's place in map @info's value: 1 found, 0 not there, -1 on error. */
static int map_var(const struct bpf_map_info *info, const char *name, struct where *at)
{
	struct btf *btf;
	int r;

	if (info->type != BPF_MAP_TYPE_ARRAY || !info->btf_id || !info->btf_value_type_id)
		return 0;
	btf = btf__load_from_kernel_by_id(info->btf_id);
	if (!btf)
		return errno == ENOENT ? 0 : -1;	/* ENOENT: its BTF gone since */
	r = find_var(btf, info->btf_value_type_id, name, at);
	btf__free(btf);
	return r;
}

/* Print, and with @set store @v into, NAME in map @fd: 1 if done, 0 if not there, -1 on error. */
static int access_var(int fd, const char *name, int set, __u64 v)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	struct where at;
	size_t size;
	char *mem;
	__u64 old;
	int r;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	r = map_var(&info, name, &at);
	if (r <= 0)
		return r;
	if ((at.size != 4 && at.size != 8) || at.offset + at.size > info.value_size ||
	    (at.size == 4 && v > 0xffffffffULL) || !(info.map_flags & BPF_F_MMAPABLE)) {
		errno = EINVAL;	/* not a plain number, too large for it, or not reachable in place */
		return -1;
	}
	size = (info.value_size + page - 1) / page * page;
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		return -1;
	if (at.size == 4) {
		old = __atomic_load_n((__u32 *)(mem + at.offset), __ATOMIC_SEQ_CST);
		if (set)
			__atomic_store_n((__u32 *)(mem + at.offset), (__u32)v, __ATOMIC_SEQ_CST);
	} else {
		old = __atomic_load_n((__u64 *)(mem + at.offset), __ATOMIC_SEQ_CST);
		if (set)
			__atomic_store_n((__u64 *)(mem + at.offset), v, __ATOMIC_SEQ_CST);
	}
	munmap(mem, size);
	if (set)
		printf("%s: %llu -> %llu (map %u %s)\n", name, (unsigned long long)old,
		       (unsigned long long)v, info.id, info.name);
	else
		printf("%s: %llu (map %u %s)\n", name, (unsigned long long)old, info.id, info.name);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long long v = 0;
	__u32 id = 0;
	int found = 0;
	char *end;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: sbx-global NAME [VALUE]\n");
		return 1;
	}
	if (argc == 3) {
		errno = 0;
		v = strtoull(argv[2], &end, 0);
		if (errno || !*argv[2] || *end) {
			fprintf(stderr, "sbx-global: %s: not a number\n", argv[2]);
			return 1;
		}
	}
	while (!bpf_map_get_next_id(id, &id)) {
		int fd = bpf_map_get_fd_by_id(id), r;

		if (fd < 0)
			continue;	/* gone since it was listed */
		r = access_var(fd, argv[1], argc == 3, v);
		close(fd);
		if (r < 0) {
			fprintf(stderr, "sbx-global: map %u: %s\n", id, strerror(errno));
			return 1;
		}
		found += r;
	}
	if (!found) {
		fprintf(stderr, "sbx-global: no loaded map holds %s\n", argv[1]);
		return 1;
	}
	return 0;
}
