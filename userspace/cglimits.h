/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cglimits.h — limits on a cgroup sbx-bpf did not create (`attach`): every
 * limit file is read before it is written, so that a failed attach puts
 * back what it changed and `detach` puts back what the cgroup had before
 * sbx-bpf first touched it.
 *
 * A plan is a list of steps, each one control-file write. Planning is pure;
 * the files are read and written through struct cgfile_ops (a cgroup
 * directory, or a table in the unit tests). Library code: nothing prints;
 * errors are -errno plus the index of the step that failed.
 */
#ifndef SBX_CGLIMITS_H
#define SBX_CGLIMITS_H

#include <stdbool.h>
#include <stddef.h>

#include "sbx_limits.h"

struct cgfile_ops {
	int (*read)(void *ctx, const char *file, char *buf, size_t sz);	/* bytes or -errno */
	int (*write)(void *ctx, const char *file, const char *value);	/* 0 or -errno */
	void *ctx;
};

/* The control files of the cgroup directory @dir (which must outlive the ops). */
struct cgfile_ops cgfile_dir(const char *dir);

struct cglimit_step {
	struct limit_write w;	/* the write */
	char prev[128];		/* what the file held before this plan: put back on failure */
	char orig[128];		/* what it held before sbx-bpf first wrote it: put back by detach */
	bool revert;		/* a limit of the replaced attach that this one does not set */
	bool skip;		/* a revert whose file is gone with its controller */
	bool done;
};

#define CGLIMITS_STEPS_MAX	(2 * LIMITS_WRITES_MAX)

struct cglimits_plan {
	struct cglimit_step step[CGLIMITS_STEPS_MAX];
	size_t nr;
};

/*
 * The steps that take a cgroup from the limits of an earlier attach to
 * @want: first, each file of @saved (what the earlier attach recorded as
 * the originals) that @want does not set goes back to its original; then
 * @want, in its order. A file in @saved keeps its original from there: a
 * replaced attach never passes its own values off as the cgroup's. 0 or
 * -E2BIG.
 */
int cglimits_plan(struct cglimits_plan *p, const struct limit_write *want, size_t nw,
		  const struct limit_write *saved, size_t ns);

/*
 * Read each step's file into prev, and into orig where @saved had none.
 * 0, or -errno with *@failed the step whose file could not be read.
 */
int cglimits_snapshot(struct cglimits_plan *p, const struct cgfile_ops *ops, size_t *failed);

/*
 * Make the steps in order. When one fails, the ones done get their prev
 * back (last first) and its -errno is returned, *@failed its index.
 */
int cglimits_apply(struct cglimits_plan *p, const struct cgfile_ops *ops, size_t *failed);

/* Put prev back into every step done, last first (a later part of attach failed). 0 or the first -errno. */
int cglimits_rollback(struct cglimits_plan *p, const struct cgfile_ops *ops);

/* What detach must put back after this plan: orig of each step that is not a revert. The count. */
size_t cglimits_originals(const struct cglimits_plan *p, struct limit_write *out, size_t max);

/*
 * Detach: write @saved back, last first, each one even after a failure. A
 * file that is gone (its controller was disabled) has nothing to put back.
 * 0, or the first -errno with *@failed its index in @saved.
 */
int cglimits_restore(const struct limit_write *saved, size_t n, const struct cgfile_ops *ops,
		     size_t *failed);

/*
 * The value that puts @file back as @text (its content now) shows it:
 * @text trimmed; for io.max the line of the device that @dev_line ("8:0
 * wbps=…") names, or "8:0 rbps=max wbps=max riops=max wiops=max" when it
 * has none (the kernel lists only limited devices). 0 or -ENOSPC.
 */
int cglimits_current(const char *file, const char *text, const char *dev_line, char *out, size_t sz);

/* Same file and, for io.max, same device. */
bool cglimits_same_key(const struct limit_write *a, const struct limit_write *b);

#endif
