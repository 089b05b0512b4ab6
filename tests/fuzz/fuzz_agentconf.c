// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_agentconf.c — libFuzzer target: the input as /etc/sbx-bpf/agent.json
 * (agent_config_load_string). Nothing is opened. Besides ASan and UBSan it
 * checks agentconf.h's contract: an error is -errno with @c left empty, and
 * -EINVAL says "fuzz.json:LINE:COL: …"; a configuration that loads has
 * only values the sinks accept ("opening the sinks can only fail for
 * reasons of the running system"), each sink with a positioned origin.
 */
#include <errno.h>
#include <stdbool.h>

#include "agentconf.h"
#include "fuzz.h"

static void check_jsonl(const struct agent_config *c, size_t i)
{
	const struct agent_sink_conf *s = &c->sinks[i];

	CHECK(s->jsonl.path == s->str && (!s->str || s->str[0] == '/'), "sinks[%zu]: path '%s'", i,
	      s->str ?: "(stdout)");
	CHECK(s->jsonl.keep <= 1000, "sinks[%zu]: keep %u", i, s->jsonl.keep);
	CHECK(s->jsonl.format == SINK_FORMAT_JSON || s->jsonl.format == SINK_FORMAT_OCSF,
	      "sinks[%zu]: format %d", i, s->jsonl.format);
	for (size_t j = 0; j < i; j++) {
		const struct agent_sink_conf *o = &c->sinks[j];

		CHECK(o->type != AGENT_SINK_JSONL ||
		      (o->str && s->str ? strcmp(o->str, s->str) : o->str != s->str),
		      "sinks[%zu] and sinks[%zu] both write '%s'", j, i, s->str ?: "-");
	}
}

static void check_syslog(const struct agent_sink_conf *s, size_t i)
{
	struct syslog_target t;
	char why[512];

	CHECK(s->str && s->syslog.target == s->str, "sinks[%zu]: no target", i);
	CHECK(!syslog_parse_target(s->str, &t, why, sizeof(why)), "sinks[%zu]: target '%s': %s", i,
	      s->str, why);
	CHECK(s->syslog.facility >= -1 && s->syslog.facility <= 23, "sinks[%zu]: facility %d", i,
	      s->syslog.facility);
	CHECK(!s->syslog.max_message || (s->syslog.max_message >= SYSLOG_MIN_MESSAGE &&
					 s->syslog.max_message <= (t.transport == SYSLOG_UDP ? 65507 : 1 << 20)),
	      "sinks[%zu]: max_message %zu", i, s->syslog.max_message);
	CHECK(!s->syslog.sd_id || (s->syslog.sd_id == s->sd_id && syslog_valid_sd_id(s->sd_id)),
	      "sinks[%zu]: sd_id", i);
}

static void check_prom(const struct agent_sink_conf *s, size_t i)
{
	char host[256], port[8];

	CHECK(s->str && s->prom.listen == s->str, "sinks[%zu]: no listen", i);
	CHECK(!sink_split_hostport(s->str, host, sizeof(host), port, sizeof(port)) && port[0] &&
	      !sink_parse_addr(host, port, NULL, NULL) && strcmp(port, "0"), "sinks[%zu]: listen '%s'", i,
	      s->str);
	CHECK(s->prom.max_sandboxes <= 4096, "sinks[%zu]: max_sandboxes %zu", i, s->prom.max_sandboxes);
}

static void check_config(const struct agent_config *c, long lines)
{
	if (c->host) {
		size_t n = strlen(c->host);

		CHECK(n >= 1 && n <= 255, "host of %zu characters", n);
		for (const char *p = c->host; *p; p++)
			CHECK(*p >= 33 && *p <= 126, "host '%s'", c->host);
	}
	for (size_t i = 0; i < c->nr_sinks; i++) {
		const struct agent_sink_conf *s = &c->sinks[i];
		char origin[1200];

		CHECK(s->origin, "sinks[%zu] without origin", i);
		snprintf(origin, sizeof(origin), "%s: ", s->origin);
		CHECK(fuzz_positioned(origin, FUZZ_NAME, lines), "sinks[%zu]: origin '%s'", i, s->origin);
		switch (s->type) {
		case AGENT_SINK_JSONL: check_jsonl(c, i); break;
		case AGENT_SINK_SYSLOG: check_syslog(s, i); break;
		case AGENT_SINK_PROMETHEUS: check_prom(s, i); break;
		default: CHECK(false, "sinks[%zu]: type %d", i, s->type);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct agent_config zero;
	struct agent_config c = {};
	struct agent_diag d = {};
	char *text = fuzz_string(data, size);
	long lines = fuzz_lines(text);
	int r = agent_config_load_string(&c, FUZZ_NAME, text, &d);

	if (r) {
		CHECK(r < 0 && r > -4096, "returned %d", r);
		CHECK(!memcmp(&c, &zero, sizeof(c)), "a failed load left a configuration behind");
		CHECK(d.error[0], "error %d without a message", r);
		if (r == -EINVAL)
			CHECK(fuzz_positioned(d.error, FUZZ_NAME, lines), "error '%s'", d.error);
	} else {
		check_config(&c, lines);
	}
	agent_config_free(&c);
	free(text);
	return 0;
}
