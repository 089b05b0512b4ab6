/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * moves.h — where the kernel's two move counts are (sbx_abi.h struct
 * sbx_moves), for the programs' memos (bpf/fs.bpf.c "Nothing moved";
 * docs/design.md): found by name through bpf/moves.bpf.c, then each seen
 * to move when this process renames a directory and copies the mount
 * tree: a word of that name that stands still is never taken.
 */
#ifndef SBX_MOVES_H
#define SBX_MOVES_H

#include <stddef.h>
#include <linux/types.h>
#include "sbx_abi.h"

/*
 * Both addresses in @addr, found once per process (later calls give the
 * first answer; not for two threads at once): 0, or -errno with both zero
 * and why in @why (@sz bytes). Without them every memo check walks its
 * path: slower, the same verdicts. Makes and removes a directory under
 * TMPDIR (or /tmp) and a child's mount namespace on its first call.
 */
int moves__find(__u64 addr[SBX_MOVES_N], char *why, size_t sz);

#endif
