// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * openbench — how many open(O_RDONLY)+close() per second this process gets,
 * so that the cost of lsm/file_open can be compared with and without
 * sbx-bpf (bench/open-overhead.sh, bench/compare.sh, bench/scale.sh).
 *
 *   openbench [--seconds S | --iterations N] [--stat] PATH...
 *   openbench [--seconds S | --iterations N] --create DIR
 *   openbench [--seconds S | --iterations N] --read PATH...
 *   openbench [--seconds S | --iterations N] --write PATH...
 *
 * Opens the PATHs round-robin in a tight loop, for S seconds (default 1) or
 * N operations. --stat does a stat() before each open, as many programs do.
 * --create makes a file instead: open(DIR/openbench.PID, O_CREAT|O_EXCL|
 * O_WRONLY), close(), unlink(): what a build or an editor does to a
 * scratch file, through sbx-bpf's create, open and unlink hooks (DIR must
 * be writable: an allowWrite directory inside a sandbox).
 * --read opens each PATH once and then reads one byte (pread at 0) from
 * the descriptors round-robin: the cost of lsm/file_permission, which
 * judges every use of a descriptor.
 * --write opens each PATH as a program writing a file out does (the
 * shell's >, Python's open(PATH, "w"): O_WRONLY|O_CREAT|O_TRUNC, made on
 * first use, emptied each time) and closes it: the open and its
 * truncation (the PATHs in an allowWrite directory inside a sandbox).
 * A short untimed warm-up fills the dentry cache first. Prints one line:
 *
 *   ops_per_sec=123456.7 ns_per_op=8100.2 ops=185000 seconds=1.498 mode=open paths=3
 *
 * (mode=open, stat+open, create+unlink, read or write; paths=0 for --create).
 *
 * Exit 0; 1 if any call fails (the benchmark must never time a refusal);
 * 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#define WARMUP_OPS	1000
#define CLOCK_EVERY	256	/* operations between two clock reads in --seconds mode */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --create: the scratch file, DIR/openbench.PID; NULL: open PATHs. */
static char create_path[4096];

/* Create, close and remove the scratch file: 0, or -1 after printing what failed. */
static int one_create(void)
{
	int fd = open(create_path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);

	if (fd < 0) {
		fprintf(stderr, "openbench: create '%s': %s\n", create_path, strerror(errno));
		return -1;
	}
	close(fd);
	if (unlink(create_path) < 0) {
		fprintf(stderr, "openbench: unlink '%s': %s\n", create_path, strerror(errno));
		return -1;
	}
	return 0;
}

/* --read: the descriptors, one per PATH, opened before timing. */
static int *read_fds;

static int one_read(int i, const char *path)
{
	char c;

	if (pread(read_fds[i], &c, 1, 0) < 0) {
		fprintf(stderr, "openbench: read '%s': %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* --write: the open's flags; 0: open for reading. */
static int write_flags;

/* One operation on PATH (the @i-th): 0, or -1 after printing what failed. */
static int one_op(int i, const char *path, int do_stat)
{
	struct stat st;
	int fd;

	if (create_path[0])
		return one_create();
	if (read_fds)
		return one_read(i, path);
	if (do_stat && stat(path, &st) < 0) {
		fprintf(stderr, "openbench: stat '%s': %s\n", path, strerror(errno));
		return -1;
	}
	fd = open(path, write_flags ? write_flags : O_RDONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "openbench: open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: openbench [--seconds S | --iterations N] [--stat] PATH...\n"
		     "       openbench [--seconds S | --iterations N] --create DIR\n"
		     "       openbench [--seconds S | --iterations N] --read PATH...\n"
		     "       openbench [--seconds S | --iterations N] --write PATH...\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "stat", no_argument, NULL, 'S' },
		{ "create", required_argument, NULL, 'c' },
		{ "read", no_argument, NULL, 'r' },
		{ "write", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	double seconds = 1, t0, t1;
	unsigned long long ops = 0, iterations = 0;
	int c, npaths, do_stat = 0, do_read = 0, i = 0;
	char **paths, *end;
	const char *create_dir = NULL;
	static char *none[] = { "" };

	while ((c = getopt_long(argc, argv, "s:n:h", opts, NULL)) != -1) {
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
		case 'S': do_stat = 1; break;
		case 'r': do_read = 1; break;
		case 'w': write_flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC; break;
		case 'c': create_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	paths = argv + optind;
	npaths = argc - optind;
	if (create_dir) {
		if (npaths || do_stat || do_read || write_flags || !create_dir[0])
			goto bad;
		if ((size_t)snprintf(create_path, sizeof(create_path), "%s/openbench.%d", create_dir,
				     (int)getpid()) >= sizeof(create_path))
			goto bad;
		unlink(create_path);	/* a leftover of a killed run */
		paths = none;
		npaths = 1;
	} else if (npaths < 1 || do_read + do_stat + !!write_flags > 1) {
		goto bad;
	}
	if (do_read) {
		read_fds = calloc(npaths, sizeof(*read_fds));
		for (int k = 0; read_fds && k < npaths; k++) {
			read_fds[k] = open(paths[k], O_RDONLY | O_CLOEXEC);
			if (read_fds[k] < 0) {
				fprintf(stderr, "openbench: open '%s': %s\n", paths[k], strerror(errno));
				return 1;
			}
		}
		if (!read_fds)
			return 1;
	}

	for (int w = 0; w < WARMUP_OPS; w++)
		if (one_op(w % npaths, paths[w % npaths], do_stat))
			return 1;

	t0 = now();
	if (iterations) {
		for (; ops < iterations; ops++) {
			if (one_op(i, paths[i], do_stat))
				return 1;
			if (++i == npaths)
				i = 0;
		}
		t1 = now();
	} else {
		for (;;) {
			for (int k = 0; k < CLOCK_EVERY; k++, ops++) {
				if (one_op(i, paths[i], do_stat))
					return 1;
				if (++i == npaths)
					i = 0;
			}
			t1 = now();
			if (t1 - t0 >= seconds)
				break;
		}
	}
	printf("ops_per_sec=%.1f ns_per_op=%.1f ops=%llu seconds=%.3f mode=%s paths=%d\n",
	       ops / (t1 - t0), (t1 - t0) * 1e9 / ops, ops, t1 - t0,
	       create_dir ? "create+unlink" : do_read ? "read" : write_flags ? "write" : do_stat ? "stat+open" : "open",
	       create_dir ? 0 : npaths);
	return 0;
bad:
	usage(stderr);
	return 2;
}
