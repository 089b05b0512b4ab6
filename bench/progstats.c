// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * progstats — every loaded BPF program's run count and run time, for the
 * per-program profile of bench/cost.sh (bpftool is not in the VM).
 *
 *   progstats            one line per program with a name:
 *                        id=12 name=fs_file_open run_cnt=5003 run_time_ns=123456
 *
 * The kernel counts run_cnt and run_time_ns only while
 * kernel.bpf_stats_enabled is 1 (or a BPF_ENABLE_STATS fd is held). Under
 * icount one guest nanosecond is one instruction, so two snapshots around
 * a loop give each program's instructions per run: what the program
 * itself executes plus the clock reads the statistics add, not the
 * trampoline that calls it.
 *
 * Exit 0; 1 when the programs cannot be listed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/syscall.h>

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* The next program id after *id; 0 at the end, -1 on an error. */
static int next_id(__u32 *id)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.start_id = *id;
	if (sys_bpf(BPF_PROG_GET_NEXT_ID, &a) < 0)
		return errno == ENOENT ? 0 : -1;
	*id = a.next_id;
	return 1;
}

/* Print program ID's line; a program unloaded since it was listed is skipped. */
static int show(__u32 id)
{
	struct bpf_prog_info info;
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_id = id;
	fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = fd;
	a.info.info_len = sizeof(info);
	a.info.info = (__u64)(uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	if (info.name[0])
		printf("id=%u name=%s run_cnt=%llu run_time_ns=%llu\n", id, info.name,
		       (unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns);
	return 0;
}

int main(void)
{
	__u32 id = 0;
	int r;

	while ((r = next_id(&id)) > 0) {
		if (show(id) < 0) {
			fprintf(stderr, "progstats: program %u: %s\n", id, strerror(errno));
			return 1;
		}
	}
	if (r < 0) {
		fprintf(stderr, "progstats: BPF_PROG_GET_NEXT_ID: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
