// SPDX-License-Identifier: GPL-2.0
/*
 * fs_match_test.bpf.c — runs fs_match.h, the matcher the LSM programs use,
 * as a `syscall` program: such programs load and run (BPF_PROG_TEST_RUN) on
 * kernels that refuse LSM programs, so the decision logic is tested in a
 * real kernel and verifier on every build host.
 *
 * Hooks: none (test only; denies nothing).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "sbx_abi.h"
#include "fs_verdict.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SBX_MAX_FS_RULES);
	__type(key, struct sbx_fs_key);
	__type(value, struct sbx_fs_rule);
} fs_rules SEC(".maps");

struct path_buf {
	char path[SBX_PATH_MAX];
	struct fs_state st;	/* the matcher's, in map memory as the LSM programs keep it */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_buf);
} bufs SEC(".maps");

/* The key filter fs_match.h reads; fs_match_test.c sets a key's bit with the key, as the loader does. */
volatile __u64 fs_filter[SBX_FS_FILTER_WORDS];

#include "fs_match.h"

/* Keep in step with struct match_args in fs_match_test.c (test-only ABI). */
struct match_args {
	__u32 policy_id;
	__u32 len;
	__u32 mask;
	__u32 split;		/* resume: path[0, split) is the directory ("/" when 0), the rest its name */
	struct fs_verdict v;	/* out */
	__u32 dir_stop;		/* resume, out: the directory's state (as fs.bpf.c dir_memo_keep reads it) */
	__u32 dir_expiring;
	__u32 quick;		/* resume, out: fs_name_clear's answer for the name (in @store) */
	__u32 pad;
	struct fs_verdict dir_v;	/* resume, out: the directory's verdict */
	__u64 store[4];		/* resume: the name as a dentry's inline store holds it (junk after its NUL) */
	char path[SBX_PATH_MAX];
};

SEC("syscall")
int match(struct match_args *args)
{
	struct path_buf *b;
	__u32 zero = 0;

	b = bpf_map_lookup_elem(&bufs, &zero);
	if (!b)
		return -1;
	if (bpf_probe_read_kernel(b->path, sizeof(b->path), args->path))
		return -2;
	fs_match((struct sbx_path *)b->path, args->len, args->policy_id, args->mask, &b->st);
	args->v = b->st.v;
	return 0;
}

/*
 * The same path matched as the directory memo does (fs.bpf.c): the
 * directory's path whole, then its last name resumed from that state.
 */
SEC("syscall")
int resume(struct match_args *args)
{
	__u32 zero = 0, split = args->split, dir_len = split ? split : 1, name_len;
	struct path_buf *b;

	b = bpf_map_lookup_elem(&bufs, &zero);
	if (!b || split >= args->len || args->len >= SBX_PATH_MAX)
		return -1;
	if (bpf_probe_read_kernel(b->path, sizeof(b->path), args->path))
		return -2;
	fs_match((struct sbx_path *)b->path, dir_len, args->policy_id, args->mask, &b->st);
	args->dir_stop = b->st.stop;
	args->dir_expiring = b->st.expiring;
	b->st.base = dir_len == 1 ? 1 : dir_len + 1;
	args->dir_v = b->st.v;
	args->quick = fs_name_clear(&b->st, args->store[0], args->store[1], args->store[2], args->store[3]);
	name_len = args->len - split - 1;
	if (!name_len || name_len > SBX_NAME_MAX)
		return -3;
	barrier_var(name_len);	/* masked after the test, which the compiler would fold into it */
	if (bpf_probe_read_kernel(b->path, name_len & SBX_NAME_MAX, args->path + (split & (SBX_PATH_MAX - 1)) + 1))
		return -4;
	fs_match((struct sbx_path *)b->path, name_len, args->policy_id, args->mask | FS_MATCH_RESUME, &b->st);
	args->v = b->st.v;
	return 0;
}
