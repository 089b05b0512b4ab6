/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * kbtf.h — the running kernel's BTF as the loader reads it: a digest.
 *
 * The loader reads the kernel's BTF for a few hundred of its 100,000+
 * types: each hook's function and prototype (hooks.h), the structs the
 * programs cast to (their IDs), and what CO-RE relocates against (the cut,
 * corebtf.h). Reading all of it was ~40 M instructions on every load
 * (5.5 MB through sysfs, 4 KB a read, into memory faulted in and copied
 * twice) and cutting it ~17 M more; read through bpf(2) and cut it is
 * ~49 M on 6.12. The digest is that cut with the
 * loader's own roots added, and with each of its types' kernel ID: built
 * from the whole BTF once, kept in KBTF_CACHE, and read from there (a few
 * KB) by every later load of the same kernel and the same sbx-bpf.
 *
 * The cache is keyed by both build IDs, the kernel's (/sys/kernel/notes,
 * which changes with any rebuild of vmlinux and so of its BTF) and this
 * binary's (whose cut made it), and by a sum of the roots it was cut
 * for. A sum of its contents finds a file spoilt. It lives in /run, cleared at
 * each boot, so no other kernel's digest stays. A file that is not the
 * loader's user's own and private (it and its directory), of another key,
 * or spoilt is not read: the
 * digest is built again and replaces it. Every load goes through the same
 * digest, built or read, so the programs and IDs are the same either way.
 */
#ifndef SBX_KBTF_H
#define SBX_KBTF_H

#include <stddef.h>
#include <linux/types.h>

#include "corebtf.h"

#define KBTF_CACHE	"/run/sbx-bpf/kernel.btf"

/* kbtf__open's flags */
#define KBTF_WHOLE	1u	/* the kernel's whole BTF, no digest (SBX_TEST_FULL_BTF=1) */

struct btf;

struct kbtf {
	struct btf *btf;	/* the digest, or the kernel's whole BTF */
	__u32 *kernel_id;	/* the kernel's ID of each of the digest's types; NULL: the whole BTF's own */
	__u32 nr;		/* btf__type_cnt(btf) */
	int fd;			/* the digest's raw BTF in a memfd (libbpf's btf_custom_path), or -1 */
	char how[256];		/* where it came from, for the trace: "cache", "built, cached", … */
};

/*
 * The running kernel's BTF: its digest of @roots (from KBTF_CACHE, or
 * built and cached there), or with KBTF_WHOLE the whole of it. The cache
 * file is SBX_BTF_CACHE when set ("off": built every time, never kept).
 * 0, or -errno with @k empty: the kernel's BTF cannot be read, or a root
 * not COREBTF_OPTIONAL is not in it (-ENOENT).
 */
int kbtf__open(struct kbtf *k, const struct corebtf_root *roots, size_t nr, unsigned flags);

/* The kernel's ID of @k's type @id (0 for none). */
__u32 kbtf__kernel_id(const struct kbtf *k, __u32 id);

void kbtf__close(struct kbtf *k);

/*
 * The GNU build ID in ELF notes @notes (@len bytes, as /sys/kernel/notes
 * or a PT_NOTE segment holds them) into @id (up to @sz bytes): its length,
 * or 0 where there is none.
 */
size_t kbtf__note_build_id(const void *notes, size_t len, __u8 *id, size_t sz);

#endif
