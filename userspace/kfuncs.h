/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * kfuncs.h — the kernel functions the programs call, put in right before
 * each program is loaded.
 *
 * A kfunc declared `extern ... __ksym` makes libbpf parse the kernel's whole
 * BTF when it loads an object, to find the function by name: 40 M
 * instructions per object on 6.12, and each object parses it again. The
 * programs call a marker instead (bpf/sbx_abi.h SBX_CALL_RDONLY_CAST, a
 * helper number no kernel has), and the loader, which indexes the kernel's
 * BTF once for the hooks anyway (hooks.h), turns each marked call into the
 * kfunc call from its libbpf load callbacks, after libbpf has put the
 * program's functions together. A kernel without the function keeps the
 * marked call: the verifier refuses it wherever it is reachable.
 */
#ifndef SBX_KFUNCS_H
#define SBX_KFUNCS_H

#include <stddef.h>
#include <linux/types.h>

struct bpf_insn;
struct bpf_program;

/* The kernel's BTF id of bpf_rdonly_cast for kfuncs__patch (0: none), from the hook index. */
void kfuncs__set_rdonly_cast(__u32 btf_id);

/*
 * Turn the calls in @insns[0..@n) marked @mark into calls of the kernel's
 * function @btf_id (vmlinux). The number of calls turned; none when
 * @btf_id is 0.
 */
size_t kfuncs__patch_insns(struct bpf_insn *insns, size_t n, __s32 mark, __u32 btf_id);

/* The same for the program libbpf is about to load (a prog_prepare_load_fn). 0 or -errno. */
int kfuncs__patch(struct bpf_program *prog);

#endif /* SBX_KFUNCS_H */
