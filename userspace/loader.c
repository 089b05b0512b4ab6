// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "fs.skel.h"
#include "probe.skel.h"

struct sbx_loader {
	struct fs_bpf *skel;
	__u32 nr_sandboxes;
};

/* Hooks that only newer kernels have are loaded only where they exist. */
static void optional_hooks(struct fs_bpf *skel)
{
	static const struct { const char *hook; size_t prog_off; } opt[] = {
		{ "file_truncate", offsetof(struct fs_bpf, progs.fs_file_truncate) },
		{ "inode_set_acl", offsetof(struct fs_bpf, progs.fs_inode_set_acl) },
		{ "inode_remove_acl", offsetof(struct fs_bpf, progs.fs_inode_remove_acl) },
	};

	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool idmap;

	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++) {
		struct bpf_program *prog = *(struct bpf_program **)((char *)skel + opt[i].prog_off);

		if (libbpf_find_vmlinux_btf_id(opt[i].hook, BPF_LSM_MAC) < 0)
			bpf_program__set_autoload(prog, false);
	}
	/* inode_setattr gained its idmap argument with struct mnt_idmap (6.3). */
	idmap = vmlinux && btf__find_by_name_kind(vmlinux, "mnt_idmap", BTF_KIND_STRUCT) > 0;
	bpf_program__set_autoload(idmap ? skel->progs.fs_inode_setattr : skel->progs.fs_inode_setattr_idmap,
				  false);
	btf__free(vmlinux);
}

struct sbx_loader *loader__open_and_attach(void)
{
	struct sbx_loader *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return NULL;
	l->skel = fs_bpf__open();
	if (!l->skel) {
		err = -errno;
		goto out;
	}
	optional_hooks(l->skel);
	err = fs_bpf__load(l->skel);
	if (err)
		goto out;
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

int loader__put_fs_rule(struct sbx_loader *l, const struct sbx_fs_key *key,
			const struct sbx_fs_rule *rule)
{
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.fs_rules), key, rule, BPF_ANY))
		return -errno;
	return 0;
}

int loader__delete_fs_rule(struct sbx_loader *l, const struct sbx_fs_key *key)
{
	if (bpf_map_delete_elem(bpf_map__fd(l->skel->maps.fs_rules), key))
		return -errno;
	return 0;
}

int loader__add_sandbox(struct sbx_loader *l, __u64 cgid, __u32 policy_id, __u32 flags,
			__u32 any_depth_mask)
{
	struct sbx_sandbox sb = { .policy_id = policy_id, .flags = flags,
				  .any_depth_mask = any_depth_mask };

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

int loader__set_scope(struct sbx_loader *l, int cgroup_fd)
{
	__u32 key = 0, fd = (__u32)cgroup_fd;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.scope), &key, &fd, BPF_ANY))
		return -errno;
	l->skel->bss->scope_set = 1;
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
