// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sink_jsonl.c — one JSON object per line (sbx-bpf's schema or OCSF) to a
 * file or stdout.
 *
 * Each record is one write(2) on an O_APPEND descriptor, so a reader never
 * sees half a line from us and nothing sits in a stdio buffer when the
 * daemon dies. Rotation is by size, done here so that it needs no cron job:
 * PATH → PATH.1 → … → PATH.keep. An external logrotate works too: after it
 * renames the file, reopen() (the daemon's SIGHUP) starts a new one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sinks.h"
#include "util.h"

struct jsonl {
	struct sink base;
	char *path;			/* NULL: stdout */
	int fd;				/* -1: closed (an open failed; retried per record) */
	enum sink_format format;
	unsigned long long max_bytes, size;
	unsigned keep;
};

static struct jsonl *to_jsonl(struct sink *s)
{
	return (struct jsonl *)s;
}

static int jsonl_open(struct jsonl *j)
{
	struct stat st;
	int fd;

	if (!j->path) {
		j->fd = STDOUT_FILENO;
		return 0;
	}
	fd = open(j->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	j->fd = fd;
	j->size = st.st_size;
	return 0;
}

static void jsonl_close_fd(struct jsonl *j)
{
	if (j->fd >= 0 && j->path)
		close(j->fd);
	j->fd = -1;
}

/* PATH.(keep-1) → PATH.keep, …, PATH → PATH.1, then a new PATH. */
static int jsonl_rotate(struct jsonl *j)
{
	char from[PATH_MAX], to[PATH_MAX];
	int err = 0;

	jsonl_close_fd(j);
	for (unsigned i = j->keep; i > 1; i--) {
		snprintf(from, sizeof(from), "%s.%u", j->path, i - 1);
		snprintf(to, sizeof(to), "%s.%u", j->path, i);
		if (rename(from, to) && errno != ENOENT && !err)
			err = -errno;
	}
	if (j->keep) {
		snprintf(to, sizeof(to), "%s.1", j->path);
		if (rename(j->path, to) && errno != ENOENT && !err)
			err = -errno;
	} else if (unlink(j->path) && errno != ENOENT && !err) {
		err = -errno;
	}
	/* Whatever happened to the old files, records go on into a file. */
	return jsonl_open(j) ?: err;
}

static int jsonl_write(struct jsonl *j, json_t *obj)
{
	char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	size_t len = text ? strlen(text) : 0;
	int err = 0;

	json_decref(obj);
	if (!text) {
		j->base.dropped++;
		return -ENOMEM;
	}
	text[len++] = '\n';	/* over json_dumps' NUL: the line is written by length */
	if (j->fd < 0)
		err = jsonl_open(j);	/* an earlier open failed: try again */
	else if (j->path && j->max_bytes && j->size && j->size + len > j->max_bytes)
		err = jsonl_rotate(j);
	if (j->fd >= 0) {
		int werr = write_all(j->fd, text, len);

		if (!werr) {
			j->size += len;
			j->base.written++;
			free(text);
			return err;	/* written; a failed rename of an old file is still told */
		}
		err = werr;
	}
	free(text);
	j->base.dropped++;
	return err;
}

static int jsonl_emit(struct sink *s, const struct sbx_event *ev, const struct sink_ctx *ctx)
{
	struct jsonl *j = to_jsonl(s);

	return jsonl_write(j, j->format == SINK_FORMAT_OCSF ? sink_ocsf_event(ev, ctx)
							     : sink_json_event(ev, ctx));
}

static int jsonl_lifecycle(struct sink *s, const struct sink_lifecycle *lc, const struct sink_ctx *ctx)
{
	struct jsonl *j = to_jsonl(s);

	return jsonl_write(j, j->format == SINK_FORMAT_OCSF ? sink_ocsf_lifecycle(lc, ctx)
							     : sink_json_lifecycle(lc, ctx));
}

static int jsonl_reopen(struct sink *s)
{
	struct jsonl *j = to_jsonl(s);

	if (!j->path)
		return 0;
	jsonl_close_fd(j);
	return jsonl_open(j);
}

static void jsonl_free(struct sink *s)
{
	struct jsonl *j = to_jsonl(s);

	if (!j)
		return;
	jsonl_close_fd(j);
	free(j->path);
	free(j);
}

static const struct sink_ops jsonl_ops = {
	.type = "jsonl",
	.emit = jsonl_emit,
	.lifecycle = jsonl_lifecycle,
	.reopen = jsonl_reopen,
	.close = jsonl_free,
};

struct sink *sink_jsonl_new(const struct sink_jsonl_opts *o)
{
	struct jsonl *j = calloc(1, sizeof(*j));
	int err;

	if (!j)
		return NULL;
	j->base.ops = &jsonl_ops;
	j->fd = -1;
	j->format = o->format;
	j->max_bytes = o->max_bytes;
	j->keep = o->keep;
	if (o->path && strcmp(o->path, "-")) {
		j->path = strdup(o->path);
		if (!j->path) {
			jsonl_free(&j->base);
			errno = ENOMEM;
			return NULL;
		}
	}
	err = jsonl_open(j);
	if (err) {
		jsonl_free(&j->base);
		errno = -err;
		return NULL;
	}
	return &j->base;
}
