// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * policy.c — policy files and command-line rules, compiled to the rules
 * the kernel matches. The format (sandbox-runtime settings plus our
 * extensions) is in docs/policy.md.
 *
 * Everything is built in a private struct policy and handed to the caller
 * only once the whole input is valid: a caller never holds half a policy.
 * Nothing here prints; problems come back in struct policy_diag.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <jansson.h>

#include "hooks.h"
#include "jsonloc.h"
#include "dns.h"
#include "policy.h"
#include "sbx_abi.h"
#include "util.h"

#define POLICY_FILE_MAX	(4 << 20)	/* a policy is text a human wrote */
#define GLOB_CHARS	"*?[]{}"

struct cred_file;

/* Parsing state: the policy being built and where we are in the document. */
struct pctx {
	struct policy *p;		/* the private copy */
	const struct policy_env *env;
	struct policy_diag *diag;
	const char *name;		/* file name, or the flag of a command-line rule */
	const char *text;		/* JSON source; NULL for a command-line rule */
	struct jloc_pos pos;		/* cache for line:col lookups */
	struct jloc_step path[8];	/* e.g. filesystem.denyRead[3] */
	size_t depth;
	struct cred_file *cred;		/* the credentials.files entry being read */
	char path_buf[256];		/* here()'s result */
	struct dir_memo *memo;		/* the last rule's directory, resolved (a file's load only) */
};

/*
 * A directory as path_resolve() saw it. Rules come in groups under one
 * directory, and path_resolve() pays a readlink() per component of every
 * prefix it tries: with the directory known, a rule costs one lstat().
 */
struct dir_memo {
	char dir[PATH_MAX];		/* as written, normalised */
	char real[PATH_MAX];		/* path_resolve()'s answer for it */
};

/* One key of one level of the schema. @off is the value's offset in the text, -1 if none. */
struct key_def {
	const char *name;
	/* NULL: a sandbox-runtime key with no meaning here, accepted with a warning */
	int (*parse)(struct pctx *c, json_t *v, long off, size_t arg);
	size_t arg;
};

/* --- messages ---------------------------------------------------------------- */

static void where(struct pctx *c, long off, char *buf, size_t sz)
{
	char lc[32], *s = lc + sizeof(lc);

	if (!c->text || off < 0) {
		str_join(buf, sz, c->name, "", "");
		return;
	}
	jloc_advance(c->text, &c->pos, off);
	/* ":LINE:COL" by hand: a snprintf per rule was a tenth of a policy's parse. */
	*--s = '\0';
	for (unsigned v = (unsigned)c->pos.col, i = 0; i < 2; v = (unsigned)c->pos.line, i++) {
		do
			*--s = (char)('0' + v % 10);
		while ((v /= 10));
		*--s = ':';
	}
	str_join(buf, sz, c->name, s, "");
}

static int __attribute__((format(printf, 3, 4))) fail(struct pctx *c, long off, const char *fmt, ...)
{
	char at[PATH_MAX + 32], msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	where(c, off, at, sizeof(at));
	snprintf(c->diag->error, sizeof(c->diag->error), "%s: %s", at, msg);
	return -EINVAL;
}

static void __attribute__((format(printf, 3, 4))) warn(struct pctx *c, long off, const char *fmt, ...)
{
	struct policy_diag *d = c->diag;
	char at[PATH_MAX + 32], msg[256];
	va_list ap;

	if (d->nr_warnings >= POLICY_DIAG_MAX) {
		d->nr_warnings_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	where(c, off, at, sizeof(at));
	snprintf(d->warnings[d->nr_warnings++], sizeof(d->warnings[0]), "%s: %s", at, msg);
}

/* "filesystem.denyRead[3]" for the first @depth steps of the current path. */
static const char *path_str(struct pctx *c, size_t depth, char *buf, size_t sz)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < depth && len < sz; i++) {
		const struct jloc_step *s = &c->path[i];

		if (s->key)
			len += snprintf(buf + len, sz - len, "%s%s", i ? "." : "", s->key);
		else
			len += snprintf(buf + len, sz - len, "[%zu]", s->index);
	}
	return buf;
}

/* The current path, for messages: valid until the next call. */
static const char *here(struct pctx *c)
{
	return path_str(c, c->depth, c->path_buf, sizeof(c->path_buf));
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

static int fail_type(struct pctx *c, const json_t *v, long off, const char *want)
{
	return fail(c, off, "'%s' must be %s, not %s", here(c), want, type_name(v));
}

static void push_key(struct pctx *c, const char *key)
{
	c->path[c->depth++] = (struct jloc_step){ .key = key };
}

static void push_index(struct pctx *c, size_t i)
{
	c->path[c->depth++] = (struct jloc_step){ .index = i };
}

/* --- unknown keys: suggest the closest known one ------------------------------ */

/* Edit distance, a swap of two neighbours counting as one edit ("denyRaed"). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[3][64];
	size_t *pp = d[0], *prev = d[1], *cur = d[2];

	if (la >= 63 || lb >= 63)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]), best = sub;

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < best)
				best = pp[j - 2] + 1;
			cur[j] = best;
		}
		size_t *t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

/* "io-read-bps", "io_read_bps", "IOREADBPS" all spell ioReadBps: case, '-' and '_' aside. */
static bool same_words(const char *a, const char *b)
{
	for (;; a++, b++) {
		a += strspn(a, "-_");
		b += strspn(b, "-_");
		if (!*a || !*b || tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return !*a && !*b;
	}
}

static const char *closest_key(const char *key, const struct key_def *defs, size_t n)
{
	size_t best = SIZE_MAX, limit = strlen(key) / 4 > 2 ? strlen(key) / 4 : 2;
	const char *name = NULL;

	for (size_t i = 0; i < n; i++) {
		size_t d = same_words(key, defs[i].name) ? 0 : edit_distance(key, defs[i].name);

		if (d < best) {
			best = d;
			name = defs[i].name;
		}
	}
	return best <= limit ? name : NULL;
}

static int unknown_key(struct pctx *c, const char *key, const struct key_def *defs, size_t n)
{
	long off = c->text ? jloc_find(c->text, c->path, c->depth, true) : -1;
	const char *best = closest_key(key, defs, n);
	char level[256], in[300], known[512];
	size_t len = 0;

	path_str(c, c->depth - 1, level, sizeof(level));
	snprintf(in, sizeof(in), level[0] ? "in '%s'" : "at the top level", level);
	if (best)
		return fail(c, off, "unknown key '%s' %s (did you mean '%s'?)", key, in, best);
	known[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(known); i++)
		if (defs[i].parse)
			len += snprintf(known + len, sizeof(known) - len, "%s%s", len ? ", " : "",
					defs[i].name);
	return fail(c, off, "unknown key '%s' %s (known keys: %s)", key, in, known);
}

/* Walk an object in document order: each key known, parsed or (srt-only) warned about. */
static int parse_object(struct pctx *c, json_t *obj, long off, const struct key_def *defs, size_t n)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return fail_type(c, obj, off, "an object");
	json_object_foreach(obj, key, v) {
		const struct key_def *d = NULL;
		int err = 0;

		for (size_t i = 0; i < n && !d; i++)
			if (!strcmp(key, defs[i].name))
				d = &defs[i];
		push_key(c, key);
		if (!d)
			err = unknown_key(c, key, defs, n);
		else if (!d->parse)
			warn(c, jloc_find(c->text, c->path, c->depth, true),
			     "ignoring '%s' (sandbox-runtime setting with no meaning for sbx-bpf)", here(c));
		else
			err = d->parse(c, v, jloc_find(c->text, c->path, c->depth, false), d->arg);
		c->depth--;
		if (err)
			return err;
	}
	return 0;
}

/* --- paths and patterns ---------------------------------------------------------- */

struct compiled {
	enum rule_scope scope;
	char path[PATH_MAX];
	bool dropped;		/* a pipe or socket behind /dev/stdout: nothing to judge by path */
};

static int fail_glob(struct pctx *c, long off, const char *pat, char g)
{
	return fail(c, off, "'%s': unsupported glob '%c' (only a leading '**/' and a trailing "
		    "'/**' are supported)", pat, g);
}

/* "**" then "/a/b", maybe then a trailing "/" "**": the components a/b at any depth. */
static int compile_any_depth(struct pctx *c, const char *pat, long off, struct compiled *out)
{
	char buf[PATH_MAX];
	size_t len, count = 0;
	const char *s;

	len = str_join(buf, sizeof(buf), pat + 3, "", "");
	len = len < sizeof(buf) ? len : sizeof(buf) - 1;
	if (len >= 3 && !strcmp(buf + len - 3, "/**"))
		buf[len -= 3] = '\0';
	while (len > 0 && buf[len - 1] == '/')
		buf[--len] = '\0';
	if (!len)
		return fail(c, off, "'%s': '**/' must be followed by a name", pat);
	for (s = buf;; s++) {
		const char *end = strchrnul(s, '/');
		int n = (int)(end - s);

		if (!n || !strncmp(s, ".", n) || !strncmp(s, "..", n))
			return fail(c, off, "'%s': component '%.*s' is not allowed after '**/'", pat, n, s);
		if (strcspn(s, GLOB_CHARS) < (size_t)n)
			return fail_glob(c, off, pat, s[strcspn(s, GLOB_CHARS)]);
		if (++count > POLICY_ANY_DEPTH_MAX)
			return fail(c, off, "'%s': at most %d components after '**/'", pat,
				    POLICY_ANY_DEPTH_MAX);
		if (!*end)
			break;
		s = end;
	}
	out->scope = RULE_ANY_DEPTH;
	str_join(out->path, sizeof(out->path), buf, "", "");
	return 0;
}

/* "~" and "~/x" are the invoking user's home; "~alice" is not supported. */
static int expand_home(struct pctx *c, const char *pat, const char *in, long off, char *out, size_t sz)
{
	const char *home = c->env ? c->env->home : NULL;

	if (in[0] != '~') {
		str_join(out, sz, in, "", "");
		return 0;
	}
	if (in[1] && in[1] != '/')
		return fail(c, off, "'%s': '~USER' is not supported; write the path out", pat);
	if (!home || home[0] != '/')
		return fail(c, off, "'%s': no home directory is known for '~'", pat);
	if (str_join(out, sz, home, in + 1, "") >= sz)
		return fail(c, off, "'%s': path too long", pat);
	return 0;
}

/* /dev/stdout and friends name a descriptor of this process: the fd number, or -1. */
static int stdio_fd(const char *path)
{
	static const char *const fixed[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/" };
	char *end;
	long fd;

	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		if (!strcmp(path, fixed[i]))
			return (int)i;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		size_t n = strlen(dirs[i]);

		if (strncmp(path, dirs[i], n) || path[n] < '0' || path[n] > '9')
			continue;
		fd = strtol(path + n, &end, 10);
		if (!*end && fd <= INT_MAX)
			return (int)fd;
	}
	return -1;
}

/*
 * What the descriptor is open on. A pipe or socket ("pipe:[123]") is not
 * judged by path, so its rule is dropped; so is a descriptor not open.
 */
static void resolve_fd(int fd, struct compiled *out)
{
	char link[64], target[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0 || target[0] != '/') {
		out->dropped = true;
		return;
	}
	target[n] = '\0';
	snprintf(out->path, sizeof(out->path), "%s", target);
}

/* @c's memo holding @dir (of @len bytes) resolved; false when there is no memory for it. */
static bool memo_dir(struct pctx *c, const char *dir, size_t len)
{
	struct dir_memo *m = c->memo;

	if (m && strlen(m->dir) == len && !memcmp(m->dir, dir, len))
		return true;
	if (!c->text)	/* a command-line rule: one of its own, and no finish() to free the memo */
		return false;
	if (!m && !(m = c->memo = malloc(sizeof(*m))))
		return false;
	memcpy(m->dir, dir, len);
	m->dir[len] = '\0';
	memcpy(m->real, m->dir, len + 1);
	if (path_resolve(m->real, sizeof(m->real))) {
		m->dir[0] = '\0';	/* matches no directory: resolved whole each time */
		return false;
	}
	return true;
}

/*
 * path_resolve() of the normalised absolute @path, the same answer for
 * less work: "dir/leaf" is real(dir)/leaf unless leaf is a symlink, since
 * real(dir) is canonical and a leaf that is not there (or not reachable)
 * is kept as written either way. A symlink leaf takes the whole walk.
 */
static int resolve_memo(struct pctx *c, char *path, size_t sz)
{
	const char *slash = strrchr(path, '/');
	char joined[PATH_MAX * 2];
	struct stat st;

	if (!slash || slash == path || !memo_dir(c, path, slash - path))
		return path_resolve(path, sz);
	str_join(joined, sizeof(joined), strcmp(c->memo->real, "/") ? c->memo->real : "", slash, "");
	if (!lstat(joined, &st) && S_ISLNK(st.st_mode))
		return path_resolve(path, sz);
	if (strlen(joined) >= sz)
		return -ENAMETOOLONG;
	strcpy(path, joined);
	return 0;
}

static int compile_literal(struct pctx *c, const char *pat, long off, struct compiled *out)
{
	const char *cwd = c->env ? c->env->cwd : NULL;
	char buf[PATH_MAX], full[PATH_MAX];
	size_t len = strlen(pat);
	int err, fd;

	out->dropped = false;
	if (len >= sizeof(buf))
		return fail(c, off, "'%.40s…': path too long", pat);
	strcpy(buf, pat);
	if (len >= 3 && !strcmp(buf + len - 3, "/**"))
		buf[len - 2] = '\0';	/* "dir/" + "**" is "dir/": the directory and beneath */
	if (strpbrk(buf, GLOB_CHARS))
		return fail_glob(c, off, pat, *strpbrk(buf, GLOB_CHARS));
	err = expand_home(c, pat, buf, off, full, sizeof(full));
	if (err)
		return err;
	if (full[0] != '/' && (!cwd || cwd[0] != '/'))
		return fail(c, off, "'%s': relative path, but no working directory is known", pat);
	if (path_normalize(full, cwd, out->path, sizeof(out->path)))
		return fail(c, off, "'%s': path too long", pat);
	out->scope = RULE_ABSOLUTE;
	fd = stdio_fd(out->path);
	if (fd >= 0)
		resolve_fd(fd, out);
	else if (resolve_memo(c, out->path, sizeof(out->path)))
		return fail(c, off, "'%s': path too long once symlinks are resolved", pat);
	return 0;
}

static int compile(struct pctx *c, const char *pat, long off, struct compiled *out)
{
	out->dropped = false;	/* also for "**" + "/x", which never drops */
	if (!pat[0])
		return fail(c, off, "empty path");
	if (!strncmp(pat, "**/", 3))
		return compile_any_depth(c, pat, off, out);
	return compile_literal(c, pat, off, out);
}

/* --- rules ------------------------------------------------------------------------ */

static int push_rule(struct policy *p, enum rule_kind kind, enum rule_scope scope,
		     const char *path, const char *text, const char *origin)
{
	struct policy_rule *rules = realloc(p->rules, (p->nr_rules + 1) * sizeof(*rules));
	struct policy_rule r = { .kind = kind, .scope = scope };

	if (!rules)
		return -ENOMEM;
	p->rules = rules;
	r.path = strdup(path);
	r.text = strdup(text);
	r.origin = strdup(origin);
	if (!r.path || !r.text || !r.origin) {
		free(r.path);
		free(r.text);
		free(r.origin);
		return -ENOMEM;
	}
	p->rules[p->nr_rules++] = r;
	return 0;
}

static int add_pattern(struct pctx *c, enum rule_kind kind, const char *pat, long off)
{
	char origin[PATH_MAX + 32], *text;
	struct compiled out;
	int err;

	/* The kernel judges a socket by its bound path: no any-depth names. */
	if (kind == RULE_ALLOW_UNIX && !strncmp(pat, "**/", 3))
		return fail_glob(c, off, pat, '*');
	err = compile(c, pat, off, &out);
	if (err || out.dropped)
		return err;
	text = malloc(strlen(rule_kind_name(kind)) + 1 + strlen(pat) + 1);
	if (!text)
		return -ENOMEM;
	strcpy(stpcpy(stpcpy(text, rule_kind_name(kind)), " "), pat);
	where(c, off, origin, sizeof(origin));
	err = push_rule(c->p, kind, out.scope, out.path, text, origin);
	free(text);
	return err;
}

static int dup_text_origin(char **text, char **origin, const char *t, const char *o)
{
	*text = strdup(t);
	*origin = strdup(o);
	if (*text && *origin)
		return 0;
	free(*text);
	free(*origin);
	return -ENOMEM;
}

/* Append @r (its strings aside) with @text and @origin. */
static int push_net_rule(struct policy *p, const struct net_rule *r, const char *text,
			 const char *origin)
{
	struct net_rule *v = realloc(p->net.rules, (p->net.nr_rules + 1) * sizeof(*v));
	struct net_rule n = *r;

	if (!v)
		return -ENOMEM;
	p->net.rules = v;
	if (dup_text_origin(&n.text, &n.origin, text, origin))
		return -ENOMEM;
	v[p->net.nr_rules++] = n;
	return 0;
}

static int push_domain(struct policy *p, const struct domain_rule *d, const char *text,
		       const char *origin)
{
	struct domain_rule *v = realloc(p->net.domains, (p->net.nr_domains + 1) * sizeof(*v));
	struct domain_rule n = *d;

	if (!v)
		return -ENOMEM;
	p->net.domains = v;
	n.name = strdup(d->name);
	if (!n.name || dup_text_origin(&n.text, &n.origin, text, origin)) {
		free(n.name);
		return -ENOMEM;
	}
	v[p->net.nr_domains++] = n;
	return 0;
}

bool net_prefix_contains(const __u8 net[16], unsigned plen, const __u8 addr[16], unsigned alen)
{
	unsigned bytes = plen / 8, rest = plen % 8;

	if (alen < plen || plen > 128)
		return false;
	if (memcmp(net, addr, bytes))
		return false;
	return !rest || !((net[bytes] ^ addr[bytes]) & (0xff00 >> rest));
}

/* --- value checkers ------------------------------------------------------------ */

static bool port_ok(const char *s, long *port)
{
	char *end;

	if (*s < '0' || *s > '9' || strlen(s) > 5)
		return false;
	*port = strtol(s, &end, 10);
	return !*end && *port >= 1 && *port <= 65535;
}

static bool label_ok(const char *s, size_t n)
{
	if (!n || n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= 'A' && s[i] <= 'Z') &&
		    !(s[i] >= '0' && s[i] <= '9') && s[i] != '-' && s[i] != '_')
			return false;
	return true;
}

/* A name of at least two labels: "example.com", not "com" (too broad as "*.com"). */
static bool domain_name_ok(const char *s)
{
	size_t labels = 0;

	for (;; s++) {
		const char *end = strchrnul(s, '.');

		if (!label_ok(s, end - s))
			return false;
		labels++;
		if (!*end)
			return labels >= 2;
		s = end;
	}
}

/* What a domain pattern names. */
enum host_kind {
	HOST_NAME,		/* "example.com" */
	HOST_WILDCARD,		/* "*.example.com": its subdomains, not itself */
	HOST_ANY,		/* "*", deniedDomains only */
	HOST_LOCALHOST,
	HOST_IP,		/* "10.1.2.3", "[::1]" */
};

struct domain_spec {
	enum host_kind kind;
	char name[256];		/* NAME, WILDCARD: lower case, without "*." and a trailing dot */
	__u8 addr[16];		/* IP: IPv6, or IPv4 as ::ffff:a.b.c.d */
	__u16 lo, hi;
};

static void map_v4(__u8 addr[16], const unsigned char v4[4])
{
	memset(addr, 0, 10);
	addr[10] = addr[11] = 0xff;
	memcpy(addr + 12, v4, 4);
}

/* What follows a host: nothing (every port) or ":PORT". */
static bool host_port(const char *s, struct domain_spec *d)
{
	long port;

	if (!*s) {
		d->lo = 0;
		d->hi = 65535;
		return true;
	}
	if (*s != ':' || !port_ok(s + 1, &port))
		return false;
	d->lo = d->hi = (__u16)port;
	return true;
}

static bool host_classify(const char *host, bool denied, struct domain_spec *d)
{
	unsigned char v4[4];

	if (denied && !strcmp(host, "*")) {
		d->kind = HOST_ANY;
	} else if (!strcmp(host, "localhost")) {
		d->kind = HOST_LOCALHOST;
	} else if (inet_pton(AF_INET, host, v4) == 1) {
		d->kind = HOST_IP;
		map_v4(d->addr, v4);
	} else {
		d->kind = strncmp(host, "*.", 2) ? HOST_NAME : HOST_WILDCARD;
		snprintf(d->name, sizeof(d->name), "%s", d->kind == HOST_WILDCARD ? host + 2 : host);
		return domain_name_ok(d->name);
	}
	return true;
}

/*
 * sandbox-runtime's domain syntax: "example.com", "*.example.com",
 * "localhost", "10.1.2.3", "[::1]", each optionally ":PORT"; deniedDomains
 * also "*". Names are case-insensitive and may end in a dot.
 */
static bool domain_parse(const char *s, bool denied, struct domain_spec *d)
{
	char host[256];
	const char *colon, *end;
	size_t len;

	memset(d, 0, sizeof(*d));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close - s - 1 >= (long)sizeof(host))
			return false;
		snprintf(host, sizeof(host), "%.*s", (int)(close - s - 1), s + 1);
		d->kind = HOST_IP;
		return inet_pton(AF_INET6, host, d->addr) == 1 && host_port(close + 1, d);
	}
	colon = strchr(s, ':');
	if (colon && strchr(colon + 1, ':'))
		return false;	/* an unbracketed IPv6 literal is ambiguous with a port */
	end = colon ? colon : s + strlen(s);
	len = end - s;
	if (len >= sizeof(host) || !host_port(end, d))
		return false;
	for (size_t i = 0; i < len; i++)
		host[i] = (char)tolower((unsigned char)s[i]);
	host[len] = '\0';
	if (len > 1 && host[len - 1] == '.' && strcmp(host, "*."))
		host[--len] = '\0';	/* "example.com." is the same name */
	return host_classify(host, denied, d);
}

/* "LO" or "LO-HI", 1..65535. */
static bool ports_parse(const char *s, __u16 *lo, __u16 *hi)
{
	char buf[8];
	const char *dash = strchr(s, '-');
	long a, b;

	if (!dash) {
		if (!port_ok(s, &a))
			return false;
		*lo = *hi = (__u16)a;
		return true;
	}
	if (dash - s >= (long)sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%.*s", (int)(dash - s), s);
	if (!port_ok(buf, &a) || !port_ok(dash + 1, &b) || a > b)
		return false;
	*lo = (__u16)a;
	*hi = (__u16)b;
	return true;
}

/* Split "ADDR[/LEN]" with a port part: "[v6/LEN]:P", "v4/LEN:P", or a bare address. */
static bool cidr_split(const char *s, char *addr, size_t sz, const char **ports)
{
	const char *colon = strchr(s, ':');

	*ports = NULL;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || (close[1] && close[1] != ':') || (size_t)(close - s) > sz)
			return false;
		snprintf(addr, sz, "%.*s", (int)(close - s - 1), s + 1);
		*ports = close[1] ? close + 2 : NULL;
		return strchr(addr, ':') != NULL;	/* brackets are for IPv6 */
	}
	if (colon && !strchr(colon + 1, ':')) {	/* one colon: IPv4 with a port */
		*ports = colon + 1;
		return (size_t)snprintf(addr, sz, "%.*s", (int)(colon - s), s) < sz;
	}
	return (size_t)snprintf(addr, sz, "%s", s) < sz;
}

/*
 * "10.0.0.0/8", "10.1.2.3", "10.0.0.0/8:443", "10.0.0.0/8:8000-8999",
 * "2001:db8::/32", "[2001:db8::/32]:443" into @r's address, prefix and
 * ports (IPv4 as ::ffff:a.b.c.d). On error @why says what is wrong.
 */
static bool cidr_parse(const char *s, struct net_rule *r, char *why, size_t sz)
{
	unsigned char a[16];
	char addr[INET6_ADDRSTRLEN + 8], *slash, *end, fixed[INET6_ADDRSTRLEN];
	const char *ports;
	int family, bits;
	long len;

	if (!cidr_split(s, addr, sizeof(addr), &ports)) {
		snprintf(why, sz, "not CIDR[:PORT] (IPv6 with a port is written '[2001:db8::/32]:443')");
		return false;
	}
	slash = strchr(addr, '/');
	if (slash)
		*slash = '\0';
	family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	bits = family == AF_INET ? 32 : 128;
	if (inet_pton(family, addr, a) != 1) {
		snprintf(why, sz, "'%s' is not an IPv%d address", addr, family == AF_INET ? 4 : 6);
		return false;
	}
	len = bits;
	if (slash && (slash[1] < '0' || slash[1] > '9' || (len = strtol(slash + 1, &end, 10), *end) ||
		      len > bits)) {
		snprintf(why, sz, "prefix length must be 0-%d", bits);
		return false;
	}
	r->lo = 0;
	r->hi = 65535;
	if (ports && !ports_parse(ports, &r->lo, &r->hi)) {
		snprintf(why, sz, "bad port '%s' (1-65535, or LO-HI)", ports);
		return false;
	}
	for (int i = len; i < bits; i++) {
		if (a[i / 8] & (0x80 >> (i % 8))) {
			for (int j = len; j < bits; j++)
				a[j / 8] &= ~(0x80 >> (j % 8));
			inet_ntop(family, a, fixed, sizeof(fixed));
			snprintf(why, sz, "address bits set beyond the /%ld prefix (did you mean '%s/%ld'?)",
				 len, fixed, len);
			return false;
		}
	}
	if (family == AF_INET) {
		map_v4(r->addr, a);
		r->plen = 96 + (unsigned)len;
	} else {
		memcpy(r->addr, a, sizeof(r->addr));
		r->plen = (unsigned)len;
	}
	return true;
}

/* --- parsers, one per key -------------------------------------------------------- */

typedef int (*string_fn)(struct pctx *c, const char *s, long off, size_t arg);

/* An array of non-empty strings, @fn called on each with its offset. */
static int for_each_string(struct pctx *c, json_t *v, long off, string_fn fn, size_t arg)
{
	long eoff;
	json_t *e;
	size_t i;

	if (!json_is_array(v))
		return fail_type(c, v, off, "an array of strings");
	eoff = c->text ? jloc_first(c->text, off) : -1;
	json_array_foreach(v, i, e) {
		int err;

		push_index(c, i);
		if (!json_is_string(e))
			err = fail_type(c, e, eoff, "a string");
		else if (!json_string_length(e))
			err = fail(c, eoff, "'%s' is an empty string", here(c));
		else
			err = fn(c, json_string_value(e), eoff, arg);
		c->depth--;
		if (err)
			return err;
		if (eoff >= 0)
			eoff = jloc_next(c->text, eoff);
	}
	return 0;
}

static int rule_cb(struct pctx *c, const char *s, long off, size_t kind)
{
	return add_pattern(c, (enum rule_kind)kind, s, off);
}

static int parse_rules(struct pctx *c, json_t *v, long off, size_t kind)
{
	return for_each_string(c, v, off, rule_cb, kind);
}

static int parse_bool(struct pctx *c, json_t *v, long off, size_t field)
{
	if (!json_is_boolean(v))
		return fail_type(c, v, off, "true or false");
	*(bool *)((char *)c->p + field) = json_is_true(v);
	return 0;
}

/*
 * What "localhost" means to the kernel: every loopback address, and the
 * unspecified ones, which connect(2) sends to this host too.
 */
static const char *const loopback_cidrs[] = { "127.0.0.0/8", "::1", "0.0.0.0", "::" };

static int push_loopback(struct policy *p, bool deny, __u16 lo, __u16 hi, const char *text,
			 const char *origin)
{
	for (size_t i = 0; i < ARRAY_SIZE(loopback_cidrs); i++) {
		struct net_rule r = { .deny = deny };
		char why[160];
		int err;

		if (!cidr_parse(loopback_cidrs[i], &r, why, sizeof(why)))
			return -EINVAL;
		r.lo = lo;
		r.hi = hi;
		err = push_net_rule(p, &r, text, origin);
		if (err)
			return err;
	}
	return 0;
}

/* The resolver answers for a name on all ports or none: say what a port on a denied name does. */
static void warn_denied_port(struct pctx *c, long off, const char *s, const struct domain_spec *d)
{
	warn(c, off, "'%s': a denied name is denied on every port, not only %u (the resolver cannot "
	     "refuse a name for one port)%s", s, d->lo,
	     d->kind == HOST_ANY ? "; '*' denies every name" : "");
}

/* For one name only the first allowedDomains entry counts (see net_domain_verdict). */
static void warn_duplicate_name(struct pctx *c, long off, const char *s, const struct domain_spec *d)
{
	const struct policy_network *n = &c->p->net;

	for (size_t i = 0; i < n->nr_domains; i++) {
		const struct domain_rule *r = &n->domains[i];

		if (r->deny || r->wildcard != (d->kind == HOST_WILDCARD) || strcmp(r->name, d->name))
			continue;
		if (r->lo != d->lo || r->hi != d->hi)
			warn(c, off, "'%s': the name is already allowed by '%s' (%s), whose ports count",
			     s, r->text, r->origin);
		return;
	}
}

static int add_domain(struct pctx *c, const char *s, long off, bool denied,
		      const struct domain_spec *d, const char *text, const char *origin)
{
	struct domain_rule r = { .deny = denied, .wildcard = d->kind != HOST_NAME,
				 .name = (char *)d->name, .lo = d->lo, .hi = d->hi };
	struct net_rule n = { .deny = denied, .plen = 128, .lo = d->lo, .hi = d->hi };

	switch (d->kind) {
	case HOST_LOCALHOST:
		return push_loopback(c->p, denied, d->lo, d->hi, text, origin);
	case HOST_IP:
		memcpy(n.addr, d->addr, sizeof(n.addr));
		return push_net_rule(c->p, &n, text, origin);
	default:
		break;
	}
	if (denied && d->lo) {
		warn_denied_port(c, off, s, d);
		r.lo = 0;
		r.hi = 65535;
	}
	if (!denied)
		warn_duplicate_name(c, off, s, d);
	return push_domain(c->p, &r, text, origin);
}

static int domain_cb(struct pctx *c, const char *s, long off, size_t denied)
{
	char origin[PATH_MAX + 32], *text;
	struct domain_spec d;
	int err;

	if (!domain_parse(s, denied, &d))
		return fail(c, off, "'%s' is not a domain pattern: use 'example.com' or '*.example.com', "
			    "optionally with ':PORT'%s; '*.com'%s is too broad", s,
			    denied ? ", or '*'" : "", denied ? "" : " or '*'");
	if (asprintf(&text, "%s %s", denied ? "deniedDomains" : "allowedDomains", s) < 0)
		return -ENOMEM;
	where(c, off, origin, sizeof(origin));
	err = add_domain(c, s, off, denied, &d, text, origin);
	free(text);
	return err;
}

static int parse_domains(struct pctx *c, json_t *v, long off, size_t denied)
{
	return for_each_string(c, v, off, domain_cb, denied);
}

/* ::ffff:0:0/96, where IPv4 addresses live in the kernel's form. */
static const __u8 v4_mapped[16] = { [10] = 0xff, [11] = 0xff };

static int cidr_cb(struct pctx *c, const char *s, long off, size_t deny)
{
	char why[160], origin[PATH_MAX + 32], *text;
	struct net_rule r = { .deny = deny };
	int err;

	if (!cidr_parse(s, &r, why, sizeof(why)))
		return fail(c, off, "'%s': %s", s, why);
	if (r.plen < 96 && net_prefix_contains(r.addr, r.plen, v4_mapped, 96))
		warn(c, off, "'%s' also covers every IPv4 address (IPv4 is judged as ::ffff:a.b.c.d)", s);
	if (asprintf(&text, "%s %s", deny ? "deny" : "allow", s) < 0)
		return -ENOMEM;
	where(c, off, origin, sizeof(origin));
	err = push_net_rule(c->p, &r, text, origin);
	free(text);
	return err;
}

static int parse_cidrs(struct pctx *c, json_t *v, long off, size_t deny)
{
	return for_each_string(c, v, off, cidr_cb, deny);
}

static int parse_loopback(struct pctx *c, json_t *v, long off, size_t arg)
{
	char origin[PATH_MAX + 32];

	(void)arg;
	if (!json_is_boolean(v))
		return fail_type(c, v, off, "true or false");
	c->p->net.allow_loopback = json_is_true(v);
	if (!c->p->net.allow_loopback)
		return 0;
	where(c, off, origin, sizeof(origin));
	return push_loopback(c->p, false, 0, 65535, "allowLoopback", origin);
}

static int socket_cb(struct pctx *c, const char *s, long off, size_t arg)
{
	(void)arg;
	return add_pattern(c, RULE_ALLOW_UNIX, s, off);
}

static int parse_sockets(struct pctx *c, json_t *v, long off, size_t arg)
{
	return for_each_string(c, v, off, socket_cb, arg);
}

/* Add @hook to p->accept_missing (once). 0 or -ENOMEM. */
static int add_accept(struct policy *p, const char *hook)
{
	char **a;

	for (size_t i = 0; i < p->nr_accept_missing; i++)
		if (!strcmp(p->accept_missing[i], hook))
			return 0;
	a = realloc(p->accept_missing, (p->nr_accept_missing + 2) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	p->accept_missing = a;
	a[p->nr_accept_missing] = strdup(hook);
	if (!a[p->nr_accept_missing])
		return -ENOMEM;
	a[++p->nr_accept_missing] = NULL;
	return 0;
}

/* One "acceptMissing" entry: a hook the programs use. */
static int accept_cb(struct pctx *c, const char *s, long off, size_t arg)
{
	(void)arg;
	if (!hooks__known(s))
		return fail(c, off, "'%s': \"%s\" is not a hook of sbx-bpf's programs (see 'sbx-bpf hooks')",
			    here(c), s);
	return add_accept(c->p, s);
}

static int parse_accept_missing(struct pctx *c, json_t *v, long off, size_t arg)
{
	return for_each_string(c, v, off, accept_cb, arg);
}

int policy_accept_missing(struct policy *p, const char *hook)
{
	return hooks__known(hook) ? add_accept(p, hook) : -ENOENT;
}

int policy_accept_missing_list(struct policy *p, const char *list, char *bad, size_t bad_sz)
{
	char *buf = strdup(list), *save, *h;
	int err = buf ? 0 : -ENOMEM;

	for (h = buf ? strtok_r(buf, ",", &save) : NULL; !err && h; h = strtok_r(NULL, ",", &save)) {
		err = policy_accept_missing(p, h);
		if (err)
			snprintf(bad, bad_sz, "%s", h);
	}
	free(buf);
	return err;
}

static int parse_version(struct pctx *c, json_t *v, long off, size_t arg)
{
	(void)arg;
	if (!json_is_integer(v))
		return fail_type(c, v, off, "the integer 1");
	if (json_integer_value(v) != 1)
		return fail(c, off, "'version' %lld is not supported (this sbx-bpf reads version 1)",
			    (long long)json_integer_value(v));
	return 0;
}

static int parse_description(struct pctx *c, json_t *v, long off, size_t arg)
{
	(void)arg;
	if (!json_is_string(v))
		return fail_type(c, v, off, "a string");
	free(c->p->description);
	c->p->description = strdup(json_string_value(v));
	return c->p->description ? 0 : -ENOMEM;
}

static int parse_mode(struct pctx *c, json_t *v, long off, size_t arg)
{
	const char *s = json_string_value(v);

	(void)arg;
	if (!json_is_string(v))
		return fail_type(c, v, off, "\"enforce\" or \"audit\"");
	if (strcmp(s, "enforce") && strcmp(s, "audit"))
		return fail(c, off, "'mode' must be \"enforce\" or \"audit\", not \"%s\"", s);
	c->p->mode = strcmp(s, "audit") ? POLICY_ENFORCE : POLICY_AUDIT;
	return 0;
}

/*
 * limits: the flags of `run` in camelCase, each value parsed by limits.c
 * exactly as the flag's ("2G", "150%"), so the unit rules and messages are
 * one. A whole number may be a JSON integer ("pids": 256). The io keys take
 * an array of the flag's "DEV=RATE" strings.
 */
static const char *const limit_flags[] = {
	"cpu", "cpu-weight", "memory", "memory-high", "swap-max", "io-read-bps", "io-write-bps",
	"io-read-iops", "io-write-iops", "pids", "timeout",
};

static int set_limit(struct pctx *c, const char *label, const char *s, long off, size_t flag)
{
	char err[512];

	if (limits_parse(&c->p->limits, limit_flags[flag], s, label, err, sizeof(err)))
		return fail(c, off, "%s", err);
	return 0;
}

static int parse_limit(struct pctx *c, json_t *v, long off, size_t flag)
{
	char num[24];

	if (json_is_integer(v)) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		return set_limit(c, here(c), num, off, flag);
	}
	if (!json_is_string(v))
		return fail_type(c, v, off, "a string or a whole number");
	return set_limit(c, here(c), json_string_value(v), off, flag);
}

static int io_limit_cb(struct pctx *c, const char *s, long off, size_t flag)
{
	char label[256];

	return set_limit(c, path_str(c, c->depth - 1, label, sizeof(label)), s, off, flag);
}

static int parse_io_limit(struct pctx *c, json_t *v, long off, size_t flag)
{
	if (!json_is_array(v))
		return fail_type(c, v, off, "an array of \"DEV=RATE\" strings");
	return for_each_string(c, v, off, io_limit_cb, flag);
}

static const struct key_def limits_keys[] = {
	{ "cpu", parse_limit, 0 },
	{ "cpuWeight", parse_limit, 1 },
	{ "memory", parse_limit, 2 },
	{ "memoryHigh", parse_limit, 3 },
	{ "swapMax", parse_limit, 4 },
	{ "ioReadBps", parse_io_limit, 5 },
	{ "ioWriteBps", parse_io_limit, 6 },
	{ "ioReadIops", parse_io_limit, 7 },
	{ "ioWriteIops", parse_io_limit, 8 },
	{ "pids", parse_limit, 9 },
	{ "timeout", parse_limit, 10 },
	{ "oomGroup", parse_bool, offsetof(struct policy, limits.oom_group) },
};

static int parse_limits(struct pctx *c, json_t *v, long off, size_t arg)
{
	(void)arg;
	return parse_object(c, v, off, limits_keys, ARRAY_SIZE(limits_keys));
}

/* credentials.files: srt's "deny" (and "mask", which we cannot do) become denyRead. */
struct cred_file {
	const char *path, *mode;
	long path_off, mode_off;
};

static int parse_cred_path(struct pctx *c, json_t *v, long off, size_t arg)
{
	(void)arg;
	if (!json_is_string(v))
		return fail_type(c, v, off, "a string");
	c->cred->path = json_string_value(v);
	c->cred->path_off = off;
	return 0;
}

static int parse_cred_mode(struct pctx *c, json_t *v, long off, size_t arg)
{
	const char *s = json_string_value(v);

	(void)arg;
	if (!json_is_string(v))
		return fail_type(c, v, off, "\"deny\" or \"mask\"");
	if (strcmp(s, "deny") && strcmp(s, "mask"))
		return fail(c, off, "'%s' must be \"deny\" or \"mask\", not \"%s\"", here(c), s);
	c->cred->mode = s;
	c->cred->mode_off = off;
	return 0;
}

/* A key sandbox-runtime defines that means nothing here: accepted with a warning. */
#define SRT_ONLY(name) { name, NULL, 0 }

static const struct key_def cred_file_keys[] = {
	{ "path", parse_cred_path, 0 },
	{ "mode", parse_cred_mode, 0 },
	SRT_ONLY("extract"), SRT_ONLY("onExtractNoMatch"), SRT_ONLY("decode"),
	SRT_ONLY("maskClaims"), SRT_ONLY("maskDuplicates"), SRT_ONLY("injectHosts"),
};

static int parse_cred_file(struct pctx *c, json_t *v, long off)
{
	struct cred_file cf = {};
	int err;

	c->cred = &cf;
	err = parse_object(c, v, off, cred_file_keys, ARRAY_SIZE(cred_file_keys));
	c->cred = NULL;
	if (err)
		return err;
	if (!cf.path || !cf.mode)
		return fail(c, off, "'%s' needs both \"path\" and \"mode\"", here(c));
	if (!cf.path[0])
		return fail(c, cf.path_off, "empty path");
	if (!strcmp(cf.mode, "mask"))
		warn(c, cf.mode_off, "'%s.mode' \"mask\" is enforced as \"deny\" (sbx-bpf cannot mask "
		     "file contents)", here(c));
	return add_pattern(c, RULE_DENY_READ, cf.path, cf.path_off);
}

static int parse_cred_files(struct pctx *c, json_t *v, long off, size_t arg)
{
	long eoff;
	json_t *e;
	size_t i;

	(void)arg;
	if (!json_is_array(v))
		return fail_type(c, v, off, "an array of objects");
	eoff = c->text ? jloc_first(c->text, off) : -1;
	json_array_foreach(v, i, e) {
		int err;

		push_index(c, i);
		err = parse_cred_file(c, e, eoff);
		c->depth--;
		if (err)
			return err;
		if (eoff >= 0)
			eoff = jloc_next(c->text, eoff);
	}
	return 0;
}

#define NET_FIELD(f) offsetof(struct policy, net.f)

static const struct key_def fs_keys[] = {
	{ "denyRead", parse_rules, RULE_DENY_READ },
	{ "allowRead", parse_rules, RULE_ALLOW_READ },
	{ "allowWrite", parse_rules, RULE_ALLOW_WRITE },
	{ "denyWrite", parse_rules, RULE_DENY_WRITE },
	{ "allowGitConfig", parse_bool, offsetof(struct policy, allow_git_config) },
	SRT_ONLY("disabled"),
};

/* dnsQueryRate, dnsQueryBurst: a whole number of queries (a second, at once), 1 to 1000000. */
static int parse_dns_count(struct pctx *c, json_t *v, long off, size_t field)
{
	json_int_t n = json_integer_value(v);

	if (!json_is_integer(v))
		return fail_type(c, v, off, "a whole number");
	if (n < 1 || n > DNS_RATE_MAX)
		return fail(c, off, "'%s' must be from 1 to %d, not %lld", here(c), DNS_RATE_MAX, (long long)n);
	*(unsigned int *)((char *)c->p + field) = (unsigned int)n;
	return 0;
}

static const struct key_def net_keys[] = {
	{ "allowedDomains", parse_domains, false },
	{ "deniedDomains", parse_domains, true },
	{ "allowUnixSockets", parse_sockets, 0 },
	{ "allowAllUnixSockets", parse_bool, NET_FIELD(allow_all_unix_sockets) },
	{ "allowLocalBinding", parse_bool, NET_FIELD(allow_local_binding) },
	{ "allowAllDomains", parse_bool, NET_FIELD(allow_all_domains) },
	{ "allow", parse_cidrs, false },
	{ "deny", parse_cidrs, true },
	{ "allowAbstractUnixSockets", parse_bool, NET_FIELD(allow_abstract_unix_sockets) },
	{ "allowLoopback", parse_loopback, 0 },
	{ "allowRawSockets", parse_bool, NET_FIELD(allow_raw_sockets) },
	{ "dnsQueryRate", parse_dns_count, NET_FIELD(dns_rate) },
	{ "dnsQueryBurst", parse_dns_count, NET_FIELD(dns_burst) },
	SRT_ONLY("deniedDomainReasons"), SRT_ONLY("strictAllowlist"),
	SRT_ONLY("allowMachLookup"), SRT_ONLY("httpProxyPort"), SRT_ONLY("socksProxyPort"),
	SRT_ONLY("mitmProxy"), SRT_ONLY("filterRequest"), SRT_ONLY("tlsTerminate"),
	SRT_ONLY("parentProxy"),
};

static const struct key_def cred_keys[] = {
	{ "files", parse_cred_files, 0 },
	SRT_ONLY("envVars"), SRT_ONLY("allowPlaintextInject"), SRT_ONLY("awsPairs"), SRT_ONLY("sigv4"),
};

static int parse_fs(struct pctx *c, json_t *v, long off, size_t arg)
{
	(void)arg;
	return parse_object(c, v, off, fs_keys, ARRAY_SIZE(fs_keys));
}

static int parse_net(struct pctx *c, json_t *v, long off, size_t arg)
{
	(void)arg;
	return parse_object(c, v, off, net_keys, ARRAY_SIZE(net_keys));
}

static int parse_creds(struct pctx *c, json_t *v, long off, size_t arg)
{
	(void)arg;
	return parse_object(c, v, off, cred_keys, ARRAY_SIZE(cred_keys));
}

static const struct key_def top_keys[] = {
	{ "version", parse_version, 0 },
	{ "description", parse_description, 0 },
	{ "mode", parse_mode, 0 },
	{ "filesystem", parse_fs, 0 },
	{ "network", parse_net, 0 },
	{ "limits", parse_limits, 0 },
	{ "credentials", parse_creds, 0 },
	{ "acceptMissing", parse_accept_missing, 0 },
	SRT_ONLY("ignoreViolations"), SRT_ONLY("enableWeakerNestedSandbox"),
	SRT_ONLY("enableWeakerNetworkIsolation"), SRT_ONLY("allowAppleEvents"), SRT_ONLY("ripgrep"),
	SRT_ONLY("mandatoryDenySearchDepth"), SRT_ONLY("allowPty"), SRT_ONLY("seccomp"),
	SRT_ONLY("bwrapPath"), SRT_ONLY("socatPath"), SRT_ONLY("javaAgentJarPath"),
	SRT_ONLY("windows"), SRT_ONLY("git"),
};

/* --- public API -------------------------------------------------------------------- */

const char *rule_kind_name(enum rule_kind kind)
{
	switch (kind) {
	case RULE_DENY_READ: return "denyRead";
	case RULE_ALLOW_READ: return "allowRead";
	case RULE_ALLOW_WRITE: return "allowWrite";
	case RULE_DENY_WRITE: return "denyWrite";
	case RULE_MANDATORY: return "mandatory";
	case RULE_ALLOW_UNIX: return "allowUnixSockets";
	}
	return "?";
}

const char *rule_scope_name(enum rule_scope scope)
{
	return scope == RULE_ANY_DEPTH ? "any-depth" : "absolute";
}

static struct policy_diag *diag_or(struct policy_diag *diag, struct policy_diag *spare)
{
	if (!diag) {
		memset(spare, 0, sizeof(*spare));
		diag = spare;
	}
	diag->error[0] = '\0';
	return diag;
}

/* Finish a load: hand the private copy over, or drop it and what it warned. */
static int finish(struct pctx *c, struct policy *out, size_t nr_warnings, int err)
{
	free(c->memo);
	c->memo = NULL;
	if (!err && !(c->p->name = strdup(c->name)))
		err = -ENOMEM;
	if (err) {
		if (!c->diag->error[0])
			snprintf(c->diag->error, sizeof(c->diag->error), "%s: %s", c->name, strerror(-err));
		c->diag->nr_warnings = nr_warnings;
		policy_free(c->p);
		return err;
	}
	*out = *c->p;
	return 0;
}

int policy_load_string(struct policy *p, const char *name, const char *json,
		       const struct policy_env *env, struct policy_diag *diag)
{
	struct policy_diag spare;
	struct policy tmp = { .mode = POLICY_ENFORCE };
	struct pctx c = { .p = &tmp, .env = env, .diag = diag_or(diag, &spare), .name = name,
			  .text = json };
	size_t nr_warnings = c.diag->nr_warnings;
	json_error_t jerr;
	json_t *root;
	int err;

	limits_init(&tmp.limits);
	root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(c.diag->error, sizeof(c.diag->error), "%s:%d:%d: invalid JSON: %s", name,
			 jerr.line > 0 ? jerr.line : 1, jerr.column > 0 ? jerr.column : 1, jerr.text);
		return finish(&c, p, nr_warnings, -EINVAL);
	}
	if (!json_is_object(root))
		err = fail(&c, jloc_find(json, NULL, 0, false), "a policy is a JSON object, not %s",
			   type_name(root));
	else
		err = parse_object(&c, root, 0, top_keys, ARRAY_SIZE(top_keys));
	json_decref(root);
	return finish(&c, p, nr_warnings, err);
}

/* The whole file, NUL-terminated; NULL with errno set. */
static char *slurp(const char *file)
{
	FILE *f = fopen(file, "re");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			char *nb = cap >= POLICY_FILE_MAX ? NULL : realloc(buf, cap = cap * 2 + 8192);

			if (!nb) {
				free(buf);
				fclose(f);
				errno = cap >= POLICY_FILE_MAX ? EFBIG : ENOMEM;
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	buf[len] = '\0';
	if (strlen(buf) != len) {	/* jansson would stop at the NUL and miss the rest */
		free(buf);
		errno = EINVAL;
		return NULL;
	}
	return buf;
}

int policy_load(struct policy *p, const char *file, const struct policy_env *env,
		struct policy_diag *diag)
{
	struct policy_diag spare;
	_cleanup_free_ char *text = NULL;

	if (!file)
		return policy_load_preset(p, "agent-default", env, diag);
	diag = diag_or(diag, &spare);
	text = slurp(file);
	if (!text) {
		int err = errno;

		snprintf(diag->error, sizeof(diag->error), "%s: %s", file,
			 err == EFBIG ? "larger than 4 MiB" :
			 err == EINVAL ? "contains a NUL byte" : strerror(err));
		return -err;
	}
	return policy_load_string(p, file, text, env, diag);
}

/* The preset files, linked in from policies/ by presets.S. */
extern const char sbx_preset_agent_default[], sbx_preset_training[], sbx_preset_restricted[],
	sbx_preset_standard[];

static const struct {
	const char *name;
	const char *json;
} presets[] = {
	{ "agent-default", sbx_preset_agent_default },
	{ "training", sbx_preset_training },
	{ "restricted", sbx_preset_restricted },
	{ "standard", sbx_preset_standard },
};

const char *policy_preset_name(size_t i)
{
	return i < ARRAY_SIZE(presets) ? presets[i].name : NULL;
}

int policy_load_preset(struct policy *p, const char *preset, const struct policy_env *env,
		       struct policy_diag *diag)
{
	struct policy_diag spare;

	for (size_t i = 0; i < ARRAY_SIZE(presets); i++)
		if (!strcmp(preset, presets[i].name))
			return policy_load_string(p, presets[i].name, presets[i].json, env, diag);
	diag = diag_or(diag, &spare);
	snprintf(diag->error, sizeof(diag->error),
		 "unknown preset '%s' (one of: agent-default, training, restricted, standard)", preset);
	return -ENOENT;
}

int policy_add_rule(struct policy *p, enum rule_kind kind, const char *pattern,
		    const char *origin, const struct policy_env *env, struct policy_diag *diag)
{
	struct policy_diag spare;
	struct pctx c = { .p = p, .env = env, .diag = diag_or(diag, &spare), .name = origin };

	if (kind == RULE_MANDATORY) {
		snprintf(c.diag->error, sizeof(c.diag->error), "%s: mandatory rules are built in", origin);
		return -EINVAL;
	}
	/* add_pattern appends only once the pattern compiled: on error @p is unchanged. */
	return add_pattern(&c, kind, pattern, -1);
}

/* `run`'s network flags, by enum policy_net_flag: the option, and the origin of what it adds. */
static const struct {
	const char *flag;
	bool has_value;
} net_flags[] = {
	[POLICY_NET_ALLOW_DOMAIN] = { "--allow-domain", true },
	[POLICY_NET_DENY_DOMAIN] = { "--deny-domain", true },
	[POLICY_NET_ALLOW_CIDR] = { "--allow-net", true },
	[POLICY_NET_DENY_CIDR] = { "--deny-net", true },
	[POLICY_NET_ALLOW_UNIX] = { "--allow-unix", true },
	[POLICY_NET_ALLOW_LOCAL_BINDING] = { "--allow-local-binding", false },
	[POLICY_NET_ALLOW_LOOPBACK] = { "--allow-loopback", false },
	[POLICY_NET_ALLOW_ALL_UNIX] = { "--allow-all-unix-sockets", false },
	[POLICY_NET_ALLOW_RAW] = { "--allow-raw-sockets", false },
};

const char *policy_net_flag_name(enum policy_net_flag what)
{
	return (size_t)what < ARRAY_SIZE(net_flags) ? net_flags[what].flag : NULL;
}

bool policy_net_flag_has_value(enum policy_net_flag what)
{
	return (size_t)what < ARRAY_SIZE(net_flags) && net_flags[what].has_value;
}

/* --allow-loopback: allowLoopback's four rules, once. */
static int loopback_flag(struct pctx *c)
{
	int err;

	if (c->p->net.allow_loopback)
		return 0;	/* already on (the policy or an earlier flag): its rules are there */
	err = push_loopback(c->p, false, 0, 65535, "allowLoopback", c->name);
	if (!err)
		c->p->net.allow_loopback = true;
	return err;
}

/* Set the boolean @what names; false if it names an entry with a value. */
static bool set_net_bool(struct policy_network *n, enum policy_net_flag what)
{
	switch (what) {
	case POLICY_NET_ALLOW_LOCAL_BINDING: n->allow_local_binding = true; return true;
	case POLICY_NET_ALLOW_ALL_UNIX: n->allow_all_unix_sockets = true; return true;
	case POLICY_NET_ALLOW_RAW: n->allow_raw_sockets = true; return true;
	default: return false;
	}
}

int policy_add_net(struct policy *p, enum policy_net_flag what, const char *value,
		   const char *origin, const struct policy_env *env, struct policy_diag *diag)
{
	struct policy_diag spare;
	struct pctx c = { .p = p, .env = env, .diag = diag_or(diag, &spare), .name = origin };

	if (what == POLICY_NET_ALLOW_LOOPBACK)
		return loopback_flag(&c);
	if (set_net_bool(&p->net, what))
		return 0;
	if (!value || !value[0])
		return fail(&c, -1, "empty value");
	/* The callbacks of the file's lists: they append only what parsed. */
	switch (what) {
	case POLICY_NET_ALLOW_DOMAIN:
	case POLICY_NET_DENY_DOMAIN:
		return domain_cb(&c, value, -1, what == POLICY_NET_DENY_DOMAIN);
	case POLICY_NET_ALLOW_CIDR:
	case POLICY_NET_DENY_CIDR:
		return cidr_cb(&c, value, -1, what == POLICY_NET_DENY_CIDR);
	case POLICY_NET_ALLOW_UNIX:
		return socket_cb(&c, value, -1, 0);
	default:
		return fail(&c, -1, "not a network flag (%d)", (int)what);
	}
}

/*
 * Files that run code or configure tools the next time a human (or the
 * agent) starts them: writing them is how a sandboxed agent would escape
 * into the future. Matched at any depth; kept out of reach whatever the
 * policy allows.
 */
static const char *const mandatory[] = {
	".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile",
	".ripgreprc", ".mcp.json", ".git/hooks", ".git/config", ".git/config.worktree",
	".git/commondir", ".vscode", ".idea",
	".claude/commands", ".claude/agents",
};

static bool has_rule(const struct policy *p, enum rule_kind kind, const char *path)
{
	for (size_t i = 0; i < p->nr_rules; i++)
		if (p->rules[i].kind == kind && !strcmp(p->rules[i].path, path))
			return true;
	return false;
}

/*
 * Device sinks every tool writes to (git opens /dev/null read-write, shells
 * redirect to it). Under sandbox-runtime they are writable through bwrap's
 * private /dev, so its settings files never list them; allowing them here
 * keeps such files working unchanged. A policy's own rule on the same path
 * (a denyWrite /dev/tty, say) still wins: deny beats allow at one path.
 */
static const char *const builtin_writable[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/tty" };

static int add_builtin_writable(struct policy *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(builtin_writable); i++) {
		char text[64];
		int err;

		if (has_rule(p, RULE_ALLOW_WRITE, builtin_writable[i]))
			continue;
		str_join(text, sizeof(text), "built-in: allowWrite ", builtin_writable[i], "");
		err = push_rule(p, RULE_ALLOW_WRITE, RULE_ABSOLUTE, builtin_writable[i], text, "built-in");
		if (err)
			return err;
	}
	return 0;
}

int policy_add_mandatory(struct policy *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(mandatory); i++) {
		char text[64];
		int err;

		if ((p->allow_git_config && !strncmp(mandatory[i], ".git/config", 11)) ||
		    has_rule(p, RULE_MANDATORY, mandatory[i]))
			continue;
		str_join(text, sizeof(text), "mandatory: ", mandatory[i], "");
		err = push_rule(p, RULE_MANDATORY, RULE_ANY_DEPTH, mandatory[i], text, "built-in");
		if (err)
			return err;
	}
	return add_builtin_writable(p);
}

/*
 * The home directory in /etc/passwd of @name (or, with @name NULL, of
 * @uid). Read directly rather than through getpwnam: the shipped binary is
 * static, and glibc's NSS modules cannot be loaded reliably from one.
 */
static bool passwd_home(const char *name, uid_t uid, char *buf, size_t sz)
{
	FILE *f = fopen("/etc/passwd", "re");
	struct passwd *pw;
	bool found = false;

	if (!f)
		return false;
	while (!found && (pw = fgetpwent(f)))
		if (name ? !strcmp(pw->pw_name, name) : pw->pw_uid == uid)
			found = pw->pw_dir[0] == '/' && (size_t)snprintf(buf, sz, "%s", pw->pw_dir) < sz;
	fclose(f);
	return found;
}

void policy_env_strerror(int err, char *buf, size_t sz)
{
	const char *sudo = getenv("SUDO_USER");

	if (err == -ENOENT && sudo)
		snprintf(buf, sz, "the home of SUDO_USER '%s' is not in /etc/passwd, so '~' cannot be "
			 "expanded safely; set SBX_HOME to that user's home", sudo);
	else
		snprintf(buf, sz, "cannot determine the home and working directories: %s",
			 strerror(-err));
}

int policy_env_default(struct policy_env *env, char *home_buf, size_t home_sz,
		       char *cwd_buf, size_t cwd_sz)
{
	const char *sudo = getenv("SUDO_USER"), *home = getenv("HOME"), *forced = getenv("SBX_HOME");

	env->home = env->cwd = NULL;
	if (forced && forced[0] == '/' && (size_t)snprintf(home_buf, home_sz, "%s", forced) < home_sz)
		env->home = home_buf;
	/*
	 * Under sudo, "~" means the user who ran sudo, not root. If that user's
	 * home cannot be found, $HOME (root's, after sudo) would silently make
	 * every "~" rule protect the wrong directory: fail instead.
	 */
	else if (sudo && sudo[0] && geteuid() == 0) {
		if (!passwd_home(sudo, 0, home_buf, home_sz))
			return -ENOENT;
		env->home = home_buf;
	} else if (home && home[0] == '/' && (size_t)snprintf(home_buf, home_sz, "%s", home) < home_sz)
		env->home = home_buf;
	else if (passwd_home(NULL, getuid(), home_buf, home_sz))
		env->home = home_buf;
	else if (home && home[0] == '/')
		return -ENAMETOOLONG;
	if (!getcwd(cwd_buf, cwd_sz))
		return -errno;
	env->cwd = cwd_buf;
	return 0;
}

const char *policy_rule_text(const struct policy *p, __u32 rule_id)
{
	__u32 i = rule_id & ~SBX_RULE_BASE_MASK;

	if (!p)
		return NULL;
	switch (rule_id & SBX_RULE_BASE_MASK) {
	case SBX_RULE_NET_BASE:
		return i < p->net.nr_rules ? p->net.rules[i].text : NULL;
	case SBX_RULE_DOMAIN_BASE:
		return i < p->net.nr_domains ? p->net.domains[i].text : NULL;
	}
	return rule_id < p->nr_rules ? p->rules[rule_id].text : NULL;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_rules; i++) {
		free(p->rules[i].path);
		free(p->rules[i].text);
		free(p->rules[i].origin);
	}
	free(p->rules);
	free(p->name);
	free(p->description);
	for (size_t i = 0; i < p->net.nr_rules; i++) {
		free(p->net.rules[i].text);
		free(p->net.rules[i].origin);
	}
	free(p->net.rules);
	for (size_t i = 0; i < p->net.nr_domains; i++) {
		free(p->net.domains[i].name);
		free(p->net.domains[i].text);
		free(p->net.domains[i].origin);
	}
	free(p->net.domains);
	for (size_t i = 0; i < p->nr_accept_missing; i++)
		free(p->accept_missing[i]);
	free(p->accept_missing);
	memset(p, 0, sizeof(*p));
}

/* --- output for `check` ---------------------------------------------------------- */

static bool is_v4(const __u8 addr[16], unsigned plen)
{
	return plen >= 96 && net_prefix_contains(v4_mapped, 96, addr, plen);
}

void policy_format_cidr(const __u8 addr[16], unsigned plen, char *buf, size_t sz)
{
	char a[INET6_ADDRSTRLEN];

	if (is_v4(addr, plen)) {
		inet_ntop(AF_INET, addr + 12, a, sizeof(a));
		snprintf(buf, sz, "%s/%u", a, plen - 96);
	} else {
		inet_ntop(AF_INET6, addr, a, sizeof(a));
		snprintf(buf, sz, "%s/%u", a, plen);
	}
}

static const char *ports_str(__u16 lo, __u16 hi, char *buf, size_t sz)
{
	if (lo == 0 && hi == 65535)
		snprintf(buf, sz, "all ports");
	else if (lo == hi)
		snprintf(buf, sz, "port %u", lo);
	else
		snprintf(buf, sz, "ports %u-%u", lo, hi);
	return buf;
}

/* "*.example.com", "example.com", "*" */
static const char *domain_pattern(const struct domain_rule *d, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s%s", d->wildcard ? (d->name[0] ? "*." : "*") : "", d->name);
	return buf;
}

static void print_net_rules(const struct policy_network *n, FILE *out)
{
	char cidr[64], ports[32];

	fprintf(out, "  addresses (rule id 0x%x + #; per port, any deny beats any allow):%s\n",
		SBX_RULE_NET_BASE, n->nr_rules ? "" : " (none)");
	for (size_t i = 0; i < n->nr_rules; i++) {
		const struct net_rule *r = &n->rules[i];

		policy_format_cidr(r->addr, r->plen, cidr, sizeof(cidr));
		fprintf(out, "  %3zu  %-5s %-32s %-17s %s  [%s]\n", i, r->deny ? "deny" : "allow", cidr,
			ports_str(r->lo, r->hi, ports, sizeof(ports)), r->text, r->origin);
	}
}

static void print_domains(const struct policy_network *n, FILE *out)
{
	char name[260], ports[32];

	fprintf(out, "  domains (rule id 0x%x + #; denied beats allowed, then the most specific):%s\n",
		SBX_RULE_DOMAIN_BASE, n->nr_domains ? "" : " (none)");
	for (size_t i = 0; i < n->nr_domains; i++) {
		const struct domain_rule *d = &n->domains[i];

		fprintf(out, "  %3zu  %-5s %-32s %-17s %s  [%s]\n", i, d->deny ? "deny" : "allow",
			domain_pattern(d, name, sizeof(name)), ports_str(d->lo, d->hi, ports, sizeof(ports)),
			d->text, d->origin);
	}
}

static void print_network(const struct policy_network *n, FILE *out)
{
	fprintf(out, "network:\n");
	print_net_rules(n, out);
	print_domains(n, out);
	fprintf(out, "  %-25s%s\n  %-25s%s\n  %-25s%s\n  %-25s%s\n  %-25s%s\n  %-25s%s\n",
		"allowAllDomains", n->allow_all_domains ? "true" : "false",
		"allowAllUnixSockets", n->allow_all_unix_sockets ? "true" : "false",
		"allowAbstractUnixSockets", n->allow_abstract_unix_sockets ? "true" : "false",
		"allowLocalBinding", n->allow_local_binding ? "true" : "false",
		"allowLoopback", n->allow_loopback ? "true" : "false",
		"allowRawSockets", n->allow_raw_sockets ? "true" : "false");
	fprintf(out, "  %-25s%u a second, bursts of %u\n", "dnsQueryRate", n->dns_rate ?: DNS_DEFAULT_RATE,
		n->dns_burst ?: DNS_DEFAULT_BURST);
}

/* The cgroup files the limits write, then the timeout. */
static void print_limits(const struct sbx_limits *l, FILE *out)
{
	struct limit_write w[LIMITS_WRITES_MAX];
	int n = limits_writes(l, w, ARRAY_SIZE(w));
	char t[64];

	fprintf(out, "limits:\n");
	for (int i = 0; i < n; i++)
		fprintf(out, "  %-25s%s\n", w[i].file, w[i].value);
	limits_format_duration(l->timeout_ms, t, sizeof(t));
	if (l->timeout_ms == LIMIT_UNSET)
		fprintf(out, "  %-25s(none)\n", "timeout");
	else
		fprintf(out, "  %-25s%s (%lld ms)\n", "timeout", t, l->timeout_ms);
}

void policy_print(const struct policy *p, FILE *out)
{
	fprintf(out, "policy %s (%s)\n", p->name ? p->name : "(command line)",
		p->mode == POLICY_AUDIT ? "audit" : "enforce");
	if (p->description)
		fprintf(out, "  %s\n", p->description);
	fprintf(out, "rules: %zu\n", p->nr_rules);
	for (size_t i = 0; i < p->nr_rules; i++) {
		const struct policy_rule *r = &p->rules[i];

		fprintf(out, "  %3zu  %-10s %-9s %-40s %s  [%s]\n", i, rule_kind_name(r->kind),
			rule_scope_name(r->scope), r->path, r->text, r->origin);
	}
	print_network(&p->net, out);
	print_limits(&p->limits, out);
	if (p->nr_accept_missing) {
		fprintf(out, "may run without (acceptMissing):");
		for (size_t i = 0; i < p->nr_accept_missing; i++)
			fprintf(out, "%s%s", i ? ", " : " ", p->accept_missing[i]);
		fputc('\n', out);
	}
}

/* {"id": 1073741824, "index": 0, "verdict": "allow", "cidr": "10.0.0.0/8", "ports": [443, 443], …} */
static json_t *net_rules_json(const struct policy_network *n)
{
	json_t *a = json_array();
	char cidr[64];

	for (size_t i = 0; i < n->nr_rules; i++) {
		const struct net_rule *r = &n->rules[i];

		policy_format_cidr(r->addr, r->plen, cidr, sizeof(cidr));
		json_array_append_new(a, json_pack("{s:I, s:I, s:s, s:s, s:[i, i], s:s, s:s}",
			"id", (json_int_t)(SBX_RULE_NET_BASE + i), "index", (json_int_t)i,
			"verdict", r->deny ? "deny" : "allow", "cidr", cidr, "ports", r->lo, r->hi,
			"text", r->text, "origin", r->origin));
	}
	return a;
}

static json_t *domains_json(const struct policy_network *n)
{
	json_t *a = json_array();
	char pat[260];

	for (size_t i = 0; i < n->nr_domains; i++) {
		const struct domain_rule *d = &n->domains[i];

		json_array_append_new(a, json_pack("{s:I, s:I, s:s, s:s, s:s, s:b, s:[i, i], s:s, s:s}",
			"id", (json_int_t)(SBX_RULE_DOMAIN_BASE + i), "index", (json_int_t)i,
			"verdict", d->deny ? "deny" : "allow",
			"pattern", domain_pattern(d, pat, sizeof(pat)), "name", d->name,
			"wildcard", d->wildcard, "ports", d->lo, d->hi, "text", d->text,
			"origin", d->origin));
	}
	return a;
}

/* The resolved paths of the allowUnixSockets rules (also in "rules", as kind allowUnixSockets). */
static json_t *unix_sockets_json(const struct policy *p)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->nr_rules; i++)
		if (p->rules[i].kind == RULE_ALLOW_UNIX)
			json_array_append_new(a, json_string(p->rules[i].path));
	return a;
}

static json_t *network_json(const struct policy *p)
{
	const struct policy_network *n = &p->net;

	return json_pack("{s:o, s:o, s:o, s:b, s:b, s:b, s:b, s:b, s:b, s:i, s:i}",
			 "rules", net_rules_json(n),
			 "domains", domains_json(n),
			 "unixSockets", unix_sockets_json(p),
			 "allowAllDomains", n->allow_all_domains,
			 "allowAllUnixSockets", n->allow_all_unix_sockets,
			 "allowAbstractUnixSockets", n->allow_abstract_unix_sockets,
			 "allowLocalBinding", n->allow_local_binding,
			 "allowLoopback", n->allow_loopback,
			 "allowRawSockets", n->allow_raw_sockets,
			 "dnsQueryRate", (int)(n->dns_rate ?: DNS_DEFAULT_RATE),
			 "dnsQueryBurst", (int)(n->dns_burst ?: DNS_DEFAULT_BURST));
}

/* {"cpu.max": "150000 100000", …, "io.max": ["8:0 rbps=5000000"], "timeout_ms": 1800000|null} */
static json_t *limits_json(const struct sbx_limits *l)
{
	struct limit_write w[LIMITS_WRITES_MAX];
	int n = limits_writes(l, w, ARRAY_SIZE(w));
	json_t *o = json_object(), *io = json_array();

	for (int i = 0; i < n; i++)
		if (!strcmp(w[i].file, "io.max"))
			json_array_append_new(io, json_string(w[i].value));
		else
			json_object_set_new(o, w[i].file, json_string(w[i].value));
	if (json_array_size(io))
		json_object_set_new(o, "io.max", io);
	else
		json_decref(io);
	json_object_set_new(o, "timeout_ms", l->timeout_ms == LIMIT_UNSET ? json_null() :
			    json_integer(l->timeout_ms));
	return o;
}

char *policy_to_json(const struct policy *p)
{
	json_t *rules = json_array(), *accept = json_array(), *doc;
	char *s;

	for (size_t i = 0; i < p->nr_rules; i++) {
		const struct policy_rule *r = &p->rules[i];

		json_array_append_new(rules, json_pack("{s:I, s:s, s:s, s:s, s:s, s:s}",
			"id", (json_int_t)i, "kind", rule_kind_name(r->kind),
			"scope", rule_scope_name(r->scope), "path", r->path, "text", r->text,
			"origin", r->origin));
	}
	for (size_t i = 0; i < p->nr_accept_missing; i++)
		json_array_append_new(accept, json_string(p->accept_missing[i]));
	doc = json_pack("{s:s?, s:s?, s:s, s:b, s:o, s:o, s:o, s:o}",
			"name", p->name, "description", p->description,
			"mode", p->mode == POLICY_AUDIT ? "audit" : "enforce",
			"allowGitConfig", p->allow_git_config, "rules", rules,
			"network", network_json(p),
			"limits", limits_json(&p->limits), "acceptMissing", accept);
	s = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	return s;
}

/*
 * The digest: FNV-1a over what policy_to_json() writes, field by field,
 * each string length-prefixed (so "ab","c" and "a","bc" differ) and NULL
 * told from "". Equal policies, equal digests, without building and
 * dumping a JSON document: that cost every `run` 0.85 M instructions.
 */
static void dg_bytes(__u64 *h, const void *p, size_t n)
{
	for (const unsigned char *c = p; n--; c++)
		*h = sbx_hash_byte(*h, *c);
}

static void dg_num(__u64 *h, __u64 v)
{
	dg_bytes(h, &v, sizeof(v));
}

static void dg_str(__u64 *h, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	dg_num(h, s ? n : ~0ULL);
	dg_bytes(h, s, n);
}

static void dg_network(__u64 *h, const struct policy_network *n)
{
	const bool flags[] = { n->allow_all_domains, n->allow_all_unix_sockets,
			       n->allow_abstract_unix_sockets, n->allow_local_binding,
			       n->allow_loopback, n->allow_raw_sockets };

	dg_num(h, n->nr_rules);
	for (size_t i = 0; i < n->nr_rules; i++) {
		const struct net_rule *r = &n->rules[i];

		dg_num(h, r->deny);
		dg_bytes(h, r->addr, sizeof(r->addr));
		dg_num(h, (__u64)r->plen << 32 | (__u64)r->lo << 16 | r->hi);
		dg_str(h, r->text);
		dg_str(h, r->origin);
	}
	dg_num(h, n->nr_domains);
	for (size_t i = 0; i < n->nr_domains; i++) {
		const struct domain_rule *d = &n->domains[i];

		dg_num(h, (__u64)d->deny << 33 | (__u64)d->wildcard << 32 | (__u64)d->lo << 16 | d->hi);
		dg_str(h, d->name);
		dg_str(h, d->text);
		dg_str(h, d->origin);
	}
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
		dg_num(h, flags[i]);
	dg_num(h, (__u64)(n->dns_rate ?: DNS_DEFAULT_RATE) << 32 | (n->dns_burst ?: DNS_DEFAULT_BURST));
}

static void dg_limits(__u64 *h, const struct sbx_limits *l)
{
	struct limit_write w[LIMITS_WRITES_MAX];
	int n = limits_writes(l, w, ARRAY_SIZE(w));

	dg_num(h, (__u64)(__s64)n);
	for (int i = 0; i < n; i++) {
		dg_str(h, w[i].file);
		dg_str(h, w[i].value);
	}
	dg_num(h, (__u64)l->timeout_ms);
}

__u64 policy_digest(const struct policy *p)
{
	__u64 h = SBX_HASH_INIT;

	dg_str(&h, p->name);
	dg_str(&h, p->description);
	dg_num(&h, (__u64)p->mode << 1 | p->allow_git_config);
	dg_num(&h, p->nr_rules);
	for (size_t i = 0; i < p->nr_rules; i++) {
		const struct policy_rule *r = &p->rules[i];

		dg_num(&h, (__u64)r->kind << 8 | r->scope);
		dg_str(&h, r->path);
		dg_str(&h, r->text);
		dg_str(&h, r->origin);
	}
	dg_network(&h, &p->net);
	dg_limits(&h, &p->limits);
	dg_num(&h, p->nr_accept_missing);
	for (size_t i = 0; i < p->nr_accept_missing; i++)
		dg_str(&h, p->accept_missing[i]);
	return h;
}

/* --- path helpers (also used by the loader's callers) ---------------------------- */

int path_normalize(const char *in, const char *cwd, char *out, size_t sz)
{
	char buf[PATH_MAX * 2];
	size_t len = 0;
	const char *p;

	if (!in[0])
		return -EINVAL;
	if (in[0] == '/')
		str_join(buf, sizeof(buf), in, "", "");
	else if (cwd && cwd[0] == '/')
		str_join(buf, sizeof(buf), cwd, "/", in);
	else
		return -EINVAL;

	/* out holds "/a/b" without trailing slash; len its length. */
	for (p = buf; *p;) {
		const char *end;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchrnul(p, '/');
		n = end - p;
		if (n == 1 && p[0] == '.') {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;	/* the slash itself */
		} else {
			if (len + 1 + n + 1 > sz)
				return -ENAMETOOLONG;
			out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
		}
		p = end;
	}
	if (len == 0) {
		if (sz < 2)
			return -ENAMETOOLONG;
		out[len++] = '/';
	}
	out[len] = '\0';
	return 0;
}

int path_resolve(char *path, size_t sz)
{
	char prefix[PATH_MAX], real[PATH_MAX], joined[PATH_MAX * 2];
	const char *rest;

	if (strlen(path) >= sizeof(prefix))
		return -ENAMETOOLONG;
	strcpy(prefix, path);
	/* Shorten to the longest prefix that exists; "/" always does. */
	while (!realpath(prefix, real)) {
		char *slash = strrchr(prefix, '/');

		if (!slash)
			return -EINVAL;
		if (slash == prefix)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	rest = strcmp(prefix, "/") ? path + strlen(prefix) : path;
	str_join(joined, sizeof(joined), strcmp(real, "/") ? real : "", rest, "");
	return path_normalize(joined[0] ? joined : "/", NULL, path, sz);
}
