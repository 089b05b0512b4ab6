// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * extension.c — BPF freplace extensions of a loaded object's global
 * functions (extension.h). The kernel checks an extension against its
 * target's BTF prototype when it is loaded, and again against each further
 * target when it is attached (bpf_check_attach_target): one verifying, any
 * number of targets with the same prototype.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "extension.h"

#define EXT_PREFIX	"freplace/"

/* The function @prog replaces (its section's suffix), or NULL if it is no extension. */
static const char *ext_target(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);

	return strncmp(sec, EXT_PREFIX, strlen(EXT_PREFIX)) ? NULL : sec + strlen(EXT_PREFIX);
}

/*
 * Does the loaded program @fd (of an object whose BTF is @btf) have the
 * function @func? 1 or 0; -errno when it cannot be told, which no caller
 * may take for "no": that program would keep its stand-in.
 */
static int calls_func(int fd, const struct btf *btf, const char *func)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), n;
	struct bpf_func_info *fi;
	int found = 0;

	if (fd < 0)
		return 0;	/* not loaded */
	if (!btf)
		return -ENODATA;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	n = info.nr_func_info;
	if (!n)
		return 0;
	fi = calloc(n, sizeof(*fi));
	if (!fi)
		return -ENOMEM;
	memset(&info, 0, sizeof(info));
	info.nr_func_info = n;
	info.func_info_rec_size = sizeof(*fi);
	info.func_info = (__u64)(uintptr_t)fi;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		found = -errno;
	for (__u32 i = 0; !found && i < n && i < info.nr_func_info; i++) {
		const struct btf_type *t = btf__type_by_id(btf, fi[i].type_id);

		found = t && !strcmp(btf__name_by_offset(btf, t->name_off), func);
	}
	free(fi);
	return found;
}

/* Is @m an object's .bss (libbpf names it "OBJNAME.bss")? */
static bool is_bss(const struct bpf_map *m)
{
	const char *dot = strchr(bpf_map__name(m), '.');

	return bpf_map__is_internal(m) && dot && !strcmp(dot, ".bss");
}

/* The map of @obj that @m (of the extension) stands for: the same name, or for .bss, @obj's .bss. */
static struct bpf_map *map_for(struct bpf_object *obj, const struct bpf_map *m)
{
	struct bpf_map *o;

	if (!is_bss(m))
		return bpf_object__find_map_by_name(obj, bpf_map__name(m));
	bpf_object__for_each_map(o, obj)
		if (is_bss(o))
			return o;
	return NULL;
}

int extension__prepare(struct bpf_object *ext, struct bpf_object *obj)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_program *x, *p;
	struct bpf_map *m, *o;

	bpf_object__for_each_map(m, ext) {
		if (bpf_map__is_internal(m) && !is_bss(m))
			continue;	/* .rodata, .kconfig: the extension's own */
		o = map_for(obj, m);
		if (!o || bpf_map__fd(o) < 0)
			return -ENOENT;
		if (bpf_map__reuse_fd(m, bpf_map__fd(o)))
			return -errno;
	}
	bpf_object__for_each_program(x, ext) {
		const char *func = ext_target(x);
		int target = -1;

		bpf_object__for_each_program(p, obj) {
			int r = func ? calls_func(bpf_program__fd(p), btf, func) : 0;

			if (r < 0)
				return r;
			if (r) {
				target = bpf_program__fd(p);
				break;
			}
		}
		if (target < 0) {
			bpf_program__set_autoload(x, false);
			continue;
		}
		if (bpf_program__set_attach_target(x, target, func))
			return -errno;
	}
	return 0;
}

static int links_add(struct ext_links *l, struct bpf_link *link, const char *func, const char *prog)
{
	if (l->nr == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct bpf_link **nl = realloc(l->link, cap * sizeof(*nl));
		char (*nn)[64];

		if (!nl)
			return -ENOMEM;
		l->link = nl;
		nn = realloc(l->name, cap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		l->name = nn;
		l->cap = cap;
	}
	l->link[l->nr] = link;
	snprintf(l->name[l->nr], sizeof(l->name[0]), "%s@%s", func, prog);
	l->nr++;
	return 0;
}

int extension__attach(struct bpf_object *ext, struct bpf_object *obj, struct ext_links *l,
		      char *who, size_t who_sz)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_program *x, *p;
	struct bpf_link *link;
	int err;

	bpf_object__for_each_program(x, ext) {
		const char *func = ext_target(x);

		if (!func || bpf_program__fd(x) < 0)
			continue;
		bpf_object__for_each_program(p, obj) {
			err = calls_func(bpf_program__fd(p), btf, func);
			if (!err)
				continue;
			link = NULL;
			if (err > 0) {
				link = bpf_program__attach_freplace(x, bpf_program__fd(p), func);
				err = link ? links_add(l, link, func, bpf_program__name(p)) : -errno;
			}
			if (err) {
				bpf_link__destroy(link);
				snprintf(who, who_sz, "%s", bpf_program__name(p));
				return err;
			}
		}
	}
	return 0;
}

int extension__needed(struct bpf_object *ext)
{
	struct bpf_program *x;

	bpf_object__for_each_program(x, ext)
		if (ext_target(x) && bpf_program__autoload(x))
			return 1;
	return 0;
}

int extension__calls(struct bpf_object *ext, struct bpf_object *obj, const struct bpf_program *prog)
{
	struct bpf_program *x;

	bpf_object__for_each_program(x, ext) {
		int r = ext_target(x) ? calls_func(bpf_program__fd(prog), bpf_object__btf(obj), ext_target(x)) : 0;

		if (r)
			return r;
	}
	return 0;
}

void extension__unlink(struct ext_links *l)
{
	for (size_t i = 0; i < l->nr; i++)
		bpf_link__destroy(l->link[i]);
	free(l->link);
	free(l->name);
	memset(l, 0, sizeof(*l));
}
