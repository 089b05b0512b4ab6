// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * connectbench — how many socket()+connect()+close() per second this process
 * gets, so that the cost of sbx-bpf's lsm/socket_connect can be compared with
 * and without sbx-bpf (bench/connect-overhead.sh).
 *
 *   connectbench [--seconds S | --iterations N] [--warmup N] [--udp]
 *                [--addr A] [--port P]
 *   connectbench --serve [--addr A] [--port P]
 *
 * Client (the default): connects a fresh TCP socket to A:P (default
 * 127.0.0.1:5000) and closes it, in a tight loop, for S seconds (default 1.5)
 * or N operations. A TCP connect includes the three-way handshake over
 * loopback, so a server must be accepting on A:P: `connectbench --serve`.
 * --udp connects a UDP socket instead: no packet is sent and no server is
 * needed, the kernel only picks a route and a local port, so the LSM hook is
 * a much larger share of the operation; that figure isolates the hook's
 * cost, the TCP one shows what a real client pays.
 *
 * An untimed warm-up (default 500 operations with --seconds, none with
 * --iterations, which is for checks and counts) comes first. Prints one line:
 *
 *   ops_per_sec=12345.6 ns_per_op=81000.2 ops=18500 seconds=1.501 mode=tcp addr=127.0.0.1 port=5000
 *
 * Server (--serve): binds and listens on A:P, prints "listening A:P" once
 * it accepts connections, then accepts and closes every connection until
 * killed. It must run outside any sandbox: a sandbox denies
 * bind() to a port and listen() unless its policy has allowLocalBinding.
 *
 * A denied or failed call is never timed as a fast one: exit 1 with the
 * call, the destination and the errno's name ("... Permission denied
 * (EACCES)") on stderr. Exit 2 on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WARMUP_OPS	500
#define CLOCK_EVERY	16	/* operations between two clock reads in --seconds mode */
#define BACKLOG		4096	/* the kernel clamps it to net.core.somaxconn */

struct target {
	struct sockaddr_storage ss;
	socklen_t len;
	int family;
	int udp;
	char name[INET6_ADDRSTRLEN + 8];	/* "A:P" or "[A]:P", for messages */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The names the checks in connect-overhead.sh look for; others print as E<n>. */
static const char *errno_name(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ECONNRESET: return "ECONNRESET";
	case ECONNABORTED: return "ECONNABORTED";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ENETUNREACH: return "ENETUNREACH";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case EADDRINUSE: return "EADDRINUSE";
	case EAGAIN: return "EAGAIN";
	case EINTR: return "EINTR";
	case EMFILE: return "EMFILE";
	case ENFILE: return "ENFILE";
	case ENOBUFS: return "ENOBUFS";
	case ENOMEM: return "ENOMEM";
	case EINVAL: return "EINVAL";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	default: return NULL;
	}
}

/* "connectbench: CALL DEST (tcp): Permission denied (EACCES)"; returns -1. */
static int fail_call(const char *call, const struct target *t, int e)
{
	const char *n = errno_name(e);

	if (n)
		fprintf(stderr, "connectbench: %s %s (%s): %s (%s)\n", call, t->name,
			t->udp ? "udp" : "tcp", strerror(e), n);
	else
		fprintf(stderr, "connectbench: %s %s (%s): %s (E%d)\n", call, t->name,
			t->udp ? "udp" : "tcp", strerror(e), e);
	return -1;
}

static int parse_target(const char *addr, const char *port, struct target *t)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&t->ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&t->ss;
	char *end;
	long p = strtol(port, &end, 10);

	if (*end || end == port || p < 1 || p > 65535)
		return -1;
	memset(&t->ss, 0, sizeof(t->ss));
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = t->family = AF_INET;
		in->sin_port = htons((unsigned short)p);
		t->len = sizeof(*in);
		snprintf(t->name, sizeof(t->name), "%s:%ld", addr, p);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = t->family = AF_INET6;
		in6->sin6_port = htons((unsigned short)p);
		t->len = sizeof(*in6);
		snprintf(t->name, sizeof(t->name), "[%s]:%ld", addr, p);
		return 0;
	}
	return -1;
}

/*
 * SO_LINGER with a zero timeout makes the client's close() abort the
 * connection: it sends a RST and frees the socket at once, with no FIN
 * exchange. With an orderly close, every connection would stay 60 s in
 * TIME_WAIT on the side that closed first, holding its 4-tuple. To one
 * destination there are only ~28,000 ephemeral ports (32768-60999), so
 * beyond ~470 connections per second connect() would soon slow down while
 * the kernel hunts for a free port, then fail with EADDRNOTAVAIL: later
 * rounds would measure port hunting instead of the hook.
 *
 * The server closes normally. Its FIN moves its socket to FIN_WAIT, and the
 * client's RST then frees it. TIME_WAIT is entered only by a side that
 * receives the other's FIN after sending its own, and the client never
 * sends one, so neither side enters it. The server must not abort as well:
 * its RST can reach the client before connect() has returned, and connect()
 * then fails with ECONNRESET.
 */
static const struct linger abort_on_close = { .l_onoff = 1, .l_linger = 0 };

/* One socket()+connect()+close(): 0, or -1 after printing what failed. */
static int one_op(const struct target *t)
{
	int fd, e;

	fd = socket(t->family, (t->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail_call("socket", t, errno);
	if (!t->udp && setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof(abort_on_close))) {
		e = errno;
		close(fd);
		return fail_call("setsockopt(SO_LINGER)", t, e);
	}
	if (connect(fd, (const struct sockaddr *)&t->ss, t->len)) {
		e = errno;
		close(fd);
		return fail_call("connect", t, e);
	}
	close(fd);
	return 0;
}

/* --serve: accept and close connections on @t until killed. */
static int serve(struct target *t)
{
	int one = 1, fd, c;

	fd = socket(t->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fail_call("socket", t, errno);
		return 1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) {
		fail_call("setsockopt", t, errno);
		return 1;
	}
	if (bind(fd, (const struct sockaddr *)&t->ss, t->len)) {
		fail_call("bind", t, errno);
		return 1;
	}
	if (listen(fd, BACKLOG)) {
		fail_call("listen", t, errno);
		return 1;
	}
	printf("listening %s\n", t->name);
	fflush(stdout);
	for (;;) {
		c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c >= 0) {
			close(c);
			continue;
		}
		/* A client that reset before accept, or a signal: keep serving. */
		if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN)
			continue;
		fail_call("accept", t, errno);
		return 1;
	}
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: connectbench [--seconds S | --iterations N] [--warmup N] [--udp] "
		"[--addr A] [--port P]\n"
		"       connectbench --serve [--addr A] [--port P]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "udp", no_argument, NULL, 'u' },
		{ "serve", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *addr = "127.0.0.1", *port = "5000";
	double seconds = 1.5, t0, t1;
	unsigned long long ops = 0, iterations = 0;
	long warmup = -1;
	int c, udp = 0, do_serve = 0;
	struct target t;
	char *end;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = strtod(optarg, &end);
			if (*end || !(seconds > 0))
				goto bad;
			iterations = 0;
			break;
		case 'n':
			iterations = strtoull(optarg, &end, 10);
			if (*end || !iterations || optarg[0] == '-')
				goto bad;
			break;
		case 'w':
			warmup = strtol(optarg, &end, 10);
			if (*end || end == optarg || warmup < 0)
				goto bad;
			break;
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'u': udp = 1; break;
		case 'S': do_serve = 1; break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (optind != argc || parse_target(addr, port, &t))
		goto bad;
	if (do_serve && udp)
		goto bad;
	t.udp = udp;
	if (do_serve)
		return serve(&t);

	if (warmup < 0)
		warmup = iterations ? 0 : WARMUP_OPS;
	for (long w = 0; w < warmup; w++)
		if (one_op(&t))
			return 1;

	t0 = now();
	if (iterations) {
		for (; ops < iterations; ops++)
			if (one_op(&t))
				return 1;
		t1 = now();
	} else {
		for (;;) {
			for (int k = 0; k < CLOCK_EVERY; k++, ops++)
				if (one_op(&t))
					return 1;
			t1 = now();
			if (t1 - t0 >= seconds)
				break;
		}
	}
	printf("ops_per_sec=%.1f ns_per_op=%.1f ops=%llu seconds=%.3f mode=%s addr=%s port=%s\n",
	       ops / (t1 - t0), (t1 - t0) * 1e9 / ops, ops, t1 - t0, udp ? "udp" : "tcp", addr, port);
	return 0;
bad:
	usage(stderr);
	return 2;
}
