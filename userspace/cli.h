/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cli.h — what the command handlers share: global options, messages, exit codes. */
#ifndef SBX_CLI_H
#define SBX_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <linux/types.h>

#define EXIT_USAGE 2	/* bad command line or bad input: nothing was changed */

struct cli_opts {
	bool json;
	bool verbose;
};

extern struct cli_opts cli;

/* Top-level messages: "sbx-bpf: error: …" on stderr, or {"error": …} in JSON mode. */
void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print a JSON value on stdout, one line, and drop the reference. */
void print_json(json_t *v);

/* Handle --json/--verbose inside a command: 1 if @c was one of them. */
int cli_common_opt(int c);
/*
 * CGROUP (a sandbox name or a cgroup v2 path, as `stats` takes it): its id,
 * and its real path into @path; 0 after saying why not (attach.c).
 */
__u64 cli_cgroup_id(const char *arg, char *path, size_t sz);

int do_run(int argc, char **argv);
int do_doctor(int argc, char **argv);
int do_check(int argc, char **argv);
int do_kill(int argc, char **argv);
int do_freeze(int argc, char **argv);
int do_thaw(int argc, char **argv);
int do_stats(int argc, char **argv);
int do_daemon(int argc, char **argv);
int do_unload(int argc, char **argv);
int do_attach(int argc, char **argv);
int do_detach(int argc, char **argv);
int do_list(int argc, char **argv);
int do_status(int argc, char **argv);
int do_events(int argc, char **argv);

#endif
