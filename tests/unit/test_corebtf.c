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
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <cmocka.h>

#include "corebtf.h"

struct kern {
	struct btf *btf;
	int task, inner, pointee, arr, other, task_v2, task_union, task_bad, state, u32t;
};

/* A kernel BTF with a little of everything the cut must handle. */
static void kern_build(struct kern *k)
{
	struct btf *b = btf__new_empty();
	int i32, ptr_pointee, ptr_inner;

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
	k->task = btf__add_struct(b, "task", 48);
	btf__add_field(b, "in", k->inner, 0, 0);
	btf__add_field(b, "p", ptr_pointee, 64, 0);
	btf__add_field(b, "ip", ptr_inner, 128, 0);
	btf__add_field(b, "arr", k->arr, 192, 0);
	k->task_v2 = btf__add_struct(b, "task___v2", 4);	/* a flavour of task: a candidate too */
	btf__add_field(b, "z", i32, 0, 0);
	k->task_union = btf__add_union(b, "task", 4);	/* another kind, same name: kept */
	btf__add_field(b, "u", i32, 0, 0);
	k->task_bad = btf__add_struct(b, "task___", 4);	/* no flavour after ___: another name */
	k->state = btf__add_enum(b, "state", 4);
	btf__add_enum_value(b, "ON", 0);
	btf__add_enum_value(b, "OFF", -1);
	k->u32t = btf__add_typedef(b, "u32_t", i32);
	k->btf = b;
}

/* The cut of @k for @names, parsed back as libbpf parses it. */
static struct btf *cut_of(const struct kern *k, const char *const *names, size_t nr)
{
	char path[32];
	struct btf *cut;
	int fd = corebtf__build(k->btf, names, nr);

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

static void kept_whole_and_shells(void **state)
{
	static const char *const names[] = { "task___local", "u32_t", "state" };
	struct kern k;
	struct btf *cut;
	const struct btf_type *t, *p;
	const struct btf_member *m;

	(void)state;
	kern_build(&k);
	cut = cut_of(&k, names, 3);

	t = named(cut, "task", BTF_KIND_STRUCT);
	assert_non_null(t);
	assert_int_equal(btf_vlen(t), 4);
	assert_int_equal(t->size, 48);
	m = btf_members(t);
	assert_string_equal(name_of(cut, m[0].type), "inner");
	p = btf__type_by_id(cut, m[1].type);	/* a pointer to a shell of pointee */
	assert_true(btf_is_ptr(p));
	assert_string_equal(name_of(cut, p->type), "pointee");
	assert_int_equal(btf_vlen(btf__type_by_id(cut, p->type)), 0);
	assert_int_equal(btf__type_by_id(cut, p->type)->size, 24);
	assert_true(btf_is_array(btf__type_by_id(cut, m[3].type)));
	assert_string_equal(name_of(cut, btf_array(btf__type_by_id(cut, m[3].type))->type), "inner");
	assert_int_equal(btf_member_bit_offset(t, 3), 192);

	t = named(cut, "inner", BTF_KIND_STRUCT);	/* whole, though also behind a pointer */
	assert_int_equal(btf_vlen(t), 2);
	assert_int_equal(btf_member_bit_offset(t, 1), 32);
	assert_int_equal(btf_member_bitfield_size(t, 1), 3);

	assert_non_null(named(cut, "task___v2", BTF_KIND_STRUCT));
	assert_non_null(named(cut, "task", BTF_KIND_UNION));
	assert_true(btf__find_by_name_kind(cut, "task___v2", BTF_KIND_STRUCT) >
		    btf__find_by_name_kind(cut, "task", BTF_KIND_STRUCT));	/* the kernel's order */
	assert_null(named(cut, "task___", BTF_KIND_STRUCT));
	assert_null(named(cut, "other", BTF_KIND_STRUCT));	/* only inside the shell's members */

	t = named(cut, "state", BTF_KIND_ENUM);
	assert_int_equal(btf_vlen(t), 2);
	assert_int_equal(btf_enum(t)[1].val, -1);
	t = named(cut, "u32_t", BTF_KIND_TYPEDEF);
	assert_string_equal(name_of(cut, t->type), "int");
	btf__free(cut);
	btf__free(k.btf);
}

static void nothing_of_ours(void **state)
{
	static const char *const names[] = { "absent" };
	struct kern k;
	struct btf *cut;

	(void)state;
	kern_build(&k);
	cut = cut_of(&k, names, 1);
	assert_int_equal(btf__type_cnt(cut), 1);	/* void only: libbpf finds no candidate, as in the whole */
	btf__free(cut);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kept_whole_and_shells),
		cmocka_unit_test(nothing_of_ours),
		cmocka_unit_test(struct_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
