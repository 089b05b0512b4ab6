/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * netrules.h — a policy's network part compiled for the kernel: the CIDR
 * rules as net_rules LPM-trie entries (struct sbx_net_key → struct
 * sbx_net_ports), the network switches as sandbox flags, and the verdict
 * the sandbox's resolver gives a name.
 */
#ifndef SBX_NETRULES_H
#define SBX_NETRULES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "sbx_abi.h"

struct policy;
struct sbx_loader;

struct net_prefix {
	struct sbx_net_key key;
	struct sbx_net_ports ports;	/* merged with every shorter prefix containing it */
};

struct net_compiled {
	struct net_prefix *prefixes;	/* one per distinct prefix, sorted by address then length */
	size_t nr;
	/*
	 * SBX_SANDBOX_DNS unless allowAllDomains (then _NET_ALL, and _DNS too
	 * if deniedDomains has names to refuse); _LOCAL_BIND, _UNIX_ALL (with
	 * _UNIX_ABSTRACT), _UNIX_ABSTRACT, _RAW from their keys.
	 */
	__u32 sandbox_flags;
};

/*
 * Compile @p's network rules for @policy_id. For each distinct prefix and
 * each port: deny if a deny rule of that prefix or of a shorter one
 * containing it covers the port (the most specific such rule decides),
 * else allow likewise, else no range. 0, or -E2BIG when a prefix needs
 * more than SBX_NET_PORT_RANGES ranges or there are too many prefixes
 * (@err says which, with a rule's origin), or -ENOMEM.
 */
int net_compile(const struct policy *p, __u32 policy_id, struct net_compiled *out,
		char *err, size_t errsz);
void net_compiled_free(struct net_compiled *c);

/*
 * Does @p send DNS to a resolver (SBX_SANDBOX_DNS above) with names for it
 * to judge? What decides whether an attached cgroup needs the daemon's.
 */
bool net_wants_resolver(const struct policy *p);

/* Write @c into the kernel's net_rules map (all or nothing) / remove it again. */
int net_install(struct sbx_loader *l, const struct net_compiled *c);
void net_uninstall(struct sbx_loader *l, const struct net_compiled *c);

struct domain_verdict {
	bool allowed;
	__u32 rule_id;		/* SBX_RULE_DOMAIN_BASE + index, or SBX_RULE_DOMAIN_DEFAULT */
	__u16 lo, hi;		/* the ports allowed (when allowed) */
};

/*
 * What the resolver does with a query for @name (any case, trailing dot or
 * not). Any matching deniedDomains entry refuses it, on every port. Else
 * the most specific matching allowedDomains entry allows it on its ports:
 * an exact name beats a wildcard, a longer wildcard beats a shorter one,
 * and between entries for the same name the first listed counts. Nothing
 * matching: refused with SBX_RULE_DOMAIN_DEFAULT, unless allowAllDomains,
 * which allows every name not denied on every port (rule_id
 * SBX_RULE_DOMAIN_DEFAULT too).
 */
void net_domain_verdict(const struct policy *p, const char *name, struct domain_verdict *v);

#endif
