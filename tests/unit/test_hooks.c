// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The real enforcement object (its skeleton, opened, never loaded) against
 * kernels made up here with libbpf's BTF writer: each test builds the few
 * bpf_lsm_<hook> functions it is about, with the prototypes some kernel
 * has (or might have next), and checks which variant hooks__select keeps,
 * what it turns off, and what it calls a gap.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "hooks.h"
#include "loader.h"
#include "sbx.skel.h"

/* A made-up kernel: the types hooks take, and bpf_lsm_* functions added one by one. */
struct kbtf {
	struct btf *btf;
	int t_int, t_uint, t_u64, t_bool, t_ulong;
	int p_void, p_attr, p_event, p_bpf_attr, p_dentry, p_iattr, p_idmap, p_userns, p_path, p_task;
	int kuid, big;
};

static int ptr_to_struct(struct btf *b, const char *name, bool is_union)
{
	int s = is_union ? btf__add_union(b, name, 8) : btf__add_struct(b, name, 8);

	return btf__add_ptr(b, s);
}

static struct kbtf kernel_new(void)
{
	struct kbtf k = { .btf = btf__new_empty() };
	struct btf *b = k.btf;
	int u32;

	assert_non_null(b);
	k.t_int = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	k.t_uint = btf__add_int(b, "unsigned int", 4, 0);
	k.t_ulong = btf__add_int(b, "long unsigned int", 8, 0);
	k.t_u64 = btf__add_typedef(b, "u64", btf__add_int(b, "long long unsigned int", 8, 0));
	k.t_bool = btf__add_int(b, "_Bool", 1, BTF_INT_BOOL);
	k.p_void = btf__add_ptr(b, 0);
	k.p_attr = ptr_to_struct(b, "perf_event_attr", false);
	k.p_event = ptr_to_struct(b, "perf_event", false);
	k.p_bpf_attr = ptr_to_struct(b, "bpf_attr", true);
	k.p_dentry = ptr_to_struct(b, "dentry", false);
	k.p_iattr = ptr_to_struct(b, "iattr", false);
	k.p_idmap = ptr_to_struct(b, "mnt_idmap", false);
	k.p_userns = ptr_to_struct(b, "user_namespace", false);
	k.p_path = btf__add_ptr(b, btf__add_const(b, btf__add_struct(b, "path", 16)));
	k.p_task = ptr_to_struct(b, "task_struct", false);
	/* kuid_t: a 4-byte struct passed by value; and one of 16 bytes, two slots */
	u32 = btf__add_int(b, "u32", 4, 0);
	k.kuid = btf__add_struct(b, "", 4);
	assert_int_equal(btf__add_field(b, "val", u32, 0, 0), 0);
	k.kuid = btf__add_typedef(b, "kuid_t", k.kuid);
	k.big = btf__add_struct(b, "two_slots", 16);
	return k;
}

/* bpf_lsm_@hook(args…), returning int. */
static void hook(struct kbtf *k, const char *name, int nargs, ...)
{
	char fn[64];
	va_list ap;
	int proto = btf__add_func_proto(k->btf, k->t_int);

	assert_true(proto > 0);
	va_start(ap, nargs);
	for (int i = 0; i < nargs; i++)
		assert_int_equal(btf__add_func_param(k->btf, "", va_arg(ap, int)), 0);
	va_end(ap);
	snprintf(fn, sizeof(fn), "bpf_lsm_%s", name);
	assert_true(btf__add_func(k->btf, fn, BTF_FUNC_STATIC, proto) > 0);
}

struct picked {
	struct sbx_bpf *skel;
	struct hook_picks picks;
	struct hook_gaps gaps;
};

static struct picked *pick(struct kbtf *k)
{
	static struct picked p;

	struct hook_index ix;

	memset(&p, 0, sizeof(p));
	p.skel = sbx_bpf__open();
	assert_non_null(p.skel);
	assert_int_equal(hooks__index(k->btf, &ix), 0);
	assert_int_equal(hooks__select(p.skel->obj, k->btf, &ix, &p.picks, &p.gaps), 0);
	hooks__index_free(&ix);
	return &p;
}

static void done(struct picked *p, struct kbtf *k)
{
	sbx_bpf__destroy(p->skel);
	btf__free(k->btf);
}

static const struct hook_pick *pick_of(const struct picked *p, const char *hook)
{
	for (unsigned int i = 0; i < p->picks.nr; i++)
		if (!strcmp(p->picks.p[i].hook, hook))
			return &p->picks.p[i];
	fail_msg("no pick for hook %s", hook);
	return NULL;
}

static bool loads(const struct picked *p, const char *prog)
{
	struct bpf_program *bp = bpf_object__find_program_by_name(p->skel->obj, prog);

	assert_non_null(bp);
	return bpf_program__autoload(bp);
}

static const struct hook_gap *gap_of(const struct picked *p, const char *hook)
{
	for (unsigned int i = 0; i < p->gaps.nr; i++)
		if (!strcmp(p->gaps.g[i].hook, hook))
			return &p->gaps.g[i];
	return NULL;
}

/* 6.1: perf_event_open(attr, type); 6.12.117 and 7.x: perf_event_open(type). */
static void test_perf_event_open_variants(void **state)
{
	struct kbtf k = kernel_new();
	struct picked *p;

	(void)state;
	hook(&k, "perf_event_open", 2, k.p_attr, k.t_int);
	p = pick(&k);
	assert_int_equal(pick_of(p, "perf_event_open")->fit, HOOK_FIT);
	assert_string_equal(pick_of(p, "perf_event_open")->prog, "task_perf_event_open_attr");
	assert_true(loads(p, "task_perf_event_open_attr"));
	assert_false(loads(p, "task_perf_event_open"));
	assert_null(gap_of(p, "perf_event_open"));
	done(p, &k);

	k = kernel_new();
	hook(&k, "perf_event_open", 1, k.t_int);
	p = pick(&k);
	assert_string_equal(pick_of(p, "perf_event_open")->prog, "task_perf_event_open");
	assert_true(loads(p, "task_perf_event_open"));
	assert_false(loads(p, "task_perf_event_open_attr"));
	assert_string_equal(pick_of(p, "perf_event_open")->kernel_proto, "(int)");
	done(p, &k);
}

/* A prototype no variant was written for: a gap that names the kernel's arguments, nothing loaded. */
static void test_unknown_prototype_is_a_gap(void **state)
{
	struct kbtf k = kernel_new();
	const struct hook_gap *g;
	struct picked *p;

	(void)state;
	hook(&k, "perf_event_open", 1, k.p_event);
	p = pick(&k);
	assert_int_equal(pick_of(p, "perf_event_open")->fit, HOOK_NO_VARIANT);
	assert_false(loads(p, "task_perf_event_open"));
	assert_false(loads(p, "task_perf_event_open_attr"));
	g = gap_of(p, "perf_event_open");
	assert_non_null(g);
	assert_non_null(strstr(g->reason, "(struct perf_event *)"));
	done(p, &k);
}

/* 7.x added `bool kernel` to bpf(); one more argument again is a gap, not a guess. */
static void test_bpf_hook_arguments(void **state)
{
	struct kbtf k = kernel_new();
	struct picked *p;

	(void)state;
	hook(&k, "bpf", 3, k.t_int, k.p_bpf_attr, k.t_uint);
	p = pick(&k);
	assert_string_equal(pick_of(p, "bpf")->prog, "task_bpf");
	assert_false(loads(p, "task_bpf_kernel"));
	done(p, &k);

	k = kernel_new();
	hook(&k, "bpf", 4, k.t_int, k.p_bpf_attr, k.t_uint, k.t_bool);
	p = pick(&k);
	assert_string_equal(pick_of(p, "bpf")->prog, "task_bpf_kernel");
	assert_false(loads(p, "task_bpf"));
	assert_string_equal(pick_of(p, "bpf")->kernel_proto, "(int, union bpf_attr *, unsigned int, _Bool)");
	done(p, &k);

	k = kernel_new();
	hook(&k, "bpf", 5, k.t_int, k.p_bpf_attr, k.t_uint, k.t_bool, k.t_int);
	p = pick(&k);
	assert_int_equal(pick_of(p, "bpf")->fit, HOOK_NO_VARIANT);
	assert_non_null(gap_of(p, "bpf"));
	done(p, &k);

	/* A struct pointer where an int was: not the same argument, whatever the size. */
	k = kernel_new();
	hook(&k, "bpf", 3, k.p_void, k.p_bpf_attr, k.t_uint);
	p = pick(&k);
	assert_int_equal(pick_of(p, "bpf")->fit, HOOK_NO_VARIANT);
	done(p, &k);
}

/* inode_setattr gained an idmap (6.3); the program does not read it, so a user namespace fits too. */
static void test_setattr_and_unread_pointers(void **state)
{
	struct kbtf k = kernel_new();
	struct picked *p;

	(void)state;
	hook(&k, "inode_setattr", 2, k.p_dentry, k.p_iattr);
	p = pick(&k);
	assert_string_equal(pick_of(p, "inode_setattr")->prog, "fs_inode_setattr");
	done(p, &k);

	k = kernel_new();
	hook(&k, "inode_setattr", 3, k.p_idmap, k.p_dentry, k.p_iattr);
	p = pick(&k);
	assert_string_equal(pick_of(p, "inode_setattr")->prog, "fs_inode_setattr_idmap");
	done(p, &k);

	k = kernel_new();
	hook(&k, "inode_setattr", 3, k.p_userns, k.p_dentry, k.p_iattr);
	p = pick(&k);
	assert_string_equal(pick_of(p, "inode_setattr")->prog, "fs_inode_setattr_idmap");
	done(p, &k);

	/* The dentry is read: a pointer to another struct there is no fit. */
	k = kernel_new();
	hook(&k, "inode_setattr", 3, k.p_idmap, k.p_iattr, k.p_iattr);
	p = pick(&k);
	assert_int_equal(pick_of(p, "inode_setattr")->fit, HOOK_NO_VARIANT);
	done(p, &k);
}

/* task_alloc's clone_flags became u64 (7.x): the same 8 bytes. chown's kuid_t by value: one slot. */
static void test_scalars_by_size(void **state)
{
	struct kbtf k = kernel_new();
	struct picked *p;

	(void)state;
	hook(&k, "task_alloc", 2, k.p_task, k.t_ulong);
	hook(&k, "path_chown", 3, k.p_path, k.kuid, k.kuid);
	p = pick(&k);
	assert_int_equal(pick_of(p, "task_alloc")->fit, HOOK_FIT);
	assert_int_equal(pick_of(p, "path_chown")->fit, HOOK_FIT);
	done(p, &k);

	k = kernel_new();
	hook(&k, "task_alloc", 2, k.p_task, k.t_u64);
	hook(&k, "path_chown", 3, k.p_path, k.big, k.big);	/* two slots each: the rest move */
	p = pick(&k);
	assert_int_equal(pick_of(p, "task_alloc")->fit, HOOK_FIT);
	assert_int_equal(pick_of(p, "path_chown")->fit, HOOK_NO_VARIANT);
	done(p, &k);

	k = kernel_new();
	hook(&k, "task_alloc", 2, k.p_task, k.t_uint);	/* 4 bytes where 8 are read */
	p = pick(&k);
	assert_int_equal(pick_of(p, "task_alloc")->fit, HOOK_NO_VARIANT);
	done(p, &k);
}

/* A kernel without a hook: a gap, unless kernels without it see the same calls elsewhere. */
static void test_absent_hooks(void **state)
{
	struct kbtf k = kernel_new();
	struct picked *p;

	(void)state;
	p = pick(&k);
	assert_int_equal(pick_of(p, "file_truncate")->fit, HOOK_ABSENT_OPTIONAL);
	assert_int_equal(pick_of(p, "inode_set_acl")->fit, HOOK_ABSENT_OPTIONAL);
	assert_null(gap_of(p, "file_truncate"));
	assert_false(loads(p, "fs_file_truncate"));
	assert_int_equal(pick_of(p, "path_unlink")->fit, HOOK_ABSENT);
	assert_non_null(gap_of(p, "path_unlink"));
	assert_non_null(strstr(gap_of(p, "path_unlink")->reason, "no path_unlink hook"));
	assert_false(loads(p, "fs_path_unlink"));
	/* every hook a gap of its own, by name */
	{
		unsigned int absent = 0;

		for (unsigned int i = 0; i < p->picks.nr; i++)
			absent += p->picks.p[i].fit == HOOK_ABSENT;
		assert_true(absent > 40);
		assert_int_equal(p->gaps.nr, absent);
		assert_int_equal(p->gaps.dropped, 0);
	}
	done(p, &k);
}

/* Every program of the object says what it protects, and records its arguments. */
static void test_every_program_is_described(void **state)
{
	struct sbx_bpf *skel = sbx_bpf__open();
	const struct btf *obj;
	struct bpf_program *prog;
	int lsm = 0;

	(void)state;
	assert_non_null(skel);
	obj = bpf_object__btf(skel->obj);
	bpf_object__for_each_program(prog, skel->obj) {
		const char *hook = hooks__prog_hook(prog);
		char self[64];

		if (!hooks__known(hook))
			fail_msg("program %s: hook %s has no line in hooks.c's table", bpf_program__name(prog), hook);
		if (strncmp(bpf_program__section_name(prog), "lsm/", 4))
			continue;
		lsm++;
		/* its record fits a kernel made of the record itself */
		snprintf(self, sizeof(self), "%s", bpf_program__name(prog));
		assert_true(hooks__has_record(obj, self));
	}
	assert_true(lsm > 40);
	sbx_bpf__destroy(skel);
}

static void test_unaccepted(void **state)
{
	struct hook_gaps g = { .nr = 0 };
	const char *const accept[] = { "bpf", NULL };
	char out[256];

	(void)state;
	hooks__add_gap(&g, "perf_event_open", "no program variant takes this kernel's arguments %s", "(int)");
	hooks__add_gap(&g, "bpf", "verifier said %d", 1);
	hooks__add_gap(&g, "bpf", "twice: %d", 2);	/* once per hook */
	assert_int_equal(g.nr, 2);
	assert_int_equal(hooks__unaccepted(&g, accept, out, sizeof(out)), 1);
	assert_string_equal(out, "perf_event_open");
	assert_int_equal(hooks__unaccepted(&g, NULL, out, sizeof(out)), 2);
	assert_string_equal(out, "perf_event_open,bpf");
	g.dropped = 3;	/* unnamed gaps can never be accepted */
	assert_int_equal(hooks__unaccepted(&g, (const char *const[]){ "bpf", "perf_event_open", NULL },
					   out, sizeof(out)), 3);
	assert_string_equal(out, "3 more");
}

/* The verifier's words, out of real logs (tests/unit/data/verifier-*.log, from the VM). */
static void reason_of(const char *file, char *out, size_t sz)
{
	char path[512], buf[65536];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/unit/data/%s", SBX_SRCDIR, file);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	loader__verifier_reason(buf, out, sz);
}

static void test_verifier_reason(void **state)
{
	char r[HOOK_REASON_MAX];

	(void)state;
	reason_of("verifier-6.12.117-perf_event_open.log", r, sizeof(r));
	assert_string_equal(r, "func 'bpf_lsm_perf_event_open' doesn't have 3-th argument: "
			       "invalid bpf_context access off=16 size=8");
	reason_of("verifier-7.3.4-bpf.log", r, sizeof(r));
	assert_string_equal(r, "At program exit the register R0 has unknown scalar value should have been in "
			       "[-4095, 0]");
	/* A message that starts with a register ("R6 invalid …") is one; "R6_w=…" is state. */
	reason_of("verifier-6.1-global-func-null.log", r, sizeof(r));
	assert_string_equal(r, "R6 invalid mem access 'mem_or_null'");
	loader__verifier_reason("", r, sizeof(r));
	assert_string_equal(r, "refused by the verifier (no reason in its log)");
}

/*
 * The index of a kernel's hooks stands for a search of its BTF by name:
 * the same ids, found among FUNCs named bpf_lsm_* only, in any order.
 */
static void test_hook_index(void **state)
{
	struct kbtf k = kernel_new();
	struct hook_index ix;
	char longest[80];
	int proto = btf__add_func_proto(k.btf, k.t_int), other;

	(void)state;
	hook(&k, "task_kill", 0);
	hook(&k, "bpf", 0);
	hook(&k, "file_open", 0);
	other = btf__add_func(k.btf, "security_file_open", BTF_FUNC_GLOBAL, proto);
	assert_true(other > 0);
	assert_true(btf__add_struct(k.btf, "bpf_lsm_not_a_func", 4) > 0);
	/* The longest name a hook may have is indexed; one byte more is not, so never half matched. */
	snprintf(longest, sizeof(longest), "bpf_lsm_%0*d", HOOK_NAME_MAX - 1, 0);
	assert_true(btf__add_func(k.btf, longest, BTF_FUNC_STATIC, proto) > 0);
	assert_int_equal(hooks__index(k.btf, &ix), 0);
	assert_int_equal(ix.nr, 4);
	assert_int_equal(ix.rdonly_cast, 0);	/* a kernel without the kfunc (6.1) */
	hooks__index_free(&ix);
	/* The kfunc is found in the same pass: a FUNC of its name, not a struct first met. */
	assert_true(btf__add_struct(k.btf, "bpf_rdonly_cast", 4) > 0);
	other = btf__add_func(k.btf, "bpf_rdonly_cast", BTF_FUNC_GLOBAL, proto);
	assert_true(other > 0);
	assert_int_equal(hooks__index(k.btf, &ix), 0);
	assert_int_equal(ix.rdonly_cast, other);
	assert_int_equal(ix.nr, 4);
	assert_int_equal(hooks__index_func(&ix, longest + strlen("bpf_lsm_")),
			 btf__find_by_name_kind(k.btf, longest, BTF_KIND_FUNC));
	hooks__index_free(&ix);
	snprintf(longest, sizeof(longest), "bpf_lsm_%0*d", HOOK_NAME_MAX, 0);
	assert_true(btf__add_func(k.btf, longest, BTF_FUNC_STATIC, proto) > 0);
	assert_int_equal(hooks__index(k.btf, &ix), 0);
	assert_int_equal(ix.nr, 4);
	for (const char *const *h = (const char *const[]){ "task_kill", "bpf", "file_open", NULL }; *h; h++) {
		char fn[64];

		snprintf(fn, sizeof(fn), "bpf_lsm_%s", *h);
		assert_int_equal(hooks__index_func(&ix, *h), btf__find_by_name_kind(k.btf, fn, BTF_KIND_FUNC));
	}
	assert_int_equal(hooks__index_func(&ix, "not_a_func"), -ENOENT);
	assert_int_equal(hooks__index_func(&ix, "file_permission"), -ENOENT);
	assert_int_equal(hooks__index_func(&ix, longest + strlen("bpf_lsm_")), -ENOENT);
	hooks__index_free(&ix);
	hooks__index_free(&ix);	/* twice, as every destroy may be */
	assert_int_equal(ix.nr, 0);
	assert_int_equal(ix.rdonly_cast, 0);
	btf__free(k.btf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_event_open_variants),
		cmocka_unit_test(test_unknown_prototype_is_a_gap),
		cmocka_unit_test(test_bpf_hook_arguments),
		cmocka_unit_test(test_setattr_and_unread_pointers),
		cmocka_unit_test(test_scalars_by_size),
		cmocka_unit_test(test_absent_hooks),
		cmocka_unit_test(test_every_program_is_described),
		cmocka_unit_test(test_unaccepted),
		cmocka_unit_test(test_verifier_reason),
		cmocka_unit_test(test_hook_index),
	};

	libbpf_set_print(NULL);
	return cmocka_run_group_tests_name("hooks", tests, NULL, NULL);
}
