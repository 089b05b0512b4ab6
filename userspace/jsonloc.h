/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * jsonloc.h — where a key or value sits in JSON text that jansson has
 * already accepted. jansson reports positions only for syntax errors, but a
 * policy error ("unknown key", "unsupported glob") must point at its place
 * in the file too. The scanner trusts the text to be valid JSON: it only
 * has to skip strings (with escapes) and balanced brackets.
 */
#ifndef SBX_JSONLOC_H
#define SBX_JSONLOC_H

#include <stdbool.h>
#include <stddef.h>

/* One step of a path such as filesystem.denyRead[3]: a key, or (key NULL) an index. */
struct jloc_step {
	const char *key;
	size_t index;
};

/*
 * Byte offset of the value at @path (depth 0: the whole document), or of
 * the last key itself with @want_key. -1 if the path is not in the text.
 */
long jloc_find(const char *text, const struct jloc_step *path, size_t depth, bool want_key);
/* Offset of the first element (array) or first key (object) of the container at @off; -1 if empty. */
long jloc_first(const char *text, long off);
/* Offset of the array element after the one at @off; -1 after the last. */
long jloc_next(const char *text, long off);
/*
 * A 1-based line and column, counted as jansson counts them in its own
 * error messages: a column is a character (UTF-8 continuation bytes do not
 * count), a tab is one column.
 */
struct jloc_pos {
	long off;
	int line, col;
};

/*
 * Move @pos to @off: forward from where it is, or from the start when @off
 * lies behind it, so positions asked for in document order cost one pass.
 * Zero-initialise @pos before the first call.
 */
void jloc_advance(const char *text, struct jloc_pos *pos, long off);

#endif
