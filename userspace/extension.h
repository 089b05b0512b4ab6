/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * extension.h — BPF extensions (freplace) of a loaded object's global
 * functions: each program of the extension object (section
 * "freplace/FUNC") is verified once and put in place of FUNC in every
 * program of the loaded object that calls it.
 */
#ifndef SBX_EXTENSION_H
#define SBX_EXTENSION_H

#include <stddef.h>

struct bpf_object;
struct bpf_program;

/* The links of one extension object on one loaded object. */
struct ext_links {
	int *fd;			/* BPF link fds: closed, the stand-ins come back */
	char (*name)[64];	/* "FUNC@PROG", for pins and messages */
	size_t nr, cap;
};

/*
 * Once per process, before an extension object is opened: libbpf gives each
 * program its section's handler when it opens the object, and this one
 * passes the target extension__prepare found. libbpf's programs point into
 * its one array of handlers, which a registration reallocates: call it
 * before any object is opened whose sections have a registered handler.
 * 0 or -errno.
 */
int extension__register(void);

/*
 * Before @ext (opened after extension__register) is loaded, with @obj
 * loaded: @ext's maps become @obj's maps
 * of the same name (its .bss @obj's .bss; its .rodata stays its own), and
 * each of its programs is verified against the first program of @obj that
 * calls FUNC; one no program calls is not loaded. 0 or -errno (-ENOENT: a
 * map @obj lacks; -EINVAL: @ext has a .data, which would be its own copy;
 * -E2BIG: more programs than it tracks).
 */
int extension__prepare(struct bpf_object *ext, struct bpf_object *obj);

/*
 * After @ext is loaded: each of its programs put in place of FUNC in every
 * program of @obj that calls FUNC, the links added to @l. 0, or -errno
 * with the program that could not have it (or whose functions could not be
 * read) named in @who.
 */
int extension__attach(struct bpf_object *ext, struct bpf_object *obj, struct ext_links *l,
		      char *who, size_t who_sz);

/* After extension__prepare: does any program of @ext have a caller to be put in? */
int extension__needed(struct bpf_object *ext);

/* Does program @prog of @obj (loaded) call any function @ext replaces? 1, 0 or -errno. */
int extension__calls(struct bpf_object *ext, struct bpf_object *obj, const struct bpf_program *prog);

/* Close the links (the stand-ins come back) and free @l's arrays. */
void extension__unlink(struct ext_links *l);

#endif /* SBX_EXTENSION_H */
