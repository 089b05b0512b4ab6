// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgstat.c — read and stop an existing cgroup from outside it: what `stats`,
 * `freeze`, `thaw` and `kill` do. Waiting is poll(2) on cgroup.events: kernfs
 * raises POLLPRI on every change of it, so nothing spins.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cgstat.h"
#include "policy.h"
#include "util.h"

#define PROCS_MAX_DEPTH 64	/* deeper than any sane hierarchy; bounds the recursion */

/* --- parsers ------------------------------------------------------------- */

int cgstat_keyed(const char *text, const char *key, long long *val)
{
	size_t kl = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char *end;
		long long v;

		if (strncmp(l, key, kl) || l[kl] != ' ')
			continue;
		errno = 0;
		v = strtoll(l + kl + 1, &end, 10);
		if (errno || end == l + kl + 1)
			return -EINVAL;
		*val = v;
		return 0;
	}
	return -ENOENT;
}

long long cgstat_keyed_file(const char *path, const char *file, const char *key)
{
	char p[PATH_MAX + 32], buf[1024];
	long long v;

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", path, file) >= sizeof(p) ||
	    read_file(p, buf, sizeof(buf)) < 0 || cgstat_keyed(buf, key, &v))
		return -1;
	return v;
}

int cgstat_value(const char *text, long long *val)
{
	char *end;
	long long v;

	while (*text == ' ')
		text++;
	if (!strncmp(text, "max", 3) && (!text[3] || text[3] == '\n')) {
		*val = CGSTAT_MAX;
		return 0;
	}
	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || end == text || v < 0 || (*end && *end != '\n'))
		return -EINVAL;
	*val = v;
	return 0;
}

/* One keyed value, CGSTAT_UNSET when absent or unreadable. */
static long long keyed_or_unset(const char *text, const char *key)
{
	long long v;

	return cgstat_keyed(text, key, &v) ? CGSTAT_UNSET : v;
}

void cgstat_parse_cpu(const char *text, struct cgstat_cpu *c)
{
	c->usage_usec = keyed_or_unset(text, "usage_usec");
	c->user_usec = keyed_or_unset(text, "user_usec");
	c->system_usec = keyed_or_unset(text, "system_usec");
	c->nr_periods = keyed_or_unset(text, "nr_periods");
	c->nr_throttled = keyed_or_unset(text, "nr_throttled");
	c->throttled_usec = keyed_or_unset(text, "throttled_usec");
}

void cgstat_parse_memory_events(const char *text, struct cgstat_memory *m)
{
	m->oom = keyed_or_unset(text, "oom");
	m->oom_kill = keyed_or_unset(text, "oom_kill");
}

void cgstat_parse_pids_events(const char *text, struct cgstat_pids *p)
{
	p->events_max = keyed_or_unset(text, "max");
}

void cgstat_parse_events(const char *text, int *populated, int *frozen)
{
	long long v;

	*populated = cgstat_keyed(text, "populated", &v) ? -1 : !!v;
	*frozen = cgstat_keyed(text, "frozen", &v) ? -1 : !!v;
}

/* Add "key=N" to the matching counter of @io; other keys are ignored. */
static int io_field(const char *tok, struct cgstat_io *io)
{
	static const struct { const char *k; size_t off; } f[] = {
		{ "rbytes", offsetof(struct cgstat_io, rbytes) },
		{ "wbytes", offsetof(struct cgstat_io, wbytes) },
		{ "rios", offsetof(struct cgstat_io, rios) },
		{ "wios", offsetof(struct cgstat_io, wios) },
	};
	const char *eq = strchr(tok, '=');
	char *end;
	long long v;

	if (!eq)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		if (strlen(f[i].k) != (size_t)(eq - tok) || strncmp(tok, f[i].k, eq - tok))
			continue;
		errno = 0;
		v = strtoll(eq + 1, &end, 10);
		if (errno || end == eq + 1 || v < 0)
			return -EINVAL;
		*(long long *)((char *)io + f[i].off) += v;
	}
	return 0;
}

int cgstat_parse_io(const char *text, struct cgstat_io *io)
{
	char line[1024];

	io->rbytes = io->wbytes = io->rios = io->wios = 0;
	for (const char *l = text; l && *l;) {
		const char *eol = strchrnul(l, '\n');
		size_t n = eol - l;
		char *save = NULL, *tok;

		if (n >= sizeof(line))
			return -EINVAL;
		memcpy(line, l, n);
		line[n] = '\0';
		l = *eol ? eol + 1 : NULL;
		tok = strtok_r(line, " ", &save);	/* "MAJ:MIN" */
		if (!tok)
			continue;
		if (!strchr(tok, ':'))
			return -EINVAL;
		while ((tok = strtok_r(NULL, " ", &save)))
			if (io_field(tok, io))
				return -EINVAL;
	}
	return 0;
}

int cgstat_parse_self_cgroup(const char *text, char *out, size_t sz)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *eol = strchrnul(l, '\n');

		if (strncmp(l, "0::", 3))
			continue;
		if ((size_t)(eol - l - 3) >= sz)
			return -ENAMETOOLONG;
		memcpy(out, l + 3, eol - l - 3);
		out[eol - l - 3] = '\0';
		return 0;
	}
	return -ENOENT;
}

/* --- resolving ------------------------------------------------------------ */

/* Is @path @dir itself or beneath it? Both absolute and normalised. */
static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* Where @arg points, before symlinks: NAME → <v2>/sbx-bpf/NAME, x/y → <v2>/x/y. */
static int target_path(const char *v2, const char *arg, bool by_name, char *out, size_t sz)
{
	char buf[PATH_MAX * 2], root[PATH_MAX];
	bool delegated;
	size_t n;

	if (by_name && cgroup_sbx_root(v2, root, sizeof(root), &delegated))
		return -EINVAL;
	if (by_name)
		n = snprintf(buf, sizeof(buf), "%s/%s", root, arg);
	else if (arg[0] == '/')
		n = snprintf(buf, sizeof(buf), "%s", arg);
	else
		n = snprintf(buf, sizeof(buf), "%s/%s", v2, arg);
	if (n >= PATH_MAX)
		return -ENAMETOOLONG;
	return path_normalize(buf, NULL, out, sz);
}

int cgstat_resolve_in(const char *v2, const char *arg, struct cgstat_target *t)
{
	char lexical[PATH_MAX], real[PATH_MAX], root[PATH_MAX + 16], probe[PATH_MAX + 32];
	struct stat st;
	int err;

	memset(t, 0, sizeof(*t));
	t->by_name = !strchr(arg, '/');
	if (!realpath(v2, t->v2))
		return -errno;
	if (!arg[0] || (t->by_name && (!strcmp(arg, ".") || !strcmp(arg, ".."))))
		return -EINVAL;
	if (t->by_name && strlen(arg) >= sizeof(t->name))
		return -ENAMETOOLONG;
	err = target_path(t->v2, arg, t->by_name, lexical, sizeof(lexical));
	if (err)
		return err;
	if (!realpath(lexical, real)) {
		err = -errno;
		/* Not there: still say "outside" rather than "missing" for ../../etc. */
		return err == -ENOENT && !path_under(lexical, t->v2) ? -EXDEV : err;
	}
	if (!path_under(real, t->v2))
		return -EXDEV;
	snprintf(probe, sizeof(probe), "%s/cgroup.procs", real);
	if (stat(real, &st) || !S_ISDIR(st.st_mode) || access(probe, F_OK))
		return -ENOTDIR;
	memcpy(t->path, real, sizeof(real));
	t->is_root = !strcmp(real, t->v2);
	t->level = cgroup_level(t->v2, real);
	{
		bool delegated;

		if (cgroup_sbx_root(t->v2, root, sizeof(root) - 1, &delegated))
			root[0] = '\0';
		strcat(root, "/");
	}
	if (root[1] && !strncmp(real, root, strlen(root)) && !strchr(real + strlen(root), '/'))
		snprintf(t->name, sizeof(t->name), "%s", real + strlen(root));
	return 0;
}

int cgstat_resolve(const char *arg, struct cgstat_target *t)
{
	char v2[PATH_MAX];
	enum cgroup_layout layout = cgroup_layout(v2, sizeof(v2));
	int err;

	if (!v2[0]) {
		memset(t, 0, sizeof(*t));
		t->by_name = !strchr(arg, '/');
		t->layout = layout;
		return -ENOTSUP;
	}
	err = cgstat_resolve_in(v2, arg, t);
	t->layout = layout;
	return err;
}

bool cgstat_contains_self(const struct cgstat_target *t)
{
	char text[4096], rel[PATH_MAX], mine[PATH_MAX * 2];

	if (read_file("/proc/self/cgroup", text, sizeof(text)) < 0 ||
	    cgstat_parse_self_cgroup(text, rel, sizeof(rel)))
		return false;
	snprintf(mine, sizeof(mine), "%s%s", t->v2, strcmp(rel, "/") ? rel : "");
	return path_under(mine, t->path);
}

/* --- reading ---------------------------------------------------------------- */

static int read_at(const char *dir, const char *file, char *buf, size_t sz)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return read_file(p, buf, sz);
}

/* A single-value file, CGSTAT_UNSET when missing or unparsable. */
static long long value_at(const char *dir, const char *file, char *buf, size_t sz)
{
	long long v;

	if (read_at(dir, file, buf, sz) < 0 || cgstat_value(buf, &v))
		return CGSTAT_UNSET;
	return v;
}

int cgstat_read(const char *path, struct cgstat *st)
{
	size_t sz = 1 << 16;	/* io.stat has a line per device */
	_cleanup_free_ char *buf = malloc(sz);
	long long v;

	memset(st, 0, sizeof(*st));
	st->populated = st->frozen = -1;
	if (!buf)
		return -ENOMEM;
	if (access(path, F_OK))
		return -errno;
	if (read_at(path, "cgroup.events", buf, sz) >= 0)
		cgstat_parse_events(buf, &st->populated, &st->frozen);
	if (read_at(path, "cpu.stat", buf, sz) >= 0) {
		st->cpu.present = true;
		cgstat_parse_cpu(buf, &st->cpu);
	}
	v = value_at(path, "memory.current", buf, sz);
	if (v != CGSTAT_UNSET) {
		st->memory.present = true;
		st->memory.current = v;
		st->memory.peak = value_at(path, "memory.peak", buf, sz);
		st->memory.max = value_at(path, "memory.max", buf, sz);
		st->memory.oom = st->memory.oom_kill = CGSTAT_UNSET;
		if (read_at(path, "memory.events", buf, sz) >= 0)
			cgstat_parse_memory_events(buf, &st->memory);
	}
	if (read_at(path, "io.stat", buf, sz) >= 0 && !cgstat_parse_io(buf, &st->io))
		st->io.present = true;
	v = value_at(path, "pids.current", buf, sz);
	if (v != CGSTAT_UNSET) {
		st->pids.present = true;
		st->pids.current = v;
		st->pids.max = value_at(path, "pids.max", buf, sz);
		st->pids.events_max = CGSTAT_UNSET;
		if (read_at(path, "pids.events", buf, sz) >= 0)
			cgstat_parse_pids_events(buf, &st->pids);
	}
	return 0;
}

/* A counter or limit: null when unknown or unlimited. */
static json_t *jnum(long long v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static json_t *jtri(int v)
{
	return v < 0 ? json_null() : json_boolean(v);
}

json_t *cgstat_to_json(const struct cgstat_target *t, const struct cgstat *st)
{
	const struct cgstat_cpu *c = &st->cpu;
	const struct cgstat_memory *m = &st->memory;
	const struct cgstat_io *io = &st->io;
	const struct cgstat_pids *p = &st->pids;
	json_t *o = json_object();

	json_object_set_new(o, "cgroup", json_string(t->path));
	json_object_set_new(o, "name", t->name[0] ? json_string(t->name) : json_null());
	json_object_set_new(o, "populated", jtri(st->populated));
	json_object_set_new(o, "frozen", jtri(st->frozen));
	json_object_set_new(o, "cpu", !c->present ? json_null() :
		json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "usage_usec", jnum(c->usage_usec),
			  "user_usec", jnum(c->user_usec), "system_usec", jnum(c->system_usec),
			  "nr_periods", jnum(c->nr_periods), "nr_throttled", jnum(c->nr_throttled),
			  "throttled_usec", jnum(c->throttled_usec)));
	json_object_set_new(o, "memory", !m->present ? json_null() :
		json_pack("{s:o, s:o, s:o, s:o, s:o}", "current", jnum(m->current),
			  "peak", jnum(m->peak), "max", jnum(m->max), "oom", jnum(m->oom),
			  "oom_kill", jnum(m->oom_kill)));
	json_object_set_new(o, "io", !io->present ? json_null() :
		json_pack("{s:o, s:o, s:o, s:o}", "rbytes", jnum(io->rbytes), "wbytes", jnum(io->wbytes),
			  "rios", jnum(io->rios), "wios", jnum(io->wios)));
	json_object_set_new(o, "pids", !p->present ? json_null() :
		json_pack("{s:o, s:o, s:o}", "current", jnum(p->current), "max", jnum(p->max),
			  "events_max", jnum(p->events_max)));
	return o;
}

/* --- waiting and acting ------------------------------------------------------ */

int cgstat_wait_event(const char *path, const char *key, int want, int timeout_ms)
{
	char p[PATH_MAX + 32], buf[256];
	long long deadline = now_ms() + timeout_ms, v;
	_cleanup_close_ int fd = -1;

	snprintf(p, sizeof(p), "%s/cgroup.events", path);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENODEV ? -ENOENT : -errno;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLPRI };
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);	/* re-arms the poll */
		long long left;

		if (n < 0)	/* ENODEV: the cgroup was removed under us */
			return errno == ENODEV || errno == ENOENT ? -ENOENT : -errno;
		buf[n] = '\0';
		if (cgstat_keyed(buf, key, &v))
			return -ENOTSUP;	/* "frozen" needs 5.2 */
		if (v == want)
			return 0;
		left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		/* The cap only guards against a missed wakeup; kernfs wakes us on each change. */
		if (poll(&pfd, 1, left < 1000 ? (int)left : 1000) < 0 && errno != EINTR)
			return -errno;
	}
}

typedef void (*pid_fn)(pid_t pid, void *ctx);

/* Call @fn for each pid in @path's subtree; the count, or -errno. */
static int walk_procs(const char *path, int depth, pid_fn fn, void *ctx)
{
	char p[PATH_MAX + 32];
	struct dirent *de;
	FILE *f;
	DIR *d;
	int n = 0, pid, sub;

	snprintf(p, sizeof(p), "%s/cgroup.procs", path);
	f = fopen(p, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%d", &pid) == 1) {
		n++;
		if (fn)
			fn(pid, ctx);
	}
	fclose(f);
	if (depth >= PROCS_MAX_DEPTH || !(d = opendir(path)))
		return n;	/* a child cgroup vanishing mid-walk is fine */
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		sub = walk_procs(p, depth + 1, fn, ctx);
		if (sub > 0)
			n += sub;
	}
	closedir(d);
	return n;
}

int cgstat_count_procs(const char *path)
{
	return walk_procs(path, 0, NULL, NULL);
}

static int freeze_file(const char *path, char *p, size_t sz)
{
	return snprintf(p, sz, "%s/cgroup.freeze", path) >= (int)sz ? -ENAMETOOLONG : 0;
}

int cgstat_freeze(const char *path, bool freeze, int timeout_ms)
{
	char p[PATH_MAX + 32];
	int err = freeze_file(path, p, sizeof(p));

	if (!err)
		err = write_file(p, freeze ? "1" : "0");
	if (err == -ENOENT)
		return access(path, F_OK) ? -ENOENT : -ENOTSUP;
	if (err)
		return err;
	return cgstat_wait_event(path, "frozen", freeze, timeout_ms);
}

static void sigkill_pid(pid_t pid, void *ctx)
{
	(void)ctx;
	if (pid > 0 && pid != getpid())
		kill(pid, SIGKILL);
}

/* Before 5.14: freeze so forks cannot race, SIGKILL pid by pid until empty. */
static int kill_by_signals(const char *path, long long deadline, struct cgstat_kill_result *r)
{
	char p[PATH_MAX + 32], was[8] = "";
	bool froze;
	int err;

	froze = !freeze_file(path, p, sizeof(p)) && read_file(p, was, sizeof(was)) >= 0 &&
		!write_file(p, "1");
	for (;;) {
		long long left;

		walk_procs(path, 0, sigkill_pid, NULL);
		r->rounds++;
		left = deadline - now_ms();
		err = cgstat_wait_event(path, "populated", 0, left < 200 ? (int)(left > 0 ? left : 0) : 200);
		if (err != -ETIMEDOUT || left <= 0)
			break;
	}
	if (froze && was[0] == '0')
		write_file(p, "0");	/* as we found it; the killed tasks leave either way */
	return err == -ENOENT ? 0 : err;
}

int cgstat_kill(const char *path, unsigned flags, int timeout_ms, struct cgstat_kill_result *r)
{
	char p[PATH_MAX + 32];
	long long deadline = now_ms() + timeout_ms;
	int err;

	memset(r, 0, sizeof(*r));
	r->procs = cgstat_count_procs(path);
	if (r->procs == -ENOENT)
		return -ENOENT;
	if (r->procs < 0)
		r->procs = -1;
	if (!(flags & CGSTAT_KILL_SIGNALS)) {
		snprintf(p, sizeof(p), "%s/cgroup.kill", path);
		err = write_file(p, "1");
		if (!err) {
			r->used_cgroup_kill = true;
			err = cgstat_wait_event(path, "populated", 0, timeout_ms);
			return err == -ENOENT ? 0 : err;	/* removed: certainly empty */
		}
		if (err != -ENOENT)
			return err;
		if (access(path, F_OK))
			return -ENOENT;
	}
	return kill_by_signals(path, deadline, r);
}
