/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * loader.h — loads and attaches the enforcement programs (fs.bpf.c) and
 * writes sandboxes and rules into their maps.
 */
#ifndef SBX_LOADER_H
#define SBX_LOADER_H

#include <linux/types.h>
#include "sbx_abi.h"

struct sbx_loader;

/* Open, load and attach. NULL with errno set on failure. */
struct sbx_loader *loader__open_and_attach(void);
void loader__destroy(struct sbx_loader *l);

/* Register a rule path (absolute, normalised) for @policy_id. */
int loader__add_fs_rule(struct sbx_loader *l, __u32 policy_id, const char *path,
			__u32 flags, __u32 rule_id);
/* Put cgroup @cgid under @policy_id. Rules go in first, so no open slips by. */
int loader__add_sandbox(struct sbx_loader *l, __u64 cgid, __u32 policy_id, __u32 flags);
int loader__remove_sandbox(struct sbx_loader *l, __u64 cgid);

/* The events ring buffer map fd, and the summed stats counters. */
int loader__events_fd(const struct sbx_loader *l);
int loader__stat(const struct sbx_loader *l, enum sbx_stat which, __u64 *value);

/* The map key for a rule path: the hash the kernel computes while walking. */
struct sbx_fs_key loader__fs_key(__u32 policy_id, const char *path);

/* Load and attach the trivial LSM probe program, then drop it. 0 or -errno. */
int loader__probe_lsm(void);

#endif
