// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sinks.c — the sink set (one record to every sink, each record numbered
 * once), the boot-scoped sequence, and the sbx-bpf JSON record with the
 * fields every collector needs to tell hosts, boots and gaps apart.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "events.h"
#include "sinks.h"
#include "util.h"

struct sink_set {
	struct sink **sinks;
	size_t nr;
	char *host, *boot_id, *version;
	unsigned long long next_seq;
	unsigned long long reserved;	/* numbers below this are on disk as used */
	char *seq_path;			/* NULL: the sequence lives in memory only */
};

int sink_hostname(char *buf, size_t sz)
{
	struct utsname u;

	if (uname(&u))
		return -errno;
	if (snprintf(buf, sz, "%s", u.nodename) >= (int)sz)
		return -ENAMETOOLONG;
	return 0;
}

int sink_split_hostport(const char *spec, char *host, size_t hsz, char *port, size_t psz)
{
	const char *end, *p = NULL;

	if (*spec == '[') {			/* [IPv6]:port */
		end = strchr(spec, ']');
		if (!end || (end[1] && end[1] != ':'))
			return -EINVAL;
		spec++;
		p = end[1] ? end + 2 : NULL;
	} else {
		end = strchr(spec, ':');
		p = end ? end + 1 : NULL;
		end = end ?: spec + strlen(spec);
	}
	if (end == spec || (size_t)(end - spec) >= hsz || (p && (!*p || strlen(p) >= psz)))
		return -EINVAL;
	snprintf(host, hsz, "%.*s", (int)(end - spec), spec);
	snprintf(port, psz, "%s", p ?: "");
	return 0;
}

int sink_parse_addr(const char *host, const char *port, struct sockaddr_storage *addr,
		    unsigned *addrlen)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	char *end;
	long p = strtol(port, &end, 10);

	if (*port < '0' || *port > '9' || *end || p < 0 || p > 65535)
		return -EINVAL;
	a4.sin_port = a6.sin6_port = htons(p);
	if (inet_pton(AF_INET, host, &a4.sin_addr) == 1) {
		if (addr)
			memcpy(addr, &a4, sizeof(a4));
		if (addrlen)
			*addrlen = sizeof(a4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6.sin6_addr) == 1) {
		if (addr)
			memcpy(addr, &a6, sizeof(a6));
		if (addrlen)
			*addrlen = sizeof(a6);
		return 0;
	}
	return -EINVAL;
}

int sink_boot_id(char *buf, size_t sz)
{
	int n = read_file("/proc/sys/kernel/random/boot_id", buf, sz);

	if (n < 0)
		return n;
	strip(buf);
	return buf[0] ? 0 : -ENODATA;
}

static char *dup_or(const char *s, int (*fill)(char *, size_t), const char *fallback)
{
	char buf[256];

	if (s)
		return strdup(s);
	if (fill && !fill(buf, sizeof(buf)))
		return strdup(buf);
	return strdup(fallback);
}

struct sink_set *sink_set_new(const struct sink_ident *id)
{
	struct sink_set *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	set->host = dup_or(id ? id->host : NULL, sink_hostname, "-");
	set->boot_id = dup_or(id ? id->boot_id : NULL, sink_boot_id, "-");
	set->version = dup_or(id ? id->version : NULL, NULL, "unknown");
	set->next_seq = 1;
	if (!set->host || !set->boot_id || !set->version) {
		sink_set_free(set);
		errno = ENOMEM;
		return NULL;
	}
	return set;
}

/* --- the sequence ------------------------------------------------------------------ */

/* "BOOT_ID NEXT": the first number the next daemon of this boot may use. */
static int seq_save(struct sink_set *set, unsigned long long next)
{
	char tmp[4096], line[128];
	int fd, len, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", set->seq_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	len = snprintf(line, sizeof(line), "%s %llu\n", set->boot_id, next);
	if (write(fd, line, len) != len)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, set->seq_path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* Where the last daemon of this boot stopped, or 1. */
static unsigned long long seq_load(const char *path, const char *boot_id)
{
	char buf[160], id[80];
	unsigned long long next;

	if (read_file(path, buf, sizeof(buf)) < 0)
		return 1;
	if (sscanf(buf, "%79s %llu", id, &next) != 2 || strcmp(id, boot_id) || !next)
		return 1;	/* another boot's file, or not ours */
	return next;
}

int sink_set_seq_file(struct sink_set *set, const char *path)
{
	unsigned long long next = seq_load(path, set->boot_id);
	char *p = strdup(path);
	int err;

	if (!p)
		return -ENOMEM;
	free(set->seq_path);
	set->seq_path = p;
	err = seq_save(set, next + SINK_SEQ_BLOCK);
	if (err)
		return err;
	set->next_seq = next;
	set->reserved = next + SINK_SEQ_BLOCK;
	return 0;
}

static unsigned long long seq_take(struct sink_set *set)
{
	/* Reserve the next block before handing out its first number. */
	if (set->seq_path && set->next_seq >= set->reserved &&
	    !seq_save(set, set->next_seq + SINK_SEQ_BLOCK))
		set->reserved = set->next_seq + SINK_SEQ_BLOCK;
	return set->next_seq++;
}

unsigned long long sink_set_next_seq(const struct sink_set *set)
{
	return set->next_seq;
}

/* --- fan-out -------------------------------------------------------------------------- */

int sink_set_add(struct sink_set *set, struct sink *s)
{
	struct sink **n = realloc(set->sinks, (set->nr + 1) * sizeof(*n));

	if (!n) {
		s->ops->close(s);
		return -ENOMEM;
	}
	set->sinks = n;
	set->sinks[set->nr++] = s;
	return 0;
}

size_t sink_set_count(const struct sink_set *set)
{
	return set->nr;
}

struct sink *sink_set_get(const struct sink_set *set, size_t i)
{
	return i < set->nr ? set->sinks[i] : NULL;
}

const char *sink_set_host(const struct sink_set *set)
{
	return set->host;
}

const char *sink_set_boot_id(const struct sink_set *set)
{
	return set->boot_id;
}

static void stamp(struct sink_set *set, struct sink_ctx *ctx)
{
	ctx->host = set->host;
	ctx->boot_id = set->boot_id;
	ctx->version = set->version;
	ctx->seq = seq_take(set);
}

/*
 * A "throttled" record is a fact about the sandbox, not a violation: every
 * sink shows it the way it shows lifecycle facts.
 */
static int emit_throttled(struct sink_set *set, const struct sbx_event *ev, const char *sandbox,
			  const json_t *labels)
{
	char detail[160];

	snprintf(detail, sizeof(detail), "%u violations were counted but not reported one by one"
		 " (event rate limit)", event_repeat(ev));
	return sink_set_lifecycle(set, &(struct sink_lifecycle){ .event = "throttled", .detail = detail,
			.ts_ns = ev->ts_ns, .cgroup_id = ev->sandbox_cgroup_id, .labels = labels }, sandbox);
}

int sink_set_emit(struct sink_set *set, const struct sbx_event *ev, const struct sink_ctx *in)
{
	struct sink_ctx ctx = { .rule_text = in ? in->rule_text : NULL,
				.domain = in ? in->domain : NULL,
				.sandbox = in ? in->sandbox : NULL,
				.labels = in ? in->labels : NULL };
	int first = 0;

	if (ev->op == SBX_OP_THROTTLED)
		return emit_throttled(set, ev, ctx.sandbox, ctx.labels);
	stamp(set, &ctx);
	for (size_t i = 0; i < set->nr; i++) {
		int err = set->sinks[i]->ops->emit(set->sinks[i], ev, &ctx);

		if (err && !first)
			first = err;
	}
	return first;
}

int sink_set_lifecycle(struct sink_set *set, const struct sink_lifecycle *lc, const char *sandbox)
{
	struct sink_ctx ctx = { .sandbox = sandbox, .labels = lc->labels };
	struct sink_lifecycle at = *lc;
	int first = 0;

	if (!at.ts_ns)
		at.ts_ns = event_mono_now();	/* every sink shows the same instant */
	stamp(set, &ctx);
	for (size_t i = 0; i < set->nr; i++) {
		int err = set->sinks[i]->ops->lifecycle(set->sinks[i], &at, &ctx);

		if (err && !first)
			first = err;
	}
	return first;
}

/* reopen or flush (both optional) on every sink; the first error. */
static int each(struct sink_set *set, bool reopen)
{
	int first = 0;

	for (size_t i = 0; i < set->nr; i++) {
		struct sink *s = set->sinks[i];
		int (*fn)(struct sink *) = reopen ? s->ops->reopen : s->ops->flush;
		int err = fn ? fn(s) : 0;

		if (err && !first)
			first = err;
	}
	return first;
}

int sink_set_reopen(struct sink_set *set)
{
	return each(set, true);
}

int sink_set_flush(struct sink_set *set)
{
	return each(set, false);
}

size_t sink_set_pollfds(struct sink_set *set, struct pollfd *fds, size_t max, int *timeout_ms)
{
	size_t n = 0;

	for (size_t i = 0; i < set->nr; i++) {
		struct sink *s = set->sinks[i];

		s->nfds = s->ops->pollfds ? s->ops->pollfds(s, fds + n, max - n, timeout_ms) : 0;
		n += s->nfds;
	}
	return n;
}

void sink_set_handle(struct sink_set *set, const struct pollfd *fds, size_t n)
{
	size_t off = 0;

	for (size_t i = 0; i < set->nr; i++) {
		struct sink *s = set->sinks[i];
		size_t k = off + s->nfds <= n ? s->nfds : 0;

		if (s->ops->handle)
			s->ops->handle(s, fds + off, k);
		off += k;
	}
}

void sink_set_gauges(struct sink_set *set, const struct sink_gauges *g)
{
	struct sink_gauges all = *g;

	all.records_dropped = sink_set_dropped(set);
	for (size_t i = 0; i < set->nr; i++)
		if (set->sinks[i]->ops->gauges)
			set->sinks[i]->ops->gauges(set->sinks[i], &all);
}

unsigned long long sink_set_dropped(const struct sink_set *set)
{
	unsigned long long n = 0;

	for (size_t i = 0; i < set->nr; i++)
		n += set->sinks[i]->dropped;
	return n;
}

void sink_set_free(struct sink_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->nr; i++)
		set->sinks[i]->ops->close(set->sinks[i]);
	if (set->seq_path)
		seq_save(set, set->next_seq);	/* a clean stop leaves no gap */
	free(set->sinks);
	free(set->host);
	free(set->boot_id);
	free(set->version);
	free(set->seq_path);
	free(set);
}

/* --- the sbx-bpf JSON record --------------------------------------------------------------- */

/* host, boot_id, seq: which machine, which boot, which record of that boot. */
static json_t *stamped(json_t *obj, const struct sink_ctx *ctx)
{
	if (obj && json_object_update_new(obj, json_pack("{s:o, s:o, s:I}",
			"host", event_json_text(ctx->host, ctx->host ? strlen(ctx->host) : 0),
			"boot_id", event_json_text(ctx->boot_id, ctx->boot_id ? strlen(ctx->boot_id) : 0),
			"seq", (json_int_t)ctx->seq))) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

json_t *sink_json_event(const struct sbx_event *ev, const struct sink_ctx *ctx)
{
	json_t *obj = event_to_json(ev, ctx->rule_text, ctx->domain, ctx->sandbox);

	if (event_json_set_labels(obj, ctx->labels)) {
		json_decref(obj);
		return NULL;
	}
	return stamped(obj, ctx);
}

json_t *sink_json_lifecycle(const struct sink_lifecycle *lc, const struct sink_ctx *ctx)
{
	json_t *obj = event_lifecycle_to_json(lc->event, lc->detail, ctx->sandbox,
					      lc->ts_ns ? lc->ts_ns : event_mono_now());
	json_t *proc = lc->pid ? json_pack("{s:i, s:o}", "pid", (int)lc->pid, "comm",
					   event_json_text(lc->comm, lc->comm ? strlen(lc->comm) : 0))
			       : json_null();

	if (obj && json_object_update_new(obj, json_pack("{s:o, s:o}", "sandbox_cgroup_id",
			lc->cgroup_id ? json_integer((json_int_t)lc->cgroup_id) : json_null(),
			"process", proc))) {
		json_decref(obj);
		return NULL;
	}
	if (lc->missing)
		json_object_set(obj, "missing", lc->missing);
	if (event_json_set_labels(obj, ctx->labels)) {
		json_decref(obj);
		return NULL;
	}
	return stamped(obj, ctx);
}

void sink_human_line(const struct sbx_event *ev, const struct sink_ctx *ctx, char *buf, size_t sz)
{
	static const char prefix[] = "sbx-bpf: ";
	char line[2 * SBX_PATH_MAX + 512], *clean;
	int n = event_format_human(ev, ctx->rule_text, ctx->domain, line, sizeof(line));
	const char *p = line;

	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (!strncmp(p, prefix, sizeof(prefix) - 1)) {
		p += sizeof(prefix) - 1;
		n -= sizeof(prefix) - 1;
	}
	clean = utf8_sanitize(p, n);
	snprintf(buf, sz, "%s", clean ? clean : "");
	free(clean);
}
