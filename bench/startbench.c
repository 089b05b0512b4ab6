// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * startbench — how long a command takes from fork() to its exit, over N
 * runs, so that starting a sandbox can be compared with starting nothing
 * (bench/startup.sh) and attaching a policy with creating a cgroup
 * (bench/scale.sh).
 *
 *   startbench [-n N] [--warmup N] [--first K] [--raw FILE] -- CMD [ARG...]
 *
 * Runs CMD N times (default 100), one after the other, after --warmup
 * untimed runs (default 1). Each run is timed with CLOCK_MONOTONIC from
 * just before fork() to just after waitpid() returns: process creation,
 * exec, the command's own work and its exit. The command's stdin is
 * /dev/null and its stdout and stderr go to a scratch file that is shown
 * when a run fails. "{}" in an ARG becomes the run's index, K, K+1, …
 * (--first K, default 0; warm-up runs count too), so that every run can
 * work on an object of its own: `startbench -n 1000 --warmup 0 --first 1 --
 * sbx-bpf attach /sys/fs/cgroup/x/s{} --policy p.json`. Prints one line:
 *
 *   runs=100 p50_ms=12.345 p95_ms=20.123 mean_ms=13.001 min_ms=11.002 max_ms=25.456
 *
 * p50 and p95 are nearest-rank percentiles (the value at rank ceil(p/100 * N)
 * of the sorted times), the same definition the bench scripts use when they pool
 * the --raw files of several calls. --raw FILE appends every timed run's
 * milliseconds to FILE, one per line.
 *
 * Exit 0; 1 when a run fails (a command that exits non-zero or dies is
 * never timed as a fast one: the run, its status and its output go to
 * stderr); 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define MAX_RUNS	1000000
#define OUT_SHOWN	4096	/* bytes of a failed run's output shown */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the value at rank ceil(p/100 * n) of sorted @v. */
static double percentile(const double *v, size_t n, unsigned p)
{
	size_t rank = (p * n + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

/* @argv with every "{}" in an argument replaced by @index, into @out (malloc'ed strings). */
static int expand(char **argv, char **out, long index)
{
	char num[24];

	snprintf(num, sizeof(num), "%ld", index);
	for (int i = 0; argv[i]; i++) {
		size_t len = strlen(argv[i]) + 1;
		const char *p;
		char *s, *d;

		for (p = argv[i]; (p = strstr(p, "{}")); p += 2)
			len += strlen(num);
		s = d = malloc(len);
		if (!s)
			return -1;
		for (p = argv[i]; *p;) {
			if (p[0] == '{' && p[1] == '}') {
				d = stpcpy(d, num);
				p += 2;
			} else {
				*d++ = *p++;
			}
		}
		*d = 0;
		out[i] = s;
	}
	return 0;
}

static void show_output(int fd)
{
	char buf[OUT_SHOWN];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n > 0) {
		buf[n] = 0;
		fprintf(stderr, "%s%s", buf, buf[n - 1] == '\n' ? "" : "\n");
	} else {
		fprintf(stderr, "(none)\n");
	}
}

/* Run @argv once with @index; its time in ms into *ms. 0, or -1 after saying why. */
static int run_once(char **argv, int argc, long index, int out_fd, double *ms)
{
	char **args = calloc(argc + 1, sizeof(*args));
	int status, ret = -1;
	double t0;
	pid_t pid;

	if (!args || expand(argv, args, index)) {
		fprintf(stderr, "startbench: out of memory\n");
		goto out;
	}
	if (ftruncate(out_fd, 0) < 0 || lseek(out_fd, 0, SEEK_SET) < 0) {
		fprintf(stderr, "startbench: scratch file: %s\n", strerror(errno));
		goto out;
	}
	t0 = now_ms();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "startbench: fork: %s\n", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0 && null != 0) {
			dup2(null, 0);
			close(null);
		}
		dup2(out_fd, 1);
		dup2(out_fd, 2);
		execvp(args[0], args);
		dprintf(2, "startbench: cannot execute '%s': %s\n", args[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "startbench: waitpid: %s\n", strerror(errno));
			goto out;
		}
	}
	*ms = now_ms() - t0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		ret = 0;
		goto out;
	}
	fprintf(stderr, "startbench: run %ld: '%s'", index, args[0]);
	for (int i = 1; i < argc; i++)
		fprintf(stderr, " '%s'", args[i]);
	if (WIFEXITED(status))
		fprintf(stderr, " exited %d; its output:\n", WEXITSTATUS(status));
	else
		fprintf(stderr, " died of signal %d; its output:\n", WTERMSIG(status));
	show_output(out_fd);
out:
	for (int i = 0; args && i < argc; i++)
		free(args[i]);
	free(args);
	return ret;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: startbench [-n N] [--warmup N] [--first K] [--raw FILE] -- CMD [ARG...]\n");
}

/* A whole number from 0 to MAX_RUNS, or -1. */
static long count_arg(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return errno || end == s || *end || v < 0 || v > MAX_RUNS ? -1 : v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "first", required_argument, NULL, 'f' },
		{ "raw", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	long runs = 100, warmup = 1, first = 0, index;
	const char *raw_path = NULL;
	char tmpl[] = "/tmp/startbench.XXXXXX";
	double *ms, sum = 0;
	FILE *raw = NULL;
	int c, out_fd;

	while ((c = getopt_long(argc, argv, "+n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			runs = count_arg(optarg);
			if (runs < 1)
				goto bad;
			break;
		case 'w':
			warmup = count_arg(optarg);
			if (warmup < 0)
				goto bad;
			break;
		case 'f':
			first = count_arg(optarg);
			if (first < 0)
				goto bad;
			break;
		case 'r': raw_path = optarg; break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (optind >= argc)
		goto bad;
	argv += optind;
	argc -= optind;

	/*
	 * Close-on-exec: the command gets it as stdout and stderr only. A stray
	 * descriptor would be one `sbx-bpf run` must have judged on use, turning
	 * file_permission on for the run (what a shell that leaks one costs).
	 */
	out_fd = mkostemp(tmpl, O_CLOEXEC);
	if (out_fd < 0) {
		fprintf(stderr, "startbench: scratch file %s: %s\n", tmpl, strerror(errno));
		return 1;
	}
	unlink(tmpl);
	/* "e": close-on-exec too (see out_fd below): a file it inherited costs `run` ~100 M instructions. */
	if (raw_path && !(raw = fopen(raw_path, "ae"))) {
		fprintf(stderr, "startbench: '%s': %s\n", raw_path, strerror(errno));
		return 1;
	}
	ms = calloc(runs, sizeof(*ms));
	if (!ms) {
		fprintf(stderr, "startbench: out of memory\n");
		return 1;
	}
	index = first;
	for (long i = 0; i < warmup; i++, index++) {
		double ignored;

		if (run_once(argv, argc, index, out_fd, &ignored))
			return 1;
	}
	for (long i = 0; i < runs; i++, index++) {
		if (run_once(argv, argc, index, out_fd, &ms[i]))
			return 1;
		sum += ms[i];
		if (raw)
			fprintf(raw, "%.3f\n", ms[i]);
	}
	if (raw && fclose(raw)) {
		fprintf(stderr, "startbench: '%s': %s\n", raw_path, strerror(errno));
		return 1;
	}
	qsort(ms, runs, sizeof(*ms), cmp_double);
	printf("runs=%ld p50_ms=%.3f p95_ms=%.3f mean_ms=%.3f min_ms=%.3f max_ms=%.3f\n", runs,
	       percentile(ms, runs, 50), percentile(ms, runs, 95), sum / runs, ms[0], ms[runs - 1]);
	return 0;
bad:
	usage(stderr);
	return 2;
}
