// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's BTF digest and its cache (kbtf.h), on this host's own
 * kernel BTF: a digest built, written and read back is the same, maps
 * every type to the kernel's of the same name and kind, and a cache file
 * that is not private, not this key's or not whole is never read but
 * replaced. Build IDs from ELF notes, including cut-short ones.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <cmocka.h>

#include "kbtf.h"

static const struct corebtf_root roots[] = {
	{ "task_struct", BTF_KIND_STRUCT, 0 },
	{ "bpf_lsm_", BTF_KIND_FUNC, COREBTF_PREFIX | COREBTF_OPTIONAL },
	{ "no_such_function_here", BTF_KIND_FUNC, COREBTF_OPTIONAL },
};

static char dir[64], path[96];
static struct btf *whole;

static int setup(void **state)
{
	(void)state;
	whole = btf__load_vmlinux_btf();
	snprintf(dir, sizeof(dir), "/tmp/sbx-kbtf-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/kernel.btf", dir);
	setenv("SBX_BTF_CACHE", path, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	btf__free(whole);
	return 0;
}

static void need_kernel_btf(void)
{
	if (!whole || access("/sys/kernel/notes", R_OK))
		skip();	/* no kernel BTF or notes on this host: nothing to digest */
}

/* Open the digest: it must say @how (a substring) and map each type to the kernel's. */
static void open_expect(struct kbtf *k, const char *how)
{
	int err = kbtf__open(k, roots, sizeof(roots) / sizeof(roots[0]), 0);

	assert_int_equal(err, 0);
	if (!strstr(k->how, how))
		fail_msg("digest: '%s', want '%s'", k->how, how);
	assert_true(k->fd >= 0);
	assert_int_equal(btf__type_cnt(k->btf), k->nr);
	for (__u32 id = 1; id < k->nr; id++) {
		const struct btf_type *d = btf__type_by_id(k->btf, id);
		const struct btf_type *w = btf__type_by_id(whole, kbtf__kernel_id(k, id));

		assert_non_null(w);
		assert_int_equal(btf_kind(d), btf_kind(w));
		assert_string_equal(btf__name_by_offset(k->btf, d->name_off),
				    btf__name_by_offset(whole, w->name_off));
	}
}

static void same_digest(const struct kbtf *a, const struct kbtf *b)
{
	__u32 sa, sb;
	const void *ra = btf__raw_data(a->btf, &sa), *rb = btf__raw_data(b->btf, &sb);

	assert_int_equal(a->nr, b->nr);
	assert_int_equal(sa, sb);
	assert_memory_equal(ra, rb, sa);
	assert_memory_equal(a->kernel_id, b->kernel_id, 4 * (size_t)a->nr);
}

static void built_then_read(void **state)
{
	struct kbtf a, b;
	struct stat st;
	int f;

	(void)state;
	need_kernel_btf();
	unlink(path);
	open_expect(&a, "built (");
	assert_non_null(strstr(a.how, "none yet"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	open_expect(&b, "read from");
	same_digest(&a, &b);
	/* a hook's function, by its kernel ID */
	f = btf__find_by_name_kind(b.btf, "bpf_lsm_file_open", BTF_KIND_FUNC);
	assert_true(f > 0);
	assert_int_equal(kbtf__kernel_id(&b, (__u32)f), btf__find_by_name_kind(whole, "bpf_lsm_file_open", BTF_KIND_FUNC));
	assert_int_equal(kbtf__kernel_id(&b, b.nr), 0);	/* past the end: none */
	kbtf__close(&a);
	kbtf__close(&b);
}

/* Overwrite @len bytes at @off of the cache file (@off < 0: from its end). */
static void poke(long off, const void *bytes, size_t len)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	if (off < 0)
		off += lseek(fd, 0, SEEK_END);
	assert_int_equal(pwrite(fd, bytes, len, off), (ssize_t)len);
	close(fd);
}

/* Each spoilt file: not read (@why in the trace), built again, and the file whole again. */
static void spoilt(const char *why, void (*spoil)(void))
{
	struct kbtf good, again, after;

	open_expect(&good, "");
	spoil();
	open_expect(&again, "built (");
	if (!strstr(again.how, why))
		fail_msg("after spoiling: '%s', want '%s'", again.how, why);
	same_digest(&good, &again);
	open_expect(&after, "read from");
	kbtf__close(&good);
	kbtf__close(&again);
	kbtf__close(&after);
}

static void world_writable(void) { assert_int_equal(chmod(path, 0666), 0); }
static void group_writable(void) { assert_int_equal(chmod(path, 0620), 0); }
static void other_kernel(void) { poke(40, "\x01\x02", 2); }	/* the kernel's build ID, in the head */
static void other_format(void) { poke(8, "\x07", 1); }
static void cut_short(void) { assert_int_equal(truncate(path, 4000), 0); }
static void ids_swapped(void) { poke(112 + 4, "\xff\xff\xff\x7f", 4); }	/* type 1's kernel ID */
static void btf_spoilt(void) { poke(-64, "\xff\xff\xff\xff\xff\xff\xff\xff", 8); }	/* in its strings */
static void not_a_file(void) { assert_int_equal(unlink(path), 0); assert_int_equal(mkdir(path, 0700), 0); }

/* A link to a good digest in the file's place: not followed. */
static void a_link(void)
{
	char real[128];

	snprintf(real, sizeof(real), "%s.real", path);
	assert_int_equal(rename(path, real), 0);
	assert_int_equal(symlink(real, path), 0);
}

static void spoilt_files(void **state)
{
	(void)state;
	need_kernel_btf();
	spoilt("others can write it", world_writable);
	spoilt("others can write it", group_writable);
	spoilt("made for another kernel, sbx-bpf or root set", other_kernel);
	spoilt("not a digest of this format", other_format);
	spoilt("do not add up", cut_short);
	spoilt("its sum does not match", ids_swapped);
	spoilt("its sum does not match", btf_spoilt);
	spoilt("it cannot be opened", a_link);
	assert_int_equal(unlink(path), 0);	/* the rename replaced the link, not its target */
	assert_int_equal(access(path, F_OK), -1);
	{
		char real[128];

		snprintf(real, sizeof(real), "%s.real", path);
		assert_int_equal(unlink(real), 0);
	}
}

static void directory_in_the_way(void **state)
{
	struct kbtf k;

	(void)state;
	need_kernel_btf();
	open_expect(&k, "");
	kbtf__close(&k);
	not_a_file();
	open_expect(&k, "not written");	/* built, and still a digest: the directory is not removed */
	assert_non_null(strstr(k.how, "not a regular file"));
	kbtf__close(&k);
	rmdir(path);
}

/* A directory others can write: the file in it is not read, and none is written there. */
static void directory_not_private(void **state)
{
	struct kbtf k;
	struct stat before, after;

	(void)state;
	need_kernel_btf();
	open_expect(&k, "");
	kbtf__close(&k);
	assert_int_equal(stat(path, &before), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	open_expect(&k, "built (");
	if (!strstr(k.how, "others can write it") || !strstr(k.how, "not written"))
		fail_msg("in a directory others can write: '%s'", k.how);
	kbtf__close(&k);
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(chmod(dir, 0700), 0);
	open_expect(&k, "read from");
	kbtf__close(&k);
}

static void cache_off(void **state)
{
	struct kbtf k;

	(void)state;
	need_kernel_btf();
	setenv("SBX_BTF_CACHE", "off", 1);
	open_expect(&k, "not cached: SBX_BTF_CACHE=off");
	kbtf__close(&k);
	setenv("SBX_BTF_CACHE", path, 1);
}

/* @a's raw BTF is @b's, byte for byte: bpf(2) hands out the very bytes the file has. */
static void same_bytes(const struct btf *a, const struct btf *b)
{
	__u32 na, nb;
	const void *ra = btf__raw_data(a, &na), *rb = btf__raw_data(b, &nb);

	assert_non_null(ra);
	assert_non_null(rb);
	assert_int_equal(na, nb);
	assert_memory_equal(ra, rb, na);
}

static void whole_btf(void **state)
{
	struct kbtf k;
	__u32 first;

	(void)state;
	need_kernel_btf();
	assert_int_equal(kbtf__open(&k, roots, 1, KBTF_WHOLE), 0);
	assert_int_equal(k.fd, -1);
	assert_int_equal(k.nr, btf__type_cnt(whole));
	assert_int_equal(kbtf__kernel_id(&k, 12345), 12345);	/* its own IDs */
	same_bytes(k.btf, whole);
	/* Through bpf(2) where it answers here: the file's way (a page a read) only when it will not. */
	if (!bpf_btf_get_next_id(0, &first) && !strstr(k.how, "read through bpf(2)"))
		fail_msg("whole BTF: '%s', want it read through bpf(2)", k.how);
	kbtf__close(&k);
}

/* A root the kernel must have and lacks: no digest, the whole BTF (libbpf searches it, and the modules'). */
static void root_missing(void **state)
{
	static const struct corebtf_root lacking[] = { { "no_such_struct_here", BTF_KIND_STRUCT, 0 } };
	struct kbtf k;
	struct stat before, after;

	(void)state;
	need_kernel_btf();
	unlink(path);
	assert_int_equal(kbtf__open(&k, lacking, 1, 0), 0);
	assert_non_null(strstr(k.how, "the whole BTF"));
	assert_null(k.kernel_id);
	assert_int_equal(k.fd, -1);
	assert_int_equal(k.nr, btf__type_cnt(whole));
	kbtf__close(&k);
	assert_int_equal(stat(path, &before), -1);	/* nothing cached */
	open_expect(&k, "built (");
	kbtf__close(&k);
	assert_int_equal(stat(path, &before), 0);
	/* the cache holds another root set's digest: not this one's (the roots are in the key) */
	assert_int_equal(kbtf__open(&k, lacking, 1, 0), 0);
	assert_non_null(strstr(k.how, "the whole BTF"));
	kbtf__close(&k);
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);	/* and the file left alone */
	open_expect(&k, "read from");
	kbtf__close(&k);
}

static void notes(void **state)
{
	/* another note first, then GNU's build ID (4 bytes, to keep it short) */
	static const unsigned char n[] = {
		6, 0, 0, 0, 4, 0, 0, 0, 1, 1, 0, 0, 'L', 'i', 'n', 'u', 'x', 0, 0, 0, 1, 2, 3, 4,
		4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 0xde, 0xad, 0xbe, 0xef,
	};
	__u8 id[32];

	(void)state;
	assert_int_equal(kbtf__note_build_id(n, sizeof(n), id, sizeof(id)), 4);
	assert_memory_equal(id, "\xde\xad\xbe\xef", 4);
	assert_int_equal(kbtf__note_build_id(n, sizeof(n) - 1, id, sizeof(id)), 0);	/* cut short */
	assert_int_equal(kbtf__note_build_id(n, 24, id, sizeof(id)), 0);		/* no GNU note */
	assert_int_equal(kbtf__note_build_id(n, sizeof(n), id, 3), 0);			/* no room */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(notes),
		cmocka_unit_test(built_then_read),
		cmocka_unit_test(spoilt_files),
		cmocka_unit_test(directory_in_the_way),
		cmocka_unit_test(directory_not_private),
		cmocka_unit_test(cache_off),
		cmocka_unit_test(root_missing),
		cmocka_unit_test(whole_btf),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
