// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kfuncs.c — marked calls turned into kfunc calls before a load (kfuncs.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>

#include "kfuncs.h"
#include "sbx_abi.h"

static __u32 rdonly_cast_id;

void kfuncs__set_rdonly_cast(__u32 btf_id)
{
	rdonly_cast_id = btf_id;
}

static int is_marked(const struct bpf_insn *insn, __s32 mark)
{
	return insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == 0 && insn->imm == mark;
}

size_t kfuncs__patch_insns(struct bpf_insn *insns, size_t n, __s32 mark, __u32 btf_id)
{
	size_t patched = 0;

	if (!btf_id)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!is_marked(&insns[i], mark))
			continue;
		insns[i].src_reg = BPF_PSEUDO_KFUNC_CALL;
		insns[i].off = 0;	/* the kernel's own BTF, not a module's */
		insns[i].imm = (__s32)btf_id;
		patched++;
	}
	return patched;
}

int kfuncs__patch(struct bpf_program *prog)
{
	const struct bpf_insn *insns = bpf_program__insns(prog);
	size_t i, n = bpf_program__insn_cnt(prog);
	struct bpf_insn *copy;
	int err;

	/* Most programs call no kfunc: look before copying. */
	for (i = 0; i < n && !is_marked(&insns[i], SBX_CALL_RDONLY_CAST); i++)
		;
	if (i == n || !rdonly_cast_id)
		return 0;
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, insns, n * sizeof(*copy));
	kfuncs__patch_insns(copy + i, n - i, SBX_CALL_RDONLY_CAST, rdonly_cast_id);	/* none before i */
	err = bpf_program__set_insns(prog, copy, n);	/* libbpf keeps a copy */
	free(copy);
	return err;
}
