// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon.c — `sbx-bpf daemon`: load the enforcement programs once and pin
 * them under bpffs, so they keep enforcing when this process exits,
 * crashes or is killed; or adopt the pinned set a previous daemon left.
 * Then be the single consumer of the events ring buffer.
 *
 * `sbx-bpf unload` removes the pinned set: enforcement ends when no process
 * holds the programs any more.
 *
 * First slice of the host agent (issue 6): attach/detach/list, nested
 * policies, grants and the telemetry sinks build on this; see
 * docs/agent-plan.md.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "events.h"
#include "loader.h"
#include "sbxstate.h"

#define PIN_DIR_DEFAULT	"/sys/fs/bpf/sbx"

struct daemon_opts {
	const char *pin_dir;
	const char *events_path;
};

static void daemon_usage(FILE *out)
{
	fprintf(out,
		"Usage: sbx-bpf daemon [--pin-dir DIR] [--events FILE]\n"
		"       sbx-bpf unload [--pin-dir DIR]\n"
		"\n"
		"daemon: load the enforcement programs and pin them under DIR (default\n"
		"%s), or adopt the set pinned there by an earlier daemon of\n"
		"this build; then print every event (stderr; --events FILE: JSON lines,\n"
		"'-' = stdout) until SIGTERM/SIGINT. The programs stay attached when the\n"
		"daemon exits, however it exits.\n"
		"unload: remove the pinned set; enforcement ends with its last user.\n",
		PIN_DIR_DEFAULT);
}

static int parse_opts(int argc, char **argv, struct daemon_opts *o, bool events_ok)
{
	static const struct option longopts[] = {
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "events", required_argument, NULL, 'e' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	o->pin_dir = PIN_DIR_DEFAULT;
	while ((c = getopt_long(argc, argv, "jvh", longopts, NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		switch (c) {
		case 'p': o->pin_dir = optarg; break;
		case 'e':
			if (!events_ok)
				goto usage;
			o->events_path = optarg;
			break;
		case 'h': daemon_usage(stdout); return -1;
		default: goto usage;
		}
	}
	if (optind == argc)
		return 0;
usage:
	daemon_usage(stderr);
	return EXIT_USAGE;
}

/*
 * Rule texts for events: the daemon never saw the policies, `attach`
 * recorded them (sbxstate.h). One cached record per sandbox cgroup, read
 * again when its file changed (a replaced policy).
 */
#define RULE_CACHE	64

struct rule_cache {
	struct {
		__u64 cgid;
		struct timespec mtime;
		json_t *st;
	} e[RULE_CACHE];
	unsigned next;
};

static json_t *cached_state(struct rule_cache *c, __u64 cgid)
{
	char path[PATH_MAX];
	struct stat sb;
	unsigned i, slot;

	snprintf(path, sizeof(path), "%s/%llu.json", SBX_STATE_DIR, (unsigned long long)cgid);
	if (stat(path, &sb))
		return NULL;
	for (i = 0; i < RULE_CACHE; i++)
		if (c->e[i].st && c->e[i].cgid == cgid &&
		    c->e[i].mtime.tv_sec == sb.st_mtim.tv_sec && c->e[i].mtime.tv_nsec == sb.st_mtim.tv_nsec)
			return c->e[i].st;
	slot = c->next++ % RULE_CACHE;
	json_decref(c->e[slot].st);
	c->e[slot].st = state_read(SBX_STATE_DIR, cgid);
	c->e[slot].cgid = cgid;
	c->e[slot].mtime = sb.st_mtim;
	return c->e[slot].st;
}

static const char *rule_text_cb(void *ctx, const struct sbx_event *ev)
{
	json_t *st = cached_state(ctx, ev->sandbox_cgroup_id);

	return st ? state_rule_text(st, ev->rule_id) : NULL;
}

static void rule_cache_free(struct rule_cache *c)
{
	for (unsigned i = 0; i < RULE_CACHE; i++)
		json_decref(c->e[i].st);
}

/* Adopt the pinned set, or load and pin a new one. NULL after saying why. */
static struct sbx_loader *adopt_or_load(const char *dir)
{
	struct sbx_loader *l = loader__open_pinned(dir);
	int err;

	if (l) {
		p_warn("adopted the programs pinned at %s (enforcement never stopped)", dir);
		return l;
	}
	if (errno == ESTALE) {
		p_err("%s holds programs of another sbx-bpf build; 'sbx-bpf unload' removes them", dir);
		return NULL;
	}
	l = loader__open_and_attach();
	if (!l) {
		p_err("cannot load the enforcement programs: %s (run 'sbx-bpf doctor')", strerror(errno));
		return NULL;
	}
	err = loader__pin(l, dir);
	if (err) {
		p_err("cannot pin the programs under %s: %s (is bpffs mounted at /sys/fs/bpf?)", dir,
		      strerror(-err));
		loader__destroy(l);
		return NULL;
	}
	p_warn("loaded the programs and pinned them at %s", dir);
	return l;
}

static int serve(struct sbx_loader *l, struct event_sink *sink)
{
	struct ring_buffer *rb = events_open(loader__events_fd(l), sink);
	struct signalfd_siginfo si;
	struct pollfd fds[2];
	sigset_t mask;
	int sfd;

	if (!rb) {
		p_err("cannot open the event ring buffer: %s", strerror(errno));
		return 1;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	fds[0] = (struct pollfd){ .fd = ring_buffer__epoll_fd(rb), .events = POLLIN };
	fds[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	for (;;) {
		if (poll(fds, 2, 1000) < 0 && errno != EINTR)
			break;
		ring_buffer__consume(rb);
		if ((fds[1].revents & POLLIN) && read(sfd, &si, sizeof(si)) == sizeof(si))
			break;
	}
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	close(sfd);
	return 0;
}

int do_daemon(int argc, char **argv)
{
	static struct rule_cache cache;
	struct event_sink sink = { .human = stderr, .rule_text = rule_text_cb, .rule_ctx = &cache };
	struct daemon_opts o = {};
	struct sbx_loader *l;
	int ret;

	ret = parse_opts(argc, argv, &o, true);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (o.events_path) {
		sink.json = strcmp(o.events_path, "-") ? fopen(o.events_path, "ae") : stdout;
		if (!sink.json) {
			p_err("cannot open events file '%s': %s", o.events_path, strerror(errno));
			return EXIT_USAGE;
		}
	}
	l = adopt_or_load(o.pin_dir);
	ret = l ? serve(l, &sink) : 1;
	loader__destroy(l);	/* the pinned links keep the programs attached */
	if (sink.json && sink.json != stdout)
		fclose(sink.json);
	rule_cache_free(&cache);
	return ret;
}

int do_unload(int argc, char **argv)
{
	struct daemon_opts o = {};
	int ret, err;

	ret = parse_opts(argc, argv, &o, false);
	if (ret)
		return ret < 0 ? 0 : ret;
	err = loader__unpin(o.pin_dir);
	if (err) {
		p_err("cannot remove %s: %s", o.pin_dir, strerror(-err));
		return 1;
	}
	return 0;
}
