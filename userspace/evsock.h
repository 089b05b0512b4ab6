/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * evsock.h — the daemon's events socket: `sbx-bpf events` watches the live
 * stream and `sbx-bpf status` asks for the daemon's health, over one unix
 * stream socket, several clients at once (docs/agent.md "The events socket").
 *
 * A client sends one JSON line, the request; the server answers in JSON lines:
 *
 *   {"cmd":"follow","cgroup":ID|null,"backlog":N}  the last N matching lines, then each new one
 *   {"cmd":"recent","cgroup":ID|null,"backlog":N}  the last N matching lines, then the server closes
 *   {"cmd":"status"}                               one object (daemon health), then it closes
 *   {"cmd":"resolver","cgroup":ID}                 start (or restart) the resolver of an attached
 *                                                  cgroup: {"port4":N,"port6":M}, then it closes
 *   {"cmd":"resolver-stop","cgroup":ID}            stop it: {"stopped":true|false}, then it closes
 *   {"cmd":"watch","cgroup":ID}                    watch an attached cgroup's limits at once (not
 *                                                  from the next second on): {"watching":true|false}
 *
 * A bad request gets {"error":"…"} and the connection is closed. "cgroup"
 * keeps the events whose cgroup_id or sandbox_cgroup_id is ID (exactly:
 * not the cgroups below it); a resolver request needs it. The resolver
 * requests are `attach` and `detach` asking the daemon (resolvers.h); a
 * server without a resolver callback refuses them. Only uid 0 (or the server's own uid, which is
 * 0 for the daemon) may connect: events name the paths of every sandbox.
 *
 * The daemon is never slowed down by a watcher: sockets are non-blocking,
 * each client has a bounded queue, and lines that do not fit are dropped
 * and counted; once there is room again the watcher first gets
 * {"type":"gap","dropped":N}. The server runs in the caller's poll loop
 * (evsock_pollfds() / evsock_handle(), as the sinks do).
 *
 * Library code: nothing prints. Errors are -errno; constructors return
 * NULL with errno set; evsock_free() accepts NULL.
 */
#ifndef SBX_EVSOCK_H
#define SBX_EVSOCK_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <linux/types.h>

#define EVSOCK_PATH		"/run/sbx-bpf/events.sock"
#define EVSOCK_MAX_WATCHERS	64		/* "follow" clients at once */
#define EVSOCK_SPARE		4		/* connections beyond them: status, recent */
#define EVSOCK_OUT_BYTES	(1u << 20)	/* queued for one client before lines are dropped */
#define EVSOCK_BACKLOG		1024		/* recent lines kept for "backlog" */
#define EVSOCK_REQUEST_MAX	4096		/* bytes of a request line */
#define EVSOCK_REQUEST_MS	5000		/* to send it, after connecting */
/* pollfd entries evsock_pollfds() fills at most, with the default limits. */
#define EVSOCK_FDS		(1 + EVSOCK_MAX_WATCHERS + EVSOCK_SPARE)

/* Fields the owner adds to every status answer (a new object, or NULL). */
typedef json_t *(*evsock_status_fn)(void *ctx);
/*
 * The owner's answer to "resolver" (@start) or "resolver-stop" for the
 * cgroup @cgid: a new object ({"error": …} to refuse), or NULL (no memory).
 */
typedef json_t *(*evsock_resolver_fn)(void *ctx, bool start, __u64 cgid);
/* The owner's answer to "watch" for @cgid: a new object, or NULL (no memory). */
typedef json_t *(*evsock_watch_fn)(void *ctx, __u64 cgid);

struct evsock_opts {
	size_t max_watchers;		/* 0: EVSOCK_MAX_WATCHERS */
	size_t out_bytes;		/* 0: EVSOCK_OUT_BYTES */
	size_t backlog;			/* 0: EVSOCK_BACKLOG */
	evsock_status_fn status;	/* may be NULL */
	void *status_ctx;
	evsock_resolver_fn resolver;	/* NULL: resolver requests are refused */
	void *resolver_ctx;
	evsock_watch_fn watch;		/* NULL: watch requests are refused */
	void *watch_ctx;
};

struct evsock;

/*
 * Listen at @path, mode 0600: bound under a temporary name, then renamed
 * over @path, so a client never finds a socket it may not use, and a stale
 * socket of a dead daemon is replaced. @o may be NULL.
 */
struct evsock *evsock_open(const char *path, const struct evsock_opts *o);
/* Close every client and the socket; remove @path if it is still ours. */
void evsock_free(struct evsock *es);

/* Descriptors to poll (at most @max); lowers *@timeout_ms (-1: none yet) to the next deadline. */
size_t evsock_pollfds(struct evsock *es, struct pollfd *fds, size_t max, int *timeout_ms);
/* After poll(): the entries evsock_pollfds() gave, with revents; sends what is queued. */
void evsock_handle(struct evsock *es, const struct pollfd *fds, size_t n);

/*
 * One record (event_to_json() or sink_json_event() object, or a lifecycle
 * record) into the backlog and to every watcher whose filter matches its
 * "cgroup_id" or "sandbox_cgroup_id". Queued only: evsock_handle() sends.
 * 0 or -ENOMEM.
 */
int evsock_publish(struct evsock *es, const json_t *obj);

/* What a status request gets (caller owns the reference). */
json_t *evsock_status(struct evsock *es);
/* Clients in "follow" mode now. */
size_t evsock_watchers(const struct evsock *es);

/* --- the client side ----------------------------------------------------------------------- */

/*
 * Connect to @path and send @req as one line; connecting and sending give
 * up after @timeout_ms. The connected socket (blocking), or -errno:
 * -ENOENT / -ECONNREFUSED when no daemon listens there.
 */
int evsock_connect(const char *path, const json_t *req, int timeout_ms);
/*
 * Send @req and read the answer's first line within @timeout_ms in all.
 * 0 with *@answer (the caller's reference; it may be an {"error":…}
 * object), or -errno (-ETIMEDOUT, -EPROTO for an answer that is not JSON).
 */
int evsock_query(const char *path, const json_t *req, int timeout_ms, json_t **answer);

#endif
