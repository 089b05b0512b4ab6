// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * progstats — every loaded BPF program's run count and run time, for the
 * per-program profile of bench/cost.sh (bpftool is not in the VM).
 *
 *   progstats            one line per program with a name:
 *                        id=12 name=fs_file_open run_cnt=5003 run_time_ns=123456 tag=0f1e2d3c4b5a6978 attach=51234
 *
 * The kernel counts run_cnt and run_time_ns only while
 * kernel.bpf_stats_enabled is 1 (or a BPF_ENABLE_STATS fd is held). Under
 * icount one guest nanosecond is one instruction, so two snapshots around
 * a loop give each program's instructions per run: what the program
 * itself executes plus the clock reads the statistics add, not the
 * trampoline that calls it.
 *
 * The tag is the kernel's hash of the instructions as loaded (map
 * references left out): two loads of one program relocated alike have
 * one tag (tests/e2e/24-core-btf). attach is the kernel BTF ID it was
 * loaded for (an LSM program's bpf_lsm_<hook>; 0 for none).
 *
 * Exit 0; 1 when the programs cannot be listed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

/* Print program ID's line; a program unloaded since it was listed is skipped. */
static int show(__u32 id)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd, err;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	memset(&info, 0, sizeof(info));
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (err)
		return -1;
	if (info.name[0]) {
		printf("id=%u name=%s run_cnt=%llu run_time_ns=%llu tag=", id, info.name,
		       (unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns);
		for (size_t i = 0; i < sizeof(info.tag); i++)
			printf("%02x", info.tag[i]);
		printf(" attach=%u\n", info.attach_btf_id);
	}
	return 0;
}

int main(void)
{
	__u32 id = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		if (show(id) < 0) {
			fprintf(stderr, "progstats: program %u: %s\n", id, strerror(errno));
			return 1;
		}
	}
	if (errno != ENOENT) {
		fprintf(stderr, "progstats: listing programs: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
