// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "sbx.skel.h"
#include "probe.skel.h"

/* The DNS steering programs, attached per sandbox cgroup. */
#define NR_STEER	8

struct sbx_loader {
	struct sbx_bpf *skel;
	__u32 nr_sandboxes;
	struct bpf_link *steer[NR_STEER];
};

/* Hooks that only newer kernels have are loaded only where they exist. */
static void optional_hooks(struct sbx_bpf *skel)
{
	static const struct { const char *hook; size_t prog_off; } opt[] = {
		{ "file_truncate", offsetof(struct sbx_bpf, progs.fs_file_truncate) },
		{ "inode_set_acl", offsetof(struct sbx_bpf, progs.fs_inode_set_acl) },
		{ "inode_remove_acl", offsetof(struct sbx_bpf, progs.fs_inode_remove_acl) },
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
	l->skel = sbx_bpf__open();
	if (!l->skel) {
		err = -errno;
		goto out;
	}
	optional_hooks(l->skel);
	err = sbx_bpf__load(l->skel);
	if (err)
		goto out;
	err = sbx_bpf__attach(l->skel);
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
	for (int i = 0; i < NR_STEER; i++)
		bpf_link__destroy(l->steer[i]);
	sbx_bpf__destroy(l->skel);
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

static int map_put(struct bpf_map *map, const void *key, const void *val)
{
	return bpf_map_update_elem(bpf_map__fd(map), key, val, BPF_ANY) ? -errno : 0;
}

static int map_del(struct bpf_map *map, const void *key)
{
	return bpf_map_delete_elem(bpf_map__fd(map), key) ? -errno : 0;
}

int loader__put_net_prefix(struct sbx_loader *l, const struct sbx_net_key *k,
			   const struct sbx_net_ports *v)
{
	return map_put(l->skel->maps.net_rules, k, v);
}

int loader__delete_net_prefix(struct sbx_loader *l, const struct sbx_net_key *k)
{
	return map_del(l->skel->maps.net_rules, k);
}

int loader__dns_update(struct sbx_loader *l, const struct sbx_dns_key *k,
		       const struct sbx_dns_entry *e)
{
	return map_put(l->skel->maps.dns_allow, k, e);
}

int loader__dns_delete(struct sbx_loader *l, const struct sbx_dns_key *k)
{
	return map_del(l->skel->maps.dns_allow, k);
}

int loader__dns_client(struct sbx_loader *l, __u32 key, struct sbx_dns_client *out)
{
	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.dns_clients), &key, out))
		return -errno;
	return 0;
}

int loader__steer_dns(struct sbx_loader *l, int cgroup_fd, __u16 port4, __u16 port6)
{
	struct bpf_program *progs[NR_STEER] = {
		l->skel->progs.net_connect4, l->skel->progs.net_connect6,
		l->skel->progs.net_sendmsg4, l->skel->progs.net_sendmsg6,
		l->skel->progs.net_recvmsg4, l->skel->progs.net_recvmsg6,
		l->skel->progs.net_getpeername4, l->skel->progs.net_getpeername6,
	};

	l->skel->bss->dns_port4 = port4;
	l->skel->bss->dns_port6 = port6;
	for (int i = 0; i < NR_STEER; i++) {
		if (l->steer[i])
			return -EBUSY;
		l->steer[i] = bpf_program__attach_cgroup(progs[i], cgroup_fd);
		if (!l->steer[i]) {
			int err = -errno;

			for (int j = 0; j < i; j++) {
				bpf_link__destroy(l->steer[j]);
				l->steer[j] = NULL;
			}
			l->skel->bss->dns_port4 = 0;
			return err;
		}
	}
	return 0;
}
