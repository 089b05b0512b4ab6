/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * events.h — violation events: decoding ring-buffer records, the human line
 * and the JSON-lines form (schema in docs/events.md).
 */
#ifndef SBX_EVENTS_H
#define SBX_EVENTS_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <jansson.h>
#include "sbx_abi.h"

#define SBX_EVENT_SCHEMA "sbx-bpf.event/3"

struct policy;
struct ring_buffer;

/*
 * The name behind @ev's domain_id (the resolver of @ev's sandbox keeps
 * them: the daemon runs one per attached cgroup), or NULL.
 */
typedef const char *(*event_domain_fn)(void *ctx, const struct sbx_event *ev);

/* The text of @ev's rule when the sink has no policy (the daemon), or NULL. */
typedef const char *(*event_rule_fn)(void *ctx, const struct sbx_event *ev);

/* The labels of @ev's sandbox (labels.h; borrowed), or NULL. */
typedef const json_t *(*event_labels_fn)(void *ctx, const struct sbx_event *ev);

/* Called for every event with its resolved texts (the daemon's sinks). */
typedef void (*event_forward_fn)(void *ctx, const struct sbx_event *ev, const char *rule_text,
				 const char *domain, const json_t *labels);

struct event_sink {
	const struct policy *policy;	/* for rule texts; may be NULL */
	event_forward_fn forward;	/* may be NULL */
	void *forward_ctx;
	event_rule_fn rule_text;	/* used without a policy; may be NULL */
	void *rule_ctx;
	event_domain_fn domain_name;	/* may be NULL */
	void *domain_ctx;
	event_labels_fn labels;		/* may be NULL */
	void *labels_ctx;
	const char *sandbox;		/* sandbox name, for JSON */
	FILE *human;			/* one line per event, or NULL */
	FILE *json;			/* JSON lines, or NULL */
	struct evsweep *sweep;		/* coalescing summaries (evsweep.h); may be NULL */
	__u64 last_sweep_ns;
	unsigned long long received;	/* records emitted, summaries and userspace ones included */
	unsigned long long delivered;	/* violation records that came from the kernel (not "throttled") */
	unsigned long long malformed;
};

const char *sbx_op_name(__u32 op);
const char *sbx_verdict_name(__u32 verdict);

/* How many violations @ev stands for (repeat; 1 for records made in userspace). */
__u32 event_repeat(const struct sbx_event *ev);
/* Check a raw record from the ring buffer: size and NUL-terminated path. */
int event_validate(const void *data, size_t size);
/* The rule text shown for @ev: @policy_text, or the fixed text of an SBX_RULE_* id. */
const char *event_rule_text(const struct sbx_event *ev, const char *policy_text);
/*
 * "sbx-bpf: denied read /x (deny-read /x) pid 12 cat" into @buf;
 * "sbx-bpf: denied connect 10.0.0.1:443/tcp [example.com] (…) pid 12 curl".
 * @domain: the name of ev->domain_id, or NULL.
 */
int event_format_human(const struct sbx_event *ev, const char *rule_text, const char *domain,
		       char *buf, size_t sz);
/*
 * The JSON object of one event (caller owns the reference). Bytes of a
 * path, comm or rule text that are not UTF-8 come out as U+FFFD.
 */
json_t *event_to_json(const struct sbx_event *ev, const char *rule_text, const char *domain,
		      const char *sandbox);
/*
 * The sandbox's labels into an event's (or lifecycle record's) object as
 * "labels": a copy, and only when there are any. 0 or -ENOMEM.
 */
int event_json_set_labels(json_t *obj, const json_t *labels);
/*
 * The human line of an event's JSON object, violation or lifecycle, the
 * same as event_format_human() and events_lifecycle() print for the record
 * it came from: what a watcher of the daemon's socket shows (it gets JSON).
 * Length as snprintf, or -EINVAL for an object of another type.
 */
int event_json_format_human(const json_t *obj, char *buf, size_t sz);
/* The JSON object of a lifecycle fact (oom_kill, timeout, …) at @mono_ns. */
json_t *event_lifecycle_to_json(const char *event, const char *detail, const char *sandbox,
				__u64 mono_ns);
/* A JSON string of @s[0..@len), non-UTF-8 bytes as U+FFFD; json null for NULL @s. */
json_t *event_json_text(const char *s, size_t len);
/* An event's CLOCK_MONOTONIC time as wall-clock (CLOCK_REALTIME) time. */
void event_wall_time(__u64 mono_ns, struct timespec *ts);
/* CLOCK_MONOTONIC now, in the nanoseconds events carry. */
__u64 event_mono_now(void);
/* "10.0.0.1:443", "[2001:db8::1]:443", "unix:/run/x.sock", "unix:@name" into @buf. */
void event_net_target(const struct sbx_event *ev, char *buf, size_t sz);
/* Task and system ops (ptrace … tty_input): what was refused, as text ("SIGKILL", "CAP_SYS_ADMIN"). */
bool event_is_task_op(const struct sbx_event *ev);
void event_detail(const struct sbx_event *ev, char *buf, size_t sz);

/* Deliver one event (from the kernel or made in userspace, e.g. by the resolver). */
void events_emit(struct event_sink *sink, const struct sbx_event *ev);

/*
 * A lifecycle fact about the sandbox as a whole (oom_kill, pids_max,
 * timeout, killed, frozen, thawed) on the same outputs as violations.
 */
void events_lifecycle(struct event_sink *sink, const char *event, const char *detail);
/* The same with "missing": the protections the sandbox runs without (hooks.h); takes @missing's reference. */
void events_lifecycle_missing(struct event_sink *sink, const char *event, const char *detail, json_t *missing);
/* The same with more @fields (an object, merged in; the reference is taken; may be NULL). */
void events_lifecycle_with(struct event_sink *sink, const char *event, const char *detail, json_t *fields);

struct sbx_loader;
/* Set up sink->sweep on @l's coalescing slots; 0 or -errno (the counts then stay in the counters). */
int events_sweep_open(struct event_sink *sink, struct sbx_loader *l);
/* Send every pending count as a summary and free the sweeper (the consumer is going). */
void events_sweep_close(struct event_sink *sink);
/* Call from the consumer's loop: sends the summaries that are due (sink->sweep). */
void events_tick(struct event_sink *sink);

/* A ring buffer on @map_fd delivering to @sink. NULL with errno on failure. */
struct ring_buffer *events_open(int map_fd, struct event_sink *sink);

#endif
