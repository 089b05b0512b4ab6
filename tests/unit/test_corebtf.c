// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cut of a kernel BTF that libbpf relocates against (corebtf.h), on a
 * small BTF built here: which types stay, whole or as shells, what
 * becomes of their references, and which names count as ours.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <cmocka.h>

#include "corebtf.h"

struct kern {
	struct btf *btf;
	int task, inner, pointee, arr, other, task_v2, task_union, task_bad, state, u32t, holder, xtype, deep;
};

/* A kernel BTF with a little of everything the cut must handle. */
static void kern_build(struct kern *k)
{
	struct btf *b = btf__new_empty();
	int i32, ptr_pointee, ptr_inner, ptr_x, ptr_fn, ptr_fwd, ptr_other, proto, cnst;

	assert_non_null(b);
	i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	k->other = btf__add_struct(b, "other", 4);	/* nobody's: dropped */
	btf__add_field(b, "x", i32, 0, 0);
	k->inner = btf__add_struct(b, "inner", 8);	/* by value in task, and pointed to: whole */
	btf__add_field(b, "a", i32, 0, 0);
	btf__add_field(b, "b", i32, 32, 3);		/* a bitfield */
	k->pointee = btf__add_struct(b, "pointee", 24);	/* only behind a pointer: a shell */
	btf__add_field(b, "q", i32, 0, 0);
	btf__add_field(b, "o", k->other, 32, 0);
	ptr_pointee = btf__add_ptr(b, k->pointee);
	ptr_inner = btf__add_ptr(b, k->inner);
	k->arr = btf__add_array(b, i32, k->inner, 2);
	/* held by value by holder (a root of a lower ID), pointed to by task: first a shell, then whole */
	k->deep = btf__add_struct(b, "deep", 4);
	btf__add_field(b, "d", i32, 0, 0);
	k->xtype = btf__add_struct(b, "xtype", 4);
	btf__add_field(b, "dd", k->deep, 0, 0);
	cnst = btf__add_const(b, k->xtype);
	k->holder = btf__add_struct(b, "holder", 4);
	assert_int_equal(btf__add_field(b, "x", cnst, 0, 0), 0);
	ptr_x = btf__add_ptr(b, k->xtype);
	ptr_other = btf__add_ptr(b, k->other);
	proto = btf__add_func_proto(b, i32);		/* behind a pointer, kept whole: int (*)(struct other *) */
	assert_int_equal(btf__add_func_param(b, "p", ptr_other), 0);
	ptr_fn = btf__add_ptr(b, proto);
	ptr_fwd = btf__add_ptr(b, btf__add_fwd(b, "opaque", BTF_FWD_STRUCT));
	k->task = btf__add_struct(b, "task", 72);
	btf__add_field(b, "in", k->inner, 0, 0);
	btf__add_field(b, "p", ptr_pointee, 64, 0);
	btf__add_field(b, "ip", ptr_inner, 128, 0);
	btf__add_field(b, "arr", k->arr, 192, 0);
	btf__add_field(b, "xp", ptr_x, 320, 0);
	btf__add_field(b, "fn", ptr_fn, 384, 0);
	btf__add_field(b, "op", ptr_fwd, 448, 0);
	k->task_v2 = btf__add_struct(b, "task___v2", 4);	/* a flavour of task: a candidate too */
	btf__add_field(b, "z", i32, 0, 0);
	k->task_union = btf__add_union(b, "task", 4);	/* another kind, same name: kept */
	btf__add_field(b, "u", i32, 0, 0);
	k->task_bad = btf__add_struct(b, "task___", 4);	/* no flavour after ___: another name */
	k->state = btf__add_enum64(b, "state", 8, true);
	btf__add_enum64_value(b, "ON", 0);
	btf__add_enum64_value(b, "OFF", -1);
	k->u32t = btf__add_typedef(b, "u32_t", i32);
	k->btf = b;
}

/* The cut of @k for @roots, parsed back as libbpf parses it. */
static struct btf *cut_of(const struct kern *k, const struct corebtf_root *roots, size_t nr)
{
	char path[32];
	__u32 *kid;
	struct btf *built = corebtf__cut(k->btf, roots, nr, &kid), *cut;
	int fd;

	assert_non_null(built);
	fd = corebtf__memfd(built);
	btf__free(built);
	free(kid);
	assert_true(fd >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	cut = btf__parse(path, NULL);
	close(fd);
	assert_non_null(cut);
	return cut;
}

static const struct btf_type *named(const struct btf *b, const char *name, int kind)
{
	int id = btf__find_by_name_kind(b, name, kind);

	return id > 0 ? btf__type_by_id(b, id) : NULL;
}

static const char *name_of(const struct btf *b, __u32 id)
{
	return btf__name_by_offset(b, btf__type_by_id(b, id)->name_off);
}

static const struct btf_type *ptr_target(const struct btf *b, __u32 ptr_id)
{
	const struct btf_type *p = btf__type_by_id(b, ptr_id);

	assert_true(btf_is_ptr(p));
	return btf__type_by_id(b, p->type);
}

static void kept_whole_and_shells(void **state)
{
	static const struct corebtf_root roots[] = {
		{ "task___local", BTF_KIND_STRUCT, 0 }, { "holder", BTF_KIND_STRUCT, 0 },
		{ "u32_t", BTF_KIND_TYPEDEF, 0 }, { "state", BTF_KIND_ENUM, 0 },
	};
	struct kern k;
	struct btf *cut;
	const struct btf_type *t, *p;
	const struct btf_member *m;

	(void)state;
	kern_build(&k);
	cut = cut_of(&k, roots, 4);

	t = named(cut, "task", BTF_KIND_STRUCT);
	assert_non_null(t);
	assert_int_equal(btf_vlen(t), 7);
	assert_int_equal(t->size, 72);
	m = btf_members(t);
	assert_string_equal(name_of(cut, m[0].type), "inner");
	p = ptr_target(cut, m[1].type);		/* a shell of pointee */
	assert_string_equal(btf__name_by_offset(cut, p->name_off), "pointee");
	assert_int_equal(btf_vlen(p), 0);
	assert_int_equal(p->size, 24);
	assert_int_equal(btf_vlen(ptr_target(cut, m[2].type)), 2);	/* inner, whole */
	assert_true(btf_is_array(btf__type_by_id(cut, m[3].type)));
	assert_string_equal(name_of(cut, btf_array(btf__type_by_id(cut, m[3].type))->type), "inner");
	assert_string_equal(name_of(cut, btf_array(btf__type_by_id(cut, m[3].type))->index_type), "int");
	assert_int_equal(btf_member_bit_offset(t, 3), 192);
	p = ptr_target(cut, m[5].type);		/* the function type, whole; its parameter's struct a shell */
	assert_true(btf_is_func_proto(p));
	assert_int_equal(btf_vlen(p), 1);
	assert_string_equal(name_of(cut, p->type), "int");
	assert_int_equal(btf_vlen(ptr_target(cut, btf_params(p)[0].type)), 0);
	assert_true(btf_is_fwd(ptr_target(cut, m[6].type)));

	t = named(cut, "inner", BTF_KIND_STRUCT);	/* whole, though also behind a pointer */
	assert_int_equal(btf_vlen(t), 2);
	assert_int_equal(btf_member_bit_offset(t, 1), 32);
	assert_int_equal(btf_member_bitfield_size(t, 1), 3);

	/* xtype: met first behind task's pointer (a shell), then by value through holder's const: whole */
	t = named(cut, "xtype", BTF_KIND_STRUCT);
	assert_int_equal(btf_vlen(t), 1);
	assert_int_equal(btf_vlen(named(cut, "deep", BTF_KIND_STRUCT)), 1);
	t = named(cut, "holder", BTF_KIND_STRUCT);
	assert_true(btf_is_const(btf__type_by_id(cut, btf_members(t)[0].type)));
	assert_int_equal(btf__type_cnt(cut) - 1,
			 btf__find_by_name_kind(cut, "u32_t", BTF_KIND_TYPEDEF));	/* the last, as in the kernel */

	assert_non_null(named(cut, "task___v2", BTF_KIND_STRUCT));
	assert_non_null(named(cut, "task", BTF_KIND_UNION));
	assert_true(btf__find_by_name_kind(cut, "task___v2", BTF_KIND_STRUCT) >
		    btf__find_by_name_kind(cut, "task", BTF_KIND_STRUCT));	/* the kernel's order */
	assert_null(named(cut, "task___", BTF_KIND_STRUCT));
	t = named(cut, "other", BTF_KIND_STRUCT);	/* in a shell's members, and behind a pointer: a shell */
	assert_non_null(t);
	assert_int_equal(btf_vlen(t), 0);

	t = named(cut, "state", BTF_KIND_ENUM64);	/* an enum root finds the 64-bit one; signed stays signed */
	assert_int_equal(btf_vlen(t), 2);
	assert_true(btf_kflag(t));
	assert_int_equal((long long)btf_enum64_value(&btf_enum64(t)[1]), -1);
	t = named(cut, "u32_t", BTF_KIND_TYPEDEF);
	assert_string_equal(name_of(cut, t->type), "int");
	btf__free(cut);
	btf__free(k.btf);
}

/* A root the kernel has no type of: libbpf would search the modules' BTF, so no cut. */
static void root_not_in_kernel(void **state)
{
	static const struct corebtf_root absent[] = { { "task", BTF_KIND_STRUCT, 0 }, { "absent", BTF_KIND_STRUCT, 0 } };
	static const struct corebtf_root kind[] = { { "state", BTF_KIND_STRUCT, 0 } };
	struct kern k;
	__u32 *kid;

	(void)state;
	kern_build(&k);
	errno = 0;
	assert_null(corebtf__cut(k.btf, absent, 2, &kid));
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_null(corebtf__cut(k.btf, kind, 1, &kid));	/* its name, another kind */
	assert_int_equal(errno, ENOENT);
	btf__free(k.btf);
}

static void struct_ids(void **state)
{
	static const char *const names[] = { "pointee", "task", "absent" };
	unsigned ids[3];
	struct kern k;

	(void)state;
	kern_build(&k);
	corebtf__struct_ids(k.btf, names, ids, 3);
	assert_int_equal(ids[0], k.pointee);
	assert_int_equal(ids[1], k.task);	/* the struct, not the union nor a flavour */
	assert_int_equal(ids[2], 0);
	btf__free(k.btf);
}

/*
 * Function roots (the loader's: each hook's bpf_lsm_ function): a prefix
 * keeps every function it starts, with its prototype and what that
 * points to as shells; an optional root may be absent, another may not.
 * corebtf__cut's map gives each kept type's kernel ID, in the kernel's order.
 */
static void function_roots(void **state)
{
	static const struct corebtf_root roots[] = {
		{ "task", BTF_KIND_STRUCT, 0 },
		{ "hook_", BTF_KIND_FUNC, COREBTF_PREFIX },
		{ "absent_fn", BTF_KIND_FUNC, COREBTF_OPTIONAL },	/* exact: not absent_fn_longer */
		{ "absent", BTF_KIND_STRUCT, COREBTF_OPTIONAL },
	};
	static const struct corebtf_root needed[] = { { "absent_fn", BTF_KIND_FUNC, 0 } };
	struct kern k;
	struct btf *cut;
	const struct btf_type *f, *proto;
	__u32 *kid;
	int i32, ptr_other, p1, p2, fa, fb, fo;

	(void)state;
	kern_build(&k);
	i32 = btf__find_by_name_kind(k.btf, "int", BTF_KIND_INT);
	ptr_other = btf__add_ptr(k.btf, btf__find_by_name_kind(k.btf, "other", BTF_KIND_STRUCT));
	p1 = btf__add_func_proto(k.btf, i32);
	btf__add_func_param(k.btf, "o", ptr_other);
	p2 = btf__add_func_proto(k.btf, i32);
	btf__add_func_param(k.btf, "x", i32);
	fa = btf__add_func(k.btf, "hook_a", BTF_FUNC_GLOBAL, p1);
	fo = btf__add_func(k.btf, "not_a_hook", BTF_FUNC_GLOBAL, p2);
	fb = btf__add_func(k.btf, "hook_b", BTF_FUNC_GLOBAL, p2);
	assert_true(fa > 0 && fo > 0 && fb > 0);
	assert_true(btf__add_func(k.btf, "absent_fn_longer", BTF_FUNC_GLOBAL, p2) > 0);

	cut = corebtf__cut(k.btf, roots, 4, &kid);
	assert_non_null(cut);
	f = named(cut, "hook_a", BTF_KIND_FUNC);
	assert_non_null(f);
	proto = btf__type_by_id(cut, f->type);
	assert_true(btf_is_func_proto(proto));
	assert_int_equal(btf_vlen(proto), 1);
	f = ptr_target(cut, btf_params(proto)[0].type);
	assert_string_equal(btf__name_by_offset(cut, f->name_off), "other");
	assert_int_equal(btf_vlen(f), 0);	/* behind a pointer: a shell */
	assert_non_null(named(cut, "hook_b", BTF_KIND_FUNC));
	assert_null(named(cut, "not_a_hook", BTF_KIND_FUNC));
	assert_null(named(cut, "absent_fn_longer", BTF_KIND_FUNC));	/* an exact root is no prefix */
	assert_int_equal(kid[0], 0);
	for (__u32 id = 1; id < btf__type_cnt(cut); id++) {
		const struct btf_type *c = btf__type_by_id(cut, id), *t = btf__type_by_id(k.btf, kid[id]);

		assert_true(kid[id] > kid[id - 1]);
		assert_int_equal(btf_kind(c), btf_kind(t));
		assert_string_equal(name_of(cut, id), name_of(k.btf, kid[id]));
	}
	assert_int_equal(kid[btf__find_by_name_kind(cut, "hook_b", BTF_KIND_FUNC)], fb);
	free(kid);
	btf__free(cut);

	errno = 0;
	assert_null(corebtf__cut(k.btf, needed, 1, &kid));
	assert_int_equal(errno, ENOENT);
	btf__free(k.btf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kept_whole_and_shells),
		cmocka_unit_test(root_not_in_kernel),
		cmocka_unit_test(struct_ids),
		cmocka_unit_test(function_roots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
