// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * evflood — a flood of violations for bench/events.sh: open(O_RDONLY) of
 * files that the sandbox this process runs in denies, in a tight loop.
 *
 *   evflood [--seconds S] [--same] DIR N
 *
 * Opens DIR/f0, DIR/f1, … DIR/f(N-1) round-robin for S seconds (default 3):
 * every open is a distinct violation (another path), and the kernel's
 * coalescing, which folds identical violations of one process within a
 * window into one record, can hardly fold them when N is a few times its
 * slot table (SBX_COALESCE_SLOTS, 8192, direct-mapped): by the time a path
 * comes back, another has taken its slot. --same opens DIR/f0 every time:
 * one violation repeated, the case coalescing is for. The files must exist (an open of a
 * missing file fails before any LSM hook runs). Prints one line:
 *
 *   denied=123456 seconds=3.001 per_sec=41138.3
 *
 * Exit 0; 1 when an open does anything but fail with EACCES (the flood
 * must be all violations); 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLOCK_EVERY	64	/* opens between two clock reads */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: evflood [--seconds S] [--same] DIR N\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "same", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	double seconds = 3, t0, t1;
	unsigned long long denied = 0;
	unsigned long n, i = 0;
	char **paths, *end;
	int c, same = 0;

	while ((c = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = strtod(optarg, &end);
			if (*end || !(seconds > 0))
				goto bad;
			break;
		case 'S': same = 1; break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (argc - optind != 2)
		goto bad;
	errno = 0;
	n = strtoul(argv[optind + 1], &end, 10);
	if (errno || *end || !n || n > 10000000 || argv[optind + 1][0] == '-')
		goto bad;
	if (same)
		n = 1;
	/* The paths are made before the clock starts: the loop is open(2) and nothing else. */
	paths = calloc(n, sizeof(*paths));
	for (unsigned long k = 0; paths && k < n; k++)
		if (asprintf(&paths[k], "%s/f%lu", argv[optind], k) < 0)
			paths = NULL;
	if (!paths) {
		fprintf(stderr, "evflood: out of memory\n");
		return 1;
	}

	t0 = now();
	for (;;) {
		for (int k = 0; k < CLOCK_EVERY; k++) {
			int fd = open(paths[i], O_RDONLY | O_CLOEXEC);

			if (fd >= 0 || errno != EACCES) {
				fprintf(stderr, "evflood: open '%s': %s, not a denial\n", paths[i],
					fd >= 0 ? "opened" : strerror(errno));
				return 1;
			}
			denied++;
			if (++i == n)
				i = 0;
		}
		t1 = now();
		if (t1 - t0 >= seconds)
			break;
	}
	printf("denied=%llu seconds=%.3f per_sec=%.1f\n", denied, t1 - t0, denied / (t1 - t0));
	return 0;
bad:
	usage(stderr);
	return 2;
}
