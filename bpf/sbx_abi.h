/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sbx_abi.h — the one definition of everything the BPF programs and the
 * userspace loader exchange: map keys and values, event records, flag bits.
 *
 * Included by the bpf/ programs (after vmlinux.h) and by userspace (after
 * <linux/types.h>), so there is never a second copy to keep in sync.
 * Plain __u32/__u64 and fixed-size arrays only: the layout must be identical
 * for clang --target=bpf and the host compiler.
 */
#ifndef SBX_ABI_H
#define SBX_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * 6: nest_set is set by whoever adds a sandbox that may nest (userspace
 * loader__add_sandbox), no longer when the set is pinned: a binary of
 * version 5 attaching to a set pinned by 6 would leave it clear.
 * 7: a path component is hashed 8 bytes at a time (sbx_hash_chunk1/2):
 * fs_rules keys written by version 6 match no path a version 7 walk hashes.
 */
#define SBX_ABI_VERSION		7

#define SBX_PATH_MAX		4096	/* bytes, with the NUL; a power of two (used as a mask) */
#define SBX_COMM_LEN		16

/* Map sizes. Hash maps preallocate unless noted, so these are memory, not just limits. */
#define SBX_MAX_SANDBOXES	4096	/* sandboxed cgroups at once (not preallocated) */
#define SBX_MAX_FS_RULES	262144	/* rule keys over all policies (not preallocated) */
#define SBX_RINGBUF_BYTES	(4u << 20)

/*
 * How many cgroup ancestor levels are searched for a sandbox. A process in a
 * cgroup nested deeper than this below the hierarchy root is judged by the
 * sandboxes found in the levels that were searched.
 */
#define SBX_CGROUP_MAX_LEVELS	32
/*
 * The deepest level a sandbox can sit at (the root is level 0): the walks
 * ask for ancestors 1 to SBX_CGROUP_MAX_LEVELS - 1, so a task below a
 * deeper sandbox would never find it. attach and run refuse such a cgroup,
 * and the root itself (below which every walk starts).
 */
#define SBX_CGROUP_DEEPEST	(SBX_CGROUP_MAX_LEVELS - 1)
/* Sandboxes one task can be under at once (nested policies); a power of two. */
#define SBX_NEST_MAX		4

/* Longest name of one path component the kernel walk copies (NAME_MAX). */
#define SBX_NAME_MAX		255
/* Steps of the dentry walk (components plus mount crossings) before giving up: denied. */
#define SBX_WALK_MAX		2048
/* Steps of a path an open memo can hold (struct sbx_open_memo): dentries, mount crossings, the end. A power of two. */
#define SBX_MEMO_STEPS		16
/* Components of an any-depth pattern ("**" "/.git/hooks" is 2). */
#define SBX_ANY_DEPTH_MAX	4

/* sandboxes: cgroup id → struct sbx_sandbox */
#define SBX_SANDBOX_AUDIT	(1u << 0)	/* report would-be denials, deny nothing */
/* Network switches of the policy (see docs/policy.md "network"). */
#define SBX_SANDBOX_DNS		(1u << 1)	/* port-53 traffic is steered to the sandbox's resolver */
#define SBX_SANDBOX_NET_ALL	(1u << 2)	/* allowAllDomains: every address not denied is allowed */
#define SBX_SANDBOX_LOCAL_BIND	(1u << 3)	/* allowLocalBinding: bind to a port, listen */
#define SBX_SANDBOX_UNIX_ALL	(1u << 4)	/* allowAllUnixSockets: every unix socket */
#define SBX_SANDBOX_UNIX_ABSTRACT (1u << 5)	/* allowAbstractUnixSockets */
#define SBX_SANDBOX_RAW		(1u << 6)	/* allowRawSockets: raw and packet sockets */
/*
 * Its tasks may hold descriptors opened outside its policy (attached to
 * running processes, the policy replaced, a file grant, descriptors `run`
 * passed on): every read and write through a descriptor is judged again
 * (lsm/file_permission, attached while any sandbox has this flag).
 */
#define SBX_SANDBOX_FD_JUDGE	(1u << 7)
/*
 * Not in force yet: the cgroup's first exec puts it in force (clears the
 * flag, lsm/file_open). Until then its tasks are judged as outside every
 * sandbox, so that a container engine can set up what it is about to run
 * (mounts, pivot_root, device nodes: all refused to a sandbox) after the
 * attach at createRuntime; the engine's setup is trusted, what it execs is
 * not. The loader raises arming_set before adding such an entry.
 */
#define SBX_SANDBOX_ARMING	(1u << 8)

struct sbx_sandbox {
	__u32 policy_id;	/* selects this sandbox's rules in fs_rules */
	__u32 flags;		/* SBX_SANDBOX_* */
	__u32 any_depth_mask;	/* bit k-1: any-depth keys of k components;
				 * bit 8+k-1: of those, read rules (all a read-only open looks up) */
	/*
	 * With SBX_SANDBOX_DNS: the sandbox's resolver on 127.0.0.1 and ::1
	 * (host order; 0: none). Port-53 traffic of the tasks below goes to
	 * the innermost sandbox's resolver that has one.
	 */
	__u16 dns_port4;
	__u16 dns_port6;
	/*
	 * `run`'s stdin, stdout and stderr where they are regular files (the
	 * kernel's dev_t, inode number; 0: none): reads and writes through
	 * descriptors of these files are not judged on use (fs.bpf.c
	 * file_permission), because the caller, not the sandbox, opened them.
	 */
	__u32 stdio_dev[3];
	__u32 pad;
	__u64 stdio_ino[3];
};

/*
 * The cgroups the programs know to be in no sandbox (bpf/sandbox.h
 * outside_tab, in .bss; userspace only ever reads it, in tests).
 */
#define SBX_OUTSIDE_SLOTS	64	/* direct-mapped by the low bits of the cgroup id */

struct sbx_outside {
	__u64 gen;
	__u64 lock;	/* 64 bits: the compare-and-swap the default BPF ISA has */
	__u64 cgid[SBX_OUTSIDE_SLOTS];
};

/*
 * fs_rules: what the policy says about one path or one any-depth pattern.
 *
 * Absolute rule paths ("/home/u/.ssh"; "/" is the empty string) are keyed by
 * their length in bytes and two independent hashes: each component's bytes
 * hashed on its own (8 at a time, sbx_hash_chunk1/2), the components
 * folded in order (sbx_seq_hash) from SBX_HASH_INIT / SBX_HASH2_INIT. The
 * kernel extends the prefix's hashes by one fold per component of the path
 * being judged and looks each prefix up: one lookup per component,
 * whatever the number of rules, and each byte hashed once, not once for
 * the component and again for the prefix.
 *
 * Any-depth patterns ("**" "/.git/hooks") are keyed by SBX_FS_KEY_ANY_DEPTH |
 * number of components and a hash over the components' own hashes
 * (sbx_seq_hash); the kernel looks up the last 1..k components at every
 * component end, for the k the policy uses (any_depth_mask).
 *
 * Two 64-bit multiplicative hashes with unrelated constants make a 128-bit
 * key (docs/design.md, "Hash collisions": what a crafted path would take).
 */
#define SBX_FS_KEY_ANY_DEPTH	0x80000000u
#define SBX_ANY_DEPTH_READ_SHIFT	8

struct sbx_fs_key {
	__u32 policy_id;
	__u32 len;		/* bytes of the rule path, or ANY_DEPTH | components */
	__u64 h1;
	__u64 h2;
};

/*
 * fs_filter: one bit per fs_rules key (a Bloom filter with one hash, in the
 * programs' .bss), set by userspace before it writes the key and never
 * cleared while the programs are loaded. Almost every prefix of a judged
 * path matches no rule: its clear bit answers that without the hash-map
 * lookup that was most of a path's matching cost. A set bit only means
 * "look". 2^21 bits (256 KiB): about 1 % of misses still look with 20,000
 * keys in the map; a filter filling up with keys of policies long gone
 * makes lookups as frequent as without it, never fewer than needed.
 */
#define SBX_FS_FILTER_SHIFT	21
#define SBX_FS_FILTER_WORDS	(1u << (SBX_FS_FILTER_SHIFT - 6))

/* The filter bit of the key (@policy_id, @len, @h1, @h2): every field mixed in, the top bits kept. */
static inline __u32 sbx_fs_filter_bit(__u32 policy_id, __u32 len, __u64 h1, __u64 h2)
{
	__u64 x = h1 ^ (h2 * 0xbf58476d1ce4e5b9ULL) ^ (((__u64)policy_id << 32 | len) * 0x94d049bb133111ebULL);

	x ^= x >> 31;
	return (__u32)((x * 0x9e3779b97f4a7c15ULL) >> (64 - SBX_FS_FILTER_SHIFT));
}

#define SBX_FS_DENY_READ	(1u << 0)
#define SBX_FS_ALLOW_READ	(1u << 1)
#define SBX_FS_DENY_WRITE	(1u << 2)
#define SBX_FS_ALLOW_WRITE	(1u << 3)
#define SBX_FS_MANDATORY	(1u << 4)	/* write deny that no allow overrides */
/*
 * A rule exists at or beneath this path (or this is a leading part of an
 * any-depth pattern): renaming or linking the object here would move files
 * from under one rule to under another, so rename/link refuse it.
 */
#define SBX_FS_GUARD		(1u << 5)
/* The guard leads into a mandatory pattern: only a directory may be here. */
#define SBX_FS_GUARD_MANDATORY	(1u << 6)
/* allowUnixSockets: a unix socket bound here or beneath may be connected to. */
#define SBX_FS_UNIX_SOCKET	(1u << 7)

struct sbx_fs_rule {
	__u32 read_rule;	/* rule deciding reads here (flags say how) */
	__u32 write_rule;	/* rule deciding writes here */
	__u32 guard_rule;	/* a rule at or beneath, named when a rename is refused */
	__u32 unix_rule;	/* the allowUnixSockets rule, with SBX_FS_UNIX_SOCKET */
	__u32 flags;		/* SBX_FS_* */
	/*
	 * Live grants (`sbx-bpf grant`): an entry a grant changed says the five
	 * fields above until expires_ns (CLOCK_BOOTTIME, bpf_ktime_get_boot_ns),
	 * and from then on the same five fields below: what the policy alone
	 * says here (all zero: nothing). So a grant ends in the kernel, whether
	 * or not anything in userspace is running. expires_ns 0: no grant.
	 * The base fields must keep the layout of the first five.
	 */
	__u32 base_read_rule;
	__u32 base_write_rule;
	__u32 base_guard_rule;
	__u32 base_unix_rule;
	__u32 base_flags;
	__u32 pad;
	__u64 expires_ns;
};

/*
 * net_rules (LPM trie): the CIDR rules of a policy. One entry per distinct
 * prefix; its value is the complete port table for addresses whose longest
 * matching prefix it is, already merged by userspace with every shorter
 * prefix that contains it (deny wins over allow wherever both cover a
 * port), so the kernel needs one lookup and one scan of at most
 * SBX_NET_PORT_RANGES ranges. Ports in no range have no CIDR verdict: the
 * DNS-learned addresses are consulted next, then the default (deny).
 *
 * Addresses are 16 bytes, IPv4 as ::ffff:a.b.c.d (so a v4-mapped IPv6
 * destination is judged as the IPv4 address it is); prefixlen counts the 32
 * bits of policy_id first, so an IPv4 /8 is prefixlen 32 + 96 + 8.
 */
#define SBX_MAX_NET_PREFIXES	65536
#define SBX_NET_PORT_RANGES	16

struct sbx_net_key {
	__u32 prefixlen;
	__u32 policy_id;
	__u8 addr[16];
};

#define SBX_NET_ALLOW		1
#define SBX_NET_DENY		2

struct sbx_net_range {
	__u16 lo, hi;		/* host order, inclusive; 0-65535 when the rule has no port */
	__u32 rule_id;		/* SBX_RULE_NET_BASE + index of the deciding rule */
	__u32 verdict;		/* SBX_NET_ALLOW or SBX_NET_DENY */
};

struct sbx_net_ports {
	__u32 nr;		/* ranges used: sorted by lo, disjoint */
	__u32 pad;
	struct sbx_net_range r[SBX_NET_PORT_RANGES];
};

/*
 * dns_allow: addresses the sandbox's resolver returned for an allowed name,
 * each good until the record's TTL runs out. Keyed by the sandbox's cgroup,
 * so one sandbox's lookups never open anything for another. An address
 * answered for several names holds one slot per name (up to SBX_DNS_SLOTS;
 * beyond that the slot expiring first is replaced: that name's later
 * connections are denied, never wrongly allowed).
 */
#define SBX_MAX_DNS_ADDRS	65536
#define SBX_DNS_SLOTS		4

struct sbx_dns_key {
	__u64 sandbox_cgid;
	__u8 addr[16];		/* as in sbx_net_key */
};

struct sbx_dns_slot {
	__u64 expires_ns;	/* CLOCK_BOOTTIME (bpf_ktime_get_boot_ns); 0: slot unused */
	__u32 domain_id;	/* the resolver's id of the name asked for (never 0 when used) */
	__u32 rule_id;		/* SBX_RULE_DOMAIN_BASE + index of the allowedDomains entry */
	__u16 lo, hi;		/* ports that entry allows */
	__u32 pad;
};

struct sbx_dns_entry {
	struct sbx_dns_slot s[SBX_DNS_SLOTS];
};

/*
 * dns_clients (LRU): who sent a query to the resolver, by the sending
 * socket's protocol and local port, so the resolver's events name the
 * process. Filled by socket_sendmsg for bound sockets talking to the
 * resolver; key: protocol << 16 | port (host order).
 */
#define SBX_MAX_DNS_CLIENTS	4096

struct sbx_dns_client {
	__u64 ts_ns;		/* bpf_ktime_get_ns() of the send: older entries are a port's past owner */
	__u64 cgroup_id;
	__u32 pid, tgid, ppid, uid;
	char comm[16];
};

/* Operations named in events. Keep events.c's names in step. */
enum sbx_op {
	SBX_OP_NONE = 0,
	SBX_OP_READ,		/* open for reading (or exec) */
	SBX_OP_WRITE,		/* open for writing or appending */
	SBX_OP_CREATE,		/* O_CREAT of a new file, mknod */
	SBX_OP_MKDIR,
	SBX_OP_RMDIR,
	SBX_OP_UNLINK,
	SBX_OP_RENAME,		/* path → path2 */
	SBX_OP_LINK,		/* hard link: path (existing) → path2 (new name) */
	SBX_OP_SYMLINK,		/* path: the new link */
	SBX_OP_TRUNCATE,
	SBX_OP_CHMOD,
	SBX_OP_CHOWN,
	SBX_OP_UTIMES,		/* timestamps and other attributes */
	SBX_OP_SETXATTR,
	SBX_OP_REMOVEXATTR,
	SBX_OP_IOCTL,		/* chattr flags, btrfs subvolumes */
	SBX_OP_MOUNT,		/* mount, move_mount */
	SBX_OP_UMOUNT,
	SBX_OP_PIVOT_ROOT,
	SBX_OP_USERNS,		/* creating a user namespace */
	SBX_OP_CONNECT,		/* connect(2): TCP, UDP, unix sockets */
	SBX_OP_SENDTO,		/* sendto/sendmsg with an address: UDP, TCP Fast Open, unix datagrams */
	SBX_OP_BIND,
	SBX_OP_LISTEN,
	SBX_OP_SOCKET,		/* creating a raw, packet or other-family socket */
	SBX_OP_DNS,		/* a DNS query the resolver refused (sent by userspace) */
	SBX_OP_THROTTLED,	/* the sandbox's events were rate-limited: repeat = violations withheld */
	/* Task and system operations (task.bpf.c): "target" and "arg" say on what. */
	SBX_OP_PTRACE,		/* ptrace, /proc/PID/mem and the like: target; arg = PTRACE_MODE_* */
	SBX_OP_SIGNAL,		/* kill, tgkill, pidfd_send_signal, F_SETOWN: target; arg = signal */
	SBX_OP_SCHED,		/* nice, ioprio, scheduler, rlimits, memory moves of a target */
	SBX_OP_BPF,		/* bpf(2): arg = the command */
	SBX_OP_KERNEL_LOAD,	/* modules, kexec, firmware: arg = SBX_LOAD_*; path: module name */
	SBX_OP_PERF,		/* perf_event_open: arg = the attr type, or SBX_PERF_ACCESS | access */
	SBX_OP_CAPABILITY,	/* a host-administration capability: arg = CAP_* */
	SBX_OP_TTY,		/* typing into a terminal (TIOCSTI, TIOCLINUX): arg = the ioctl */
	SBX_OP_CLONE_CGROUP,	/* clone3(CLONE_INTO_CGROUP): a child born in another cgroup */
	SBX_OP__MAX,
};

/*
 * SBX_OP_KERNEL_LOAD's arg: the kernel's enum kernel_read_file_id (the same
 * numbers as kernel_load_data_id) for what was loaded, plus the flag below
 * when the data came from memory rather than a file (init_module,
 * kexec_load), or SBX_LOAD_MODULE_REQUEST for a module the kernel was asked
 * to load on the task's behalf (its name in path).
 */
#define SBX_LOAD_FIRMWARE	1
#define SBX_LOAD_MODULE		2
#define SBX_LOAD_KEXEC_IMAGE	3
#define SBX_LOAD_KEXEC_INITRAMFS 4
#define SBX_LOAD_POLICY		5
#define SBX_LOAD_X509		6
#define SBX_LOAD_FROM_MEMORY	0x80u
/*
 * SBX_OP_PERF on kernels whose hook gets no attributes (6.12.117+, 7.x): arg
 * is this bit plus what was asked for, 0 open, 1 cpu, 2 kernel, 3 tracepoint
 * (the kernel's PERF_SECURITY_*).
 */
#define SBX_PERF_ACCESS		0x80000000u
#define SBX_LOAD_MODULE_REQUEST	0x100u

enum sbx_verdict {
	SBX_VERDICT_DENY = 1,
	SBX_VERDICT_AUDIT = 2,	/* would have been denied; audit mode let it through */
	SBX_VERDICT_GRANTED = 3,	/* allowed by a live grant (rule_id names it): its use, reported */
};

/* rule_id values that are not an index into the policy */
#define SBX_RULE_NONE		0xffffffffu	/* no rule: a fail-closed denial */
#define SBX_RULE_DEFAULT_WRITE	0xfffffffeu	/* writes are denied outside allowWrite */
#define SBX_RULE_PSEUDO_FS	0xfffffffdu	/* cgroup fs, bpffs, securityfs: never written */
#define SBX_RULE_NAMESPACE	0xfffffffcu	/* no mounts or user namespaces in a sandbox */
#define SBX_RULE_DEVICE		0xfffffffbu	/* no block devices, no new device nodes */
#define SBX_RULE_NET_DEFAULT	0xfffffffau	/* no network rule and no DNS answer allows it */
#define SBX_RULE_SOCKET		0xfffffff9u	/* raw, packet and other-family sockets */
#define SBX_RULE_LOCAL_BIND	0xfffffff8u	/* allowLocalBinding is off */
#define SBX_RULE_UNIX		0xfffffff7u	/* a unix socket not in allowUnixSockets */
#define SBX_RULE_ABSTRACT	0xfffffff6u	/* an abstract unix socket */
#define SBX_RULE_DNS_EXPIRED	0xfffffff5u	/* the DNS answer that allowed it has expired */
#define SBX_RULE_DOMAIN_DEFAULT	0xfffffff4u	/* a name not in allowedDomains */
#define SBX_RULE_DNS_FAILED	0xfffffff3u	/* an answer could not be installed (map full): refused */
#define SBX_RULE_TASK		0xfffffff2u	/* mandatory: no tracing, signalling or tuning of tasks outside, no children there */
#define SBX_RULE_SYSTEM		0xfffffff1u	/* mandatory: no bpf, kernel loading, perf, admin capabilities, tty input */
#define SBX_RULE_KERNEL_FILES	0xfffffff0u	/* mandatory: no writes to /proc, /sys; no /dev/mem, kmem, port */
/*
 * The resolver's own refusals (userspace/dns.c), op SBX_OP_DNS: a question
 * type or class it does not serve (arg: the type, the class in the upper 16
 * bits when it is not IN), and queries over its rate limit.
 */
#define SBX_RULE_DNS_TYPE	0xffffffefu
#define SBX_RULE_DNS_RATE	0xffffffeeu
#define SBX_RULE_FIRST_BUILTIN	SBX_RULE_DNS_RATE

/* Rule ids of network rules: a base plus the index in the policy's list. */
#define SBX_RULE_NET_BASE	0x40000000u	/* + index into policy.net.rules (CIDR rules) */
#define SBX_RULE_DOMAIN_BASE	0x50000000u	/* + index into policy.net.domains */
#define SBX_RULE_GRANT_BASE	0x60000000u	/* + the grant's id (per cgroup, from 1) */
#define SBX_RULE_BASE_MASK	0xf0000000u

/* dns_allow slots a connect grant made (not a resolver's answer): their domain_id. */
#define SBX_DOMAIN_GRANT	0xffffffffu

/* Event flags */
#define SBX_EV_PATH_UNRESOLVED	(1u << 0)	/* a path could not be resolved (too long, too deep, detached): denied */
#define SBX_EV_PATH2		(1u << 1)	/* path2 is present (rename, link) */
#define SBX_EV_RENAME_GUARD	(1u << 2)	/* refused: it would move files between rules */
#define SBX_EV_DIRECTORY_ONLY	(1u << 3)	/* refused: only a directory may have this name */
#define SBX_EV_NET		(1u << 4)	/* family, sock_type, protocol, port, addr are set */
#define SBX_EV_ABSTRACT		(1u << 5)	/* path is an abstract unix socket name (no leading NUL) */
#define SBX_EV_STEERED		(1u << 6)	/* a DNS query: the address is the server it was sent to */
/* Made by userspace when a coalescing window ended without a later record (no kernel seq). */
#define SBX_EV_SUMMARY		(1u << 7)
#define SBX_EV_TARGET		(1u << 8)	/* target is a task (its comm in path) */
#define SBX_EV_FD_USE		(1u << 9)	/* refused on use of an open descriptor (read, write) */
#define SBX_EV_FD_RECEIVED	(1u << 10)	/* refused when received (SCM_RIGHTS, pidfd_getfd) */

/*
 * One record on the events ring buffer per denial or audit hit, or per
 * run of identical ones (repeat > 1, see "Coalescing" below).
 */
struct sbx_event {
	__u64 ts_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 seq;		/* 1, 2, 3… per boot for every record the kernel tried to send: a gap is a loss */
	__u64 key;		/* what makes violations identical (coalescing); 0 for userspace records */
	__u32 repeat;		/* violations this record stands for: itself and the ones coalesced into it */
	__u32 arg;		/* task and system ops: signal, ptrace mode, bpf command, capability… */
	__u64 cgroup_id;	/* the cgroup the task runs in */
	__u64 sandbox_cgroup_id; /* the sandboxed cgroup whose policy decided */
	__u32 pid;		/* thread id */
	__u32 tgid;		/* process id */
	__u32 ppid;
	__u32 uid;
	__u32 op;		/* enum sbx_op */
	__u32 verdict;		/* enum sbx_verdict */
	__u32 rule_id;		/* index into the policy, or SBX_RULE_* */
	__u32 flags;		/* SBX_EV_* */
	__s32 error;		/* errno returned to the task (negative), 0 in audit */
	__u32 path_len;		/* bytes of path, without the NUL */
	__u32 path2_len;	/* bytes of path2 when SBX_EV_PATH2 */
	__u32 domain_id;	/* network: the name the address was learned for (0: none) */
	__u32 target;		/* SBX_EV_TARGET: the task acted on (process id) */
	/* Network operations (SBX_EV_NET); a unix socket's path is in path. */
	__u16 family;		/* AF_INET, AF_INET6, AF_UNIX, … */
	__u16 sock_type;	/* SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, … */
	__u16 protocol;		/* IPPROTO_TCP, IPPROTO_UDP, … */
	__u16 port;		/* host order */
	__u8 addr[16];		/* IPv6, or IPv4 as ::ffff:a.b.c.d */
	char comm[SBX_COMM_LEN];
	char path[SBX_PATH_MAX];
	char path2[SBX_PATH_MAX];	/* sent only with SBX_EV_PATH2 */
};

/*
 * stats: per-CPU counters, index → __u64. Every violation is counted once
 * in VIOLATIONS and once in exactly one of: a record sent (the consumer
 * counts those), COALESCED, THROTTLED, EVENTS_LOST. So
 * VIOLATIONS = delivered + COALESCED + THROTTLED + EVENTS_LOST.
 */
enum sbx_stat {
	SBX_STAT_EVENTS_LOST = 0,	/* ring buffer full or no memory: record dropped (the verdict stood) */
	SBX_STAT_DENIED,		/* operations refused (audit hits are not) */
	SBX_STAT_VIOLATIONS,		/* denials and audit hits, each of which wants a record */
	SBX_STAT_COALESCED,		/* folded into a later record's repeat (or a summary) */
	SBX_STAT_THROTTLED,		/* withheld by the sandbox's rate limit (a "throttled" record counts them) */
	SBX_STAT_UNREPORTED,		/* coalesced or throttled, then their slot was taken by another: counted only here */
	SBX_STAT_THROTTLE_RECORDS,	/* "throttled" records sent (not violations) */
	SBX_STAT__MAX,
};

/*
 * sandbox_stats (per-CPU hash): what each sandbox's policy refused, by
 * kind, for `list`. Keyed by the sandbox's cgroup; made zeroed by userspace
 * before the sandbox exists (by the kernel on the sandbox's first event if
 * that failed), removed with the sandbox by userspace. A violation counts
 * here whether or not its record was sent.
 */
enum sbx_kind {
	SBX_KIND_READ = 0,	/* denied reads (and exec) */
	SBX_KIND_WRITE,		/* denied writes and every other file-system change */
	SBX_KIND_NAMESPACE,	/* denied mounts, pivot_root, user namespaces */
	SBX_KIND_NETWORK,	/* denied connect, sendto, bind, listen, sockets, DNS */
	SBX_KIND_AUDIT,		/* audit-mode hits (not denied) */
	SBX_KIND_GRANTED,	/* operations a live grant allowed */
	SBX_KIND_TASK,		/* denied task and system operations (ptrace, signals, bpf, modules…) */
	SBX_KIND__MAX,
};

struct sbx_sandbox_stats {
	__u64 n[SBX_KIND__MAX];
};

/*
 * Coalescing and rate limits (bounded cost under a flood).
 *
 * coalesce: a violation identical to the one that opened the window of its
 * slot (same key: cgroup, sandbox, process, operation, verdict, rule, paths,
 * address) less than coalesce_ns ago only adds to the slot's pending count;
 * the next record of that key carries it in repeat, or, when none comes,
 * the consumer takes it (atomic exchange on its mmap of the array) and
 * sends a summary. Slots are direct-mapped by key: a different key takes
 * the slot over, and a pending count it finds goes to SBX_STAT_UNREPORTED.
 *
 * throttle: per sandbox (direct-mapped by the sandbox's cgroup id), a
 * token bucket of one record per rate_interval_ns, rate_burst at once; a
 * record over it is withheld and its violations added to suppressed; the
 * next record that passes is preceded by a SBX_OP_THROTTLED record with
 * that count, and the consumer sends one when the sandbox falls silent.
 */
#define SBX_COALESCE_SLOTS	8192	/* a power of two */
#define SBX_THROTTLE_SLOTS	8192	/* a power of two, over SBX_MAX_SANDBOXES */

struct sbx_coalesce_slot {
	__u64 key;		/* 0: unused */
	__u64 since_ns;		/* when the slot's last record was sent (CLOCK_MONOTONIC) */
	__u64 pending;		/* identical violations since: added by the kernel, taken with xchg */
	__u64 pad;
};

struct sbx_throttle_slot {
	__u64 cgid;		/* the sandbox's cgroup; 0: unused */
	__u64 tat_ns;		/* token bucket as a theoretical arrival time (GCRA) */
	__u64 suppressed;	/* violations withheld since the last "throttled" record */
	__u64 last_ns;		/* the last withheld one */
};

/*
 * The path hashes both sides compute identically. A path component is
 * hashed 8 bytes at a time: its bytes cut into chunks from its first byte,
 * each chunk read as a little-endian word (byte j at bits 8j), the last
 * one zero-padded, and every non-empty chunk folded into both hashes
 * (sbx_hash_chunk1, sbx_hash_chunk2). A component has no NUL byte, so the
 * padding cannot make two components alike. Two folds per 8 bytes, where
 * a fold per byte cost the matcher's walk some 17 instructions a byte
 * (bench/RESULTS.md, stop 54). The second hash has its own start value
 * and multiplier so that the two are unrelated. sbx_hash_byte (FNV-1a 64)
 * hashes no path any more: userspace keys other tables with it (dns.c,
 * policy.c, sbxstate.c).
 */
#define SBX_HASH_INIT		0xcbf29ce484222325ULL
#define SBX_HASH_PRIME		0x100000001b3ULL
#define SBX_HASH_CHUNK_MUL	0xff51afd7ed558ccdULL
#define SBX_HASH2_INIT		0x6a09e667f3bcc909ULL
#define SBX_HASH2_MUL		0x9e3779b97f4a7c15ULL

static inline __u64 sbx_hash_byte(__u64 h, unsigned char c)
{
	return (h ^ c) * SBX_HASH_PRIME;
}

/* One chunk of a component into its first hash: a multiply, then the high half folded down. */
static inline __u64 sbx_hash_chunk1(__u64 h, __u64 chunk)
{
	h = (h ^ chunk) * SBX_HASH_CHUNK_MUL;
	return h ^ (h >> 33);
}

/* ... and into its second. */
static inline __u64 sbx_hash_chunk2(__u64 h, __u64 chunk)
{
	h = (h + chunk + 1) * SBX_HASH2_MUL;
	return h ^ (h >> 29);
}

/* Fold one component's hash into the hash of a component sequence. */
static inline __u64 sbx_seq_hash(__u64 seq, __u64 comp)
{
	return (seq ^ comp) * SBX_HASH2_MUL + 0x2545f4914f6cdd1dULL;
}

/*
 * The kernel's BTF IDs of the types bpf/resolve.h's walk, and the hooks'
 * UNTRUSTED() loads (bpf/sandbox.h), cast pointers to (bpf_rdonly_cast),
 * set by the loader in both objects' .rodata. Not a
 * CO-RE relocation: libbpf relocates against a cut of the kernel's BTF
 * (userspace/corebtf.h), whose IDs are not the kernel's.
 */
struct sbx_kernel_ids {
	__u32 dentry;
	__u32 file;
	__u32 mount;
	__u32 path;
	__u32 task_struct;
	__u32 vfsmount;
	__u32 seqcount;
	__u32 iattr;
	__u32 socket;
	__u32 msghdr;
};

/*
 * The call instruction the programs write for bpf_rdonly_cast: a helper
 * number no kernel has, which the loader turns into the kfunc call right
 * before each program is loaded (userspace/kfuncs.h). A kfunc declared
 * __ksym would make libbpf parse the kernel's whole BTF once per object to
 * find it (40 M instructions each). Left as it is (a kernel without the
 * kfunc), it is a call the verifier refuses wherever it is reachable.
 */
#define SBX_CALL_RDONLY_CAST	0x5bc0ca57

/*
 * The open memo (bpf/fs.bpf.c, inode storage `open_memo`; docs/design.md):
 * what an open that was allowed without a word was judged with, and for
 * which access (need). Userspace reads it only in tests (tests/vm/sbx-memo.c:
 * the map's key is a descriptor of the file). One writer at a time (lock);
 * readers check seq as a seqlock's: odd while it is written, the same
 * before and after.
 */
#define SBX_MEMO_READ		1	/* need: an open for reading was allowed (fs_judge.h NEED_READ) */
#define SBX_MEMO_WRITE		2	/* … for writing (NEED_WRITE) */
struct sbx_open_memo {
	__u64 lock;		/* 64 bits: the compare-and-swap the default BPF ISA has */
	__u32 seq;
	__u32 n;		/* steps in p */
	__u32 need;		/* SBX_MEMO_READ | SBX_MEMO_WRITE: what was allowed of this path */
	__u32 settled;		/* jiffies (low 32 bits) until which `moves` stands for the walk; 0: not settled */
	__u64 cgid;		/* the task's cgroup */
	__u64 gen;		/* verdict_gen when the open began */
	__u64 mnt;		/* the file's mount (struct vfsmount) */
	__u64 h1, h2;		/* the walk's digest (resolve.h walk_fold) */
	__u64 moves;		/* the kernel's move counts when the walk last held (fs.bpf.c moves_now), */
	__u64 first_parent;	/* and then the first step's dentry's parent */
	__u64 first_name;	/* and its name's hash and length (d_name.hash_len) */
	__u64 first_dir_inode;	/* and the parent's inode: its address, */
	__u64 first_dir;	/* its number (i_ino) */
	__u32 first_dir_gen;	/* and generation (i_generation): which directory, as a file handle says */
	__u32 pad;
	__u64 p[SBX_MEMO_STEPS];	/* each step's dentry, parent mount or mount namespace */
};

/*
 * The kernel's two move counts (bpf/moves.bpf.c, userspace/moves.c): the
 * sequence counts of rename_lock, which every change of a dentry's parent
 * or name takes (__d_move: rename, d_splice_alias), and of mount_lock,
 * which every change of the mount tree takes. Each is odd while a change
 * runs and two more after it. While both read the same as when a memo's
 * path was last walked, no dentry and no mount anywhere has moved, so the
 * path is the same one (docs/design.md, "Nothing moved"). The loader finds
 * them by name (bpf_kallsyms_lookup_name, from a BPF_PROG_TYPE_SYSCALL
 * program) and sees each one move before the programs use it.
 */
enum { SBX_MOVES_RENAME, SBX_MOVES_MOUNT, SBX_MOVES_N };
struct sbx_moves {
	__u64 addr[SBX_MOVES_N];	/* where each count is; 0: not found */
	__u32 count[SBX_MOVES_N];	/* each one's value when the program last ran */
	__s32 err[SBX_MOVES_N];	/* the lookup's or the read's error, 0 */
};

#endif /* SBX_ABI_H */
