// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's events socket with real unix sockets: the server and its
 * clients in one process, the server driven by poll() between the client's
 * reads (pump()).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "evsock.h"
#include "sinktest.h"
#include "util.h"

struct fixture {
	char *dir;
	char path[256];
	struct evsock *es;
};

struct reader {
	int fd;
	bool eof;
	size_t len;
	char buf[1 << 16];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->dir = make_tmpdir();
	snprintf(f->path, sizeof(f->path), "%s/events.sock", f->dir);
	*state = f;
	return f->dir ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	evsock_free(f->es);
	rm_tmpdir(f->dir);
	free(f);
	return 0;
}

static struct evsock *open_es(struct fixture *f, const struct evsock_opts *o)
{
	f->es = evsock_open(f->path, o);
	assert_non_null(f->es);
	return f->es;
}

/* Let the server accept, read requests and send, until nothing is ready. */
static void pump(struct evsock *es)
{
	struct pollfd fds[EVSOCK_FDS];

	for (int i = 0; i < 20; i++) {
		int timeout = -1;
		size_t n = evsock_pollfds(es, fds, EVSOCK_FDS, &timeout);
		int ready = poll(fds, n, 0);

		evsock_handle(es, fds, n);
		if (ready <= 0)
			break;
	}
}

/* The event numbered @i (path "/e/I") in cgroup @cg under the sandbox @sb, to the socket. */
static void publish(struct evsock *es, int i, __u64 cg, __u64 sb)
{
	struct sbx_event ev;
	char path[32];
	json_t *j;

	snprintf(path, sizeof(path), "/e/%d", i);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, path);
	ev.cgroup_id = cg;
	ev.sandbox_cgroup_id = sb;
	j = event_to_json(&ev, NULL, NULL, NULL);
	assert_int_equal(evsock_publish(es, j), 0);
	json_decref(j);
}

static struct reader *client(const char *path, const char *req_text)
{
	struct reader *r = calloc(1, sizeof(*r));
	json_t *req = json_loads(req_text, 0, NULL);

	assert_non_null(req);
	r->fd = evsock_connect(path, req, 1000);
	assert_true(r->fd >= 0);
	json_decref(req);
	return r;
}

/* A client that sends @raw as it is. */
static struct reader *raw_client(const char *path, const char *raw, size_t len)
{
	struct reader *r = calloc(1, sizeof(*r));
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	strcpy(a.sun_path, path);
	r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(r->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(send(r->fd, raw, len, MSG_NOSIGNAL), (ssize_t)len);
	return r;
}

static void reader_free(struct reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

/* The next line, pumping the server meanwhile; NULL at EOF or when none comes in @rounds. */
static json_t *next_line(struct evsock *es, struct reader *r, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		char *nl = memchr(r->buf, '\n', r->len);
		ssize_t n;

		if (nl) {
			json_t *j = json_loadb(r->buf, nl - r->buf, 0, NULL);

			assert_non_null(j);	/* every line is one whole JSON object */
			r->len -= nl + 1 - r->buf;
			memmove(r->buf, nl + 1, r->len);
			return j;
		}
		if (r->eof)
			return NULL;
		pump(es);
		n = recv(r->fd, r->buf + r->len, sizeof(r->buf) - r->len, MSG_DONTWAIT);
		if (n == 0)
			r->eof = true;
		else if (n > 0)
			r->len += n;
		else if (i)
			usleep(1000);
	}
	return NULL;
}

static json_t *line(struct evsock *es, struct reader *r)
{
	json_t *j = next_line(es, r, 200);

	assert_non_null(j);
	return j;
}

/* The event number of a line ("/e/I"), or -1. */
static int event_no(json_t *j)
{
	const char *p = json_string_value(json_object_get(j, "path"));
	int i;

	return p && sscanf(p, "/e/%d", &i) == 1 ? i : -1;
}

static void expect_events(struct evsock *es, struct reader *r, const int *want, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		json_t *j = line(es, r);

		assert_int_equal(event_no(j), want[k]);
		json_decref(j);
	}
}

static void expect_nothing(struct evsock *es, struct reader *r)
{
	json_t *j = next_line(es, r, 5);

	assert_null(j);
	assert_false(r->eof);
}

static void expect_eof(struct evsock *es, struct reader *r)
{
	assert_null(next_line(es, r, 200));
	assert_true(r->eof);
}

/* --- the tests -------------------------------------------------------------------------------- */

static void test_socket_file(void **state)
{
	struct fixture *f = *state;
	struct evsock *second;
	struct stat st;

	/* A stale file where the socket goes (a dead daemon's) is replaced. */
	close(open(f->path, O_CREAT | O_WRONLY, 0644));
	open_es(f, NULL);
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	/* Replaced by another server: the first one leaves the new file alone. */
	second = evsock_open(f->path, NULL);
	assert_non_null(second);
	evsock_free(f->es);
	f->es = NULL;
	assert_int_equal(stat(f->path, &st), 0);
	evsock_free(second);
	assert_int_equal(stat(f->path, &st), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_follow_in_order(void **state)
{
	static const int want[] = { 0, 1, 2, 3, 4 };
	struct fixture *f = *state;
	struct evsock *es = open_es(f, NULL);
	struct reader *r = client(f->path, "{\"cmd\":\"follow\",\"cgroup\":null,\"backlog\":0}");

	pump(es);
	assert_int_equal(evsock_watchers(es), 1);
	for (int i = 0; i < 5; i++)
		publish(es, i, 77, 76);
	expect_events(es, r, want, 5);
	expect_nothing(es, r);
	publish(es, 5, 77, 76);	/* live, after the reads too */
	expect_events(es, r, (int[]){ 5 }, 1);
	reader_free(r);
}

static void test_filter_cgroup(void **state)
{
	struct fixture *f = *state;
	struct evsock *es = open_es(f, NULL);
	struct reader *sb = client(f->path, "{\"cmd\":\"follow\",\"cgroup\":76}");
	struct reader *cg = client(f->path, "{\"cmd\":\"follow\",\"cgroup\":90,\"backlog\":0}");
	struct reader *all = client(f->path, "{\"cmd\":\"follow\"}");

	pump(es);
	assert_int_equal(evsock_watchers(es), 3);
	publish(es, 0, 77, 76);		/* below the sandbox 76 */
	publish(es, 1, 90, 88);		/* in cgroup 90, under the sandbox 88 */
	publish(es, 2, 91, 91);
	publish(es, 3, 76, 76);
	expect_events(es, sb, (int[]){ 0, 3 }, 2);
	expect_nothing(es, sb);
	expect_events(es, cg, (int[]){ 1 }, 1);
	expect_nothing(es, cg);
	expect_events(es, all, (int[]){ 0, 1, 2, 3 }, 4);
	reader_free(sb);
	reader_free(cg);
	reader_free(all);
}

static void test_backlog(void **state)
{
	struct fixture *f = *state;
	struct evsock *es = open_es(f, &(struct evsock_opts){ .backlog = 8 });
	struct reader *r;

	for (int i = 0; i < 12; i++)	/* 0..3 fall out of the ring of 8 */
		publish(es, i, i % 2 ? 77 : 78, 76);
	r = client(f->path, "{\"cmd\":\"follow\",\"backlog\":3}");
	expect_events(es, r, (int[]){ 9, 10, 11 }, 3);
	expect_nothing(es, r);
	publish(es, 12, 78, 76);
	expect_events(es, r, (int[]){ 12 }, 1);
	reader_free(r);

	/* recent: the matching lines of the ring, then the server closes. */
	r = client(f->path, "{\"cmd\":\"recent\",\"cgroup\":77,\"backlog\":100}");
	expect_events(es, r, (int[]){ 5, 7, 9, 11 }, 4);
	expect_eof(es, r);
	reader_free(r);
	r = client(f->path, "{\"cmd\":\"recent\",\"cgroup\":78,\"backlog\":2}");
	expect_events(es, r, (int[]){ 10, 12 }, 2);
	expect_eof(es, r);
	reader_free(r);
	assert_int_equal(evsock_watchers(es), 0);
}

/* More backlog than a queue holds: the newest lines that fit, after a gap line for the others. */
static void test_backlog_too_big(void **state)
{
	struct fixture *f = *state;
	struct evsock *es = open_es(f, &(struct evsock_opts){ .out_bytes = 4096 });
	struct reader *r;
	json_t *j;
	int next;

	for (int i = 0; i < 50; i++)	/* ~30 KB */
		publish(es, i, 77, 76);
	r = client(f->path, "{\"cmd\":\"recent\",\"backlog\":40}");
	j = line(es, r);
	assert_string_equal(json_string_value(json_object_get(j, "type")), "gap");
	next = 10 + json_integer_value(json_object_get(j, "dropped"));
	assert_true(next > 10 && next < 50);
	json_decref(j);
	while ((j = next_line(es, r, 200))) {
		assert_int_equal(event_no(j), next);
		next++;
		json_decref(j);
	}
	assert_int_equal(next, 50);
	assert_true(r->eof);
	reader_free(r);
}

static void test_two_watchers(void **state)
{
	struct fixture *f = *state;
	struct evsock *es = open_es(f, NULL);
	struct reader *a = client(f->path, "{\"cmd\":\"follow\"}");
	struct reader *b = client(f->path, "{\"cmd\":\"follow\"}");
	json_t *j;

	pump(es);
	for (int i = 0; i < 200; i++)
		publish(es, i, 77, 76);
	for (int i = 0; i < 200; i++) {
		j = line(es, a);
		assert_int_equal(event_no(j), i);
		json_decref(j);
		j = line(es, b);
		assert_int_equal(event_no(j), i);
		json_decref(j);
	}
	expect_nothing(es, a);
	expect_nothing(es, b);
	reader_free(a);
	reader_free(b);
}

/* Read what has come, checking the order: the next event number expected. */
static int drain(struct evsock *es, struct reader *r, int next)
{
	json_t *j;

	while ((j = next_line(es, r, 2))) {
		assert_int_equal(event_no(j), next);
		next++;
		json_decref(j);
	}
	return next;
}

/*
 * A burst published before the server's next poll (one read of the ring
 * buffer) is more than the 4 KiB queue: the socket's buffer takes the rest,
 * and a watcher that reads loses nothing.
 */
static void test_burst(void **state)
{
	struct fixture *f = *state;
	struct evsock *es = open_es(f, &(struct evsock_opts){ .out_bytes = 4096 });
	struct reader *r = client(f->path, "{\"cmd\":\"follow\"}");

	pump(es);
	for (int i = 0; i < 200; i++)	/* ~80 KB, no pump in between */
		publish(es, i, 77, 76);
	assert_int_equal(drain(es, r, 0), 200);
	reader_free(r);
}

/* The watcher that never read gets what fitted, a gap line with the exact count, and what came after. */
static void check_gaps(struct evsock *es, struct reader *r, int total, unsigned long long *gaps)
{
	int next = 0;
	json_t *j;

	*gaps = 0;
	while (next < total && (j = next_line(es, r, 200))) {
		const char *type = json_string_value(json_object_get(j, "type"));

		if (!strcmp(type, "gap")) {
			long long n = json_integer_value(json_object_get(j, "dropped"));

			assert_true(n > 0);
			*gaps += n;
			next += n;
		} else {
			assert_int_equal(event_no(j), next);	/* no line lost without a gap line */
			next++;
		}
		json_decref(j);
	}
	assert_int_equal(next, total);
}

static void test_slow_watcher(void **state)
{
	struct fixture *f = *state;
	struct evsock *es = open_es(f, &(struct evsock_opts){ .out_bytes = 4096 });
	struct reader *fast = client(f->path, "{\"cmd\":\"follow\"}");
	struct reader *slow = calloc(1, sizeof(*slow));
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	static const char req[] = "{\"cmd\":\"follow\"}\n";
	unsigned long long gaps, fast_gaps;
	int small = 4096, total = 2000, fast_seen = 0;
	json_t *st, *w;

	strcpy(a.sun_path, f->path);
	slow->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(setsockopt(slow->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	assert_int_equal(connect(slow->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(send(slow->fd, req, sizeof(req) - 1, 0), sizeof(req) - 1);
	pump(es);
	assert_int_equal(evsock_watchers(es), 2);
	/* ~1 MB of lines: far more than the kernel's buffer and the 4 KiB queue hold. */
	for (int i = 0; i < total; i++) {
		publish(es, i, 77, 76);
		pump(es);
		if (i % 4 == 3)		/* the fast one keeps up */
			fast_seen = drain(es, fast, fast_seen);
	}
	fast_seen = drain(es, fast, fast_seen);
	assert_int_equal(fast_seen, total);
	st = evsock_status(es);
	assert_true(json_integer_value(json_object_get(st, "lines_dropped")) > 0);
	json_decref(st);

	check_gaps(es, slow, total, &gaps);
	assert_true(gaps > 0);
	expect_nothing(es, slow);
	/* The counts the status shows: the slow one's drops, none for the other. */
	st = evsock_status(es);
	assert_int_equal(json_integer_value(json_object_get(st, "lines_dropped")), gaps);
	fast_gaps = 0;
	for (size_t i = 0; i < 2; i++) {
		w = json_array_get(json_object_get(st, "watchers"), i);
		if (json_integer_value(json_object_get(w, "dropped")) != (json_int_t)gaps)
			fast_gaps += json_integer_value(json_object_get(w, "dropped"));
		else
			assert_int_equal(json_integer_value(json_object_get(w, "lines")), total - gaps);
	}
	assert_int_equal(fast_gaps, 0);
	json_decref(st);
	reader_free(fast);
	reader_free(slow);
}

static json_t *status_extra(void *ctx)
{
	return json_pack("{s:s}", "version", (const char *)ctx);
}

/* evsock_query() in a child; the server answers in the parent. */
static json_t *query_in_child(struct evsock *es, const char *path, const char *req_text, int *child_err)
{
	int pipefd[2], status;
	char buf[65536] = "";
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		json_t *req = json_loads(req_text, 0, NULL), *ans = NULL;
		int err = evsock_query(path, req, 2000, &ans);
		char *s = ans ? json_dumps(ans, JSON_COMPACT) : NULL;

		if (s && write(pipefd[1], s, strlen(s)) < 0)
			err = -errno;
		_exit(err ? -err : 0);
	}
	close(pipefd[1]);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		pump(es);
		usleep(1000);
	}
	while ((n = read(pipefd[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(pipefd[0]);
	*child_err = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return len ? json_loads(buf, 0, NULL) : NULL;
}

static void test_status(void **state)
{
	struct fixture *f = *state;
	struct evsock *es = open_es(f, &(struct evsock_opts){ .status = status_extra, .status_ctx = "9.9" });
	struct reader *r = client(f->path, "{\"cmd\":\"follow\",\"cgroup\":76}");
	json_t *st, *w;
	int err;

	pump(es);
	for (int i = 0; i < 3; i++)
		publish(es, i, 77, i == 1 ? 88 : 76);
	st = query_in_child(es, f->path, "{\"cmd\":\"status\"}", &err);
	assert_int_equal(err, 0);
	assert_non_null(st);
	assert_int_equal(json_integer_value(json_object_get(st, "pid")), getpid());
	assert_true(json_is_integer(json_object_get(st, "uptime")));
	assert_int_equal(json_integer_value(json_object_get(st, "events_published")), 3);
	assert_int_equal(json_integer_value(json_object_get(st, "backlog_lines")), 3);
	assert_int_equal(json_integer_value(json_object_get(st, "watchers_connected")), 1);
	assert_int_equal(json_integer_value(json_object_get(st, "watchers_max")), EVSOCK_MAX_WATCHERS);
	assert_int_equal(json_integer_value(json_object_get(st, "lines_dropped")), 0);
	assert_string_equal(json_string_value(json_object_get(st, "version")), "9.9");
	w = json_array_get(json_object_get(st, "watchers"), 0);
	assert_int_equal(json_integer_value(json_object_get(w, "pid")), getpid());
	assert_int_equal(json_integer_value(json_object_get(w, "uid")), geteuid());
	assert_int_equal(json_integer_value(json_object_get(w, "cgroup")), 76);
	assert_int_equal(json_integer_value(json_object_get(w, "lines")), 2);
	assert_int_equal(json_integer_value(json_object_get(w, "dropped")), 0);
	json_decref(st);
	reader_free(r);
}

/* The client side: no daemon, and a daemon that does not answer in time. */
static void test_query_errors(void **state)
{
	struct fixture *f = *state;
	json_t *req = json_pack("{s:s}", "cmd", "status"), *ans = (json_t *)1;
	struct timespec a, b;

	assert_int_equal(evsock_query(f->path, req, 500, &ans), -ENOENT);
	assert_null(ans);
	open_es(f, NULL);	/* listening, never pumped: nobody answers */
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(evsock_query(f->path, req, 300, &ans), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 1000);
	json_decref(req);
}

static void expect_error(struct evsock *es, const char *path, const char *raw, size_t len, const char *says)
{
	struct reader *r = raw_client(path, raw, len);
	json_t *j = line(es, r);
	const char *e = json_string_value(json_object_get(j, "error"));

	assert_non_null(e);
	if (!strstr(e, says))
		fail_msg("request '%.60s': error '%s' does not say '%s'", raw, e, says);
	json_decref(j);
	expect_eof(es, r);
	reader_free(r);
}

static void test_bad_request(void **state)
{
	static const struct { const char *req, *says; } bad[] = {
		{ "not json\n", "not JSON" },
		{ "{\"cmd\":\"follow\"} trailing\n", "not JSON" },
		{ "[\"follow\"]\n", "not a JSON object" },
		{ "{\"backlog\":1}\n", "no \"cmd\"" },
		{ "{\"cmd\":\"tail\"}\n", "unknown cmd 'tail'" },
		{ "{\"cmd\":\"follow\",\"backlog\":-1}\n", "\"backlog\" must be" },
		{ "{\"cmd\":\"follow\",\"backlog\":\"10\"}\n", "\"backlog\" must be" },
		{ "{\"cmd\":\"follow\",\"cgroup\":\"/sys/fs/cgroup/x\"}\n", "\"cgroup\" must be" },
		{ "{\"cmd\":\"follow\",\"cgroup\":0}\n", "\"cgroup\" must be" },
		{ "{\"cmd\":\"follow\",\"since\":5}\n", "unknown key 'since'" },
		{ "{\"cmd\":\"status\",\"cgroup\":5}\n", "unknown key 'cgroup' in a status request" },
		{ "{\"cmd\":\"follow\",\"cmd\":\"status\"}\n", "not JSON" },
	};
	struct fixture *f = *state;
	struct evsock *es = open_es(f, NULL);
	char *big = malloc(EVSOCK_REQUEST_MAX + 100);

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_error(es, f->path, bad[i].req, strlen(bad[i].req), bad[i].says);
	memset(big, ' ', EVSOCK_REQUEST_MAX + 100);
	expect_error(es, f->path, big, EVSOCK_REQUEST_MAX + 100, "longer than 4096");
	free(big);
	assert_int_equal(evsock_watchers(es), 0);
	/* The request may end at a half-close instead of a newline. */
	{
		struct reader *r = raw_client(f->path, "{\"cmd\":\"status\"}", 16);
		json_t *j;

		shutdown(r->fd, SHUT_WR);
		j = line(es, r);
		assert_true(json_is_integer(json_object_get(j, "pid")));
		json_decref(j);
		expect_eof(es, r);
		reader_free(r);
	}
}

static void test_hangup_removed(void **state)
{
	struct fixture *f = *state;
	struct evsock *es = open_es(f, &(struct evsock_opts){ .max_watchers = 2 });
	struct reader *a = client(f->path, "{\"cmd\":\"follow\"}");
	struct reader *b = client(f->path, "{\"cmd\":\"follow\"}");
	struct reader *c = client(f->path, "{\"cmd\":\"follow\"}");
	json_t *j;

	pump(es);
	assert_int_equal(evsock_watchers(es), 2);
	j = line(es, c);	/* the third is refused */
	assert_string_equal(json_string_value(json_object_get(j, "error")), "too many watchers (2)");
	json_decref(j);
	expect_eof(es, c);
	reader_free(c);

	publish(es, 0, 77, 76);
	pump(es);
	close(a->fd);		/* hangs up with a line unread */
	a->fd = -1;
	pump(es);
	assert_int_equal(evsock_watchers(es), 1);
	/* A watcher that only shut its writing side stays. */
	shutdown(b->fd, SHUT_WR);
	publish(es, 1, 77, 76);
	expect_events(es, b, (int[]){ 0, 1 }, 2);
	assert_int_equal(evsock_watchers(es), 1);
	c = client(f->path, "{\"cmd\":\"follow\"}");	/* the slot is free again */
	pump(es);
	assert_int_equal(evsock_watchers(es), 2);
	publish(es, 2, 77, 76);
	expect_events(es, c, (int[]){ 2 }, 1);
	expect_events(es, b, (int[]){ 2 }, 1);
	reader_free(a);
	reader_free(b);
	reader_free(c);
}

/* What the owner's resolver callback was asked, and answers. */
struct resolver_calls {
	int calls;
	bool start;
	__u64 cgid;
};

static json_t *resolver_cb(void *ctx, bool start, __u64 cgid)
{
	struct resolver_calls *rc = ctx;

	rc->calls++;
	rc->start = start;
	rc->cgid = cgid;
	if (cgid == 13)
		return json_pack("{s:s}", "error", "no room");
	return start ? json_pack("{s:i, s:i}", "port4", 5353, "port6", 5354) : json_pack("{s:b}", "stopped", 1);
}

/* "resolver" and "resolver-stop" reach the owner with their cgroup; its answer is the reply. */
static void test_resolver_requests(void **state)
{
	struct fixture *f = *state;
	struct resolver_calls rc = {};
	struct evsock *es = open_es(f, &(struct evsock_opts){ .resolver = resolver_cb, .resolver_ctx = &rc });
	json_t *ans;
	int err;

	ans = query_in_child(es, f->path, "{\"cmd\":\"resolver\",\"cgroup\":4242}", &err);
	assert_int_equal(err, 0);
	assert_int_equal(rc.calls, 1);
	assert_true(rc.start);
	assert_int_equal(rc.cgid, 4242);
	assert_int_equal(json_integer_value(json_object_get(ans, "port4")), 5353);
	assert_int_equal(json_integer_value(json_object_get(ans, "port6")), 5354);
	json_decref(ans);

	ans = query_in_child(es, f->path, "{\"cgroup\":4243,\"cmd\":\"resolver-stop\"}", &err);
	assert_int_equal(err, 0);
	assert_int_equal(rc.calls, 2);
	assert_false(rc.start);
	assert_int_equal(rc.cgid, 4243);
	assert_true(json_is_true(json_object_get(ans, "stopped")));
	json_decref(ans);

	/* A refusal is the owner's error, as it said it. */
	ans = query_in_child(es, f->path, "{\"cmd\":\"resolver\",\"cgroup\":13}", &err);
	assert_int_equal(err, 0);
	assert_string_equal(json_string_value(json_object_get(ans, "error")), "no room");
	json_decref(ans);
	assert_int_equal(evsock_watchers(es), 0);
}

/* The strict parser: a resolver request names one cgroup and nothing else; no callback, no resolvers. */
static void test_resolver_bad_requests(void **state)
{
	static const struct { const char *req, *says; } bad[] = {
		{ "{\"cmd\":\"resolver\"}\n", "a resolver request needs \"cgroup\"" },
		{ "{\"cmd\":\"resolver-stop\"}\n", "a resolver-stop request needs \"cgroup\"" },
		{ "{\"cmd\":\"resolver\",\"cgroup\":null}\n", "\"cgroup\" must be a cgroup id (a positive integer)" },
		{ "{\"cmd\":\"resolver\",\"cgroup\":0}\n", "\"cgroup\" must be" },
		{ "{\"cmd\":\"resolver\",\"cgroup\":-4}\n", "\"cgroup\" must be" },
		{ "{\"cmd\":\"resolver\",\"cgroup\":\"/sys/fs/cgroup/x\"}\n", "\"cgroup\" must be" },
		{ "{\"cmd\":\"resolver\",\"cgroup\":5,\"backlog\":1}\n",
		  "unknown key 'backlog' in a resolver request" },
		{ "{\"cmd\":\"resolver-stop\",\"cgroup\":5,\"port4\":53}\n",
		  "unknown key 'port4' in a resolver-stop request" },
		{ "{\"cmd\":\"resolver\",\"cgroup\":5,\"cgroup\":6}\n", "not JSON" },
		{ "{\"cmd\":\"Resolver\",\"cgroup\":5}\n", "unknown cmd 'Resolver'" },
	};
	struct fixture *f = *state;
	struct resolver_calls rc = {};
	struct evsock *es = open_es(f, &(struct evsock_opts){ .resolver = resolver_cb, .resolver_ctx = &rc });

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_error(es, f->path, bad[i].req, strlen(bad[i].req), bad[i].says);
	assert_int_equal(rc.calls, 0);
	evsock_free(es);
	f->es = NULL;

	/* A server without the callback refuses them, whatever the cgroup. */
	es = open_es(f, NULL);
	for (size_t i = 0; i < 2; i++) {
		const char *req = i ? "{\"cmd\":\"resolver-stop\",\"cgroup\":5}\n" :
				      "{\"cmd\":\"resolver\",\"cgroup\":5}\n";

		expect_error(es, f->path, req, strlen(req), "runs no resolvers");
	}
}

static json_t *watch_cb(void *ctx, __u64 cgid)
{
	__u64 *asked = ctx;

	*asked = cgid;
	return json_pack("{s:b}", "watching", cgid != 13);
}

/* "watch" reaches the owner with its cgroup; it needs one; a server without the callback refuses it. */
static void test_watch_requests(void **state)
{
	struct fixture *f = *state;
	__u64 asked = 0;
	struct evsock *es = open_es(f, &(struct evsock_opts){ .watch = watch_cb, .watch_ctx = &asked });
	json_t *ans;
	int err;

	ans = query_in_child(es, f->path, "{\"cmd\":\"watch\",\"cgroup\":4242}", &err);
	assert_int_equal(err, 0);
	assert_int_equal(asked, 4242);
	assert_true(json_is_true(json_object_get(ans, "watching")));
	json_decref(ans);
	expect_error(es, f->path, "{\"cmd\":\"watch\"}\n", 16, "a watch request needs \"cgroup\"");
	expect_error(es, f->path, "{\"cmd\":\"watch\",\"cgroup\":1,\"x\":1}\n", 33,
		     "unknown key 'x' in a watch request");
	evsock_free(es);
	f->es = NULL;
	es = open_es(f, NULL);
	expect_error(es, f->path, "{\"cmd\":\"watch\",\"cgroup\":5}\n", 27, "watches no cgroups");
}

/* Only root: another uid that reaches the socket (here chmod'ed open) is refused. */
static void test_peer_uid(void **state)
{
	struct fixture *f = *state;
	int status;
	pid_t pid;

	if (geteuid() != 0)
		skip();
	open_es(f, NULL);
	assert_int_equal(chmod(f->dir, 0755), 0);
	assert_int_equal(chmod(f->path, 0666), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		json_t *req = json_pack("{s:s}", "cmd", "status"), *ans = NULL;
		const char *e;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		if (evsock_query(f->path, req, 2000, &ans))
			_exit(3);
		e = json_string_value(json_object_get(ans, "error"));
		_exit(e && strstr(e, "only root") ? 0 : 4);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		pump(f->es);
		usleep(1000);
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(evsock_watchers(f->es), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_socket_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_follow_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filter_cgroup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backlog, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backlog_too_big, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_watchers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_burst, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slow_watcher, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hangup_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_peer_uid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolver_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolver_bad_requests, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("evsock", tests, NULL, NULL);
}
