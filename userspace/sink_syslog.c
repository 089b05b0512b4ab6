// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sink_syslog.c — RFC 5424 messages over UDP (RFC 5426), TCP with octet
 * counting (RFC 6587 §3.4.1) or a unix datagram socket such as /dev/log.
 *
 *   <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD-ID k="v" …] MSG
 *
 * The structured data carries every field of the event (escaped per
 * §6.3.3); MSG is the human line. Each message fits max_message bytes: the
 * human line is cut first, then the longest values of the structured data
 * (truncated="true" says so), so the parts a collector parses stay whole.
 *
 * Never blocking the daemon: every socket is non-blocking. A datagram that
 * cannot go now (receiver gone, queue full) is dropped and counted. TCP
 * keeps whole frames in a bounded queue while it connects or the receiver
 * is slow, drops (and counts) what does not fit, and after a failure
 * reconnects with a growing delay; a frame cut by a broken connection is
 * dropped rather than sent again half.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "events.h"
#include "sinks.h"
#include "util.h"

#define BACKOFF_MIN_MS		500
#define BACKOFF_MAX_MS		30000
#define CONNECT_TIMEOUT_MS	5000

enum { SEV_WARNING = 4, SEV_NOTICE = 5, SEV_INFO = 6 };

/* --- targets and names ---------------------------------------------------------------- */

int syslog_parse_target(const char *spec, struct syslog_target *t, char *err, size_t errsz)
{
	static const char usage[] = "use udp://HOST[:PORT], tcp://HOST[:PORT] or unix:///PATH";
	const char *rest;

	memset(t, 0, sizeof(*t));
	if (!strncmp(spec, "unix://", 7)) {
		t->transport = SYSLOG_UNIX;
		if (spec[7] != '/' || strlen(spec + 7) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			goto bad;
		snprintf(t->host, sizeof(t->host), "%s", spec + 7);
		return 0;
	}
	if (!strncmp(spec, "udp://", 6))
		t->transport = SYSLOG_UDP;
	else if (!strncmp(spec, "tcp://", 6))
		t->transport = SYSLOG_TCP;
	else
		goto bad;
	rest = spec + 6;
	if (sink_split_hostport(rest, t->host, sizeof(t->host), t->port, sizeof(t->port)))
		goto bad;
	if (!t->port[0])
		snprintf(t->port, sizeof(t->port), "%s", t->transport == SYSLOG_UDP ? "514" : "601");
	if (sink_parse_addr(t->host, "1", NULL, NULL)) {
		snprintf(err, errsz, "'%s': '%s' is not an IP address (names are not resolved: the "
			 "static binary has no resolver library)", spec, t->host);
		return -EINVAL;
	}
	if (sink_parse_addr(t->host, t->port, NULL, NULL) || !strcmp(t->port, "0"))
		goto bad;
	return 0;
bad:
	snprintf(err, errsz, "'%s': not a syslog target; %s", spec, usage);
	return -EINVAL;
}

int syslog_facility(const char *name)
{
	static const char *const names[24] = {
		"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron",
		"authpriv", "ftp", [16] = "local0", "local1", "local2", "local3", "local4",
		"local5", "local6", "local7",
	};

	for (int i = 0; i < 24; i++)
		if (names[i] && !strcmp(name, names[i]))
			return i;
	return -EINVAL;
}

bool syslog_valid_sd_id(const char *sd_id)
{
	const char *at = strchr(sd_id, '@');
	size_t len = strlen(sd_id);

	/* The labels' element is "labels" + the same "@PEN": 32 characters at most too. */
	if (!at || at == sd_id || len > 32 || !at[1] || strspn(at + 1, "0123456789.") != strlen(at + 1) ||
	    strlen(at) > 32 - 6)
		return false;
	for (const char *p = sd_id; *p; p++)	/* SD-NAME: printable US-ASCII but = SP ] " */
		if (*p < 33 || *p > 126 || strchr("= ]\"", *p) || (*p == '@' && p != at))
			return false;
	return true;
}

/* --- formatting ------------------------------------------------------------------------- */

/* The longest prefix of @s[0..@len) that does not end inside a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t len)
{
	while (len && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	return len;
}

struct sd {
	char *buf;
	size_t len, sz;
	size_t cap;		/* longest value kept whole */
	bool cut;		/* a value was shortened */
};

static void sd_put(struct sd *d, const char *s, size_t n)
{
	if (d->len + n < d->sz)
		memcpy(d->buf + d->len, s, n);
	d->len += n;		/* past sz: too long, the caller tries a smaller cap */
}

/* name="value" with ", \ and ] escaped (RFC 5424 §6.3.3). */
static void sd_param(struct sd *d, const char *name, const char *value)
{
	size_t vlen = strlen(value);

	if (vlen > d->cap) {
		vlen = utf8_cut(value, d->cap);
		d->cut = true;
	}
	sd_put(d, " ", 1);
	sd_put(d, name, strlen(name));
	sd_put(d, "=\"", 2);
	for (size_t i = 0; i < vlen; i++) {
		if (value[i] == '"' || value[i] == '\\' || value[i] == ']')
			sd_put(d, "\\", 1);
		sd_put(d, value + i, 1);
	}
	sd_put(d, "\"", 1);
}

static void sd_num(struct sd *d, const char *name, long long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", v);
	sd_param(d, name, buf);
}

static void sd_json(struct sd *d, const char *name, json_t *v)
{
	if (json_is_string(v))
		sd_param(d, name, json_string_value(v));
	else if (json_is_integer(v))
		sd_num(d, name, json_integer_value(v));
}

static void sd_event(struct sd *d, const struct sbx_event *ev, json_t *j)
{
	json_t *p = json_object_get(j, "process");
	char target[SBX_PATH_MAX + 64], *clean;

	sd_json(d, "op", json_object_get(j, "op"));
	sd_json(d, "verdict", json_object_get(j, "verdict"));
	if (ev->flags & SBX_EV_NET) {
		event_net_target(ev, target, sizeof(target));
		clean = utf8_sanitize(target, strlen(target));
		sd_param(d, "target", clean ?: "");
		free(clean);
	} else {
		sd_json(d, "path", json_object_get(j, "path"));
	}
	sd_json(d, "path2", json_object_get(j, "path2"));
	sd_json(d, "domain", json_object_get(j, "domain"));
	sd_json(d, "rule", json_object_get(json_object_get(j, "rule"), "text"));
	sd_json(d, "rule_id", json_object_get(json_object_get(j, "rule"), "id"));
	sd_json(d, "errno", json_object_get(j, "errno"));
	sd_json(d, "pid", json_object_get(p, "pid"));
	sd_json(d, "tid", json_object_get(p, "tid"));
	sd_json(d, "ppid", json_object_get(p, "ppid"));
	sd_json(d, "uid", json_object_get(p, "uid"));
	sd_json(d, "comm", json_object_get(p, "comm"));
	sd_json(d, "sandbox", json_object_get(j, "sandbox"));
	sd_json(d, "cgroup_id", json_object_get(j, "cgroup_id"));
	sd_json(d, "sandbox_cgroup_id", json_object_get(j, "sandbox_cgroup_id"));
	if (event_repeat(ev) > 1 || (ev->flags & SBX_EV_SUMMARY))
		sd_json(d, "repeat", json_object_get(j, "repeat"));
	if (ev->seq)
		sd_json(d, "kernel_seq", json_object_get(j, "kernel_seq"));
	if (ev->flags & SBX_EV_PATH_UNRESOLVED)
		sd_param(d, "path_unresolved", "true");
	if (ev->flags & SBX_EV_RENAME_GUARD)
		sd_param(d, "moves_between_rules", "true");
}

/* Only what a header field may hold: printable US-ASCII, at most @max; "-" when empty. */
static void header_field(char *out, const char *s, size_t max)
{
	size_t n = 0;

	for (; s && s[n] && n < max; n++)
		out[n] = s[n] > 32 && s[n] < 127 ? s[n] : '_';
	out[n] = '\0';
	if (!n)
		strcpy(out, "-");
}

struct msg_head {
	int pri;
	__u64 mono_ns;
	const char *msgid;
};

/* "<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID " */
static int header(char *buf, size_t sz, const struct msg_head *h, const struct sink_ctx *ctx,
		  const char *app_name)
{
	char host[256], app[49];
	struct timespec ts;
	struct tm tm;

	event_wall_time(h->mono_ns, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	header_field(host, ctx->host, 255);
	header_field(app, app_name, 48);
	return snprintf(buf, sz, "<%d>1 %04d-%02d-%02dT%02d:%02d:%02d.%06ldZ %s %s %d %s ", h->pri,
			tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			ts.tv_nsec / 1000, host, app, (int)getpid(), h->msgid);
}

typedef void (*sd_fill_fn)(struct sd *d, const void *arg);

struct sd_src {
	const struct sink_ctx *ctx;
	const char *sd_id;
	sd_fill_fn fill;
	const void *arg;
};

/*
 * The sandbox's labels as an element of their own, "[labels@PEN KEY=…]"
 * (PEN: the enterprise number of @src's SD-ID): label keys are valid
 * PARAM-NAMEs (labels.h), and apart they cannot clash with ours.
 */
static void sd_labels(struct sd *d, const struct sd_src *src)
{
	const char *key;
	json_t *v;

	if (!json_object_size(src->ctx->labels))
		return;
	sd_put(d, "[labels", 7);
	sd_put(d, strchr(src->sd_id, '@'), strlen(strchr(src->sd_id, '@')));
	json_object_foreach((json_t *)src->ctx->labels, key, v)
		sd_param(d, key, json_string_value(v) ?: "");
	sd_put(d, "]", 1);
}

/* "[SD-ID seq=… boot_id=… <fill>][labels@PEN …]" with values longer than @cap shortened; its length. */
static size_t build_sd(struct sd *d, const struct sd_src *src, size_t cap)
{
	d->len = 0;
	d->cap = cap;
	d->cut = false;
	sd_put(d, "[", 1);
	sd_put(d, src->sd_id, strlen(src->sd_id));
	sd_num(d, "seq", (long long)src->ctx->seq);
	sd_param(d, "boot_id", src->ctx->boot_id ?: "-");
	src->fill(d, src->arg);
	if (d->cut)
		sd_param(d, "truncated", "true");
	sd_put(d, "]", 1);
	sd_labels(d, src);
	return d->len < d->sz ? d->len : SIZE_MAX;
}

/* The structured data in at most @room bytes: the longest values cut as little as needed. */
static void fit_sd(struct sd *d, const struct sd_src *src, size_t room)
{
	size_t lo = 16, hi = room, best = 0;

	if (build_sd(d, src, SIZE_MAX) <= room)
		return;
	while (lo <= hi) {		/* the largest cap that fits */
		size_t mid = lo + (hi - lo) / 2;

		if (build_sd(d, src, mid) <= room) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	if (best)
		build_sd(d, src, best);
	else
		d->len = 0;		/* not even short values fit: the NILVALUE */
}

/*
 * Header, structured data, SP, MSG into @buf (at most @sz - 1 bytes): the
 * structured data shortened until it fits, MSG cut to what is left.
 */
static size_t compose(char *buf, size_t sz, const struct msg_head *h, const struct sd_src *src,
		      const char *app_name, const char *msg)
{
	static const char bom[] = "\xef\xbb\xbf";
	char sdbuf[24 * 1024];
	struct sd d = { .buf = sdbuf, .sz = sizeof(sdbuf) };
	size_t len = header(buf, sz, h, src->ctx, app_name), mlen = strlen(msg);
	bool ascii = true;

	if (len + 2 >= sz) {		/* not even the header: nothing worth sending */
		if (sz)
			buf[0] = '\0';
		return 0;
	}
	fit_sd(&d, src, sz - len - 2);
	if (!d.len) {
		sdbuf[0] = '-';
		d.len = 1;
	}
	memcpy(buf + len, sdbuf, d.len);
	len += d.len;
	buf[len++] = ' ';
	for (size_t i = 0; i < mlen; i++)
		ascii &= !((unsigned char)msg[i] & 0x80);
	if (!ascii && len + 3 < sz) {		/* MSG-UTF8 must start with a BOM (§6.4) */
		memcpy(buf + len, bom, 3);
		len += 3;
	}
	if (len + mlen >= sz)
		mlen = utf8_cut(msg, sz - 1 - len);
	memcpy(buf + len, msg, mlen);
	len += mlen;
	buf[len] = '\0';
	return len;
}

struct event_arg {
	const struct sbx_event *ev;
	json_t *j;
};

static void fill_event(struct sd *d, const void *arg)
{
	const struct event_arg *a = arg;

	sd_event(d, a->ev, a->j);
}

size_t syslog_format_event(const struct sbx_event *ev, const struct sink_ctx *ctx, int facility,
			   const char *sd_id, const char *app_name, char *buf, size_t sz)
{
	struct msg_head h = { .mono_ns = ev->ts_ns, .msgid = "violation",
			      .pri = facility * 8 + (ev->verdict == SBX_VERDICT_DENY ? SEV_WARNING : SEV_NOTICE) };
	json_t *j = event_to_json(ev, ctx->rule_text, ctx->domain, ctx->sandbox);
	struct event_arg a = { ev, j };
	struct sd_src src = { ctx, sd_id, fill_event, &a };
	char line[2 * SBX_PATH_MAX + 512];
	size_t len;

	sink_human_line(ev, ctx, line, sizeof(line));
	len = compose(buf, sz, &h, &src, app_name, line);
	json_decref(j);
	return len;
}

struct life_arg {
	const struct sink_lifecycle *lc;
	const struct sink_ctx *ctx;
};

static void fill_lifecycle(struct sd *d, const void *arg)
{
	const struct life_arg *a = arg;
	json_t *ev = event_json_text(a->lc->event, strlen(a->lc->event ?: ""));
	json_t *sb = a->ctx->sandbox ? event_json_text(a->ctx->sandbox, strlen(a->ctx->sandbox)) : NULL;

	sd_json(d, "event", ev);
	sd_json(d, "sandbox", sb);
	if (a->lc->cgroup_id)
		sd_num(d, "sandbox_cgroup_id", (long long)a->lc->cgroup_id);
	if (a->lc->pid)
		sd_num(d, "pid", a->lc->pid);
	json_decref(ev);
	json_decref(sb);
}

size_t syslog_format_lifecycle(const struct sink_lifecycle *lc, const struct sink_ctx *ctx,
			       int facility, const char *sd_id, const char *app_name,
			       char *buf, size_t sz)
{
	struct msg_head h = { .mono_ns = lc->ts_ns ?: event_mono_now(), .msgid = "lifecycle",
			      .pri = facility * 8 + SEV_INFO };
	struct life_arg a = { lc, ctx };
	struct sd_src src = { ctx, sd_id, fill_lifecycle, &a };
	char line[1024], *clean;
	size_t len;

	snprintf(line, sizeof(line), "%s in sandbox %s: %s", lc->event ?: "?", ctx->sandbox ?: "?",
		 lc->detail ?: "");
	clean = utf8_sanitize(line, strlen(line));
	len = compose(buf, sz, &h, &src, app_name, clean ?: "");
	free(clean);
	return len;
}

/* --- transports ------------------------------------------------------------------------------ */

enum conn_state { DOWN, CONNECTING, UP };

struct syslog_sink {
	struct sink base;
	struct syslog_target t;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int facility;
	size_t max_message;
	char *sd_id, *app_name;
	int fd;
	enum conn_state state;
	long long retry_at, backoff, deadline;	/* CLOCK_MONOTONIC ms */
	int connect_timeout;
	/* TCP: whole frames ("LEN SP MSG") not yet sent, from q[qoff]. */
	char *q;
	size_t qoff, qlen, qcap;
	size_t head;		/* start of the frame q[qoff] belongs to */
	char *msg;		/* max_message + 1 bytes, plus room for the frame's length */
};

static struct syslog_sink *to_syslog(struct sink *s)
{
	return (struct syslog_sink *)s;
}

/* Bytes of the frame at q[off]: its length field, the space and the message. */
static size_t frame_len(const struct syslog_sink *s, size_t off)
{
	size_t n = 0, digits = 0;

	for (; s->q[off + digits] != ' '; digits++)
		n = n * 10 + (s->q[off + digits] - '0');
	return digits + 1 + n;
}

/* Give up on the connection; a frame cut in the middle is dropped, not resent half. */
static void conn_down(struct syslog_sink *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->state = DOWN;
	if (s->qoff > s->head) {
		s->qoff = s->head + frame_len(s, s->head);
		s->head = s->qoff;
		s->base.dropped++;
	}
	s->retry_at = now_ms() + s->backoff;
	s->backoff = s->backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : s->backoff * 2;
}

static void conn_up(struct syslog_sink *s)
{
	s->state = UP;
	s->backoff = BACKOFF_MIN_MS;
}

static void conn_start(struct syslog_sink *s)
{
	int type = s->t.transport == SYSLOG_TCP ? SOCK_STREAM : SOCK_DGRAM;

	s->fd = socket(s->addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		conn_down(s);
		return;
	}
	if (!connect(s->fd, (struct sockaddr *)&s->addr, s->addrlen)) {
		conn_up(s);
	} else if (errno == EINPROGRESS) {
		s->state = CONNECTING;
		s->deadline = now_ms() + s->connect_timeout;
	} else {
		conn_down(s);	/* a unix socket nobody listens on, no route, … */
	}
}

/* Send what the TCP queue holds, as far as the socket takes it now. */
static void queue_flush(struct syslog_sink *s)
{
	while (s->state == UP && s->qoff < s->qlen) {
		ssize_t n = send(s->fd, s->q + s->qoff, s->qlen - s->qoff, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			conn_down(s);
			break;
		}
		s->qoff += n;
		while (s->head < s->qoff && s->head + frame_len(s, s->head) <= s->qoff)
			s->head += frame_len(s, s->head);
	}
	if (s->qoff == s->qlen)
		s->qoff = s->qlen = s->head = 0;
}

static int queue_frame(struct syslog_sink *s, const char *msg, size_t len)
{
	char prefix[24];
	int plen = snprintf(prefix, sizeof(prefix), "%zu ", len);

	if (s->qlen + plen + len > s->qcap && s->head) {	/* make room: move the frames left down */
		memmove(s->q, s->q + s->head, s->qlen - s->head);
		s->qlen -= s->head;
		s->qoff -= s->head;
		s->head = 0;
	}
	if (s->qlen + plen + len > s->qcap) {
		s->base.dropped++;
		return -ENOBUFS;
	}
	memcpy(s->q + s->qlen, prefix, plen);
	memcpy(s->q + s->qlen + plen, msg, len);
	s->qlen += plen + len;
	s->base.written++;
	queue_flush(s);
	return 0;
}

/*
 * A datagram: now or never. ECONNREFUSED on UDP reports an earlier
 * datagram's ICMP error, on a unix socket a receiver that went away (a
 * restarted syslog daemon): try once more, on a new connection for unix.
 */
static int send_datagram(struct syslog_sink *s, const char *msg, size_t len)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		if (s->state != UP)
			break;
		if (send(s->fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) {
			s->base.written++;
			return 0;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
			break;		/* the receiver is behind: drop, do not wait */
		if (errno != ECONNREFUSED && errno != ENOTCONN) {
			conn_down(s);
			break;
		}
		if (s->t.transport == SYSLOG_UNIX) {
			close(s->fd);
			s->fd = -1;
			conn_start(s);
		}
	}
	s->base.dropped++;
	return -EAGAIN;
}

static int syslog_send(struct syslog_sink *s, size_t len)
{
	if (!len) {
		s->base.dropped++;
		return -EMSGSIZE;
	}
	if (s->state == DOWN && now_ms() >= s->retry_at)
		conn_start(s);
	if (s->t.transport == SYSLOG_TCP)
		return queue_frame(s, s->msg, len);
	return send_datagram(s, s->msg, len);
}

static int syslog_emit(struct sink *sk, const struct sbx_event *ev, const struct sink_ctx *ctx)
{
	struct syslog_sink *s = to_syslog(sk);
	size_t len = syslog_format_event(ev, ctx, s->facility, s->sd_id, s->app_name, s->msg,
					 s->max_message + 1);

	return syslog_send(s, len);
}

static int syslog_lifecycle(struct sink *sk, const struct sink_lifecycle *lc, const struct sink_ctx *ctx)
{
	struct syslog_sink *s = to_syslog(sk);
	size_t len = syslog_format_lifecycle(lc, ctx, s->facility, s->sd_id, s->app_name, s->msg,
					     s->max_message + 1);

	return syslog_send(s, len);
}

static int syslog_flush(struct sink *sk)
{
	queue_flush(to_syslog(sk));
	return 0;
}

/* SIGHUP: a new connection now (the receiver may have moved or restarted). */
static int syslog_reopen(struct sink *sk)
{
	struct syslog_sink *s = to_syslog(sk);

	conn_down(s);
	s->backoff = BACKOFF_MIN_MS;
	conn_start(s);
	return 0;
}

static size_t syslog_pollfds(struct sink *sk, struct pollfd *fds, size_t max, int *timeout_ms)
{
	struct syslog_sink *s = to_syslog(sk);
	long long due = -1, now = now_ms();

	if (s->t.transport != SYSLOG_TCP)
		return 0;	/* datagrams: nothing to wait for; a lost receiver is retried per message */
	if (s->state == DOWN)
		due = s->retry_at;
	else if (s->state == CONNECTING)
		due = s->deadline;
	if (due >= 0) {
		int wait = due > now ? (int)(due - now) : 0;

		if (*timeout_ms < 0 || wait < *timeout_ms)
			*timeout_ms = wait;
	}
	if (s->state == DOWN || !max)
		return 0;
	fds[0] = (struct pollfd){ .fd = s->fd, .events = s->state == CONNECTING ? POLLOUT :
				  POLLIN | (s->qoff < s->qlen ? POLLOUT : 0) };
	return 1;
}

static void connecting(struct syslog_sink *s, short revents)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (revents & (POLLOUT | POLLERR | POLLHUP)) {
		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err)
			conn_down(s);
		else
			conn_up(s);
	} else if (now_ms() >= s->deadline) {
		conn_down(s);	/* nobody answers: try later rather than hang on */
	}
}

/* The receiver does not talk to us: data or EOF from it means the connection is done. */
static void connected(struct syslog_sink *s, short revents)
{
	char junk[512];

	if (revents & POLLIN) {
		ssize_t n = recv(s->fd, junk, sizeof(junk), MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			conn_down(s);
			return;
		}
	}
	if (revents & (POLLERR | POLLHUP))
		conn_down(s);
}

static void syslog_handle(struct sink *sk, const struct pollfd *fds, size_t n)
{
	struct syslog_sink *s = to_syslog(sk);
	short revents = n && fds[0].fd == s->fd ? fds[0].revents : 0;

	if (s->t.transport != SYSLOG_TCP)
		return;
	if (s->state == CONNECTING)
		connecting(s, revents);
	else if (s->state == UP)
		connected(s, revents);
	if (s->state == DOWN && now_ms() >= s->retry_at)
		conn_start(s);
	queue_flush(s);
}

static void syslog_free(struct sink *sk)
{
	struct syslog_sink *s = to_syslog(sk);

	if (!s)
		return;
	queue_flush(s);		/* what the socket takes now; never waits */
	if (s->fd >= 0)
		close(s->fd);
	free(s->q);
	free(s->msg);
	free(s->sd_id);
	free(s->app_name);
	free(s);
}

static const struct sink_ops syslog_ops = {
	.type = "syslog",
	.emit = syslog_emit,
	.lifecycle = syslog_lifecycle,
	.reopen = syslog_reopen,
	.flush = syslog_flush,
	.pollfds = syslog_pollfds,
	.handle = syslog_handle,
	.close = syslog_free,
};

static int resolve(struct syslog_sink *s)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&s->addr;

	if (s->t.transport == SYSLOG_UNIX) {
		un->sun_family = AF_UNIX;
		snprintf(un->sun_path, sizeof(un->sun_path), "%s", s->t.host);
		s->addrlen = sizeof(*un);
		return 0;
	}
	return sink_parse_addr(s->t.host, s->t.port, &s->addr, &s->addrlen);
}

static int syslog_init(struct syslog_sink *s, const struct sink_syslog_opts *o)
{
	char err[512];

	if (syslog_parse_target(o->target ?: "", &s->t, err, sizeof(err)))
		return -EINVAL;
	if (o->facility > 23 || (o->sd_id && !syslog_valid_sd_id(o->sd_id)))
		return -EINVAL;
	s->facility = o->facility < 0 ? SYSLOG_DEFAULT_FACILITY : o->facility;
	s->max_message = o->max_message ?: s->t.transport == SYSLOG_UDP ? SYSLOG_UDP_MAX : SYSLOG_STREAM_MAX;
	if (s->max_message < SYSLOG_MIN_MESSAGE)
		s->max_message = SYSLOG_MIN_MESSAGE;
	s->qcap = s->t.transport == SYSLOG_TCP ? (o->queue_bytes ?: SYSLOG_QUEUE_BYTES) : 0;
	s->connect_timeout = o->connect_timeout_ms ?: CONNECT_TIMEOUT_MS;
	s->backoff = BACKOFF_MIN_MS;
	s->sd_id = strdup(o->sd_id ?: SYSLOG_DEFAULT_SD_ID);
	s->app_name = strdup(o->app_name ?: "sbx-bpf");
	s->msg = malloc(s->max_message + 1);
	s->q = s->qcap ? malloc(s->qcap) : NULL;
	if (!s->sd_id || !s->app_name || !s->msg || (s->qcap && !s->q))
		return -ENOMEM;
	return resolve(s);
}

struct sink *sink_syslog_new(const struct sink_syslog_opts *o)
{
	struct syslog_sink *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	s->base.ops = &syslog_ops;
	s->fd = -1;
	err = syslog_init(s, o);
	if (err) {
		syslog_free(&s->base);
		errno = -err;
		return NULL;
	}
	conn_start(s);	/* a receiver that is not there yet is retried later, not an error */
	s->backoff = BACKOFF_MIN_MS;
	return &s->base;
}
