/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * corebtf.h — the part of the kernel's BTF our CO-RE relocations can match.
 *
 * libbpf relocates each field access by searching the whole kernel BTF for
 * types of the accessed type's name: a linear scan per type name per
 * object, 4.2 M instructions each on 6.1 (100,643 types), 29 of them in a
 * run's load. Given the types our relocations start from (their roots,
 * read from the objects' .BTF.ext at build time: scripts/core-roots.c),
 * corebtf__cut keeps every kernel type named like a root with all it
 * holds by value, and what a kept pointer points to as a named shell (same
 * name, kind and size, no members). libbpf, given that (its
 * btf_custom_path), finds the same candidates in the same order with the
 * same members at the same offsets, so every relocation comes out the
 * same: along a by-value path it is all kept whole, and behind a pointer
 * libbpf looks at no more than a composite's name, kind and size (what a
 * shell keeps) and at non-composites, which are kept whole. Type IDs differ
 * from the kernel's: the programs get the kernel's IDs they pass to the
 * kernel from the loader, not from a relocation (bpf/sandbox.h AS_KERNEL).
 */
#ifndef SBX_COREBTF_H
#define SBX_COREBTF_H

#include <stddef.h>
#include <linux/types.h>

struct btf;

/*
 * A type a relocation starts from: its name in our objects (flavour
 * included) and BTF kind. The loader adds roots of its own for what it
 * reads from the kernel's BTF besides relocations (kbtf.h): functions
 * (BTF_KIND_FUNC, kept with their prototypes; COREBTF_PREFIX: every
 * function whose name starts with @name) and structs it needs the IDs of.
 * COREBTF_OPTIONAL: a kernel without it is no error.
 */
#define COREBTF_OPTIONAL	1u
#define COREBTF_PREFIX		2u

struct corebtf_root {
	const char *name;
	int kind;
	unsigned flags;
};


/*
 * A BTF of @kernel's types named like one of @roots (their ___flavour
 * suffixes ignored on both sides, as libbpf ignores them), with what they
 * hold, and in *@kernel_id (malloc'd, one entry per type ID of the cut,
 * [0] = 0) the kernel's ID of each of its types. NULL with errno set:
 * ENOENT when a root not COREBTF_OPTIONAL has no type of its name and
 * kind in @kernel: libbpf would go on to search the modules' BTF for it,
 * and the cut has none of theirs.
 */
struct btf *corebtf__cut(const struct btf *kernel, const struct corebtf_root *roots, size_t nr,
			 __u32 **kernel_id);

/* @b's raw BTF in a memfd, for libbpf to read by path: its fd (close-on-exec), or -errno. */
int corebtf__memfd(const struct btf *b);

/* The IDs in @kernel of the structs named @names, in one pass: each, or 0 where it has none. */
void corebtf__struct_ids(const struct btf *kernel, const char *const *names, unsigned *ids, size_t nr);

#endif
