// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * netrules.c — the network part of a policy → net_rules entries, sandbox
 * flags, and the resolver's verdict on a name.
 *
 * The kernel makes one longest-prefix lookup per destination and scans one
 * port table, so everything the shorter prefixes say about a longer one's
 * addresses is folded into the longer one's table here. Rules are sorted
 * by address, then prefix length: a prefix containing another comes
 * before it, so a stack of the prefixes still "open" holds exactly the
 * ones containing the current one.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "netrules.h"
#include "policy.h"

/* A run of rules with one prefix, in rule order, within the sorted index. */
struct group {
	size_t first, nr;
};

struct scratch {
	size_t *order;			/* rule indices sorted by prefix, then index */
	struct group *stack;		/* groups containing the current one */
	size_t *cover;			/* rules of the stack and the current group */
	unsigned *bounds;		/* port boundaries */
	struct sbx_net_range *ranges;	/* a table before it is known to fit */
};

static int by_prefix(const void *a, const void *b, void *arg)
{
	const struct net_rule *rules = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int d = memcmp(rules[i].addr, rules[j].addr, sizeof(rules[i].addr));

	if (d)
		return d;
	if (rules[i].plen != rules[j].plen)
		return rules[i].plen < rules[j].plen ? -1 : 1;
	return i < j ? -1 : i > j;
}

static bool same_prefix(const struct net_rule *a, const struct net_rule *b)
{
	return a->plen == b->plen && !memcmp(a->addr, b->addr, sizeof(a->addr));
}

static bool denies_names(const struct policy_network *n)
{
	for (size_t i = 0; i < n->nr_domains; i++)
		if (n->domains[i].deny)
			return true;
	return false;
}

/*
 * DNS goes to the resolver unless allowAllDomains makes it pointless; with
 * deniedDomains it still has names to refuse, so it stays in the path.
 */
static __u32 sandbox_flags(const struct policy_network *n)
{
	__u32 f = n->allow_all_domains ? SBX_SANDBOX_NET_ALL : SBX_SANDBOX_DNS;

	if (n->allow_all_domains && denies_names(n))
		f |= SBX_SANDBOX_DNS;

	if (n->allow_local_binding)
		f |= SBX_SANDBOX_LOCAL_BIND;
	if (n->allow_all_unix_sockets)
		f |= SBX_SANDBOX_UNIX_ALL | SBX_SANDBOX_UNIX_ABSTRACT;
	if (n->allow_abstract_unix_sockets)
		f |= SBX_SANDBOX_UNIX_ABSTRACT;
	if (n->allow_raw_sockets)
		f |= SBX_SANDBOX_RAW;
	return f;
}

bool net_wants_resolver(const struct policy *p)
{
	return p->net.nr_domains && (sandbox_flags(&p->net) & SBX_SANDBOX_DNS);
}

/*
 * What the covering rules say about @port: deny if any deny covers it,
 * else allow if any allow does; the longest prefix names the rule, the
 * first listed among rules of one prefix (@cover is in that order).
 */
static bool decide(const struct policy_network *n, const size_t *cover, size_t nc,
		   unsigned port, struct sbx_net_range *v)
{
	const struct net_rule *best[2] = { NULL, NULL };
	size_t idx[2] = { 0, 0 };
	int k;

	for (size_t j = 0; j < nc; j++) {
		const struct net_rule *r = &n->rules[cover[j]];

		if (port < r->lo || port > r->hi)
			continue;
		if (!best[r->deny] || r->plen > best[r->deny]->plen) {
			best[r->deny] = r;
			idx[r->deny] = cover[j];
		}
	}
	k = best[1] ? 1 : 0;
	if (!best[k])
		return false;
	v->verdict = k ? SBX_NET_DENY : SBX_NET_ALLOW;
	v->rule_id = SBX_RULE_NET_BASE + (__u32)idx[k];
	return true;
}

static int uint_cmp(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/*
 * The port table of the covering rules: one decision per stretch between
 * two rule boundaries, neighbours with the same verdict and rule joined.
 * Returns the number of ranges, which may exceed SBX_NET_PORT_RANGES.
 */
static size_t port_ranges(const struct policy_network *n, const size_t *cover, size_t nc,
			  struct scratch *s)
{
	struct sbx_net_range *out = s->ranges;
	size_t nb = 0, nr = 0;

	s->bounds[nb++] = 0;
	for (size_t j = 0; j < nc; j++) {
		s->bounds[nb++] = n->rules[cover[j]].lo;
		s->bounds[nb++] = n->rules[cover[j]].hi + 1u;
	}
	qsort(s->bounds, nb, sizeof(*s->bounds), uint_cmp);
	for (size_t k = 0; k < nb; k++) {
		unsigned start = s->bounds[k], end = 65536;
		struct sbx_net_range v = { 0 };

		if ((k && start == s->bounds[k - 1]) || start > 65535)
			continue;
		for (size_t m = k + 1; m < nb && end == 65536; m++)
			if (s->bounds[m] != start)
				end = s->bounds[m];
		if (!decide(n, cover, nc, start, &v))
			continue;
		if (nr && out[nr - 1].verdict == v.verdict && out[nr - 1].rule_id == v.rule_id &&
		    out[nr - 1].hi + 1u == start) {
			out[nr - 1].hi = (__u16)(end - 1);
			continue;
		}
		v.lo = (__u16)start;
		v.hi = (__u16)(end - 1);
		out[nr++] = v;
	}
	return nr;
}

/* The entry of group @g, its rules merged with those of the groups containing it. */
static int fill_prefix(const struct policy_network *n, __u32 policy_id, struct scratch *s,
		       size_t depth, struct group g, struct net_prefix *e, char *err, size_t errsz)
{
	const struct net_rule *r = &n->rules[s->order[g.first]];
	size_t nc = 0, nr;
	char cidr[64];

	for (size_t d = 0; d <= depth; d++) {
		struct group h = d < depth ? s->stack[d] : g;

		for (size_t j = 0; j < h.nr; j++)
			s->cover[nc++] = s->order[h.first + j];
	}
	nr = port_ranges(n, s->cover, nc, s);
	if (nr > SBX_NET_PORT_RANGES) {
		policy_format_cidr(r->addr, r->plen, cidr, sizeof(cidr));
		snprintf(err, errsz, "%s: needs %zu port ranges, at most %d (%s)", cidr, nr,
			 SBX_NET_PORT_RANGES, r->origin);
		return -E2BIG;
	}
	memset(e, 0, sizeof(*e));
	e->key.prefixlen = 32 + r->plen;
	e->key.policy_id = policy_id;
	for (unsigned b = 0; b < r->plen; b++)	/* nothing beyond the prefix */
		e->key.addr[b / 8] |= r->addr[b / 8] & (0x80 >> (b % 8));
	e->ports.nr = (__u32)nr;
	memcpy(e->ports.r, s->ranges, nr * sizeof(*s->ranges));
	return 0;
}

static int alloc_scratch(struct scratch *s, const struct policy_network *n)
{
	size_t nr = n->nr_rules;

	s->order = malloc(nr * sizeof(*s->order));
	s->stack = malloc(nr * sizeof(*s->stack));
	s->cover = malloc(nr * sizeof(*s->cover));
	s->bounds = malloc((2 * nr + 1) * sizeof(*s->bounds));
	s->ranges = malloc((2 * nr + 1) * sizeof(*s->ranges));
	if (!s->order || !s->stack || !s->cover || !s->bounds || !s->ranges)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++)
		s->order[i] = i;
	qsort_r(s->order, nr, sizeof(*s->order), by_prefix, n->rules);
	return 0;
}

static void free_scratch(struct scratch *s)
{
	free(s->order);
	free(s->stack);
	free(s->cover);
	free(s->bounds);
	free(s->ranges);
}

/* Distinct prefixes among the sorted rules. */
static size_t count_groups(const struct policy_network *n, const size_t *order)
{
	size_t groups = 0;

	for (size_t i = 0; i < n->nr_rules; i++)
		groups += !i || !same_prefix(&n->rules[order[i]], &n->rules[order[i - 1]]);
	return groups;
}

static int compile_prefixes(const struct policy_network *n, __u32 policy_id, struct scratch *s,
			    struct net_compiled *out, char *err, size_t errsz)
{
	size_t depth = 0, groups = count_groups(n, s->order);

	if (groups > SBX_MAX_NET_PREFIXES) {
		snprintf(err, errsz, "%zu distinct address prefixes, at most %d", groups,
			 SBX_MAX_NET_PREFIXES);
		return -E2BIG;
	}
	out->prefixes = calloc(groups, sizeof(*out->prefixes));
	if (!out->prefixes)
		return -ENOMEM;
	for (size_t i = 0; i < n->nr_rules;) {
		const struct net_rule *r = &n->rules[s->order[i]];
		struct group g = { .first = i, .nr = 1 };
		int ret;

		while (i + g.nr < n->nr_rules && same_prefix(r, &n->rules[s->order[i + g.nr]]))
			g.nr++;
		while (depth) {
			const struct net_rule *top = &n->rules[s->order[s->stack[depth - 1].first]];

			if (net_prefix_contains(top->addr, top->plen, r->addr, r->plen))
				break;
			depth--;
		}
		ret = fill_prefix(n, policy_id, s, depth, g, &out->prefixes[out->nr], err, errsz);
		if (ret)
			return ret;
		out->nr++;
		s->stack[depth++] = g;
		i += g.nr;
	}
	return 0;
}

int net_compile(const struct policy *p, __u32 policy_id, struct net_compiled *out,
		char *err, size_t errsz)
{
	const struct policy_network *n = &p->net;
	struct scratch s = { 0 };
	int ret;

	memset(out, 0, sizeof(*out));
	if (errsz)
		err[0] = '\0';
	if (n->nr_rules > ~SBX_RULE_BASE_MASK) {
		snprintf(err, errsz, "%zu network rules, at most %u", n->nr_rules, ~SBX_RULE_BASE_MASK);
		return -E2BIG;
	}
	ret = n->nr_rules ? alloc_scratch(&s, n) : 0;
	if (!ret && n->nr_rules)
		ret = compile_prefixes(n, policy_id, &s, out, err, errsz);
	free_scratch(&s);
	if (ret) {
		net_compiled_free(out);
		if (ret == -ENOMEM && errsz)
			snprintf(err, errsz, "out of memory");
		return ret;
	}
	out->sandbox_flags = sandbox_flags(n);
	return 0;
}

void net_compiled_free(struct net_compiled *c)
{
	free(c->prefixes);
	memset(c, 0, sizeof(*c));
}

int net_install(struct sbx_loader *l, const struct net_compiled *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		int err = loader__put_net_prefix(l, &c->prefixes[i].key, &c->prefixes[i].ports);

		if (err) {
			for (size_t j = 0; j < i; j++)
				loader__delete_net_prefix(l, &c->prefixes[j].key);
			return err;
		}
	}
	return 0;
}

void net_uninstall(struct sbx_loader *l, const struct net_compiled *c)
{
	for (size_t i = 0; i < c->nr; i++)
		loader__delete_net_prefix(l, &c->prefixes[i].key);
}

/* --- names ------------------------------------------------------------------------ */

/* Lower case, without a trailing dot; false for a name no rule can match. */
static bool normalise(const char *name, char *buf, size_t sz)
{
	size_t len = strlen(name);

	if (len && name[len - 1] == '.')
		len--;
	if (!len || len >= sz)
		return false;
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)tolower((unsigned char)name[i]);
	buf[len] = '\0';
	return true;
}

/*
 * How specifically @d names @name (of @len bytes): 0 not at all; an exact
 * name above every wildcard, a longer wildcard above a shorter one, "*"
 * lowest. "*.a.com" matches "x.a.com" and "y.x.a.com", never "a.com".
 */
static size_t match_rank(const struct domain_rule *d, const char *name, size_t len)
{
	size_t n = strlen(d->name);

	if (!d->wildcard)
		return strcmp(d->name, name) ? 0 : SIZE_MAX;
	if (!n)
		return 1;
	if (len <= n + 1 || name[len - n - 1] != '.' || strcmp(name + len - n, d->name))
		return 0;
	return n + 2;
}

void net_domain_verdict(const struct policy *p, const char *name, struct domain_verdict *v)
{
	const struct policy_network *n = &p->net;
	size_t best[2] = { 0, 0 }, idx[2] = { 0, 0 }, len;
	char buf[256];

	*v = (struct domain_verdict){ .allowed = false, .rule_id = SBX_RULE_DOMAIN_DEFAULT };
	if (!normalise(name, buf, sizeof(buf)))
		return;
	len = strlen(buf);
	for (size_t i = 0; i < n->nr_domains; i++) {
		const struct domain_rule *d = &n->domains[i];
		size_t rank = match_rank(d, buf, len);

		if (rank > best[d->deny]) {	/* strictly: the first listed wins a tie */
			best[d->deny] = rank;
			idx[d->deny] = i;
		}
	}
	if (best[1]) {
		v->rule_id = SBX_RULE_DOMAIN_BASE + (__u32)idx[1];
		return;
	}
	if (n->allow_all_domains) {
		*v = (struct domain_verdict){ .allowed = true, .rule_id = SBX_RULE_DOMAIN_DEFAULT,
					      .lo = 0, .hi = 65535 };
		return;
	}
	if (!best[0])
		return;
	v->allowed = true;
	v->rule_id = SBX_RULE_DOMAIN_BASE + (__u32)idx[0];
	v->lo = n->domains[idx[0]].lo;
	v->hi = n->domains[idx[0]].hi;
}
