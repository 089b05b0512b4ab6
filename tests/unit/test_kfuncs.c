// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kfuncs.c: marked calls become kfunc calls, and nothing else moves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kfuncs.h"
#include "sbx_abi.h"
#include "sbx.skel.h"
#include "shared.skel.h"

#define MARK SBX_CALL_RDONLY_CAST
#define CALL(src, imm_) { .code = BPF_JMP | BPF_CALL, .src_reg = (src), .imm = (imm_) }

static void test_patch_insns(void **state)
{
	struct bpf_insn insns[] = {
		CALL(0, MARK),					/* turned */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 1, .imm = MARK },	/* a constant */
		CALL(0, 14),					/* another helper */
		CALL(BPF_PSEUDO_CALL, MARK),			/* a call of a function 0x5bc… ahead */
		CALL(0, MARK),					/* turned */
	};
	struct bpf_insn before[sizeof(insns) / sizeof(insns[0])];

	(void)state;
	memcpy(before, insns, sizeof(insns));
	/* No id (a kernel without the kfunc): the marked calls stay what the verifier refuses. */
	assert_int_equal(kfuncs__patch_insns(insns, 5, MARK, 0), 0);
	assert_memory_equal(insns, before, sizeof(insns));
	assert_int_equal(kfuncs__patch_insns(insns, 5, MARK, 4242), 2);
	for (int i = 0; i < 5; i += 4) {
		assert_int_equal(insns[i].code, BPF_JMP | BPF_CALL);
		assert_int_equal(insns[i].src_reg, BPF_PSEUDO_KFUNC_CALL);
		assert_int_equal(insns[i].off, 0);
		assert_int_equal(insns[i].imm, 4242);
	}
	assert_memory_equal(&insns[1], &before[1], 3 * sizeof(insns[0]));
	/* Done once: a second pass finds nothing marked. */
	assert_int_equal(kfuncs__patch_insns(insns, 5, MARK, 4242), 0);
}

/* Marked calls in @obj's programs, and kfunc calls of @id. */
static void count_calls(struct bpf_object *obj, __u32 id, int *marked, int *kfunc)
{
	struct bpf_program *prog;

	*marked = *kfunc = 0;
	bpf_object__for_each_program(prog, obj) {
		const struct bpf_insn *in = bpf_program__insns(prog);

		for (size_t i = 0; i < bpf_program__insn_cnt(prog); i++) {
			if (in[i].code != (BPF_JMP | BPF_CALL))
				continue;
			*marked += in[i].src_reg == 0 && in[i].imm == MARK;
			*kfunc += in[i].src_reg == BPF_PSEUDO_KFUNC_CALL && in[i].imm == (__s32)id;
		}
	}
}

/* Every program of @obj through kfuncs__patch, with the kfunc's id @id (0: none). */
static void patch_all(struct bpf_object *obj, __u32 id)
{
	struct bpf_program *prog;

	kfuncs__set_rdonly_cast(id);
	bpf_object__for_each_program(prog, obj)
		assert_int_equal(kfuncs__patch(prog), 0);
}

/*
 * Neither object declares a kfunc (each declared one makes libbpf parse
 * the kernel's BTF for the object), and the walk's marked calls in the
 * extension object's programs all turn into calls of the id given.
 */
static void test_objects(void **state)
{
	struct sbx_bpf *skel = sbx_bpf__open();
	struct shared_bpf *x = shared_bpf__open();
	int marked, kfunc, was;

	(void)state;
	assert_non_null(skel);
	assert_non_null(x);
	assert_true(btf__find_by_name_kind(bpf_object__btf(skel->obj), "bpf_rdonly_cast", BTF_KIND_FUNC) < 0);
	assert_true(btf__find_by_name_kind(bpf_object__btf(x->obj), "bpf_rdonly_cast", BTF_KIND_FUNC) < 0);

	/* The enforcement object's LSM programs cast too (file_open's UNTRUSTED), and are turned the same. */
	count_calls(skel->obj, 777, &was, &kfunc);
	assert_true(was > 0);
	patch_all(skel->obj, 777);
	count_calls(skel->obj, 777, &marked, &kfunc);
	assert_int_equal(marked, 0);
	assert_int_equal(kfunc, was);

	count_calls(x->obj, 777, &was, &kfunc);
	assert_true(was > 0);
	assert_int_equal(kfunc, 0);
	patch_all(x->obj, 0);
	count_calls(x->obj, 777, &marked, &kfunc);
	assert_int_equal(marked, was);
	patch_all(x->obj, 777);
	count_calls(x->obj, 777, &marked, &kfunc);
	assert_int_equal(marked, 0);
	assert_int_equal(kfunc, was);
	kfuncs__set_rdonly_cast(0);
	shared_bpf__destroy(x);
	sbx_bpf__destroy(skel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patch_insns),
		cmocka_unit_test(test_objects),
	};

	return cmocka_run_group_tests_name("kfuncs", tests, NULL, NULL);
}
