/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * doctor.h — can this host enforce? Each check says PASS/WARN/FAIL, what it
 * saw, and the exact change that would fix it.
 */
#ifndef SBX_DOCTOR_H
#define SBX_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

enum check_status { CHECK_PASS, CHECK_WARN, CHECK_FAIL };

struct check {
	char name[48];			/* stable id: "kernel", "btf", …, "hook:perf_event_open" */
	enum check_status status;
	char detail[512];		/* what was seen */
	char fix[512];			/* what to do; empty when nothing */
};

#define DOCTOR_MAX_CHECKS 48

struct doctor_report {
	struct check checks[DOCTOR_MAX_CHECKS];
	size_t nr;
};

const char *check_status_name(enum check_status s);

/* Run every check against the running host. */
void doctor_run(struct doctor_report *r);
/* True when nothing FAILed: enforcement can work. */
bool doctor_ok(const struct doctor_report *r);
void doctor_print(const struct doctor_report *r, FILE *out);
json_t *doctor_to_json(const struct doctor_report *r);

/* Pieces with no I/O, for unit tests. */
/* The "lsm=" value that adds bpf to an active list, keeping its order. */
void doctor_lsm_with_bpf(const char *active, char *out, size_t sz);
/* "none [integrity] confidentiality" → "integrity". */
int doctor_lockdown_mode(const char *text, char *out, size_t sz);
/* Required controllers missing from a cgroup.controllers line, space separated. */
void doctor_missing_controllers(const char *controllers, char *out, size_t sz);

#endif
