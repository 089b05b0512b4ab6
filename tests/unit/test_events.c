// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "events.h"

static struct sbx_event ev;

static size_t make_event(const char *path)
{
	memset(&ev, 0, sizeof(ev));
	ev.tgid = 42; ev.pid = 43; ev.ppid = 1; ev.uid = 1000;
	ev.op = SBX_OP_READ;
	ev.verdict = SBX_VERDICT_DENY;
	ev.rule_id = 0;
	ev.error = -13;
	ev.cgroup_id = 77; ev.sandbox_cgroup_id = 77;
	memcpy(ev.comm, "cat", 4);
	ev.path_len = (__u32)strlen(path);
	memcpy(ev.path, path, ev.path_len + 1);
	return offsetof(struct sbx_event, path) + ev.path_len + 1;
}

static void test_validate(void **state)
{
	size_t n = make_event("/etc/shadow");

	(void)state;
	assert_int_equal(event_validate(&ev, n), 0);
	assert_int_not_equal(event_validate(&ev, n - 1), 0);		/* cut short */
	assert_int_not_equal(event_validate(&ev, 8), 0);
	ev.path[ev.path_len] = 'x';					/* no NUL */
	assert_int_not_equal(event_validate(&ev, n), 0);
	make_event("/x");
	ev.path_len = SBX_PATH_MAX;					/* out of range */
	assert_int_not_equal(event_validate(&ev, sizeof(ev)), 0);
}

static void test_human_line(void **state)
{
	char line[512];

	(void)state;
	make_event("/home/u/.ssh/id_rsa");
	event_format_human(&ev, "deny-read /home/u/.ssh", NULL, line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied read /home/u/.ssh/id_rsa (deny-read /home/u/.ssh) pid 42 cat");
	ev.flags = SBX_EV_PATH_UNRESOLVED;
	ev.rule_id = SBX_RULE_NONE;
	ev.path[0] = '\0';
	ev.path_len = 0;
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied read (unresolvable path) "
				  "(fail-closed: unresolvable path) pid 42 cat");
}

/* rename/link carry a second path; a refused move between rules says so. */
static void test_two_paths(void **state)
{
	char line[512];
	size_t n;
	json_t *j;

	(void)state;
	make_event("/w/.git");
	ev.op = SBX_OP_RENAME;
	ev.flags = SBX_EV_PATH2 | SBX_EV_RENAME_GUARD;
	ev.path2_len = 4;
	memcpy(ev.path2, "/w/g", 5);
	n = offsetof(struct sbx_event, path2) + ev.path2_len + 1;
	assert_int_equal(event_validate(&ev, n), 0);
	assert_int_not_equal(event_validate(&ev, n - 1), 0);	/* path2 cut short */
	ev.path2[4] = 'x';
	assert_int_not_equal(event_validate(&ev, n), 0);	/* path2 without NUL */
	ev.path2[4] = '\0';
	event_format_human(&ev, "mandatory: .git/hooks", NULL, line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied rename /w/.git -> /w/g (mandatory: .git/hooks; "
				  "it would move files between rules) pid 42 cat");
	j = event_to_json(&ev, "mandatory: .git/hooks", NULL, "s");
	assert_string_equal(json_string_value(json_object_get(j, "path2")), "/w/g");
	assert_true(json_is_true(json_object_get(j, "moves_between_rules")));
	json_decref(j);
}

/* Verdicts no policy rule made have fixed texts and a null id. */
static void test_builtin_rules(void **state)
{
	json_t *j;

	(void)state;
	make_event("/etc/x");
	ev.op = SBX_OP_WRITE;
	ev.rule_id = SBX_RULE_DEFAULT_WRITE;
	assert_string_equal(event_rule_text(&ev, NULL), "default: no allowWrite rule covers it");
	ev.rule_id = SBX_RULE_PSEUDO_FS;
	assert_string_equal(event_rule_text(&ev, NULL), "mandatory: cgroup, bpf and security file systems");
	j = event_to_json(&ev, NULL, NULL, "s");
	assert_true(json_is_null(json_object_get(json_object_get(j, "rule"), "id")));
	assert_true(json_is_null(json_object_get(j, "path2")));
	json_decref(j);
	ev.rule_id = 3;
	assert_string_equal(event_rule_text(&ev, "denyRead ~/.ssh"), "denyRead ~/.ssh");
}

static void test_json(void **state)
{
	json_t *j, *p;

	(void)state;
	make_event("/etc/shadow");
	j = event_to_json(&ev, "deny-read /etc/shadow", NULL, "agent-1");
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "schema")), SBX_EVENT_SCHEMA);
	assert_string_equal(json_string_value(json_object_get(j, "type")), "violation");
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "denied");
	assert_string_equal(json_string_value(json_object_get(j, "op")), "read");
	assert_string_equal(json_string_value(json_object_get(j, "path")), "/etc/shadow");
	assert_int_equal(json_integer_value(json_object_get(j, "errno")), 13);
	assert_string_equal(json_string_value(json_object_get(j, "sandbox")), "agent-1");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "rule"), "text")),
			    "deny-read /etc/shadow");
	p = json_object_get(j, "process");
	assert_int_equal(json_integer_value(json_object_get(p, "pid")), 42);
	assert_int_equal(json_integer_value(json_object_get(p, "tid")), 43);
	assert_string_equal(json_string_value(json_object_get(p, "comm")), "cat");
	assert_true(json_is_false(json_object_get(j, "path_unresolved")));
	assert_int_equal(strlen(json_string_value(json_object_get(j, "time"))), 30);
	json_decref(j);

	ev.rule_id = SBX_RULE_NONE;
	ev.flags = SBX_EV_PATH_UNRESOLVED;
	j = event_to_json(&ev, NULL, NULL, NULL);
	assert_true(json_is_null(json_object_get(json_object_get(j, "rule"), "id")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "rule"), "text")),
			    "fail-closed: unresolvable path");
	assert_true(json_is_true(json_object_get(j, "path_unresolved")));
	assert_true(json_is_null(json_object_get(j, "sandbox")));
	json_decref(j);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(sbx_op_name(SBX_OP_READ), "read");
	for (__u32 op = 1; op < SBX_OP__MAX; op++)	/* every op the kernel sends has a name */
		assert_string_not_equal(sbx_op_name(op), "unknown");
	assert_string_equal(sbx_op_name(SBX_OP_REMOVEXATTR), "removexattr");
	assert_string_equal(sbx_op_name(9999), "unknown");
	assert_string_equal(sbx_verdict_name(SBX_VERDICT_AUDIT), "audit");
}

static void make_net(__u16 family, const char *addr, __u16 port, __u16 proto)
{
	make_event("");
	ev.op = SBX_OP_CONNECT;
	ev.rule_id = SBX_RULE_NET_DEFAULT;
	ev.flags = SBX_EV_NET;
	ev.family = family;
	ev.sock_type = proto == IPPROTO_TCP ? SOCK_STREAM : SOCK_DGRAM;
	ev.protocol = proto;
	ev.port = port;
	if (strchr(addr, ':')) {
		assert_int_equal(inet_pton(AF_INET6, addr, ev.addr), 1);
	} else {
		ev.addr[10] = ev.addr[11] = 0xff;
		assert_int_equal(inet_pton(AF_INET, addr, ev.addr + 12), 1);
	}
}

static void test_net_human(void **state)
{
	char line[512];

	(void)state;
	make_net(AF_INET, "10.1.2.3", 443, IPPROTO_TCP);
	event_format_human(&ev, NULL, "api.example.com", line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied connect 10.1.2.3:443/tcp [api.example.com] "
			    "(default: no network rule and no DNS answer allows it) pid 42 cat");
	make_net(AF_INET6, "2001:db8::1", 53, IPPROTO_UDP);
	ev.op = SBX_OP_SENDTO;
	event_format_human(&ev, "deny [2001:db8::/32]", NULL, line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied sendto [2001:db8::1]:53/udp (deny [2001:db8::/32]) pid 42 cat");
	/* An IPv4 address reached through an IPv6 socket reads as IPv4. */
	make_net(AF_INET6, "::ffff:127.0.0.2", 80, IPPROTO_TCP);
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_non_null(strstr(line, " 127.0.0.2:80/tcp "));

	make_event("/run/app.sock");
	ev.op = SBX_OP_CONNECT;
	ev.flags = SBX_EV_NET;
	ev.family = AF_UNIX;
	ev.rule_id = SBX_RULE_UNIX;
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_non_null(strstr(line, "denied connect unix:/run/app.sock (default: not in allowUnixSockets)"));
	ev.flags |= SBX_EV_ABSTRACT;
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_non_null(strstr(line, "unix:@/run/app.sock"));

	make_event("");
	ev.op = SBX_OP_SOCKET;
	ev.flags = SBX_EV_NET;
	ev.family = AF_INET;
	ev.sock_type = SOCK_RAW;
	ev.protocol = IPPROTO_ICMP;
	ev.rule_id = SBX_RULE_SOCKET;
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_non_null(strstr(line, "denied socket inet/icmp ("));

	make_event("blocked.example");
	ev.op = SBX_OP_DNS;
	ev.rule_id = SBX_RULE_DOMAIN_DEFAULT;
	ev.domain_id = 3;
	event_format_human(&ev, NULL, "blocked.example", line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied dns blocked.example (default: not in allowedDomains) pid 42 cat");

	/* The resolver's own refusals: a question type it does not serve, its rate limit. */
	make_event("ok.example");
	ev.op = SBX_OP_DNS;
	ev.rule_id = SBX_RULE_DNS_TYPE;
	ev.arg = 16;
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied dns ok.example TXT (default: a DNS question type the resolver "
			    "does not serve (A, AAAA, CNAME)) pid 42 cat");
	ev.arg = 3u << 16 | 16;
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_non_null(strstr(line, "denied dns ok.example CH TXT ("));
	ev.arg = 4711;
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_non_null(strstr(line, "denied dns ok.example TYPE4711 ("));
	ev.rule_id = SBX_RULE_DNS_RATE;
	ev.arg = 0;
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied dns ok.example (limit: the sandbox's DNS query rate) pid 42 cat");
}

static void test_net_json(void **state)
{
	json_t *j, *n;

	(void)state;
	make_net(AF_INET6, "::ffff:10.0.0.7", 8080, IPPROTO_TCP);
	ev.domain_id = 2;
	ev.rule_id = SBX_RULE_DNS_EXPIRED;
	j = event_to_json(&ev, NULL, "allowed.test", "s");
	n = json_object_get(j, "net");
	assert_string_equal(json_string_value(json_object_get(n, "family")), "inet6");
	assert_string_equal(json_string_value(json_object_get(n, "address")), "10.0.0.7");
	assert_int_equal(json_integer_value(json_object_get(n, "port")), 8080);
	assert_string_equal(json_string_value(json_object_get(n, "protocol")), "tcp");
	assert_string_equal(json_string_value(json_object_get(j, "domain")), "allowed.test");
	assert_string_equal(json_string_value(json_object_get(j, "op")), "connect");
	assert_true(json_is_null(json_object_get(json_object_get(j, "rule"), "id")));
	json_decref(j);

	make_event("/x");	/* file events: no net object, no domain */
	j = event_to_json(&ev, NULL, NULL, "s");
	assert_true(json_is_null(json_object_get(j, "net")));
	assert_true(json_is_null(json_object_get(j, "domain")));
	json_decref(j);
}

/* Paths are bytes: one that is not UTF-8 still makes an event, its bad bytes as U+FFFD. */
static void test_json_not_utf8(void **state)
{
	json_t *j;

	(void)state;
	make_event("/tmp/\xff\xfe-\xc3\xa9");
	memcpy(ev.comm, "c\x80t", 4);
	j = event_to_json(&ev, "denyRead /tmp", NULL, "s");
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "path")),
			    "/tmp/\xef\xbf\xbd\xef\xbf\xbd-\xc3\xa9");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "process"), "comm")),
			    "c\xef\xbf\xbdt");
	json_decref(j);
}

static void test_lifecycle_json(void **state)
{
	json_t *j;

	(void)state;
	j = event_lifecycle_to_json("oom_kill", "1 process(es) killed", "agent", 5000000000ULL);
	assert_string_equal(json_string_value(json_object_get(j, "type")), "lifecycle");
	assert_string_equal(json_string_value(json_object_get(j, "event")), "oom_kill");
	assert_string_equal(json_string_value(json_object_get(j, "sandbox")), "agent");
	assert_int_equal(json_integer_value(json_object_get(j, "ts_ns")), 5000000000LL);
	json_decref(j);
}

static void test_json_repeat_and_throttled(void **state)
{
	char line[512];
	json_t *j;

	(void)state;
	make_event("/etc/shadow");
	j = event_to_json(&ev, NULL, NULL, NULL);
	assert_true(json_is_null(json_object_get(j, "kernel_seq")));	/* made in userspace */
	{
		char host[256] = "";

		gethostname(host, sizeof(host) - 1);
		assert_string_equal(json_string_value(json_object_get(j, "host")), host);
	}
	assert_int_equal(json_integer_value(json_object_get(j, "repeat")), 1);
	assert_true(json_is_false(json_object_get(j, "summary")));
	json_decref(j);

	ev.seq = 5;
	ev.repeat = 3;
	j = event_to_json(&ev, NULL, NULL, NULL);
	assert_int_equal(json_integer_value(json_object_get(j, "kernel_seq")), 5);
	assert_int_equal(json_integer_value(json_object_get(j, "repeat")), 3);
	json_decref(j);
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_non_null(strstr(line, " [3 times]"));

	ev.flags |= SBX_EV_SUMMARY;
	ev.seq = 0;
	j = event_to_json(&ev, NULL, NULL, NULL);
	assert_true(json_is_true(json_object_get(j, "summary")));
	json_decref(j);
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_non_null(strstr(line, " [3 more times]"));

	make_event("");
	ev.op = SBX_OP_THROTTLED;
	ev.repeat = 900;
	ev.seq = 12;
	ev.sandbox_cgroup_id = 4242;
	j = event_to_json(&ev, NULL, NULL, "agent");
	assert_string_equal(json_string_value(json_object_get(j, "type")), "throttled");
	assert_int_equal(json_integer_value(json_object_get(j, "suppressed")), 900);
	assert_int_equal(json_integer_value(json_object_get(j, "kernel_seq")), 12);
	assert_int_equal(json_integer_value(json_object_get(j, "sandbox_cgroup_id")), 4242);
	assert_string_equal(json_string_value(json_object_get(j, "sandbox")), "agent");
	json_decref(j);
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_non_null(strstr(line, "throttled: 900 more violations in cgroup 4242"));
}

/* The watcher's line from the JSON object equals the line from the record, event kind by kind. */
static void same_line(const char *rule_text, const char *domain)
{
	char want[1024], got[1024];
	json_t *j = event_to_json(&ev, rule_text, domain, NULL);

	assert_non_null(j);
	event_format_human(&ev, rule_text, domain, want, sizeof(want));
	assert_int_equal(event_json_format_human(j, got, sizeof(got)), strlen(want));
	assert_string_equal(got, want);
	json_decref(j);
}

static void test_human_from_json(void **state)
{
	char line[64];
	json_t *j;

	(void)state;
	make_event("/home/u/.ssh/id_rsa");
	same_line("denyRead ~/.ssh", NULL);
	ev.flags = SBX_EV_PATH_UNRESOLVED;
	ev.rule_id = SBX_RULE_NONE;
	ev.path[0] = '\0';
	ev.path_len = 0;
	same_line(NULL, NULL);
	make_event("/w/.git");
	ev.op = SBX_OP_RENAME;
	ev.flags = SBX_EV_PATH2 | SBX_EV_RENAME_GUARD;
	ev.path2_len = 4;
	memcpy(ev.path2, "/w/g", 5);
	same_line("mandatory: .git/hooks", NULL);
	ev.flags = SBX_EV_PATH2 | SBX_EV_DIRECTORY_ONLY;
	same_line("mandatory: .git/hooks", NULL);
	make_net(AF_INET, "10.1.2.3", 443, IPPROTO_TCP);
	same_line(NULL, "api.example.com");
	make_net(AF_INET6, "2001:db8::1", 53, IPPROTO_UDP);
	ev.op = SBX_OP_SENDTO;
	ev.verdict = SBX_VERDICT_AUDIT;
	same_line("deny [2001:db8::/32]", NULL);
	make_event("/run/app.sock");
	ev.op = SBX_OP_CONNECT;
	ev.flags = SBX_EV_NET | SBX_EV_ABSTRACT;
	ev.family = AF_UNIX;
	ev.rule_id = SBX_RULE_ABSTRACT;
	same_line(NULL, NULL);
	make_event("");
	ev.op = SBX_OP_SOCKET;
	ev.flags = SBX_EV_NET;
	ev.family = AF_INET;
	ev.sock_type = SOCK_RAW;
	ev.protocol = IPPROTO_ICMP;
	ev.rule_id = SBX_RULE_SOCKET;
	same_line(NULL, NULL);
	make_event("blocked.example");
	ev.op = SBX_OP_DNS;
	ev.rule_id = SBX_RULE_DOMAIN_DEFAULT;
	same_line(NULL, "blocked.example");
	ev.rule_id = SBX_RULE_DNS_TYPE;
	ev.arg = 3u << 16 | 16;
	same_line(NULL, NULL);
	/* Coalesced runs, their summaries, and throttled records. */
	make_event("/etc/shadow");
	ev.repeat = 7;
	same_line(NULL, NULL);
	ev.flags = SBX_EV_SUMMARY;
	same_line(NULL, NULL);
	make_event("");
	ev.op = SBX_OP_THROTTLED;
	ev.repeat = 300;
	ev.sandbox_cgroup_id = 55;
	same_line(NULL, NULL);

	j = event_lifecycle_to_json("oom_kill", "1 process(es) killed", NULL, 1);
	event_json_format_human(j, line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: oom_kill in sandbox ?: 1 process(es) killed");
	json_decref(j);
	j = json_pack("{s:s}", "type", "gap");
	assert_int_equal(event_json_format_human(j, line, sizeof(line)), -EINVAL);
	json_decref(j);
	/* Cut short like snprintf: terminated, and the length it would have had. */
	make_event("/a/long/enough/path/to/be/cut/short/by/a/small/buffer");
	j = event_to_json(&ev, "r", NULL, NULL);
	assert_true(event_json_format_human(j, line, 16) > 16);
	assert_int_equal(strlen(line), 15);
	json_decref(j);
}

/* A task op: its target, its detail, EPERM; the human line, the JSON, and the line again from the JSON. */
static void make_task(__u32 op, __u32 arg, const char *target_comm, __u32 target)
{
	make_event(target_comm ? target_comm : "");
	ev.op = op;
	ev.arg = arg;
	ev.error = -1;
	ev.rule_id = op == SBX_OP_SIGNAL || op == SBX_OP_PTRACE ? SBX_RULE_TASK : SBX_RULE_SYSTEM;
	if (target_comm) {
		ev.flags = SBX_EV_TARGET;
		ev.target = target;
	}
}

static void test_task_events(void **state)
{
	char line[512];
	json_t *j;

	(void)state;
	make_task(SBX_OP_SIGNAL, 9, "claude", 812);
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied signal pid 812 (claude) SIGKILL (mandatory: no tracing, signalling"
			    " or tuning of processes outside the sandbox, no children started outside it) pid 42 cat");
	j = event_to_json(&ev, NULL, NULL, NULL);
	assert_string_equal(json_string_value(json_object_get(j, "op")), "signal");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "target"), "pid")), 812);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "target"), "comm")), "claude");
	assert_string_equal(json_string_value(json_object_get(j, "detail")), "SIGKILL");
	assert_int_equal(json_integer_value(json_object_get(j, "arg")), 9);
	assert_true(json_is_null(json_object_get(j, "path")));
	assert_true(json_is_null(json_object_get(j, "descriptor")));
	assert_int_equal(json_integer_value(json_object_get(j, "errno")), 1);
	json_decref(j);
	same_line(NULL, NULL);

	make_task(SBX_OP_CAPABILITY, 21, NULL, 0);
	event_format_human(&ev, NULL, NULL, line, sizeof(line));
	assert_non_null(strstr(line, "sbx-bpf: denied capability CAP_SYS_ADMIN (mandatory: no bpf"));
	j = event_to_json(&ev, NULL, NULL, NULL);
	assert_true(json_is_null(json_object_get(j, "target")));
	assert_string_equal(json_string_value(json_object_get(j, "detail")), "CAP_SYS_ADMIN");
	json_decref(j);
	same_line(NULL, NULL);

	make_task(SBX_OP_BPF, 5, NULL, 0);
	j = event_to_json(&ev, NULL, NULL, NULL);
	assert_string_equal(json_string_value(json_object_get(j, "detail")), "BPF_PROG_LOAD");
	json_decref(j);
	make_task(SBX_OP_BPF, 4000, NULL, 0);
	event_detail(&ev, line, sizeof(line));
	assert_string_equal(line, "bpf command 4000");
	make_task(SBX_OP_KERNEL_LOAD, SBX_LOAD_MODULE_REQUEST, "binfmt-7f7f", 0);
	ev.flags = 0;
	event_detail(&ev, line, sizeof(line));
	assert_string_equal(line, "module request binfmt-7f7f");
	make_task(SBX_OP_KERNEL_LOAD, SBX_LOAD_KEXEC_IMAGE | SBX_LOAD_FROM_MEMORY, NULL, 0);
	event_detail(&ev, line, sizeof(line));
	assert_string_equal(line, "kexec image from memory");
	make_task(SBX_OP_SIGNAL, 8, NULL, 0);	/* F_SETOWN: no target, the fcntl */
	event_detail(&ev, line, sizeof(line));
	assert_string_equal(line, "F_SETOWN");
	make_task(SBX_OP_PTRACE, 0x02 | 0x08, "sshd", 1);
	event_detail(&ev, line, sizeof(line));
	assert_string_equal(line, "attach");
	same_line(NULL, NULL);
	make_task(SBX_OP_TTY, 0x5412, NULL, 0);
	event_detail(&ev, line, sizeof(line));
	assert_string_equal(line, "TIOCSTI");
	make_task(SBX_OP_CLONE_CGROUP, 0, NULL, 0);
	assert_true(event_is_task_op(&ev));
	same_line(NULL, NULL);

	/* A descriptor refused on use or on receipt: a file op, marked. */
	make_event("/home/u/notes.txt");
	ev.op = SBX_OP_WRITE;
	ev.flags = SBX_EV_FD_USE;
	event_format_human(&ev, "allowWrite .", NULL, line, sizeof(line));
	assert_string_equal(line, "sbx-bpf: denied write /home/u/notes.txt (open descriptor) (allowWrite .) pid 42 cat");
	j = event_to_json(&ev, "allowWrite .", NULL, NULL);
	assert_string_equal(json_string_value(json_object_get(j, "descriptor")), "use");
	assert_string_equal(json_string_value(json_object_get(j, "path")), "/home/u/notes.txt");
	assert_true(json_is_null(json_object_get(j, "detail")));
	json_decref(j);
	same_line("allowWrite .", NULL);
	ev.flags = SBX_EV_FD_RECEIVED;
	same_line("allowWrite .", NULL);
	assert_false(event_is_task_op(&ev));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_human_line),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_repeat_and_throttled),
		cmocka_unit_test(test_two_paths),
		cmocka_unit_test(test_builtin_rules),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_net_human),
		cmocka_unit_test(test_net_json),
		cmocka_unit_test(test_json_not_utf8),
		cmocka_unit_test(test_lifecycle_json),
		cmocka_unit_test(test_human_from_json),
		cmocka_unit_test(test_task_events),
	};

	return cmocka_run_group_tests_name("events", tests, NULL, NULL);
}
