// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "events.h"
#include "evsweep.h"
#include "loader.h"
#include "policy.h"
#include "util.h"

const char *sbx_op_name(__u32 op)
{
	static const char *const names[SBX_OP__MAX] = {
		[SBX_OP_NONE] = "none",
		[SBX_OP_READ] = "read",
		[SBX_OP_WRITE] = "write",
		[SBX_OP_CREATE] = "create",
		[SBX_OP_MKDIR] = "mkdir",
		[SBX_OP_RMDIR] = "rmdir",
		[SBX_OP_UNLINK] = "unlink",
		[SBX_OP_RENAME] = "rename",
		[SBX_OP_LINK] = "link",
		[SBX_OP_SYMLINK] = "symlink",
		[SBX_OP_TRUNCATE] = "truncate",
		[SBX_OP_CHMOD] = "chmod",
		[SBX_OP_CHOWN] = "chown",
		[SBX_OP_UTIMES] = "utimes",
		[SBX_OP_SETXATTR] = "setxattr",
		[SBX_OP_REMOVEXATTR] = "removexattr",
		[SBX_OP_IOCTL] = "ioctl",
		[SBX_OP_MOUNT] = "mount",
		[SBX_OP_UMOUNT] = "umount",
		[SBX_OP_PIVOT_ROOT] = "pivot_root",
		[SBX_OP_USERNS] = "userns_create",
		[SBX_OP_CONNECT] = "connect",
		[SBX_OP_SENDTO] = "sendto",
		[SBX_OP_BIND] = "bind",
		[SBX_OP_LISTEN] = "listen",
		[SBX_OP_SOCKET] = "socket",
		[SBX_OP_DNS] = "dns",
		[SBX_OP_THROTTLED] = "throttled",
		[SBX_OP_PTRACE] = "ptrace",
		[SBX_OP_SIGNAL] = "signal",
		[SBX_OP_SCHED] = "sched",
		[SBX_OP_BPF] = "bpf",
		[SBX_OP_KERNEL_LOAD] = "kernel_load",
		[SBX_OP_PERF] = "perf_event_open",
		[SBX_OP_CAPABILITY] = "capability",
		[SBX_OP_TTY] = "tty_input",
		[SBX_OP_CLONE_CGROUP] = "clone_into_cgroup",
	};

	return op < SBX_OP__MAX && names[op] ? names[op] : "unknown";
}

const char *sbx_verdict_name(__u32 verdict)
{
	switch (verdict) {
	case SBX_VERDICT_DENY: return "denied";
	case SBX_VERDICT_AUDIT: return "audit";
	case SBX_VERDICT_GRANTED: return "granted";
	}
	return "unknown";
}

int event_validate(const void *data, size_t size)
{
	const struct sbx_event *ev = data;
	size_t head = offsetof(struct sbx_event, path);

	if (size < head + 1 || size > sizeof(*ev))
		return -EINVAL;
	if (ev->path_len >= SBX_PATH_MAX || head + ev->path_len + 1 > size)
		return -EINVAL;
	if (ev->path[ev->path_len] != '\0')
		return -EINVAL;
	if (!(ev->flags & SBX_EV_PATH2))
		return 0;
	head = offsetof(struct sbx_event, path2);
	if (ev->path2_len >= SBX_PATH_MAX || head + ev->path2_len + 1 > size)
		return -EINVAL;
	if (ev->path2[ev->path2_len] != '\0')
		return -EINVAL;
	return 0;
}

/* Text for the rule ids that are not an index into the policy. */
const char *event_rule_text(const struct sbx_event *ev, const char *policy_text)
{
	if (policy_text)
		return policy_text;
	switch (ev->rule_id) {
	case SBX_RULE_DEFAULT_WRITE: return "default: no allowWrite rule covers it";
	case SBX_RULE_PSEUDO_FS: return "mandatory: cgroup, bpf and security file systems";
	case SBX_RULE_NAMESPACE: return "mandatory: no mounts or user namespaces in a sandbox";
	case SBX_RULE_DEVICE: return "mandatory: no block devices or new device nodes";
	case SBX_RULE_NET_DEFAULT: return "default: no network rule and no DNS answer allows it";
	case SBX_RULE_SOCKET: return "default: no raw, packet or other-family sockets (allowRawSockets)";
	case SBX_RULE_LOCAL_BIND: return "default: no listening sockets (allowLocalBinding)";
	case SBX_RULE_UNIX: return "default: not in allowUnixSockets";
	case SBX_RULE_ABSTRACT: return "default: no abstract unix sockets (allowAbstractUnixSockets)";
	case SBX_RULE_DNS_EXPIRED: return "the DNS answer that allowed this address has expired";
	case SBX_RULE_DOMAIN_DEFAULT: return "default: not in allowedDomains";
	case SBX_RULE_DNS_FAILED: return "fail-closed: the answer's addresses could not be installed";
	case SBX_RULE_TASK:
		return "mandatory: no tracing, signalling or tuning of processes outside the sandbox,"
		       " no children started outside it";
	case SBX_RULE_SYSTEM:
		return "mandatory: no bpf, kernel loading, perf events, host-administration capabilities"
		       " or terminal input in a sandbox";
	case SBX_RULE_KERNEL_FILES:
		return "mandatory: no writes to /proc (but the task's own), /sys and other kernel file"
		       " systems; no /dev/mem, /dev/kmem, /dev/port";
	case SBX_RULE_DNS_TYPE: return "default: a DNS question type the resolver does not serve (A, AAAA, CNAME)";
	case SBX_RULE_DNS_RATE: return "limit: the sandbox's DNS query rate";
	case SBX_RULE_NONE:
		if (ev->flags & SBX_EV_PATH_UNRESOLVED)
			return "fail-closed: unresolvable path";
		return "fail-closed";
	}
	return "unknown rule";
}

static const char *event_path(const struct sbx_event *ev, const char *path, __u32 len)
{
	return len ? path : (ev->flags & SBX_EV_PATH_UNRESOLVED) ? "(unresolvable path)" : "";
}

static const char *proto_name(__u16 proto, __u16 type)
{
	switch (proto) {
	case IPPROTO_TCP: return "tcp";
	case IPPROTO_UDP: return "udp";
	case IPPROTO_ICMP: return "icmp";
	case IPPROTO_ICMPV6: return "icmpv6";
	case IPPROTO_MPTCP: return "mptcp";
	}
	switch (type) {
	case SOCK_STREAM: return "stream";
	case SOCK_DGRAM: return "dgram";
	case SOCK_SEQPACKET: return "seqpacket";
	case SOCK_RAW: return "raw";
	case SOCK_PACKET: return "packet";
	}
	return "other";
}

static const char *family_name(__u16 family)
{
	switch (family) {
	case AF_INET: return "inet";
	case AF_INET6: return "inet6";
	case AF_UNIX: return "unix";
	case AF_PACKET: return "packet";
	case AF_NETLINK: return "netlink";
	}
	return "other";
}

/* The address as text: a v4-mapped one as IPv4. */
static void net_addr(const struct sbx_event *ev, char *buf, size_t sz)
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(ev->addr, mapped, sizeof(mapped)))
		inet_ntop(AF_INET, ev->addr + 12, buf, sz);
	else
		inet_ntop(AF_INET6, ev->addr, buf, sz);
}

void event_net_target(const struct sbx_event *ev, char *buf, size_t sz)
{
	char a[INET6_ADDRSTRLEN];
	bool v6;

	if (ev->family == AF_UNIX) {
		snprintf(buf, sz, "unix:%s%s", (ev->flags & SBX_EV_ABSTRACT) ? "@" : "",
			 event_path(ev, ev->path, ev->path_len));
		return;
	}
	if (ev->op == SBX_OP_SOCKET || (ev->family != AF_INET && ev->family != AF_INET6)) {
		snprintf(buf, sz, "%s/%s", family_name(ev->family), proto_name(ev->protocol, ev->sock_type));
		return;
	}
	net_addr(ev, a, sizeof(a));
	v6 = strchr(a, ':') != NULL;
	snprintf(buf, sz, "%s%s%s:%u/%s", v6 ? "[" : "", a, v6 ? "]" : "", ev->port,
		 proto_name(ev->protocol, ev->sock_type));
}

static const char *const cap_names[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
	"CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
	"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
	"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
};

/* The kernel's PERF_SECURITY_OPEN, _CPU, _KERNEL, _TRACEPOINT. */
static const char *const perf_access_names[] = { "open", "cpu", "kernel", "tracepoint" };

static const char *const bpf_cmd_names[] = {
	"BPF_MAP_CREATE", "BPF_MAP_LOOKUP_ELEM", "BPF_MAP_UPDATE_ELEM", "BPF_MAP_DELETE_ELEM",
	"BPF_MAP_GET_NEXT_KEY", "BPF_PROG_LOAD", "BPF_OBJ_PIN", "BPF_OBJ_GET", "BPF_PROG_ATTACH",
	"BPF_PROG_DETACH", "BPF_PROG_TEST_RUN", "BPF_PROG_GET_NEXT_ID", "BPF_MAP_GET_NEXT_ID",
	"BPF_PROG_GET_FD_BY_ID", "BPF_MAP_GET_FD_BY_ID", "BPF_OBJ_GET_INFO_BY_FD",
	"BPF_PROG_QUERY", "BPF_RAW_TRACEPOINT_OPEN", "BPF_BTF_LOAD", "BPF_BTF_GET_FD_BY_ID",
	"BPF_TASK_FD_QUERY", "BPF_MAP_LOOKUP_AND_DELETE_ELEM", "BPF_MAP_FREEZE",
	"BPF_BTF_GET_NEXT_ID", "BPF_MAP_LOOKUP_BATCH", "BPF_MAP_LOOKUP_AND_DELETE_BATCH",
	"BPF_MAP_UPDATE_BATCH", "BPF_MAP_DELETE_BATCH", "BPF_LINK_CREATE", "BPF_LINK_UPDATE",
	"BPF_LINK_GET_FD_BY_ID", "BPF_LINK_GET_NEXT_ID", "BPF_ENABLE_STATS", "BPF_ITER_CREATE",
	"BPF_LINK_DETACH", "BPF_PROG_BIND_MAP", "BPF_TOKEN_CREATE",
};

static const char *load_name(__u32 what)
{
	static const char *const names[] = { "unknown", "firmware", "module", "kexec image",
					     "kexec initramfs", "security policy", "x509 certificate" };

	if (what == SBX_LOAD_MODULE_REQUEST)
		return "module request";
	what &= ~SBX_LOAD_FROM_MEMORY;
	return what < sizeof(names) / sizeof(names[0]) ? names[what] : "unknown";
}

/* "SIGKILL", "SIG37" (real-time), "0" (a probe). */
static void signal_text(__u32 sig, char *buf, size_t sz)
{
	const char *abbrev = sig && sig < 32 ? sigabbrev_np((int)sig) : NULL;

	if (!sig)
		snprintf(buf, sz, "signal 0");
	else if (abbrev)
		snprintf(buf, sz, "SIG%s", abbrev);
	else
		snprintf(buf, sz, "SIG%u", sig);
}

bool event_is_task_op(const struct sbx_event *ev)
{
	return ev->op >= SBX_OP_PTRACE && ev->op < SBX_OP__MAX;
}

/* A DNS question type (and class, when not IN) by its name: "TXT", "CH TXT", "TYPE4711". */
static void dns_type_text(__u32 arg, char *buf, size_t sz)
{
	static const struct { __u16 v; const char *name; } types[] = {
		{ 1, "A" }, { 2, "NS" }, { 5, "CNAME" }, { 6, "SOA" }, { 10, "NULL" }, { 12, "PTR" },
		{ 15, "MX" }, { 16, "TXT" }, { 28, "AAAA" }, { 33, "SRV" }, { 35, "NAPTR" }, { 41, "OPT" },
		{ 43, "DS" }, { 46, "RRSIG" }, { 48, "DNSKEY" }, { 64, "SVCB" }, { 65, "HTTPS" },
		{ 252, "AXFR" }, { 255, "ANY" }, { 257, "CAA" },
	};
	static const struct { __u16 v; const char *name; } classes[] = {
		{ 3, "CH" }, { 4, "HS" }, { 254, "NONE" }, { 255, "ANY" },
	};
	__u16 type = arg & 0xffff, class = arg >> 16;
	const char *tn = NULL, *cn = NULL;
	char tb[16], cb[16];

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].v == type)
			tn = types[i].name;
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (classes[i].v == class)
			cn = classes[i].name;
	snprintf(tb, sizeof(tb), "TYPE%u", type);
	snprintf(cb, sizeof(cb), "CLASS%u", class);
	snprintf(buf, sz, "%s%s%s", class ? (cn ?: cb) : "", class ? " " : "", tn ?: tb);
}

/* The resolver's refusal of a question type: its detail is the type (and class). */
static bool dns_type_event(const struct sbx_event *ev)
{
	return ev->op == SBX_OP_DNS && ev->rule_id == SBX_RULE_DNS_TYPE;
}

void event_detail(const struct sbx_event *ev, char *buf, size_t sz)
{
	buf[0] = '\0';
	if (dns_type_event(ev)) {
		dns_type_text(ev->arg, buf, sz);
		return;
	}
	switch (ev->op) {
	case SBX_OP_PTRACE:
		snprintf(buf, sz, "%s", (ev->arg & 0x02) ? "attach" : (ev->arg & 0x01) ? "read" : "traceme");
		break;
	case SBX_OP_SIGNAL:
		if (!(ev->flags & SBX_EV_TARGET))	/* fcntl or ioctl: the would-be owner is elsewhere */
			snprintf(buf, sz, "%s", ev->arg == 8 ? "F_SETOWN" : ev->arg == 15 ? "F_SETOWN_EX" :
					       ev->arg == 0x8901 ? "FIOSETOWN" : ev->arg == 0x8902 ? "SIOCSPGRP" :
					       "owner");
		else
			signal_text(ev->arg, buf, sz);
		break;
	case SBX_OP_SCHED:
		snprintf(buf, sz, "scheduling");
		break;
	case SBX_OP_BPF:
		if (ev->arg < sizeof(bpf_cmd_names) / sizeof(bpf_cmd_names[0]))
			snprintf(buf, sz, "%s", bpf_cmd_names[ev->arg]);
		else
			snprintf(buf, sz, "bpf command %u", ev->arg);
		break;
	case SBX_OP_KERNEL_LOAD:
		snprintf(buf, sz, "%s%s%s%s", load_name(ev->arg),
			 (ev->arg & SBX_LOAD_FROM_MEMORY) && ev->arg != SBX_LOAD_MODULE_REQUEST ? " from memory" : "",
			 ev->path_len ? " " : "", ev->path_len ? ev->path : "");
		break;
	case SBX_OP_PERF:
		if (ev->arg & SBX_PERF_ACCESS)
			snprintf(buf, sz, "perf event (%s access)",
				 perf_access_names[ev->arg & 3]);
		else
			snprintf(buf, sz, "perf event type %u", ev->arg);
		break;
	case SBX_OP_CAPABILITY:
		if (ev->arg < sizeof(cap_names) / sizeof(cap_names[0]))
			snprintf(buf, sz, "%s", cap_names[ev->arg]);
		else
			snprintf(buf, sz, "capability %u", ev->arg);
		break;
	case SBX_OP_CLONE_CGROUP:
		snprintf(buf, sz, "CLONE_INTO_CGROUP");
		break;
	case SBX_OP_TTY:
		snprintf(buf, sz, "%s", ev->arg == 0x5412 ? "TIOCSTI" : ev->arg == 0x541c ? "TIOCLINUX" : "ioctl");
		break;
	}
}

/* What a task or system op acted on, for the human line: "pid 12 (sshd) SIGKILL", "CAP_SYS_ADMIN". */
static void task_target(const struct sbx_event *ev, char *buf, size_t sz)
{
	char detail[SBX_PATH_MAX + 64];

	event_detail(ev, detail, sizeof(detail));
	if (ev->flags & SBX_EV_TARGET)
		snprintf(buf, sz, "pid %u (%s) %s", ev->target, ev->path, detail);
	else
		snprintf(buf, sz, "%s", detail);
}

__u32 event_repeat(const struct sbx_event *ev)
{
	return ev->repeat ? ev->repeat : 1;	/* userspace records leave it 0: one violation */
}

int event_format_human(const struct sbx_event *ev, const char *rule_text, const char *domain,
		       char *buf, size_t sz)
{
	const char *why = event_rule_text(ev, rule_text);
	char second[SBX_PATH_MAX + 8] = "", target[SBX_PATH_MAX + 64], dom[300] = "", times[48] = "";

	if (ev->op == SBX_OP_THROTTLED)
		return snprintf(buf, sz, "sbx-bpf: throttled: %u more violations in cgroup %llu were"
				" counted but not reported one by one (event rate limit)",
				event_repeat(ev), (unsigned long long)ev->sandbox_cgroup_id);
	if (ev->flags & SBX_EV_SUMMARY)
		snprintf(times, sizeof(times), " [%u more times]", event_repeat(ev));
	else if (event_repeat(ev) > 1)
		snprintf(times, sizeof(times), " [%u times]", event_repeat(ev));

	if (ev->flags & SBX_EV_PATH2)
		snprintf(second, sizeof(second), " -> %s", event_path(ev, ev->path2, ev->path2_len));
	if (ev->flags & SBX_EV_NET)
		event_net_target(ev, target, sizeof(target));
	else if (event_is_task_op(ev))
		task_target(ev, target, sizeof(target));
	else if (dns_type_event(ev)) {
		char type[32];

		dns_type_text(ev->arg, type, sizeof(type));
		snprintf(target, sizeof(target), "%s %s", event_path(ev, ev->path, ev->path_len), type);
	} else
		snprintf(target, sizeof(target), "%s%s", event_path(ev, ev->path, ev->path_len),
			 (ev->flags & SBX_EV_FD_USE) ? " (open descriptor)" :
			 (ev->flags & SBX_EV_FD_RECEIVED) ? " (received descriptor)" : "");
	if (domain && ev->op != SBX_OP_DNS)
		snprintf(dom, sizeof(dom), " [%s]", domain);
	return snprintf(buf, sz, "sbx-bpf: %s %s %s%s%s (%s%s) pid %u %.*s%s",
			sbx_verdict_name(ev->verdict), sbx_op_name(ev->op), target, second, dom, why,
			(ev->flags & SBX_EV_RENAME_GUARD) ? "; it would move files between rules" :
			(ev->flags & SBX_EV_DIRECTORY_ONLY) ? "; only a directory may have this name" : "",
			ev->tgid, SBX_COMM_LEN, ev->comm, times);
}

/* --- the human line again, from the JSON object (what the daemon's watchers get) --- */

/* snprintf at the end of what is there; @len counts what would have been written. */
struct line {
	char *buf;
	size_t sz;
	int len;
};

__attribute__((format(printf, 2, 3)))
static void put(struct line *l, const char *fmt, ...)
{
	size_t off = (size_t)l->len < l->sz ? (size_t)l->len : l->sz;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(l->buf + off, l->sz - off, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += n;
}

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* event_path() on the JSON form. */
static const char *jpath(const json_t *ev, const char *key)
{
	const char *p = jstr(ev, key);

	return *p || !json_is_true(json_object_get(ev, "path_unresolved")) ? p : "(unresolvable path)";
}

/* event_net_target() on the JSON form: "address" is null where it shows family/protocol. */
static void jnet_target(struct line *l, const json_t *ev, const json_t *net)
{
	const char *addr = json_string_value(json_object_get(net, "address"));
	bool v6 = addr && strchr(addr, ':');

	if (!strcmp(jstr(net, "family"), "unix"))
		put(l, "unix:%s%s", json_is_true(json_object_get(net, "abstract")) ? "@" : "",
		    jpath(ev, "path"));
	else if (!addr)
		put(l, "%s/%s", jstr(net, "family"), jstr(net, "protocol"));
	else
		put(l, "%s%s%s:%lld/%s", v6 ? "[" : "", addr, v6 ? "]" : "",
		    (long long)json_integer_value(json_object_get(net, "port")), jstr(net, "protocol"));
}

static int jviolation_human(const json_t *ev, char *buf, size_t sz)
{
	const json_t *net = json_object_get(ev, "net"), *proc = json_object_get(ev, "process");
	const char *op = jstr(ev, "op"), *domain = json_string_value(json_object_get(ev, "domain"));
	struct line l = { .buf = buf, .sz = sz };
	long long repeat;
	const json_t *target = json_object_get(ev, "target");
	const char *desc = json_string_value(json_object_get(ev, "descriptor"));

	put(&l, "sbx-bpf: %s %s ", jstr(ev, "verdict"), op);
	if (json_is_object(net))
		jnet_target(&l, ev, net);
	else if (json_is_object(target))
		put(&l, "pid %lld (%s) %s", (long long)json_integer_value(json_object_get(target, "pid")),
		    jstr(target, "comm"), jstr(ev, "detail"));
	else if (json_is_string(json_object_get(ev, "detail")) && !strcmp(op, "dns"))
		put(&l, "%s %s", jpath(ev, "path"), jstr(ev, "detail"));	/* a refused question type */
	else if (json_is_string(json_object_get(ev, "detail")))
		put(&l, "%s", jstr(ev, "detail"));
	else
		put(&l, "%s%s", jpath(ev, "path"), !desc ? "" : !strcmp(desc, "use") ? " (open descriptor)" :
		    " (received descriptor)");
	if (json_is_string(json_object_get(ev, "path2")))
		put(&l, " -> %s", jpath(ev, "path2"));
	if (domain && strcmp(op, "dns"))
		put(&l, " [%s]", domain);
	put(&l, " (%s%s) pid %lld %s", jstr(json_object_get(ev, "rule"), "text"),
	    json_is_true(json_object_get(ev, "moves_between_rules")) ? "; it would move files between rules" :
	    json_is_true(json_object_get(ev, "directory_only")) ? "; only a directory may have this name" : "",
	    (long long)json_integer_value(json_object_get(proc, "pid")), jstr(proc, "comm"));
	repeat = json_integer_value(json_object_get(ev, "repeat"));
	if (json_is_true(json_object_get(ev, "summary")))
		put(&l, " [%lld more times]", repeat);
	else if (repeat > 1)
		put(&l, " [%lld times]", repeat);
	return l.len;
}

int event_json_format_human(const json_t *obj, char *buf, size_t sz)
{
	const char *type = jstr(obj, "type"), *sandbox;

	if (!strcmp(type, "violation"))
		return jviolation_human(obj, buf, sz);
	if (!strcmp(type, "throttled"))
		return snprintf(buf, sz, "sbx-bpf: throttled: %lld more violations in cgroup %lld were"
				" counted but not reported one by one (event rate limit)",
				(long long)json_integer_value(json_object_get(obj, "suppressed")),
				(long long)json_integer_value(json_object_get(obj, "sandbox_cgroup_id")));
	if (strcmp(type, "lifecycle"))
		return -EINVAL;
	sandbox = json_string_value(json_object_get(obj, "sandbox"));
	return snprintf(buf, sz, "sbx-bpf: %s in sandbox %s: %s", jstr(obj, "event"), sandbox ? sandbox : "?",
			jstr(obj, "detail"));
}

void event_wall_time(__u64 mono_ns, struct timespec *ts)
{
	struct timespec now_rt, now_mono;
	long long wall;

	clock_gettime(CLOCK_REALTIME, &now_rt);
	clock_gettime(CLOCK_MONOTONIC, &now_mono);
	wall = (long long)now_rt.tv_sec * 1000000000LL + now_rt.tv_nsec -
	       ((long long)now_mono.tv_sec * 1000000000LL + now_mono.tv_nsec) + (long long)mono_ns;
	ts->tv_sec = wall / 1000000000LL;
	ts->tv_nsec = wall % 1000000000LL;
}

__u64 event_mono_now(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (__u64)now.tv_sec * 1000000000ULL + (__u64)now.tv_nsec;
}

/* Monotonic event time → wall clock, RFC 3339 with nanoseconds. */
static void event_time(__u64 mono_ns, char *buf, size_t sz)
{
	struct timespec ts;
	struct tm tm;

	event_wall_time(mono_ns, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, sz, "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec);
}

json_t *event_json_text(const char *s, size_t len)
{
	char *clean;
	json_t *j;

	if (!s)
		return json_null();
	j = json_stringn(s, len);
	if (j)
		return j;
	clean = utf8_sanitize(s, len);	/* bytes that are not UTF-8: keep the event, mark the bytes */
	j = clean ? json_string(clean) : NULL;
	free(clean);
	return j;
}

static json_t *json_text(const char *s)
{
	return event_json_text(s, s ? strlen(s) : 0);
}

static json_t *net_json(const struct sbx_event *ev)
{
	char a[INET6_ADDRSTRLEN] = "";
	bool inet = (ev->family == AF_INET || ev->family == AF_INET6) && ev->op != SBX_OP_SOCKET;

	if (!(ev->flags & SBX_EV_NET))
		return json_null();
	if (inet)
		net_addr(ev, a, sizeof(a));
	return json_pack("{s:s, s:s, s:i, s:o, s:o, s:b}",
			 "family", family_name(ev->family),
			 "protocol", proto_name(ev->protocol, ev->sock_type),
			 "protocol_number", (int)ev->protocol,
			 "address", inet ? json_string(a) : json_null(),
			 "port", inet ? json_integer(ev->port) : json_null(),
			 "abstract", !!(ev->flags & SBX_EV_ABSTRACT));
}

/* This machine's name, for records read far from it (the sinks may set their own). */
static const char *host_name(void)
{
	static char host[256];

	if (!host[0] && gethostname(host, sizeof(host) - 1))
		snprintf(host, sizeof(host), "-");
	return host;
}

static json_t *seq_json(const struct sbx_event *ev)
{
	return ev->seq ? json_integer((json_int_t)ev->seq) : json_null();
}

/* "N violations withheld by the rate limit" (type "throttled"). */
static json_t *throttled_to_json(const struct sbx_event *ev, const char *sandbox)
{
	char ts[64];

	event_time(ev->ts_ns, ts, sizeof(ts));
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:o, s:I, s:b, s:I, s:o}",
			 "schema", SBX_EVENT_SCHEMA, "type", "throttled", "host", host_name(), "time", ts,
			 "ts_ns", (json_int_t)ev->ts_ns, "kernel_seq", seq_json(ev),
			 "suppressed", (json_int_t)event_repeat(ev),
			 "summary", !!(ev->flags & SBX_EV_SUMMARY),
			 "sandbox_cgroup_id", (json_int_t)ev->sandbox_cgroup_id,
			 "sandbox", json_text(sandbox));
}

/*
 * "target" (the process acted on), "detail" (signal, capability, bpf
 * command…: text) and "arg" (its number) for task and system ops, null
 * otherwise; "descriptor": "use" or "received" when an open descriptor was
 * refused rather than an open. A task op's path is its target's name, so
 * "path" is null for those.
 */
static int task_fields(json_t *obj, const struct sbx_event *ev)
{
	char detail[SBX_PATH_MAX + 64];
	bool task = event_is_task_op(ev), target = ev->flags & SBX_EV_TARGET, with = task || dns_type_event(ev);

	event_detail(ev, detail, sizeof(detail));
	return json_object_set_new(obj, "target", target ? json_pack("{s:i, s:o}", "pid", (int)ev->target,
				   "comm", event_json_text(ev->path, ev->path_len)) : json_null()) ||
	       json_object_set_new(obj, "detail", with ? json_text(detail) : json_null()) ||
	       json_object_set_new(obj, "arg", with ? json_integer(ev->arg) : json_null()) ||
	       json_object_set_new(obj, "descriptor", (ev->flags & SBX_EV_FD_USE) ? json_string("use") :
				   (ev->flags & SBX_EV_FD_RECEIVED) ? json_string("received") : json_null()) ||
	       (task && json_object_set_new(obj, "path", json_null()));
}

json_t *event_to_json(const struct sbx_event *ev, const char *rule_text, const char *domain,
		      const char *sandbox)
{
	char ts[64];
	bool two = ev->flags & SBX_EV_PATH2;
	json_t *rule, *obj;

	if (ev->op == SBX_OP_THROTTLED)
		return throttled_to_json(ev, sandbox);
	event_time(ev->ts_ns, ts, sizeof(ts));
	rule = json_pack("{s:o, s:o}",
			 "id", ev->rule_id < SBX_RULE_FIRST_BUILTIN ? json_integer(ev->rule_id) : json_null(),
			 "text", json_text(event_rule_text(ev, rule_text)));
	obj = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:b, s:b, s:b, s:i,"
			 " s:I, s:I, s:o, s:{s:i, s:i, s:i, s:i, s:o}}",
			 "schema", SBX_EVENT_SCHEMA,
			 "type", "violation",
			 "time", ts,
			 "ts_ns", (json_int_t)ev->ts_ns,
			 "verdict", sbx_verdict_name(ev->verdict),
			 "op", sbx_op_name(ev->op),
			 "path", event_json_text(ev->path, ev->path_len),
			 "path2", two ? event_json_text(ev->path2, ev->path2_len) : json_null(),
			 "rule", rule,
			 "net", net_json(ev),
			 "domain", json_text(domain),
			 "path_unresolved", !!(ev->flags & SBX_EV_PATH_UNRESOLVED),
			 "moves_between_rules", !!(ev->flags & SBX_EV_RENAME_GUARD),
			 "directory_only", !!(ev->flags & SBX_EV_DIRECTORY_ONLY),
			 "errno", -ev->error,
			 "cgroup_id", (json_int_t)ev->cgroup_id,
			 "sandbox_cgroup_id", (json_int_t)ev->sandbox_cgroup_id,
			 "sandbox", json_text(sandbox),
			 "process", "pid", (int)ev->tgid, "tid", (int)ev->pid,
			 "ppid", (int)ev->ppid, "uid", (int)ev->uid,
			 "comm", event_json_text(ev->comm, strnlen(ev->comm, SBX_COMM_LEN)));
	/* "seq" is the sinks' record number; this one is the kernel's (a gap: records lost there). */
	if (obj && task_fields(obj, ev)) {
		json_decref(obj);
		return NULL;
	}
	if (obj && (json_object_set_new(obj, "kernel_seq", seq_json(ev)) ||
		    json_object_set_new(obj, "host", json_text(host_name())) ||
		    json_object_set_new(obj, "repeat", json_integer(event_repeat(ev))) ||
		    json_object_set_new(obj, "summary", json_boolean(ev->flags & SBX_EV_SUMMARY)))) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

int event_json_set_labels(json_t *obj, const json_t *labels)
{
	if (!obj || !json_object_size(labels))
		return 0;
	return json_object_set_new(obj, "labels", json_deep_copy(labels)) ? -ENOMEM : 0;
}

void events_emit(struct event_sink *sink, const struct sbx_event *ev)
{
	const char *rule_text = policy_rule_text(sink->policy, ev->rule_id), *domain = NULL;
	const json_t *labels = sink->labels ? sink->labels(sink->labels_ctx, ev) : NULL;
	char line[SBX_PATH_MAX + 512];

	if (!sink->policy && sink->rule_text)
		rule_text = sink->rule_text(sink->rule_ctx, ev);
	sink->received++;
	if (ev->domain_id && sink->domain_name)
		domain = sink->domain_name(sink->domain_ctx, ev);
	if (sink->forward)
		sink->forward(sink->forward_ctx, ev, rule_text, domain, labels);
	if (sink->human) {
		event_format_human(ev, rule_text, domain, line, sizeof(line));
		fprintf(sink->human, "%s\n", line);
		fflush(sink->human);
	}
	if (sink->json) {
		json_t *obj = event_to_json(ev, rule_text, domain, sink->sandbox);

		if (obj && !event_json_set_labels(obj, labels)) {
			json_dumpf(obj, sink->json, JSON_COMPACT);
			fputc('\n', sink->json);
			fflush(sink->json);
		}
		json_decref(obj);
	}
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct event_sink *sink = ctx;

	const struct sbx_event *ev = data;

	if (event_validate(data, size)) {
		sink->malformed++;
		return 0;
	}
	if (ev->op != SBX_OP_THROTTLED)
		sink->delivered++;
	evsweep_note(sink->sweep, ev, size);
	events_emit(sink, ev);
	return 0;
}

static void sweep_emit(void *ctx, const struct sbx_event *ev)
{
	events_emit(ctx, ev);
}

int events_sweep_open(struct event_sink *sink, struct sbx_loader *l)
{
	struct sbx_coalesce_slot *co;
	struct sbx_throttle_slot *th;
	int err = loader__event_slots(l, &co, &th);

	if (err)
		return err;
	sink->sweep = evsweep_new(co, th, loader__coalesce_ns(l));
	return sink->sweep ? 0 : -errno;
}

void events_sweep_close(struct event_sink *sink)
{
	/* Every count still pending is sent now: a window that never ends would hide it. */
	evsweep_run(sink->sweep, ~0ULL, sweep_emit, sink);
	evsweep_free(sink->sweep);
	sink->sweep = NULL;
}

void events_tick(struct event_sink *sink)
{
	__u64 now = event_mono_now();

	/* A few times per window is enough: summaries are late by at most that. */
	if (!sink->sweep || now - sink->last_sweep_ns < 250000000ULL)
		return;
	sink->last_sweep_ns = now;
	evsweep_run(sink->sweep, now, sweep_emit, sink);
}

json_t *event_lifecycle_to_json(const char *event, const char *detail, const char *sandbox,
				__u64 mono_ns)
{
	char ts[64];

	event_time(mono_ns, ts, sizeof(ts));
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:o, s:o, s:o}", "schema", SBX_EVENT_SCHEMA,
			 "type", "lifecycle", "host", host_name(), "time", ts, "ts_ns", (json_int_t)mono_ns,
			 "event", json_text(event), "detail", json_text(detail),
			 "sandbox", json_text(sandbox));
}

void events_lifecycle_with(struct event_sink *sink, const char *event, const char *detail, json_t *fields)
{
	json_t *obj = NULL;

	if (sink->human) {
		fprintf(sink->human, "sbx-bpf: %s in sandbox %s: %s\n", event,
			sink->sandbox ? sink->sandbox : "?", detail);
		fflush(sink->human);
	}
	if (sink->json)
		obj = event_lifecycle_to_json(event, detail, sink->sandbox, event_mono_now());
	if (obj && fields)
		json_object_update(obj, fields);
	json_decref(fields);
	if (!obj)
		return;
	json_dumpf(obj, sink->json, JSON_COMPACT);
	fputc('\n', sink->json);
	fflush(sink->json);
	json_decref(obj);
}

void events_lifecycle_missing(struct event_sink *sink, const char *event, const char *detail, json_t *missing)
{
	events_lifecycle_with(sink, event, detail, missing ? json_pack("{s:o}", "missing", missing) : NULL);
}

void events_lifecycle(struct event_sink *sink, const char *event, const char *detail)
{
	events_lifecycle_missing(sink, event, detail, NULL);
}

struct ring_buffer *events_open(int map_fd, struct event_sink *sink)
{
	return ring_buffer__new(map_fd, handle_event, sink, NULL);
}
