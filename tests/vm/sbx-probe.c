// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbx-probe — performs one system call for a test and reports exactly what
 * the kernel answered, so tests assert on errno names rather than on the
 * wording of some tool's error message.
 *
 *   sbx-probe open PATH [r|w|rw]    open(2) (then read one byte if readable)
 *   sbx-probe pid                   print own pid (for matching events)
 *
 * Prints "OK" or the errno name (e.g. "EACCES"); exit 0 on success, 1 on a
 * refused call, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *errno_name(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case EEXIST: return "EEXIST";
	case EISDIR: return "EISDIR";
	case ELOOP: return "ELOOP";
	case EXDEV: return "EXDEV";
	case EINVAL: return "EINVAL";
	}
	return "EOTHER";
}

static int report(int rc)
{
	if (rc < 0) {
		int e = errno;

		printf("%s\n", errno_name(e));
		fprintf(stderr, "sbx-probe: %s\n", strerror(e));
		return 1;
	}
	printf("OK\n");
	return 0;
}

static int do_open(const char *path, const char *mode)
{
	int flags = O_RDONLY, fd;
	char c;

	if (!strcmp(mode, "w"))
		flags = O_WRONLY;
	else if (!strcmp(mode, "rw"))
		flags = O_RDWR;
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return report(-1);
	if (flags != O_WRONLY && read(fd, &c, 1) < 0) {
		close(fd);
		return report(-1);
	}
	close(fd);
	return report(0);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "open"))
		return do_open(argv[2], argc > 3 ? argv[3] : "r");
	if (argc == 2 && !strcmp(argv[1], "pid")) {
		printf("%d\n", (int)getpid());
		return 0;
	}
	fprintf(stderr, "usage: sbx-probe open PATH [r|w|rw] | pid\n");
	return 2;
}
