// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbx-slots — take or give back every judging work slot of every CPU, for
 * tests/e2e/17-full-maps.sh: what sandboxed calls do when the kernel side
 * has no memory left to judge them with (bpf/sandbox.h judge_memory).
 *
 *   sbx-slots take    mark every slot of every CPU busy (work_busy = all ones)
 *   sbx-slots give    mark them free again
 *
 * work_busy is not pinned: it is found by name among the loaded maps, each
 * one so named (a second set loaded by a test) is set. Run it outside
 * every sandbox: between take and give, a sandboxed task's judged calls
 * find no slot. Exit 0; 1 when no such map was set (said on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define MAP_NAME	"work_busy"

/* Set every CPU's value of map @fd (one __u64 at key 0) to @v: 1 if done, 0 if not that map, -1 on error. */
static int set_busy(int fd, __u64 v)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), zero = 0;
	int ncpu = libbpf_num_possible_cpus(), err;
	__u64 *all;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	if (strcmp(info.name, MAP_NAME) || info.type != BPF_MAP_TYPE_PERCPU_ARRAY || info.value_size != 8)
		return 0;
	if (ncpu <= 0 || !(all = calloc(ncpu, sizeof(*all))))
		return -1;
	for (int i = 0; i < ncpu; i++)
		all[i] = v;
	err = bpf_map_update_elem(fd, &zero, all, BPF_ANY);
	free(all);
	return err ? -1 : 1;
}

int main(int argc, char **argv)
{
	__u32 id = 0;
	int set = 0;
	__u64 v;

	if (argc != 2 || (strcmp(argv[1], "take") && strcmp(argv[1], "give"))) {
		fprintf(stderr, "usage: sbx-slots take|give\n");
		return 1;
	}
	v = !strcmp(argv[1], "take") ? ~0ULL : 0;
	while (!bpf_map_get_next_id(id, &id)) {
		int fd = bpf_map_get_fd_by_id(id), r;

		if (fd < 0)
			continue;	/* gone since it was listed */
		r = set_busy(fd, v);
		close(fd);
		if (r < 0) {
			fprintf(stderr, "sbx-slots: map %u: %s\n", id, strerror(errno));
			return 1;
		}
		set += r;
	}
	if (!set) {
		fprintf(stderr, "sbx-slots: no %s map loaded\n", MAP_NAME);
		return 1;
	}
	printf("%s: %d map%s\n", argv[1], set, set == 1 ? "" : "s");
	return 0;
}
