/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * corebtf.h — the part of the kernel's BTF our CO-RE relocations can match.
 *
 * libbpf relocates each field access by searching the whole kernel BTF for
 * types of the accessed type's name: a linear scan per type name per
 * object, 4.2 M instructions each on 6.1 (126,000 types), 29 of them in a
 * run's load. Given the names our objects use (their BTF, at build time),
 * corebtf__build keeps every kernel type of one of those names with all it
 * holds by value, and what a kept pointer points to as a named shell
 * (same name, kind and size, no members). libbpf, given that (its
 * btf_custom_path), finds the same candidates with the same members at the
 * same offsets, so every relocation comes out the same: what it can
 * compare (names, kinds, members along a by-value path, the field's own
 * type) is kept whole, and what is cut is behind a pointer, where libbpf
 * compares nothing. Type IDs differ from the kernel's: the programs get
 * the kernel's IDs they pass to the kernel from the loader, not from a
 * relocation (bpf/resolve.h).
 */
#ifndef SBX_COREBTF_H
#define SBX_COREBTF_H

#include <stddef.h>

struct btf;

/*
 * A BTF of @kernel's types named one of @names (their ___flavour suffixes
 * ignored on both sides, as libbpf ignores them), with what they hold,
 * written to a memfd: its fd (close-on-exec), or -errno.
 */
int corebtf__build(const struct btf *kernel, const char *const *names, size_t nr);

/* The IDs in @kernel of the structs named @names, in one pass: each, or 0 where it has none. */
void corebtf__struct_ids(const struct btf *kernel, const char *const *names, unsigned *ids, size_t nr);

#endif
