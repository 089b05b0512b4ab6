// SPDX-License-Identifier: GPL-2.0
/*
 * net.bpf.c — network enforcement for sandboxed cgroups.
 *
 * Hooks and what each denies (-EACCES plus one event, audit mode as in
 * fs.bpf.c), only for tasks in a sandbox:
 *
 *   lsm/socket_create       raw sockets (SOCK_RAW/SOCK_PACKET on IPv4/IPv6),
 *                           packet sockets, and every family but unix, IPv4,
 *                           IPv6, netlink and the crypto API: unless
 *                           allowRawSockets
 *   lsm/socket_post_create  IPv4/IPv6 sockets of any protocol but TCP, UDP,
 *                           UDP-Lite, MPTCP and ICMP (SCTP, DCCP, …: their
 *                           connects bypass socket_connect): unless
 *                           allowRawSockets
 *   lsm/socket_connect      an IPv4/IPv6 destination no rule allows: the CIDR
 *                           rules (net_rules), then the addresses the
 *                           sandbox's resolver answered for allowed names
 *                           (dns_allow, until their TTL runs out); a
 *                           v4-mapped IPv6 address is judged as IPv4, and
 *                           0.0.0.0 or :: as the loopback address it reaches
 *   lsm/socket_sendmsg      the same for a datagram sent with an address
 *                           (unconnected UDP, ICMP) and for TCP Fast Open
 *                           (sendto with MSG_FASTOPEN never calls connect)
 *   lsm/socket_bind         binding IPv4/IPv6 to a port (port 0, the
 *                           kernel's pick, is a client's bind and passes):
 *                           unless allowLocalBinding; binding an abstract
 *                           unix name: unless allowAbstractUnixSockets
 *   lsm/socket_listen       listen on IPv4/IPv6: unless allowLocalBinding
 *   lsm/unix_stream_connect connecting to a unix socket, and
 *   lsm/unix_may_send       sending to one: the peer's bound path, resolved
 *                           to where the socket really is (so symlinks and
 *                           relative names change nothing), must be covered
 *                           by allowUnixSockets; an abstract name needs
 *                           allowAbstractUnixSockets; unnamed peers
 *                           (socketpair) and peers in the same sandbox pass
 *
 * Port 53: DNS from a sandbox goes to sbx-bpf's resolver, which forwards
 * only allowed names and puts their addresses in dns_allow before
 * answering. The cgroup sock_addr programs below (attached to the sandbox's
 * cgroup, or by the daemon to the sandboxes' parent: they run for every
 * cgroup below) rewrite every port-53 destination to the resolver, and
 * recvmsg/getpeername show the original server again so resolvers that
 * check the reply's source accept it. socket_connect and socket_sendmsg see
 * the address before the rewrite: they let port 53 through only for
 * sockets whose cgroup is the caller's, whose programs do the rewrite.
 *
 * Maps (the shared ones are in sandbox.h):
 *   net_rules    LPM trie struct sbx_net_key → struct sbx_net_ports
 *   dns_allow    struct sbx_dns_key → struct sbx_dns_entry, written by the resolver
 *   dns_clients  LRU: the resolver's clients, for its events
 *   dns_orig     LRU: socket cookie → the DNS server a steered socket asked for
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "sbx_abi.h"
#include "sandbox.h"
#define SBX_FS_MATCH_EXTERN
#include "fs_match.h"

#define AF_UNSPEC	0
#define AF_UNIX		1
#define AF_INET		2
#define AF_INET6	10
#define AF_NETLINK	16
#define AF_PACKET	17
#define AF_ALG		38
#define SOCK_STREAM	1
#define SOCK_DGRAM	2
#define SOCK_RAW	3
#define SOCK_PACKET	10
#define SOCK_TYPE_MASK	0xf
#define MSG_FASTOPEN	0x20000000
#define IPPROTO_ICMPV6	58
#define DNS_PORT	53
#define LOOPBACK4	0x7f000001

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, SBX_MAX_NET_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_net_key);
	__type(value, struct sbx_net_ports);
} net_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SBX_MAX_DNS_ADDRS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbx_dns_key);
	__type(value, struct sbx_dns_entry);
} dns_allow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SBX_MAX_DNS_CLIENTS);
	__type(key, __u32);
	__type(value, struct sbx_dns_client);
} dns_clients SEC(".maps");

struct dns_orig {
	__u8 addr[16];
	__u16 port;		/* network order, as in struct bpf_sock_addr */
	__u16 pad[3];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SBX_MAX_DNS_CLIENTS);
	__type(key, __u64);
	__type(value, struct dns_orig);
} dns_orig SEC(".maps");

/* A sandbox resolver's ports on 127.0.0.1 and ::1 (host order; 0: none). */
struct dns_ports {
	__u16 p4, p6;
};

/*
 * bpf_loop callback of current_resolver: cgroup level
 * SBX_CGROUP_MAX_LEVELS - @i of the task, its own cgroup first (@i 0),
 * then its ancestors, deepest first (0 past the task's own level). Written
 * as a loop, the walk was verified at each of its 32 steps wherever it was
 * inlined: 1,650 of the 1,724 instructions the verifier processed for
 * cgroup/connect4 on 6.12, in 14 programs. A callback is verified once per
 * program. The walk runs only for port-53 traffic and for traffic with a
 * loopback peer (the resolver's replies, sends on a socket connected to
 * it), where it pays an indirect call per level (rare_loop): every caller
 * tests the port or the address before it asks.
 */
static long resolver_level(__u32 i, void *ctx)
{
	struct dns_ports *r = ctx;
	struct sbx_sandbox *sb;
	__u64 id;

	id = i ? bpf_get_current_ancestor_cgroup_id(SBX_CGROUP_MAX_LEVELS - i) : bpf_get_current_cgroup_id();
	if (!id)
		return 0;
	sb = bpf_map_lookup_elem(&sandboxes, &id);
	if (!sb || !(sb->flags & SBX_SANDBOX_DNS))
		return 0;
	r->p4 = sb->dns_port4;
	r->p6 = sb->dns_port6;
	return 1;
}

/*
 * The resolver the current task's port-53 traffic goes to: that of the
 * innermost sandbox above it with domain rules. Its resolver asks the
 * next one out (userspace dns_ops.via), so every policy above judges the
 * name. When that sandbox has no resolver (ports 0: it could not start),
 * nothing is steered and every sandbox judges port 53 by its rules; an
 * outer resolver would answer past the inner policy. Used by the LSM and
 * the cgroup programs alike (the steering runs for the caller's own
 * cgroup: see steerable()), so both agree on where a query went. A walk
 * that failed (rare_loop) finds none: nothing is steered, and the rules
 * judge port 53.
 */
static __always_inline struct dns_ports current_resolver(void)
{
	struct dns_ports r = {};

	if (nr_sandboxes && rare_loop(SBX_CGROUP_MAX_LEVELS, resolver_level, &r) < 0)
		r.p4 = r.p6 = 0;
	return r;
}

extern int resolve_in(__u64 d, __u64 m, struct walk_buf *walk, struct sbx_path *out,
		      struct sbx_path_len *out_len);

/* A destination as the rules see it: 16 bytes (IPv4 mapped) and a host-order port. */
struct net_target {
	__u8 addr[16];
	__u16 port;
	__u16 family;
};

static __always_inline bool is_mapped(const __u32 *w)
{
	return w[0] == 0 && w[1] == 0 && w[2] == bpf_htonl(0xffff);
}

/* How an address is used: where it goes, or what a socket is bound to. */
enum inet_use { INET_DEST, INET_LOCAL };

/*
 * Read an IPv4/IPv6 socket address (kernel memory: the syscall copied it
 * into a struct sockaddr_storage) passed to a socket of @sock_family.
 * 1: @t filled; 0: not an internet address, or too short for the kernel to
 * accept, so there is nothing to judge.
 *
 * AF_UNSPEC: IPv4 UDP and raw sends, and IPv4 bind, take it as AF_INET
 * (connect takes it as "disconnect", and passes @sock_family 0 here).
 * A destination 0.0.0.0 or :: is judged as the loopback address the kernel
 * sends it to, so a deny of 127.0.0.0/8 cannot be walked around.
 */
static __always_inline int read_inet(const struct sockaddr *sa, int len, __u16 sock_family,
				     enum inet_use use, struct net_target *t)
{
	struct { __u16 family; __u16 port; __u32 flow_or_v4; __u8 v6[16]; } a = {};
	static const __u8 any6[16];

	/* The kernel's copy sits in a sockaddr_storage: reading past @len is safe. */
	if (len < 2 || bpf_probe_read_kernel(&a, sizeof(a), sa))
		return 0;
	if (a.family == AF_UNSPEC && sock_family == AF_INET)
		a.family = AF_INET;
	__builtin_memset(t, 0, sizeof(*t));
	t->family = a.family;
	t->port = bpf_ntohs(a.port);
	if (a.family == AF_INET && len >= 16) {
		if (use == INET_DEST && !a.flow_or_v4)
			a.flow_or_v4 = bpf_htonl(LOOPBACK4);
		t->addr[10] = 0xff;
		t->addr[11] = 0xff;
		__builtin_memcpy(&t->addr[12], &a.flow_or_v4, 4);
		return 1;
	}
	if (a.family == AF_INET6 && len >= 24) {
		__builtin_memcpy(t->addr, a.v6, 16);
		if (use != INET_DEST)
			return 1;
		if (!__builtin_memcmp(t->addr, any6, 16))
			t->addr[15] = 1;	/* :: is ::1 */
		else if (is_mapped((__u32 *)t->addr) && !*(__u32 *)&t->addr[12])
			*(__u32 *)&t->addr[12] = bpf_htonl(LOOPBACK4);
		return 1;
	}
	return 0;
}

static __always_inline void event_net(struct judge *j, struct socket *sock, const struct net_target *t)
{
	struct sbx_event *ev = &j->s->ev;

	ev->flags |= SBX_EV_NET;
	ev->family = t->family;
	ev->sock_type = BPF_CORE_READ(sock, type);
	ev->protocol = BPF_CORE_READ(sock, sk, sk_protocol);
	ev->port = t->port;
	__builtin_memcpy(ev->addr, t->addr, 16);
}

/* The CIDR verdict for @t: SBX_NET_ALLOW, SBX_NET_DENY or 0 (no rule), and its rule. */
static __always_inline __u32 cidr_verdict(__u32 policy_id, const struct net_target *t, __u32 *rule)
{
	struct sbx_net_key key = { .prefixlen = 32 + 128, .policy_id = policy_id };
	struct sbx_net_ports *p;

	__builtin_memcpy(key.addr, t->addr, 16);
	p = bpf_map_lookup_elem(&net_rules, &key);
	if (!p)
		return 0;
	for (int i = 0; i < SBX_NET_PORT_RANGES; i++) {
		if (i >= p->nr)
			break;
		if (t->port >= p->r[i].lo && t->port <= p->r[i].hi) {
			*rule = p->r[i].rule_id;
			return p->r[i].verdict;
		}
	}
	return 0;
}

/* Why an address was refused, found before any event memory is touched. */
struct net_why {
	__u32 rule;
	__u32 domain_id;
};

/*
 * Did the sandbox's resolver answer @t's address for an allowed name whose
 * TTL still runs and whose entry allows this port? 1: yes. Otherwise @why
 * learns the name and the reason (expired, or another port).
 */
static __always_inline int dns_allowed(__u64 sandbox_cgid, const struct net_target *t,
				       struct net_why *why)
{
	struct sbx_dns_key key = { .sandbox_cgid = sandbox_cgid };
	struct sbx_dns_entry *e;
	__u64 now;

	__builtin_memcpy(key.addr, t->addr, 16);
	e = bpf_map_lookup_elem(&dns_allow, &key);
	if (!e)
		return 0;
	now = bpf_ktime_get_boot_ns();
	for (int i = 0; i < SBX_DNS_SLOTS; i++) {
		struct sbx_dns_slot *s = &e->s[i];
		bool port_ok = t->port >= s->lo && t->port <= s->hi;

		if (!s->domain_id)
			continue;
		/* A connect grant: its use is reported (2); once expired it explains nothing. */
		if (s->domain_id == SBX_DOMAIN_GRANT) {
			if (port_ok && now < s->expires_ns) {
				why->rule = s->rule_id;
				return 2;
			}
			continue;
		}
		if (port_ok && now < s->expires_ns)
			return 1;
		/* Name the most telling slot: a right-port one that expired beats another port. */
		if (port_ok || !why->domain_id) {
			why->domain_id = s->domain_id;
			why->rule = port_ok ? SBX_RULE_DNS_EXPIRED : s->rule_id;
		}
	}
	return 0;
}

/*
 * Would this socket's port-53 traffic to @t be steered to the task's
 * resolver (by a sandbox with domain rules)? Asked once per call, not per
 * sandbox: the resolver lookup walks the task's cgroup levels.
 */
static __always_inline bool steerable(struct socket *sock, const struct net_target *t)
{
	__u16 proto, type;

	if (t->port != DNS_PORT || !current_resolver().p4)
		return false;
	/* What the cgroup programs rewrite: stream and datagram sockets (a raw one is not). */
	type = BPF_CORE_READ(sock, type);
	if (type != SOCK_STREAM && type != SOCK_DGRAM)
		return false;
	proto = BPF_CORE_READ(sock, sk, sk_protocol);
	if (proto != IPPROTO_UDP && proto != IPPROTO_TCP)
		return false;
	/* The rewrite runs for the socket's cgroup: it must be the caller's, in the sandbox. */
	return BPF_CORE_READ(sock, sk, sk_cgrp_data.cgroup, kn, id) == bpf_get_current_cgroup_id();
}

/* What one sandbox of the chain says of a destination (judge_inet's first pass). */
enum { NET_PASS, NET_GRANTED, NET_DENIED };

/*
 * What sandbox @cgid's policy (@sb: its entry as the chain copied it)
 * says of @t: NET_PASS, NET_GRANTED or
 * NET_DENIED, with the rule and the name in @why. @steer: the traffic goes
 * to the resolver (steerable()), which a sandbox with domain rules lets
 * through. A global function: the verifier checks it once, on its own,
 * instead of once per sandbox of the chain with every combination of the
 * others' outcomes, which took socket_sendmsg to 86 % of its limit on 7.x.
 */
__noinline int sbx_inet_verdict(__u64 cgid, const struct sbx_sb_copy *sb, __u32 steer, struct net_target *t,
				struct net_why *why)
{
	__u32 verdict;
	int allowed;

	if (!sb || !t || !why)
		return NET_PASS;
	why->rule = SBX_RULE_NET_DEFAULT;
	why->domain_id = 0;
	if (steer && (sb->flags & SBX_SANDBOX_DNS))
		return NET_PASS;
	verdict = cidr_verdict(sb->policy_id, t, &why->rule);
	if (verdict == SBX_NET_ALLOW)
		return NET_PASS;
	if (verdict != SBX_NET_DENY && (sb->flags & SBX_SANDBOX_NET_ALL))
		return NET_PASS;
	/* A deny rule of the policy wins over DNS answers and grants alike. */
	allowed = verdict != SBX_NET_DENY ? dns_allowed(cgid, t, why) : 0;
	if (allowed == 1)
		return NET_PASS;
	return allowed == 2 ? NET_GRANTED : NET_DENIED;
}

/* judge_inet's two passes share this: the verdicts of the first, what the second made of them. */
struct inet_pass {
	struct sbx_chain c;			/* the sandboxes both passes judge for */
	struct socket *sock;
	struct net_target t;
	__u32 op;
	int res;				/* non-zero once an enforcing sandbox denied */
	__u32 rule[SBX_NEST_MAX];
	__u32 domain_id[SBX_NEST_MAX];
	__u8 what[SBX_NEST_MAX];
};

/*
 * bpf_loop callback, the second pass: the event of sandbox @i's verdict
 * (a grant used, a denial), outermost first; an enforcing denial ends it.
 * Apart from the verdicts, in a callback the verifier checks once: written
 * into the loop, the events made 7.x's verifier walk every combination of
 * the four sandboxes' outcomes, close to its limit.
 */
static long inet_report(__u32 i, void *ctx)
{
	struct inet_pass *p = ctx;
	__u32 k = i & (SBX_NEST_MAX - 1);
	JUDGE(j);
	int res;

	if (p->what[k] == NET_PASS)
		return 0;
	res = judge_begin_for(&j, &p->c, k);
	if (p->what[k] == NET_GRANTED) {
		/* The grant's use is reported; without memory for the event it still allows. */
		if (res > 0) {
			event_net(&j, p->sock, &p->t);
			emit(&j, p->op, SBX_VERDICT_GRANTED, p->rule[k], 0);
		} else {
			stat_inc(SBX_STAT_EVENTS_LOST);
		}
		return 0;
	}
	if (res < 0) {
		/* Fail closed, unless the sandbox only audits; the lost event is counted. */
		stat_inc(SBX_STAT_EVENTS_LOST);
		if (p->c.sb[k].flags & SBX_SANDBOX_AUDIT)
			return 0;
		stat_inc(SBX_STAT_DENIED);
		p->res = res;
		return 1;
	}
	j.s->ev.domain_id = p->domain_id[k];
	event_net(&j, p->sock, &p->t);
	p->res = deny(&j, p->op, p->rule[k]);
	return p->res ? 1 : 0;
}

/*
 * Judge an IPv4/IPv6 destination for @op. The verdicts need only map
 * lookups (first pass); work memory, for the events, is taken only for
 * what is to be reported (second pass, inet_report).
 */
static __always_inline int judge_inet(struct socket *sock, const struct net_target *t, __u32 op)
{
	struct inet_pass p = { .sock = sock, .t = *t, .op = op };
	__u32 i, steer, report = 0;
	int what;

	if (!current_chain(&p.c))
		return 0;
	steer = steerable(sock, t);
	for (i = 0; i < SBX_NEST_MAX; i++) {
		struct net_why why;

		if (i >= p.c.n)
			break;
		what = sbx_inet_verdict(p.c.cgid[i & (SBX_NEST_MAX - 1)], &p.c.sb[i & (SBX_NEST_MAX - 1)], steer,
					&p.t, &why);
		if (what != NET_GRANTED && what != NET_DENIED)
			continue;
		p.what[i & (SBX_NEST_MAX - 1)] = what;
		p.rule[i & (SBX_NEST_MAX - 1)] = why.rule;
		p.domain_id[i & (SBX_NEST_MAX - 1)] = why.domain_id;
		report = i + 1;
	}
	if (report)
		bpf_loop(report, inet_report, &p, 0);
	if (p.c.overflow && !p.res)
		stat_inc(SBX_STAT_DENIED);	/* more sandboxes than can be judged (sbx_current_chain) */
	/* Every refusal here is -EACCES (deny, or no memory to judge with); said so for the verifier. */
	return p.res || p.c.overflow ? -EACCES : 0;
}

SBX_LSM(socket_connect, net_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen)
{
	struct net_target t;

	if (task_outside())
		return 0;
	if (!read_inet(address, addrlen, 0, INET_DEST, &t))
		return 0;	/* unix: judged on the peer (below); AF_UNSPEC: a disconnect */
	return judge_inet(sock, &t, SBX_OP_CONNECT);
}

/*
 * Remember who talks to the resolver, by @key (protocol << 16 | local
 * port; port 0: nothing to key on), for its events. A global function,
 * verified once: inlined at socket_sendmsg's two calls, the verifier
 * walked it for every state that reached them (6.12: 2,747 of that
 * program's 11,184 instructions).
 */
__noinline int dns_client_note(__u32 key)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	struct sbx_dns_client c = {};
	__u64 id = bpf_get_current_pid_tgid();

	if (!(key & 0xffff))
		return 0;
	c.ts_ns = bpf_ktime_get_ns();
	c.cgroup_id = bpf_get_current_cgroup_id();
	c.pid = (__u32)id;
	c.tgid = id >> 32;
	c.ppid = BPF_CORE_READ(task, real_parent, tgid);
	c.uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(c.comm, sizeof(c.comm));
	bpf_map_update_elem(&dns_clients, &key, &c, BPF_ANY);
	return 0;
}

static __always_inline void note_dns_client(struct socket *sock)
{
	dns_client_note((__u32)BPF_CORE_READ(sock, sk, sk_protocol) << 16 |
			BPF_CORE_READ(sock, sk, __sk_common.skc_num));
}

/*
 * Is @sk (the sending socket's sock, as socket_sendmsg read it: untrusted,
 * possibly NULL) connected to the resolver (after the rewrite)? Through
 * struct sock, whose BTF libbpf searches anyway (a type of its own costs a
 * search), with plain loads (a helper read each cost about 100
 * instructions).
 */
static __always_inline bool to_resolver(struct sock *sk)
{
	struct dns_ports r;
	__u16 dport;
	bool loop4;

	if (!sk)
		return false;
	dport = bpf_ntohs(sk->__sk_common.skc_dport);
	if (!dport)
		return false;
	loop4 = sk->__sk_common.skc_daddr == bpf_htonl(LOOPBACK4);
	/* The resolver is on 127.0.0.1 or ::1 (steer4, steer6): any other peer is not it, and walks nothing. */
	if (!loop4) {
		const __u32 *a6 = sk->__sk_common.skc_v6_daddr.in6_u.u6_addr32;

		if (a6[0] || a6[1] || a6[2] || a6[3] != bpf_htonl(1))
			return false;
	}
	r = current_resolver();
	if (!r.p4 || (dport != r.p4 && dport != r.p6))
		return false;
	return loop4 || dport == r.p6;
}

SBX_LSM(socket_sendmsg, net_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size)
{
	struct net_target t;
	struct sock *sk;
	__u16 proto;
	void *name;
	int len, res;

	if (task_outside())
		return 0;
	/*
	 * Plain loads (a helper read each was about 100 instructions), through
	 * untrusted copies of the hook's pointers (sandbox.h UNTRUSTED). A
	 * socket without its sock (7.x's verifier asks) reads as family and
	 * protocol 0, as a failed read did.
	 */
	sk = UNTRUSTED(socket, sock)->sk;
	msg = UNTRUSTED(msghdr, msg);
	name = msg->msg_name;
	len = msg->msg_namelen;
	if (!name || !len || !read_inet(name, len, sk ? sk->__sk_common.skc_family : 0, INET_DEST, &t)) {
		if (to_resolver(sk) && current_chain_n())
			note_dns_client(sock);
		return 0;
	}
	/* TCP (and MPTCP) take an address only for Fast Open; otherwise it is ignored. */
	proto = sk ? sk->sk_protocol : 0;
	if ((proto == IPPROTO_TCP || proto == IPPROTO_MPTCP) && !(msg->msg_flags & MSG_FASTOPEN))
		return 0;
	res = judge_inet(sock, &t, SBX_OP_SENDTO);
	if (!res && t.port == DNS_PORT && current_resolver().p4)
		note_dns_client(sock);	/* bound after the first send; later ones are attributed */
	return res;
}

/*
 * Deny @op for every sandbox of @j's chain without @flag (the first
 * enforcing one ends it). @fill puts the operation's details in the event.
 */
#define deny_unless_flag(j, flag, op, rule, fill)			\
	({								\
		__u32 __i;						\
		int __r = 0;						\
									\
		for_each_sandbox(j, __i) {				\
			if ((j)->sb->flags & (flag))			\
				continue;				\
			fill;						\
			__r = deny(j, op, rule);			\
			if (__r)					\
				break;					\
		}							\
		__r;							\
	})

/* A check with nothing to resolve: deny @op unless every sandbox has @flag. */
static __always_inline int judge_flag(struct socket *sock, __u32 flag, __u32 op, __u32 rule,
				      const struct net_target *t)
{
	JUDGE(j);
	int res;

	res = judge_begin(&j);
	if (res <= 0)
		return res;
	return deny_unless_flag(&j, flag, op, rule, if (t) event_net(&j, sock, t));
}

SBX_LSM(socket_bind, net_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen)
{
	struct net_target t;
	char first = 1;
	__u16 family = 0;

	if (task_outside())
		return 0;
	if (read_inet(address, addrlen, BPF_CORE_READ(sock, sk, __sk_common.skc_family), INET_LOCAL, &t))
		return t.port ? judge_flag(sock, SBX_SANDBOX_LOCAL_BIND, SBX_OP_BIND, SBX_RULE_LOCAL_BIND, &t) : 0;
	bpf_probe_read_kernel(&family, sizeof(family), address);
	if (family != AF_UNIX || addrlen <= 2)
		return 0;	/* other families; a unix autobind names nothing */
	bpf_probe_read_kernel(&first, 1, (char *)address + 2);
	if (first)
		return 0;	/* a path: creating it is judged as a file write (path_mknod) */
	return judge_flag(sock, SBX_SANDBOX_UNIX_ABSTRACT | SBX_SANDBOX_UNIX_ALL, SBX_OP_BIND,
			  SBX_RULE_ABSTRACT, NULL);
}

SBX_LSM(socket_listen, net_socket_listen, struct socket *sock, int backlog)
{
	struct net_target t = {};

	if (task_outside())
		return 0;
	t.family = BPF_CORE_READ(sock, sk, __sk_common.skc_family);
	if (t.family != AF_INET && t.family != AF_INET6)
		return 0;
	t.port = BPF_CORE_READ(sock, sk, __sk_common.skc_num);
	return judge_flag(sock, SBX_SANDBOX_LOCAL_BIND, SBX_OP_LISTEN, SBX_RULE_LOCAL_BIND, &t);
}

SBX_LSM(socket_create, net_socket_create, int family, int type, int protocol, int kern)
{
	JUDGE(j);
	int res, t = type & SOCK_TYPE_MASK;

	if (kern || !nr_sandboxes)
		return 0;
	if (family == AF_UNIX || family == AF_NETLINK || family == AF_ALG)
		return 0;
	if ((family == AF_INET || family == AF_INET6) && t != SOCK_RAW && t != SOCK_PACKET)
		return 0;
	res = judge_begin(&j);
	if (res <= 0)
		return res;
	j.s->ev.flags |= SBX_EV_NET;
	j.s->ev.family = family;
	j.s->ev.sock_type = t;
	j.s->ev.protocol = protocol;
	return deny_unless_flag(&j, SBX_SANDBOX_RAW, SBX_OP_SOCKET, SBX_RULE_SOCKET, (void)0);
}

/*
 * The protocol a socket really got: SOCK_SEQPACKET or SOCK_STREAM with
 * protocol 0 or 132 is SCTP once its module is loaded, and SCTP connects
 * and sends through paths socket_connect never sees (SCTP_SOCKOPT_CONNECTX,
 * implicit associations, per-message peers). IPv4/IPv6 sockets keep to the
 * protocols the hooks above judge completely.
 */
SBX_LSM(socket_post_create, net_socket_post_create, struct socket *sock, int family, int type, int protocol,
	     int kern)
{
	struct sock *sk;
	JUDGE(j);
	__u16 proto;
	int res;

	if (kern || !nr_sandboxes || (family != AF_INET && family != AF_INET6))
		return 0;
	/*
	 * Every inet socket on the host comes here: plain loads, not two
	 * helper reads (about 200 instructions), untrusted (sandbox.h
	 * UNTRUSTED). No sock (7.x's verifier asks) reads as protocol 0,
	 * judged as a failed read was.
	 */
	sk = UNTRUSTED(socket, sock)->sk;
	proto = sk ? sk->sk_protocol : 0;
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE ||
	    proto == IPPROTO_MPTCP || proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6)
		return 0;
	res = judge_begin(&j);
	if (res <= 0)
		return res;
	j.s->ev.flags |= SBX_EV_NET;
	j.s->ev.family = family;
	j.s->ev.sock_type = type & SOCK_TYPE_MASK;
	j.s->ev.protocol = proto;
	return deny_unless_flag(&j, SBX_SANDBOX_RAW, SBX_OP_SOCKET, SBX_RULE_SOCKET, (void)0);
}

/* --- unix sockets: judged on the peer, where it really is -------------------- */

/* The abstract name of @addr (without its leading NUL) into the event. */
static __always_inline void abstract_to_event(struct unix_address *addr, struct sbx_event *ev)
{
	int len = BPF_CORE_READ(addr, len) - 3;	/* sun_family, the NUL */

	if (len <= 0)
		return;
	if (len > 107)
		len = 107;
	if (bpf_probe_read_kernel(ev->path, len & 0x7f, (char *)addr->name + 3))
		return;
	ev->path[len & 0x7f] = '\0';
	ev->path_len = len;
	ev->flags |= SBX_EV_ABSTRACT;
}

/* The peer as one sandbox sees it: 0 allowed, 1 denied (*@rule). @res: how its path resolved. */
static __always_inline int unix_one(struct judge *j, __u64 peer_cg, bool abstract, int res,
				    __u32 *rule)
{
	if ((j->sb->flags & SBX_SANDBOX_UNIX_ALL) || peer_cg == j->sandbox_cgid ||
	    peer_cg == bpf_get_current_cgroup_id())
		return 0;	/* every socket, or both ends in this sandbox */
	if (abstract) {
		*rule = SBX_RULE_ABSTRACT;
		return !(j->sb->flags & SBX_SANDBOX_UNIX_ABSTRACT);
	}
	if (res != 0 /* PATH_RESOLVED */) {
		*rule = SBX_RULE_NONE;
		return 1;
	}
	fs_match((struct sbx_path *)(j->s->walk.b + (j->s->walk.start & (SBX_PATH_MAX - 1))),
		 j->s->walk.len, j->sb->policy_id, 0, &j->s->match);
	*rule = SBX_RULE_UNIX;
	return !j->s->match.v.unix_allow;
}

static __always_inline int judge_unix(struct sock *peer, __u32 op)
{
	struct unix_sock *u = (struct unix_sock *)peer;
	struct unix_address *addr;
	struct dentry *d;
	JUDGE(j);
	__u64 peer_cg;
	__u32 i, rule;
	int res, walk;

	res = judge_begin(&j);
	if (res <= 0)
		return res;
	addr = BPF_CORE_READ(u, addr);
	if (!addr)
		return 0;	/* unnamed: a socketpair, or a peer that never bound */
	peer_cg = BPF_CORE_READ(peer, sk_cgrp_data.cgroup, kn, id);
	j.s->ev.flags |= SBX_EV_NET;
	j.s->ev.family = AF_UNIX;
	j.s->ev.sock_type = BPF_CORE_READ(peer, sk_type);
	d = BPF_CORE_READ(u, path.dentry);
	if (d) {
		walk = resolve_in(ptr_value(d), ptr_value(real_mount(BPF_CORE_READ(u, path.mnt))),
				  &j.s->walk, (struct sbx_path *)j.s->ev.path,
				  (struct sbx_path_len *)&j.s->ev.path_len);
		if (walk)
			j.s->ev.flags |= SBX_EV_PATH_UNRESOLVED;
	} else {
		walk = 0;
		abstract_to_event(addr, &j.s->ev);
	}
	for_each_sandbox(&j, i) {
		if (!unix_one(&j, peer_cg, !d, walk, &rule))
			continue;
		res = deny(&j, op, rule);
		if (res)
			return res;
	}
	return 0;
}

SBX_LSM(unix_stream_connect, net_unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk)
{
	if (task_outside())
		return 0;
	return judge_unix(other, SBX_OP_CONNECT);
}

SBX_LSM(unix_may_send, net_unix_may_send, struct socket *sock, struct socket *other)
{
	if (task_outside())
		return 0;
	return judge_unix(BPF_CORE_READ(other, sk), SBX_OP_SENDTO);
}

/* --- DNS steering: cgroup sock_addr programs on the sandbox's cgroup or a parent --- */

static __always_inline void remember(struct bpf_sock_addr *ctx, const __u8 *addr16)
{
	struct dns_orig o = { .port = ctx->user_port };
	__u64 cookie = bpf_get_socket_cookie(ctx);

	__builtin_memcpy(o.addr, addr16, 16);
	bpf_map_update_elem(&dns_orig, &cookie, &o, BPF_ANY);
}

static __always_inline int steer4(struct bpf_sock_addr *ctx)
{
	__u8 a[16] = { [10] = 0xff, [11] = 0xff };
	__u32 ip = ctx->user_ip4;
	struct dns_ports r;

	if (ctx->user_port != bpf_htons(DNS_PORT))
		return 1;
	r = current_resolver();
	if (!r.p4)
		return 1;
	if (ctx->type != SOCK_STREAM && ctx->type != SOCK_DGRAM)
		return 1;
	__builtin_memcpy(&a[12], &ip, 4);
	remember(ctx, a);
	ctx->user_ip4 = bpf_htonl(LOOPBACK4);
	ctx->user_port = bpf_htons(r.p4);
	return 1;
}

static __always_inline int steer6(struct bpf_sock_addr *ctx)
{
	struct dns_ports r;
	__u32 w[4];

	if (ctx->user_port != bpf_htons(DNS_PORT))
		return 1;
	r = current_resolver();
	if (!r.p4)
		return 1;
	if (ctx->type != SOCK_STREAM && ctx->type != SOCK_DGRAM)
		return 1;
	w[0] = ctx->user_ip6[0];
	w[1] = ctx->user_ip6[1];
	w[2] = ctx->user_ip6[2];
	w[3] = ctx->user_ip6[3];
	remember(ctx, (__u8 *)w);
	if (r.p6 && !is_mapped(w)) {
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = 0;
		ctx->user_ip6[3] = bpf_htonl(1);
		ctx->user_port = bpf_htons(r.p6);
		return 1;
	}
	/* An IPv4 server, or no ::1: the resolver's IPv4 socket, v4-mapped. */
	ctx->user_ip6[0] = 0;
	ctx->user_ip6[1] = 0;
	ctx->user_ip6[2] = bpf_htonl(0xffff);
	ctx->user_ip6[3] = bpf_htonl(LOOPBACK4);
	ctx->user_port = bpf_htons(r.p4);
	return 1;
}

SEC("cgroup/connect4")
int net_connect4(struct bpf_sock_addr *ctx)
{
	return steer4(ctx);
}

SEC("cgroup/sendmsg4")
int net_sendmsg4(struct bpf_sock_addr *ctx)
{
	return steer4(ctx);
}

SEC("cgroup/connect6")
int net_connect6(struct bpf_sock_addr *ctx)
{
	return steer6(ctx);
}

SEC("cgroup/sendmsg6")
int net_sendmsg6(struct bpf_sock_addr *ctx)
{
	return steer6(ctx);
}

/* A reply from (or the peer) the resolver: show the server the socket asked for. */
static __always_inline int unsteer4(struct bpf_sock_addr *ctx)
{
	__u64 cookie;
	struct dns_orig *o;
	__u32 ip;
	struct dns_ports r;

	/* Only a reply from the loopback address can be the resolver's: the walk after. */
	if (ctx->user_ip4 != bpf_htonl(LOOPBACK4))
		return 1;
	r = current_resolver();
	if (!r.p4 || ctx->user_port != bpf_htons(r.p4))
		return 1;
	cookie = bpf_get_socket_cookie(ctx);
	o = bpf_map_lookup_elem(&dns_orig, &cookie);
	if (!o)
		return 1;
	__builtin_memcpy(&ip, &o->addr[12], 4);
	ctx->user_ip4 = ip;
	ctx->user_port = o->port;
	return 1;
}

static __always_inline int unsteer6(struct bpf_sock_addr *ctx)
{
	__u32 w3 = ctx->user_ip6[3], w2 = ctx->user_ip6[2];
	__u16 port = bpf_ntohs(ctx->user_port);
	struct dns_orig *o;
	struct dns_ports r;
	bool mapped4, loop6;
	__u64 cookie;
	__u32 w[4];

	if (ctx->user_ip6[0] || ctx->user_ip6[1])
		return 1;
	/* Only a reply from the loopback address can be the resolver's: the walk after. */
	mapped4 = w2 == bpf_htonl(0xffff) && w3 == bpf_htonl(LOOPBACK4);
	loop6 = !w2 && w3 == bpf_htonl(1);
	if (!mapped4 && !loop6)
		return 1;
	r = current_resolver();
	if (!r.p4)
		return 1;
	if (!((port == r.p4 && mapped4) || (r.p6 && port == r.p6 && loop6)))
		return 1;
	cookie = bpf_get_socket_cookie(ctx);
	o = bpf_map_lookup_elem(&dns_orig, &cookie);
	if (!o)
		return 1;
	__builtin_memcpy(w, o->addr, 16);
	ctx->user_ip6[0] = w[0];
	ctx->user_ip6[1] = w[1];
	ctx->user_ip6[2] = w[2];
	ctx->user_ip6[3] = w[3];
	ctx->user_port = o->port;
	return 1;
}

SEC("cgroup/recvmsg4")
int net_recvmsg4(struct bpf_sock_addr *ctx)
{
	return unsteer4(ctx);
}

SEC("cgroup/recvmsg6")
int net_recvmsg6(struct bpf_sock_addr *ctx)
{
	return unsteer6(ctx);
}

SEC("cgroup/getpeername4")
int net_getpeername4(struct bpf_sock_addr *ctx)
{
	return unsteer4(ctx);
}

SEC("cgroup/getpeername6")
int net_getpeername6(struct bpf_sock_addr *ctx)
{
	return unsteer6(ctx);
}
