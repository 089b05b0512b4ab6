/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * agentconf.h — the host agent's configuration, /etc/sbx-bpf/agent.json:
 * where events go (docs/agent.md). Parsed whole and checked before anything
 * is opened; a mistake is reported as "FILE:LINE:COL: what is wrong", the
 * way policy files are.
 *
 * Library code: nothing prints. Errors are -errno plus the message in
 * struct agent_diag.
 */
#ifndef SBX_AGENTCONF_H
#define SBX_AGENTCONF_H

#include <stddef.h>

#include "sinks.h"

#define AGENT_CONFIG_PATH	"/etc/sbx-bpf/agent.json"
/* A jsonl file sink rotates at this size unless "max_bytes" says otherwise (0: never). */
#define AGENT_JSONL_MAX_BYTES	(100ULL << 20)
#define AGENT_JSONL_KEEP	5

enum agent_sink_type {
	AGENT_SINK_JSONL,
	AGENT_SINK_SYSLOG,
	AGENT_SINK_PROMETHEUS,
};

struct agent_sink_conf {
	enum agent_sink_type type;
	char *origin;			/* "FILE:LINE:COL" of the sink's object, for later messages */
	union {
		struct sink_jsonl_opts jsonl;
		struct sink_syslog_opts syslog;
		struct sink_prom_opts prom;
	};
	char *str;			/* owns the path, target or listen address the opts point at */
	char *sd_id;			/* owns syslog.sd_id */
};

struct agent_config {
	char *host;			/* "host": NULL means the machine's own name */
	struct agent_sink_conf *sinks;
	size_t nr_sinks;
	char **accept_missing;		/* "accept_missing": hooks, NULL-terminated; NULL when absent */
};

struct agent_diag {
	char error[1024];
};

/* Parse @file into @c (zero-initialised by the caller). On error @c stays empty. */
int agent_config_load(struct agent_config *c, const char *file, struct agent_diag *d);
/* The same from text; @name stands for the file in messages. */
int agent_config_load_string(struct agent_config *c, const char *name, const char *json,
			     struct agent_diag *d);
void agent_config_free(struct agent_config *c);

/*
 * Open every configured sink and add it to @set (@version for
 * sbx_build_info). 0, or -errno with d->error naming the sink: "FILE:LINE:COL:
 * cannot open '/var/log/sbx-bpf/events.jsonl': Permission denied". Sinks
 * opened before the failing one stay in @set.
 */
int agent_sinks_open(const struct agent_config *c, struct sink_set *set, const char *version,
		     struct agent_diag *d);

#endif
