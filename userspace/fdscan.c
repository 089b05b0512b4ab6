// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fdscan.c — descriptors a sandbox holds from before its policy (fdscan.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "fdscan.h"

#define MEM_MAJOR	1	/* 1:1 /dev/mem, 1:2 /dev/kmem, 1:4 /dev/port */

bool fdscan_judged(const struct stat *st)
{
	unsigned int minor_nr = minor(st->st_rdev);

	if (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode) || S_ISBLK(st->st_mode))
		return true;
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == MEM_MAJOR &&
	       (minor_nr == 1 || minor_nr == 2 || minor_nr == 4);
}

bool fdscan_self_passes_on(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	struct stat st;
	bool found = false;
	int fd, flags;

	if (!d)
		return true;	/* cannot tell: judge */
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		fd = atoi(e->d_name);
		if (fd == dirfd(d))
			continue;
		flags = fcntl(fd, F_GETFD);
		if (flags < 0 || (flags & FD_CLOEXEC) || fstat(fd, &st))
			continue;
		found = fdscan_judged(&st) && !(fd <= 2 && S_ISREG(st.st_mode));
	}
	closedir(d);
	return found;
}

/* Does process @pid hold a judged descriptor? 1, 0 (none, or it is gone), -errno. */
static int pid_holds(const char *pid)
{
	char dir[64], p[PATH_MAX];
	struct dirent *e;
	struct stat st;
	int found = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		/* stat follows the magic link to the open file itself, deleted or not. */
		if (!stat(p, &st))
			found = fdscan_judged(&st);
	}
	closedir(d);
	return found;
}

static int procs_hold(const char *path)
{
	char p[PATH_MAX], line[32];
	int found = 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/cgroup.procs", path);
	f = fopen(p, "re");
	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		found = pid_holds(line);
	}
	fclose(f);
	return found;
}

int fdscan_cgroup(const char *path)
{
	char p[PATH_MAX];
	struct dirent *e;
	int found = procs_hold(path);
	DIR *d;

	if (found)
		return found;
	d = opendir(path);
	if (!d)
		return -errno;
	while (!found && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", path, e->d_name) >= sizeof(p))
			return closedir(d), -ENAMETOOLONG;
		found = fdscan_cgroup(p);
	}
	closedir(d);
	return found;
}
