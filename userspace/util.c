// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>

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

size_t str_join(char *buf, size_t sz, const char *a, const char *b, const char *c)
{
	const char *part[] = { a, b, c };
	size_t len = 0, n;

	for (int i = 0; i < 3; i++) {
		n = strlen(part[i]);
		if (len < sz)
			memcpy(buf + len, part[i], n < sz - len ? n : sz - len);
		len += n;
	}
	buf[len < sz ? len : sz - 1] = '\0';
	return len;
}

int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= n;
	}
	return 0;
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

size_t utf8_seq_len(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp, min;
	size_t n;

	if (!len)
		return 0;
	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		n = 2, cp = u[0] & 0x1f, min = 0x80;
	else if ((u[0] & 0xf0) == 0xe0)
		n = 3, cp = u[0] & 0x0f, min = 0x800;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		n = 4, cp = u[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (u[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

bool utf8_valid(const char *s)
{
	for (size_t len = strlen(s), n; len; s += n, len -= n)
		if (!(n = utf8_seq_len(s, len)))
			return false;
	return true;
}

char *utf8_sanitize(const char *s, size_t len)
{
	char *out = malloc(len * 3 + 1), *o = out;	/* U+FFFD is 3 bytes per bad byte */

	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq_len(s + i, len - i);

		if (n) {
			memcpy(o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	*o = '\0';
	return out;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Close every descriptor but the @n of @keep, sorted. 0, or -1 (a seccomp filter may refuse close_range). */
static int close_all_but(const int *keep, size_t n)
{
	unsigned int from = 0;

	for (size_t i = 0; i < n; i++) {
		if ((unsigned int)keep[i] > from && close_range(from, keep[i] - 1, 0))
			return -1;
		from = keep[i] + 1;
	}
	return close_range(from, ~0U, 0);
}

/*
 * The child of hold_until_exit: @keep sorted, @rfd (among them) the pipe's
 * read end. A child that could not close the rest, the pipe's write end
 * among it, would wait for ever: it leaves at once, and the parent's exit
 * does the last close, as without it.
 */
static _Noreturn void hold_child(const int *keep, size_t n, int rfd, const char *name)
{
	sigset_t none;
	char c;

	if (close_all_but(keep, n))
		_exit(0);
	setsid();	/* no terminal's signals, no part in the caller's job */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, name);
	/* EOF once the parent, the only other holder of the write end, is gone. */
	while (read(rfd, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

int hold_until_exit(const int *fds, size_t n, const char *name)
{
	int *keep = malloc((n + 1) * sizeof(*keep)), p[2], err;
	size_t k = 0;
	pid_t pid;

	if (!keep)
		return -ENOMEM;
	if (pipe2(p, O_CLOEXEC)) {
		err = -errno;
		free(keep);
		return err;
	}
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)	/* a -1 would read as "close everything above" */
			keep[k++] = fds[i];
	keep[k++] = p[0];
	qsort(keep, k, sizeof(*keep), int_cmp);
	pid = fork();
	if (pid == 0)
		hold_child(keep, k, p[0], name);
	err = pid < 0 ? -errno : 0;
	free(keep);
	close(p[0]);
	if (err)
		close(p[1]);
	return err;		/* p[1] goes with this process: the child's signal */
}

unsigned long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

long long now_ms(void)
{
	return (long long)(clock_ns(CLOCK_MONOTONIC) / 1000000);
}

/* Whether SBX_TRACE_PHASES is set: asked once. */
static bool tracing_phases(void)
{
	static int on = -1;

	if (on < 0)
		on = getenv("SBX_TRACE_PHASES") != NULL;
	return on;
}

/* With SBX_TRACE_PHASES, a line of what a phase chose ("sbx-bpf: note …"), which readers of phases skip. */
void trace_note(const char *fmt, ...)
{
	va_list ap;

	if (!tracing_phases())
		return;
	fprintf(stderr, "sbx-bpf: note ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void trace_phase(const char *what)
{
	struct rusage ru;
	char up[64];
	double idle;

	if (!tracing_phases())
		return;
	if (getrusage(RUSAGE_SELF, &ru))
		ru.ru_minflt = -1;
	/* The CPUs' idle time so far (/proc/uptime, in hundredths of a second). */
	if (read_file("/proc/uptime", up, sizeof(up)) <= 0 || sscanf(up, "%*f %lf", &idle) != 1)
		idle = 0;
	fprintf(stderr, "sbx-bpf: phase %s %llu %ld %lld\n", what, clock_ns(CLOCK_MONOTONIC), ru.ru_minflt,
		(long long)(idle * 100 + 0.5));
}
