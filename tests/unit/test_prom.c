// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Prometheus sink: the exposition format, bounded labels, and its HTTP server over loopback. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "sinktest.h"

static struct sink *prom(const char *listen, size_t max_sandboxes, size_t max_conns, int timeout_ms)
{
	struct sink_prom_opts o = { .listen = listen, .max_sandboxes = max_sandboxes,
				    .max_conns = max_conns, .timeout_ms = timeout_ms, .version = "1.2.3" };
	struct sink *s = sink_prom_new(&o);

	assert_non_null(s);
	return s;
}

/*
 * Check the text format the way a scraper reads it: every sample belongs
 * to a family whose HELP and TYPE came first, each family once, and each
 * sample line is NAME[{LABELS}] VALUE. Returns the number of samples.
 */
static size_t check_format(const char *text)
{
	char families[64][64];
	size_t nf = 0, samples = 0;
	const char *line = text;

	while (*line) {
		const char *end = strchr(line, '\n');
		char name[64], tname[64], type[16], rest[512];

		assert_non_null(end);				/* every line ends with \n */
		snprintf(rest, sizeof(rest), "%.*s", (int)(end - line), line);
		if (sscanf(rest, "# HELP %63s", name) == 1) {
			for (size_t i = 0; i < nf; i++)
				assert_string_not_equal(families[i], name);	/* each family once */
			snprintf(families[nf++], sizeof(families[0]), "%s", name);
			line = end + 1;
			end = strchr(line, '\n');
			snprintf(rest, sizeof(rest), "%.*s", (int)(end - line), line);
			assert_int_equal(sscanf(rest, "# TYPE %63s %15s", tname, type), 2);
			assert_string_equal(tname, name);		/* TYPE right after HELP */
			assert_true(!strcmp(type, "counter") || !strcmp(type, "gauge"));
		} else {
			size_t n = strcspn(rest, "{ ");
			char *value = strrchr(rest, ' ');
			char *num_end;

			assert_true(nf > 0);
			assert_int_equal(strncmp(rest, families[nf - 1], n), 0);	/* under its HELP */
			assert_int_equal(strlen(families[nf - 1]), n);
			assert_non_null(value);
			strtod(value + 1, &num_end);
			assert_true(*num_end == '\0' && num_end > value + 1);
			samples++;
		}
		line = end + 1;
	}
	return samples;
}

/* The value of one exact sample line "NAME{…} VALUE", or -1. */
static double sample(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, series, n) && l[n] == ' ')
			return strtod(l + n + 1, NULL);
	return -1;
}

static void test_render(void **state)
{
	struct sink_set *set = sink_set_new(&(struct sink_ident){ .host = "h", .boot_id = "b", .version = "1.2.3" });
	static struct sink_gauges g = { .events_dropped = 7, .policies = 3, .grants = 12, .ringbuf_fill_ratio = 0.25,
					.violations = 900, .coalesced = 800, .throttled = 50,
					.lost_cpu = { 3, 4 }, .ncpu = 2,
					.dns = { { .cgroup_id = 41, .queries = 20, .forwarded = 14, .refused_names = 3,
						   .refused_types = 2, .rate_limited = 1, .allowed_names = 9 } },
					.nr_dns = 1 };
	struct sink_lifecycle oom = { .event = "oom_kill", .detail = "x" }, odd = { .event = "weird" };
	struct sink_ctx a = { .sandbox = "a" }, b = { .sandbox = "b" };
	struct sink *s = prom(NULL, 0, 0, 0);
	struct sbx_event ev;
	char *text, series[96];

	(void)state;
	assert_int_equal(sink_set_add(set, s), 0);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/x");
	for (int i = 0; i < 3; i++)
		sink_set_emit(set, &ev, &a);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_AUDIT, "/x");
	sink_set_emit(set, &ev, &b);
	fill_net(&ev, SBX_OP_CONNECT, SBX_VERDICT_DENY, "10.0.0.1", 443, IPPROTO_TCP);
	sink_set_emit(set, &ev, &b);
	sink_set_lifecycle(set, &oom, "a");
	sink_set_lifecycle(set, &odd, "a");
	sink_set_gauges(set, &g);
	text = sink_prom_render(s, NULL);
	assert_non_null(text);

	/* 2 per violation op, plus build info, sandboxes a, b and _other, 9 lifecycle, 9 single ones, 2 CPUs,
	 * one resolver's queries, forwarded, allowed names and its 3 refusal reasons */
	assert_int_equal(check_format(text), 2 * (SBX_OP_THROTTLED - 1) + 1 + 3 + 9 + 9 + 2 + 6);
	assert_non_null(strstr(text, "# TYPE sbx_violations_total counter\n"));
	assert_non_null(strstr(text, "# TYPE sbx_policies gauge\n"));
	snprintf(series, sizeof(series), "sbx_build_info{version=\"1.2.3\",abi=\"%d\"}", SBX_ABI_VERSION);
	assert_true(sample(text, series) == 1);
	assert_true(sample(text, "sbx_violations_total{op=\"read\",verdict=\"denied\"}") == 3);
	assert_true(sample(text, "sbx_violations_total{op=\"read\",verdict=\"audit\"}") == 1);
	assert_true(sample(text, "sbx_violations_total{op=\"connect\",verdict=\"denied\"}") == 1);
	assert_true(sample(text, "sbx_violations_total{op=\"dns\",verdict=\"audit\"}") == 0);	/* shown at 0 */
	assert_true(sample(text, "sbx_sandbox_violations_total{sandbox=\"a\"}") == 3);
	assert_true(sample(text, "sbx_sandbox_violations_total{sandbox=\"b\"}") == 2);
	assert_true(sample(text, "sbx_sandbox_violations_total{sandbox=\"_other\"}") == 0);
	assert_true(sample(text, "sbx_lifecycle_events_total{event=\"oom_kill\"}") == 1);
	assert_true(sample(text, "sbx_lifecycle_events_total{event=\"other\"}") == 1);
	assert_true(sample(text, "sbx_events_dropped_total") == 7);
	assert_true(sample(text, "sbx_ringbuf_drops_total{cpu=\"0\"}") == 3);
	assert_true(sample(text, "sbx_ringbuf_drops_total{cpu=\"1\"}") == 4);
	assert_true(sample(text, "sbx_kernel_violations_total") == 900);
	assert_true(sample(text, "sbx_events_coalesced_total") == 800);
	assert_true(sample(text, "sbx_events_throttled_total") == 50);
	assert_true(sample(text, "sbx_sink_records_dropped_total") == 0);
	assert_true(sample(text, "sbx_policies") == 3);
	assert_true(sample(text, "sbx_grants") == 12);
	assert_true(sample(text, "sbx_ringbuf_fill_ratio") == 0.25);
	assert_true(sample(text, "sbx_dns_queries_total{cgroup_id=\"41\"}") == 20);
	assert_true(sample(text, "sbx_dns_forwarded_total{cgroup_id=\"41\"}") == 14);
	assert_true(sample(text, "sbx_dns_allowed_names{cgroup_id=\"41\"}") == 9);
	assert_true(sample(text, "sbx_dns_refused_total{cgroup_id=\"41\",reason=\"name\"}") == 3);
	assert_true(sample(text, "sbx_dns_refused_total{cgroup_id=\"41\",reason=\"type\"}") == 2);
	assert_true(sample(text, "sbx_dns_refused_total{cgroup_id=\"41\",reason=\"rate\"}") == 1);
	free(text);
	sink_set_free(set);
}

/* Past max_sandboxes names, new sandboxes count as "_other"; nothing is lost. */
static void test_cardinality(void **state)
{
	struct sink *s = prom(NULL, 3, 0, 0);
	struct sbx_event ev;
	char name[16], *text;
	double sum = 0;

	(void)state;
	fill_event(&ev, SBX_OP_WRITE, SBX_VERDICT_DENY, "/x");
	for (int i = 0; i < 10; i++) {
		struct sink_ctx c = { .sandbox = name };

		snprintf(name, sizeof(name), "s%d", i);
		for (int k = 0; k <= i; k++)
			s->ops->emit(s, &ev, &c);
	}
	text = sink_prom_render(s, NULL);
	check_format(text);
	for (int i = 0; i < 10; i++) {
		char series[96];

		snprintf(series, sizeof(series), "sbx_sandbox_violations_total{sandbox=\"s%d\"}", i);
		assert_true(i < 3 ? sample(text, series) == i + 1 : sample(text, series) == -1);
		sum += i < 3 ? i + 1 : 0;
	}
	assert_true(sample(text, "sbx_sandbox_violations_total{sandbox=\"_other\"}") == 55 - sum);
	free(text);
	s->ops->close(s);
}

static void test_label_escaping(void **state)
{
	struct sink *s = prom(NULL, 0, 0, 0);
	struct sink_ctx c = { .sandbox = "we\"ird\\na\nme\xff" };
	struct sbx_event ev;
	char *text;

	(void)state;
	fill_event(&ev, SBX_OP_WRITE, SBX_VERDICT_DENY, "/x");
	s->ops->emit(s, &ev, &c);
	text = sink_prom_render(s, NULL);
	check_format(text);
	assert_true(sample(text, "sbx_sandbox_violations_total{sandbox=\"we\\\"ird\\\\na\\nme\xef\xbf\xbd\"}") == 1);
	free(text);
	s->ops->close(s);
}

/* --- HTTP ---------------------------------------------------------------------------------- */

static int client(int family, int port)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		a->sin6_addr = in6addr_loopback;
		len = sizeof(*a);
	}
	assert_int_equal(connect(fd, (struct sockaddr *)&ss, len), 0);	/* the backlog takes it */
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* Run the server's poll loop until every client in @fds has its whole answer (EOF) or @ms pass. */
static void serve(struct sink *s, int *fds, char (*out)[65536], size_t *lens, size_t n, int ms)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct pollfd pfd[16];
		int timeout = -1;
		size_t k = s->ops->pollfds(s, pfd, 16, &timeout), open = 0;

		poll(pfd, k, timeout < 0 || timeout > 10 ? 10 : timeout);
		s->ops->handle(s, pfd, k);
		for (size_t i = 0; i < n; i++) {
			ssize_t r;

			if (fds[i] < 0)
				continue;
			r = recv(fds[i], out[i] + lens[i], sizeof(out[i]) - 1 - lens[i], 0);
			if (r > 0)
				lens[i] += r;
			if (r == 0 || (r < 0 && errno != EAGAIN)) {
				out[i][lens[i]] = '\0';
				close(fds[i]);
				fds[i] = -1;
				continue;
			}
			open++;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!open || (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 > ms)
			return;
	}
}

/* One request, its whole answer. */
static char *get(struct sink *s, int family, const char *request)
{
	static char out[1][65536];
	size_t len = 0;
	int fd = client(family, sink_prom_port(s));

	assert_int_equal(send(fd, request, strlen(request), 0), (ssize_t)strlen(request));
	serve(s, &fd, out, &len, 1, 3000);
	assert_int_equal(fd, -1);		/* the server closed: Connection: close */
	return out[0];
}

static void test_http(void **state)
{
	struct sink *s = prom("127.0.0.1:0", 0, 0, 0);
	struct sink_ctx c = { .sandbox = "agent" };
	char *resp, *body, *text;
	struct sbx_event ev;
	long clen;

	(void)state;
	assert_true(sink_prom_port(s) > 0);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/x");
	s->ops->emit(s, &ev, &c);
	resp = get(s, AF_INET, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n");
	assert_int_equal(strncmp(resp, "HTTP/1.0 200 OK\r\n", 17), 0);
	assert_non_null(strstr(resp, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	body = strstr(resp, "\r\n\r\n") + 4;
	clen = strtol(strstr(resp, "Content-Length: ") + 16, NULL, 10);
	assert_int_equal(clen, strlen(body));
	text = sink_prom_render(s, NULL);
	assert_string_equal(body, text);
	assert_true(sample(body, "sbx_violations_total{op=\"read\",verdict=\"denied\"}") == 1);
	free(text);

	resp = get(s, AF_INET, "GET /metrics?name[]=x HTTP/1.0\n\n");	/* bare \n; a query string */
	assert_int_equal(strncmp(resp, "HTTP/1.0 200 OK\r\n", 17), 0);
	resp = get(s, AF_INET, "HEAD /metrics HTTP/1.1\r\n\r\n");
	assert_int_equal(strncmp(resp, "HTTP/1.0 200 OK\r\n", 17), 0);
	assert_string_equal(strstr(resp, "\r\n\r\n"), "\r\n\r\n");		/* no body */
	assert_true(strtol(strstr(resp, "Content-Length: ") + 16, NULL, 10) > 100);
	resp = get(s, AF_INET, "GET / HTTP/1.1\r\n\r\n");
	assert_int_equal(strncmp(resp, "HTTP/1.0 404 Not Found\r\n", 24), 0);
	resp = get(s, AF_INET, "GET /metricsx HTTP/1.1\r\n\r\n");
	assert_int_equal(strncmp(resp, "HTTP/1.0 404 ", 13), 0);
	resp = get(s, AF_INET, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
	assert_int_equal(strncmp(resp, "HTTP/1.0 405 ", 13), 0);
	assert_non_null(strstr(resp, "\r\nAllow: GET, HEAD\r\n"));
	resp = get(s, AF_INET, "hello\r\n\r\n");
	assert_int_equal(strncmp(resp, "HTTP/1.0 400 ", 13), 0);
	s->ops->close(s);
}

/* A request head that never ends is answered 431, not buffered forever. */
static void test_http_too_long(void **state)
{
	struct sink *s = prom("127.0.0.1:0", 0, 0, 0);
	static char req[8192];
	char *resp;

	(void)state;
	memset(req, 'a', sizeof(req) - 1);
	memcpy(req, "GET /", 5);
	resp = get(s, AF_INET, req);
	assert_int_equal(strncmp(resp, "HTTP/1.0 431 ", 13), 0);
	s->ops->close(s);
}

/*
 * max_conns clients that say nothing hold every slot: a third waits in the
 * backlog, unserved, until their time is up; then it gets its answer.
 */
static void test_http_limits(void **state)
{
	static char out[3][65536];
	struct sink *s = prom("127.0.0.1:0", 0, 2, 400);
	int fds[3], port = sink_prom_port(s);
	size_t lens[3] = { 0 };
	struct timespec a, b;
	long ms;

	(void)state;
	fds[0] = client(AF_INET, port);
	fds[1] = client(AF_INET, port);
	serve(s, fds, out, lens, 2, 100);		/* both accepted, both silent */
	fds[2] = client(AF_INET, port);
	send(fds[2], "GET /metrics HTTP/1.0\r\n\r\n", 25, 0);
	{	/* slots full: the listening socket is not polled (a waiting client would spin the loop) */
		struct pollfd pfd[8];
		int timeout = -1;

		assert_int_equal(s->ops->pollfds(s, pfd, 8, &timeout), 2);
		assert_true(timeout >= 0 && timeout <= 400);	/* woken for the deadlines */
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	serve(s, fds + 2, out + 2, lens + 2, 1, 150);
	assert_int_equal(lens[2], 0);			/* no free slot yet */
	serve(s, fds, out, lens, 3, 3000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	assert_int_equal(lens[0], 0);			/* the silent ones were closed, unanswered */
	assert_int_equal(lens[1], 0);
	assert_int_equal(fds[0], -1);
	assert_int_equal(strncmp(out[2], "HTTP/1.0 200 OK", 15), 0);
	assert_true(ms >= 150 && ms < 2000);
	s->ops->close(s);
}

static void test_http_ipv6(void **state)
{
	struct sink_prom_opts o = { .listen = "[::1]:0" };
	struct sink *s = sink_prom_new(&o);
	char *resp;

	(void)state;
	if (!s)
		skip();				/* no IPv6 loopback here */
	resp = get(s, AF_INET6, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_int_equal(strncmp(resp, "HTTP/1.0 200 OK\r\n", 17), 0);
	s->ops->close(s);
}

static void test_listen_errors(void **state)
{
	static const char *const bad[] = { "127.0.0.1", "localhost:9464", "127.0.0.1:x", "[::1", ":9464",
					   "127.0.0.1:70000" };
	struct sink_prom_opts o = { 0 };
	struct sink *s = prom("127.0.0.1:0", 0, 0, 0), *again;
	char busy[32];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.listen = bad[i];
		errno = 0;
		assert_null(sink_prom_new(&o));
		assert_int_equal(errno, EINVAL);
	}
	snprintf(busy, sizeof(busy), "127.0.0.1:%d", sink_prom_port(s));
	o.listen = busy;
	again = sink_prom_new(&o);
	assert_null(again);
	assert_int_equal(errno, EADDRINUSE);
	s->ops->close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_cardinality),
		cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_http_too_long),
		cmocka_unit_test(test_http_limits),
		cmocka_unit_test(test_http_ipv6),
		cmocka_unit_test(test_listen_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
