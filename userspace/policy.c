// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "policy.h"

const char *rule_kind_name(enum rule_kind kind)
{
	switch (kind) {
	case RULE_DENY_READ: return "deny-read";
	case RULE_ALLOW_READ: return "allow-read";
	}
	return "?";
}

int path_normalize(const char *in, const char *cwd, char *out, size_t sz)
{
	char buf[PATH_MAX * 2];
	size_t len = 0;
	const char *p;

	if (!in[0])
		return -EINVAL;
	if (in[0] == '/')
		snprintf(buf, sizeof(buf), "%s", in);
	else if (cwd && cwd[0] == '/')
		snprintf(buf, sizeof(buf), "%s/%s", cwd, in);
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
	snprintf(joined, sizeof(joined), "%s%s", strcmp(real, "/") ? real : "", rest);
	return path_normalize(joined[0] ? joined : "/", NULL, path, sz);
}

int policy_add(struct policy *p, enum rule_kind kind, const char *path, const char *cwd)
{
	char norm[PATH_MAX];
	struct policy_rule *r;
	int err;

	err = path_normalize(path, cwd, norm, sizeof(norm));
	if (!err)
		err = path_resolve(norm, sizeof(norm));
	if (err)
		return err;
	r = realloc(p->rules, (p->nr_rules + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	p->rules = r;
	r = &p->rules[p->nr_rules];
	r->kind = kind;
	r->path = strdup(norm);
	if (!r->path || asprintf(&r->text, "%s %s", rule_kind_name(kind), norm) < 0) {
		free(r->path);
		return -ENOMEM;
	}
	p->nr_rules++;
	return 0;
}

const char *policy_rule_text(const struct policy *p, __u32 rule_id)
{
	if (!p || rule_id >= p->nr_rules)
		return NULL;
	return p->rules[rule_id].text;
}

int policy_install(const struct policy *p, struct sbx_loader *l, __u32 policy_id)
{
	for (size_t i = 0; i < p->nr_rules; i++) {
		__u32 flags = p->rules[i].kind == RULE_DENY_READ ? SBX_FS_DENY_READ : SBX_FS_ALLOW_READ;
		int err = loader__add_fs_rule(l, policy_id, p->rules[i].path, flags, (__u32)i);

		if (err)
			return err;
	}
	return 0;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_rules; i++) {
		free(p->rules[i].path);
		free(p->rules[i].text);
	}
	free(p->rules);
	p->rules = NULL;
	p->nr_rules = 0;
}
