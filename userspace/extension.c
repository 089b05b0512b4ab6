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
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "extension.h"
#include "kfuncs.h"

#define EXT_PREFIX	"freplace/"
/* Extensions one object may have: with more, extension__prepare refuses the object. */
#define EXT_MAX		16

/* The function @prog replaces (its section's suffix), or NULL if it is no extension. */
static const char *ext_target(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);

	return strncmp(sec, EXT_PREFIX, strlen(EXT_PREFIX)) ? NULL : sec + strlen(EXT_PREFIX);
}

/* The functions of one loaded program: its BTF function records, read once. */
struct prog_funcs {
	struct bpf_func_info *fi;
	__u32 n;
};

/*
 * The functions of the loaded program @fd into @pf (none when it is not
 * loaded). 0, or -errno when they cannot be read, which no caller may take
 * for "none": that program would keep its stand-ins.
 */
static int prog_funcs_read(int fd, struct prog_funcs *pf)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), n;

	pf->fi = NULL;
	pf->n = 0;
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	n = info.nr_func_info;
	if (!n)
		return 0;
	pf->fi = calloc(n, sizeof(*pf->fi));
	if (!pf->fi)
		return -ENOMEM;
	memset(&info, 0, sizeof(info));
	info.nr_func_info = n;
	info.func_info_rec_size = sizeof(*pf->fi);
	info.func_info = (__u64)(uintptr_t)pf->fi;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		int err = -errno;

		free(pf->fi);
		pf->fi = NULL;
		return err;
	}
	pf->n = n < info.nr_func_info ? n : info.nr_func_info;
	return 0;
}

/* Does @pf (of an object whose BTF is @btf) have the function @func? */
static bool prog_funcs_has(const struct prog_funcs *pf, const struct btf *btf, const char *func)
{
	for (__u32 i = 0; i < pf->n; i++) {
		const struct btf_type *t = btf__type_by_id(btf, pf->fi[i].type_id);

		if (t && !strcmp(btf__name_by_offset(btf, t->name_off), func))
			return true;
	}
	return false;
}

/*
 * What each prepared extension is verified against: its first caller's fd
 * and FUNC's id in that program's BTF (the object's own: the same ids).
 * libbpf's own "freplace" handler would load the caller's whole BTF from
 * the kernel, once per extension, to find FUNC by name in it (about 10 M
 * instructions of a 6.1 start-up); this table, filled by
 * extension__prepare and read by ext_prepare_load, passes the id instead.
 * Loads happen one at a time, so one table is enough.
 */
static struct ext_target {
	const struct bpf_program *x;
	int prog_fd;
	__u32 btf_id;
} targets[EXT_MAX];
static size_t nr_targets;

/* libbpf, right before it loads extension @prog: its target, from the table. */
static int ext_prepare_load(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie)
{
	(void)cookie;
	for (size_t i = 0; i < nr_targets; i++)
		if (targets[i].x == prog) {
			opts->attach_prog_fd = targets[i].prog_fd;
			opts->attach_btf_obj_fd = 0;	/* one union with attach_prog_fd in the kernel's attr */
			opts->attach_btf_id = targets[i].btf_id;
			targets[i].x = NULL;	/* used once: a later object at the same address finds nothing */
			return kfuncs__patch(prog);
		}
	return -ESRCH;	/* not prepared: what libbpf says of a target it cannot find */
}

/*
 * No attach function: the links are made by extension__attach, one per
 * caller, so bpf_program__attach (and a skeleton's attach) has nothing to
 * do with these programs.
 */
int extension__register(void)
{
	static int registered;
	LIBBPF_OPTS(libbpf_prog_handler_opts, o, .prog_prepare_load_fn = ext_prepare_load);

	/* Once per process: libbpf keeps a pointer to it in each program it opens. */
	if (!registered) {
		int id = libbpf_register_prog_handler("freplace+", BPF_PROG_TYPE_EXT, 0, &o);

		if (id < 0)
			return id;
		registered = 1;
	}
	return 0;
}

/* Is @m an object's section @sec, ".bss" or ".data" (libbpf names it "OBJNAME.bss")? */
static bool is_section(const struct bpf_map *m, const char *sec)
{
	const char *dot = strchr(bpf_map__name(m), '.');

	return bpf_map__is_internal(m) && dot && !strcmp(dot, sec);
}

/* The map of @obj that @m (of the extension) stands for: the same name, or for .bss, @obj's .bss. */
static struct bpf_map *map_for(struct bpf_object *obj, const struct bpf_map *m)
{
	struct bpf_map *o;

	if (!is_section(m, ".bss"))
		return bpf_object__find_map_by_name(obj, bpf_map__name(m));
	bpf_object__for_each_map(o, obj)
		if (is_section(o, ".bss"))
			return o;
	return NULL;
}

int extension__prepare(struct bpf_object *ext, struct bpf_object *obj)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_program *x, *p;
	struct bpf_map *m, *o;
	bool found[EXT_MAX] = { false };
	size_t i;

	nr_targets = 0;		/* an earlier object's targets go, whatever follows */
	if (!btf)
		return -ENODATA;
	i = 0;
	bpf_object__for_each_program(x, ext)
		i++;
	if (i > EXT_MAX)
		return -E2BIG;	/* more than found[] tracks: none may go unlinked unnoticed */
	bpf_object__for_each_map(m, ext) {
		if (is_section(m, ".data"))
			return -EINVAL;	/* a shared variable would be a private copy here: .bss only */
		if (bpf_map__is_internal(m) && !is_section(m, ".bss"))
			continue;	/* .rodata, .kconfig: the extension's own */
		o = map_for(obj, m);
		if (!o || bpf_map__fd(o) < 0)
			return -ENOENT;
		if (bpf_map__reuse_fd(m, bpf_map__fd(o)))
			return -errno;
	}
	/* Each extension's first caller, in the object's order: one read of each program's functions. */
	bpf_object__for_each_program(p, obj) {
		struct prog_funcs pf;
		int err = prog_funcs_read(bpf_program__fd(p), &pf);

		if (err)
			return err;
		i = 0;
		bpf_object__for_each_program(x, ext) {
			const char *func = ext_target(x);

			if (i < EXT_MAX && func && !found[i] && prog_funcs_has(&pf, btf, func)) {
				int id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);

				found[i] = true;
				if (id < 0)
					err = id;
				else
					targets[nr_targets++] = (struct ext_target){ x, bpf_program__fd(p), (__u32)id };
			}
			i++;
		}
		free(pf.fi);
		if (err)
			return err;
	}
	/* One no program calls is not loaded. */
	i = 0;
	bpf_object__for_each_program(x, ext)
		if (i >= EXT_MAX || !found[i++])
			bpf_program__set_autoload(x, false);
	return 0;
}

static int links_add(struct ext_links *l, int fd, const char *func, const char *prog)
{
	if (l->nr == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		int *nf = realloc(l->fd, cap * sizeof(*nf));
		char (*nn)[64];

		if (!nf)
			return -ENOMEM;
		l->fd = nf;
		nn = realloc(l->name, cap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		l->name = nn;
		l->cap = cap;
	}
	l->fd[l->nr] = fd;
	snprintf(l->name[l->nr], sizeof(l->name[0]), "%s@%s", func, prog);
	l->nr++;
	return 0;
}

/*
 * Put extension @x in place of @func in the loaded program @p: a link fd
 * or -errno. libbpf's bpf_program__attach_freplace would load @p's BTF
 * from the kernel for every link to find @func in it; the object's own
 * BTF has the same type ids (extension__prepare's reading of each
 * program's functions relies on that too), so @func's id is found there,
 * once per extension (@btf_id).
 */
static int link_one(const struct bpf_program *x, const struct bpf_program *p, __u32 btf_id)
{
	LIBBPF_OPTS(bpf_link_create_opts, o, .target_btf_id = btf_id);
	int fd = bpf_link_create(bpf_program__fd(x), bpf_program__fd(p), bpf_program__expected_attach_type(x), &o);

	return fd < 0 ? -errno : fd;
}

/* One program's links: each loaded extension in @ext whose function @pf has. */
static int link_program(struct bpf_object *ext, const struct bpf_program *p, const struct prog_funcs *pf,
			const struct btf *btf, const int *btf_id, struct ext_links *l)
{
	struct bpf_program *x;
	size_t i = 0;
	int fd, err = 0;

	bpf_object__for_each_program(x, ext) {
		const char *func = ext_target(x);

		if (i < EXT_MAX && bpf_program__fd(x) >= 0 && func && prog_funcs_has(pf, btf, func)) {
			fd = btf_id[i] > 0 ? link_one(x, p, btf_id[i]) : -ENOENT;
			err = fd < 0 ? fd : links_add(l, fd, func, bpf_program__name(p));
			if (err) {
				if (fd >= 0)
					close(fd);
				return err;
			}
		}
		i++;
	}
	return 0;
}

int extension__attach(struct bpf_object *ext, struct bpf_object *obj, struct ext_links *l,
		      char *who, size_t who_sz)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_program *x, *p;
	int btf_id[EXT_MAX] = { 0 };
	size_t i = 0;
	int err;

	if (!btf)
		return -ENODATA;
	bpf_object__for_each_program(x, ext) {
		if (i < EXT_MAX && ext_target(x))
			btf_id[i] = btf__find_by_name_kind(btf, ext_target(x), BTF_KIND_FUNC);
		i++;
	}
	bpf_object__for_each_program(p, obj) {
		struct prog_funcs pf;

		err = prog_funcs_read(bpf_program__fd(p), &pf);
		if (!err)
			err = link_program(ext, p, &pf, btf, btf_id, l);
		free(pf.fi);
		if (err) {
			snprintf(who, who_sz, "%s", bpf_program__name(p));
			return err;
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
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_program *x;
	struct prog_funcs pf;
	int r;

	if (!btf)
		return -ENODATA;
	r = prog_funcs_read(bpf_program__fd(prog), &pf);
	if (r)
		return r;
	bpf_object__for_each_program(x, ext)
		if (ext_target(x) && prog_funcs_has(&pf, btf, ext_target(x))) {
			r = 1;
			break;
		}
	free(pf.fi);
	return r;
}

void extension__unlink(struct ext_links *l)
{
	for (size_t i = 0; i < l->nr; i++)
		close(l->fd[i]);
	free(l->fd);
	free(l->name);
	memset(l, 0, sizeof(*l));
}
