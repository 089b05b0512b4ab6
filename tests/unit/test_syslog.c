// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The syslog sink: RFC 5424 messages, and real UDP, TCP and unix datagram receivers on this host. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/un.h>
#include <cmocka.h>

#include "sinktest.h"

/* --- an RFC 5424 parser, independent of the code under test --------------------------- */

#define MAX_PARAMS 32

struct msg5424 {
	int pri;
	char ts[64], host[256], app[64], procid[32], msgid[64], sd_id[64];
	char sd_id2[64];	/* a second element's (the labels'), or "" */
	size_t nparams;
	char name[MAX_PARAMS][33];
	char value[MAX_PARAMS][8192];
	bool nil_sd, bom;
	char msg[16384];
};

static const char *field(const char *p, char *out, size_t max)
{
	size_t n = 0;

	while (*p && *p != ' ') {
		if (*p < 33 || *p > 126 || n >= max)
			return NULL;		/* header fields: PRINTUSASCII, bounded */
		out[n++] = *p++;
	}
	out[n] = '\0';
	return *p == ' ' && n ? p + 1 : NULL;
}

/* One SD-ELEMENT "[id name="v" …]" at @p; the text after it, or NULL. */
static const char *sd_element(const char *p, struct msg5424 *m)
{
	size_t n = 0;

	for (p++; *p && *p != ' ' && *p != ']'; p++)
		m->sd_id[n++] = *p;
	m->sd_id[n] = '\0';
	while (*p == ' ') {
		char *name = m->name[m->nparams], *value = m->value[m->nparams];

		for (n = 0, p++; *p && *p != '='; p++) {
			if (*p == ' ' || *p == ']' || *p == '"' || n >= 32)
				return NULL;
			name[n++] = *p;
		}
		name[n] = '\0';
		if (p[0] != '=' || p[1] != '"')
			return NULL;
		for (n = 0, p += 2; *p && *p != '"'; p++) {
			if (*p == ']')
				return NULL;		/* ] inside a value must be escaped */
			if (*p == '\\' && (p[1] == '"' || p[1] == '\\' || p[1] == ']'))
				p++;
			value[n++] = *p;
		}
		value[n] = '\0';
		if (*p++ != '"')
			return NULL;
		m->nparams++;
	}
	return *p == ']' ? p + 1 : NULL;
}

static int parse5424(const char *text, size_t len, struct msg5424 *m)
{
	const char *p = text;
	char ver[8];

	memset(m, 0, sizeof(*m));
	if (strlen(text) != len || *p != '<')
		return -1;
	m->pri = (int)strtol(p + 1, (char **)&p, 10);
	if (*p++ != '>' || m->pri < 0 || m->pri > 191)
		return -1;
	if (!(p = field(p, ver, sizeof(ver) - 1)) || strcmp(ver, "1"))
		return -1;
	if (!(p = field(p, m->ts, 63)) || !(p = field(p, m->host, 255)) || !(p = field(p, m->app, 48)) ||
	    !(p = field(p, m->procid, 128)) || !(p = field(p, m->msgid, 32)))
		return -1;
	if (*p == '-') {
		m->nil_sd = true;
		p++;
	} else if (*p != '[' || !(p = sd_element(p, m))) {
		return -1;
	} else if (*p == '[') {		/* another element: its params follow the first's */
		char first[64];

		snprintf(first, sizeof(first), "%s", m->sd_id);
		if (!(p = sd_element(p, m)))
			return -1;
		snprintf(m->sd_id2, sizeof(m->sd_id2), "%s", m->sd_id);
		snprintf(m->sd_id, sizeof(m->sd_id), "%s", first);
	}
	if (*p == '\0')
		return 0;
	if (*p++ != ' ')
		return -1;
	m->bom = !strncmp(p, "\xef\xbb\xbf", 3);
	snprintf(m->msg, sizeof(m->msg), "%s", p + (m->bom ? 3 : 0));
	return 0;
}

static const char *param(const struct msg5424 *m, const char *name)
{
	for (size_t i = 0; i < m->nparams; i++)
		if (!strcmp(m->name[i], name))
			return m->value[i];
	return NULL;
}

/* "2026-11-21T20:50:22.126879Z": RFC 3339, UTC, at most 6 fraction digits. */
static bool good_time(const char *ts)
{
	struct tm tm = { 0 };
	const char *rest = strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm);

	return rest && rest[0] == '.' && strspn(rest + 1, "0123456789") == 6 && !strcmp(rest + 7, "Z");
}

static const struct sink_ctx ctx = { .rule_text = "denyRead ~/.ssh", .sandbox = "agent",
				     .host = "host-1", .boot_id = "b00t", .version = "9", .seq = 5 };

/* --- names and targets --------------------------------------------------------------------- */

static void test_targets(void **state)
{
	struct syslog_target t;
	char err[256];

	(void)state;
	assert_int_equal(syslog_parse_target("udp://127.0.0.1:5514", &t, err, sizeof(err)), 0);
	assert_int_equal(t.transport, SYSLOG_UDP);
	assert_string_equal(t.host, "127.0.0.1");
	assert_string_equal(t.port, "5514");
	assert_int_equal(syslog_parse_target("tcp://[::1]:601", &t, err, sizeof(err)), 0);
	assert_int_equal(t.transport, SYSLOG_TCP);
	assert_string_equal(t.host, "::1");
	assert_int_equal(syslog_parse_target("tcp://10.0.0.1", &t, err, sizeof(err)), 0);
	assert_string_equal(t.port, "601");
	assert_int_equal(syslog_parse_target("udp://[2001:db8::2]", &t, err, sizeof(err)), 0);
	assert_string_equal(t.port, "514");
	assert_int_equal(syslog_parse_target("unix:///dev/log", &t, err, sizeof(err)), 0);
	assert_int_equal(t.transport, SYSLOG_UNIX);
	assert_string_equal(t.host, "/dev/log");

	static const char *const bad[] = {
		"udp:127.0.0.1", "http://127.0.0.1", "udp://", "udp://127.0.0.1:0", "udp://127.0.0.1:65536",
		"udp://127.0.0.1:x", "tcp://[::1", "tcp://[::1]x", "tcp://::1:601", "unix://dev/log",
		"tcp://logs.example.com:601", "udp://127.0.0.1:514/x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(syslog_parse_target(bad[i], &t, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, bad[i]));	/* the message quotes what was given */
	}
	syslog_parse_target("tcp://logs.example.com", &t, err, sizeof(err));
	assert_non_null(strstr(err, "not an IP address"));
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(syslog_facility("authpriv"), 10);
	assert_int_equal(syslog_facility("local0"), 16);
	assert_int_equal(syslog_facility("local7"), 23);
	assert_int_equal(syslog_facility("daemon"), 3);
	assert_int_equal(syslog_facility("local8"), -EINVAL);
	assert_int_equal(syslog_facility("AUTH"), -EINVAL);
	assert_true(syslog_valid_sd_id("sbx@32473"));
	assert_true(syslog_valid_sd_id("x@1.2.3"));
	assert_false(syslog_valid_sd_id("sbx"));
	assert_false(syslog_valid_sd_id("sbx@"));
	assert_false(syslog_valid_sd_id("@32473"));
	assert_false(syslog_valid_sd_id("s x@32473"));
	assert_false(syslog_valid_sd_id("s]@32473"));
	assert_false(syslog_valid_sd_id("a@b@1"));
	assert_false(syslog_valid_sd_id("averyveryveryverylongname@32473123"));
}

/* --- formatting ------------------------------------------------------------------------------ */

static void test_format(void **state)
{
	static struct msg5424 m;
	char buf[8192], pid[16];
	struct sbx_event ev;
	size_t len;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", getpid());
	/* A path with every character §6.3.3 escapes. */
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/tmp/a\"b\\c]d");
	len = syslog_format_event(&ev, &ctx, 10, "sbx@32473", "sbx-bpf", buf, sizeof(buf));
	assert_int_equal(len, strlen(buf));
	assert_int_equal(parse5424(buf, len, &m), 0);
	assert_int_equal(m.pri, 10 * 8 + 4);		/* authpriv.warning */
	assert_true(good_time(m.ts));
	assert_string_equal(m.host, "host-1");
	assert_string_equal(m.app, "sbx-bpf");
	assert_string_equal(m.procid, pid);
	assert_string_equal(m.msgid, "violation");
	assert_string_equal(m.sd_id, "sbx@32473");
	assert_string_equal(param(&m, "path"), "/tmp/a\"b\\c]d");	/* escaped, and back */
	assert_non_null(strstr(buf, "path=\"/tmp/a\\\"b\\\\c\\]d\""));
	assert_string_equal(param(&m, "seq"), "5");
	assert_string_equal(param(&m, "boot_id"), "b00t");
	assert_string_equal(param(&m, "op"), "read");
	assert_string_equal(param(&m, "verdict"), "denied");
	assert_string_equal(param(&m, "rule"), "denyRead ~/.ssh");
	assert_string_equal(param(&m, "rule_id"), "3");
	assert_string_equal(param(&m, "pid"), "42");
	assert_string_equal(param(&m, "comm"), "cat");
	assert_string_equal(param(&m, "sandbox"), "agent");
	assert_string_equal(param(&m, "errno"), "13");
	assert_null(param(&m, "truncated"));
	assert_false(m.bom);				/* plain ASCII: MSG-ANY, no BOM */
	assert_string_equal(m.msg, "denied read /tmp/a\"b\\c]d (denyRead ~/.ssh) pid 42 cat");

	fill_net(&ev, SBX_OP_CONNECT, SBX_VERDICT_AUDIT, "2001:db8::1", 443, IPPROTO_TCP);
	len = syslog_format_event(&ev, &ctx, 16, "sbx@32473", "sbx-bpf", buf, sizeof(buf));
	assert_int_equal(parse5424(buf, len, &m), 0);
	assert_int_equal(m.pri, 16 * 8 + 5);		/* local0.notice */
	assert_string_equal(param(&m, "target"), "[2001:db8::1]:443/tcp");
	assert_null(param(&m, "path"));

	fill_event(&ev, SBX_OP_WRITE, SBX_VERDICT_DENY, "/tmp/caf\xc3\xa9-\xff");
	len = syslog_format_event(&ev, &ctx, 10, "sbx@32473", "sbx-bpf", buf, sizeof(buf));
	assert_int_equal(parse5424(buf, len, &m), 0);
	assert_true(m.bom);				/* UTF-8 MSG starts with a BOM (§6.4) */
	assert_string_equal(param(&m, "path"), "/tmp/caf\xc3\xa9-\xef\xbf\xbd");
}

/* Labels: an element of their own after ours, with our enterprise number. */
static void test_format_labels(void **state)
{
	static struct msg5424 m;
	json_t *labels = json_pack("{s:s, s:s}", "container.id", "c0ffee", "container.name", "we]b");
	struct sink_ctx c = ctx;
	struct sbx_event ev;
	char buf[4096];
	size_t len;

	(void)state;
	c.labels = labels;
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/root/.ssh/id_rsa");
	len = syslog_format_event(&ev, &c, 10, "sbx@32473", "sbx-bpf", buf, sizeof(buf));
	assert_int_equal(parse5424(buf, len, &m), 0);
	assert_string_equal(m.sd_id, "sbx@32473");
	assert_string_equal(param(&m, "path"), "/root/.ssh/id_rsa");
	assert_string_equal(m.sd_id2, "labels@32473");
	assert_string_equal(param(&m, "container.name"), "we]b");
	assert_non_null(strstr(buf, "][labels@32473 container.id=\"c0ffee\" container.name=\"we\\]b\"] "));
	json_decref(labels);
	assert_false(syslog_valid_sd_id("s@12345678901234567890123456"));	/* "labels@…" would pass 32 */
	assert_true(syslog_valid_sd_id("sbx@32473"));
}

static void test_format_lifecycle(void **state)
{
	static struct msg5424 m;
	struct sink_lifecycle lc = { .event = "timeout", .detail = "--timeout of 60000 ms expired",
				     .cgroup_id = 99 };
	char buf[2048];
	size_t len;

	(void)state;
	len = syslog_format_lifecycle(&lc, &ctx, 16, "sbx@32473", "sbx-bpf", buf, sizeof(buf));
	assert_int_equal(parse5424(buf, len, &m), 0);
	assert_int_equal(m.pri, 16 * 8 + 6);		/* local0.info */
	assert_string_equal(m.msgid, "lifecycle");
	assert_string_equal(param(&m, "event"), "timeout");
	assert_string_equal(param(&m, "sandbox_cgroup_id"), "99");
	assert_string_equal(param(&m, "seq"), "5");
	assert_string_equal(m.msg, "timeout in sandbox agent: --timeout of 60000 ms expired");
}

/* Long paths: the message stays within max and its structured data stays whole. */
static void test_format_truncation(void **state)
{
	static struct msg5424 m;
	static char path[3001], buf[8192];
	struct sbx_event ev;
	size_t len;

	(void)state;
	memset(path, 'a', 3000);
	path[0] = '/';
	for (int i = 100; i < 3000; i += 97)
		path[i] = ']';				/* escapes make it longer still */
	path[3000] = '\0';
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, path);
	for (size_t max = 480; max <= 3000; max += 379) {	/* 480: what RFC 5426 says all take */
		len = syslog_format_event(&ev, &ctx, 10, "sbx@32473", "sbx-bpf", buf, max + 1);
		assert_true(len <= max);
		assert_int_equal(parse5424(buf, len, &m), 0);
		assert_string_equal(param(&m, "truncated"), "true");
		assert_string_equal(param(&m, "op"), "read");		/* short values whole */
		assert_string_equal(param(&m, "seq"), "5");
		assert_int_equal(strncmp(param(&m, "path"), path, strlen(param(&m, "path"))), 0);
	}
	len = syslog_format_event(&ev, &ctx, 10, "sbx@32473", "sbx-bpf", buf, 8192);
	assert_int_equal(parse5424(buf, len, &m), 0);
	assert_null(param(&m, "truncated"));			/* room enough: all of it */
	assert_string_equal(param(&m, "path"), path);
	/* Room for the header only: the NILVALUE, no half structured data. */
	len = syslog_format_event(&ev, &ctx, 10, "sbx@32473", "sbx-bpf", buf, 90);
	assert_true(len < 90);
	assert_int_equal(parse5424(buf, len, &m), 0);
	assert_true(m.nil_sd);
	/* Not even the header fits: nothing, rather than a broken message. */
	assert_int_equal(syslog_format_event(&ev, &ctx, 10, "sbx@32473", "sbx-bpf", buf, 40), 0);
}

/* --- real receivers ------------------------------------------------------------------------- */

static int bound_socket(int family, int type, const char *addr, int *port)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		inet_pton(AF_INET, addr, &a->sin_addr);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		inet_pton(AF_INET6, addr, &a->sin6_addr);
		len = sizeof(*a);
	}
	if (bind(fd, (struct sockaddr *)&ss, len)) {
		close(fd);
		return -1;
	}
	getsockname(fd, (struct sockaddr *)&ss, &len);
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					: ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

static void set_timeout(int fd, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static struct sink *syslog_sink(const char *target, size_t max, size_t queue)
{
	struct sink_syslog_opts o = { .target = target, .facility = -1, .max_message = max,
				      .queue_bytes = queue };
	struct sink *s = sink_syslog_new(&o);

	assert_non_null(s);
	return s;
}

static void test_udp(void **state)
{
	static struct msg5424 m;
	struct sink_set *set = sink_set_new(&(struct sink_ident){ .host = "h", .boot_id = "b" });
	char target[64], buf[65536];
	struct sink_ctx in = { .sandbox = "agent" };
	struct sbx_event ev;
	int port, fd = bound_socket(AF_INET, SOCK_DGRAM, "127.0.0.1", &port);
	ssize_t n;

	(void)state;
	set_timeout(fd, 2000);
	snprintf(target, sizeof(target), "udp://127.0.0.1:%d", port);
	assert_int_equal(sink_set_add(set, syslog_sink(target, 0, 0)), 0);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/etc/shadow");
	assert_int_equal(sink_set_emit(set, &ev, &in), 0);
	fill_event(&ev, SBX_OP_WRITE, SBX_VERDICT_AUDIT, "/etc/passwd");
	assert_int_equal(sink_set_emit(set, &ev, &in), 0);
	for (int i = 1; i <= 2; i++) {			/* one datagram per message */
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		assert_true(n > 0);
		buf[n] = '\0';
		assert_int_equal(parse5424(buf, n, &m), 0);
		assert_int_equal(atoi(param(&m, "seq")), i);
		assert_string_equal(param(&m, "path"), i == 1 ? "/etc/shadow" : "/etc/passwd");
		assert_int_equal(m.pri, i == 1 ? 84 : 85);
	}
	/* A long path is cut to the UDP limit, 2048 by default. */
	memset(buf, 'x', 5000);
	buf[0] = '/';
	buf[5000] = '\0';
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, buf);
	assert_int_equal(sink_set_emit(set, &ev, &in), 0);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 1000 && n <= SYSLOG_UDP_MAX);
	buf[n] = '\0';
	assert_int_equal(parse5424(buf, n, &m), 0);
	assert_int_equal(sink_set_dropped(set), 0);
	sink_set_free(set);
	close(fd);
}

/* Run the sink's side of the poll loop for up to @ms, or until @done says so. */
static void pump(struct sink *s, int ms, bool (*done)(void *), void *arg)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct pollfd fds[4];
		int timeout = -1;
		size_t n = s->ops->pollfds(s, fds, 4, &timeout);

		poll(fds, n, timeout < 0 || timeout > 20 ? 20 : timeout);
		s->ops->handle(s, fds, n);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((done && done(arg)) ||
		    (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 > ms)
			return;
	}
}

struct stream {
	int listen_fd, fd;
	char buf[1 << 16];
	size_t len;
};

static bool accepted(void *arg)
{
	struct stream *st = arg;

	if (st->fd < 0)
		st->fd = accept4(st->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	return st->fd >= 0;
}

/* Read what is there; true once @want frames are in. */
static size_t frames(struct stream *st);
static size_t want_frames;

static bool got_frames(void *arg)
{
	struct stream *st = arg;
	ssize_t n;

	accepted(st);
	while (st->fd >= 0 && (n = recv(st->fd, st->buf + st->len, sizeof(st->buf) - 1 - st->len, 0)) > 0)
		st->len += n;
	return frames(st) >= want_frames;
}

/* Octet counting: "LEN SP MSG" back to back; every MSG must parse. */
static size_t frames(struct stream *st)
{
	static struct msg5424 m;
	size_t off = 0, count = 0;

	while (off < st->len) {
		char *end;
		unsigned long len = strtoul(st->buf + off, &end, 10);
		char save;

		if (end == st->buf + off || *end != ' ' || (size_t)(end + 1 - st->buf) + len > st->len)
			break;		/* a frame not complete yet */
		save = end[1 + len];
		end[1 + len] = '\0';
		assert_int_equal(parse5424(end + 1, len, &m), 0);
		end[1 + len] = save;
		off = end + 1 + len - st->buf;
		count++;
	}
	return count;
}

static const char *frame_at(struct stream *st, size_t i, struct msg5424 *m)
{
	size_t off = 0;

	for (;;) {
		char *end;
		unsigned long len = strtoul(st->buf + off, &end, 10);

		if (!i--) {
			char save = end[1 + len];

			end[1 + len] = '\0';
			assert_int_equal(parse5424(end + 1, len, m), 0);
			end[1 + len] = save;
			return end + 1;
		}
		off = end + 1 + len - st->buf;
	}
}

static void test_tcp(void **state)
{
	static struct stream st;
	static struct msg5424 m;
	char target[64];
	struct sink_ctx c = ctx;
	struct sbx_event ev;
	struct sink *s;
	int port;

	(void)state;
	st.fd = -1;
	st.len = 0;
	st.listen_fd = bound_socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, "127.0.0.1", &port);
	assert_int_equal(listen(st.listen_fd, 4), 0);
	snprintf(target, sizeof(target), "tcp://127.0.0.1:%d", port);
	s = syslog_sink(target, 0, 0);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/a]b");
	for (c.seq = 1; c.seq <= 3; c.seq++)
		assert_int_equal(s->ops->emit(s, &ev, &c), 0);
	want_frames = 3;
	pump(s, 3000, got_frames, &st);
	assert_int_equal(frames(&st), 3);
	for (size_t i = 0; i < 3; i++) {
		frame_at(&st, i, &m);
		assert_int_equal(atoi(param(&m, "seq")), i + 1);
		assert_string_equal(param(&m, "path"), "/a]b");
	}

	/* The receiver restarts: the sink notices, reconnects, and goes on. */
	close(st.fd);
	st.fd = -1;
	st.len = 0;
	pump(s, 200, NULL, NULL);
	for (; c.seq <= 5; c.seq++)
		s->ops->emit(s, &ev, &c);
	want_frames = 2;
	pump(s, 5000, got_frames, &st);
	assert_int_equal(frames(&st), 2);
	frame_at(&st, 1, &m);
	assert_int_equal(atoi(param(&m, "seq")), 5);
	assert_int_equal(s->dropped, 0);
	s->ops->close(s);
	close(st.fd);
	close(st.listen_fd);
}

/* Nobody listens: emit never blocks, the queue is bounded, what does not fit is counted. */
static void test_tcp_unreachable(void **state)
{
	struct timespec a, b;
	char target[64];
	struct sbx_event ev;
	struct sink *s;
	int port, fd = bound_socket(AF_INET, SOCK_STREAM, "127.0.0.1", &port);	/* bound, not listening */

	(void)state;
	snprintf(target, sizeof(target), "tcp://127.0.0.1:%d", port);
	s = syslog_sink(target, 0, 4096);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/x");
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 1000; i++)
		s->ops->emit(s, &ev, &ctx);
	pump(s, 100, NULL, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(b.tv_sec - a.tv_sec < 2);
	assert_true(s->dropped > 900);			/* ~250 bytes each: a 4 KiB queue holds a few */
	assert_int_equal(s->written + s->dropped, 1000);
	s->ops->close(s);
	close(fd);
}

/*
 * The receiver dies with a frame half sent (its window is tiny and it
 * reads nothing): the next connection starts with a whole frame, and the
 * cut one is counted as dropped, not resent half.
 */
static void test_tcp_cut_frame(void **state)
{
	static struct stream st;
	int port, small = 2048;
	char target[64];
	struct sbx_event ev;
	struct sink *s;

	(void)state;
	st.fd = -1;
	st.len = 0;
	st.listen_fd = bound_socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, "127.0.0.1", &port);
	setsockopt(st.listen_fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	assert_int_equal(listen(st.listen_fd, 4), 0);
	snprintf(target, sizeof(target), "tcp://127.0.0.1:%d", port);
	s = syslog_sink(target, 0, 32u << 20);
	pump(s, 2000, accepted, &st);
	assert_true(st.fd >= 0);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/x");
	for (int i = 0; i < 20000; i++)
		s->ops->emit(s, &ev, &ctx);
	pump(s, 300, NULL, NULL);
	assert_int_equal(s->dropped, 0);
	close(st.fd);				/* unread data: a reset */
	st.fd = -1;
	want_frames = 3;
	pump(s, 5000, got_frames, &st);
	assert_true(frames(&st) >= 3);		/* parsed from its first byte */
	assert_int_equal(s->dropped, 1);
	s->ops->close(s);
	close(st.fd);
	close(st.listen_fd);
}

static void test_tcp_ipv6(void **state)
{
	static struct stream st;
	char target[64];
	struct sbx_event ev;
	struct sink *s;
	int port;

	(void)state;
	st.fd = -1;
	st.len = 0;
	st.listen_fd = bound_socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, "::1", &port);
	if (st.listen_fd < 0)
		skip();					/* no IPv6 loopback on this host */
	assert_int_equal(listen(st.listen_fd, 4), 0);
	snprintf(target, sizeof(target), "tcp://[::1]:%d", port);
	s = syslog_sink(target, 0, 0);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/v6");
	s->ops->emit(s, &ev, &ctx);
	want_frames = 1;
	pump(s, 3000, got_frames, &st);
	assert_int_equal(frames(&st), 1);
	s->ops->close(s);
	close(st.fd);
	close(st.listen_fd);
}

static int unix_receiver(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	set_timeout(fd, 2000);
	return fd;
}

static void test_unix(void **state)
{
	static struct msg5424 m;
	char *dir = make_tmpdir(), path[256], target[300], buf[16384];
	struct sink_ctx c = ctx;
	struct sbx_event ev;
	struct sink *s;
	int fd;
	ssize_t n;

	(void)state;
	snprintf(path, sizeof(path), "%s/log", dir);
	snprintf(target, sizeof(target), "unix://%s", path);
	s = syslog_sink(target, 0, 0);		/* nobody there yet: not an error */
	fill_event(&ev, SBX_OP_UNLINK, SBX_VERDICT_DENY, "/w/.git/hooks/pre-commit");
	assert_int_not_equal(s->ops->emit(s, &ev, &c), 0);
	assert_int_equal(s->dropped, 1);

	fd = unix_receiver(path);
	usleep(600 * 1000);			/* past the retry delay */
	c.seq = 2;
	assert_int_equal(s->ops->emit(s, &ev, &c), 0);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_int_equal(parse5424(buf, n, &m), 0);
	assert_string_equal(param(&m, "seq"), "2");
	assert_string_equal(param(&m, "op"), "unlink");

	/* The syslog daemon restarts: a new socket at the same path. */
	close(fd);
	fd = unix_receiver(path);
	c.seq = 3;
	assert_int_equal(s->ops->emit(s, &ev, &c), 0);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_int_equal(parse5424(buf, n, &m), 0);
	assert_string_equal(param(&m, "seq"), "3");
	assert_int_equal(s->dropped, 1);
	s->ops->close(s);
	close(fd);
	rm_tmpdir(dir);
}

/* A receiver that does not read: its queue fills, the sink drops instead of waiting. */
static void test_unix_full(void **state)
{
	char *dir = make_tmpdir(), path[256], target[300], buf[4096];
	struct timespec a, b;
	struct sbx_event ev;
	struct sink *s;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/log", dir);
	snprintf(target, sizeof(target), "unix://%s", path);
	fd = unix_receiver(path);
	s = syslog_sink(target, 0, 0);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/x");
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 5000; i++)
		s->ops->emit(s, &ev, &ctx);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(b.tv_sec - a.tv_sec < 2);
	assert_true(s->dropped > 0);
	assert_int_equal(s->written + s->dropped, 5000);
	/* A slow receiver is not a dead one: once it has read, messages go through at once. */
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	assert_int_equal(s->ops->emit(s, &ev, &ctx), 0);
	assert_true(recv(fd, buf, sizeof(buf), 0) > 0);
	s->ops->close(s);
	close(fd);
	rm_tmpdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_format_lifecycle),
		cmocka_unit_test(test_format_labels),
		cmocka_unit_test(test_format_truncation),
		cmocka_unit_test(test_udp),
		cmocka_unit_test(test_tcp),
		cmocka_unit_test(test_tcp_unreachable),
		cmocka_unit_test(test_tcp_cut_frame),
		cmocka_unit_test(test_tcp_ipv6),
		cmocka_unit_test(test_unix),
		cmocka_unit_test(test_unix_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
