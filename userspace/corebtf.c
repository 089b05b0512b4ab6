// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * corebtf.c — a kernel BTF cut down to what our CO-RE relocations can
 * match (corebtf.h says why it relocates the same).
 *
 * Each kernel type is kept in one of two ways: whole, or (a struct or
 * union behind a pointer) as a shell with its name, kind and size. The
 * types named like our roots are kept whole, and being whole spreads along
 * members, array elements, typedefs and modifiers; a pointer's target is
 * a shell unless something else keeps it whole. The kept types are copied
 * in the kernel's order, so libbpf meets candidates in the same order.
 */
#include <errno.h>
#include <search.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "corebtf.h"
#include "util.h"

enum keep { DROP, SHELL, WHOLE };

/* A name's first and last characters and length, folded: most kernel names are not ours by this alone. */
#define SIG_BITS	16
static unsigned sig(const char *name, size_t len)
{
	return (((unsigned char)name[0] << 8 | (unsigned char)name[len - 1]) ^ (unsigned)len << 4) &
	       ((1u << SIG_BITS) - 1);
}

struct cut {
	const struct btf *src;
	__u32 nr;		/* btf__type_cnt(src) */
	unsigned char *keep;	/* enum keep, per kernel type ID */
	__u32 *id;		/* the kept type's ID in the cut, per kernel type ID */
	__u32 *todo;		/* kernel type IDs whose references are still to follow */
	__u32 nr_todo;
	__u32 *kept;		/* kernel type IDs kept, in the order first marked */
	__u32 nr_kept;
	const struct corebtf_root *roots;
	size_t nr_roots;
	bool *found;		/* per root: the kernel has a type of its name and kind */
	size_t *funcs;		/* the indexes of the function roots, nr_funcs of them */
	size_t nr_funcs;
	unsigned char sigs[(1u << SIG_BITS) / 8];	/* sig() of each root's name */
	unsigned char func_first[256 / 8];		/* each function root's first character */
	const char *strs;	/* the kernel's string section, where its BTF is not split */
	__u32 strs_len;
};

/* The name at @off: from the string section itself, where it is at hand (60,000 names and more a cut). */
static const char *name_at(const struct cut *c, __u32 off)
{
	const char *name = off < c->strs_len ? c->strs + off : btf__name_by_offset(c->src, off);

	return name ? name : "";	/* an offset out of bounds: no name of ours */
}

/* The string section of @c's kernel BTF, unless the BTF is split (its names then start in another's). */
static void strs_find(struct cut *c)
{
	__u32 size;
	const struct btf_header *h = btf__base_btf(c->src) ? NULL : btf__raw_data(c->src, &size);

	if (h && size >= sizeof(*h) && h->magic == BTF_MAGIC && (__u64)h->hdr_len + h->str_off + h->str_len <= size) {
		c->strs = (const char *)h + h->hdr_len + h->str_off;
		c->strs_len = h->str_len;
	}
}

/* The length of @name without a ___flavour suffix (X___Y, neither an underscore), as libbpf counts it. */
static size_t essential_len(const char *name)
{
	const char *flavour = strstr(name, "___");
	size_t n;

	if (!flavour)
		return strlen(name);	/* most names: none */
	n = strlen(flavour) + (size_t)(flavour - name);
	for (size_t i = n >= 5 ? n - 5 + 1 : 0; i-- > 0;)
		if (name[i + 1] == '_' && name[i + 2] == '_' && name[i + 3] == '_' && name[i] != '_' &&
		    name[i + 4] != '_')
			return i + 1;
	return n;
}

static void mark(struct cut *c, __u32 id, enum keep how)
{
	if (!id || id >= c->nr || c->keep[id] >= how)
		return;
	if (c->keep[id] == DROP)
		c->kept[c->nr_kept++] = id;
	c->keep[id] = how;
	c->todo[c->nr_todo++] = id;	/* each ID at most twice (SHELL, WHOLE): todo has room */
}

/* What kernel type @id keeps, as it is kept itself. */
static void follow(struct cut *c, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(c->src, id);
	enum keep how = c->keep[id];
	__u16 n = btf_vlen(t);

	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		for (__u16 i = 0; how == WHOLE && i < n; i++)
			mark(c, btf_members(t)[i].type, WHOLE);
		break;
	case BTF_KIND_PTR:
		mark(c, t->type, SHELL);
		break;
	case BTF_KIND_ARRAY:
		mark(c, btf_array(t)->type, how);
		mark(c, btf_array(t)->index_type, WHOLE);
		break;
	case BTF_KIND_FUNC_PROTO:
		mark(c, t->type, how);
		for (__u16 i = 0; i < n; i++)
			mark(c, btf_params(t)[i].type, how);
		break;
	case BTF_KIND_FUNC:	/* a function root: its prototype */
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		mark(c, t->type, how);
		break;
	default:	/* INT, ENUM, ENUM64, FWD, FLOAT: nothing further (VAR, DATASEC: never reached) */
		break;
	}
}

/* Whether a relocation's type could be kernel type @t: the kinds libbpf takes as a relocation's root. */
static bool root_kind(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_INT:
	case BTF_KIND_FLOAT:
	case BTF_KIND_FWD:
		return true;
	default:
		return false;
	}
}

/* Whether libbpf takes a kernel type of kind @k as a candidate for a root of kind @root (enums of either width alike). */
static bool kinds_match(int root, int k)
{
	bool e1 = root == BTF_KIND_ENUM || root == BTF_KIND_ENUM64, e2 = k == BTF_KIND_ENUM || k == BTF_KIND_ENUM64;

	return root == k || (e1 && e2);
}

/*
 * Whether kernel type @t is named like one of the roots in @h: kept, then,
 * and each root of that name and of its kind found. A name too long to
 * look up is kept unlooked: a larger cut never changes a relocation.
 */
static bool named_like(struct cut *c, const struct btf_type *t, struct hsearch_data *h)
{
	const char *name = name_at(c, t->name_off);
	size_t len = essential_len(name);
	char buf[256];
	ENTRY e = { .key = (char *)name }, *r;
	unsigned s = len ? sig(name, len) : 0;

	if (!len || !(c->sigs[s / 8] & 1u << s % 8))
		return false;
	if (name[len]) {	/* a flavour of its own: looked up without it */
		if (len >= sizeof(buf))
			return true;
		e.key = memcpy(buf, name, len);
		buf[len] = '\0';
	}
	if (!hsearch_r(e, FIND, &r, h))
		return false;
	for (size_t i = 0; i < c->nr_roots; i++)
		if (kinds_match(c->roots[i].kind, btf_kind(t)) && essential_len(c->roots[i].name) == len &&
		    !strncmp(c->roots[i].name, name, len))
			c->found[i] = true;
	return true;
}

/*
 * Whether kernel function @t is one of the function roots: kept, then,
 * and each root it is found. Asked of every function the kernel has
 * (some 60,000), so only of the function roots, first character first.
 */
static bool func_root(struct cut *c, const struct btf_type *t)
{
	const char *name = name_at(c, t->name_off);
	unsigned char first = (unsigned char)name[0];
	bool hit = false;

	if (!(c->func_first[first / 8] & 1u << first % 8))
		return false;
	for (size_t k = 0; k < c->nr_funcs; k++) {
		const struct corebtf_root *r = &c->roots[c->funcs[k]];

		if (name[0] != r->name[0] ||
		    (r->flags & COREBTF_PREFIX ? strncmp(name, r->name, strlen(r->name)) : strcmp(name, r->name)))
			continue;
		c->found[c->funcs[k]] = hit = true;
	}
	return hit;
}

/* Every kernel type named like one of the roots, kept whole. */
static int mark_roots(struct cut *c)
{
	struct hsearch_data h = { 0 };
	char **keys = calloc(c->nr_roots ? c->nr_roots : 1, sizeof(*keys));	/* hdestroy_r leaves them to us */
	int err = keys && hcreate_r(c->nr_roots * 2 + 1, &h) ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < c->nr_roots; i++) {
		size_t len = essential_len(c->roots[i].name);
		unsigned s = len ? sig(c->roots[i].name, len) : 0;
		ENTRY e, *r;

		if (c->roots[i].kind == BTF_KIND_FUNC) {	/* by name alone, no flavours: not looked up */
			unsigned char first = (unsigned char)c->roots[i].name[0];

			c->func_first[first / 8] |= 1u << first % 8;
			c->funcs[c->nr_funcs++] = i;
			continue;
		}
		keys[i] = strndup(c->roots[i].name, len);
		e = (ENTRY){ .key = keys[i] };
		if (!keys[i] || !hsearch_r(e, ENTER, &r, &h))
			err = -ENOMEM;	/* a name twice (two flavours) finds the first: one entry */
		c->sigs[s / 8] |= 1u << s % 8;
	}
	for (__u32 id = 1; !err && id < c->nr; id++) {
		const struct btf_type *t = btf__type_by_id(c->src, id);

		if (!t->name_off)
			continue;
		if (btf_is_func(t) ? c->nr_funcs && func_root(c, t) : root_kind(t) && named_like(c, t, &h))
			mark(c, id, WHOLE);
	}
	if (keys)
		hdestroy_r(&h);
	for (size_t i = 0; keys && i < c->nr_roots; i++)
		free(keys[i]);
	free(keys);
	for (size_t i = 0; !err && i < c->nr_roots; i++)
		if (!c->found[i] && !(c->roots[i].flags & COREBTF_OPTIONAL))
			err = -ENOENT;
	return err;
}

/* The kept types' references, now their IDs in @dst. */
static void renumber(const struct cut *c, struct btf_type *t)
{
	__u16 n = btf_vlen(t);

	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		for (__u16 i = 0; i < n; i++)
			btf_members(t)[i].type = c->id[btf_members(t)[i].type];
		break;
	case BTF_KIND_ARRAY:
		btf_array(t)->type = c->id[btf_array(t)->type];
		btf_array(t)->index_type = c->id[btf_array(t)->index_type];
		break;
	case BTF_KIND_FUNC_PROTO:
		t->type = c->id[t->type];
		for (__u16 i = 0; i < n; i++)
			btf_params(t)[i].type = c->id[btf_params(t)[i].type];
		break;
	case BTF_KIND_PTR:
	case BTF_KIND_FUNC:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		t->type = c->id[t->type];	/* a pointer's target is always kept (a shell at least) */
		break;
	default:
		break;
	}
}

/* One kept kernel type into @dst: whole (its references renumbered), or a shell. */
static int copy_one(const struct cut *c, struct btf *dst, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(c->src, id);
	const char *name = btf__name_by_offset(c->src, t->name_off);
	int nid;

	if (c->keep[id] == SHELL && btf_is_composite(t))
		nid = btf_is_struct(t) ? btf__add_struct(dst, name, t->size) : btf__add_union(dst, name, t->size);
	else
		nid = btf__add_type(dst, c->src, t);
	if (nid < 0)
		return nid;
	if ((__u32)nid != c->id[id])
		return -EINVAL;	/* references to it were numbered otherwise */
	if (c->keep[id] == WHOLE || !btf_is_composite(t))
		/* libbpf's copy, still in its buffer: nothing added since that could move it */
		renumber(c, (struct btf_type *)btf__type_by_id(dst, nid));
	return 0;
}

int corebtf__memfd(const struct btf *b)
{
	__u32 size;
	const void *raw = btf__raw_data(b, &size);
	int fd, err;

	if (!raw)
		return -ENOMEM;
	fd = memfd_create("sbx-core-btf", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = write_all(fd, raw, size);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static int id_order(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return (x > y) - (x < y);
}

/*
 * The kept types, in the kernel's order, into a new BTF; *@kernel_id gets
 * each one's kernel ID ([0] = 0). The kept ones sorted, not every kernel
 * ID asked: some 1,300 of 130,000.
 */
static struct btf *cut_copy(struct cut *c, __u32 **kernel_id)
{
	struct btf *dst = btf__new_empty();
	__u32 *ids = calloc(c->nr_kept + 1, sizeof(*ids));
	int err = !dst ? -errno : !ids ? -ENOMEM : 0;

	qsort(c->kept, c->nr_kept, sizeof(*c->kept), id_order);
	for (__u32 i = 0; !err && i < c->nr_kept; i++) {
		ids[i + 1] = c->kept[i];
		c->id[c->kept[i]] = i + 1;
	}
	for (__u32 i = 0; !err && i < c->nr_kept; i++)
		err = copy_one(c, dst, c->kept[i]);
	if (err) {
		btf__free(dst);
		free(ids);
		errno = -err;
		return NULL;
	}
	*kernel_id = ids;
	return dst;
}

struct btf *corebtf__cut(const struct btf *kernel, const struct corebtf_root *roots, size_t nr,
			 __u32 **kernel_id)
{
	struct cut c = { .src = kernel, .nr = btf__type_cnt(kernel), .roots = roots, .nr_roots = nr };
	struct btf *dst = NULL;
	int err = -ENOMEM;

	c.keep = calloc(c.nr, 1);
	c.id = calloc(c.nr, sizeof(*c.id));
	c.todo = malloc(2 * (size_t)c.nr * sizeof(*c.todo));
	c.kept = malloc((size_t)c.nr * sizeof(*c.kept));
	c.found = calloc(nr ? nr : 1, sizeof(*c.found));
	c.funcs = calloc(nr ? nr : 1, sizeof(*c.funcs));
	if (!c.keep || !c.id || !c.todo || !c.kept || !c.found || !c.funcs)
		goto out;
	strs_find(&c);
	err = mark_roots(&c);
	while (!err && c.nr_todo)
		follow(&c, c.todo[--c.nr_todo]);
	if (!err) {
		dst = cut_copy(&c, kernel_id);
		err = dst ? 0 : -errno;
	}
out:
	free(c.funcs);
	free(c.found);
	free(c.keep);
	free(c.id);
	free(c.todo);
	free(c.kept);
	if (err) {
		errno = -err;
		return NULL;
	}
	return dst;
}

void corebtf__struct_ids(const struct btf *kernel, const char *const *names, unsigned *ids, size_t nr)
{
	__u32 n = btf__type_cnt(kernel), left = nr;

	memset(ids, 0, nr * sizeof(*ids));
	for (__u32 id = 1; left && id < n; id++) {
		const struct btf_type *t = btf__type_by_id(kernel, id);
		const char *name;

		if (!btf_is_struct(t) || !t->name_off)
			continue;
		name = btf__name_by_offset(kernel, t->name_off);
		for (size_t i = 0; i < nr; i++)
			if (!ids[i] && !strcmp(name, names[i])) {
				ids[i] = id;	/* the first, as btf__find_by_name_kind finds */
				left--;
			}
	}
}
