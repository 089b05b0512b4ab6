// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbxstate.c — what `attach` put on each cgroup, as one JSON file per
 * cgroup under the state directory (/run/sbx-bpf/sandboxes/CGID.json):
 * the policy's name, a hash of what it compiled to, the mode, the text of
 * every rule by id, the limit files attach wrote ("limits") and what they
 * held before sbx-bpf first wrote them ("limits_restore"), the file rules
 * as compiled ("fs"), the cgroup's live grants ("grants", see
 * grants.h), and for an attach with domain rules the rules the daemon's
 * resolver applies ("resolver"). `list` shows it; the daemon, which never
 * saw the policy file, names the rule of each event from it and runs the
 * cgroup's resolver by it; `detach` puts the old limit values back from
 * it; `grant` compiles the policy's file rules again from it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "policy.h"
#include "sbx_abi.h"
#include "sbxstate.h"
#include "util.h"

int state_path(const char *dir, __u64 cgid, const char *suffix, char *buf, size_t sz)
{
	return (size_t)snprintf(buf, sz, "%s/%llu.json%s", dir, (unsigned long long)cgid, suffix) < sz ?
	       0 : -ENAMETOOLONG;
}

/* The compiled policy's digest (policy_digest): equal policies, equal hashes. */
static void policy_hash(const struct policy *p, char *out, size_t sz)
{
	snprintf(out, sz, "%016llx", (unsigned long long)policy_digest(p));
}

/* The texts of rules [@from, @to) of one kind, by @get. */
static json_t *texts(size_t from, size_t to, const char *(*get)(const struct policy *, size_t),
		     const struct policy *p)
{
	json_t *a = json_array();

	for (size_t i = from; a && i < to; i++)
		json_array_append_new(a, json_string(get(p, i)));
	return a;
}

static const char *fs_text(const struct policy *p, size_t i) { return p->rules[i].text; }
static const char *net_text(const struct policy *p, size_t i) { return p->net.rules[i].text; }
static const char *dom_text(const struct policy *p, size_t i) { return p->net.domains[i].text; }

static int mkdir_p(const char *dir)
{
	char p[PATH_MAX];

	if ((size_t)snprintf(p, sizeof(p), "%s", dir) >= sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return mkdir(p, 0755) && errno != EEXIST ? -errno : 0;
}

#define FS_RULE_MAX	(64 + PATH_MAX)

/* "KIND SCOPE PATH" into @buf (FS_RULE_MAX), by hand: a printf per rule was a third of what is left. */
static size_t fs_rule_string(const struct policy_rule *r, char *buf)
{
	const char *kind = rule_kind_name(r->kind), *scope = rule_scope_name(r->scope);
	size_t nk = strlen(kind), ns = strlen(scope), np = strlen(r->path);
	char *s = buf;

	if (nk + ns + np + 2 > FS_RULE_MAX)
		return 0;
	memcpy(s, kind, nk);
	s[nk] = ' ';
	memcpy(s += nk + 1, scope, ns);
	s[ns] = ' ';
	memcpy(s += ns + 1, r->path, np);
	return nk + ns + np + 2;
}

static json_t *fs_rule_json(const struct policy_rule *r)
{
	char buf[FS_RULE_MAX];
	size_t n = fs_rule_string(r, buf);

	return n ? json_stringn(buf, n) : NULL;
}

/*
 * The file rules as compiled, by rule id: what `grant` compiles again to
 * know the policy's own value of every key, without the policy file (which
 * may have changed or gone since, or was a preset), $HOME, the working
 * directory or symlinks as they were then. Each is one string, "KIND SCOPE
 * PATH" (the path is the rest, spaces and all): an object per rule cost a
 * run about a third of its record's instructions. NULL when one cannot be
 * said (no memory, a path that is not UTF-8): the record then has no "fs",
 * which grant refuses, rather than one with a hole, which would have grant
 * compile another policy; events still find their rules' texts.
 */
static json_t *fs_rules_json(const struct policy *p, size_t from, size_t to)
{
	json_t *a = json_array();

	for (size_t i = from; a && i < to; i++) {
		if (json_array_append_new(a, fs_rule_json(&p->rules[i]))) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

/*
 * The domain rules as the resolver applies them, in the policy's order (a
 * rule id is SBX_RULE_DOMAIN_BASE + index, as in "domains"). Names only:
 * IP literals and "localhost" are CIDR rules, already in the kernel.
 */
static json_t *resolver_json(const struct policy *p)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < p->net.nr_domains; i++) {
		const struct domain_rule *d = &p->net.domains[i];

		json_array_append_new(a, json_pack("{s:s, s:b, s:b, s:i, s:i}", "name", d->name,
						   "wildcard", d->wildcard, "deny", d->deny,
						   "lo", (int)d->lo, "hi", (int)d->hi));
	}
	return json_pack("{s:b, s:o, s:i, s:i}", "allow_all_domains", p->net.allow_all_domains, "domains", a,
			 "dns_rate", (int)p->net.dns_rate, "dns_burst", (int)p->net.dns_burst);
}

/* A re-attach keeps the cgroup's grants (re-installed on the new policy id). */
static int keep_grants(json_t *o, const struct state_entry *e)
{
	if (!e->grants)
		return 0;
	if (json_object_set_new(o, "grants", json_deep_copy(e->grants)) ||
	    json_object_set_new(o, "next_grant_id", json_integer(e->next_grant_id)) ||
	    json_object_set_new(o, "grants_fs_until_ns", json_integer((json_int_t)e->grants_fs_until_ns)))
		return -ENOMEM;
	return 0;
}

/*
 * The built-in rules (origin "built-in": the mandatory ones and the
 * writable devices policy_add_mandatory() appends, the same in nearly every
 * policy) are two thirds of a record's text, and building and dumping
 * them was half of what writing a record cost `run`. So they go once into
 * a file of their own beside the records, "builtin-HASH.json" ({"rules",
 * "fs"}, as in a record), named by a digest of its strings, which the
 * record names ("builtin"); each run after the first only checks that the
 * file is there. state_read() puts them back, so every reader sees the
 * whole record, and one written back (grant, attach) is whole again.
 */
#define BUILTIN_KEY	"builtin"

/* Where the trailing run of built-in rules starts (nr_rules: none). */
static size_t builtin_tail(const struct policy *p)
{
	size_t i = p->nr_rules;

	while (i > 0 && p->rules[i - 1].origin && !strcmp(p->rules[i - 1].origin, "built-in"))
		i--;
	return i;
}

/* FNV-1a (sbx_abi.h sbx_hash_byte) over @n bytes and a 0 (so "ab","c" is not "a","bc"). */
static __u64 fnv(__u64 h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = sbx_hash_byte(h, (unsigned char)s[i]);
	return sbx_hash_byte(h, 0);
}

static int builtin_path(const char *dir, __u64 digest, char *buf, size_t sz)
{
	return (size_t)snprintf(buf, sz, "%s/builtin-%016llx.json", dir, (unsigned long long)digest) < sz ?
	       0 : -ENAMETOOLONG;
}

/* The digest of rules [@from, nr_rules): each one's text and its "fs" string. */
static __u64 builtin_digest(const struct policy *p, size_t from)
{
	char buf[FS_RULE_MAX];
	__u64 h = SBX_HASH_INIT;

	for (size_t i = from; i < p->nr_rules; i++) {
		h = fnv(h, p->rules[i].text, strlen(p->rules[i].text));
		h = fnv(h, buf, fs_rule_string(&p->rules[i], buf));
	}
	return h;
}

/* The same over the two arrays of a builtin file, into @h; false when they are not two such arrays. */
static bool builtin_digest_json(const json_t *rules, const json_t *fs, __u64 *h)
{
	size_t i, n = json_array_size(rules);

	*h = SBX_HASH_INIT;
	if (!json_is_array(rules) || !json_is_array(fs) || json_array_size(fs) != n || !n)
		return false;
	for (i = 0; i < n; i++) {
		const json_t *t = json_array_get(rules, i), *f = json_array_get(fs, i);

		if (!json_is_string(t) || !json_is_string(f))
			return false;
		*h = fnv(*h, json_string_value(t), json_string_length(t));
		*h = fnv(*h, json_string_value(f), json_string_length(f));
	}
	return true;
}

/*
 * @o as the file @path, published whole with link(): a temporary of its
 * own (O_EXCL: never another writer's, whatever its pid namespace), then
 * linked in unless another writer's identical file got there first.
 */
static int publish(const json_t *o, const char *path)
{
	char tmp[PATH_MAX + 16], *text = json_dumps(o, JSON_COMPACT);
	int fd, err;

	if (!text)
		return -ENOMEM;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	err = fd < 0 ? -errno : fchmod(fd, 0644) ? -errno : write_all(fd, text, strlen(text));
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (!err && link(tmp, path) && errno != EEXIST)
		err = -errno;
	if (fd >= 0)
		unlink(tmp);
	free(text);
	return err;
}

/* Make sure the builtin file of rules [@from, …) is in @dir; its digest, in @digest. */
static int builtin_put(const char *dir, const struct policy *p, size_t from, __u64 *digest)
{
	char path[PATH_MAX];
	json_t *o;
	int err;

	*digest = builtin_digest(p, from);
	err = builtin_path(dir, *digest, path, sizeof(path));
	if (err || !access(path, F_OK))
		return err;
	o = json_pack("{s:o, s:o*}", "rules", texts(from, p->nr_rules, fs_text, p),
		      "fs", fs_rules_json(p, from, p->nr_rules));
	if (!o)
		return -ENOMEM;
	err = json_object_get(o, "fs") ? 0 : -EILSEQ;	/* not said in JSON: built-in paths always are */
	if (!err && (err = publish(o, path)) == -ENOENT && !(err = mkdir_p(dir)))
		err = publish(o, path);
	json_decref(o);
	return err;
}

/*
 * The record's built-in rules back in place: appended to "rules" and
 * "fs" (rule ids follow on from the record's own). When the file is gone
 * or is not what its name says, the record loses "fs" (grant refuses, as it
 * says) and events name none of these rules: never another policy.
 */
static void builtin_merge(const char *dir, json_t *st)
{
	const char *name = json_string_value(json_object_get(st, BUILTIN_KEY));
	char path[PATH_MAX], *end;
	unsigned long long digest;
	json_t *b = NULL, *rules, *fs;
	bool ok = false;
	__u64 h;

	if (!name)
		return;
	digest = strtoull(name, &end, 16);
	if (!*end && end != name && !builtin_path(dir, digest, path, sizeof(path)))
		b = json_load_file(path, 0, NULL);
	rules = json_object_get(b, "rules");
	fs = json_object_get(b, "fs");
	if (b && builtin_digest_json(rules, fs, &h) && h == digest && json_is_array(json_object_get(st, "rules"))) {
		ok = !json_array_extend(json_object_get(st, "rules"), rules);
		if (ok && json_object_get(st, "fs"))
			ok = json_is_array(json_object_get(st, "fs")) &&
			     !json_array_extend(json_object_get(st, "fs"), fs);
	}
	if (!ok)
		json_object_del(st, "fs");
	json_object_del(st, BUILTIN_KEY);
	json_decref(b);
}

int state_write(const char *dir, const struct state_entry *e, const struct policy *p)
{
	size_t tail = builtin_tail(p);
	char hash[17], digest_hex[17];
	__u64 digest = 0;
	json_t *o;
	int err;

	/* Without the builtin file, the record holds every rule itself. */
	if (tail < p->nr_rules && builtin_put(dir, p, tail, &digest))
		tail = p->nr_rules;
	snprintf(digest_hex, sizeof(digest_hex), "%016llx", (unsigned long long)digest);
	policy_hash(p, hash, sizeof(hash));
	o = json_pack("{s:s, s:I, s:i, s:s, s:s, s:s, s:I, s:o, s:o, s:o, s:o*, s:o, s:o}",
		      "cgroup", e->cgroup, "cgroup_id", (json_int_t)e->cgroup_id,
		      "policy_id", (int)e->policy_id, "policy", p->name ? p->name : "",
		      "policy_hash", hash, "mode", e->audit ? "audit" : "enforce",
		      "attached", (json_int_t)time(NULL),
		      "rules", texts(0, tail, fs_text, p),
		      "net_rules", texts(0, p->net.nr_rules, net_text, p),
		      "domains", texts(0, p->net.nr_domains, dom_text, p),
		      "fs", fs_rules_json(p, 0, tail),	/* none (o*): grant refuses, the rest is still said */
		      "limits", state_limits_json(e->limits, e->nr_limits),
		      "limits_restore", state_limits_json(e->restore, e->nr_restore));
	if (!o)
		return -ENOMEM;
	err = tail < p->nr_rules && json_object_set_new(o, BUILTIN_KEY, json_string(digest_hex)) ? -ENOMEM : 0;
	err = err ?: keep_grants(o, e);
	if (!err && e->resolver && json_object_set_new(o, "resolver", resolver_json(p)))
		err = -ENOMEM;
	if (!err && json_object_size(e->labels) && json_object_set_new(o, "labels", json_deep_copy(e->labels)))
		err = -ENOMEM;
	if (!err && e->watch_limits &&
	    json_object_set_new(o, "limit_events", json_pack("{s:I, s:I}", "oom_kill", (json_int_t)e->oom_kill_at,
							     "pids_max", (json_int_t)e->pids_max_at)))
		err = -ENOMEM;
	if (!err)
		err = state_write_record(dir, e->cgroup_id, o);
	json_decref(o);
	return err;
}

/*
 * open(@path) of a file in @dir, @dir made first if it is missing: tried
 * as it usually is, there, without a mkdir() of every component on the
 * way (one path walk each) at every record and every lock.
 */
static int open_in(const char *dir, const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags, mode), err;

	if (fd >= 0 || errno != ENOENT)
		return fd < 0 ? -errno : fd;
	err = mkdir_p(dir);
	if (err)
		return err;
	fd = open(path, flags, mode);
	return fd < 0 ? -errno : fd;
}

/*
 * @record into a new file @path in @dir, the text written whole:
 * json_dump_file() goes through stdio a token at a time (a third of the
 * record's cost to `run`). The caller unlinks @path when this fails.
 */
static int dump_to(const json_t *record, const char *dir, const char *path)
{
	char *text = json_dumps(record, JSON_COMPACT);
	int fd, err;

	if (!text)
		return -ENOMEM;
	fd = open_in(dir, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	err = fd < 0 ? fd : write_all(fd, text, strlen(text));	/* ENOSPC, EDQUOT… said as they are */
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	free(text);
	return err;
}

int state_write_record(const char *dir, __u64 cgid, const json_t *record)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int err;

	err = state_path(dir, cgid, "", path, sizeof(path)) ?: state_path(dir, cgid, ".tmp", tmp, sizeof(tmp));
	if (err)
		return err;
	/* Whole or not at all: readers never see half a file. */
	err = dump_to(record, dir, tmp);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static int lock(const char *dir, int how)
{
	char path[PATH_MAX];
	int fd, err;

	if ((size_t)snprintf(path, sizeof(path), "%s/.lock", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open_in(dir, path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return fd;
	if (flock(fd, how)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int state_lock(const char *dir)
{
	return lock(dir, LOCK_EX);
}

int state_trylock(const char *dir)
{
	return lock(dir, LOCK_EX | LOCK_NB);
}

int state_remove(const char *dir, __u64 cgid)
{
	char path[PATH_MAX];
	int err = state_path(dir, cgid, "", path, sizeof(path));

	if (!err && unlink(path) && errno != ENOENT)
		err = -errno;
	return err;
}

json_t *state_read(const char *dir, __u64 cgid)
{
	char path[PATH_MAX];
	json_t *st;

	if (state_path(dir, cgid, "", path, sizeof(path)))
		return NULL;
	st = json_load_file(path, 0, NULL);
	if (json_is_object(st))
		builtin_merge(dir, st);
	return st;
}

int state_ino(const char *dir, __u64 cgid, __u64 *ino)
{
	char path[PATH_MAX];
	struct stat st;
	int err = state_path(dir, cgid, "", path, sizeof(path));

	if (err)
		return err;
	if (stat(path, &st))
		return -errno;
	*ino = st.st_ino;
	return 0;
}

/* Grant ids are not indices: grants come and go. The text was made when the grant was. */
static const char *grant_text(const json_t *st, __u32 id)
{
	const json_t *g;
	size_t i;

	json_array_foreach(json_object_get(st, "grants"), i, g)
		if (json_integer_value(json_object_get(g, "id")) == (json_int_t)id)
			return json_string_value(json_object_get(g, "text"));
	return NULL;
}

const char *state_rule_text(const json_t *st, __u32 rule_id)
{
	const char *list = "rules";
	__u32 i = rule_id & ~SBX_RULE_BASE_MASK;

	if (rule_id >= SBX_RULE_FIRST_BUILTIN)
		return NULL;
	switch (rule_id & SBX_RULE_BASE_MASK) {
	case SBX_RULE_NET_BASE: list = "net_rules"; break;
	case SBX_RULE_DOMAIN_BASE: list = "domains"; break;
	case SBX_RULE_GRANT_BASE: return grant_text(st, i);
	case 0: i = rule_id; break;
	default: return NULL;
	}
	return json_string_value(json_array_get(json_object_get(st, list), i));
}

json_t *state_limits_json(const struct limit_write *w, size_t n)
{
	json_t *o = json_object(), *io = json_array();

	for (size_t i = 0; o && io && i < n; i++)
		if (!strcmp(w[i].file, "io.max"))
			json_array_append_new(io, json_string(w[i].value));
		else
			json_object_set_new(o, w[i].file, json_string(w[i].value));
	if (json_array_size(io))
		json_object_set_new(o, "io.max", io);
	else
		json_decref(io);
	return o;
}

static int push_limit(struct limit_write *out, size_t max, size_t *n, const char *file, const json_t *v)
{
	if (!json_is_string(v))
		return -EINVAL;
	if (*n >= max)
		return -E2BIG;
	snprintf(out[*n].file, sizeof(out[*n].file), "%s", file);
	snprintf(out[*n].value, sizeof(out[*n].value), "%s", json_string_value(v));
	(*n)++;
	return 0;
}

static bool known_file(const char *file)
{
	for (size_t i = 0; limits_file_name(i); i++)
		if (!strcmp(file, limits_file_name(i)))
			return true;
	return false;
}

int state_limits(const json_t *st, const char *key, struct limit_write *out, size_t max)
{
	const json_t *o = json_object_get(st, key), *v, *line;
	const char *file, *k;
	size_t n = 0, j;
	int err = 0;

	if (!o)
		return 0;
	if (!json_is_object(o))
		return -EINVAL;
	json_object_foreach((json_t *)o, k, v)
		if (!known_file(k))
			return -EINVAL;
	/* In the order of the writes: detach undoes them last first. */
	for (size_t i = 0; !err && (file = limits_file_name(i)); i++) {
		v = json_object_get(o, file);
		if (!v)
			continue;
		if (!strcmp(file, "io.max") && json_is_array(v))
			json_array_foreach(v, j, line)
				err = err ?: push_limit(out, max, &n, file, line);
		else
			err = push_limit(out, max, &n, file, v);
	}
	return err ? err : (int)n;
}

/* One entry of "resolver"."domains" into @d. 0 or -EINVAL / -ENOMEM. */
static int domain_from(const json_t *j, const json_t *text, struct domain_rule *d)
{
	const json_t *name = json_object_get(j, "name"), *lo = json_object_get(j, "lo"),
		     *hi = json_object_get(j, "hi");
	const json_t *wild = json_object_get(j, "wildcard"), *deny = json_object_get(j, "deny");

	if (!json_is_string(name) || json_string_length(name) > 253 || !json_is_boolean(wild) ||
	    !json_is_boolean(deny) || !json_is_integer(lo) || !json_is_integer(hi) ||
	    json_integer_value(lo) < 0 || json_integer_value(lo) > json_integer_value(hi) ||
	    json_integer_value(hi) > 65535)
		return -EINVAL;
	d->name = strdup(json_string_value(name));
	d->text = json_is_string(text) ? strdup(json_string_value(text)) : NULL;
	if (!d->name)
		return -ENOMEM;
	d->wildcard = json_is_true(wild);
	d->deny = json_is_true(deny);
	d->lo = (__u16)json_integer_value(lo);
	d->hi = (__u16)json_integer_value(hi);
	return 0;
}

int state_resolver(const json_t *st, struct policy *p)
{
	const json_t *r = json_object_get(st, "resolver"), *doms = json_object_get(r, "domains");
	const json_t *all = json_object_get(r, "allow_all_domains"), *texts = json_object_get(st, "domains");
	size_t n = json_array_size(doms);
	int err = 0;

	if (!r)
		return -ENOENT;
	if (!json_is_object(r) || !json_is_array(doms) || !json_is_boolean(all))
		return -EINVAL;
	p->net.domains = n ? calloc(n, sizeof(*p->net.domains)) : NULL;
	if (n && !p->net.domains)
		return -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		err = domain_from(json_array_get(doms, i), json_array_get(texts, i), &p->net.domains[i]);
		p->net.nr_domains = i + 1;	/* freed by policy_free(), even half made */
	}
	p->net.allow_all_domains = json_is_true(all);
	/* Records of older builds have none: the resolver's defaults. */
	p->net.dns_rate = (unsigned int)json_integer_value(json_object_get(r, "dns_rate"));
	p->net.dns_burst = (unsigned int)json_integer_value(json_object_get(r, "dns_burst"));
	p->mode = !strcmp(json_string_value(json_object_get(st, "mode")) ?: "", "audit") ?
		  POLICY_AUDIT : POLICY_ENFORCE;
	if (err)
		policy_free(p);
	return err;
}
