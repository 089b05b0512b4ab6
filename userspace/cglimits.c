// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cglimits.c — limits written into a cgroup that someone else owns, all
 * or none, with what they replaced kept for `detach` (see cglimits.h).
 *
 * Every value read back from a control file can be written to it again as
 * it is ("max 100000" into cpu.max, "max" into memory.max), except io.max:
 * it lists only the devices that have a limit, one line each, so a device
 * without a line is put back by writing all four keys as max.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cglimits.h"
#include "util.h"

static int dir_read(void *ctx, const char *file, char *buf, size_t sz)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", (const char *)ctx, file);
	return read_file(p, buf, sz);
}

static int dir_write(void *ctx, const char *file, const char *value)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", (const char *)ctx, file);
	return write_file(p, value);
}

struct cgfile_ops cgfile_dir(const char *dir)
{
	return (struct cgfile_ops){ .read = dir_read, .write = dir_write, .ctx = (void *)dir };
}

/* The length of the "MAJ:MIN" that starts an io.max line. */
static size_t dev_len(const char *line)
{
	return strcspn(line, " \n");
}

bool cglimits_same_key(const struct limit_write *a, const struct limit_write *b)
{
	if (strcmp(a->file, b->file))
		return false;
	if (strcmp(a->file, "io.max"))
		return true;
	return dev_len(a->value) == dev_len(b->value) && !strncmp(a->value, b->value, dev_len(a->value));
}

static int copy_line(char *out, size_t sz, const char *s, size_t len)
{
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	if (len >= sz)
		return -ENOSPC;
	memcpy(out, s, len);
	out[len] = '\0';
	return 0;
}

int cglimits_current(const char *file, const char *text, const char *dev_line, char *out, size_t sz)
{
	size_t dl = dev_len(dev_line);

	if (strcmp(file, "io.max"))
		return copy_line(out, sz, text, strcspn(text, "\n"));
	for (const char *l = text; *l; l += strcspn(l, "\n"), l += *l == '\n') {
		if (dev_len(l) == dl && !strncmp(l, dev_line, dl))
			return copy_line(out, sz, l, strcspn(l, "\n"));
	}
	return (size_t)snprintf(out, sz, "%.*s rbps=max wbps=max riops=max wiops=max", (int)dl,
				dev_line) < sz ? 0 : -ENOSPC;
}

static const struct limit_write *find(const struct limit_write *w, size_t n, const struct limit_write *key)
{
	for (size_t i = 0; i < n; i++)
		if (cglimits_same_key(&w[i], key))
			return &w[i];
	return NULL;
}

static struct cglimit_step *push(struct cglimits_plan *p, const char *file, const char *value)
{
	struct cglimit_step *s;

	if (p->nr >= CGLIMITS_STEPS_MAX)
		return NULL;
	s = &p->step[p->nr++];
	memset(s, 0, sizeof(*s));
	snprintf(s->w.file, sizeof(s->w.file), "%s", file);
	snprintf(s->w.value, sizeof(s->w.value), "%s", value);
	return s;
}

int cglimits_plan(struct cglimits_plan *p, const struct limit_write *want, size_t nw,
		  const struct limit_write *saved, size_t ns)
{
	struct cglimit_step *s;

	p->nr = 0;
	for (size_t i = 0; i < ns; i++) {
		if (find(want, nw, &saved[i]))
			continue;
		if (!(s = push(p, saved[i].file, saved[i].value)))
			return -E2BIG;
		s->revert = true;
		snprintf(s->orig, sizeof(s->orig), "%s", saved[i].value);
	}
	for (size_t i = 0; i < nw; i++) {
		const struct limit_write *o = find(saved, ns, &want[i]);

		if (!(s = push(p, want[i].file, want[i].value)))
			return -E2BIG;
		if (o)
			snprintf(s->orig, sizeof(s->orig), "%s", o->value);
	}
	return 0;
}

int cglimits_snapshot(struct cglimits_plan *p, const struct cgfile_ops *ops, size_t *failed)
{
	char buf[4096];
	int n;

	for (size_t i = 0; i < p->nr; i++) {
		struct cglimit_step *s = &p->step[i];

		n = ops->read(ops->ctx, s->w.file, buf, sizeof(buf));
		if (n == -ENOENT && s->revert) {
			s->skip = true;		/* gone with its controller: nothing to revert */
			continue;
		}
		if (n >= 0)
			n = cglimits_current(s->w.file, buf, s->w.value, s->prev, sizeof(s->prev));
		if (n < 0) {
			*failed = i;
			return n;
		}
		if (!s->orig[0])
			snprintf(s->orig, sizeof(s->orig), "%s", s->prev);
	}
	return 0;
}

int cglimits_rollback(struct cglimits_plan *p, const struct cgfile_ops *ops)
{
	int first = 0, err;

	for (size_t i = p->nr; i-- > 0;) {
		struct cglimit_step *s = &p->step[i];

		if (!s->done)
			continue;
		err = ops->write(ops->ctx, s->w.file, s->prev);
		if (err && !first)
			first = err;
		s->done = false;
	}
	return first;
}

int cglimits_apply(struct cglimits_plan *p, const struct cgfile_ops *ops, size_t *failed)
{
	int err;

	for (size_t i = 0; i < p->nr; i++) {
		struct cglimit_step *s = &p->step[i];

		if (s->skip)
			continue;
		err = ops->write(ops->ctx, s->w.file, s->w.value);
		if (err) {
			*failed = i;
			cglimits_rollback(p, ops);
			return err;
		}
		s->done = true;
	}
	return 0;
}

size_t cglimits_originals(const struct cglimits_plan *p, struct limit_write *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nr && n < max; i++) {
		if (p->step[i].revert)
			continue;
		out[n] = p->step[i].w;
		snprintf(out[n].value, sizeof(out[n].value), "%s", p->step[i].orig);
		n++;
	}
	return n;
}

int cglimits_restore(const struct limit_write *saved, size_t n, const struct cgfile_ops *ops,
		     size_t *failed)
{
	int first = 0, err;

	for (size_t i = n; i-- > 0;) {
		err = ops->write(ops->ctx, saved[i].file, saved[i].value);
		if (err && err != -ENOENT && !first) {
			first = err;
			*failed = i;
		}
	}
	return first;
}
