/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sinks.h — where the host agent sends what the kernel reports: JSON lines
 * (sbx-bpf's schema or OCSF) to a file or stdout, RFC 5424 syslog over UDP,
 * TCP or a unix socket, and Prometheus counters served over HTTP.
 *
 * One consumer (the agent's daemon) reads the ring buffer and hands each
 * record to a sink set, which stamps it with the host, the boot id and the
 * next sequence number and fans it out to every sink. A collector that sees
 * a gap in (boot_id, seq) knows records were lost on the way.
 *
 * Nothing here blocks for long: files are written with one write(2) per
 * record, sockets are non-blocking and bounded, and the network work that
 * must wait (a TCP connect, an HTTP scrape) is driven by the caller's poll
 * loop through sink_set_pollfds() / sink_set_handle().
 *
 * Library code: nothing prints. Errors are -errno; constructors return NULL
 * with errno set; every free/close accepts NULL.
 */
#ifndef SBX_SINKS_H
#define SBX_SINKS_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "sbx_abi.h"

/* The OCSF schema version the "ocsf" format follows (docs/events.md "OCSF"). */
#define SINK_OCSF_VERSION	"1.1.0"

/* What a sink needs to format one record beyond the raw event. */
struct sink_ctx {
	/* from the caller */
	const char *rule_text;	/* the policy's text for ev->rule_id; NULL: the built-in text */
	const char *domain;	/* the name behind ev->domain_id, or NULL */
	const char *sandbox;	/* the sandbox's name, or NULL */
	const json_t *labels;	/* the sandbox's labels (labels.h), or NULL */
	/* stamped by the set */
	const char *host;
	const char *boot_id;	/* /proc/sys/kernel/random/boot_id */
	const char *version;	/* sbx-bpf's version */
	unsigned long long seq;	/* 1, 2, 3, … for every record of this boot */
};

/* A fact about a sandbox as a whole (docs/events.md, type "lifecycle"). */
struct sink_lifecycle {
	const char *event;	/* "oom_kill", "pids_max", "timeout", "killed", "frozen", "thawed" */
	const char *detail;	/* one sentence for people */
	__u64 ts_ns;		/* CLOCK_MONOTONIC; 0: now */
	__u64 cgroup_id;	/* the sandbox's cgroup; 0: unknown */
	__u32 pid;		/* the sandbox's first process; 0: unknown */
	const char *comm;	/* its name, or NULL */
	json_t *missing;	/* "start": the protections missing (hooks__gaps_json), or NULL; borrowed */
	const json_t *labels;	/* the sandbox's labels (labels.h), or NULL; borrowed */
};

/* Values the daemon reads elsewhere and hands to the sinks that show them. */
#define SINK_MAX_CPUS	256	/* per-CPU drop counts shown; more CPUs are summed into the last */
#define SINK_MAX_RESOLVERS 256	/* resolvers' counts shown (the daemon runs at most as many) */

struct sink_gauges {
	unsigned long long events_dropped;	/* ring buffer full + malformed records, since start */
	/* The kernel's counters (sbx_abi.h "stats"), summed over CPUs, and its drops per CPU. */
	unsigned long long violations, coalesced, throttled;
	unsigned long long lost_cpu[SINK_MAX_CPUS];
	unsigned int ncpu;
	long long policies;			/* sandboxes with a policy installed */
	long long grants;			/* live grants (sbx-bpf grant) over every sandbox */
	double ringbuf_fill_ratio;		/* 0..1 */
	unsigned long long records_dropped;	/* set by sink_set_gauges(): records sinks lost */
	/* The resolvers the daemon runs for attached cgroups with domain rules: what each counted. */
	struct sink_dns_count {
		unsigned long long cgroup_id, queries, forwarded, refused_names, refused_types, rate_limited;
		unsigned long long allowed_names;	/* distinct allowed names: the "*.suffix" channel */
	} dns[SINK_MAX_RESOLVERS];
	unsigned int nr_dns;
};

struct sink;

struct sink_ops {
	const char *type;	/* "jsonl", "syslog", "prometheus" */
	int (*emit)(struct sink *s, const struct sbx_event *ev, const struct sink_ctx *ctx);
	int (*lifecycle)(struct sink *s, const struct sink_lifecycle *lc, const struct sink_ctx *ctx);
	/* The rest may be NULL. */
	int (*reopen)(struct sink *s);		/* SIGHUP: reopen files, reconnect sockets */
	int (*flush)(struct sink *s);		/* push out what is queued, without blocking */
	/*
	 * Descriptors to poll: at most @max written to @fds, how many returned.
	 * Lowers *@timeout_ms (-1: none yet) to when handle() is next due.
	 */
	size_t (*pollfds)(struct sink *s, struct pollfd *fds, size_t max, int *timeout_ms);
	/* After poll(): the entries pollfds() gave, with revents. Also does timed work. */
	void (*handle)(struct sink *s, const struct pollfd *fds, size_t n);
	void (*gauges)(struct sink *s, const struct sink_gauges *g);
	void (*close)(struct sink *s);		/* frees @s */
};

/* The head of every sink; each type embeds it first. */
struct sink {
	const struct sink_ops *ops;
	unsigned long long written;	/* records handed on (written, sent or queued) */
	unsigned long long dropped;	/* records lost: failed writes, full queues, refused sends */
	size_t nfds;			/* the set's bookkeeping: entries of the last pollfds() */
};

/* --- the fan-out set ------------------------------------------------------------ */

struct sink_ident {
	const char *host;	/* NULL: sink_hostname() */
	const char *boot_id;	/* NULL: sink_boot_id() */
	const char *version;	/* NULL: "unknown" */
};

struct sink_set;

struct sink_set *sink_set_new(const struct sink_ident *id);
/*
 * Keep the sequence in @path (under /run: it must not outlive the boot) so
 * that a restarted daemon goes on from where the last one stopped. Numbers
 * are reserved in blocks of SINK_SEQ_BLOCK: after a crash the next daemon
 * starts past the whole block, a gap but never a number used twice.
 */
#define SINK_SEQ_BLOCK	4096
int sink_set_seq_file(struct sink_set *set, const char *path);
/* Add @s (the set owns it from now on, also when this fails). */
int sink_set_add(struct sink_set *set, struct sink *s);
size_t sink_set_count(const struct sink_set *set);
struct sink *sink_set_get(const struct sink_set *set, size_t i);
const char *sink_set_host(const struct sink_set *set);
const char *sink_set_boot_id(const struct sink_set *set);
/* The sequence number the next record gets. */
unsigned long long sink_set_next_seq(const struct sink_set *set);

/*
 * One record to every sink: @in gives rule_text, domain and sandbox; the set
 * adds host, boot id, version and the next seq. 0, or the first sink's error
 * (the others still got the record).
 */
int sink_set_emit(struct sink_set *set, const struct sbx_event *ev, const struct sink_ctx *in);
int sink_set_lifecycle(struct sink_set *set, const struct sink_lifecycle *lc, const char *sandbox);
int sink_set_reopen(struct sink_set *set);
int sink_set_flush(struct sink_set *set);
size_t sink_set_pollfds(struct sink_set *set, struct pollfd *fds, size_t max, int *timeout_ms);
void sink_set_handle(struct sink_set *set, const struct pollfd *fds, size_t n);
void sink_set_gauges(struct sink_set *set, const struct sink_gauges *g);
/* Records lost over all sinks. */
unsigned long long sink_set_dropped(const struct sink_set *set);
/* Close every sink and save the sequence. */
void sink_set_free(struct sink_set *set);

/*
 * "HOST:PORT", "[IPv6]:PORT" or just the host, into @host and @port (""
 * when there is none). 0 or -EINVAL.
 */
int sink_split_hostport(const char *spec, char *host, size_t hsz, char *port, size_t psz);
/*
 * "127.0.0.1" / "::1" and a port ("514") into @addr (either may be NULL to
 * only check). 0, or -EINVAL for anything but an IP address and 0..65535.
 */
struct sockaddr_storage;
int sink_parse_addr(const char *host, const char *port, struct sockaddr_storage *addr,
		    unsigned *addrlen);

/* The machine's host name (uname nodename). 0 or -errno. */
int sink_hostname(char *buf, size_t sz);
/* /proc/sys/kernel/random/boot_id without its newline. 0 or -errno. */
int sink_boot_id(char *buf, size_t sz);

/* --- record formats ----------------------------------------------------------------- */

enum sink_format {
	SINK_FORMAT_JSON,	/* docs/events.md: event_to_json() plus host, boot_id, seq */
	SINK_FORMAT_OCSF,	/* docs/events.md "OCSF" */
};

json_t *sink_json_event(const struct sbx_event *ev, const struct sink_ctx *ctx);
json_t *sink_json_lifecycle(const struct sink_lifecycle *lc, const struct sink_ctx *ctx);
json_t *sink_ocsf_event(const struct sbx_event *ev, const struct sink_ctx *ctx);
json_t *sink_ocsf_lifecycle(const struct sink_lifecycle *lc, const struct sink_ctx *ctx);
/* The human line without its "sbx-bpf: " prefix, as well-formed UTF-8. */
void sink_human_line(const struct sbx_event *ev, const struct sink_ctx *ctx, char *buf, size_t sz);

/* --- JSON lines ------------------------------------------------------------------------ */

struct sink_jsonl_opts {
	const char *path;		/* NULL or "-": stdout */
	enum sink_format format;
	/* Rotate before a record would take the file past this many bytes; 0: never. */
	unsigned long long max_bytes;
	unsigned keep;			/* rotated files kept: PATH.1 (newest) … PATH.keep */
};

struct sink *sink_jsonl_new(const struct sink_jsonl_opts *o);

/* --- syslog (RFC 5424) ---------------------------------------------------------------------- */

enum syslog_transport {
	SYSLOG_UDP,		/* RFC 5426: one datagram per message */
	SYSLOG_TCP,		/* RFC 6587 octet counting: "LEN SP MSG" */
	SYSLOG_UNIX,		/* a unix datagram socket such as /dev/log */
};

#define SYSLOG_DEFAULT_FACILITY	10	/* authpriv */
#define SYSLOG_DEFAULT_SD_ID	"sbx@32473"
#define SYSLOG_UDP_MAX		2048	/* what RFC 5426 says every receiver should take */
#define SYSLOG_STREAM_MAX	8192	/* TCP and unix sockets */
#define SYSLOG_MIN_MESSAGE	480	/* every receiver takes this much (RFC 5426); less is raised to it */
#define SYSLOG_QUEUE_BYTES	(256u << 10)

struct syslog_target {
	enum syslog_transport transport;
	char host[256];			/* an IP address; for unix the socket's path */
	char port[8];
};

/*
 * "udp://127.0.0.1:514", "tcp://[::1]:601", "unix:///dev/log". Hosts are IP
 * addresses: the shipped binary is static, without the resolver libraries.
 * The port defaults to 514 (udp) and 601 (tcp).
 * 0 or -EINVAL with @err saying what is wrong.
 */
int syslog_parse_target(const char *spec, struct syslog_target *t, char *err, size_t errsz);
/* "local0" → 16, "authpriv" → 10, …; -EINVAL for an unknown name. */
int syslog_facility(const char *name);
/* Is @sd_id a valid enterprise SD-ID ("name@digits", RFC 5424 §6.3.2)? */
bool syslog_valid_sd_id(const char *sd_id);

struct sink_syslog_opts {
	const char *target;
	int facility;			/* 0..23; -1: SYSLOG_DEFAULT_FACILITY */
	size_t max_message;		/* bytes per message (at least 480); 0: the transport's default */
	size_t queue_bytes;		/* TCP: bytes held while the receiver is away; 0: default */
	const char *sd_id;		/* NULL: SYSLOG_DEFAULT_SD_ID */
	const char *app_name;		/* NULL: "sbx-bpf" */
	int connect_timeout_ms;		/* TCP; 0: 5000 */
};

struct sink *sink_syslog_new(const struct sink_syslog_opts *o);
/* The RFC 5424 message for one event or lifecycle fact (no framing), at most @sz - 1 bytes. */
size_t syslog_format_event(const struct sbx_event *ev, const struct sink_ctx *ctx, int facility,
			   const char *sd_id, const char *app_name, char *buf, size_t sz);
size_t syslog_format_lifecycle(const struct sink_lifecycle *lc, const struct sink_ctx *ctx,
			       int facility, const char *sd_id, const char *app_name,
			       char *buf, size_t sz);

/* --- Prometheus -------------------------------------------------------------------------------- */

#define PROM_MAX_SANDBOXES	64
#define PROM_MAX_CONNS		8
#define PROM_TIMEOUT_MS		5000

struct sink_prom_opts {
	const char *listen;		/* "127.0.0.1:9464", "[::1]:9464"; NULL: no HTTP server */
	size_t max_sandboxes;		/* label values of sandbox before "_other"; 0: default */
	size_t max_conns;		/* HTTP connections at once; 0: default */
	int timeout_ms;			/* per HTTP connection; 0: default */
	const char *version;		/* for sbx_build_info; NULL: "unknown" */
};

struct sink *sink_prom_new(const struct sink_prom_opts *o);
/* The text exposition format 0.0.4, malloc'ed; NULL with errno. */
char *sink_prom_render(struct sink *s, size_t *len);
/* The port the HTTP server listens on (useful after port 0), or -EINVAL. */
int sink_prom_port(struct sink *s);

#endif
