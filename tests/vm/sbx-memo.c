// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbx-memo — what the loaded programs remember of a read-only open of a
 * file (bpf/fs.bpf.c, the open memo), for tests/e2e/25-open-memo.sh: that
 * a memo is kept where it should be, and not where it must not be.
 *
 *   sbx-memo FILE    print "cgroup=ID steps=N" for each loaded open_memo
 *                    map holding a memo of FILE's inode, or "none"
 *
 * The map is inode storage: its key is a descriptor of the file, opened
 * here with O_PATH, which no LSM hook of an open sees. Exit 0; 1 when no
 * such map is loaded, or on error (said on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "sbx_abi.h"

/* 1 if map @fd is an open_memo map, 0 if not, -1 on error. */
static int is_memo_map(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	return info.type == BPF_MAP_TYPE_INODE_STORAGE && !strcmp(info.name, "open_memo") &&
	       info.value_size == sizeof(struct sbx_open_memo);
}

int main(int argc, char **argv)
{
	struct sbx_open_memo m;
	int file, maps = 0, found = 0;
	__u32 id = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: sbx-memo FILE\n");
		return 1;
	}
	file = open(argv[1], O_PATH | O_CLOEXEC);
	if (file < 0) {
		fprintf(stderr, "sbx-memo: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while (!bpf_map_get_next_id(id, &id)) {
		int fd = bpf_map_get_fd_by_id(id), r;

		if (fd < 0)
			continue;	/* gone since it was listed */
		r = is_memo_map(fd);
		if (r > 0) {
			maps++;
			if (!bpf_map_lookup_elem(fd, &file, &m)) {
				printf("cgroup=%llu steps=%u\n", (unsigned long long)m.cgid, m.n);
				found++;
			} else if (errno != ENOENT) {
				r = -1;
			}
		}
		close(fd);
		if (r < 0) {
			fprintf(stderr, "sbx-memo: map %u: %s\n", id, strerror(errno));
			return 1;
		}
	}
	if (!maps) {
		fprintf(stderr, "sbx-memo: no open_memo map is loaded\n");
		return 1;
	}
	if (!found)
		printf("none\n");
	return 0;
}
