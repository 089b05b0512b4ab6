// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hooks.c — match the programs' recorded hook prototypes against a kernel's
 * BTF (hooks.h), and say what each hook protects.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "hooks.h"
#include "util.h"

#define PROTO_PREFIX	"sbx_hook__"	/* bpf/sandbox.h SBX_LSM */
#define KERNEL_PREFIX	"bpf_lsm_"	/* the kernel's function for each LSM hook */

/*
 * What a sandbox could do if the hook's program is missing. Every program
 * section of the object has a line (a host test checks it), so a refusal
 * always says what is at stake.
 */
static const struct {
	const char *hook;
	const char *protects;
	bool optional;	/* absent on some kernels, whose other hooks then see the same calls */
} hook_table[] = {
	/* files (fs.bpf.c) */
	{ "file_open", "opens would not be judged: denyRead files could be read, files outside allowWrite written", false },
	{ "file_receive", "descriptors passed in over unix sockets or taken with pidfd_getfd would not be judged", false },
	{ "file_permission", "reads and writes through inherited descriptors, or ones opened before a policy change, would not be judged", false },
	{ "path_mknod", "files and device nodes could be created outside allowWrite", false },
	{ "path_mkdir", "directories could be created outside allowWrite", false },
	{ "path_rmdir", "directories could be removed outside allowWrite", false },
	{ "path_unlink", "files could be deleted outside allowWrite", false },
	{ "path_symlink", "symlinks could be created outside allowWrite", false },
	{ "path_link", "hard links could give read- or write-denied files new names", false },
	{ "path_rename", "files could be renamed or moved out of and into protected places", false },
	{ "path_truncate", "files outside allowWrite could be truncated (truncate, O_TRUNC)", false },
	{ "file_truncate", "files outside allowWrite could be truncated through a descriptor (ftruncate)", true },
	{ "path_chmod", "file modes could be changed outside allowWrite", false },
	{ "path_chown", "file owners could be changed outside allowWrite", false },
	{ "inode_setattr", "file times could be changed outside allowWrite (utimes)", false },
	{ "inode_setxattr", "extended attributes could be set outside allowWrite", false },
	{ "inode_removexattr", "extended attributes could be removed outside allowWrite", false },
	{ "inode_set_acl", "POSIX ACLs could be set outside allowWrite", true },
	{ "inode_remove_acl", "POSIX ACLs could be removed outside allowWrite", true },
	{ "sb_mount", "a sandbox with CAP_SYS_ADMIN could mount, giving files new paths", false },
	{ "move_mount", "a sandbox could move mounts, giving files new paths", false },
	{ "sb_umount", "a sandbox could unmount file systems", false },
	{ "sb_pivotroot", "a sandbox could pivot its root", false },
	{ "userns_create", "a sandbox could create user namespaces (and mount inside them)", false },
	{ "file_ioctl", "chattr, btrfs snapshots, TIOCSTI typing into the terminal and socket-owner ioctls would not be judged", false },
	/* network (net.bpf.c) */
	{ "socket_connect", "connections would not be judged: any address could be reached", false },
	{ "socket_sendmsg", "datagrams could be sent to any address", false },
	{ "socket_bind", "sockets could be bound to ports and abstract unix names without allowLocalBinding", false },
	{ "socket_listen", "sockets could listen without allowLocalBinding", false },
	{ "socket_create", "raw and packet sockets could be created", false },
	{ "socket_post_create", "SCTP and other protocols the connect checks do not see could be used", false },
	{ "unix_stream_connect", "any unix stream socket could be connected to", false },
	{ "unix_may_send", "datagrams could be sent to any unix socket", false },
	{ "cgroup/connect4", "allowedDomains: IPv4 DNS would not be steered to sbx-bpf's resolver", false },
	{ "cgroup/connect6", "allowedDomains: IPv6 DNS would not be steered to sbx-bpf's resolver", false },
	{ "cgroup/sendmsg4", "allowedDomains: IPv4 DNS datagrams would not be steered", false },
	{ "cgroup/sendmsg6", "allowedDomains: IPv6 DNS datagrams would not be steered", false },
	{ "cgroup/recvmsg4", "allowedDomains: IPv4 DNS answers would not come from the address asked", false },
	{ "cgroup/recvmsg6", "allowedDomains: IPv6 DNS answers would not come from the address asked", false },
	{ "cgroup/getpeername4", "allowedDomains: steered IPv4 sockets would show the resolver as their peer", false },
	{ "cgroup/getpeername6", "allowedDomains: steered IPv6 sockets would show the resolver as their peer", false },
	/* tasks and the kernel (task.bpf.c) */
	{ "ptrace_access_check", "processes outside could be traced, their memory and /proc files read", false },
	{ "ptrace_traceme", "a parent outside could be made the sandbox's tracer", false },
	{ "task_kill", "processes outside could be signalled", false },
	{ "task_setnice", "processes outside could be reniced", false },
	{ "task_setioprio", "the I/O priority of processes outside could be changed", false },
	{ "task_setscheduler", "the scheduling of processes outside could be changed", false },
	{ "task_setrlimit", "the limits of processes outside could be changed (prlimit)", false },
	{ "task_movememory", "pages of processes outside could be migrated", false },
	{ "file_fcntl", "F_SETOWN could aim SIGIO (any signal, with F_SETSIG) at processes outside", false },
	{ "task_alloc", "clone3(CLONE_INTO_CGROUP) could start a child outside the sandbox's cgroup", false },
	{ "bpf", "a sandbox with CAP_BPF could use bpf(): load programs, read and write maps, ours included", false },
	{ "kernel_module_request", "the kernel could load modules on the sandbox's behalf", false },
	{ "kernel_read_file", "a root sandbox could load modules, kexec images and firmware from files", false },
	{ "kernel_load_data", "a root sandbox could load modules and kexec images from memory", false },
	{ "perf_event_open", "a sandbox allowed by perf_event_paranoid could open perf events", false },
	{ "capable", "a root sandbox would keep CAP_SYS_ADMIN, CAP_NET_ADMIN and the other host-administration capabilities", false },
};

static int table_index(const char *hook)
{
	for (size_t i = 0; i < ARRAY_SIZE(hook_table); i++)
		if (!strcmp(hook_table[i].hook, hook))
			return (int)i;
	return -1;
}

const char *hooks__protection(const char *hook)
{
	int i = table_index(hook);

	return i >= 0 ? hook_table[i].protects : "part of the enforcement would be missing";
}

bool hooks__known(const char *hook)
{
	return table_index(hook) >= 0;
}

bool hooks__optional(const char *hook)
{
	int i = table_index(hook);

	return i >= 0 && hook_table[i].optional;
}

bool hooks__has_gap(const struct hook_gaps *g, const char *hook)
{
	for (unsigned int i = 0; i < g->nr; i++)
		if (!strcmp(g->g[i].hook, hook))
			return true;
	return false;
}

void hooks__add_gap(struct hook_gaps *g, const char *hook, const char *fmt, ...)
{
	struct hook_gap *x;
	va_list ap;

	if (hooks__has_gap(g, hook))
		return;
	if (g->nr >= HOOK_GAPS_MAX) {
		g->dropped++;
		return;
	}
	x = &g->g[g->nr++];
	snprintf(x->hook, sizeof(x->hook), "%s", hook);
	va_start(ap, fmt);
	vsnprintf(x->reason, sizeof(x->reason), fmt, ap);
	va_end(ap);
}

/* @id past modifiers and typedefs. */
static const struct btf_type *skip_mods(const struct btf *btf, __u32 id, __u32 *res_id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t))) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (res_id)
		*res_id = id;
	return t;
}

/* A union, or a forward declaration of one (its kind flag). */
static bool is_union(const struct btf_type *t)
{
	return btf_is_union(t) || (btf_is_fwd(t) && btf_kflag(t));
}

static bool is_scalar(const struct btf_type *t)
{
	return btf_is_int(t) || btf_is_enum(t) || btf_is_enum64(t);
}

/*
 * Does argument type @a (the program's) fit @b (the kernel's)? Scalars by
 * size (what the program's read of the slot depends on); a struct the
 * kernel passes by value in one 8-byte slot (kuid_t) is a __u64 to the
 * program; pointers by what they point to: a struct or union of the same
 * name, a scalar of the same size; `void *` is the program saying it does
 * not read the argument, and fits any pointer.
 */
static bool arg_fits(const struct btf *ba, __u32 a, const struct btf *bb, __u32 b)
{
	const struct btf_type *ta = skip_mods(ba, a, NULL), *tb = skip_mods(bb, b, NULL);

	if (!ta || !tb)
		return false;
	if (is_scalar(ta) && btf_is_composite(tb))
		return ta->size == 8 && tb->size <= 8;
	if (is_scalar(ta))
		return is_scalar(tb) && ta->size == tb->size;
	if (!btf_is_ptr(ta) || !btf_is_ptr(tb))
		return false;
	ta = skip_mods(ba, ta->type, NULL);
	tb = skip_mods(bb, tb->type, NULL);
	if (!ta || !tb)
		return false;
	if (btf_is_void(ta))
		return true;
	if (is_scalar(ta))
		return is_scalar(tb) && ta->size == tb->size;
	if (btf_is_composite(ta) || btf_is_fwd(ta))
		return (btf_is_composite(tb) || btf_is_fwd(tb)) && is_union(ta) == is_union(tb) &&
		       !strcmp(btf__name_by_offset(ba, ta->name_off), btf__name_by_offset(bb, tb->name_off));
	return btf_kind(ta) == btf_kind(tb);
}

static int func_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hook_func *)a)->hook, ((const struct hook_func *)b)->hook);
}

int hooks__index(const struct btf *kernel, struct hook_index *ix)
{
	__u32 n = btf__type_cnt(kernel), cap = 0;
	struct hook_func *f;

	ix->nr = 0;
	ix->f = NULL;
	ix->rdonly_cast = 0;
	for (__u32 id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(kernel, id);
		const char *name;

		if (!btf_is_func(t))
			continue;
		name = btf__name_by_offset(kernel, t->name_off);
		if (name && !ix->rdonly_cast && !strcmp(name, "bpf_rdonly_cast"))
			ix->rdonly_cast = (int)id;
		/* A longer name is no hook of ours: hook_pick.hook has HOOK_NAME_MAX. */
		if (!name || strncmp(name, KERNEL_PREFIX, strlen(KERNEL_PREFIX)) ||
		    strlen(name) - strlen(KERNEL_PREFIX) >= HOOK_NAME_MAX)
			continue;
		if (ix->nr == cap) {
			cap = cap ? 2 * cap : 256;
			f = realloc(ix->f, cap * sizeof(*f));
			if (!f) {
				hooks__index_free(ix);
				return -ENOMEM;
			}
			ix->f = f;
		}
		f = &ix->f[ix->nr++];
		snprintf(f->hook, sizeof(f->hook), "%s", name + strlen(KERNEL_PREFIX));
		f->func = (int)id;
	}
	if (ix->nr)
		qsort(ix->f, ix->nr, sizeof(*ix->f), func_cmp);
	return 0;
}

int hooks__index_func(const struct hook_index *ix, const char *hook)
{
	struct hook_func key;
	const struct hook_func *f;

	if (strlen(hook) >= sizeof(key.hook))
		return -ENOENT;
	snprintf(key.hook, sizeof(key.hook), "%s", hook);
	f = ix->nr ? bsearch(&key, ix->f, ix->nr, sizeof(*ix->f), func_cmp) : NULL;
	return f ? f->func : -ENOENT;
}

void hooks__index_free(struct hook_index *ix)
{
	if (!ix)
		return;
	free(ix->f);
	ix->f = NULL;
	ix->nr = 0;
	ix->rdonly_cast = 0;
}

/* The FUNC_PROTO id of kernel hook @hook (found in @ix, an index of @kernel); <= 0: none. */
static int kernel_proto(const struct btf *kernel, const struct hook_index *ix, const char *hook)
{
	const struct btf_type *t;
	int id = hooks__index_func(ix, hook);

	if (id <= 0)
		return -ENOENT;
	t = btf__type_by_id(kernel, id);
	return t && btf_is_func_proto(btf__type_by_id(kernel, t->type)) ? (int)t->type : -EINVAL;
}

/* The FUNC_PROTO id of the arguments program @prog recorded (sbx_hook__<prog>); <= 0: none. */
static int recorded_proto(const struct btf *obj_btf, const char *prog)
{
	char name[128];
	const struct btf_type *t;
	__u32 id;
	int var;

	snprintf(name, sizeof(name), PROTO_PREFIX "%s", prog);
	var = btf__find_by_name_kind(obj_btf, name, BTF_KIND_VAR);
	if (var <= 0)
		return -ENOENT;
	/* const pointer to the function type */
	t = skip_mods(obj_btf, btf__type_by_id(obj_btf, var)->type, NULL);
	if (!t || !btf_is_ptr(t))
		return -EINVAL;
	t = skip_mods(obj_btf, t->type, &id);
	return t && btf_is_func_proto(t) ? (int)id : -EINVAL;
}

static bool protos_fit(const struct btf *ba, int a, const struct btf *bb, int b)
{
	const struct btf_type *ta = btf__type_by_id(ba, a), *tb = btf__type_by_id(bb, b);
	const struct btf_param *pa = btf_params(ta), *pb = btf_params(tb);

	if (btf_vlen(ta) != btf_vlen(tb))
		return false;
	for (int i = 0; i < btf_vlen(ta); i++)
		if (!arg_fits(ba, pa[i].type, bb, pb[i].type))
			return false;
	return true;
}

bool hooks__has_record(const struct btf *obj_btf, const char *prog)
{
	return recorded_proto(obj_btf, prog) > 0;
}

/* Whether the arguments program @prog recorded in @obj_btf are those of the kernel's FUNC_PROTO @kp. */
static bool prog_fits(const struct btf *obj_btf, const char *prog, const struct btf *kernel, int kp)
{
	int a = recorded_proto(obj_btf, prog);

	return a > 0 && kp > 0 && protos_fit(obj_btf, a, kernel, kp);
}

/* One type as C would spell it (no declarator names): "struct file *", "int". */
static void type_str(const struct btf *btf, __u32 id, char *buf, size_t sz)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const char *name;
	char inner[96];

	if (!id || !t) {
		snprintf(buf, sz, "void");
		return;
	}
	name = btf__name_by_offset(btf, t->name_off);
	if (btf_is_ptr(t)) {
		type_str(btf, t->type, inner, sizeof(inner));
		snprintf(buf, sz, "%s *", inner);
	} else if (btf_is_const(t) || btf_is_volatile(t)) {
		type_str(btf, t->type, inner, sizeof(inner));
		snprintf(buf, sz, "%s %s", btf_is_const(t) ? "const" : "volatile", inner);
	} else if (btf_is_mod(t)) {
		type_str(btf, t->type, buf, sz);
	} else if (btf_is_composite(t) || btf_is_fwd(t)) {
		snprintf(buf, sz, "%s %s", is_union(t) ? "union" : "struct", name);
	} else if (btf_is_enum(t) || btf_is_enum64(t)) {
		snprintf(buf, sz, "enum %s", name);
	} else if (btf_is_func_proto(t)) {
		snprintf(buf, sz, "function");
	} else {
		snprintf(buf, sz, "%s", name && *name ? name : "?");
	}
}

void hooks__proto_str(const struct btf *btf, int id, char *buf, size_t sz)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_param *p;
	size_t len;
	char one[96];

	len = (size_t)snprintf(buf, sz, "(");
	if (!t || !btf_is_func_proto(t)) {
		snprintf(buf, sz, "(?)");
		return;
	}
	p = btf_params(t);
	for (int i = 0; i < btf_vlen(t) && len < sz; i++) {
		type_str(btf, p[i].type, one, sizeof(one));
		len += (size_t)snprintf(buf + len, sz - len, "%s%s", i ? ", " : "", one);
	}
	if (len < sz)
		snprintf(buf + len, sz - len, ")");
}

/* The pick for @hook in @picks, made when new. */
static struct hook_pick *pick_for(struct hook_picks *picks, const char *hook)
{
	struct hook_pick *p;

	for (unsigned int i = 0; i < picks->nr; i++)
		if (!strcmp(picks->p[i].hook, hook))
			return &picks->p[i];
	if (picks->nr >= HOOK_PICKS_MAX)
		return NULL;
	p = &picks->p[picks->nr++];
	memset(p, 0, sizeof(*p));
	snprintf(p->hook, sizeof(p->hook), "%s", hook);
	p->fit = HOOK_NO_VARIANT;
	return p;
}

const char *hooks__lsm_hook(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);

	return sec && !strncmp(sec, "lsm/", 4) ? sec + 4 : NULL;
}

const char *hooks__prog_hook(const struct bpf_program *prog)
{
	const char *hook = hooks__lsm_hook(prog);

	return hook ? hook : bpf_program__section_name(prog);
}

int hooks__select(struct bpf_object *obj, const struct btf *kernel, const struct hook_index *ix,
		  struct hook_picks *picks, struct hook_gaps *gaps)
{
	const struct btf *obj_btf = bpf_object__btf(obj);
	struct hook_picks local = { .nr = 0 };
	struct bpf_program *prog;
	struct hook_pick *p;

	if (!obj_btf)
		return -ENODATA;
	if (!picks)
		picks = &local;
	picks->nr = 0;
	bpf_object__for_each_program(prog, obj) {
		const char *hook = hooks__lsm_hook(prog), *name = bpf_program__name(prog);
		int kp;

		if (!hook || !(p = pick_for(picks, hook)))
			continue;
		p->variants++;
		kp = kernel_proto(kernel, ix, hook);
		if (kp > 0 && !p->kernel_proto[0])
			hooks__proto_str(kernel, kp, p->kernel_proto, sizeof(p->kernel_proto));
		if (kp <= 0)
			p->fit = hooks__optional(hook) ? HOOK_ABSENT_OPTIONAL : HOOK_ABSENT;
		/* The first variant that fits is kept; any further one stays unloaded. */
		if (kp > 0 && p->fit != HOOK_FIT && prog_fits(obj_btf, name, kernel, kp)) {
			p->fit = HOOK_FIT;
			snprintf(p->prog, sizeof(p->prog), "%s", name);
			continue;
		}
		bpf_program__set_autoload(prog, false);
	}
	for (unsigned int i = 0; gaps && i < picks->nr; i++) {
		p = &picks->p[i];
		if (p->fit == HOOK_ABSENT)
			hooks__add_gap(gaps, p->hook, "this kernel has no %s hook", p->hook);
		else if (p->fit == HOOK_NO_VARIANT)
			hooks__add_gap(gaps, p->hook, "no program variant takes this kernel's arguments %s",
				       p->kernel_proto);
	}
	return 0;
}

unsigned int hooks__unaccepted(const struct hook_gaps *g, const char *const *accept, char *out, size_t sz)
{
	unsigned int n = 0;
	size_t len = 0;

	if (sz)
		out[0] = '\0';
	for (unsigned int i = 0; i < g->nr; i++) {
		bool ok = false;

		for (size_t k = 0; accept && accept[k] && !ok; k++)
			ok = !strcmp(accept[k], g->g[i].hook);
		if (ok)
			continue;
		n++;
		if (len < sz)
			len += (size_t)snprintf(out + len, sz - len, "%s%s", len ? "," : "", g->g[i].hook);
	}
	/* Gaps past what the list holds are unknown by name: never accepted. */
	if (g->dropped) {
		n += g->dropped;
		if (len < sz)
			snprintf(out + len, sz - len, "%s%u more", len ? "," : "", g->dropped);
	}
	return n;
}

void hooks__print_gaps(const struct hook_gaps *g, FILE *out, const char *indent)
{
	for (unsigned int i = 0; i < g->nr; i++)
		fprintf(out, "%s%s: %s\n%s    without it: %s\n", indent, g->g[i].hook, g->g[i].reason, indent,
			hooks__protection(g->g[i].hook));
	if (g->dropped)
		fprintf(out, "%s… and %u more\n", indent, g->dropped);
}

json_t *hooks__gaps_json(const struct hook_gaps *g)
{
	json_t *a = json_array();

	for (unsigned int i = 0; a && i < g->nr; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "hook", g->g[i].hook, "reason",
						   g->g[i].reason, "protection", hooks__protection(g->g[i].hook)));
	return a;
}

void hooks__gaps_line(const struct hook_gaps *g, char *buf, size_t sz)
{
	size_t len = 0;

	if (sz)
		buf[0] = '\0';
	for (unsigned int i = 0; i < g->nr && len < sz; i++)
		len += (size_t)snprintf(buf + len, sz - len, "%s%s (%s)", i ? "; " : "", g->g[i].hook,
					hooks__protection(g->g[i].hook));
	if (g->dropped && len < sz)
		snprintf(buf + len, sz - len, "; %u more", g->dropped);
}

void hooks__gaps_names(const struct hook_gaps *g, char *buf, size_t sz)
{
	size_t len = 0;

	if (sz)
		buf[0] = '\0';
	for (unsigned int i = 0; i < g->nr && len < sz; i++)
		len += (size_t)snprintf(buf + len, sz - len, "%s%s", i ? "," : "", g->g[i].hook);
	if (g->dropped && len < sz)
		snprintf(buf + len, sz - len, "%s%u more", len ? "," : "", g->dropped);
}
