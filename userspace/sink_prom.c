// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sink_prom.c — counters in memory, shown in Prometheus' text exposition
 * format 0.0.4 by a small HTTP/1.0 server (GET /metrics).
 *
 * Label values are bounded so that a sandbox-happy host cannot blow up the
 * scraper: op and verdict come from fixed lists (every pair is shown, zero
 * included, so rate() works from the first scrape), lifecycle events from
 * a fixed list plus "other", and sandbox names up to max_sandboxes, after
 * which every new name counts as sandbox="_other".
 *
 * The server is hand-written rather than libmicrohttpd: it answers one
 * fixed request, and a library would be a dependency (and its own threads)
 * in a static binary for ~150 lines. It runs in the caller's poll loop:
 * non-blocking sockets, at most max_conns connections at once (the listening
 * socket is not polled while they are all busy), and each connection has
 * timeout_ms for the whole exchange, so a slow or stuck client costs a slot
 * for a few seconds and nothing else.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "events.h"
#include "sinks.h"
#include "util.h"

#define REQUEST_MAX	4096

static const char *const lifecycle_names[] = {
	"oom_kill", "pids_max", "timeout", "killed", "frozen", "thawed", "throttled", "start", "other",
};
#define NR_LIFECYCLE	(sizeof(lifecycle_names) / sizeof(lifecycle_names[0]))

struct sandbox_count {
	char *name;
	unsigned long long n;
};

struct http_conn {
	int fd;			/* -1: slot free */
	long long deadline;	/* CLOCK_MONOTONIC ms */
	char req[REQUEST_MAX];
	size_t rlen;
	char *resp;		/* NULL while the request is being read */
	size_t resp_len, resp_off;
};

struct prom {
	struct sink base;
	char *version;
	unsigned long long violations[SBX_OP__MAX][2];	/* [op][0 denied, 1 audit] */
	unsigned long long grant_uses;			/* operations a live grant allowed */
	struct sandbox_count *sandboxes;
	size_t nr_sandboxes, max_sandboxes;
	unsigned long long other_sandboxes;
	unsigned long long lifecycle[NR_LIFECYCLE];
	struct sink_gauges g;
	int listen_fd, port;
	struct http_conn *conns;
	size_t max_conns;
	int timeout_ms;
};

static struct prom *to_prom(struct sink *s)
{
	return (struct prom *)s;
}

/* --- counting ------------------------------------------------------------------------- */

static int count_sandbox(struct prom *p, const char *name)
{
	struct sandbox_count *n;

	name = name ?: "_unknown";
	for (size_t i = 0; i < p->nr_sandboxes; i++) {
		if (!strcmp(p->sandboxes[i].name, name)) {
			p->sandboxes[i].n++;
			return 0;
		}
	}
	if (p->nr_sandboxes == p->max_sandboxes) {
		p->other_sandboxes++;
		return 0;
	}
	n = realloc(p->sandboxes, (p->nr_sandboxes + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->sandboxes = n;
	n[p->nr_sandboxes].name = strdup(name);
	if (!n[p->nr_sandboxes].name)
		return -ENOMEM;
	n[p->nr_sandboxes++].n = 1;
	return 0;
}

static int prom_emit(struct sink *s, const struct sbx_event *ev, const struct sink_ctx *ctx)
{
	struct prom *p = to_prom(s);

	if (ev->verdict == SBX_VERDICT_GRANTED)
		p->grant_uses += event_repeat(ev);	/* allowed: not a violation */
	else if (ev->op < SBX_OP__MAX)
		p->violations[ev->op][ev->verdict == SBX_VERDICT_AUDIT] += event_repeat(ev);
	s->written++;
	return count_sandbox(p, ctx->sandbox);
}

static int prom_lifecycle(struct sink *s, const struct sink_lifecycle *lc, const struct sink_ctx *ctx)
{
	struct prom *p = to_prom(s);
	size_t i;

	(void)ctx;
	for (i = 0; i < NR_LIFECYCLE - 1; i++)
		if (lc->event && !strcmp(lc->event, lifecycle_names[i]))
			break;
	p->lifecycle[i]++;
	s->written++;
	return 0;
}

static void prom_gauges(struct sink *s, const struct sink_gauges *g)
{
	to_prom(s)->g = *g;
}

/* --- the exposition format ------------------------------------------------------------------ */

/* A label value: UTF-8, with \, " and newline escaped. */
static void label_value(FILE *f, const char *v)
{
	char *clean = utf8_sanitize(v, strlen(v));

	for (const char *c = clean ?: ""; *c; c++) {
		if (*c == '\\' || *c == '"')
			fputc('\\', f);
		if (*c == '\n')
			fputs("\\n", f);
		else
			fputc(*c, f);
	}
	free(clean);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void render_violations(struct prom *p, FILE *f)
{
	static const char *const verdicts[] = { "denied", "audit" };

	head(f, "sbx_violations_total", "counter",
	     "Operations denied (verdict=\"denied\"), or that audit mode let through (verdict=\"audit\").");
	for (__u32 op = 1; op < SBX_OP_THROTTLED; op++)	/* "throttled" is no violation */
		for (int v = 0; v < 2; v++)
			fprintf(f, "sbx_violations_total{op=\"%s\",verdict=\"%s\"} %llu\n",
				sbx_op_name(op), verdicts[v], p->violations[op][v]);
	head(f, "sbx_grant_uses_total", "counter", "Operations allowed by a live grant (sbx-bpf grant).");
	fprintf(f, "sbx_grant_uses_total %llu\n", p->grant_uses);
	head(f, "sbx_sandbox_violations_total", "counter",
	     "Violations by sandbox; sandboxes beyond the first ones seen count as sandbox=\"_other\".");
	for (size_t i = 0; i < p->nr_sandboxes; i++) {
		fputs("sbx_sandbox_violations_total{sandbox=\"", f);
		label_value(f, p->sandboxes[i].name);
		fprintf(f, "\"} %llu\n", p->sandboxes[i].n);
	}
	fprintf(f, "sbx_sandbox_violations_total{sandbox=\"_other\"} %llu\n", p->other_sandboxes);
	head(f, "sbx_lifecycle_events_total", "counter",
	     "Sandbox lifecycle events (OOM kills, pids.max hits, timeouts, kills, freezes; start: without a protection).");
	for (size_t i = 0; i < NR_LIFECYCLE; i++)
		fprintf(f, "sbx_lifecycle_events_total{event=\"%s\"} %llu\n", lifecycle_names[i],
			p->lifecycle[i]);
}

/* One series per resolver of @name, the value at @field of each. */
static void dns_series(struct prom *p, FILE *f, const char *name, size_t field)
{
	for (unsigned int i = 0; i < p->g.nr_dns; i++)
		fprintf(f, "%s{cgroup_id=\"%llu\"} %llu\n", name, p->g.dns[i].cgroup_id,
			*(const unsigned long long *)((const char *)&p->g.dns[i] + field));
}

/*
 * The resolvers of sandboxes with domain rules (attached cgroups', and
 * runs' on the daemon's programs), by cgroup id: at most as many series as
 * resolvers run at once; a sandbox's go with it.
 */
static void render_dns(struct prom *p, FILE *f)
{
	static const char *const reasons[] = { "name", "type", "rate" };

	head(f, "sbx_dns_queries_total", "counter",
	     "DNS queries the resolver of a sandbox with domain rules received.");
	dns_series(p, f, "sbx_dns_queries_total", offsetof(struct sink_dns_count, queries));
	head(f, "sbx_dns_forwarded_total", "counter",
	     "Its queries sent upstream, each composed by sbx-bpf (one per query the policy allowed).");
	dns_series(p, f, "sbx_dns_forwarded_total", offsetof(struct sink_dns_count, forwarded));
	head(f, "sbx_dns_allowed_names", "gauge",
	     "Distinct names its policy allowed so far: what names under an allowed *.suffix can carry.");
	dns_series(p, f, "sbx_dns_allowed_names", offsetof(struct sink_dns_count, allowed_names));
	head(f, "sbx_dns_refused_total", "counter",
	     "Its queries refused: a name the policy denies, a question type it does not serve, its rate limit.");
	for (unsigned int i = 0; i < p->g.nr_dns; i++) {
		const unsigned long long n[] = { p->g.dns[i].refused_names, p->g.dns[i].refused_types,
						 p->g.dns[i].rate_limited };

		for (size_t k = 0; k < 3; k++)
			fprintf(f, "sbx_dns_refused_total{cgroup_id=\"%llu\",reason=\"%s\"} %llu\n",
				p->g.dns[i].cgroup_id, reasons[k], n[k]);
	}
}

static void render(struct prom *p, FILE *f)
{
	head(f, "sbx_build_info", "gauge", "sbx-bpf's version and event ABI; always 1.");
	fputs("sbx_build_info{version=\"", f);
	label_value(f, p->version);
	fprintf(f, "\",abi=\"%d\"} 1\n", SBX_ABI_VERSION);
	render_violations(p, f);
	render_dns(p, f);
	head(f, "sbx_events_dropped_total", "counter",
	     "Events lost before userspace: ring buffer full, or records that failed validation.");
	fprintf(f, "sbx_events_dropped_total %llu\n", p->g.events_dropped);
	head(f, "sbx_ringbuf_drops_total", "counter",
	     "Records the kernel could not put in the ring buffer (it was full), by CPU.");
	for (unsigned int cpu = 0; cpu < p->g.ncpu && cpu < SINK_MAX_CPUS; cpu++)
		fprintf(f, "sbx_ringbuf_drops_total{cpu=\"%u\"} %llu\n", cpu, p->g.lost_cpu[cpu]);
	head(f, "sbx_kernel_violations_total", "counter",
	     "Denials and audit hits the kernel counted, each reported, coalesced, throttled or dropped.");
	fprintf(f, "sbx_kernel_violations_total %llu\n", p->g.violations);
	head(f, "sbx_events_coalesced_total", "counter",
	     "Violations folded into a record of identical ones (its repeat count).");
	fprintf(f, "sbx_events_coalesced_total %llu\n", p->g.coalesced);
	head(f, "sbx_events_throttled_total", "counter",
	     "Records withheld by a sandbox's event rate limit (counted in \"throttled\" records).");
	fprintf(f, "sbx_events_throttled_total %llu\n", p->g.throttled);
	head(f, "sbx_sink_records_dropped_total", "counter",
	     "Records a sink could not deliver: failed writes, a receiver away or behind.");
	fprintf(f, "sbx_sink_records_dropped_total %llu\n", p->g.records_dropped);
	head(f, "sbx_policies", "gauge", "Sandboxes with a policy installed.");
	fprintf(f, "sbx_policies %lld\n", p->g.policies);
	head(f, "sbx_grants", "gauge", "Live grants (sbx-bpf grant) over every sandbox.");
	fprintf(f, "sbx_grants %lld\n", p->g.grants);
	head(f, "sbx_ringbuf_fill_ratio", "gauge", "How full the events ring buffer is, 0 to 1.");
	fprintf(f, "sbx_ringbuf_fill_ratio %.6g\n", p->g.ringbuf_fill_ratio);
}

char *sink_prom_render(struct sink *s, size_t *len)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);

	if (!f)
		return NULL;
	render(to_prom(s), f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	if (len)
		*len = sz;
	return buf;
}

/* --- HTTP ------------------------------------------------------------------------------------- */

static void conn_close(struct http_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->resp);
	c->fd = -1;
	c->resp = NULL;
	c->rlen = c->resp_len = c->resp_off = 0;
}

static size_t busy(const struct prom *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->max_conns; i++)
		n += p->conns[i].fd >= 0;
	return n;
}

static void respond(struct http_conn *c, const char *status, const char *type, const char *extra,
		    const char *body, size_t blen, bool head_only)
{
	FILE *f = open_memstream(&c->resp, &c->resp_len);

	if (!f)
		return;
	fprintf(f, "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
		status, type, blen, extra);
	if (!head_only)
		fwrite(body, 1, blen, f);
	if (fclose(f)) {
		free(c->resp);
		c->resp = NULL;
	}
}

/* The request line of a whole request head: GET /metrics, HEAD /metrics, or an error. */
static void answer(struct prom *p, struct http_conn *c)
{
	static const char text[] = "text/plain; charset=utf-8";
	char method[16], target[256];
	size_t blen;
	char *body;

	c->req[c->rlen] = '\0';
	if (sscanf(c->req, "%15s %255s HTTP/%*d.%*d", method, target) != 2 || target[0] != '/') {
		respond(c, "400 Bad Request", text, "", "bad request\n", 12, false);
		return;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		respond(c, "405 Method Not Allowed", text, "Allow: GET, HEAD\r\n", "method not allowed\n",
			19, false);
		return;
	}
	target[strcspn(target, "?")] = '\0';
	if (strcmp(target, "/metrics")) {
		respond(c, "404 Not Found", text, "", "not found\n", 10, !strcmp(method, "HEAD"));
		return;
	}
	body = sink_prom_render(&p->base, &blen);
	if (body)
		respond(c, "200 OK", "text/plain; version=0.0.4; charset=utf-8", "", body, blen,
			!strcmp(method, "HEAD"));
	free(body);
}

static bool request_done(const struct http_conn *c)
{
	return memmem(c->req, c->rlen, "\r\n\r\n", 4) || memmem(c->req, c->rlen, "\n\n", 2);
}

static void conn_read(struct prom *p, struct http_conn *c)
{
	ssize_t n = recv(c->fd, c->req + c->rlen, REQUEST_MAX - 1 - c->rlen, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->rlen += n;
	if (request_done(c))
		answer(p, c);
	else if (c->rlen == REQUEST_MAX - 1)
		respond(c, "431 Request Header Fields Too Large", "text/plain", "", "too large\n", 10, false);
	if (!c->resp && request_done(c))
		conn_close(c);		/* no memory for an answer */
}

static void conn_write(struct http_conn *c)
{
	ssize_t n = send(c->fd, c->resp + c->resp_off, c->resp_len - c->resp_off,
			 MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->resp_off += n;
	if (c->resp_off == c->resp_len) {
		shutdown(c->fd, SHUT_WR);
		conn_close(c);
	}
}

static void accept_all(struct prom *p)
{
	for (size_t i = 0; i < p->max_conns; i++) {
		struct http_conn *c = &p->conns[i];

		if (c->fd >= 0)
			continue;
		c->fd = accept4(p->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c->fd < 0)
			return;		/* EAGAIN: no one else waiting */
		c->deadline = now_ms() + p->timeout_ms;
	}
}

static size_t prom_pollfds(struct sink *s, struct pollfd *fds, size_t max, int *timeout_ms)
{
	struct prom *p = to_prom(s);
	long long now = now_ms();
	size_t n = 0;

	if (p->listen_fd < 0)
		return 0;
	if (busy(p) < p->max_conns && n < max)
		fds[n++] = (struct pollfd){ .fd = p->listen_fd, .events = POLLIN };
	for (size_t i = 0; i < p->max_conns && n < max; i++) {
		struct http_conn *c = &p->conns[i];
		int wait;

		if (c->fd < 0)
			continue;
		fds[n++] = (struct pollfd){ .fd = c->fd, .events = c->resp ? POLLOUT : POLLIN };
		wait = c->deadline > now ? (int)(c->deadline - now) : 0;
		if (*timeout_ms < 0 || wait < *timeout_ms)
			*timeout_ms = wait;
	}
	return n;
}

static void prom_handle(struct sink *s, const struct pollfd *fds, size_t n)
{
	struct prom *p = to_prom(s);
	long long now;

	for (size_t k = 0; k < n; k++) {
		if (!fds[k].revents)
			continue;
		if (fds[k].fd == p->listen_fd) {
			accept_all(p);
			continue;
		}
		for (size_t i = 0; i < p->max_conns; i++) {
			struct http_conn *c = &p->conns[i];

			if (c->fd != fds[k].fd)
				continue;
			if (c->resp)
				conn_write(c);
			else if (fds[k].revents & (POLLIN | POLLHUP | POLLERR))
				conn_read(p, c);
			break;
		}
	}
	now = now_ms();
	for (size_t i = 0; i < p->max_conns; i++)
		if (p->conns[i].fd >= 0 && now >= p->conns[i].deadline)
			conn_close(&p->conns[i]);	/* too slow: the slot goes to someone else */
}

int sink_prom_port(struct sink *s)
{
	struct prom *p = to_prom(s);

	return p->listen_fd >= 0 ? p->port : -EINVAL;
}

static int listen_on(struct prom *p, const char *spec)
{
	struct sockaddr_storage ss;
	char host[256], port[8];
	unsigned len;
	int one = 1;

	if (sink_split_hostport(spec, host, sizeof(host), port, sizeof(port)) || !port[0] ||
	    sink_parse_addr(host, port, &ss, &len))
		return -EINVAL;
	p->listen_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->listen_fd < 0)
		return -errno;
	setsockopt(p->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(p->listen_fd, (struct sockaddr *)&ss, len) || listen(p->listen_fd, 16) ||
	    getsockname(p->listen_fd, (struct sockaddr *)&ss, &len))
		return -errno;
	p->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						: ((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

static void prom_free(struct sink *s)
{
	struct prom *p = to_prom(s);

	if (!p)
		return;
	for (size_t i = 0; p->conns && i < p->max_conns; i++)
		conn_close(&p->conns[i]);
	if (p->listen_fd >= 0)
		close(p->listen_fd);
	for (size_t i = 0; i < p->nr_sandboxes; i++)
		free(p->sandboxes[i].name);
	free(p->sandboxes);
	free(p->conns);
	free(p->version);
	free(p);
}

static const struct sink_ops prom_ops = {
	.type = "prometheus",
	.emit = prom_emit,
	.lifecycle = prom_lifecycle,
	.pollfds = prom_pollfds,
	.handle = prom_handle,
	.gauges = prom_gauges,
	.close = prom_free,
};

struct sink *sink_prom_new(const struct sink_prom_opts *o)
{
	struct prom *p = calloc(1, sizeof(*p));
	int err = 0;

	if (!p)
		return NULL;
	p->base.ops = &prom_ops;
	p->listen_fd = -1;
	p->max_sandboxes = o->max_sandboxes ?: PROM_MAX_SANDBOXES;
	p->max_conns = o->max_conns ?: PROM_MAX_CONNS;
	p->timeout_ms = o->timeout_ms ?: PROM_TIMEOUT_MS;
	p->version = strdup(o->version ?: "unknown");
	p->conns = calloc(p->max_conns, sizeof(*p->conns));
	if (!p->version || !p->conns)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < p->max_conns; i++)
		p->conns[i].fd = -1;
	if (!err && o->listen)
		err = listen_on(p, o->listen);
	if (err) {
		prom_free(&p->base);
		errno = -err;
		return NULL;
	}
	return &p->base;
}
