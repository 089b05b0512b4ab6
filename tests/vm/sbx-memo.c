// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbx-memo — what the loaded programs remember of an open of a file
 * (bpf/fs.bpf.c, the open memo) or of the writes in a directory (the
 * directory memo), for tests/e2e/25-open-memo.sh, 26-dir-memo.sh and
 * 27-write-memo.sh: that a memo is kept where it should be, and not where
 * it must not be.
 *
 *   sbx-memo FILE        print "cgroup=ID steps=N settled=J seq=S need=r|w|rw"
 *                        for each loaded open_memo map holding a memo of
 *                        FILE's inode (J: 0, or the jiffies, low 32 bits,
 *                        until which its checks go without the walk while
 *                        nothing moves; S: its sequence count, which every
 *                        write of it moves; need: what it allowed), or "none"
 *   sbx-memo --dir DIR   the same for the dir_memo maps and DIR's inode
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

/*
 * 1 if map @fd is a memo map named @name, 0 if not, -1 on error. Its
 * values open with a struct sbx_open_memo (a directory memo's go on with
 * the matcher's state, which only the programs know).
 */
static int is_memo_map(int fd, const char *name, __u32 *value_size)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	*value_size = info.value_size;
	return info.type == BPF_MAP_TYPE_INODE_STORAGE && !strcmp(info.name, name) &&
	       (info.value_size == sizeof(struct sbx_open_memo) ||
		(strcmp(name, "open_memo") && info.value_size > sizeof(struct sbx_open_memo) &&
		 info.value_size <= 4096));
}

int main(int argc, char **argv)
{
	const char *name = "open_memo", *path = argv[1];
	int file, maps = 0, found = 0;
	__u64 value[512];	/* 4096 bytes, the most is_memo_map takes */
	const struct sbx_open_memo *m = (const void *)value;
	__u32 id = 0, size;

	if (argc == 3 && !strcmp(argv[1], "--dir")) {
		name = "dir_memo";
		path = argv[2];
	} else if (argc != 2) {
		fprintf(stderr, "usage: sbx-memo [--dir] PATH\n");
		return 1;
	}
	file = open(path, O_PATH | O_CLOEXEC);
	if (file < 0) {
		fprintf(stderr, "sbx-memo: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (!bpf_map_get_next_id(id, &id)) {
		int fd = bpf_map_get_fd_by_id(id), r;

		if (fd < 0)
			continue;	/* gone since it was listed */
		r = is_memo_map(fd, name, &size);
		if (r > 0) {
			maps++;
			if (!bpf_map_lookup_elem(fd, &file, value)) {
				printf("cgroup=%llu steps=%u settled=%u seq=%u need=%s%s\n",
				       (unsigned long long)m->cgid, m->n, m->settled, m->seq,
				       m->need & SBX_MEMO_READ ? "r" : "",
				       m->need & SBX_MEMO_WRITE ? "w" : "");
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
		fprintf(stderr, "sbx-memo: no %s map is loaded\n", name);
		return 1;
	}
	if (!found)
		printf("none\n");
	return 0;
}
