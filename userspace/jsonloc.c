// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include <jansson.h>

#include "jsonloc.h"

static long skip_ws(const char *t, long i)
{
	while (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')
		i++;
	return i;
}

/* @i at the opening quote; returns the offset just past the closing one. */
static long skip_string(const char *t, long i)
{
	for (i++; t[i] != '"'; i++)
		if (t[i] == '\\')
			i++;	/* the escaped character, even if it is a quote */
	return i + 1;
}

/* @i at the start of any value; returns the offset just past it. */
static long skip_value(const char *t, long i)
{
	int depth = 0;

	if (t[i] == '"')
		return skip_string(t, i);
	if (t[i] != '{' && t[i] != '[') {	/* number, true, false, null */
		while (t[i] && !strchr(",]} \t\r\n", t[i]))
			i++;
		return i;
	}
	do {
		if (t[i] == '"') {
			i = skip_string(t, i);
			continue;
		}
		if (t[i] == '{' || t[i] == '[')
			depth++;
		else if (t[i] == '}' || t[i] == ']')
			depth--;
		i++;
	} while (depth > 0);
	return i;
}

long jloc_first(const char *text, long off)
{
	long i;

	if (off < 0 || (text[off] != '[' && text[off] != '{'))
		return -1;
	i = skip_ws(text, off + 1);
	return text[i] == ']' || text[i] == '}' ? -1 : i;
}

long jloc_next(const char *text, long off)
{
	long i = skip_ws(text, skip_value(text, off));

	return text[i] == ',' ? skip_ws(text, i + 1) : -1;
}

/* Offset of the value of the member whose key is at @k. */
static long member_value(const char *t, long k)
{
	return skip_ws(t, skip_ws(t, skip_string(t, k)) + 1);	/* past the ':' */
}

/* Compare the key token at @k with @key; jansson decodes the escapes. */
static bool key_equals(const char *t, long k, const char *key)
{
	json_t *s = json_loadb(t + k, skip_string(t, k) - k, JSON_DECODE_ANY, NULL);
	bool eq = json_is_string(s) && !strcmp(json_string_value(s), key);

	json_decref(s);
	return eq;
}

static long find_member(const char *t, long obj, const char *key, bool want_key)
{
	if (obj < 0 || t[obj] != '{')
		return -1;
	for (long k = jloc_first(t, obj); k >= 0; k = jloc_next(t, member_value(t, k)))
		if (key_equals(t, k, key))
			return want_key ? k : member_value(t, k);
	return -1;
}

static long find_element(const char *t, long arr, size_t index)
{
	long e;

	if (arr < 0 || t[arr] != '[')
		return -1;
	for (e = jloc_first(t, arr); e >= 0 && index > 0; index--)
		e = jloc_next(t, e);
	return e;
}

long jloc_find(const char *text, const struct jloc_step *path, size_t depth, bool want_key)
{
	long off = skip_ws(text, 0);

	for (size_t d = 0; d < depth && off >= 0; d++) {
		if (path[d].key)
			off = find_member(text, off, path[d].key, want_key && d + 1 == depth);
		else
			off = find_element(text, off, path[d].index);
	}
	return off;
}

void jloc_advance(const char *text, struct jloc_pos *pos, long off)
{
	if (pos->line == 0 || off < pos->off)
		*pos = (struct jloc_pos){ .off = 0, .line = 1, .col = 1 };
	for (; pos->off < off && text[pos->off]; pos->off++) {
		if (text[pos->off] == '\n') {
			pos->line++;
			pos->col = 1;
		} else if (((unsigned char)text[pos->off] & 0xc0) != 0x80) {
			pos->col++;
		}
	}
}
