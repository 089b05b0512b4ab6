// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "fs.skel.h"
#include "probe.skel.h"

struct sbx_loader {
	struct fs_bpf *skel;
	__u32 nr_sandboxes;
};

struct sbx_loader *loader__open_and_attach(void)
{
	struct sbx_loader *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return NULL;
	l->skel = fs_bpf__open_and_load();
	if (!l->skel) {
		err = -errno;
		goto out;
	}
	err = fs_bpf__attach(l->skel);
	if (err)
		goto out;
	return l;
out:
	loader__destroy(l);
	errno = -err;
	return NULL;
}

void loader__destroy(struct sbx_loader *l)
{
	if (!l)
		return;
	fs_bpf__destroy(l->skel);
	free(l);
}

struct sbx_fs_key loader__fs_key(__u32 policy_id, const char *path)
{
	struct sbx_fs_key key = { .policy_id = policy_id, .hash = SBX_HASH_INIT };
	size_t len = strlen(path);

	/* "/" is the empty prefix the kernel tests before the first component. */
	if (len == 1 && path[0] == '/')
		len = 0;
	for (size_t i = 0; i < len; i++)
		key.hash = sbx_hash_byte(key.hash, (unsigned char)path[i]);
	key.len = (__u32)len;
	return key;
}

int loader__add_fs_rule(struct sbx_loader *l, __u32 policy_id, const char *path,
			__u32 flags, __u32 rule_id)
{
	struct sbx_fs_key key;
	struct sbx_fs_rule rule = { .rule_id = rule_id, .flags = flags };

	if (path[0] != '/' || strlen(path) >= SBX_PATH_MAX)
		return -EINVAL;
	key = loader__fs_key(policy_id, path);
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.fs_rules), &key, &rule, BPF_ANY))
		return -errno;
	return 0;
}

int loader__add_sandbox(struct sbx_loader *l, __u64 cgid, __u32 policy_id, __u32 flags)
{
	struct sbx_sandbox sb = { .policy_id = policy_id, .flags = flags };

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.sandboxes), &cgid, &sb, BPF_NOEXIST))
		return -errno;
	l->skel->bss->nr_sandboxes = ++l->nr_sandboxes;
	return 0;
}

int loader__remove_sandbox(struct sbx_loader *l, __u64 cgid)
{
	if (bpf_map_delete_elem(bpf_map__fd(l->skel->maps.sandboxes), &cgid))
		return -errno;
	l->skel->bss->nr_sandboxes = --l->nr_sandboxes;
	return 0;
}

int loader__events_fd(const struct sbx_loader *l)
{
	return bpf_map__fd(l->skel->maps.events);
}

int loader__stat(const struct sbx_loader *l, enum sbx_stat which, __u64 *value)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 key = which;
	__u64 *vals;

	if (ncpu < 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	*value = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.stats), &key, vals)) {
		int err = -errno;

		free(vals);
		return err;
	}
	for (int i = 0; i < ncpu; i++)
		*value += vals[i];
	free(vals);
	return 0;
}

int loader__probe_lsm(void)
{
	struct probe_bpf *skel = probe_bpf__open();
	int err;

	if (!skel)
		return -errno;
	err = probe_bpf__load(skel);
	if (!err)
		err = probe_bpf__attach(skel);
	probe_bpf__destroy(skel);
	return err;
}
