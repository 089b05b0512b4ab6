/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fuzz.h — what the libFuzzer targets (tests/fuzz/fuzz_*.c) share: the
 * input as a C string, and CHECK, which aborts (libFuzzer keeps the input
 * as a crash) when an invariant of the code under test does not hold.
 */
#ifndef SBX_FUZZ_H
#define SBX_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Files in messages: a parser's error names this. */
#define FUZZ_NAME	"fuzz.json"

#define CHECK(cond, ...) do {							\
	if (!(cond)) {								\
		fprintf(stderr, "%s:%d: invariant '%s' broken: ", __FILE__,	\
			__LINE__, #cond);					\
		fprintf(stderr, __VA_ARGS__);					\
		fputc('\n', stderr);						\
		abort();							\
	}									\
} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* @data as a NUL-terminated string, cut at its first NUL as a C caller would see it. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * Does @msg start "FILE:LINE:COL: " with FILE @name, LINE in 1..@max_line
 * and COL at least 1? What every positioned parser message must look like.
 */
static inline int fuzz_positioned(const char *msg, const char *name, long max_line)
{
	size_t n = strlen(name);
	long line, col;
	char *end;

	if (strncmp(msg, name, n) || msg[n] != ':')
		return 0;
	line = strtol(msg + n + 1, &end, 10);
	if (*end != ':' || line < 1 || line > max_line)
		return 0;
	col = strtol(end + 1, &end, 10);
	return end[0] == ':' && end[1] == ' ' && col >= 1;
}

/* Lines of @s as jansson counts them (1 + newlines). */
static inline long fuzz_lines(const char *s)
{
	long n = 1;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#endif
