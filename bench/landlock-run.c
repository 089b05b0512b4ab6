// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * landlock-run — run a command under a Landlock ruleset, made with the
 * kernel's own system calls (landlock_create_ruleset, landlock_add_rule,
 * landlock_restrict_self), so that bench/compare.sh can set the cost of
 * Landlock's hooks next to sbx-bpf's for the same loops.
 *
 *   landlock-run [--read PATH]... [--write PATH]... [--connect-tcp PORT]...
 *                [--bind-tcp PORT]... [-v] -- CMD [ARG...]
 *   landlock-run --abi
 *
 * The ruleset handles every filesystem access right the running kernel
 * knows (its ABI version decides which: ABI 2 adds refer, 3 truncate,
 * 5 ioctl on devices), so whatever is not allowed below is denied:
 *   --read PATH    read files, list directories and execute beneath PATH;
 *   --write PATH   every handled right beneath PATH (create, write, remove…).
 * From ABI 4 (Linux 6.7) it handles TCP connect and bind too: both are
 * denied but to the ports given (--connect-tcp, --bind-tcp), which is as
 * close as Landlock gets to sbx-bpf's "nothing is reachable by default".
 * UDP, and on older kernels the whole network, stay unrestricted: Landlock
 * has no rules for them, and with ports given on ABI < 4 a note says so.
 *
 * What this cannot express: Landlock only allows. A denyRead beneath an
 * allowed directory (sbx-bpf's "read everywhere but ~/.ssh") has no
 * Landlock equivalent; the closest ruleset lists what may be read instead.
 * compare.sh uses --read / --write /tmp/bench: the allow-lists of its sbx-bpf
 * policy, without the denyRead rules.
 *
 * --abi prints the kernel's Landlock ABI version (0: Landlock not enabled)
 * and exits 0. -v prints the ruleset on stderr before starting CMD.
 *
 * Exit status: CMD's; 125 when the ruleset cannot be made or applied
 * (Landlock disabled, a PATH missing), 126/127 when CMD cannot be executed
 * (as env(1)), 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/landlock.h>
#include <linux/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset	444
#define __NR_landlock_add_rule		445
#define __NR_landlock_restrict_self	446
#endif
/* Newer than the headers of Debian 12 (Linux 6.1, ABI 2). */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)	/* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)	/* ABI 5 */
#endif
#define LL_ACCESS_NET_BIND_TCP		(1ULL << 0)	/* ABI 4 */
#define LL_ACCESS_NET_CONNECT_TCP	(1ULL << 1)
#define LL_RULE_NET_PORT		2

/* struct landlock_ruleset_attr as of ABI 4; the kernel takes a shorter one from older callers. */
struct ll_ruleset_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net;
};

/* struct landlock_net_port_attr (ABI 4). */
struct ll_net_port_attr {
	__u64 allowed_access;
	__u64 port;
};

#define READ_ACCESS	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* The rights that mean something on a file that is not a directory. */
#define FILE_ACCESS	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
			 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
			 LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define MAX_RULES	64
#define EXIT_SETUP	125

struct rule {
	const char *path;	/* NULL: a port rule */
	int write;
	__u64 net_access;
	unsigned long port;
};

static int ll_abi(void)
{
	long v = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return v < 0 ? 0 : (int)v;
}

/* Every filesystem right ABI @abi handles. */
static __u64 fs_rights(int abi)
{
	__u64 r = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;	/* ABI 1: execute … make_sym */

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

static int add_path_rule(int ruleset, const struct rule *r, __u64 handled)
{
	struct landlock_path_beneath_attr pb = {
		.allowed_access = (r->write ? handled : READ_ACCESS) & handled,
	};
	struct stat st;
	int err = 0;

	pb.parent_fd = open(r->path, O_PATH | O_CLOEXEC);
	if (pb.parent_fd < 0 || fstat(pb.parent_fd, &st) < 0) {
		fprintf(stderr, "landlock-run: '%s': %s\n", r->path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		pb.allowed_access &= FILE_ACCESS;
	if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0)) {
		fprintf(stderr, "landlock-run: rule for '%s': %s\n", r->path, strerror(errno));
		err = -1;
	}
	close(pb.parent_fd);
	return err;
}

static int add_port_rule(int ruleset, const struct rule *r)
{
	struct ll_net_port_attr np = { .allowed_access = r->net_access, .port = r->port };

	if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &np, 0)) {
		fprintf(stderr, "landlock-run: rule for port %lu: %s\n", r->port, strerror(errno));
		return -1;
	}
	return 0;
}

static void show(int abi, const struct ll_ruleset_attr *attr, const struct rule *rules, int n)
{
	fprintf(stderr, "landlock-run: ABI %d, handled fs 0x%llx net 0x%llx;", abi,
		(unsigned long long)attr->handled_access_fs, (unsigned long long)attr->handled_access_net);
	for (int i = 0; i < n; i++) {
		if (rules[i].path)
			fprintf(stderr, " %s %s", rules[i].write ? "write" : "read", rules[i].path);
		else if (attr->handled_access_net)
			fprintf(stderr, " tcp-%s %lu",
				rules[i].net_access == LL_ACCESS_NET_CONNECT_TCP ? "connect" : "bind", rules[i].port);
	}
	fputc('\n', stderr);
}

/* Make the ruleset and restrict this process with it: 0, or -1 after saying why. */
static int restrict_self(const struct rule *rules, int n, int verbose)
{
	int abi = ll_abi(), ruleset, err = 0, want_net = 0;
	struct ll_ruleset_attr attr = {};
	size_t size;

	if (!abi) {
		fprintf(stderr, "landlock-run: Landlock is not available: %s\n",
			errno == EOPNOTSUPP ? "disabled at boot (not in lsm=)" : strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++)
		want_net |= !rules[i].path;
	attr.handled_access_fs = fs_rights(abi);
	if (abi >= 4) {
		attr.handled_access_net = LL_ACCESS_NET_BIND_TCP | LL_ACCESS_NET_CONNECT_TCP;
		size = sizeof(attr);
	} else {
		size = offsetof(struct ll_ruleset_attr, handled_access_net);
		if (want_net)
			fprintf(stderr, "landlock-run: note: Landlock ABI %d has no network rules (TCP port rules "
				"need ABI 4, Linux 6.7): the network is not restricted\n", abi);
	}
	ruleset = syscall(__NR_landlock_create_ruleset, &attr, size, 0);
	if (ruleset < 0) {
		fprintf(stderr, "landlock-run: landlock_create_ruleset: %s\n", strerror(errno));
		return -1;
	}
	for (int i = 0; i < n && !err; i++) {
		if (rules[i].path)
			err = add_path_rule(ruleset, &rules[i], attr.handled_access_fs);
		else if (attr.handled_access_net)
			err = add_port_rule(ruleset, &rules[i]);
	}
	if (!err && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		fprintf(stderr, "landlock-run: PR_SET_NO_NEW_PRIVS: %s\n", strerror(errno));
		err = -1;
	}
	if (!err && syscall(__NR_landlock_restrict_self, ruleset, 0)) {
		fprintf(stderr, "landlock-run: landlock_restrict_self: %s\n", strerror(errno));
		err = -1;
	}
	if (!err && verbose)
		show(abi, &attr, rules, n);
	close(ruleset);
	return err;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: landlock-run [--read PATH]... [--write PATH]... [--connect-tcp PORT]...\n"
		     "                    [--bind-tcp PORT]... [-v] -- CMD [ARG...]\n"
		     "       landlock-run --abi\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "read", required_argument, NULL, 'r' },
		{ "write", required_argument, NULL, 'w' },
		{ "connect-tcp", required_argument, NULL, 'c' },
		{ "bind-tcp", required_argument, NULL, 'b' },
		{ "abi", no_argument, NULL, 'a' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static struct rule rules[MAX_RULES];
	int c, n = 0, verbose = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "+vh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
		case 'w':
			if (n == MAX_RULES)
				goto bad;
			rules[n++] = (struct rule){ .path = optarg, .write = c == 'w' };
			break;
		case 'c':
		case 'b':
			if (n == MAX_RULES)
				goto bad;
			rules[n] = (struct rule){ .net_access = c == 'c' ? LL_ACCESS_NET_CONNECT_TCP
									 : LL_ACCESS_NET_BIND_TCP };
			errno = 0;
			rules[n].port = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || rules[n].port > 65535)
				goto bad;
			n++;
			break;
		case 'a':
			printf("%d\n", ll_abi());
			return 0;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (optind >= argc)
		goto bad;
	if (restrict_self(rules, n, verbose))
		return EXIT_SETUP;
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "landlock-run: cannot execute '%s': %s\n", argv[optind], strerror(errno));
	return errno == ENOENT ? 127 : 126;
bad:
	usage(stderr);
	return 2;
}
