// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbx-entry — change one field of a sandbox entry in the pinned set, for
 * tests that need a state the daemon only reaches on a failure.
 *
 *   sbx-entry ports CGID P4 P6   set the entry's resolver ports (0 0: what
 *                                the daemon writes when a resolver cannot
 *                                start); prints the old ones as "P4 P6"
 *
 * The rest of the entry is written back as it was read. Stop the daemon
 * (SIGSTOP) around it, or its next sync puts its own ports back.
 * Exit 0; 1 on any error (said on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "sbx_abi.h"

#define SANDBOXES	"/sys/fs/bpf/sbx/maps/sandboxes"

int main(int argc, char **argv)
{
	struct sbx_sandbox sb;
	__u64 cgid;
	int fd;

	if (argc != 5 || strcmp(argv[1], "ports")) {
		fprintf(stderr, "usage: sbx-entry ports CGID P4 P6\n");
		return 1;
	}
	cgid = strtoull(argv[2], NULL, 10);
	fd = bpf_obj_get(SANDBOXES);
	if (fd < 0 || bpf_map_lookup_elem(fd, &cgid, &sb)) {
		fprintf(stderr, "sbx-entry: %s, cgroup %llu: %s\n", SANDBOXES, (unsigned long long)cgid,
			strerror(errno));
		return 1;
	}
	printf("%u %u\n", sb.dns_port4, sb.dns_port6);
	sb.dns_port4 = atoi(argv[3]);
	sb.dns_port6 = atoi(argv[4]);
	if (bpf_map_update_elem(fd, &cgid, &sb, BPF_EXIST)) {
		fprintf(stderr, "sbx-entry: update: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
