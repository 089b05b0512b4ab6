// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * evwatch.c — `sbx-bpf events`: what the running daemon collects, from its
 * socket (evsock.h): the recent events, or the live stream with --follow.
 *
 * The daemon sends JSON lines; the human lines are made here from them
 * (event_json_format_human), the same as `run` prints. SIGINT and SIGTERM
 * arrive through a signalfd polled with the socket, so a watcher stops at
 * once and never in the middle of a line.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "cli.h"
#include "events.h"
#include "evsock.h"

#define RECENT_DEFAULT	100		/* lines without --follow */
#define LINE_MAX_BYTES	(1u << 20)

struct events_opts {
	const char *socket;
	const char *cgroup;
	bool follow;
	long backlog;			/* -1: the mode's default */
};

static void events_usage(FILE *out)
{
	fprintf(out,
		"Usage: sbx-bpf events [--follow] [--cgroup CGROUP|ID] [--backlog N] [--json]\n"
		"                      [--socket PATH]\n"
		"\n"
		"The events the running daemon collects, from its socket (default\n"
		"%s, root only). Without --follow: the last N (--backlog,\n"
		"default %d, at most %d), then exit. With --follow: the last N (default 0),\n"
		"then each new event as it comes, until SIGINT (exit 0) or until the daemon\n"
		"goes away (exit 1).\n"
		"--cgroup: only the events of this cgroup, as the process's cgroup or as\n"
		"the sandbox that decided: a sandbox name, a cgroup v2 path, or a cgroup id.\n"
		"--json: the daemon's JSON lines as they come (docs/events.md).\n",
		EVSOCK_PATH, RECENT_DEFAULT, EVSOCK_BACKLOG);
}

static int parse(int argc, char **argv, struct events_opts *o)
{
	static const struct option longopts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "backlog", required_argument, NULL, 'b' },
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char *end;
	int c;

	o->socket = EVSOCK_PATH;
	o->backlog = -1;
	while ((c = getopt_long(argc, argv, "fjvh", longopts, NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		switch (c) {
		case 'f': o->follow = true; break;
		case 'c': o->cgroup = optarg; break;
		case 's': o->socket = optarg; break;
		case 'b':
			errno = 0;
			o->backlog = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o->backlog < 0 || o->backlog > EVSOCK_BACKLOG) {
				p_err("--backlog takes a number of lines from 0 to %d, not '%s'", EVSOCK_BACKLOG,
				      optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h': events_usage(stdout); return -1;
		default: goto usage;
		}
	}
	if (optind == argc)
		return 0;
usage:
	events_usage(stderr);
	return EXIT_USAGE;
}

/* --cgroup: a number is a cgroup id, anything else a sandbox name or a path. 0 after saying why. */
static __u64 filter_id(const char *arg)
{
	char path[PATH_MAX], *end;
	unsigned long long id;

	if (arg[0] >= '1' && arg[0] <= '9') {
		errno = 0;
		id = strtoull(arg, &end, 10);
		if (!*end && !errno)
			return id;
	}
	return cli_cgroup_id(arg, path, sizeof(path));
}

static void show_human(const json_t *j)
{
	static char line[LINE_MAX_BYTES];
	const char *type = json_string_value(json_object_get(j, "type"));

	if (type && !strcmp(type, "gap"))
		printf("sbx-bpf: %lld events dropped here: this watcher fell behind the daemon\n",
		       (long long)json_integer_value(json_object_get(j, "dropped")));
	else if (event_json_format_human(j, line, sizeof(line)) >= 0)
		printf("%s\n", line);
}

/* One line from the daemon. 0, or 1 after it said {"error":…}. */
static int show(const char *text, size_t len)
{
	json_t *j = json_loadb(text, len, 0, NULL);
	const char *err;

	if (!j) {
		p_err("the daemon sent a line that is not JSON");
		return 1;
	}
	err = json_string_value(json_object_get(j, "error"));
	if (err) {
		p_err("the daemon refused: %s", err);
		json_decref(j);
		return 1;
	}
	if (cli.json)
		printf("%.*s\n", (int)len, text);
	else
		show_human(j);
	json_decref(j);
	return 0;
}

/* Show the whole lines of buf[0..*len) and keep the rest. -1 to go on, or 1 after an error line. */
static int show_lines(char *buf, size_t *len)
{
	char *start = buf, *nl;

	while ((nl = memchr(start, '\n', buf + *len - start))) {
		if (show(start, nl - start))
			return 1;
		start = nl + 1;
	}
	*len -= start - buf;
	memmove(buf, start, *len);
	if (*len == LINE_MAX_BYTES) {
		p_err("the daemon sent a line longer than %u bytes", LINE_MAX_BYTES);
		return 1;
	}
	fflush(stdout);
	return -1;
}

/* The end of the stream: expected without --follow, the daemon gone with it. */
static int stream_end(bool follow, ssize_t n, const char *path)
{
	if (n < 0) {
		p_err("reading %s: %s", path, strerror(errno));
		return 1;
	}
	if (!follow)
		return 0;
	p_err("the daemon closed %s (it stopped)", path);
	return 1;
}

/* Lines until the end, an error, or SIGINT/SIGTERM (0). */
static int stream(int fd, bool follow, const char *path)
{
	static char buf[LINE_MAX_BYTES];
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN } };
	size_t len = 0;
	sigset_t mask;
	int ret = -1;
	ssize_t n;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	p[1] = (struct pollfd){ .fd = signalfd(-1, &mask, SFD_CLOEXEC), .events = POLLIN };
	if (p[1].fd < 0)
		sigprocmask(SIG_UNBLOCK, &mask, NULL);	/* then SIGINT ends us the default way */
	while (ret < 0) {
		int ready = poll(p, 2, -1);

		if (ready < 0 && errno == EINTR)
			continue;	/* revents are stale: a read now could block past SIGINT */
		if (ready < 0) {
			p_err("poll: %s", strerror(errno));
			ret = 1;
		} else if (p[1].revents & POLLIN) {
			ret = 0;	/* the operator is done */
		} else if (p[0].revents) {
			n = read(fd, buf + len, sizeof(buf) - len);
			if (n > 0) {
				len += n;
				ret = show_lines(buf, &len);
			} else if (n == 0 || errno != EINTR) {
				ret = stream_end(follow, n, path);
			}
		}
	}
	fflush(stdout);
	if (p[1].fd >= 0)
		close(p[1].fd);
	return ret;	/* SIGINT stays blocked, pending: the command ends here */
}

static int unreachable(const char *path, int err)
{
	if (err == ENOENT || err == ECONNREFUSED)
		p_err("no daemon is running (%s: %s)", path, strerror(err));
	else
		p_err("cannot reach the daemon at %s: %s%s", path, strerror(err),
		      err == EACCES ? " (the events are root's)" : "");
	return 1;
}

int do_events(int argc, char **argv)
{
	struct events_opts o = {};
	json_t *req;
	__u64 id = 0;
	int ret, fd;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (o.cgroup && !(id = filter_id(o.cgroup)))
		return 1;
	if (o.backlog < 0)
		o.backlog = o.follow ? 0 : RECENT_DEFAULT;
	req = json_pack("{s:s, s:o, s:I}", "cmd", o.follow ? "follow" : "recent",
			"cgroup", id ? json_integer((json_int_t)id) : json_null(), "backlog", (json_int_t)o.backlog);
	fd = evsock_connect(o.socket, req, 1000);
	json_decref(req);
	if (fd < 0)
		return unreachable(o.socket, -fd);
	ret = stream(fd, o.follow, o.socket);
	close(fd);
	return ret;
}
