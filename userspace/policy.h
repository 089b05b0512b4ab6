/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy.h — a sandbox's policy as userspace holds it: parsed from a JSON
 * file (sandbox-runtime settings files work unchanged, see docs/policy.md),
 * paths expanded, normalised and resolved, patterns compiled to the two
 * shapes the kernel matches (absolute prefixes and any-depth component
 * sequences), each rule keeping the text shown for it in events.
 *
 * Library code: nothing here prints. Errors come back as -errno plus a
 * message in struct policy_diag ("FILE:LINE:COL: what is wrong"); warnings
 * (srt keys that mean nothing here) are collected in the diag too.
 */
#ifndef SBX_POLICY_H
#define SBX_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "sbx_limits.h"

struct sbx_loader;

enum rule_kind {
	RULE_DENY_READ,
	RULE_ALLOW_READ,
	RULE_ALLOW_WRITE,
	RULE_DENY_WRITE,
	RULE_MANDATORY,		/* built-in write deny, always on, wins over any allow */
	RULE_ALLOW_UNIX,	/* network.allowUnixSockets: sockets at or beneath path may be reached */
};

enum rule_scope {
	RULE_ABSOLUTE,		/* path: "/a/b" (or "/"): that path and everything beneath */
	RULE_ANY_DEPTH,		/* path: "NAME" or "DIR/NAME": those components at any depth, and beneath */
};

/* At most this many components in an any-depth pattern ("**" + "/a/b/c/d"). */
#define POLICY_ANY_DEPTH_MAX	4

struct policy_rule {
	enum rule_kind kind;
	enum rule_scope scope;
	char *path;		/* ABSOLUTE: normalised, symlinked prefixes resolved; ANY_DEPTH: "a/b" */
	char *text;		/* as shown in events and `check`: "denyRead ~/.ssh", "mandatory: .bashrc" */
	char *origin;		/* "FILE:LINE:COL", "--deny-read", "built-in" */
};

enum policy_mode {
	POLICY_ENFORCE,
	POLICY_AUDIT,
};

/*
 * A CIDR rule: "allow"/"deny" entries, allowLoopback, and the IP literals and
 * "localhost" of allowedDomains/deniedDomains (which never go through DNS).
 * Its rule id in the kernel is SBX_RULE_NET_BASE + index.
 */
struct net_rule {
	bool deny;
	__u8 addr[16];		/* IPv6, or IPv4 as ::ffff:a.b.c.d; zero beyond plen */
	unsigned plen;		/* bits of that 128-bit form: IPv4 /8 is 96 + 8 */
	__u16 lo, hi;		/* ports, inclusive; 0-65535 without a port */
	char *text;		/* "allow 10.0.0.0/8:443", "allowLoopback", "allowedDomains localhost" */
	char *origin;		/* "FILE:LINE:COL" */
};

/*
 * An allowedDomains/deniedDomains name, for the sandbox's resolver. Rule id
 * SBX_RULE_DOMAIN_BASE + index.
 */
struct domain_rule {
	bool deny;
	bool wildcard;		/* "*.name": any subdomain of name, not name itself */
	char *name;		/* lower case, no trailing dot, no "*."; "" with wildcard: every name */
	__u16 lo, hi;		/* ports; 0-65535 without one (deny entries apply on every port) */
	char *text;		/* "allowedDomains *.npmjs.org:443" */
	char *origin;
};

struct policy_network {
	struct net_rule *rules;		size_t nr_rules;
	struct domain_rule *domains;	size_t nr_domains;
	/* allowUnixSockets entries are policy rules of kind RULE_ALLOW_UNIX. */
	bool allow_all_unix_sockets;
	bool allow_local_binding;
	bool allow_all_domains;	/* "allowAllDomains" of older srt releases */
	/* sbx-bpf extensions */
	bool allow_abstract_unix_sockets;
	bool allow_loopback;
	bool allow_raw_sockets;	/* raw and packet sockets */
	/* dnsQueryRate, dnsQueryBurst: the resolver's query rate limit; 0: its defaults (dns.h) */
	unsigned int dns_rate, dns_burst;
};

struct policy {
	char *name;		/* file path, or the preset name ("agent-default") */
	char *description;	/* the file's "description", NULL if absent */
	enum policy_mode mode;
	bool allow_git_config;	/* .git/config leaves the mandatory set */
	struct policy_rule *rules;
	size_t nr_rules;
	struct policy_network net;	/* compiled for the kernel by netrules.h */
	struct sbx_limits limits;	/* the "limits" object, parsed; limits_init()'s when absent */
	/*
	 * "acceptMissing": hooks (hooks.h) whose protection the policy may run
	 * without, should the kernel not load their program. NULL-terminated.
	 */
	char **accept_missing;
	size_t nr_accept_missing;
};

/* Where ~ and relative paths point. */
struct policy_env {
	const char *home;	/* home of the invoking user (SUDO_USER's when set) */
	const char *cwd;	/* working directory the sandbox starts in */
};

#define POLICY_DIAG_MAX	16

struct policy_diag {
	char error[1024];	/* "FILE:LINE:COL: message" when a call fails */
	char warnings[POLICY_DIAG_MAX][256];	/* "FILE:LINE:COL: ignoring …" */
	size_t nr_warnings;
	size_t nr_warnings_dropped;	/* beyond POLICY_DIAG_MAX */
};

/*
 * Fill @env from the environment: SUDO_USER's home (under sudo, as root),
 * else $HOME, else the password entry of the real uid; homes come from
 * /etc/passwd (see policy.c). Home stays NULL if none is known; 0 or -errno.
 */
int policy_env_default(struct policy_env *env, char *home_buf, size_t home_sz,
		       char *cwd_buf, size_t cwd_sz);
/* What a policy_env_default() error means, for people. */
void policy_env_strerror(int err, char *buf, size_t sz);

/*
 * Parse @file (with @file NULL: the "agent-default" preset) into @p, which
 * the caller zero-initialised. policy_load_preset takes a built-in preset
 * instead: "agent-default", "training", "restricted", "standard". On error
 * @p is left empty and @diag->error says why.
 */
int policy_load(struct policy *p, const char *file, const struct policy_env *env,
		struct policy_diag *diag);
int policy_load_preset(struct policy *p, const char *preset, const struct policy_env *env,
		       struct policy_diag *diag);
/* Accept running without @hook's protection (--accept-missing): 0, -ENOENT for no such hook, -ENOMEM. */
int policy_accept_missing(struct policy *p, const char *hook);
/*
 * Each hook of the comma-separated @list, as policy_accept_missing: 0, or
 * its -errno with the hook that failed in @bad (cut to @bad_sz).
 */
int policy_accept_missing_list(struct policy *p, const char *list, char *bad, size_t bad_sz);
/* Parse JSON text; @name is used in messages in place of a file name. */
int policy_load_string(struct policy *p, const char *name, const char *json,
		       const struct policy_env *env, struct policy_diag *diag);

/*
 * Add one rule from a command-line flag (@origin: "--deny-read"). @pattern
 * is expanded and compiled exactly as a policy file entry would be.
 */
int policy_add_rule(struct policy *p, enum rule_kind kind, const char *pattern,
		    const char *origin, const struct policy_env *env, struct policy_diag *diag);

/* What a network flag of `run` adds: one entry of the network section. */
enum policy_net_flag {
	POLICY_NET_ALLOW_DOMAIN,	/* allowedDomains entry */
	POLICY_NET_DENY_DOMAIN,		/* deniedDomains entry */
	POLICY_NET_ALLOW_CIDR,		/* allow entry: CIDR[:PORTS] */
	POLICY_NET_DENY_CIDR,		/* deny entry */
	POLICY_NET_ALLOW_UNIX,		/* allowUnixSockets entry */
	/* booleans, set to true; @value is ignored */
	POLICY_NET_ALLOW_LOCAL_BINDING,
	POLICY_NET_ALLOW_LOOPBACK,
	POLICY_NET_ALLOW_ALL_UNIX,
	POLICY_NET_ALLOW_RAW,
};

/* The flag of @what ("--allow-net"), NULL past the last: for option tables. */
const char *policy_net_flag_name(enum policy_net_flag what);
/* Does the flag take a value (a name, a CIDR, a path)? The others are booleans. */
bool policy_net_flag_has_value(enum policy_net_flag what);

/*
 * Add one network entry from a command-line flag (@origin: "--allow-net"),
 * parsed, checked and warned about exactly as the same entry of a policy
 * file's "network" section. On error @p is unchanged.
 */
int policy_add_net(struct policy *p, enum policy_net_flag what, const char *value,
		   const char *origin, const struct policy_env *env, struct policy_diag *diag);

/*
 * Append the mandatory write-deny set (dotfiles, .git/hooks, …; .git/config
 * unless allow_git_config). Called once, after everything else is loaded.
 */
int policy_add_mandatory(struct policy *p);

/* Names of the built-in presets, in order; NULL past the last. */
const char *policy_preset_name(size_t i);

const char *rule_kind_name(enum rule_kind kind);	/* "denyRead", "allowWrite", "mandatory" */
const char *rule_scope_name(enum rule_scope scope);	/* "absolute", "any-depth" */
/* The text of a rule id as events carry it: a policy rule, a CIDR or a domain rule. NULL if none. */
const char *policy_rule_text(const struct policy *p, __u32 rule_id);
/* "10.0.0.0/8", "2001:db8::/32": @addr/@plen in the form of struct net_rule. */
void policy_format_cidr(const __u8 addr[16], unsigned plen, char *buf, size_t sz);
/* Is the prefix @addr/@alen inside @net/@plen (both in the form of struct net_rule)? */
bool net_prefix_contains(const __u8 net[16], unsigned plen, const __u8 addr[16], unsigned alen);
void policy_free(struct policy *p);

/* `check` output: the compiled rules, human or JSON (jansson), to @out. */
void policy_print(const struct policy *p, FILE *out);
char *policy_to_json(const struct policy *p);	/* malloc'ed, NULL on ENOMEM */
/* A hash of everything policy_to_json() writes: equal policies, equal digests. */
__u64 policy_digest(const struct policy *p);

/*
 * Lexically normalise @in (relative paths are taken from @cwd): collapse
 * "//" and ".", resolve "..", drop a trailing slash. 0 or -ENAMETOOLONG/-EINVAL.
 */
int path_normalize(const char *in, const char *cwd, char *out, size_t sz);
/*
 * Replace the longest existing prefix of the absolute @path by its real
 * location (symlinks resolved), keeping the part that does not exist yet,
 * so a rule written against a symlink protects what it points to.
 */
int path_resolve(char *path, size_t sz);

/* Installing the rules in the kernel: fsrules.h and netrules.h. */

#endif
