/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hooks.h — which program of the object fits which kernel, and what is lost
 * when one does not load.
 *
 * The kernel-side programs declare each hook's arguments once (SBX_LSM in
 * bpf/sandbox.h), and that declaration is in the object's BTF. A kernel's
 * BTF has the real prototype of every hook (bpf_lsm_<hook>). Comparing the
 * two, before anything is loaded, picks for each hook the one variant whose
 * arguments are the kernel's; a hook that has none is a gap, named with the
 * kernel's prototype. A program the verifier then refuses is a gap too, with
 * the verifier's reason (loader.c). Gaps are never silent: `run`, `attach`
 * and the daemon refuse to start on a set with a gap the user did not accept
 * by name (hooks__unaccepted).
 */
#ifndef SBX_HOOKS_H
#define SBX_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

struct bpf_object;
struct bpf_program;
struct btf;

#define HOOK_NAME_MAX	40
#define HOOK_REASON_MAX	200
#define HOOK_PROTO_MAX	200

/* One protection missing from a loaded set: its hook and why. */
struct hook_gap {
	char hook[HOOK_NAME_MAX];	/* "perf_event_open"; non-LSM programs: "cgroup/connect4" */
	char reason[HOOK_REASON_MAX];	/* the kernel's prototype no variant matches, or the verifier's words */
};

/* Every hook the programs use fits, so a gap is always named (dropped stays 0 in practice). */
#define HOOK_GAPS_MAX	64

struct hook_gaps {
	struct hook_gap g[HOOK_GAPS_MAX];
	unsigned int nr;		/* in g[]; more than HOOK_GAPS_MAX count in dropped */
	unsigned int dropped;
};

/* Add a gap (once per hook); the reason is cut to HOOK_REASON_MAX. */
void hooks__add_gap(struct hook_gaps *g, const char *hook, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool hooks__has_gap(const struct hook_gaps *g, const char *hook);

/* How one hook of the object fares on one kernel (hooks__select). */
enum hook_fit {
	HOOK_FIT,		/* one variant matches: prog is loaded */
	HOOK_ABSENT_OPTIONAL,	/* the kernel has no such hook, and needs none (see hooks.c) */
	HOOK_ABSENT,		/* the kernel has no such hook: a gap */
	HOOK_NO_VARIANT,	/* the hook differs from every variant: a gap */
};

struct hook_pick {
	char hook[HOOK_NAME_MAX];
	char prog[64];				/* the variant chosen; "" when none */
	char kernel_proto[HOOK_PROTO_MAX];	/* "(int type)"; "" when the kernel lacks the hook */
	unsigned int variants;			/* programs of the object on this hook */
	enum hook_fit fit;
};

#define HOOK_PICKS_MAX	80

struct hook_picks {
	struct hook_pick p[HOOK_PICKS_MAX];
	unsigned int nr;
};

/*
 * The kernel's LSM hooks (its bpf_lsm_<hook> functions) by name, found in
 * one pass over its BTF. btf__find_by_name_kind is a linear search of the
 * whole BTF (some 2 M instructions on 6.1); asked twice per program, and
 * by libbpf once more per program for its attach target, that was 360 M
 * of a 2.6 G start-up without the daemon.
 */
struct hook_func {
	char hook[HOOK_NAME_MAX];	/* "file_open" */
	int func;			/* the BTF id of bpf_lsm_file_open */
};

struct hook_index {
	struct hook_func *f;		/* sorted by hook */
	unsigned int nr;
	int rdonly_cast;		/* the BTF id of the kfunc bpf_rdonly_cast (6.2+), or 0 (kfuncs.h) */
};

/* Index @kernel's LSM hooks, and the kfunc, into @ix (hooks__index_free it). 0 or -ENOMEM. */
int hooks__index(const struct btf *kernel, struct hook_index *ix);
/* The BTF id of the kernel's bpf_lsm_<@hook>, or -ENOENT. */
int hooks__index_func(const struct hook_index *ix, const char *hook);
void hooks__index_free(struct hook_index *ix);

/*
 * For every LSM program of the opened (not loaded) @obj: compare its
 * recorded arguments with @kernel's bpf_lsm_<hook> (found in @ix, an index
 * of @kernel), keep one matching variant per hook and turn autoload off
 * for the rest. What was decided goes into @picks (may be NULL), the hooks
 * with no variant into @gaps. 0, or -errno when the object itself is
 * unreadable (no BTF).
 */
int hooks__select(struct bpf_object *obj, const struct btf *kernel, const struct hook_index *ix,
		  struct hook_picks *picks, struct hook_gaps *gaps);

/* The hook of an LSM program ("lsm/file_open" → "file_open"), or NULL for other programs. */
const char *hooks__lsm_hook(const struct bpf_program *prog);
/* What a program's gap is named by: its LSM hook ("file_open"), else its section ("cgroup/connect4"). */
const char *hooks__prog_hook(const struct bpf_program *prog);

/* Whether program @prog recorded its arguments (SBX_LSM) in @obj_btf. */
bool hooks__has_record(const struct btf *obj_btf, const char *prog);

/* "(struct file *, int)": the prototype of FUNC_PROTO @id in @btf, for people. */
void hooks__proto_str(const struct btf *btf, int id, char *buf, size_t sz);

/* What is lost when @hook has no program, in one sentence; a generic one for unknown hooks. */
const char *hooks__protection(const char *hook);
/* Is @hook one the programs use (the names --accept-missing takes)? */
bool hooks__known(const char *hook);
/* Hooks whose ground kernels without them cover elsewhere (file_truncate before 6.2, …). */
bool hooks__optional(const char *hook);

/*
 * The gaps of @g that the list @accept (hook names; NULL-terminated, may be
 * NULL) does not name, comma-separated into @out. Their number.
 */
unsigned int hooks__unaccepted(const struct hook_gaps *g, const char *const *accept, char *out, size_t sz);

/* One line per gap for people: "  perf_event_open: REASON\n      without it: PROTECTION". */
void hooks__print_gaps(const struct hook_gaps *g, FILE *out, const char *indent);
/* [{"hook", "reason", "protection"}, …] */
json_t *hooks__gaps_json(const struct hook_gaps *g);
/* "perf_event_open (every perf event is refused), bpf (…)": one line, for events and lists. */
void hooks__gaps_line(const struct hook_gaps *g, char *buf, size_t sz);

/* "perf_event_open,bpf": the hooks alone, comma-separated ("" for none). */
void hooks__gaps_names(const struct hook_gaps *g, char *buf, size_t sz);

#endif
