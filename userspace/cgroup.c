// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdint.h>
#include <time.h>
#include <linux/magic.h>
#include <linux/sched.h>

#include "cgroup.h"
#include "cgstat.h"
#include "sbx_abi.h"
#include "util.h"

const char *cgroup_layout_name(enum cgroup_layout l)
{
	switch (l) {
	case CGROUP_LEGACY: return "legacy (v1 only)";
	case CGROUP_HYBRID: return "hybrid (v1 controllers + empty v2)";
	case CGROUP_UNIFIED: return "unified (v2)";
	default: return "none";
	}
}

enum cgroup_layout cgroup_parse_layout(const char *mountinfo, char *v2_mount, size_t sz)
{
	bool v1 = false, v2_at_root = false;
	const char *line = mountinfo;
	char mnt[PATH_MAX], fstype[64];

	if (sz)
		v2_mount[0] = '\0';
	while (line && *line) {
		const char *sep = strstr(line, " - ");
		const char *eol = strchr(line, '\n');

		/* fields: id parent dev root MOUNTPOINT opts... - FSTYPE src opts */
		if (sep && (!eol || sep < eol) &&
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 &&
		    sscanf(sep + 3, "%63s", fstype) == 1) {
			if (!strcmp(fstype, "cgroup")) {
				v1 = true;
			} else if (!strcmp(fstype, "cgroup2") && !v2_at_root) {
				/* The first one, but /sys/fs/cgroup wherever it is: as unified_at_default(). */
				v2_at_root = !strcmp(mnt, "/sys/fs/cgroup");
				if (!v2_mount[0] || v2_at_root)
					snprintf(v2_mount, sz, "%s", mnt);
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	if (v2_mount[0] && !v1 && v2_at_root)
		return CGROUP_UNIFIED;
	if (v2_mount[0] && v1)
		return CGROUP_HYBRID;
	if (v1)
		return CGROUP_LEGACY;
	/* v2 mounted somewhere unusual and nothing else: usable as unified. */
	return v2_mount[0] ? CGROUP_UNIFIED : CGROUP_NONE;
}

/*
 * The usual host, told without mountinfo: cgroup2 mounted at
 * /sys/fs/cgroup and no v1 hierarchy. Each v1 hierarchy, wherever it is
 * mounted, gives this process a line of its own in /proc/self/cgroup; the
 * unified one alone is "0::PATH". Anything else (or a path too long for
 * the buffer) is left to mountinfo.
 */
bool cgroup_default_unified(long f_type, const char *self_cgroup, int n)
{
	return f_type == CGROUP2_SUPER_MAGIC && n > 3 && !strncmp(self_cgroup, "0::", 3) &&
	       strchr(self_cgroup, '\n') == self_cgroup + n - 1;
}

static bool unified_at_default(void)
{
	struct statfs fs;
	char buf[512];

	if (statfs("/sys/fs/cgroup", &fs) || fs.f_type != CGROUP2_SUPER_MAGIC)
		return false;
	return cgroup_default_unified((long)fs.f_type, buf, read_file("/proc/self/cgroup", buf, sizeof(buf)));
}

/*
 * A unified hierarchy, once found, is remembered for the process: a run
 * asks twice (its controllers, its cgroup), and reading and parsing
 * mountinfo costs it 0.1 M instructions. Any other answer is asked again:
 * a daemon started before cgroup2 was mounted must see it.
 */
enum cgroup_layout cgroup_layout(char *v2_mount, size_t sz)
{
	static char buf[1 << 16], unified[PATH_MAX];
	enum cgroup_layout l;

	if (!unified[0] && unified_at_default())
		snprintf(unified, sizeof(unified), "/sys/fs/cgroup");
	if (unified[0]) {
		snprintf(v2_mount, sz, "%s", unified);
		return CGROUP_UNIFIED;
	}
	if (read_file("/proc/self/mountinfo", buf, sizeof(buf)) < 0) {
		if (sz)
			v2_mount[0] = '\0';
		return CGROUP_NONE;
	}
	l = cgroup_parse_layout(buf, unified, sizeof(unified));
	if (sz)
		snprintf(v2_mount, sz, "%s", unified);
	if (l != CGROUP_UNIFIED)
		unified[0] = '\0';
	return l;
}

int cgroup_id_of(const char *path, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 cgid;
	} h = { .fh.handle_bytes = sizeof(__u64) };
	int mount_id;
	struct stat st;

	/* kernfs file handles carry the cgroup id; st_ino matches it on 64-bit. */
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) == 0) {
		memcpy(id, h.fh.f_handle, sizeof(*id));
		return 0;
	}
	if (stat(path, &st))
		return -errno;
	*id = st.st_ino;
	return 0;
}

/* cgroup_ancestor_ids into @ids[@max]: how many, or -errno. */
static int ancestors(const char *path, __u64 *ids, int max)
{
	char p[PATH_MAX], *slash;
	struct statfs fs;
	int n = 0, err;

	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	while (n < max && (slash = strrchr(p, '/')) && slash != p) {
		*slash = '\0';
		/* Past the mount's root the ids are another file system's inodes. */
		if (statfs(p, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC)
			break;
		err = cgroup_id_of(p, &ids[n]);
		if (err)
			return err;
		n++;
	}
	return n;
}

int cgroup_ancestor_ids(const char *path, struct cgroup_ids *out)
{
	out->n = ancestors(path, out->id, SBX_CGROUP_MAX_LEVELS);
	return out->n < 0 ? out->n : 0;
}

int cgroup_self_ids(struct cgroup_ids *out)
{
	char v2[PATH_MAX], text[4096], rel[PATH_MAX], path[PATH_MAX * 2];
	int n, err;

	out->n = 0;
	if (cgroup_layout(v2, sizeof(v2)) != CGROUP_UNIFIED)
		return -ENOTSUP;
	err = read_file("/proc/self/cgroup", text, sizeof(text));
	if (err < 0)
		return err;
	err = cgstat_parse_self_cgroup(text, rel, sizeof(rel));
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s%s", v2, strcmp(rel, "/") ? rel : "");
	err = cgroup_id_of(path, &out->id[0]);
	if (err)
		return err;
	n = ancestors(path, out->id + 1, SBX_CGROUP_MAX_LEVELS - 1);
	if (n < 0)
		return n;
	out->n = n + 1;
	return 0;
}

int cgroup_level(const char *v2, const char *path)
{
	size_t n = strlen(v2);
	int level = 0;

	while (n && v2[n - 1] == '/')
		n--;	/* "/": the mount is the file system's root */
	if (strncmp(path, v2, n) || (path[n] && path[n] != '/'))
		return -EXDEV;
	for (const char *p = path + n; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			level++;
	return level;
}

#define FILEID_KERNFS	0xfe	/* linux/exportfs.h: a kernfs node by its 64-bit id */

int cgroup_id_alive(int mount_fd, __u64 id)
{
	struct {
		struct file_handle fh;
		__u64 cgid;
	} h = { .fh.handle_bytes = sizeof(__u64), .fh.handle_type = FILEID_KERNFS };
	int fd;

	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(mount_fd, &h.fh, O_PATH | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == ESTALE ? 0 : -errno;
}

static const char *const controller_names[CGROUP_CTRL__COUNT] = { "cpu", "memory", "io", "pids" };

const char *cgroup_controller_name(unsigned bit_index)
{
	return bit_index < CGROUP_CTRL__COUNT ? controller_names[bit_index] : "?";
}

/* Controller names listed in @text (cgroup.controllers), as bits. */
static unsigned controllers_in(const char *text)
{
	unsigned mask = 0;
	char buf[512], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", text);
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		for (unsigned i = 0; i < CGROUP_CTRL__COUNT; i++)
			if (!strcmp(tok, controller_names[i]))
				mask |= 1u << i;
	return mask;
}

/* The controllers listed in @dir/@file (cgroup.controllers, cgroup.subtree_control). */
static int controllers_listed(const char *dir, const char *file, unsigned *mask)
{
	char path[PATH_MAX + 32], buf[512];
	int n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	*mask = controllers_in(buf);
	return 0;
}

int cgroup_controllers_of(const char *dir, unsigned *mask)
{
	return controllers_listed(dir, "cgroup.controllers", mask);
}

void cgroup_controller_list(unsigned ctrl, char sign, char *buf, size_t sz)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < CGROUP_CTRL__COUNT && len < sz; i++)
		if (ctrl & (1u << i))
			len += snprintf(buf + len, sz - len, "%s%c%s", len ? " " : "", sign,
					controller_names[i]);
}

int cgroup_subtree_control(const char *dir, unsigned ctrl, bool enable)
{
	char path[PATH_MAX + 32], list[128];

	cgroup_controller_list(ctrl, enable ? '+' : '-', list, sizeof(list));
	if (!list[0])
		return 0;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	/* One write: the kernel checks every name before it changes any. */
	return write_file(path, list);
}

int cgroup_available_controllers(unsigned *mask)
{
	char v2[PATH_MAX];

	if (cgroup_layout(v2, sizeof(v2)) != CGROUP_UNIFIED)
		return -ENOTSUP;
	return cgroup_controllers_of(v2, mask);
}

/*
 * Enable @ctrl for the children of @dir. A cgroup holding processes cannot
 * have controllers for its children (the no-internal-process rule; the
 * cgroup2 root is exempt): its processes move to a leaf child first, as
 * systemd does for delegated subtrees.
 */
static int enable_controllers(const char *dir, unsigned ctrl)
{
	char path[PATH_MAX + 64], want[128] = "", procs[4096], leaf[PATH_MAX + 32];
	unsigned on;
	int err;

	/*
	 * On already (every run after the first): no write. Even one that
	 * changes nothing takes cgroup_mutex and first waits for every offline
	 * css below @dir to drain (a run's memory css outlives its rmdir), a
	 * walk of the whole subtree; the read takes neither.
	 */
	if (!controllers_listed(dir, "cgroup.subtree_control", &on) && (on & ctrl) == ctrl)
		return 0;
	for (unsigned i = 0; i < CGROUP_CTRL__COUNT; i++)
		if (ctrl & (1u << i))
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "+%s ",
				 controller_names[i]);
	if (!want[0])
		return 0;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	err = write_file(path, want);
	if (err != -EBUSY)
		return err;
	snprintf(leaf, sizeof(leaf), "%s/sbx-bpf-leaf", dir);
	if (mkdir(leaf, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (read_file(path, procs, sizeof(procs)) < 0)
		return -EBUSY;
	snprintf(leaf, sizeof(leaf), "%s/sbx-bpf-leaf/cgroup.procs", dir);
	for (char *tok = strtok(procs, "\n"); tok; tok = strtok(NULL, "\n"))
		write_file(leaf, tok);	/* a process may exit meanwhile */
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	return write_file(path, want);
}

int cgroup_sbx_root(const char *v2, char *out, size_t sz, bool *delegated)
{
	const char *env = getenv("SBX_CGROUP_ROOT");
	char real[PATH_MAX];
	size_t n = strlen(v2);

	*delegated = env && env[0];
	if (!*delegated)
		return (size_t)snprintf(out, sz, "%s/%s", v2, SBX_CGROUP_ROOT_NAME) < sz ? 0 : -ENAMETOOLONG;
	if (env[0] != '/' || !realpath(env, real))
		return -EINVAL;
	if (strncmp(real, v2, n) || real[n] != '/')
		return -EXDEV;	/* not a cgroup below the cgroup2 mount */
	return (size_t)snprintf(out, sz, "%s", real) < sz ? 0 : -ENAMETOOLONG;
}

int cgroup_sbx_root_open(char *out, size_t sz, __u64 *id)
{
	char v2[PATH_MAX];
	bool delegated;
	int fd, err;

	if (cgroup_layout(v2, sizeof(v2)) != CGROUP_UNIFIED)
		return -ENOTSUP;
	err = cgroup_sbx_root(v2, out, sz, &delegated);
	if (err)
		return err;
	if (!delegated && mkdir(out, 0755) && errno != EEXIST)
		return -errno;
	fd = open(out, O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = cgroup_id_of(out, id);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int cgroup_create(const char *name, unsigned ctrl, struct sbx_cgroup *cg)
{
	bool delegated;
	char v2[PATH_MAX], root[PATH_MAX], path[PATH_MAX];
	int err;

	/* cg->path is set only once the cgroup is ours, so destroy never touches another's. */
	cg->path[0] = '\0';
	cg->fd = -1;
	cg->root_fd = -1;
	if (cgroup_layout(v2, sizeof(v2)) != CGROUP_UNIFIED)
		return -ENOTSUP;
	err = cgroup_sbx_root(v2, root, sizeof(root), &delegated);
	if (err)
		return err;
	/* A sandbox below the deepest level the programs walk to would judge no task below it. */
	if (cgroup_level(v2, root) >= SBX_CGROUP_DEEPEST)
		return -EMLINK;
	/* A delegated root is someone else's to set up above; ours we make. */
	if (!delegated) {
		err = enable_controllers(v2, ctrl);
		if (err)
			return err;
		if (mkdir(root, 0755) && errno != EEXIST)
			return -errno;
	}
	err = enable_controllers(root, ctrl);
	if (err)
		return err;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, name) >= sizeof(path))
		return -ENAMETOOLONG;
	if (mkdir(path, 0755))
		return -errno;	/* e.g. EEXIST: a live sandbox of that name */
	cg->fd = open(path, O_DIRECTORY | O_CLOEXEC);
	err = cg->fd < 0 ? -errno : cgroup_id_of(path, &cg->id);
	if (err) {
		if (cg->fd >= 0)
			close(cg->fd);
		cg->fd = -1;
		rmdir(path);
		return err;
	}
	cg->root_fd = open(root, O_DIRECTORY | O_CLOEXEC);	/* optional: a fast path only */
	if (cgroup_id_of(root, &cg->root_id))
		cg->root_id = 0;	/* likewise: a run then steers its own DNS */
	cg->delegated = delegated;
	memcpy(cg->path, path, sizeof(path));
	return 0;
}

int cgroup_write(const struct sbx_cgroup *cg, const char *file, const char *value)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", cg->path, file);
	return write_file(p, value);
}

int cgroup_read(const struct sbx_cgroup *cg, const char *file, char *buf, size_t sz)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", cg->path, file);
	return read_file(p, buf, sz);
}

#ifndef __x86_64__
#error "cgroup_spawn's clone3 trampoline is x86-64 only, as are the BPF programs (-D__TARGET_ARCH_x86)"
#endif
#define SPAWN_STR_(x)	#x
#define SPAWN_STR(x)	SPAWN_STR_(x)
/*
 * clone3(@args, @size) whose child calls @fn(@arg) on the stack @args
 * names, then exits with its return value. With CLONE_VM the child must
 * never return through the caller's frames (the parent still owns them),
 * which is why this is a few instructions of assembly rather than C: the
 * child's first instruction after the syscall is already on its own stack.
 * Returns the child's pid, or -errno (the raw syscall's return).
 */
long sbx_clone3_call(struct clone_args *args, size_t size, int (*fn)(void *), void *arg)
	__attribute__((visibility("hidden")));
__asm__(".text\n"
	".globl sbx_clone3_call\n"
	".hidden sbx_clone3_call\n"
	".type sbx_clone3_call, @function\n"
	"sbx_clone3_call:\n"
	"	mov %rdx, %r8\n"		/* the syscall keeps r8 and r9 (it clobbers rcx and r11) */
	"	mov %rcx, %r9\n"
	"	mov $" SPAWN_STR(SYS_clone3) ", %eax\n"
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 1f\n"			/* the parent (pid) or an error (-errno) */
	"	xor %ebp, %ebp\n"		/* the child: the bottom of its call chain */
	"	mov %r9, %rdi\n"
	"	call *%r8\n"
	"	mov %eax, %edi\n"
	"	mov $" SPAWN_STR(SYS_exit) ", %eax\n"
	"	syscall\n"
	"	hlt\n"
	"1:	ret\n"
	".size sbx_clone3_call, .-sbx_clone3_call\n");

struct spawn_req {
	char *const *argv;
	int err;		/* the child's exec errno; shared memory (CLONE_VM) */
};

/*
 * The child side of cgroup_spawn, in the parent's memory until its exec:
 * default signals, nothing blocked, exec. It writes nothing of the
 * parent's but @req->err (and errno, the parent's TLS: clobbered, unread).
 */
static int spawn_child(void *p)
{
	struct spawn_req *req = p;
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvp(req->argv[0], req->argv);
	req->err = errno;
	return 127;
}

/*
 * CLONE_VM | CLONE_VFORK, as posix_spawn does (it cannot name a cgroup in
 * this glibc): the child borrows the parent's memory until its exec, so
 * nothing is copied for it (a fork copied the page tables, the child
 * copied the pages it wrote, and the parent took a fault on each page it
 * wrote after), and the exec's errno comes back in shared memory instead
 * of a pipe. The parent waits, suspended, until the exec succeeds or the
 * child exits. Every signal stays blocked across the clone, so no handler
 * of the parent's ever runs on the child's stack.
 */
pid_t cgroup_spawn(const struct sbx_cgroup *cg, char *const argv[])
{
	struct spawn_req req = { .argv = argv };
	size_t argc = 0, size;
	sigset_t all, saved;
	uintptr_t top;
	long pid;

	while (argv[argc])
		argc++;
	/* As glibc sizes posix_spawn's: execvp's script fallback copies argv onto it. */
	size = (argc + 3) * sizeof(char *) + 32 * 1024;
	char stack[size];
	top = ((uintptr_t)stack + size) & ~(uintptr_t)15;	/* the ABI's 16-byte alignment */
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP | CLONE_VM | CLONE_VFORK,
		.exit_signal = SIGCHLD,
		.cgroup = (__u64)cg->fd,
		.stack = (__u64)(uintptr_t)stack,
		.stack_size = top - (uintptr_t)stack,
	};

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &saved);
	pid = sbx_clone3_call(&args, sizeof(args), spawn_child, &req);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	if (pid < 0)
		return (pid_t)pid;
	if (req.err) {		/* the child has exited: exec failed */
		waitpid((pid_t)pid, NULL, 0);
		return -req.err;
	}
	return (pid_t)pid;
}

int cgroup_kill_all(const struct sbx_cgroup *cg)
{
	char p[PATH_MAX + 32], buf[1 << 14];
	int err;

	snprintf(p, sizeof(p), "%s/cgroup.kill", cg->path);
	err = write_file(p, "1");
	if (err != -ENOENT)
		return err;
	/* Before 5.14: signal each listed process (a fork can race; callers loop). */
	snprintf(p, sizeof(p), "%s/cgroup.procs", cg->path);
	err = read_file(p, buf, sizeof(buf));
	if (err < 0)
		return err;
	for (char *s = strtok(buf, "\n"); s; s = strtok(NULL, "\n"))
		kill((pid_t)atoi(s), SIGKILL);
	return 0;
}

static bool cgroup_populated(const struct sbx_cgroup *cg)
{
	char p[PATH_MAX + 32], buf[256];

	snprintf(p, sizeof(p), "%s/cgroup.events", cg->path);
	if (read_file(p, buf, sizeof(buf)) < 0)
		return false;
	return !strstr(buf, "populated 0");
}

int cgroup_destroy(struct sbx_cgroup *cg)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	int err = 0;

	if (!cg || !cg->path[0])
		return 0;
	/* Up to ~5 s: killed tasks must exit before the directory can go. */
	for (int i = 0; i < 1000 && cgroup_populated(cg); i++) {
		if (i % 20 == 0)
			cgroup_kill_all(cg);
		nanosleep(&ts, NULL);
	}
	if (cg->fd >= 0)
		close(cg->fd);
	cg->fd = -1;
	if (cg->root_fd >= 0)
		close(cg->root_fd);
	cg->root_fd = -1;
	if (rmdir(cg->path) && errno != ENOENT)
		err = -errno;
	cg->path[0] = '\0';
	return err;
}
