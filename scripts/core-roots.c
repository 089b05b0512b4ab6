// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * core-roots — the types our BPF objects' CO-RE relocations start from, as C
 * for the loader (userspace/corebtf.h): each relocation record of each
 * object's .BTF.ext names a type of the object's BTF, and libbpf searches the
 * kernel for types of that name and kind. A build tool, run by make:
 *
 *   core-roots sbx.bpf.o shared.bpf.o > sbx_core_roots.h
 *
 * Relocations of the object's own type IDs (bpf_core_type_id_local) search
 * nothing and are left out. Exit 1, with a message, when an object cannot be
 * read or has no relocation: the loader would cut the kernel's BTF to nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/btf.h>

/* The .BTF.ext header, as the kernel's and libbpf's formats define it (stable: version 1). */
struct ext_header {
	__u16 magic;
	__u8 version;
	__u8 flags;
	__u32 hdr_len;
	__u32 func_info_off, func_info_len;
	__u32 line_info_off, line_info_len;
	__u32 core_relo_off, core_relo_len;	/* absent from a header shorter than this */
};

struct root {
	const char *name;
	int kind;
};

static struct root roots[4096];
static size_t nr_roots;

static int add_root(const struct btf *btf, __u32 type_id, const char *obj)
{
	const struct btf_type *t = btf__type_by_id(btf, type_id);
	const char *name = t ? btf__name_by_offset(btf, t->name_off) : NULL;

	if (!name || !name[0]) {
		fprintf(stderr, "core-roots: %s: a relocation of unnamed type [%u]\n", obj, type_id);
		return -EINVAL;
	}
	for (size_t i = 0; i < nr_roots; i++)
		if (roots[i].kind == btf_kind(t) && !strcmp(roots[i].name, name))
			return 0;
	if (nr_roots == sizeof(roots) / sizeof(roots[0]))
		return -E2BIG;
	roots[nr_roots].name = strdup(name);
	roots[nr_roots++].kind = btf_kind(t);
	return roots[nr_roots - 1].name ? 0 : -ENOMEM;
}

/* The bytes of @obj's section @name, copied (libbpf 1.1 exports no getter of .BTF.ext's). */
static void *section(const char *obj, const char *name, size_t *size)
{
	int fd = open(obj, O_RDONLY);
	Elf *elf = fd < 0 || elf_version(EV_CURRENT) == EV_NONE ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	void *copy = NULL;

	if (elf && !elf_getshdrstrndx(elf, &shstrndx))
		while (!copy && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;

			if (!n || strcmp(n, name) || !(d = elf_getdata(scn, NULL)) || !d->d_size)
				continue;
			copy = malloc(d->d_size);
			if (copy) {
				memcpy(copy, d->d_buf, d->d_size);
				*size = d->d_size;
			}
		}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return copy;
}

/* The roots of every relocation record in @obj. */
static int read_object(const char *obj)
{
	struct btf *btf = btf__parse_elf(obj, NULL);
	size_t size = 0;
	__u8 *raw = section(obj, ".BTF.ext", &size);
	const struct ext_header *h = (const void *)raw;
	const __u8 *p, *end;
	__u32 rec;
	int err = 0;

	if (!btf || !raw || size < sizeof(*h) || h->hdr_len < sizeof(*h) || h->core_relo_len < sizeof(__u32) ||
	    (size_t)h->hdr_len + h->core_relo_off + h->core_relo_len > size) {
		fprintf(stderr, "core-roots: %s: no BTF, or no CO-RE relocation in its .BTF.ext\n", obj);
		err = -EINVAL;
		goto out;
	}
	p = raw + h->hdr_len + h->core_relo_off;
	end = p + h->core_relo_len;
	rec = *(const __u32 *)p;
	p += sizeof(__u32);
	if (rec < sizeof(struct bpf_core_relo))
		err = -EINVAL;
	while (!err && p + 2 * sizeof(__u32) <= end) {
		__u32 n = ((const __u32 *)p)[1];	/* after the section's name */

		p += 2 * sizeof(__u32);
		for (__u32 i = 0; !err && i < n && p + rec <= end; i++, p += rec) {
			const struct bpf_core_relo *r = (const void *)p;

			if (r->kind != BPF_CORE_TYPE_ID_LOCAL)
				err = add_root(btf, r->type_id, obj);
		}
	}
out:
	free(raw);
	btf__free(btf);
	return err;
}

static const char *kind_macro(int kind)
{
	switch (kind) {
	case BTF_KIND_STRUCT: return "BTF_KIND_STRUCT";
	case BTF_KIND_UNION: return "BTF_KIND_UNION";
	case BTF_KIND_ENUM: return "BTF_KIND_ENUM";
	case BTF_KIND_ENUM64: return "BTF_KIND_ENUM64";
	case BTF_KIND_TYPEDEF: return "BTF_KIND_TYPEDEF";
	case BTF_KIND_INT: return "BTF_KIND_INT";
	case BTF_KIND_FLOAT: return "BTF_KIND_FLOAT";
	case BTF_KIND_FWD: return "BTF_KIND_FWD";
	default: return NULL;
	}
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (read_object(argv[i]))
			return 1;
	if (argc < 2 || !nr_roots) {
		fprintf(stderr, "core-roots: no relocation in %s\n", argc < 2 ? "no object" : "the objects");
		return 1;
	}
	printf("/* Generated from the objects' CO-RE relocations (scripts/core-roots.c): do not edit. */\n");
	printf("static const struct corebtf_root core_roots[] = {\n");
	for (size_t i = 0; i < nr_roots; i++) {
		const char *k = kind_macro(roots[i].kind);

		if (!k) {
			fprintf(stderr, "core-roots: '%s' is of kind %d, which no relocation starts from\n",
				roots[i].name, roots[i].kind);
			return 1;
		}
		printf("\t{ \"%s\", %s, 0 },\n", roots[i].name, k);
	}
	printf("};\n");
	return 0;
}
