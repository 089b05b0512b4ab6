/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * forget.h — what a sandbox leaves in the pinned set, taken away: its
 * entry, its rules and file grants (policy id), its connect grants and
 * resolved addresses, its DNS steering pins, its records. detach does it
 * after putting the old limit values back; the daemon does it for cgroups
 * that are gone (a container whose engine never ran its poststop hook, a
 * killed orchestrator), so that nothing piles up in the maps.
 *
 * Library code: nothing prints.
 */
#ifndef SBX_FORGET_H
#define SBX_FORGET_H

#include <stdbool.h>
#include <linux/types.h>
#include <jansson.h>
#include "sbx_abi.h"

struct sbx_loader;

/*
 * Forget @cgid, whose entry was @sb. @live: tasks may still run under it
 * (detach of a cgroup that exists): its rules go only after calls that
 * began judging by them have ended. The caller holds the records' lock.
 * 0 or -errno (the entry's removal).
 */
int sandbox_forget(struct sbx_loader *l, const char *pin_dir, __u64 cgid, const struct sbx_sandbox *sb,
		   bool live);

/*
 * Is the cgroup @cgid recorded at @path gone (no directory there, or one
 * made since with another id)? A record without a path: false, nothing to
 * go by.
 */
bool sandbox_cgroup_gone(const char *path, __u64 cgid);

/*
 * Forget every sandbox with a record whose cgroup is gone, telling @fn
 * (may be NULL) about each before with its record. The caller holds the
 * records' lock. How many went.
 */
typedef void (*forget_fn)(void *ctx, __u64 cgid, const json_t *record);
int sandbox_forget_gone(struct sbx_loader *l, const char *pin_dir, forget_fn fn, void *ctx);

#endif
