// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

int read_file(const char *path, char *buf, size_t sz)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t off = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (off + 1 < sz) {
		n = read(fd, buf + off, sz - 1 - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		off += n;
	}
	buf[off] = '\0';
	return (int)off;
}

int write_file(const char *path, const char *s)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(s);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int parse_kernel_release(const char *release, int *major, int *minor, int *patch)
{
	int n = 0;

	*major = *minor = *patch = 0;
	if (sscanf(release, "%d.%d%n", major, minor, &n) < 2)
		return -EINVAL;
	if (release[n] == '.')
		sscanf(release + n + 1, "%d", patch);
	return 0;
}

char *strip(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

bool list_has(const char *list, const char *word)
{
	size_t wl = strlen(word);
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == wl && !strncmp(p, word, wl))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}
