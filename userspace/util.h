/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* util.h — small helpers shared by the userspace modules. */
#ifndef SBX_UTIL_H
#define SBX_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Cleanup idiom used project-wide: variables freed when they leave scope. */
static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }
#define _cleanup_free_ __attribute__((cleanup(freep)))
#define _cleanup_close_ __attribute__((cleanup(closep)))

/* Read up to sz-1 bytes of @path into @buf, NUL-terminated. Bytes read or -errno. */
int read_file(const char *path, char *buf, size_t sz);
/* Write @s to an existing file (sysfs/cgroupfs style). 0 or -errno. */
int write_file(const char *path, const char *s);
/* All @len bytes of @buf to @fd, through short writes and EINTR: 0 or -errno (-EIO: nothing written). */
int write_all(int fd, const char *buf, size_t len);
/*
 * @a, @b and @c (none NULL) one after the other into @buf of @sz bytes, cut
 * to fit and always terminated (sz > 0): snprintf("%s%s%s") without its
 * format parsing, ten times the cost on paths. The whole length, as
 * snprintf's: >= @sz when cut.
 */
size_t str_join(char *buf, size_t sz, const char *a, const char *b, const char *c);

/* "6.1.0-50-amd64" → 6, 1, 0. 0 or -EINVAL. */
int parse_kernel_release(const char *release, int *major, int *minor, int *patch);

/* Strip trailing whitespace/newlines in place; returns @s. */
char *strip(char *s);

/* Does the comma-separated @list contain @word exactly? */
bool list_has(const char *list, const char *word);

/*
 * Bytes of the well-formed UTF-8 sequence at @s (at most @len bytes): 1-4,
 * or 0 when it is not one (stray continuation, overlong form, surrogate,
 * past U+10FFFF, cut short).
 */
size_t utf8_seq_len(const char *s, size_t len);
/* Is @s well-formed UTF-8 throughout (what a JSON string can hold)? */
bool utf8_valid(const char *s);
/*
 * @s[0..@len) as a NUL-terminated string of well-formed UTF-8: each byte
 * that is not part of a well-formed sequence becomes U+FFFD. Paths and
 * comm names are bytes, but JSON and syslog structured data must be UTF-8.
 * malloc'ed; NULL with errno ENOMEM.
 */
char *utf8_sanitize(const char *s, size_t len);

/*
 * Keep @fds (@n of them) open in a child until this process has exited,
 * then let the child exit: the last close of each descriptor, and whatever
 * the kernel does then, happens in the child, after this process's caller
 * has its status. The child keeps nothing else open (no pipe, terminal or
 * file of ours) and is in a session of its own. Call it last, just before
 * exiting: the child holds on until this process's last descriptor is
 * gone. @name: the child's command name. 0 or -errno (nothing forked).
 */
int hold_until_exit(const int *fds, size_t n, const char *name);

/* Clock @id now, in nanoseconds. */
unsigned long long clock_ns(clockid_t id);

/* CLOCK_MONOTONIC now, in milliseconds: for deadlines and timeouts. */
long long now_ms(void);

/*
 * SBX_TRACE_PHASES=1: "sbx-bpf: phase WHAT NS FAULTS IDLE" on stderr, with
 * CLOCK_MONOTONIC at the end of the phase named @what, the page faults so
 * far and the CPUs' idle time so far (/proc/uptime, in 10 ms). Under the
 * benchmarks' QEMU -icount a nanosecond is an instruction, so the
 * differences say where start-up goes (bench/startup.sh); a fresh page
 * alone is some 5,000 instructions there (the kernel zeroes it with a
 * `rep stosb`, counted per byte).
 */
void trace_phase(const char *what);
void trace_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
