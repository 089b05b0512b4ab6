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
	bool syslog;	/* errors go to syslog(3) too: a hook whose engine drops its stderr (crun) */
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
 * and its real path into @path; 0 after saying why not (cmdcommon.c, as the
 * rest of this block). cli_cgroup_target also gives its level below the
 * cgroup2 root (cgroup_level: 0 is the root).
 */
__u64 cli_cgroup_id(const char *arg, char *path, size_t sz);
__u64 cli_cgroup_target(const char *arg, char *path, size_t sz, int *level);
struct sbx_loader;
struct sbx_sandbox;
/* The pinned set at @dir (NULL: /sys/fs/bpf/sbx); NULL after saying why not. */
struct sbx_loader *cli_open_pinned(const char *dir);
/* state_lock() on the records; the descriptor to close, or -1 after saying why. */
int cli_lock_records(void);
/* CLOCK_BOOTTIME in ns: the clock grants expire by in the kernel. */
__u64 cli_boottime_ns(void);
/*
 * @sb's tasks may hold descriptors its policy never saw opened: their uses
 * are to be judged. The program goes on first (loader__fd_judging_on), then
 * the flag into *@sb, for the caller to write. 0, or -1 after saying why.
 */
int cli_judge_uses(struct sbx_loader *l, struct sbx_sandbox *sb);

struct hook_gaps;
/*
 * Gaps of a program set in use (progset.c): 0 when @accept (hook names,
 * NULL-terminated, may be NULL) names every one, each then said as a
 * warning; else -1 after saying what is missing, why, and @how to accept it
 * ("--accept-missing").
 */
int cli_gaps_accepted(const struct hook_gaps *g, const char *const *accept, const char *how);
/* Load the programs (@flags: LOADER_*), refuse unaccepted gaps as above, attach. NULL after saying why. */
struct sbx_loader *cli_load_programs(const char *const *accept, const char *how, unsigned flags);

int do_run(int argc, char **argv);
int do_doctor(int argc, char **argv);
int do_hooks(int argc, char **argv);
int do_check(int argc, char **argv);
int do_kill(int argc, char **argv);
int do_freeze(int argc, char **argv);
int do_thaw(int argc, char **argv);
int do_stats(int argc, char **argv);
int do_daemon(int argc, char **argv);
int do_unload(int argc, char **argv);
int do_attach(int argc, char **argv);
int do_detach(int argc, char **argv);
int do_oci_hook(int argc, char **argv);

/* attach for another command (the OCI hook): a policy file or a preset, labels, --fresh. */
struct cli_attach_req {
	const char *cgroup;		/* a cgroup v2 path */
	const char *policy_file;	/* one of these two */
	const char *preset;
	const json_t *labels;		/* labels.h; NULL: none */
	bool fresh;
	bool from_exec;			/* in force from the cgroup's first exec (SBX_SANDBOX_ARMING) */
	const char *home, *cwd;		/* the policy's "~" and "." (the container's; both or neither) */
	const char *pin_dir;		/* NULL: the default */
};
/* It also needs a daemon running (its events go nowhere else). 0, or 1 / EXIT_USAGE after saying why. */
int cli_attach(const struct cli_attach_req *r);
/* detach of @cgid; @path NULL: the cgroup is gone (no limit values to put back). 0, or 1 after saying why. */
int cli_detach(const char *pin_dir, __u64 cgid, const char *path);
int do_list(int argc, char **argv);
int do_status(int argc, char **argv);
int do_events(int argc, char **argv);
int do_grant(int argc, char **argv);
int do_revoke(int argc, char **argv);
int do_grants(int argc, char **argv);

#endif
