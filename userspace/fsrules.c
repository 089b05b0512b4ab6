// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fsrules.c — policy rules → fs_rules map entries.
 *
 * Every rule becomes one key: an absolute path (hashed bytes, as the kernel
 * hashes each prefix of the path it judges) or an any-depth component
 * sequence (hash over the components' hashes). Rules that land on the same
 * key are merged, with the precedence the kernel applies at one component
 * end. Guards (SBX_FS_GUARD) go on every proper ancestor of an absolute rule
 * and on every leading part of an any-depth sequence, so rename and link can
 * refuse to carry files from under one rule to under another.
 * allowUnixSockets paths are absolute rules with a flag of their own
 * (SBX_FS_UNIX_SOCKET, unix_rule) and guards like any other.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsrules.h"
#include "loader.h"
#include "policy.h"

/* One component's two hashes, 8 bytes at a time, as the kernel's walk makes them (sbx_abi.h). */
static void hash_component(const char *s, size_t len, __u64 *h1, __u64 *h2)
{
	*h1 = SBX_HASH_INIT;
	*h2 = SBX_HASH2_INIT;
	for (size_t i = 0; i < len; i += 8) {
		__u64 chunk = 0;

		for (size_t j = 0; j < 8 && i + j < len; j++)
			chunk |= (__u64)(unsigned char)s[i + j] << (8 * j);
		*h1 = sbx_hash_chunk1(*h1, chunk);
		*h2 = sbx_hash_chunk2(*h2, chunk);
	}
}

/* The components of @rel ("a/b/c", at least one) folded into @key's hashes, oldest first; how many. */
static __u32 fold_components(struct sbx_fs_key *key, const char *rel)
{
	__u32 k = 0;

	for (const char *p = rel;; ) {
		size_t n = strcspn(p, "/");
		__u64 c1, c2;

		hash_component(p, n, &c1, &c2);
		key->h1 = sbx_seq_hash(key->h1, c1);
		key->h2 = sbx_seq_hash(key->h2, c2);
		k++;
		if (!p[n])
			break;
		p += n + 1;
	}
	return k;
}

/* A path's key is its length and its components folded (sbx_abi.h), as the kernel folds them walking it. */
struct sbx_fs_key fs_key_absolute(__u32 policy_id, const char *path)
{
	struct sbx_fs_key key = { .policy_id = policy_id, .h1 = SBX_HASH_INIT, .h2 = SBX_HASH2_INIT };
	size_t len = strlen(path);

	if (len == 1 && path[0] == '/')
		len = 0;
	if (len)
		fold_components(&key, path + 1);
	key.len = (__u32)len;
	return key;
}

struct sbx_fs_key fs_key_any_depth(__u32 policy_id, const char *rel)
{
	struct sbx_fs_key key = { .policy_id = policy_id, .h1 = SBX_HASH_INIT, .h2 = SBX_HASH2_INIT };

	key.len = SBX_FS_KEY_ANY_DEPTH | fold_components(&key, rel);
	return key;
}

void fs_rule_merge(struct sbx_fs_rule *into, const struct sbx_fs_rule *add)
{
	__u32 f = add->flags, old = into->flags;

	if ((f & SBX_FS_DENY_READ) || ((f & SBX_FS_ALLOW_READ) && !(old & SBX_FS_DENY_READ)))
		into->read_rule = add->read_rule;
	if ((f & SBX_FS_MANDATORY) ||
	    ((f & SBX_FS_DENY_WRITE) && !(old & SBX_FS_MANDATORY)) ||
	    ((f & SBX_FS_ALLOW_WRITE) && !(old & (SBX_FS_DENY_WRITE | SBX_FS_MANDATORY))))
		into->write_rule = add->write_rule;
	if ((f & SBX_FS_GUARD) && !(old & SBX_FS_GUARD))
		into->guard_rule = add->guard_rule;
	if ((f & SBX_FS_UNIX_SOCKET) && !(old & SBX_FS_UNIX_SOCKET))
		into->unix_rule = add->unix_rule;
	into->flags = old | f;
}

static __u32 kind_flags(enum rule_kind kind)
{
	switch (kind) {
	case RULE_DENY_READ: return SBX_FS_DENY_READ;
	case RULE_ALLOW_READ: return SBX_FS_ALLOW_READ;
	case RULE_ALLOW_WRITE: return SBX_FS_ALLOW_WRITE;
	case RULE_DENY_WRITE: return SBX_FS_DENY_WRITE;
	case RULE_MANDATORY: return SBX_FS_MANDATORY;
	/* Its own flag only: a socket rule never changes a read or write verdict. */
	case RULE_ALLOW_UNIX: return SBX_FS_UNIX_SOCKET;
	}
	return 0;
}

static int push(struct fs_compiled *c, size_t *cap, struct sbx_fs_key key, struct sbx_fs_rule rule)
{
	if (c->nr == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct fs_entry *e = realloc(c->entries, n * sizeof(*e));

		if (!e)
			return -ENOMEM;
		c->entries = e;
		*cap = n;
	}
	c->entries[c->nr].key = key;
	c->entries[c->nr].rule = rule;
	c->nr++;
	return 0;
}

/* The rule's own key, then a guard for each proper ancestor / leading part. */
static int push_rule(struct fs_compiled *c, size_t *cap, __u32 policy_id,
		     const struct policy_rule *r, __u32 id)
{
	__u32 unix_rule = r->kind == RULE_ALLOW_UNIX ? id : SBX_RULE_NONE;
	struct sbx_fs_rule own = { .read_rule = id, .write_rule = id, .guard_rule = id,
				   .unix_rule = unix_rule, .flags = kind_flags(r->kind) };
	struct sbx_fs_rule guard = { .read_rule = id, .write_rule = id, .guard_rule = id,
				     .unix_rule = SBX_RULE_NONE, .flags = SBX_FS_GUARD };

	if (r->kind == RULE_MANDATORY && r->scope == RULE_ANY_DEPTH)
		guard.flags |= SBX_FS_GUARD_MANDATORY;
	char buf[SBX_PATH_MAX];
	bool any = r->scope == RULE_ANY_DEPTH;
	struct sbx_fs_key key;
	int err;

	if (strlen(r->path) >= sizeof(buf) || (!any && r->path[0] != '/'))
		return -EINVAL;
	key = any ? fs_key_any_depth(policy_id, r->path) : fs_key_absolute(policy_id, r->path);
	if (any) {
		__u32 k = key.len & ~SBX_FS_KEY_ANY_DEPTH, bit;

		/* Longer sequences fit no bit of the mask (a rule from a damaged record, say). */
		if (k > POLICY_ANY_DEPTH_MAX)
			return -EINVAL;
		bit = 1u << (k - 1);
		c->any_depth_mask |= bit;
		if (r->kind == RULE_DENY_READ || r->kind == RULE_ALLOW_READ)
			c->any_depth_mask |= bit << SBX_ANY_DEPTH_READ_SHIFT;
	}
	err = push(c, cap, key, own);
	strcpy(buf, r->path);
	for (char *slash = strrchr(buf, '/'); !err && slash; slash = strrchr(buf, '/')) {
		*slash = '\0';
		if (!buf[0])
			break;	/* "/" is never renamed */
		key = any ? fs_key_any_depth(policy_id, buf) : fs_key_absolute(policy_id, buf);
		if (any)
			c->any_depth_mask |= 1u << ((key.len & ~SBX_FS_KEY_ANY_DEPTH) - 1);
		err = push(c, cap, key, guard);
	}
	return err;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct fs_entry *)a)->key, &((const struct fs_entry *)b)->key,
		      sizeof(struct sbx_fs_key));
}

/* By key. Never a qsort of nothing: the entries may be NULL then, which qsort's base must not be. */
static void sort_entries(struct fs_compiled *c)
{
	if (c->nr)
		qsort(c->entries, c->nr, sizeof(*c->entries), key_cmp);
}

/*
 * Sort by key and merge equal keys in rule order. qsort is not stable; the
 * merge order only matters between equal flags, where the rule id does.
 */
static void merge_equal_keys(struct fs_compiled *c)
{
	size_t out = 0;

	if (!c->nr)
		return;
	sort_entries(c);
	for (size_t i = 1; i < c->nr; i++) {
		if (!memcmp(&c->entries[i].key, &c->entries[out].key, sizeof(struct sbx_fs_key)))
			fs_rule_merge(&c->entries[out].rule, &c->entries[i].rule);
		else
			c->entries[++out] = c->entries[i];
	}
	c->nr = out + 1;
}

int fs_compile(const struct policy *p, __u32 policy_id, struct fs_compiled *out)
{
	size_t cap = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < p->nr_rules && !err; i++)
		err = push_rule(out, &cap, policy_id, &p->rules[i], (__u32)i);
	if (err) {
		fs_compiled_free(out);
		return err;
	}
	merge_equal_keys(out);
	return 0;
}

/* Grants: the extra rules' own entries override the policy's at the same key; see fsrules.h. */
static void rule_grant(struct sbx_fs_rule *into, const struct sbx_fs_rule *add)
{
	if (add->flags & SBX_FS_ALLOW_READ)
		into->flags &= ~SBX_FS_DENY_READ;
	if ((add->flags & SBX_FS_ALLOW_WRITE) && !(into->flags & SBX_FS_MANDATORY))
		into->flags &= ~SBX_FS_DENY_WRITE;
	fs_rule_merge(into, add);
}

static int compile_extra(const struct fs_extra_rule *extra, size_t n, __u32 policy_id,
			 struct fs_compiled *out)
{
	size_t cap = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n && !err; i++) {
		struct policy_rule r = { .kind = extra[i].kind, .scope = RULE_ABSOLUTE,
					 .path = (char *)extra[i].path };

		if (r.kind != RULE_ALLOW_READ && r.kind != RULE_ALLOW_WRITE)
			err = -EINVAL;
		else
			err = push_rule(out, &cap, policy_id, &r, extra[i].id);
	}
	if (!err)
		merge_equal_keys(out);
	return err;
}

int fs_compile_extra(const struct policy *p, const struct fs_extra_rule *extra, size_t n,
		     __u32 policy_id, struct fs_compiled *out)
{
	struct fs_compiled x;
	size_t cap, nr;
	int err;

	err = fs_compile(p, policy_id, out);
	if (err)
		return err;
	err = compile_extra(extra, n, policy_id, &x);
	cap = nr = out->nr;
	for (size_t i = 0; i < x.nr && !err; i++) {
		struct fs_entry *e = nr ? bsearch(&x.entries[i], out->entries, nr, sizeof(*e), key_cmp) : NULL;

		if (e)
			rule_grant(&e->rule, &x.entries[i].rule);
		else
			err = push(out, &cap, x.entries[i].key, x.entries[i].rule);
	}
	fs_compiled_free(&x);
	if (err) {
		fs_compiled_free(out);
		return err;
	}
	sort_entries(out);
	return 0;
}

const struct fs_entry *fs_compiled_find(const struct fs_compiled *c, const struct sbx_fs_key *key)
{
	struct fs_entry probe = { .key = *key };

	return c->nr ? bsearch(&probe, c->entries, c->nr, sizeof(probe), key_cmp) : NULL;
}

bool fs_rule_same(const struct sbx_fs_rule *a, const struct sbx_fs_rule *b)
{
	return a->read_rule == b->read_rule && a->write_rule == b->write_rule &&
	       a->guard_rule == b->guard_rule && a->unix_rule == b->unix_rule && a->flags == b->flags;
}

struct sbx_fs_rule fs_rule_base(const struct sbx_fs_rule *r)
{
	return (struct sbx_fs_rule){ .read_rule = r->base_read_rule, .write_rule = r->base_write_rule,
				     .guard_rule = r->base_guard_rule, .unix_rule = r->base_unix_rule,
				     .flags = r->base_flags };
}

int fs_read_policy(struct sbx_loader *l, __u32 policy_id, struct fs_compiled *out)
{
	struct sbx_fs_key key, next;
	struct sbx_fs_rule rule;
	size_t cap = 0;
	bool first = true;
	int err = 0;

	memset(out, 0, sizeof(*out));
	while (!err && !loader__next_fs_key(l, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (key.policy_id != policy_id)
			continue;
		err = loader__get_fs_rule(l, &key, &rule);
		if (err == -ENOENT)	/* deleted since the walk found it */
			err = 0;
		else if (!err)
			err = push(out, &cap, key, rule);
	}
	if (err) {
		fs_compiled_free(out);
		return err;
	}
	sort_entries(out);
	return 0;
}

void fs_compiled_free(struct fs_compiled *c)
{
	free(c->entries);
	memset(c, 0, sizeof(*c));
}

/* @c's keys (and rules, when @rules) side by side, as a batch takes them. */
static int split(const struct fs_compiled *c, struct sbx_fs_key **keys, struct sbx_fs_rule **rules)
{
	*keys = malloc((c->nr ?: 1) * sizeof(**keys));
	if (rules)
		*rules = malloc((c->nr ?: 1) * sizeof(**rules));
	if (!*keys || (rules && !*rules)) {
		free(*keys);
		free(rules ? *rules : NULL);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->nr; i++) {
		(*keys)[i] = c->entries[i].key;
		if (rules)
			(*rules)[i] = c->entries[i].rule;
	}
	return 0;
}

/* All of @c or nothing: the keys are the policy id's alone, so all of them go on a failure. */
int fs_install(struct sbx_loader *l, const struct fs_compiled *c)
{
	struct sbx_fs_key *keys;
	struct sbx_fs_rule *rules;
	int err = split(c, &keys, &rules);

	if (err)
		return err;
	err = loader__put_fs_rules(l, keys, rules, c->nr);
	if (err)
		loader__delete_fs_rules(l, keys, c->nr);
	free(keys);
	free(rules);
	return err;
}

const char *rules_install_strerror(int err)
{
	static char buf[256];

	if (err != -E2BIG && err != -ENOSPC)
		return strerror(-err);
	snprintf(buf, sizeof(buf), "the kernel's rule maps are full (%u path keys and %u network prefixes"
		 " over all sandboxes); nothing was installed", SBX_MAX_FS_RULES, SBX_MAX_NET_PREFIXES);
	return buf;
}

const char *sandbox_install_strerror(int err)
{
	static char buf[128];

	if (err != -E2BIG && err != -ENOSPC)
		return strerror(-err);
	snprintf(buf, sizeof(buf), "the kernel's sandbox map is full (%u sandboxes at once)", SBX_MAX_SANDBOXES);
	return buf;
}

void fs_uninstall(struct sbx_loader *l, const struct fs_compiled *c)
{
	struct sbx_fs_key *keys;

	if (split(c, &keys, NULL)) {	/* no memory for the batch: one by one */
		for (size_t i = 0; i < c->nr; i++)
			loader__delete_fs_rule(l, &c->entries[i].key);
		return;
	}
	loader__delete_fs_rules(l, keys, c->nr);
	free(keys);
}
