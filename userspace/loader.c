// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "corebtf.h"
#include "extension.h"
#include "hooks.h"
#include "kbtf.h"
#include "kfuncs.h"
#include "loader.h"
#include "sbx.objhash.h"
#include "mappurge.h"
#include "moves.h"
#include "util.h"
#include "sbx.skel.h"
#include "probe.skel.h"
#include "shared.skel.h"
#include "sbx_bss_layout.h"
#include "sbx_core_roots.h"

/*
 * The extension object reads variables of the enforcement object's .bss
 * through that very map, where sbx_bss_layout.h says they are
 * (bpf/shared.bpf.c): the layout this build's skeleton has, and as large.
 */
#define SAME_PLACE(v)	(offsetof(struct sbx_bpf__bss, v) == SBX_BSS_OFF_##v && \
			 sizeof(((struct sbx_bpf__bss *)0)->v) == SBX_BSS_SIZE_##v)
_Static_assert(SAME_PLACE(nr_sandboxes) && SAME_PLACE(sandbox_gen) && SAME_PLACE(scope_set) &&
	       SAME_PLACE(policy_seq) && SAME_PLACE(arming_set) && SAME_PLACE(nest_set) &&
	       SAME_PLACE(rare_loop_flags) && SAME_PLACE(coalesce_ns) && SAME_PLACE(rate_interval_ns) &&
	       SAME_PLACE(rate_burst) && SAME_PLACE(ev_seq) && SAME_PLACE(verdict_gen) && SAME_PLACE(outside_tab) && SAME_PLACE(fs_filter) &&
	       sizeof(struct sbx_bpf__bss) == sizeof(struct shared_bpf__bss) &&
	       sizeof(struct shared_bpf__bss) == SBX_BSS_SIZE,
	       "shared.bpf.c's view of the .bss is sbx.bpf.o's");

/* The DNS steering programs, attached per sandbox cgroup. */
#define NR_STEER	LOADER_NR_STEER

/*
 * The maps the library writes, by fd: the same calls work on an object
 * loaded by this process and on one adopted from bpffs (loader__open_pinned).
 */
enum loader_map { M_SANDBOXES, M_FS_RULES, M_NET_RULES, M_DNS_ALLOW, M_DNS_CLIENTS, M_EVENTS,
		  M_STATS, M_SCOPE, M_BSS, M_COALESCE, M_THROTTLE, M_SANDBOX_STATS, NR_MAPS };

static const char *const map_pin_names[NR_MAPS] = {
	"sandboxes", "fs_rules", "net_rules", "dns_allow", "dns_clients", "events", "stats", "scope", "bss",
	"coalesce", "throttle", "sandbox_stats",
};

/* The steering programs, in the order loader__steer_dns attaches them. */
/* file_permission's program and link, pinned apart: attached only when needed. */
#define FDJ_NAME	"fs_file_permission"

static const char *const steer_names[NR_STEER] = {
	"net_connect4", "net_connect6", "net_sendmsg4", "net_sendmsg6",
	"net_recvmsg4", "net_recvmsg6", "net_getpeername4", "net_getpeername6",
};

/* What load_skel loads: the enforcement object, and its extensions in place (shared.bpf.c). */
struct loaded {
	struct sbx_bpf *skel;
	struct shared_bpf *shared;
	struct ext_links ext;
};

struct sbx_loader {
	struct sbx_bpf *skel;		/* loaded here; NULL when adopted from bpffs */
	struct shared_bpf *shared;	/* its extensions, loaded with it; NULL when adopted */
	struct ext_links ext;		/* their links on skel's programs */
	int fd[NR_MAPS];		/* the skeleton's (not ours to close) or opened from bpffs */
	int steer_fd[NR_STEER];
	struct sbx_bpf__bss *bss;	/* the skeleton's mapping, or our mmap of the pinned .bss */
	size_t bss_len;			/* of our own mmap; 0 for the skeleton's */
	struct sbx_coalesce_slot *co;	/* loader__event_slots' mappings, or NULL */
	struct sbx_throttle_slot *th;
	void *rb_pos;			/* loader__ringbuf_fill's mapping of the ring's positions */
	int steer_link[NR_STEER];	/* BPF link fds on the sandbox cgroup; -1: none */
	struct hook_gaps gaps;		/* what this set lacks (loader__gaps) */
	int fdj_prog;			/* file_permission's program (adopted sets); -1: none */
	bool fdj_left_out;		/* not loaded: LOADER_WITHOUT_FD_JUDGING */
	int fdj_hold;			/* the judging lock, held from judging on to the sandbox written */
	char pin_dir[PATH_MAX];		/* where an adopted or pinned set lives; "" for our own */
};

static void fdj_release(struct sbx_loader *l);
static int rm_pins(const char *p, int depth);
static int steer_ids_in(const char *dir, const char *sub, __u64 *out, size_t max);

/*
 * Where a steering set is pinned: one attached cgroup's under steer/, the
 * sandboxes' parent's (loader__pin_root_steer) under rootsteer/, apart, so
 * that the sweeps of sets without a sandbox (resolvers.c) never see it.
 */
#define STEER_SUB	"steer"
#define ROOT_STEER_SUB	"rootsteer"
/* The extensions' links (shared.bpf.c), one per function and program: "FUNC@PROG". */
#define EXT_SUB		"ext"

static int pin_path(char *buf, size_t sz, const char *dir, const char *kind, const char *name)
{
	return (size_t)snprintf(buf, sz, "%s/%s%s%s", dir, kind, *kind ? "/" : "", name) < sz ?
	       0 : -ENAMETOOLONG;
}

/*
 * Map @m's fd. An adopted set's maps are opened from their pins on first
 * use: a run needs about half of them, and each open is a path lookup in
 * bpffs (20,000 instructions). The fds are a cache, hence the const cast.
 * -1 with errno set when the pin cannot be opened.
 */
static int map_fd(const struct sbx_loader *cl, int m)
{
	struct sbx_loader *l = (struct sbx_loader *)cl;
	char p[PATH_MAX];

	if (l->fd[m] >= 0 || l->skel)
		return l->fd[m];
	if (pin_path(p, sizeof(p), l->pin_dir, "maps", map_pin_names[m])) {
		errno = ENAMETOOLONG;
		return -1;
	}
	l->fd[m] = bpf_obj_get(p);
	return l->fd[m];
}

static struct sbx_loader *loader_alloc(void)
{
	struct sbx_loader *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	for (int i = 0; i < NR_MAPS; i++)
		l->fd[i] = -1;
	for (int i = 0; i < NR_STEER; i++)
		l->steer_fd[i] = l->steer_link[i] = -1;
	l->fdj_prog = l->fdj_hold = -1;
	return l;
}

/* The fds of a skeleton loaded here. */
static void skel_fds(struct sbx_loader *l)
{
	struct bpf_map *maps[NR_MAPS] = {
		l->skel->maps.sandboxes, l->skel->maps.fs_rules, l->skel->maps.net_rules,
		l->skel->maps.dns_allow, l->skel->maps.dns_clients, l->skel->maps.events,
		l->skel->maps.stats, l->skel->maps.scope, l->skel->maps.bss,
		l->skel->maps.coalesce, l->skel->maps.throttle, l->skel->maps.sandbox_stats,
	};

	for (int i = 0; i < NR_MAPS; i++)
		l->fd[i] = bpf_map__fd(maps[i]);
	for (int i = 0; i < NR_STEER; i++)
		l->steer_fd[i] = bpf_program__fd(bpf_object__find_program_by_name(l->skel->obj,
										   steer_names[i]));
	l->bss = l->skel->bss;
}

/* --- loading what this kernel takes ------------------------------------------- */

/*
 * libbpf says which program the kernel refused, and the verifier's log, only
 * through its print callback: while one load runs, its warnings are read
 * here (and passed on to the callback that was set).
 */
struct load_capture {
	char prog[64];			/* the refused program */
	char reason[HOOK_REASON_MAX];	/* the verifier's words, or libbpf's */
	libbpf_print_fn_t prev;
};
static struct load_capture *capture;

/* "R6=…", "R1_w=…": register state; "R6 invalid mem access …" is a message. */
static bool register_state(const char *line, size_t len)
{
	size_t i = 1;

	if (len < 2 || *line != 'R' || line[1] < '0' || line[1] > '9')
		return false;
	while (i < len && line[i] >= '0' && line[i] <= '9')
		i++;
	return i == len || line[i] != ' ';
}

static bool log_noise(const char *line, size_t len)
{
	static const char *const skip[] = {
		"processed ", "verification time", "stack depth", "-- END", "mark_precise", "last_idx",
		"parent ", "regs=", "from ", "func#", "Live regs", "Global function", "cur state:",
		"old state:", "Suggestion", "to caller at", "caller:", "callee:", "returning from",
	};

	if (!len || *line == ';' || *line == ' ' || *line == '\t' || (*line >= '0' && *line <= '9') ||
	    register_state(line, len))
		return true;	/* an instruction, a source line, register state */
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strncmp(line, skip[i], strlen(skip[i])))
			return true;
	return false;
}

void loader__verifier_reason(const char *log, char *out, size_t sz)
{
	const char *end = log + strlen(log), *lines[2];
	int n = 0;

	/* The verifier's last words come last: up to two message lines, ending the instruction trace. */
	while (end > log && n < 2) {
		const char *b = end;

		while (b > log && b[-1] != '\n')
			b--;
		if (!log_noise(b, (size_t)(end - b)))
			lines[n++] = b;
		else if (n)
			break;	/* the trace resumes: the message is over */
		end = b > log ? b - 1 : b;
	}
	if (!n) {
		snprintf(out, sz, "refused by the verifier (no reason in its log)");
		return;
	}
	if (n == 1)
		snprintf(out, sz, "%.*s", (int)strcspn(lines[0], "\n"), lines[0]);
	else
		snprintf(out, sz, "%.*s: %.*s", (int)strcspn(lines[1], "\n"), lines[1],
			 (int)strcspn(lines[0], "\n"), lines[0]);
}

/*
 * One formatted libbpf warning, "libbpf: prog 'NAME': …". A program is
 * blamed only for what is its own: the verifier's log of its refusal (a
 * hook this kernel lacks is blamed by lsm_prepare). A kernel that refuses
 * every program (EPERM: no BPF-LSM for us at all) is no one program's gap.
 */
static void capture_line(struct load_capture *c, const char *text)
{
	static const char begin[] = "-- BEGIN PROG LOAD LOG --\n";
	const char *name, *q, *rest, *log;

	if (!strncmp(text, "libbpf: ", 8))
		text += 8;
	name = text + 6;
	if (strncmp(text, "prog '", 6) || !(q = strchr(name, '\'')) || strncmp(q, "': ", 3))
		return;
	if (c->prog[0] && (strlen(c->prog) != (size_t)(q - name) || strncmp(c->prog, name, (size_t)(q - name))))
		return;	/* the first refused program is the one this load is about */
	rest = q + 3;
	log = strstr(rest, begin);
	if (log) {
		snprintf(c->prog, sizeof(c->prog), "%.*s", (int)(q - name), name);
		loader__verifier_reason(log + strlen(begin), c->reason, sizeof(c->reason));
	}
}

static int capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *text = NULL;
	va_list aq;

	if (capture && level == LIBBPF_WARN) {
		va_copy(aq, ap);
		if (vasprintf(&text, fmt, aq) >= 0)
			capture_line(capture, text);
		va_end(aq);
		free(text);
	}
	return capture && capture->prev ? capture->prev(level, fmt, ap) : 0;
}

/* The hooks named in SBX_TEST_DROP_HOOKS (comma-separated): left out as if the kernel refused them. */
static bool dropped_on_request(const char *hook)
{
	const char *list = getenv("SBX_TEST_DROP_HOOKS");

	return list && list_has(list, hook);
}

/*
 * The hooks named in SBX_TEST_WRONG_VARIANT (comma-separated) get a variant
 * that does not fit this kernel, instead of the one that does: what a
 * kernel update that changed the prototype under us would do. It shows
 * what the verifier alone makes of such a program (tests/e2e/19-hook-gaps).
 */
static void wrong_variant_on_request(struct bpf_object *obj)
{
	const char *list = getenv("SBX_TEST_WRONG_VARIANT");
	char *copy, *hook, *save = NULL;

	if (!list || !(copy = strdup(list)))
		return;
	for (hook = strtok_r(copy, ",", &save); hook; hook = strtok_r(NULL, ",", &save)) {
		struct bpf_program *prog, *fit = NULL, *other = NULL;

		bpf_object__for_each_program(prog, obj) {
			if (strcmp(hooks__prog_hook(prog), hook))
				continue;
			if (bpf_program__autoload(prog))
				fit = fit ?: prog;
			else
				other = other ?: prog;
		}
		if (fit && other) {
			bpf_program__set_autoload(fit, false);
			bpf_program__set_autoload(other, true);
		}
	}
	free(copy);
}

/*
 * libbpf finds each LSM program's attach target, bpf_lsm_<hook>, with a
 * linear search of the kernel's BTF when it loads the program: 45 searches,
 * 100 M instructions of a start-up on 6.1. The "lsm" sections are ours to
 * handle instead (libbpf lets a registered handler override its own), and
 * the id comes from the index of the running kernel's hooks that
 * hooks__select reads too: built once per process (kernel_index), as a
 * kernel's BTF does not change under it.
 */
static struct hook_index kernel_hooks;

/*
 * The running kernel's BTF while a load reads it (kbtf.h): its digest, or
 * the whole of it where SBX_TEST_FULL_BTF=1 asks (tests/e2e/24-core-btf
 * loads both ways and compares the programs). The hooks' index, the cast
 * IDs and the cut all come from it; what goes to the kernel are the
 * kernel's IDs (kbtf__kernel_id).
 */
static struct kbtf kernel_btf = { .fd = -1 };

/* The index of the running kernel's hooks, @kernel being its BTF. NULL with errno set. */
static const struct hook_index *kernel_index(const struct btf *kernel)
{
	int err = kernel_hooks.nr ? 0 : hooks__index(kernel, &kernel_hooks);

	if (err) {
		errno = -err;
		return NULL;
	}
	kfuncs__set_rdonly_cast(kbtf__kernel_id(&kernel_btf, (__u32)kernel_hooks.rdonly_cast));
	return &kernel_hooks;
}

/*
 * Whether fs.bpf.c's walk should read with plain loads: where the kernel
 * has bpf_rdonly_cast (6.2+). SBX_TEST_PLAIN_LOADS=0|1 says so instead, so
 * the e2e tests can run each kernel the other way too (tests/e2e/19-hook-gaps).
 */
static bool plain_loads_wanted(const struct btf *kernel)
{
	const char *forced = getenv("SBX_TEST_PLAIN_LOADS");
	const struct hook_index *ix;

	if (forced && (!strcmp(forced, "0") || !strcmp(forced, "1")))
		return forced[0] == '1';
	ix = kernel_index(kernel);
	return ix && ix->rdonly_cast > 0;
}

/*
 * The kernel's BTF cut to what the objects' CO-RE relocations can match
 * (corebtf.h), as a path for libbpf to search instead of the whole BTF
 * (btf_custom_path): the same relocations, 29 searches of some 700
 * types instead of 100,643 on 6.1. The digest is that cut (kbtf.h), in a
 * memfd the load keeps open until it is done (kernel_btf_close): libbpf
 * reads it only while it loads an object. None, and libbpf searches the
 * whole BTF, with the whole BTF (SBX_TEST_FULL_BTF=1) or where the memfd
 * cannot be read back by its path (no /proc).
 */
static char core_btf_path[32];	/* "/proc/self/fd/N" of the digest's memfd, when libbpf can read it */
static bool core_btf_tried;

static void core_btf_build(void)
{
	if (core_btf_tried || kernel_btf.fd < 0)
		return;
	core_btf_tried = true;
	snprintf(core_btf_path, sizeof(core_btf_path), "/proc/self/fd/%d", kernel_btf.fd);
	/* The digest parsed when it was built or read; only the path is new to libbpf (no /proc: none). */
	if (access(core_btf_path, R_OK)) {
		trace_note("core-btf: the whole BTF (the cut cannot be read at %s: %s)", core_btf_path,
			   strerror(errno));
		core_btf_path[0] = '\0';
		return;
	}
	trace_note("core-btf: a cut of %u types", kernel_btf.nr - 1);
}

/* Each struct cast to (kernel_ids_find): its name, and its field of struct sbx_kernel_ids. */
#define KERNEL_IDS(X) X(dentry) X(file) X(mount) X(path) X(task_struct) X(vfsmount) X(seqcount) \
	X(iattr) X(socket) X(msghdr)

/* What the loader reads of the kernel's BTF, besides the relocations' roots. */
static const struct corebtf_root own_roots[] = {
	{ "bpf_lsm_", BTF_KIND_FUNC, COREBTF_PREFIX | COREBTF_OPTIONAL },	/* each hook (hooks__index) */
	{ "bpf_rdonly_cast", BTF_KIND_FUNC, COREBTF_OPTIONAL },		/* 6.2 and later */
#define OWN_ROOT(s) { #s, BTF_KIND_STRUCT, COREBTF_OPTIONAL },
	KERNEL_IDS(OWN_ROOT)	/* kernel_ids_find */
#undef OWN_ROOT
};

/* The running kernel's BTF for a load, as kernel_btf: 0, or -errno. */
static int kernel_btf_open(void)
{
	static struct corebtf_root roots[ARRAY_SIZE(core_roots) + ARRAY_SIZE(own_roots)];
	const char *full = getenv("SBX_TEST_FULL_BTF");
	int err;

	if (!roots[0].name) {
		memcpy(roots, core_roots, sizeof(core_roots));
		memcpy(roots + ARRAY_SIZE(core_roots), own_roots, sizeof(own_roots));
	}
	err = kbtf__open(&kernel_btf, roots, ARRAY_SIZE(roots), full && !strcmp(full, "1") ? KBTF_WHOLE : 0);
	if (!err)
		trace_note("kernel-btf: %s", kernel_btf.how);
	return err;
}

/* The load is done: its BTF, the index of it and the cut's path go. */
static void kernel_btf_close(void)
{
	hooks__index_free(&kernel_hooks);
	kbtf__close(&kernel_btf);
	core_btf_path[0] = '\0';
	core_btf_tried = false;
}

/*
 * The cut for libbpf's options (btf_custom_path), or NULL. Options are
 * declared where they are used (LIBBPF_OPTS): returned by value, their
 * padding is not zeroed, and libbpf refuses options with non-zero bytes
 * past the last field.
 */
static const char *core_btf(void)
{
	return core_btf_path[0] ? core_btf_path : NULL;
}

/* The enforcement object opened with the cut, when there is one. NULL with errno set. */
static struct sbx_bpf *sbx_open(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = core_btf());

	return sbx_bpf__open_opts(&opts);
}

/*
 * The kernel's IDs of the structs the walk and the hooks cast to with
 * plain loads (bpf/sandbox.h AS_KERNEL, UNTRUSTED), for both objects'
 * .rodata: found once per process, in one pass, and only where they cast
 * (@plain).
 */
static struct sbx_kernel_ids kernel_ids;

static void kernel_ids_find(const struct btf *kernel, bool plain)
{
#define NAME(s) #s,
#define SET(s) kernel_ids.s = ids[i++];
#define SHOW(s) " " #s "=%u"
#define ARG(s) , kernel_ids.s
	static const char *const names[] = { KERNEL_IDS(NAME) };
	unsigned ids[ARRAY_SIZE(names)];
	size_t i = 0;

	if (!plain || kernel_ids.dentry)
		return;
	corebtf__struct_ids(kernel, names, ids, ARRAY_SIZE(names));
	for (size_t k = 0; k < ARRAY_SIZE(ids); k++)
		ids[k] = kbtf__kernel_id(&kernel_btf, ids[k]);	/* the digest's IDs are its own */
	KERNEL_IDS(SET)
	trace_note("kernel-ids" KERNEL_IDS(SHOW) KERNEL_IDS(ARG));
#undef NAME
#undef SET
#undef SHOW
#undef ARG
}

/*
 * Where the kernel's move counts are (moves.h), for the memos to go
 * without their walk while nothing moved: found and seen to move once per
 * process. Without them (zeros) every memo check walks: said in the trace
 * and by doctor, and nothing else changes.
 */
static __u64 move_counts[SBX_MOVES_N];
static char move_counts_why[160];	/* why the programs get none; "" when they do */

static void move_counts_find(void)
{
	if (moves__find(move_counts, move_counts_why, sizeof(move_counts_why)))
		trace_note("move-counts none: %s", move_counts_why);
	trace_phase("move-counts");
}

/*
 * FMODE_CREATED as this kernel's include/linux/fs.h defines it, for the
 * open that created its file to go unjudged after the create's own judging
 * (fs.bpf.c created_now): 1 << 20 from 4.19, which added it, to 7.3, seen
 * in the headers of 6.1, 6.12.117 and 7.3.4. A macro, in no BTF: on a
 * kernel outside that span the bit might mean something an ordinary open
 * has, so none is given, and such opens are judged (the same verdicts,
 * more instructions per create). Nor without path_mknod (a gap): then
 * nothing judged the create.
 */
static char created_bit_why[96];	/* why the programs get none; "" when they do */

static __u32 created_bit(const struct hook_gaps *gaps)
{
	unsigned major = 0, minor = 0, v;
	struct utsname u;

	created_bit_why[0] = 0;
	if (hooks__has_gap(gaps, "path_mknod"))
		snprintf(created_bit_why, sizeof(created_bit_why), "path_mknod is not loaded");
	else if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		snprintf(created_bit_why, sizeof(created_bit_why), "the kernel's release cannot be read");
	else if ((v = major << 16 | minor) < (4u << 16 | 19) || v > (7u << 16 | 3))
		snprintf(created_bit_why, sizeof(created_bit_why),
			 "kernel %u.%u is outside 4.19 to 7.3, where FMODE_CREATED is known", major, minor);
	if (created_bit_why[0]) {
		trace_note("created-bit none: %s", created_bit_why);
		return 0;
	}
	return 1u << 20;
}

static int lsm_prepare(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie)
{
	const char *hook = hooks__lsm_hook(prog);
	int id, err;

	(void)cookie;
	/*
	 * open_skel indexed the kernel before registering this handler. A load
	 * outside load_skel (none today) would find the index empty: -ESRCH, no
	 * program, rather than an ID of no kernel's.
	 */
	id = hook ? hooks__index_func(&kernel_hooks, hook) : -ENOENT;
	if (id < 0) {
		/* This program's gap, as for a refusal: the load goes on without it (load_skel). */
		if (capture && !capture->prog[0]) {
			snprintf(capture->prog, sizeof(capture->prog), "%s", bpf_program__name(prog));
			snprintf(capture->reason, sizeof(capture->reason), "this kernel has no bpf_lsm_%s",
				 hooks__prog_hook(prog));
		}
		return -ESRCH;	/* what libbpf says of an attach target it cannot find */
	}
	opts->attach_btf_obj_fd = 0;	/* vmlinux */
	opts->attach_btf_id = kbtf__kernel_id(&kernel_btf, (__u32)id);
	opts->expected_attach_type = BPF_LSM_MAC;
	/* Registered as another type (handlers_register): an LSM program from here on. */
	err = bpf_program__set_type(prog, BPF_PROG_TYPE_LSM);
	return err ? err : kfuncs__patch(prog);
}

static int lsm_attach(const struct bpf_program *prog, long cookie, struct bpf_link **link)
{
	(void)cookie;
	*link = bpf_program__attach_lsm(prog);
	/* Never 0 without a link: libbpf would take it for "nothing to attach". */
	return *link ? 0 : -(errno ? errno : EINVAL);
}

/*
 * Once per process, before the first object is opened (and after the
 * kernel is indexed): libbpf gives each program its section's handler when
 * it opens the object, and keeps a pointer to it, so the handler is never
 * unregistered. That pointer is into libbpf's one array of handlers, which
 * each registration reallocates: every handler (the extensions' too) is
 * registered here, before any object is opened.
 *
 * The "lsm" sections open as BPF_PROG_TYPE_SYSCALL programs, and
 * lsm_prepare makes each an LSM program right before it is loaded: libbpf
 * (1.1) parses the kernel's whole BTF for an object that has an LSM
 * program when it starts loading it (40 M instructions on 6.12), though
 * with the attach targets from our index and CO-RE against the cut it has
 * no use for it. The type is only libbpf's until then: nothing of ours
 * asks for it, and what reaches the kernel is an LSM program.
 */
static int handlers_register(void)
{
	static int lsm_registered;
	LIBBPF_OPTS(libbpf_prog_handler_opts, o, .prog_prepare_load_fn = lsm_prepare,
		    .prog_attach_fn = lsm_attach);

	if (!lsm_registered) {
		int id = libbpf_register_prog_handler("lsm+", BPF_PROG_TYPE_SYSCALL, BPF_LSM_MAC, &o);

		if (id < 0)
			return id;
		lsm_registered = 1;
	}
	return extension__register();	/* once too: it keeps its own flag */
}

/*
 * The object opened for this kernel: the hook variants that fit it
 * (hooks__select), without the programs of hooks already in @gaps (refused
 * by an earlier attempt, or left out on request). NULL with errno set.
 */
static struct sbx_bpf *open_skel(const struct btf *kernel, struct hook_gaps *gaps, struct hook_picks *picks,
				 bool plain, unsigned flags)
{
	const struct hook_index *ix = kernel_index(kernel);
	struct sbx_bpf *skel;
	struct bpf_program *prog;
	int err = ix ? handlers_register() : -errno;

	if (err) {
		errno = -err;
		return NULL;
	}
	core_btf_build();
	kernel_ids_find(kernel, plain);
	trace_phase("core-btf");
	move_counts_find();
	skel = sbx_open();
	if (!skel)
		return NULL;
	err = hooks__select(skel->obj, kernel, ix, picks, gaps);
	if (err) {
		sbx_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	wrong_variant_on_request(skel->obj);
	skel->rodata->plain_loads = plain;
	skel->rodata->kernel_ids = kernel_ids;
	/* Read through bpf_rdonly_cast with plain loads: without the struct's ID, not at all (walked). */
	if (!plain || kernel_ids.seqcount)
		memcpy((void *)skel->rodata->move_counts, move_counts, sizeof(move_counts));
	else if (move_counts[SBX_MOVES_RENAME]) {
		snprintf(move_counts_why, sizeof(move_counts_why),
			 "found, but the kernel's BTF has no struct seqcount to read them through");
		trace_note("move-counts dropped: %s", move_counts_why);
	}
	/* Attached only while a sandbox needs its descriptors judged (loader__fd_judging). */
	bpf_program__set_autoattach(skel->progs.fs_file_permission, false);
	/* Not wanted is not a gap: nothing to accept. */
	if (flags & LOADER_WITHOUT_FD_JUDGING)
		bpf_program__set_autoload(skel->progs.fs_file_permission, false);
	bpf_object__for_each_program(prog, skel->obj) {
		const char *hook = hooks__prog_hook(prog);

		if (dropped_on_request(hook) && bpf_program__autoload(prog))
			hooks__add_gap(gaps, hook, "left out on request (SBX_TEST_DROP_HOOKS)");
		if (hooks__has_gap(gaps, hook))
			bpf_program__set_autoload(prog, false);
	}
	skel->rodata->fmode_created = created_bit(gaps);
	return skel;
}

/* The section-derived hook of the program named @name in @skel. */
static const char *hook_of(struct sbx_bpf *skel, const char *name)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(skel->obj, name);

	return prog ? hooks__prog_hook(prog) : name;
}

/* From now until capture_end, libbpf's words on a refused program go to @c (emptied first). */
static void capture_begin(struct load_capture *c)
{
	memset(c, 0, sizeof(*c));
	c->prev = libbpf_set_print(capture_print);
	capture = c;
}

static void capture_end(struct load_capture *c)
{
	capture = NULL;
	libbpf_set_print(c->prev);
}

/* Load @skel, the first refused program and the verifier's words on it in @c. */
static int load_captured(struct sbx_bpf *skel, struct load_capture *c)
{
	int err;

	capture_begin(c);
	err = sbx_bpf__load(skel);
	capture_end(c);
	return err;
}

/*
 * Plain loads only make the walk cheaper: a kernel whose verifier refuses
 * them (one we have not tested, 6.2 to 6.11) keeps every protection with
 * the helper reads, rather than name a gap. True, with the object in
 * *@skel, when the load without them succeeded; false leaves *@skel, and
 * the refusal it was loaded with, as they were.
 */
static bool load_without_plain_loads(const struct btf *kernel, struct hook_gaps *gaps,
				     struct hook_picks *picks, unsigned flags, struct sbx_bpf **skel)
{
	struct sbx_bpf *again = open_skel(kernel, gaps, picks, false, flags);
	struct load_capture c;

	if (!again || load_captured(again, &c)) {
		sbx_bpf__destroy(again);
		return false;
	}
	sbx_bpf__destroy(*skel);
	*skel = again;
	return true;
}

/*
 * The programs of @skel that call what @x replaces are gaps, for @why: with
 * only their stand-ins they would deny every path and lose every record.
 * -EAGAIN when some were added (load again without them), -EINVAL when
 * none could be (no progress: give up), or -errno when a program's
 * functions cannot be read.
 */
static int shared_gaps(struct shared_bpf *x, struct sbx_bpf *skel, struct hook_gaps *gaps, const char *why)
{
	struct bpf_program *prog;
	int added = 0, calls;

	bpf_object__for_each_program(prog, skel->obj) {
		const char *hook = hooks__prog_hook(prog);

		if (bpf_program__fd(prog) < 0 || hooks__has_gap(gaps, hook))
			continue;
		calls = extension__calls(x->obj, skel->obj, prog);
		if (calls < 0)
			return calls;
		if (!calls)
			continue;
		hooks__add_gap(gaps, hook, "its shared code cannot load: %s", why);
		added++;
	}
	return added && !gaps->dropped ? -EAGAIN : -EINVAL;
}

/*
 * The extension object, opened with extension.c's handler of its sections,
 * and the same cut of the kernel's BTF as @skel (open_skel). NULL with errno set.
 */
static struct shared_bpf *shared_open(const struct sbx_bpf *skel)
{
	int err = handlers_register();	/* done already by open_skel: no object's handler moves */
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = core_btf());
	struct shared_bpf *x;

	if (err) {
		errno = -err;
		return NULL;
	}
	x = shared_bpf__open_opts(&opts);
	if (x) {
		x->rodata->plain_loads = skel->rodata->plain_loads;
		x->rodata->kernel_ids = skel->rodata->kernel_ids;
	}
	return x;
}

/*
 * Open, prepare and load the extension object for @skel, with plain loads
 * or not (@plain); the verifier's words on a refusal in @c. NULL with
 * errno set, *@x_out left for shared_gaps when only the load failed.
 */
static int shared_open_load(struct sbx_bpf *skel, bool plain, struct shared_bpf **x_out, struct load_capture *c)
{
	struct shared_bpf *x = shared_open(skel);
	int err;

	*x_out = x;
	memset(c, 0, sizeof(*c));
	if (!x)
		return -errno;
	x->rodata->plain_loads = plain;
	err = extension__prepare(x->obj, skel->obj);
	if (err)
		return err;
	if (!extension__needed(x->obj))
		return 0;	/* no program calls them (all gaps) */
	/* SBX_TEST_DROP_SHARED: refused, as if this kernel took no extension (tests/e2e/23-extensions). */
	if (getenv("SBX_TEST_DROP_SHARED")) {
		snprintf(c->reason, sizeof(c->reason), "left out on request (SBX_TEST_DROP_SHARED)");
		return -ENOTSUP;
	}
	capture_begin(c);
	err = shared_bpf__load(x);
	capture_end(c);
	return err;
}

/*
 * With @skel loaded: the extension object (shared.bpf.c) loaded on its maps
 * and put in place of the stand-ins in every program of @skel that calls
 * them, before any is attached, into @out. Its plain loads fall back as
 * the enforcement object's do (load_without_plain_loads): the walk is
 * here. What the kernel still refuses makes gaps (-EAGAIN: load again):
 * every caller when the load fails, the one program when its link does.
 */
static int shared_load(struct sbx_bpf *skel, struct loaded *out, struct hook_gaps *gaps)
{
	struct ext_links links = { .nr = 0 };
	struct shared_bpf *x = NULL;
	struct load_capture c;
	char why[HOOK_REASON_MAX], who[64] = "";
	bool plain = skel->rodata->plain_loads;
	int err;

	err = shared_open_load(skel, plain, &x, &c);
	if (err && err != -ENOTSUP && plain) {
		shared_bpf__destroy(x);
		err = shared_open_load(skel, false, &x, &c);
	}
	if (!err && x && extension__needed(x->obj))
		err = extension__attach(x->obj, skel->obj, &links, who, sizeof(who));
	if (!err) {
		out->shared = x;
		out->ext = links;
		return 0;
	}
	extension__unlink(&links);
	if (who[0]) {		/* loaded, but one program cannot have it: that one goes */
		struct bpf_program *prog = bpf_object__find_program_by_name(skel->obj, who);

		hooks__add_gap(gaps, prog ? hooks__prog_hook(prog) : who,
			       "its shared code cannot be put in: %s", strerror(-err));
		err = gaps->dropped ? -EINVAL : -EAGAIN;
	} else if (x && (c.reason[0] || err == -ENOTSUP)) {	/* refused by the kernel */
		snprintf(why, sizeof(why), "%s%s%s", c.prog, c.prog[0] ? ": " : "",
			 c.reason[0] ? c.reason : strerror(-err));
		err = shared_gaps(x, skel, gaps, why);
	}
	shared_bpf__destroy(x);
	return err;
}

/*
 * Load every program this kernel takes. A program the kernel refuses is a
 * gap (with the verifier's reason), and the object is opened and loaded
 * again without it: libbpf loads an object once, all or nothing. So a
 * kernel that refuses one program costs one more load, not the others.
 * The extensions go in before it returns (shared_load). 0, with the object
 * in @out, or -errno when what failed is not one program (a map, the BTF).
 */
static int load_skel(struct loaded *out, struct hook_gaps *gaps, struct hook_picks *picks, unsigned flags,
		     loader_gate_fn gate, void *arg)
{
	struct load_capture c;
	struct sbx_bpf *skel = NULL;
	struct btf *kernel;
	bool plain;
	int err = kernel_btf_open();

	if (err)
		return err;
	kernel = kernel_btf.btf;
	trace_phase("kernel-btf");
	plain = plain_loads_wanted(kernel);
	for (int attempt = 0; attempt <= HOOK_GAPS_MAX; attempt++) {
		skel = open_skel(kernel, gaps, picks, plain, flags);
		if (!skel) {
			err = -errno;
			break;
		}
		/* Asked once, before any verifying: not spent only to be refused. */
		if (attempt == 0 && gate && gate(gaps, arg)) {
			err = -ECANCELED;
			break;
		}
		trace_phase("opened");
		err = load_captured(skel, &c);
		trace_phase("verified");
		if (err && plain && load_without_plain_loads(kernel, gaps, picks, flags, &skel))
			err = 0;
		if (!err) {
			err = shared_load(skel, out, gaps);
			trace_phase("extensions");
			if (err != -EAGAIN)
				break;	/* loaded, or failed for a reason no gap explains */
			sbx_bpf__destroy(skel);	/* its callers are gaps now: again without them */
			skel = NULL;
			continue;
		}
		if (!c.prog[0] || hooks__has_gap(gaps, hook_of(skel, c.prog)) || gaps->dropped)
			break;	/* not one program's fault, or no progress: give up */
		hooks__add_gap(gaps, hook_of(skel, c.prog), "%s", c.reason[0] ? c.reason : strerror(-err));
		sbx_bpf__destroy(skel);
		skel = NULL;
	}
	kernel_btf_close();
	if (err) {
		sbx_bpf__destroy(skel);
		return err;
	}
	out->skel = skel;
	return 0;
}

int loader__pick(const char *btf_path, struct hook_picks *picks, struct hook_gaps *gaps)
{
	struct btf *kernel = btf_path ? btf__parse(btf_path, NULL) : NULL;
	struct hook_index ix;
	struct sbx_bpf *skel;
	int err = btf_path ? (kernel ? 0 : -errno) : kernel_btf_open();

	if (err)
		return err;
	if (!btf_path)
		kernel = kernel_btf.btf;	/* the running kernel's: its digest will do */
	err = hooks__index(kernel, &ix);	/* of @btf_path's kernel, maybe not this one */
	skel = err ? NULL : sbx_bpf__open();
	if (!err)
		err = skel ? hooks__select(skel->obj, kernel, &ix, picks, gaps) : -errno;
	sbx_bpf__destroy(skel);
	hooks__index_free(&ix);
	if (btf_path)
		btf__free(kernel);
	else
		kernel_btf_close();
	return err;
}

struct sbx_loader *loader__load(struct hook_picks *picks, unsigned flags, loader_gate_fn gate, void *arg)
{
	struct sbx_loader *l = loader_alloc();
	struct loaded ld = { .skel = NULL };
	int err;

	if (!l)
		return NULL;
	l->fdj_left_out = flags & LOADER_WITHOUT_FD_JUDGING;
	err = load_skel(&ld, &l->gaps, picks, flags, gate, arg);
	l->skel = ld.skel;
	l->shared = ld.shared;
	l->ext = ld.ext;
	if (err) {
		loader__destroy(l);
		errno = -err;
		return NULL;
	}
	skel_fds(l);
	loader__set_event_limits(l, SBX_COALESCE_NS_DEFAULT, SBX_RATE_DEFAULT, SBX_BURST_DEFAULT);
	return l;
}

/* Program @i of skeleton @s (its entries are prog_skel_sz apart, which may outgrow the struct). */
static const struct bpf_prog_skeleton *skel_prog(const struct bpf_object_skeleton *s, int i)
{
	return (const void *)((const char *)s->progs + (size_t)i * s->prog_skel_sz);
}

/*
 * Every loaded LSM program the skeleton attaches has its link: -ENOLINK
 * if one has none. The skeleton's attach skips, without a word, a program
 * whose section has no handler, and libbpf 1.2 and later drop a program's
 * handler when its type is changed, as lsm_prepare does (libbpf 1.1 keeps
 * it). Built against such a libbpf, the programs would load and nothing
 * would enforce.
 */
static int lsm_links_check(const struct sbx_bpf *skel)
{
	const struct bpf_object_skeleton *s = skel->skeleton;

	for (int i = 0; i < s->prog_cnt; i++) {
		const struct bpf_prog_skeleton *p = skel_prog(s, i);
		const struct bpf_program *prog = *p->prog;

		/* file_permission is attached on demand (autoattach off): not the skeleton's to attach. */
		if (bpf_program__fd(prog) >= 0 && bpf_program__autoattach(prog) && hooks__lsm_hook(prog) &&
		    !*p->link)
			return -ENOLINK;
	}
	return 0;
}

/*
 * SBX_TEST_UNLINK=HOOK: the link of HOOK's program taken back after the
 * attach, as such a libbpf would have skipped it (tests/e2e/19-hook-gaps).
 */
static void test_unlink(struct sbx_bpf *skel)
{
	const char *hook = getenv("SBX_TEST_UNLINK");
	const struct bpf_object_skeleton *s = skel->skeleton;

	for (int i = 0; hook && *hook && i < s->prog_cnt; i++) {
		const struct bpf_prog_skeleton *p = skel_prog(s, i);

		if (*p->link && !strcmp(hooks__prog_hook(*p->prog), hook)) {
			bpf_link__destroy(*p->link);
			*p->link = NULL;
		}
	}
}

int loader__attach(struct sbx_loader *l)
{
	int err = l->skel ? sbx_bpf__attach(l->skel) : -EINVAL;

	if (err)
		return err;
	test_unlink(l->skel);
	return lsm_links_check(l->skel);
}

size_t loader__link_fds(const struct sbx_loader *l, int *fds, size_t max)
{
	const struct bpf_object_skeleton *s = l->skel ? l->skel->skeleton : NULL;
	size_t n = 0;

	for (int i = 0; s && i < s->prog_cnt; i++) {
		const struct bpf_prog_skeleton *p = skel_prog(s, i);
		int fd = *p->link ? bpf_link__fd(*p->link) : -1;

		if (fd >= 0) {
			if (n < max)
				fds[n] = fd;
			n++;
		}
	}
	for (size_t i = 0; i < l->ext.nr; i++) {
		if (n < max)
			fds[n] = l->ext.fd[i];
		n++;
	}
	return n;
}

const struct hook_gaps *loader__gaps(const struct sbx_loader *l)
{
	return &l->gaps;
}

int loader__move_counts(const struct sbx_loader *l, char *why, size_t sz)
{
	if (!l->skel) {
		snprintf(why, sz, "a set adopted from bpffs: its loader decided");
		return -ENOENT;
	}
	if (l->skel->rodata->move_counts[SBX_MOVES_RENAME] && l->skel->rodata->move_counts[SBX_MOVES_MOUNT])
		return 1;
	snprintf(why, sz, "%s", move_counts_why[0] ? move_counts_why : "not given to the programs");
	return 0;
}

__u32 loader__created_bit(const struct sbx_loader *l, char *why, size_t sz)
{
	if (!l->skel) {
		snprintf(why, sz, "a set adopted from bpffs: its loader decided");
		return 0;
	}
	snprintf(why, sz, "%s", created_bit_why[0] ? created_bit_why : "not given to the programs");
	return l->skel->rodata->fmode_created;
}

#define CO_LEN	(SBX_COALESCE_SLOTS * sizeof(struct sbx_coalesce_slot))
#define TH_LEN	(SBX_THROTTLE_SLOTS * sizeof(struct sbx_throttle_slot))

void loader__destroy(struct sbx_loader *l)
{
	if (!l)
		return;
	if (l->co)
		munmap(l->co, CO_LEN);
	if (l->th)
		munmap(l->th, TH_LEN);
	if (l->rb_pos)
		munmap(l->rb_pos, 2 * sysconf(_SC_PAGESIZE));
	for (int i = 0; i < NR_STEER; i++)
		if (l->steer_link[i] >= 0)
			close(l->steer_link[i]);
	if (!l->skel) {		/* adopted: the fds and the mapping are ours */
		for (int i = 0; i < NR_MAPS; i++)
			if (l->fd[i] >= 0)
				close(l->fd[i]);
		for (int i = 0; i < NR_STEER; i++)
			if (l->steer_fd[i] >= 0)
				close(l->steer_fd[i]);
		if (l->fdj_prog >= 0)
			close(l->fdj_prog);
		if (l->bss_len)
			munmap(l->bss, l->bss_len);
	}
	fdj_release(l);
	/* Off their hooks first: a program left with its stand-ins would deny every path. */
	sbx_bpf__destroy(l->skel);
	extension__unlink(&l->ext);
	shared_bpf__destroy(l->shared);
	free(l);
}

/* The bit before the key: a program that finds the key must find its bit set (sbx_abi.h). */
static void fs_filter_set(struct sbx_loader *l, const struct sbx_fs_key *key)
{
	__u32 bit = sbx_fs_filter_bit(key->policy_id, key->len, key->h1, key->h2);

	__atomic_fetch_or(&l->bss->fs_filter[bit >> 6], 1ULL << (bit & 63), __ATOMIC_SEQ_CST);
}

/*
 * After every change to the sandboxes or the rules: what the kernel
 * remembers of a read-only open it allowed (fs.bpf.c, the open memo) is
 * void from here on. After the change, so that a call judged by the old
 * state keeps nothing that outlives it.
 */
static void verdicts_changed(struct sbx_loader *l)
{
	__atomic_add_fetch(&l->bss->verdict_gen, 1, __ATOMIC_SEQ_CST);
}

int loader__put_fs_rule(struct sbx_loader *l, const struct sbx_fs_key *key,
			const struct sbx_fs_rule *rule)
{
	int err = 0;

	fs_filter_set(l, key);
	if (bpf_map_update_elem(map_fd(l, M_FS_RULES), key, rule, BPF_ANY))
		err = -errno;
	verdicts_changed(l);
	return err;
}

int loader__delete_fs_rule(struct sbx_loader *l, const struct sbx_fs_key *key)
{
	int err = 0;

	if (bpf_map_delete_elem(map_fd(l, M_FS_RULES), key))
		err = -errno;
	verdicts_changed(l);
	return err;
}

/*
 * A run puts and removes a few dozen keys: one bpf() call for them all
 * saves a syscall per key (hash maps batch since 5.6). When the batch
 * fails, for whatever reason, the keys go one by one from the first:
 * BPF_ANY puts again what the batch put, and the failing key says why.
 * The count the kernel reports cannot be trusted there: a map without
 * batch support leaves it as it was passed.
 */
int loader__put_fs_rules(struct sbx_loader *l, const struct sbx_fs_key *keys,
			 const struct sbx_fs_rule *rules, __u32 n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_ANY);
	__u32 count = n;
	int err;

	for (__u32 i = 0; i < n; i++)	/* every bit before any key, as loader__put_fs_rule */
		fs_filter_set(l, &keys[i]);
	if (!n || !bpf_map_update_batch(map_fd(l, M_FS_RULES), keys, rules, &count, &opts)) {
		verdicts_changed(l);
		return 0;
	}
	for (__u32 i = 0; i < n; i++) {
		err = loader__put_fs_rule(l, &keys[i], &rules[i]);
		if (err)
			return err;
	}
	return 0;
}

void loader__delete_fs_rules(struct sbx_loader *l, const struct sbx_fs_key *keys, __u32 n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = n;

	/* A batch stops at the first key that is not there: then one by one. */
	if (!n || !bpf_map_delete_batch(map_fd(l, M_FS_RULES), keys, &count, &opts)) {
		verdicts_changed(l);
		return;
	}
	for (__u32 i = 0; i < n; i++)
		loader__delete_fs_rule(l, &keys[i]);
}

int loader__get_fs_rule(struct sbx_loader *l, const struct sbx_fs_key *key, struct sbx_fs_rule *rule)
{
	return bpf_map_lookup_elem(map_fd(l, M_FS_RULES), key, rule) ? -errno : 0;
}

int loader__next_fs_key(struct sbx_loader *l, const struct sbx_fs_key *prev, struct sbx_fs_key *key)
{
	return bpf_map_get_next_key(map_fd(l, M_FS_RULES), prev, key) ? -errno : 0;
}

/*
 * Zeroed counters for @cgid, made before the sandbox exists, so that "an
 * entry with nothing counted" tells for sure that no record of the sandbox
 * can be on its way (loader__sandbox_quiet). Best effort: on failure the
 * kernel makes the entry on the first violation, and no entry reads as
 * "unknown".
 */
static bool sandbox_stats_create(struct sbx_loader *l, __u64 cgid)
{
	int ncpu = libbpf_num_possible_cpus();
	void *zero = ncpu > 0 ? calloc(ncpu, sizeof(struct sbx_sandbox_stats)) : NULL;
	bool made = zero && !bpf_map_update_elem(map_fd(l, M_SANDBOX_STATS), &cgid, zero, BPF_NOEXIST);

	free(zero);
	return made;
}

static int add_sandbox(struct sbx_loader *l, __u64 cgid, const struct sbx_sandbox *sb, bool leaf)
{
	bool stats_made;
	int err;

	/*
	 * Before the entry: unless it is a fresh leaf (loader__add_leaf_sandbox),
	 * this cgroup may lie above or below another sandbox, and from now on
	 * every level of a task's cgroups is judged (sandbox.h nest_set; never
	 * cleared). Without it, a task in a sandbox's own cgroup is judged by
	 * that one entry: one lookup instead of a walk of its ancestors.
	 */
	if (!leaf)
		__atomic_store_n(&l->bss->nest_set, 1, __ATOMIC_SEQ_CST);
	stats_made = sandbox_stats_create(l, cgid);

	/* Before the entry: its cgroup's first exec must find it (sbx_abi.h SBX_SANDBOX_ARMING). */
	if (sb->flags & SBX_SANDBOX_ARMING)
		__atomic_store_n(&l->bss->arming_set, 1, __ATOMIC_SEQ_CST);

	if (bpf_map_update_elem(map_fd(l, M_SANDBOXES), &cgid, sb, BPF_NOEXIST)) {
		err = -errno;
		/* No sandbox: none of its counters either (a full map would keep them forever). */
		if (stats_made)
			bpf_map_delete_elem(map_fd(l, M_SANDBOX_STATS), &cgid);
		return err;
	}
	fdj_release(l);
	/* Other processes register sandboxes in the same (pinned) object: atomically. */
	__atomic_add_fetch(&l->bss->nr_sandboxes, 1, __ATOMIC_SEQ_CST);
	/*
	 * After the entry: what the kernel's outside cache knows (sandbox.h) is
	 * void from here on, and a task that looks again finds the entry.
	 */
	__atomic_add_fetch(&l->bss->sandbox_gen, 1, __ATOMIC_SEQ_CST);
	verdicts_changed(l);
	return 0;
}

int loader__add_sandbox(struct sbx_loader *l, __u64 cgid, const struct sbx_sandbox *sb)
{
	return add_sandbox(l, cgid, sb, false);
}

int loader__add_leaf_sandbox(struct sbx_loader *l, __u64 cgid, const struct sbx_sandbox *sb)
{
	return add_sandbox(l, cgid, sb, true);
}

int loader__arming_settle(struct sbx_loader *l)
{
	struct sbx_sandbox sb;
	__u64 cgid, prev = 0;
	bool first = true;
	int n = 0;

	while (!loader__next_sandbox(l, first ? NULL : &prev, &cgid, &sb)) {
		n += !!(sb.flags & SBX_SANDBOX_ARMING);
		first = false;
		prev = cgid;
	}
	if (!n && l->bss->arming_set)
		__atomic_store_n(&l->bss->arming_set, 0, __ATOMIC_SEQ_CST);
	return n;
}

int loader__remove_sandbox(struct sbx_loader *l, __u64 cgid)
{
	if (bpf_map_delete_elem(map_fd(l, M_SANDBOXES), &cgid))
		return -errno;
	verdicts_changed(l);
	__atomic_sub_fetch(&l->bss->nr_sandboxes, 1, __ATOMIC_SEQ_CST);
	loader__drop_sandbox_stats(l, cgid);
	return 0;
}

void loader__drop_sandbox_stats(struct sbx_loader *l, __u64 cgid)
{
	bpf_map_delete_elem(map_fd(l, M_SANDBOX_STATS), &cgid);	/* none yet if it never refused anything */
}

int loader__prune_sandbox_stats(struct sbx_loader *l)
{
	return map_prune(map_fd(l, M_SANDBOX_STATS), sizeof(__u64), map_fd(l, M_SANDBOXES));
}

/* The sandbox's counters summed over CPUs; -ENOENT: it has no entry. */
static int sandbox_stats_read(struct sbx_loader *l, __u64 cgid, struct sbx_sandbox_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct sbx_sandbox_stats *per;
	int err = 0;

	memset(sum, 0, sizeof(*sum));
	if (ncpu < 0)
		return ncpu;
	per = calloc(ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd(l, M_SANDBOX_STATS), &cgid, per))
		err = -errno;
	for (int i = 0; !err && i < ncpu; i++)
		for (int k = 0; k < SBX_KIND__MAX; k++)
			sum->n[k] += per[i].n[k];
	free(per);
	return err;
}

int loader__sandbox_stats(struct sbx_loader *l, __u64 cgid, struct sbx_sandbox_stats *sum)
{
	int err = sandbox_stats_read(l, cgid, sum);

	return err == -ENOENT ? 0 : err;	/* nothing counted yet */
}

bool loader__sandbox_quiet(struct sbx_loader *l, __u64 cgid)
{
	struct sbx_sandbox_stats sum;

	if (sandbox_stats_read(l, cgid, &sum))
		return false;	/* no entry (or no answer): a record may be on its way */
	for (int k = 0; k < SBX_KIND__MAX; k++)
		if (sum.n[k])
			return false;
	return true;
}

int loader__set_scope(struct sbx_loader *l, int cgroup_fd)
{
	__u32 key = 0, fd = (__u32)cgroup_fd;

	if (bpf_map_update_elem(map_fd(l, M_SCOPE), &key, &fd, BPF_ANY))
		return -errno;
	l->bss->scope_set = 1;
	return 0;
}

void loader__set_event_limits(struct sbx_loader *l, __u64 coalesce_ns, __u32 rate, __u32 burst)
{
	__atomic_store_n(&l->bss->coalesce_ns, coalesce_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&l->bss->rate_burst, burst, __ATOMIC_RELAXED);
	__atomic_store_n(&l->bss->rate_interval_ns, rate ? 1000000000ULL / rate : 0, __ATOMIC_RELAXED);
}

__u64 loader__coalesce_ns(const struct sbx_loader *l)
{
	return __atomic_load_n(&l->bss->coalesce_ns, __ATOMIC_RELAXED);
}

int loader__event_slots(struct sbx_loader *l, struct sbx_coalesce_slot **co, struct sbx_throttle_slot **th)
{
	void *p;

	if (!l->co) {
		p = mmap(NULL, CO_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd(l, M_COALESCE), 0);
		if (p == MAP_FAILED)
			return -errno;
		l->co = p;
	}
	if (!l->th) {
		p = mmap(NULL, TH_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd(l, M_THROTTLE), 0);
		if (p == MAP_FAILED)
			return -errno;
		l->th = p;
	}
	*co = l->co;
	*th = l->th;
	return 0;
}

__u32 loader__set_id(const struct sbx_loader *l)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(map_fd(l, M_STATS), &info, &len) ? 0 : info.id;
}

int loader__events_fd(const struct sbx_loader *l)
{
	return map_fd(l, M_EVENTS);
}

int loader__stat_percpu(const struct sbx_loader *l, enum sbx_stat which, __u64 *out, size_t max)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 key = which;
	__u64 *vals;

	if (ncpu < 0)
		return ncpu;
	memset(out, 0, max * sizeof(*out));
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd(l, M_STATS), &key, vals)) {
		int err = -errno;

		free(vals);
		return err;
	}
	for (int i = 0; i < ncpu && max; i++)
		out[(size_t)i < max ? (size_t)i : max - 1] += vals[i];
	free(vals);
	return ncpu;
}

int loader__ringbuf_fill(struct sbx_loader *l, double *ratio)
{
	long page = sysconf(_SC_PAGESIZE);
	__u64 cons, prod;
	void *p;

	/* The ring's first page holds the consumer position, the second the producer's. */
	if (!l->rb_pos) {
		p = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, map_fd(l, M_EVENTS), 0);
		if (p == MAP_FAILED) {
			/* Some kernels map the consumer page only writable, or the two apart. */
			return -errno;
		}
		l->rb_pos = p;
	}
	cons = __atomic_load_n((__u64 *)l->rb_pos, __ATOMIC_ACQUIRE);
	prod = __atomic_load_n((__u64 *)((char *)l->rb_pos + page), __ATOMIC_ACQUIRE);
	*ratio = prod >= cons ? (double)(prod - cons) / SBX_RINGBUF_BYTES : 0;
	return 0;
}

int loader__stat(const struct sbx_loader *l, enum sbx_stat which, __u64 *value)
{
	/* Every CPU folds into the one slot: the sum. */
	int n = loader__stat_percpu(l, which, value, 1);

	return n < 0 ? n : 0;
}

/* BPF_LOG_STATS: the verifier's summary lines only, not the instruction trace. */
#define LOG_LEVEL_STATS	4
#define STATS_LOG_SIZE	4096

/* The figures of one "processed … insns …" summary in @log; missing ones stay 0. */
static void parse_verifier_log(const char *log, struct loader_prog_stats *st)
{
	const char *p = strstr(log, "processed ");

	if (p)
		sscanf(p, "processed %u insns (limit %*u) max_states_per_insn %*u total_states %u peak_states %u",
		       &st->insns_processed, &st->total_states, &st->peak_states);
	p = strstr(log, "verification time ");
	if (p)
		sscanf(p, "verification time %u usec", &st->verify_us);
}

/* Before loading @obj: the log of each program it loads into @logs, its row in @st from [@i]; the next free row. */
static size_t stats_prepare(struct bpf_object *obj, char *logs, struct loader_prog_stats *st, size_t i)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;
		bpf_program__set_log_level(prog, LOG_LEVEL_STATS);
		bpf_program__set_log_buf(prog, logs + i * STATS_LOG_SIZE, STATS_LOG_SIZE);
		snprintf(st[i].name, sizeof(st[i].name), "%s", bpf_program__name(prog));
		snprintf(st[i].section, sizeof(st[i].section), "%s", bpf_program__section_name(prog));
		i++;
	}
	return i;
}

/* After loading @obj: its rows from [@i] filled from the logs and the kernel; the next row. */
static size_t stats_collect(struct bpf_object *obj, const char *logs, struct loader_prog_stats *st, size_t i)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_program__autoload(prog))
			continue;
		parse_verifier_log(logs + i * STATS_LOG_SIZE, &st[i]);
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len)) {
			st[i].xlated_insns = info.xlated_prog_len / sizeof(struct bpf_insn);
			if (!st[i].insns_processed)	/* the kernel's own count, from 5.16 */
				st[i].insns_processed = info.verified_insns;
		}
		i++;
	}
	return i;
}

/* Programs of @obj at most loaded (extension__prepare may leave some out). */
static size_t nr_progs(struct bpf_object *obj)
{
	struct bpf_program *prog;
	size_t n = 0;

	bpf_object__for_each_program(prog, obj)
		n += bpf_program__autoload(prog);
	return n;
}

/*
 * Every program loaded as a run would load it, never attached, with the
 * verifier's figures: the enforcement object's, then the extensions'
 * (verified once, against their first caller; extension__prepare).
 */
int loader__verifier_stats(struct loader_prog_stats **out, size_t *nr)
{
	int kerr = kernel_btf_open();
	struct btf *kernel = kerr ? NULL : kernel_btf.btf;
	struct hook_gaps gaps = { .nr = 0 };
	struct sbx_bpf *skel = kernel ? open_skel(kernel, &gaps, NULL, plain_loads_wanted(kernel), 0) : NULL;
	struct shared_bpf *x = skel ? shared_open(skel) : NULL;
	struct loader_prog_stats *st = NULL;
	char *logs = NULL;
	size_t n, i;
	int err;

	*out = NULL;
	*nr = 0;
	err = kerr ? kerr : x ? 0 : -errno;
	if (err)
		goto out;
	n = nr_progs(skel->obj) + nr_progs(x->obj);
	st = calloc(n ? n : 1, sizeof(*st));
	logs = calloc(n ? n : 1, STATS_LOG_SIZE);
	if (!st || !logs) {
		err = -ENOMEM;
		goto out;
	}
	i = stats_prepare(skel->obj, logs, st, 0);
	err = sbx_bpf__load(skel);	/* loaded, never attached: nothing is enforced */
	if (err)
		goto out;
	err = extension__prepare(x->obj, skel->obj);
	if (!err) {
		n = stats_prepare(x->obj, logs, st, i);
		err = shared_bpf__load(x);
	}
	if (err)
		goto out;
	stats_collect(x->obj, logs, st, stats_collect(skel->obj, logs, st, 0));
	*out = st;
	*nr = n;
	st = NULL;
out:
	kernel_btf_close();
	free(logs);
	free(st);
	shared_bpf__destroy(x);
	sbx_bpf__destroy(skel);
	return err;
}

int loader__probe_lsm(void)
{
	struct probe_bpf *skel = probe_bpf__open();
	int err;

	if (!skel)
		return -errno;
	err = probe_bpf__load(skel);
	if (!err)
		err = probe_bpf__attach(skel);
	probe_bpf__destroy(skel);
	return err;
}

static int map_put(int fd, const void *key, const void *val)
{
	return bpf_map_update_elem(fd, key, val, BPF_ANY) ? -errno : 0;
}

static int map_del(int fd, const void *key)
{
	return bpf_map_delete_elem(fd, key) ? -errno : 0;
}

int loader__put_net_prefix(struct sbx_loader *l, const struct sbx_net_key *k,
			   const struct sbx_net_ports *v)
{
	return map_put(map_fd(l, M_NET_RULES), k, v);
}

int loader__delete_net_prefix(struct sbx_loader *l, const struct sbx_net_key *k)
{
	return map_del(map_fd(l, M_NET_RULES), k);
}

int loader__dns_update(struct sbx_loader *l, const struct sbx_dns_key *k,
		       const struct sbx_dns_entry *e)
{
	return map_put(map_fd(l, M_DNS_ALLOW), k, e);
}

int loader__dns_delete(struct sbx_loader *l, const struct sbx_dns_key *k)
{
	return map_del(map_fd(l, M_DNS_ALLOW), k);
}

int loader__dns_lookup(struct sbx_loader *l, const struct sbx_dns_key *k, struct sbx_dns_entry *e)
{
	return bpf_map_lookup_elem(map_fd(l, M_DNS_ALLOW), k, e) ? -errno : 0;
}

int loader__next_dns_key(struct sbx_loader *l, const struct sbx_dns_key *prev, struct sbx_dns_key *k)
{
	return bpf_map_get_next_key(map_fd(l, M_DNS_ALLOW), prev, k) ? -errno : 0;
}

int loader__dns_client(struct sbx_loader *l, __u32 key, struct sbx_dns_client *out)
{
	if (bpf_map_lookup_elem(map_fd(l, M_DNS_CLIENTS), &key, out))
		return -errno;
	return 0;
}

/*
 * An adopted set's steering programs, opened from its pins on first use:
 * a run under the daemon's steering of the sandboxes' parent attaches none.
 */
static int steer_fds(struct sbx_loader *l)
{
	char p[PATH_MAX];

	for (int i = 0; i < NR_STEER; i++) {
		if (l->steer_fd[i] >= 0 || l->skel)
			continue;
		if (pin_path(p, sizeof(p), l->pin_dir, "progs", steer_names[i]))
			return -ENAMETOOLONG;
		l->steer_fd[i] = bpf_obj_get(p);
		if (l->steer_fd[i] < 0)
			return -errno;
	}
	return 0;
}

int loader__steer_links(struct sbx_loader *l, int cgroup_fd, int links[NR_STEER])
{
	static const enum bpf_attach_type types[NR_STEER] = {
		BPF_CGROUP_INET4_CONNECT, BPF_CGROUP_INET6_CONNECT,
		BPF_CGROUP_UDP4_SENDMSG, BPF_CGROUP_UDP6_SENDMSG,
		BPF_CGROUP_UDP4_RECVMSG, BPF_CGROUP_UDP6_RECVMSG,
		BPF_CGROUP_INET4_GETPEERNAME, BPF_CGROUP_INET6_GETPEERNAME,
	};
	int err = steer_fds(l);

	if (err)
		return err;
	for (int i = 0; i < NR_STEER; i++) {
		links[i] = bpf_link_create(l->steer_fd[i], cgroup_fd, types[i], NULL);
		if (links[i] < 0) {
			err = -errno;

			for (int j = 0; j < i; j++)
				close(links[j]);
			for (int j = 0; j < NR_STEER; j++)
				links[j] = -1;
			return err;
		}
	}
	return 0;
}

int loader__steer_dns(struct sbx_loader *l, int cgroup_fd)
{
	if (l->steer_link[0] >= 0)
		return -EBUSY;
	return loader__steer_links(l, cgroup_fd, l->steer_link);
}

/* --- pinned state: enforcement that outlives this process -------------------- */

/*
 * What a pinned set was built from (a binary adopts only its own), and what
 * it lacks. The meta is small: every run reads it, and a map lookup copies
 * the whole value twice (into the kernel's buffer, then out), with the hook
 * gaps 15 KB (and pages of stack and heap to fault in) for nothing on a
 * kernel where every hook fits. The gaps, when there are any, are a map of their own
 * (maps/meta_gaps), pinned before the meta and read only then.
 */
struct pin_meta {
	__u32 abi;
	__u32 nr_gaps;		/* in meta_gaps: as the loader that pinned the set found them */
	__u64 object_hash;	/* FNV-1a of the BPF object the skeleton embeds */
	__u32 dropped_gaps;	/* beyond HOOK_GAPS_MAX */
	__u32 pad;
};

#define META_GAPS	"meta_gaps"

/* The build's object, hashed by the Makefile (sbx.objhash.h): a set pinned by another build is not adopted. */
static __u64 object_hash(void)
{
	return SBX_OBJECT_HASH;
}

static int mkdirs(const char *dir)
{
	static const char *const sub[] = { "", "maps", "links", "progs", EXT_SUB };
	char p[PATH_MAX];

	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		if (pin_path(p, sizeof(p), dir, "", sub[i]))
			return -ENAMETOOLONG;
		if (mkdir(p, 0700) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

/* A one-entry array map holding @value, pinned at @path. */
static int pin_value(const char *path, const char *name, const void *value, __u32 size)
{
	__u32 key = 0;
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, name, sizeof(key), size, 1, NULL);
	if (fd < 0)
		return -errno;
	err = bpf_map_update_elem(fd, &key, value, BPF_ANY) ? -errno : 0;
	if (!err && bpf_obj_pin(fd, path))
		err = -errno;
	close(fd);
	return err;
}

/* The meta map, pinned last: its presence says the set is complete. Its gaps map first, when any. */
static int pin_meta(const char *dir, const struct hook_gaps *gaps)
{
	struct pin_meta m = { .abi = SBX_ABI_VERSION, .object_hash = object_hash(),
			      .nr_gaps = gaps->nr, .dropped_gaps = gaps->dropped };
	char p[PATH_MAX];
	int err;

	if (gaps->nr) {
		err = pin_path(p, sizeof(p), dir, "maps", META_GAPS) ?:
		      pin_value(p, "sbx_meta_gaps", gaps, sizeof(*gaps));
		if (err)
			return err;
	}
	return pin_path(p, sizeof(p), dir, "", "meta") ?: pin_value(p, "sbx_meta", &m, sizeof(m));
}

int loader__pin(struct sbx_loader *l, const char *dir)
{
	const struct bpf_object_skeleton *s;
	char p[PATH_MAX];
	int err;

	if (!l->skel)
		return -EINVAL;	/* adopted: already pinned */
	/*
	 * Steering pinned before (an older set's, left by an unload that did
	 * not finish or did not know rootsteer/) runs programs that read
	 * other maps: trusted for complete, it would let port 53 past the
	 * rules. No sandbox of this new set has any yet.
	 */
	if (!pin_path(p, sizeof(p), dir, "", STEER_SUB))
		rm_pins(p, 1);
	if (!pin_path(p, sizeof(p), dir, "", ROOT_STEER_SUB))
		rm_pins(p, 1);
	err = mkdirs(dir);
	for (int i = 0; !err && i < NR_MAPS; i++)
		err = pin_path(p, sizeof(p), dir, "maps", map_pin_names[i]) ?:
		      (bpf_obj_pin(l->fd[i], p) ? -errno : 0);
	for (int i = 0; !err && i < NR_STEER; i++)
		err = pin_path(p, sizeof(p), dir, "progs", steer_names[i]) ?:
		      (bpf_obj_pin(l->steer_fd[i], p) ? -errno : 0);
	/* Attached by whoever first needs descriptors judged; loaded unless it is a gap. */
	if (!err && bpf_program__fd(l->skel->progs.fs_file_permission) >= 0)
		err = pin_path(p, sizeof(p), dir, "progs", FDJ_NAME) ?:
		      (bpf_obj_pin(bpf_program__fd(l->skel->progs.fs_file_permission), p) ? -errno : 0);
	/* The extensions first: a program pinned on its hook must never be left with its stand-ins. */
	for (size_t i = 0; !err && i < l->ext.nr; i++)
		err = pin_path(p, sizeof(p), dir, EXT_SUB, l->ext.name[i]) ?:
		      (bpf_obj_pin(l->ext.fd[i], p) ? -errno : 0);
	s = l->skel->skeleton;
	for (int i = 0; !err && i < s->prog_cnt; i++) {
		struct bpf_link *link = *s->progs[i].link;

		if (link)
			err = pin_path(p, sizeof(p), dir, "links", s->progs[i].name) ?:
			      bpf_link__pin(link, p);
	}
	if (!err)
		err = pin_meta(dir, &l->gaps);
	if (err)
		loader__unpin(dir);
	else
		snprintf(l->pin_dir, sizeof(l->pin_dir), "%s", dir);
	return err;
}

/* The gaps map pinned with the meta, into @gaps (whose dropped count is the meta's). */
static int read_gaps(const char *dir, struct hook_gaps *gaps)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0, dropped = gaps->dropped;
	char p[PATH_MAX];
	int fd, err;

	if (pin_path(p, sizeof(p), dir, "maps", META_GAPS))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(p);
	if (fd < 0)
		return errno == ENOENT ? -EUCLEAN : -errno;
	err = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	if (!err && info.value_size != sizeof(*gaps))
		err = -ESTALE;
	if (!err && bpf_map_lookup_elem(fd, &key, gaps))
		err = -errno;
	close(fd);
	gaps->dropped = dropped;
	return err;
}

/*
 * Is the pinned set at @dir complete and built from this binary's object?
 * Its gaps into @gaps. Another build's meta may be of another size: read
 * only one of ours.
 */
static int meta_ok(const char *dir, struct hook_gaps *gaps)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct pin_meta m;
	char p[PATH_MAX];
	__u32 key = 0;
	int fd, err;

	if (pin_path(p, sizeof(p), dir, "", "meta"))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(p);
	if (fd < 0)
		return -errno;
	err = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	if (!err && info.value_size != sizeof(m))
		err = -ESTALE;
	if (!err && bpf_map_lookup_elem(fd, &key, &m))
		err = -errno;
	close(fd);
	if (err)
		return err;
	if (m.abi != SBX_ABI_VERSION || m.object_hash != object_hash())
		return -ESTALE;
	if (m.nr_gaps > HOOK_GAPS_MAX)
		return -EUCLEAN;
	gaps->nr = 0;
	gaps->dropped = m.dropped_gaps;
	if (m.nr_gaps && (err = read_gaps(dir, gaps)))
		return err;
	if (gaps->nr != m.nr_gaps)
		return -EUCLEAN;	/* the meta and its gaps disagree: not one set */
	for (unsigned int i = 0; i < gaps->nr; i++) {	/* strings from a map: terminated here */
		gaps->g[i].hook[sizeof(gaps->g[i].hook) - 1] = '\0';
		gaps->g[i].reason[sizeof(gaps->g[i].reason) - 1] = '\0';
	}
	return 0;
}

/* The other maps, the steering programs and file_permission's: on first use (map_fd, steer_fds, fdj_attach). */
static int open_pinned_fds(struct sbx_loader *l, const char *dir)
{
	/*
	 * Opened now, the maps every run writes: its rules, its entry and its
	 * counters go to the set whose .bss (policy ids, nr_sandboxes) it
	 * maps, even if an unload and a new daemon replace the pins meanwhile.
	 */
	static const int now[] = { M_BSS, M_SANDBOXES, M_FS_RULES, M_NET_RULES, M_SANDBOX_STATS };
	int err = 0;

	if ((size_t)snprintf(l->pin_dir, sizeof(l->pin_dir), "%s", dir) >= sizeof(l->pin_dir))
		return -ENAMETOOLONG;
	for (size_t i = 0; !err && i < sizeof(now) / sizeof(now[0]); i++)
		if (map_fd(l, now[i]) < 0)
			err = -errno;
	if (err)
		l->pin_dir[0] = '\0';
	return err;
}

struct sbx_loader *loader__open_pinned(const char *dir)
{
	struct sbx_loader *l = loader_alloc();
	long page = sysconf(_SC_PAGESIZE);
	int err;

	if (!l)
		return NULL;
	err = meta_ok(dir, &l->gaps);	/* in place: no copy of 15 KB through the stack */
	if (!err)
		err = open_pinned_fds(l, dir);
	if (!err) {
		l->bss_len = (sizeof(*l->bss) + page - 1) / page * page;
		l->bss = mmap(NULL, l->bss_len, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd(l, M_BSS), 0);
		if (l->bss == MAP_FAILED) {
			err = -errno;
			l->bss = NULL;
			l->bss_len = 0;
		}
	}
	if (err) {
		loader__destroy(l);
		errno = -err;
		return NULL;
	}
	return l;
}

/* Unlink every entry of the directory @p (pins; with @depth 1, directories of pins), then it. */
static int rm_pins(const char *p, int depth)
{
	char q[PATH_MAX + 256];
	struct dirent *e;
	int err = 0, r;
	DIR *d = opendir(p);

	if (!d)
		return 0;	/* none, or not ours to read: nothing we could remove */
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || snprintf(q, sizeof(q), "%s/%s", p, e->d_name) <= 0)
			continue;
		r = depth ? rm_pins(q, depth - 1) : (unlink(q) ? -errno : 0);
		err = err ?: r;
	}
	closedir(d);
	rmdir(p);
	return err;
}

/*
 * Remove what loader__pin made, and the steering pinned for attached
 * cgroups and for the sandboxes' parent; the meta first, so a half-removed set is never adopted.
 */
int loader__unpin(const char *dir)
{
	static const struct { const char *name; int depth; } sub[] = {
		{ "links", 0 }, { EXT_SUB, 0 }, { "maps", 0 }, { "progs", 0 }, { STEER_SUB, 1 }, { ROOT_STEER_SUB, 1 },
	};
	char p[PATH_MAX];
	struct statfs fs;
	int err = 0, e;

	if (pin_path(p, sizeof(p), dir, "", "meta"))
		return -ENAMETOOLONG;
	/* Only pins are ours to remove: a --pin-dir elsewhere must not cost anyone their files. */
	if (statfs(dir, &fs))
		return errno == ENOENT ? 0 : -errno;
	if (fs.f_type != BPF_FS_MAGIC)
		return -EXDEV;
	if (unlink(p) && errno != ENOENT)
		err = -errno;
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		pin_path(p, sizeof(p), dir, "", sub[i].name);
		e = rm_pins(p, sub[i].depth);
		err = err ?: e;
	}
	rmdir(dir);
	return err;
}

/* @dir/@sub/CGID, made when @make. */
static int steer_dir_in(const char *dir, const char *sub, __u64 cgid, char *buf, size_t sz, bool make)
{
	char id[24];

	snprintf(id, sizeof(id), "%llu", (unsigned long long)cgid);
	if (pin_path(buf, sz, dir, "", sub))
		return -ENAMETOOLONG;
	if (make && mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	if (pin_path(buf, sz, dir, sub, id))
		return -ENAMETOOLONG;
	if (make && mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

static int steer_dir(const char *dir, __u64 cgid, char *buf, size_t sz, bool make)
{
	return steer_dir_in(dir, STEER_SUB, cgid, buf, sz, make);
}

/* Is every steering link of the set at @d pinned? */
static bool steer_complete(const char *d)
{
	char p[PATH_MAX];

	for (int i = 0; i < NR_STEER; i++)
		if (pin_path(p, sizeof(p), d, "", steer_names[i]) || access(p, F_OK))
			return false;
	return true;
}

/* Attach and pin the steering of @cgroup_fd as @dir/@sub/@cgid, unless a whole set is there. */
static int pin_steer_in(struct sbx_loader *l, const char *dir, const char *sub, __u64 cgid, int cgroup_fd)
{
	int links[NR_STEER], err;
	char d[PATH_MAX], p[PATH_MAX];

	err = steer_dir_in(dir, sub, cgid, d, sizeof(d), true);
	if (err || steer_complete(d))
		return err;
	/* A set left half made (a daemon killed while pinning): made again whole. */
	rm_pins(d, 0);
	err = steer_dir_in(dir, sub, cgid, d, sizeof(d), true) ?: loader__steer_links(l, cgroup_fd, links);
	if (err)
		return err;
	for (int i = 0; i < NR_STEER; i++) {
		if (!err)
			err = pin_path(p, sizeof(p), d, "", steer_names[i]) ?:
			      (bpf_obj_pin(links[i], p) ? -errno : 0);
		close(links[i]);	/* pinned, the link stays */
	}
	if (err)
		rm_pins(d, 0);
	return err;
}

int loader__pin_steer(struct sbx_loader *l, const char *dir, __u64 cgid, int cgroup_fd)
{
	return pin_steer_in(l, dir, STEER_SUB, cgid, cgroup_fd);
}

/* Few: one per parent a daemon has steered since the last unload. */
#define ROOT_STEER_MAX	16

int loader__pin_root_steer(struct sbx_loader *l, const char *dir, __u64 cgid, int cgroup_fd)
{
	__u64 ids[ROOT_STEER_MAX];
	char d[PATH_MAX];
	int err = pin_steer_in(l, dir, ROOT_STEER_SUB, cgid, cgroup_fd);
	int n = err ? 0 : steer_ids_in(dir, ROOT_STEER_SUB, ids, ROOT_STEER_MAX);

	/*
	 * Sets on parents that went (removed, made again: another id) steer
	 * nothing: they go. A live one's stay, whoever made them: a daemon
	 * started with another SBX_CGROUP_ROOT must not take the steering from
	 * the runs below the one before (cgroup_fd is on the cgroup2 mount).
	 */
	for (int i = 0; i < n && i < ROOT_STEER_MAX; i++)
		if (cgroup_id_alive(cgroup_fd, ids[i]) == 0 &&
		    !steer_dir_in(dir, ROOT_STEER_SUB, ids[i], d, sizeof(d), false))
			rm_pins(d, 0);
	return err;
}

bool loader__root_steered(const char *dir, __u64 cgid)
{
	char d[PATH_MAX];

	return cgid && !steer_dir_in(dir, ROOT_STEER_SUB, cgid, d, sizeof(d), false) && steer_complete(d);
}

int loader__unpin_steer(const char *dir, __u64 cgid)
{
	char d[PATH_MAX];
	int err = steer_dir(dir, cgid, d, sizeof(d), false);

	return err ?: rm_pins(d, 0);
}

/* The cgroup ids with a set under @dir/@sub: as loader__steer_pinned. */
static int steer_ids_in(const char *dir, const char *sub, __u64 *out, size_t max)
{
	char p[PATH_MAX], *end;
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	if (pin_path(p, sizeof(p), dir, "", sub))
		return -ENAMETOOLONG;
	d = opendir(p);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		unsigned long long id = strtoull(e->d_name, &end, 10);

		if (e->d_name[0] < '1' || e->d_name[0] > '9' || *end)
			continue;
		if (n < max)
			out[n] = id;
		n++;
	}
	closedir(d);
	return n > INT_MAX ? INT_MAX : (int)n;
}

int loader__steer_pinned(const char *dir, __u64 *out, size_t max)
{
	return steer_ids_in(dir, STEER_SUB, out, max);
}

int loader__steer_age(const char *dir, __u64 cgid, long *seconds)
{
	char p[PATH_MAX];
	struct stat st;
	int err = steer_dir(dir, cgid, p, sizeof(p), false);

	if (err)
		return err;
	if (stat(p, &st))
		return -errno;
	*seconds = (long)(time(NULL) - st.st_mtime);
	return 0;
}

/* --- judging descriptor uses ----------------------------------------------------- */

/*
 * Hold the set's descriptor-judging lock (flock on the pin directory) while
 * the link is made or removed, so that one process never removes a link
 * another has just found in place. Sets of our own have no one to share
 * with: -1, nothing to unlock.
 */
static int fdj_lock(const struct sbx_loader *l, int how)
{
	int fd;

	if (!l->pin_dir[0])
		return -1;
	fd = open(l->pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && flock(fd, how)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void fdj_unlock(int fd)
{
	if (fd >= 0)
		close(fd);	/* the lock goes with the last descriptor */
}

/* The sandbox that wanted judging is written (or never will be): others may settle again. */
static void fdj_release(struct sbx_loader *l)
{
	fdj_unlock(l->fdj_hold);
	l->fdj_hold = -1;
}

bool loader__fd_judging(const struct sbx_loader *l)
{
	char p[PATH_MAX];

	if (!l->pin_dir[0])
		return l->skel && l->skel->links.fs_file_permission;
	return !pin_path(p, sizeof(p), l->pin_dir, "links", FDJ_NAME) && !access(p, F_OK);
}

/* Attach file_permission, unless it is: for our own set a link we keep, for a pinned one a pinned link. */
static int fdj_attach(struct sbx_loader *l)
{
	char p[PATH_MAX];
	int link, prog, err;

	if (!l->pin_dir[0]) {
		if (l->fdj_left_out)
			return -ENOPKG;
		if (!l->skel || bpf_program__fd(l->skel->progs.fs_file_permission) < 0)
			return -ENOENT;
		if (!l->skel->links.fs_file_permission)
			l->skel->links.fs_file_permission = bpf_program__attach(l->skel->progs.fs_file_permission);
		return l->skel->links.fs_file_permission ? 0 : -errno;
	}
	if (loader__fd_judging(l))
		return 0;
	/* Not pinned when the kernel refused it (a gap the set's loader accepted). */
	if (!l->skel && l->fdj_prog < 0 && !pin_path(p, sizeof(p), l->pin_dir, "progs", FDJ_NAME))
		l->fdj_prog = bpf_obj_get(p);
	prog = l->skel ? bpf_program__fd(l->skel->progs.fs_file_permission) : l->fdj_prog;
	if (prog < 0)
		return -ENOENT;
	err = pin_path(p, sizeof(p), l->pin_dir, "links", FDJ_NAME);
	if (err)
		return err;
	link = bpf_link_create(prog, 0, BPF_LSM_MAC, NULL);
	if (link < 0)
		return -errno;
	err = bpf_obj_pin(link, p) ? -errno : 0;
	close(link);	/* the pin holds it */
	return err;
}

static int fdj_detach(struct sbx_loader *l)
{
	char p[PATH_MAX];

	if (!l->pin_dir[0]) {
		if (l->skel && l->skel->links.fs_file_permission) {
			bpf_link__destroy(l->skel->links.fs_file_permission);
			l->skel->links.fs_file_permission = NULL;
		}
		return 0;
	}
	if (pin_path(p, sizeof(p), l->pin_dir, "links", FDJ_NAME))
		return -ENAMETOOLONG;
	return unlink(p) && errno != ENOENT ? -errno : 0;
}

/* Does any sandbox of the set have its descriptors judged? */
static bool fdj_wanted(struct sbx_loader *l)
{
	struct sbx_sandbox sb;
	__u64 cgid, prev = 0;
	bool first = true;

	while (!loader__next_sandbox(l, first ? NULL : &prev, &cgid, &sb)) {
		if (sb.flags & SBX_SANDBOX_FD_JUDGE)
			return true;
		first = false;
		prev = cgid;
	}
	return false;
}

/*
 * The link goes in some time before the sandbox that wants it is written:
 * until then no other process may find it unwanted and take it away, so
 * the lock stays held until the sandbox entry is written (add_sandbox,
 * replace_sandbox), the attempt settles, or the loader goes.
 */
int loader__fd_judging_on(struct sbx_loader *l)
{
	int err;

	if (l->fdj_hold < 0)
		l->fdj_hold = fdj_lock(l, LOCK_EX);
	err = fdj_attach(l);
	if (err)
		fdj_release(l);
	return err;
}

static int fdj_settle(struct sbx_loader *l, int how)
{
	int lock = l->fdj_hold >= 0 ? l->fdj_hold : fdj_lock(l, how), err = 0;

	l->fdj_hold = -1;
	if (lock < 0 && l->pin_dir[0])
		return -EAGAIN;		/* another process is on its way to a sandbox that wants it */
	if (!fdj_wanted(l))
		err = fdj_detach(l);
	fdj_unlock(lock);
	return err;
}

int loader__fd_judging_settle(struct sbx_loader *l)
{
	return fdj_settle(l, LOCK_EX);
}

int loader__fd_judging_sweep(struct sbx_loader *l)
{
	return fdj_settle(l, LOCK_EX | LOCK_NB);
}

bool loader__adopted(const struct sbx_loader *l)
{
	return !l->skel;
}

/* --- the host agent's view of the maps --------------------------------------- */

__u32 loader__new_policy_id(struct sbx_loader *l)
{
	/* 1 is what a `run` with its own programs uses; shared ids start above it. */
	return __atomic_add_fetch(&l->bss->policy_seq, 1, __ATOMIC_SEQ_CST) + 1;
}

int loader__get_sandbox(struct sbx_loader *l, __u64 cgid, struct sbx_sandbox *sb)
{
	return bpf_map_lookup_elem(map_fd(l, M_SANDBOXES), &cgid, sb) ? -errno : 0;
}

static bool ids_have(const struct cgroup_ids *ids, __u64 id)
{
	for (int i = 0; ids && i < ids->n; i++)
		if (ids->id[i] == id)
			return true;
	return false;
}

int loader__outer_resolver(struct sbx_loader *l, const struct cgroup_ids *above, const struct cgroup_ids *self,
			   __u16 *port4)
{
	struct sbx_sandbox sb;
	int err;

	for (int i = 0; i < above->n; i++) {
		err = loader__get_sandbox(l, above->id[i], &sb);
		if (err == -ENOENT || (!err && !(sb.flags & SBX_SANDBOX_DNS)))
			continue;
		if (err)
			return err;
		if (ids_have(self, above->id[i]))
			return 0;
		/* Between its start and its ports, or after its resolver failed: nothing to ask past it. */
		if (!sb.dns_port4)
			return -EHOSTUNREACH;
		*port4 = sb.dns_port4;
		return 1;
	}
	return 0;
}

/*
 * Switch @cgid to another policy in one map update: no moment without one.
 * Never back to arming: the callers (grant, a resolver's ports) read the
 * entry, change it and write it whole, and the cgroup's first exec may
 * have cleared SBX_SANDBOX_ARMING in between; writing the flag back would
 * take a sandbox in force out of it until the next exec. Without the flag
 * an entry still arming goes in force now, which at worst stops a
 * container from starting (fail closed). Only loader__add_sandbox arms.
 */
int loader__replace_sandbox(struct sbx_loader *l, __u64 cgid, const struct sbx_sandbox *sb)
{
	struct sbx_sandbox v = *sb;

	v.flags &= ~SBX_SANDBOX_ARMING;
	if (bpf_map_update_elem(map_fd(l, M_SANDBOXES), &cgid, &v, BPF_EXIST))
		return -errno;
	verdicts_changed(l);
	fdj_release(l);
	return 0;
}

int loader__next_sandbox(struct sbx_loader *l, const __u64 *prev, __u64 *cgid, struct sbx_sandbox *sb)
{
	if (bpf_map_get_next_key(map_fd(l, M_SANDBOXES), prev, cgid))
		return -errno;
	return loader__get_sandbox(l, *cgid, sb);
}

/*
 * The programs run under rcu_read_lock(); membarrier(MEMBARRIER_CMD_GLOBAL)
 * waits for an RCU grace period (kernel/sched/membarrier.c) when more than
 * one CPU is online. On one CPU it returns at once: a program preempted
 * mid-call (7.x's PREEMPT_LAZY) is not waited for.
 */
int loader__wait_judging(void)
{
	return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) ? -errno : 0;
}

int loader__purge_policy(struct sbx_loader *l, __u32 policy_id)
{
	int err = map_purge(map_fd(l, M_FS_RULES), sizeof(struct sbx_fs_key),
			    offsetof(struct sbx_fs_key, policy_id), &policy_id, sizeof(policy_id));
	int err2 = map_purge(map_fd(l, M_NET_RULES), sizeof(struct sbx_net_key),
			     offsetof(struct sbx_net_key, policy_id), &policy_id, sizeof(policy_id));

	verdicts_changed(l);
	return err ?: err2;
}

int loader__purge_dns(struct sbx_loader *l, __u64 cgid)
{
	return map_purge(map_fd(l, M_DNS_ALLOW), sizeof(struct sbx_dns_key),
			 offsetof(struct sbx_dns_key, sandbox_cgid), &cgid, sizeof(cgid));
}

/* Entries in use and capacity of one map, for `status`. Counting walks the keys. */
static int map_fill(int fd, __u32 *used, __u32 *max)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char key[64], next[64];
	bool first = true;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*max = info.max_entries;
	*used = 0;
	if (info.key_size > sizeof(key))
		return -E2BIG;
	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, info.key_size);
		++*used;
	}
	return 0;
}

int loader__fill(struct sbx_loader *l, enum loader_fill which, __u32 *used, __u32 *max)
{
	static const enum loader_map m[] = {
		[LOADER_FILL_SANDBOXES] = M_SANDBOXES, [LOADER_FILL_FS_RULES] = M_FS_RULES,
		[LOADER_FILL_NET_RULES] = M_NET_RULES, [LOADER_FILL_DNS] = M_DNS_ALLOW,
	};

	if ((unsigned)which >= sizeof(m) / sizeof(m[0]))
		return -EINVAL;
	return map_fill(map_fd(l, m[which]), used, max);
}
