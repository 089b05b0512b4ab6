// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * evsock.c — the daemon's events socket (evsock.h): a backlog ring of the
 * last lines, and clients that each get the lines matching their filter.
 *
 * Each line is serialized once, at publish time, and copied into the queue
 * of every watcher that wants it. A queue is bounded (out_bytes): what does
 * not fit is dropped and counted, so a watcher that stops reading costs its
 * own lines and a bounded amount of memory, never the daemon's time.
 * Everything is sent with MSG_DONTWAIT | MSG_NOSIGNAL.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <linux/types.h>

#include "evsock.h"
#include "util.h"

enum client_state {
	CL_REQUEST,		/* connected, the request line not complete yet */
	CL_WATCH,		/* "follow": gets every matching line */
	CL_CLOSING,		/* answered: closed once the queue is sent */
};

struct client {
	int fd;			/* -1: slot free */
	enum client_state state;
	bool rd_eof;		/* the peer shut its side: nothing more to read */
	pid_t pid;
	uid_t uid;
	long long since_ms, deadline_ms;
	__u64 cgroup;		/* the filter; 0: every line */
	char req[EVSOCK_REQUEST_MAX];
	size_t req_len;
	char *out;		/* queued bytes: out[out_off..out_len) */
	size_t out_off, out_len, out_cap;
	unsigned long long lines, dropped;
	unsigned long long gap;	/* dropped and not yet reported */
};

struct bl_line {
	char *text;		/* with its '\n' */
	size_t len;
	__u64 cgroup_id, sandbox_id;
};

struct evsock {
	int listen_fd;
	char *path;
	dev_t dev;		/* the socket file we made */
	ino_t ino;
	struct evsock_opts o;
	struct client *cl;
	size_t nr_cl;
	struct bl_line *bl;	/* ring: bl[(bl_head + i) % o.backlog], i < bl_count */
	size_t bl_head, bl_count;
	unsigned long long published, dropped;
	long long start_ms;
};

/* @obj as one line with its '\n', malloc'ed; NULL on ENOMEM. */
static char *dump_line(const json_t *obj, size_t *len)
{
	char *s = obj ? json_dumps(obj, JSON_COMPACT) : NULL, *l;

	if (!s)
		return NULL;
	*len = strlen(s);
	l = realloc(s, *len + 2);
	if (!l) {
		free(s);
		return NULL;
	}
	l[(*len)++] = '\n';
	l[*len] = '\0';
	return l;
}

/* --- a client's queue ------------------------------------------------------------------ */

static size_t queued(const struct client *c)
{
	return c->out_len - c->out_off;
}

/* Room for @len more bytes, within @limit; grows the buffer as needed. */
static bool reserve(struct client *c, size_t len, size_t limit)
{
	size_t used = queued(c), cap;
	char *p;

	if (used + len > limit)
		return false;
	if (c->out_off && c->out_len + len > c->out_cap) {
		memmove(c->out, c->out + c->out_off, used);
		c->out_off = 0;
		c->out_len = used;
	}
	if (c->out_len + len <= c->out_cap)
		return true;
	for (cap = c->out_cap ? c->out_cap : 4096; cap < c->out_len + len; cap *= 2)
		;
	if (cap > limit)
		cap = limit;
	p = realloc(c->out, cap);
	if (!p)
		return false;
	c->out = p;
	c->out_cap = cap;
	return true;
}

static void append(struct client *c, const char *s, size_t len)
{
	memcpy(c->out + c->out_len, s, len);
	c->out_len += len;
}

static size_t gap_line(const struct client *c, char *buf, size_t sz)
{
	return c->gap ? (size_t)snprintf(buf, sz, "{\"type\":\"gap\",\"dropped\":%llu}\n", c->gap) : 0;
}

static int send_queued(struct client *c);

/*
 * One line to a watcher: after the gap line if lines were lost; dropped if
 * they do not fit. A burst (one read of the ring buffer) can outgrow the
 * queue before the poll loop sends anything, so the socket's own buffer
 * takes its share first. A send error is left for flush() to act on.
 */
static void deliver(struct evsock *es, struct client *c, const char *line, size_t len)
{
	char gap[64];
	size_t glen = gap_line(c, gap, sizeof(gap));

	if (!reserve(c, glen + len, es->o.out_bytes) &&
	    (send_queued(c) || !reserve(c, glen + len, es->o.out_bytes))) {
		c->dropped++;
		c->gap++;
		es->dropped++;
		return;
	}
	append(c, gap, glen);
	append(c, line, len);
	c->gap = 0;
	c->lines++;
}

/* Report the lines lost, now that there is room for it. Whether it queued the gap line. */
static bool gap_out(struct evsock *es, struct client *c)
{
	char gap[64];
	size_t glen = gap_line(c, gap, sizeof(gap));

	if (!glen || !reserve(c, glen, es->o.out_bytes))
		return false;
	append(c, gap, glen);
	c->gap = 0;
	return true;
}

/* An answer (status, error): small, so it goes in whatever the limit. */
static void reply(struct client *c, const json_t *obj)
{
	size_t len;
	char *line = dump_line(obj, &len);

	if (line && reserve(c, len, queued(c) + len))
		append(c, line, len);
	free(line);
	c->state = CL_CLOSING;
}

static void reply_error(struct client *c, const char *why)
{
	json_t *e = json_pack("{s:s}", "error", why);

	reply(c, e);
	json_decref(e);
}

static void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Send what is queued without blocking. 0, or -errno when the peer is gone. */
static int send_queued(struct client *c)
{
	while (queued(c)) {
		ssize_t n = send(c->fd, c->out + c->out_off, queued(c), MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		c->out_off += n;
	}
	c->out_off = c->out_len = 0;
	return 0;
}

static void flush(struct evsock *es, struct client *c)
{
	do {
		if (send_queued(c)) {
			client_close(c);	/* hung up (EPIPE, ECONNRESET) */
			return;
		}
	} while (gap_out(es, c));
	if (c->state == CL_CLOSING && !queued(c))
		client_close(c);
}

/* --- the backlog --------------------------------------------------------------------------- */

static struct bl_line *bl_at(struct evsock *es, size_t i)
{
	return &es->bl[(es->bl_head + i) % es->o.backlog];
}

static bool matches(__u64 filter, const struct bl_line *l)
{
	return !filter || filter == l->cgroup_id || filter == l->sandbox_id;
}

/*
 * The last @want lines matching @c's filter, oldest first. The newest that
 * fit in the (empty) queue are sent; older ones that do not fit are
 * reported as a gap before them.
 */
static void send_backlog(struct evsock *es, struct client *c, size_t want)
{
	size_t i, first = es->bl_count, n = 0, bytes = 0;
	size_t room = es->o.out_bytes > 64 ? es->o.out_bytes - 64 : 0;	/* the gap line's */
	unsigned long long lost = 0;

	for (i = es->bl_count; i-- > 0 && n + lost < want;) {
		struct bl_line *l = bl_at(es, i);

		if (!matches(c->cgroup, l))
			continue;
		if (!lost && bytes + l->len <= room) {
			bytes += l->len;
			n++;
			first = i;
		} else {
			lost++;
		}
	}
	c->gap += lost;
	c->dropped += lost;
	es->dropped += lost;
	for (i = first; i < es->bl_count && n; i++) {
		struct bl_line *l = bl_at(es, i);

		if (matches(c->cgroup, l)) {
			deliver(es, c, l->text, l->len);
			n--;
		}
	}
}

int evsock_publish(struct evsock *es, const json_t *obj)
{
	struct bl_line line = {
		.cgroup_id = (__u64)json_integer_value(json_object_get(obj, "cgroup_id")),
		.sandbox_id = (__u64)json_integer_value(json_object_get(obj, "sandbox_cgroup_id")),
	};
	struct bl_line *slot;

	line.text = dump_line(obj, &line.len);
	if (!line.text)
		return -ENOMEM;
	es->published++;
	if (es->bl_count == es->o.backlog) {
		slot = bl_at(es, 0);	/* the oldest makes room */
		free(slot->text);
		es->bl_head = (es->bl_head + 1) % es->o.backlog;
		es->bl_count--;
	}
	slot = bl_at(es, es->bl_count++);
	*slot = line;
	for (size_t i = 0; i < es->nr_cl; i++) {
		struct client *c = &es->cl[i];

		if (c->fd >= 0 && c->state == CL_WATCH && matches(c->cgroup, slot))
			deliver(es, c, slot->text, slot->len);
	}
	return 0;
}

/* --- requests ------------------------------------------------------------------------------ */

enum req_cmd { REQ_FOLLOW, REQ_RECENT, REQ_STATUS, REQ_RESOLVER, REQ_RESOLVER_STOP, REQ_WATCH };

static const char *const req_names[] = {
	[REQ_FOLLOW] = "follow", [REQ_RECENT] = "recent", [REQ_STATUS] = "status",
	[REQ_RESOLVER] = "resolver", [REQ_RESOLVER_STOP] = "resolver-stop", [REQ_WATCH] = "watch",
};

struct request {
	enum req_cmd cmd;
	__u64 cgroup;
	size_t backlog;
};

static int parse_cmd(json_t *req, struct request *r, char *why, size_t sz)
{
	const char *cmd = json_string_value(json_object_get(req, "cmd"));

	if (!json_is_object(req)) {
		snprintf(why, sz, "the request is not a JSON object");
		return -EINVAL;
	}
	if (!cmd) {
		snprintf(why, sz, "the request has no \"cmd\" string");
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(req_names) / sizeof(req_names[0]); i++) {
		if (!strcmp(cmd, req_names[i])) {
			r->cmd = (enum req_cmd)i;
			return 0;
		}
	}
	snprintf(why, sz, "unknown cmd '%.64s' (follow, recent, status, resolver, resolver-stop, watch)", cmd);
	return -EINVAL;
}

static bool is_resolver(enum req_cmd cmd)
{
	return cmd == REQ_RESOLVER || cmd == REQ_RESOLVER_STOP;
}

/* Requests about one attached cgroup: "cgroup" required. */
static bool about_cgroup(enum req_cmd cmd)
{
	return is_resolver(cmd) || cmd == REQ_WATCH;
}

/* "cgroup": a filter (null: every line) for follow and recent; the resolver's cgroup, required. */
static int parse_cgroup(const json_t *v, struct request *r, char *why, size_t sz)
{
	bool required = about_cgroup(r->cmd);

	if (json_is_null(v) && !required)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) <= 0) {
		snprintf(why, sz, "\"cgroup\" must be a cgroup id (a positive integer)%s",
			 required ? "" : " or null");
		return -EINVAL;
	}
	r->cgroup = (__u64)json_integer_value(v);
	return 0;
}

/* The request's fields, each checked; @why says what is wrong. */
static int parse_request(json_t *req, struct request *r, char *why, size_t sz)
{
	const char *key;
	json_t *v;

	memset(r, 0, sizeof(*r));
	if (parse_cmd(req, r, why, sz))
		return -EINVAL;
	json_object_foreach(req, key, v) {
		if (!strcmp(key, "cmd"))
			continue;
		if (r->cmd != REQ_STATUS && !strcmp(key, "cgroup")) {
			if (parse_cgroup(v, r, why, sz))
				return -EINVAL;
		} else if ((r->cmd == REQ_FOLLOW || r->cmd == REQ_RECENT) && !strcmp(key, "backlog")) {
			if (!json_is_integer(v) || json_integer_value(v) < 0) {
				snprintf(why, sz, "\"backlog\" must be a number of lines, 0 or more");
				return -EINVAL;
			}
			r->backlog = (size_t)json_integer_value(v);
		} else {
			snprintf(why, sz, "unknown key '%.64s' in a %s request", key, req_names[r->cmd]);
			return -EINVAL;
		}
	}
	if (about_cgroup(r->cmd) && !r->cgroup) {
		snprintf(why, sz, "a %s request needs \"cgroup\": the id of an attached cgroup",
			 req_names[r->cmd]);
		return -EINVAL;
	}
	return 0;
}

/* Answered by the owner (the daemon's resolvers); synchronous, as the owner is quick about it. */
static void handle_resolver(struct evsock *es, struct client *c, const struct request *r)
{
	json_t *ans;

	if (!es->o.resolver) {
		reply_error(c, "this server runs no resolvers");
		return;
	}
	ans = es->o.resolver(es->o.resolver_ctx, r->cmd == REQ_RESOLVER, r->cgroup);
	if (ans)
		reply(c, ans);
	else
		reply_error(c, "out of memory");
	json_decref(ans);
}

/* Answered by the owner (the daemon's limit watch). */
static void handle_watch(struct evsock *es, struct client *c, const struct request *r)
{
	json_t *ans;

	if (!es->o.watch) {
		reply_error(c, "this server watches no cgroups");
		return;
	}
	ans = es->o.watch(es->o.watch_ctx, r->cgroup);
	if (ans)
		reply(c, ans);
	else
		reply_error(c, "out of memory");
	json_decref(ans);
}

static void handle_request(struct evsock *es, struct client *c, size_t len)
{
	json_t *req = json_loadb(c->req, len, JSON_REJECT_DUPLICATES, NULL), *st;
	struct request r;
	char why[160];

	if (!req) {
		reply_error(c, "the request is not JSON");
		return;
	}
	if (parse_request(req, &r, why, sizeof(why))) {
		reply_error(c, why);
	} else if (is_resolver(r.cmd)) {
		handle_resolver(es, c, &r);
	} else if (r.cmd == REQ_WATCH) {
		handle_watch(es, c, &r);
	} else if (r.cmd == REQ_STATUS) {
		st = evsock_status(es);
		if (st)
			reply(c, st);
		else
			reply_error(c, "out of memory");
		json_decref(st);
	} else if (r.cmd == REQ_FOLLOW && evsock_watchers(es) >= es->o.max_watchers) {
		snprintf(why, sizeof(why), "too many watchers (%zu)", es->o.max_watchers);
		reply_error(c, why);
	} else {
		c->cgroup = r.cgroup;
		c->state = r.cmd == REQ_FOLLOW ? CL_WATCH : CL_CLOSING;
		send_backlog(es, c, r.backlog < es->o.backlog ? r.backlog : es->o.backlog);
	}
	json_decref(req);
}

/* The request line; after it, input is read and ignored (it shows a hang-up). */
static void client_read(struct evsock *es, struct client *c)
{
	char scratch[512], *buf = c->state == CL_REQUEST ? c->req + c->req_len : scratch;
	size_t room = c->state == CL_REQUEST ? sizeof(c->req) - c->req_len : sizeof(scratch);
	ssize_t n = recv(c->fd, buf, room, MSG_DONTWAIT);
	char *nl;

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n < 0) {
		client_close(c);
		return;
	}
	c->rd_eof = n == 0;	/* a half-close after the request is fine */
	if (c->state != CL_REQUEST)
		return;
	c->req_len += n;
	nl = memchr(c->req, '\n', c->req_len);
	if (nl || (c->rd_eof && c->req_len))
		handle_request(es, c, nl ? (size_t)(nl - c->req) : c->req_len);
	else if (c->rd_eof)
		client_close(c);	/* connected and left */
	else if (c->req_len == sizeof(c->req))
		reply_error(c, "the request is longer than 4096 bytes");
}

/* --- connections ---------------------------------------------------------------------------- */

static struct client *free_slot(struct evsock *es)
{
	for (size_t i = 0; i < es->nr_cl; i++)
		if (es->cl[i].fd < 0)
			return &es->cl[i];
	return NULL;
}

/* A refusal: one error line, sent now (the socket buffer is empty), and close. */
static void refuse(int fd, const char *why)
{
	json_t *e = json_pack("{s:s}", "error", why);
	size_t len;
	char *line = dump_line(e, &len);

	if (line)
		(void)send(fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL);	/* gone already: nothing to tell */
	free(line);
	json_decref(e);
	close(fd);
}

static void accept_all(struct evsock *es)
{
	for (;;) {
		int fd = accept4(es->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ucred cr;
		socklen_t len = sizeof(cr);
		struct client *c;

		if (fd < 0)
			return;		/* EAGAIN: no one else waiting */
		/* The socket file is 0600 already; this holds even if someone chmods it. */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
		    (cr.uid != 0 && cr.uid != geteuid())) {
			refuse(fd, "permission denied: only root may read the events");
			continue;
		}
		c = free_slot(es);
		if (!c) {
			refuse(fd, "too many connections");
			continue;
		}
		c->fd = fd;
		c->state = CL_REQUEST;
		c->pid = cr.pid;
		c->uid = cr.uid;
		c->since_ms = now_ms();
		c->deadline_ms = c->since_ms + EVSOCK_REQUEST_MS;
	}
}

size_t evsock_pollfds(struct evsock *es, struct pollfd *fds, size_t max, int *timeout_ms)
{
	long long now = now_ms();
	size_t n = 0;

	if (n < max)
		fds[n++] = (struct pollfd){ .fd = es->listen_fd, .events = POLLIN };
	for (size_t i = 0; i < es->nr_cl && n < max; i++) {
		struct client *c = &es->cl[i];
		int wait;

		if (c->fd < 0)
			continue;
		/* POLLHUP and POLLERR come whatever is asked: a hang-up is always seen. */
		fds[n++] = (struct pollfd){ .fd = c->fd,
					    .events = (c->rd_eof ? 0 : POLLIN) | (queued(c) ? POLLOUT : 0) };
		if (c->state != CL_REQUEST)
			continue;
		wait = c->deadline_ms > now ? (int)(c->deadline_ms - now) : 0;
		if (*timeout_ms < 0 || wait < *timeout_ms)
			*timeout_ms = wait;
	}
	return n;
}

static struct client *by_fd(struct evsock *es, int fd)
{
	for (size_t i = 0; i < es->nr_cl; i++)
		if (es->cl[i].fd == fd)
			return &es->cl[i];
	return NULL;
}

void evsock_handle(struct evsock *es, const struct pollfd *fds, size_t n)
{
	bool listener = false;
	long long now;

	/* Clients first: a slot closed here is not reused by accept before its entry is read. */
	for (size_t k = 0; k < n; k++) {
		struct client *c;

		if (!fds[k].revents)
			continue;
		if (fds[k].fd == es->listen_fd) {
			listener = true;
			continue;
		}
		c = by_fd(es, fds[k].fd);
		if (!c)
			continue;
		if (fds[k].revents & (POLLHUP | POLLERR))
			client_close(c);	/* gone: nobody to answer */
		else if (fds[k].revents & POLLIN)
			client_read(es, c);
	}
	now = now_ms();
	for (size_t i = 0; i < es->nr_cl; i++)
		if (es->cl[i].fd >= 0 && es->cl[i].state == CL_REQUEST && now >= es->cl[i].deadline_ms)
			reply_error(&es->cl[i], "no request within 5 seconds");
	if (listener)
		accept_all(es);
	for (size_t i = 0; i < es->nr_cl; i++)
		if (es->cl[i].fd >= 0)
			flush(es, &es->cl[i]);
}

size_t evsock_watchers(const struct evsock *es)
{
	size_t n = 0;

	for (size_t i = 0; i < es->nr_cl; i++)
		n += es->cl[i].fd >= 0 && es->cl[i].state == CL_WATCH;
	return n;
}

static json_t *watcher_json(const struct client *c, long long now)
{
	return json_pack("{s:i, s:i, s:o, s:I, s:I, s:I, s:I}", "pid", (int)c->pid, "uid", (int)c->uid,
			 "cgroup", c->cgroup ? json_integer((json_int_t)c->cgroup) : json_null(),
			 "connected", (json_int_t)((now - c->since_ms) / 1000),
			 "lines", (json_int_t)c->lines, "dropped", (json_int_t)c->dropped,
			 "queued_bytes", (json_int_t)queued(c));
}

json_t *evsock_status(struct evsock *es)
{
	long long now = now_ms();
	json_t *w = json_array(), *st;

	for (size_t i = 0; w && i < es->nr_cl; i++)
		if (es->cl[i].fd >= 0 && es->cl[i].state == CL_WATCH)
			json_array_append_new(w, watcher_json(&es->cl[i], now));
	st = json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "pid", (int)getpid(),
		       "uptime", (json_int_t)((now - es->start_ms) / 1000),
		       "events_published", (json_int_t)es->published,
		       "backlog_lines", (json_int_t)es->bl_count,
		       "watchers_connected", (json_int_t)evsock_watchers(es),
		       "watchers_max", (json_int_t)es->o.max_watchers,
		       "lines_dropped", (json_int_t)es->dropped, "watchers", w);
	if (st && es->o.status) {
		json_t *extra = es->o.status(es->o.status_ctx);

		if (extra)
			json_object_update_new(st, extra);
	}
	return st;
}

/* --- the socket ------------------------------------------------------------------------------- */

static int sun_addr(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	strcpy(a->sun_path, path);
	return 0;
}

/*
 * Bound at PATH.PID first: nobody can connect before listen(), which comes
 * after the chmod, and the rename makes it appear at @path whole.
 */
static int listen_at(struct evsock *es, const char *path)
{
	struct sockaddr_un a;
	char tmp[sizeof(a.sun_path) + 16];
	struct stat st;
	int err;

	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	err = sun_addr(tmp, &a);
	if (err)
		return err;
	es->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (es->listen_fd < 0)
		return -errno;
	unlink(tmp);		/* left by a crashed process that had our pid */
	if (bind(es->listen_fd, (struct sockaddr *)&a, sizeof(a)))
		return -errno;
	if (chmod(tmp, 0600) || listen(es->listen_fd, 64) || rename(tmp, path) || stat(path, &st)) {
		err = -errno;
		unlink(tmp);
		return err;
	}
	es->dev = st.st_dev;
	es->ino = st.st_ino;
	return 0;
}

struct evsock *evsock_open(const char *path, const struct evsock_opts *o)
{
	struct evsock *es = calloc(1, sizeof(*es));
	int err = -ENOMEM;

	if (!es)
		return NULL;
	es->listen_fd = -1;
	if (o)
		es->o = *o;
	es->o.max_watchers = es->o.max_watchers ?: EVSOCK_MAX_WATCHERS;
	es->o.out_bytes = es->o.out_bytes ?: EVSOCK_OUT_BYTES;
	es->o.backlog = es->o.backlog ?: EVSOCK_BACKLOG;
	es->start_ms = now_ms();
	es->nr_cl = es->o.max_watchers + EVSOCK_SPARE;
	es->cl = calloc(es->nr_cl, sizeof(*es->cl));
	es->bl = calloc(es->o.backlog, sizeof(*es->bl));
	es->path = strdup(path);
	for (size_t i = 0; es->cl && i < es->nr_cl; i++)
		es->cl[i].fd = -1;
	if (es->cl && es->bl && es->path)
		err = listen_at(es, path);
	if (err) {
		evsock_free(es);
		errno = -err;
		return NULL;
	}
	return es;
}

void evsock_free(struct evsock *es)
{
	struct stat st;

	if (!es)
		return;
	for (size_t i = 0; es->cl && i < es->nr_cl; i++)
		client_close(&es->cl[i]);
	if (es->listen_fd >= 0) {
		/* Remove the file only if it is still the one we made. */
		if (es->ino && !stat(es->path, &st) && st.st_dev == es->dev && st.st_ino == es->ino)
			unlink(es->path);
		close(es->listen_fd);
	}
	for (size_t i = 0; es->bl && i < es->bl_count; i++)
		free(bl_at(es, i)->text);
	free(es->bl);
	free(es->cl);
	free(es->path);
	free(es);
}

/* --- the client side ---------------------------------------------------------------------------- */

int evsock_connect(const char *path, const json_t *req, int timeout_ms)
{
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
	struct sockaddr_un a;
	size_t len = 0;
	char *line = dump_line(req, &len);
	int fd = -1, err = sun_addr(path, &a);

	if (!line)
		err = -ENOMEM;
	if (!err && (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		err = -errno;
	/* SO_SNDTIMEO bounds connect() too, should the listen queue be full. */
	if (!err && (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
		     connect(fd, (struct sockaddr *)&a, sizeof(a))))
		err = errno == EINPROGRESS || errno == EAGAIN ? -ETIMEDOUT : -errno;
	if (!err && send(fd, line, len, MSG_NOSIGNAL) != (ssize_t)len)
		err = errno == EAGAIN ? -ETIMEDOUT : -errno;
	free(line);
	if (err && fd >= 0)
		close(fd);
	return err ? err : fd;
}

/* The first line that arrives on @fd before @deadline, as JSON. */
static int read_answer(int fd, long long deadline, json_t **answer)
{
	size_t len = 0, sz = 1 << 20;
	char *buf = malloc(sz), *nl = NULL;
	int err = buf ? 0 : -ENOMEM;

	while (!err && !nl) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			err = -ETIMEDOUT;
			break;
		}
		n = recv(fd, buf + len, sz - len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			err = n < 0 ? -errno : -EPROTO;	/* closed before a whole line */
		else
			len += n;
		nl = memchr(buf, '\n', len);
		if (!err && !nl && len == sz)
			err = -EMSGSIZE;
	}
	if (!err && !(*answer = json_loadb(buf, nl - buf, 0, NULL)))
		err = -EPROTO;
	free(buf);
	return err;
}

int evsock_query(const char *path, const json_t *req, int timeout_ms, json_t **answer)
{
	long long deadline = now_ms() + timeout_ms;
	int fd = evsock_connect(path, req, timeout_ms), err;

	*answer = NULL;
	if (fd < 0)
		return fd;
	err = read_answer(fd, deadline, answer);
	close(fd);
	return err;
}
