// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /etc/sbx-bpf/agent.json: parsing, FILE:LINE:COL errors, and opening the sinks it names. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agentconf.h"
#include "sinktest.h"

static void test_full(void **state)
{
	static const char json[] =
		"{\n"
		"  \"host\": \"web-7\",\n"
		"  \"sinks\": [\n"
		"    {\"type\": \"jsonl\", \"path\": \"/var/log/sbx-bpf/events.jsonl\", \"max_bytes\": \"64M\",\n"
		"     \"keep\": 3, \"format\": \"ocsf\"},\n"
		"    {\"type\": \"jsonl\"},\n"
		"    {\"type\": \"syslog\", \"target\": \"udp://127.0.0.1:514\", \"facility\": \"local0\",\n"
		"     \"format\": \"rfc5424\", \"max_message\": 4096, \"sd_id\": \"sbx@99999\"},\n"
		"    {\"type\": \"syslog\", \"target\": \"tcp://[::1]:601\", \"queue_bytes\": \"1M\"},\n"
		"    {\"type\": \"prometheus\", \"listen\": \"127.0.0.1:9464\", \"max_sandboxes\": 10}\n"
		"  ]\n"
		"}\n";
	struct agent_config c = { 0 };
	struct agent_diag d;
	const struct agent_sink_conf *s;

	(void)state;
	assert_int_equal(agent_config_load_string(&c, "agent.json", json, &d), 0);
	assert_string_equal(c.host, "web-7");
	assert_int_equal(c.nr_sinks, 5);
	s = &c.sinks[0];
	assert_int_equal(s->type, AGENT_SINK_JSONL);
	assert_string_equal(s->jsonl.path, "/var/log/sbx-bpf/events.jsonl");
	assert_int_equal(s->jsonl.max_bytes, 64 << 20);
	assert_int_equal(s->jsonl.keep, 3);
	assert_int_equal(s->jsonl.format, SINK_FORMAT_OCSF);
	assert_string_equal(s->origin, "agent.json:4:5");
	s = &c.sinks[1];				/* defaults: stdout, json, rotation unused */
	assert_null(s->jsonl.path);
	assert_int_equal(s->jsonl.format, SINK_FORMAT_JSON);
	assert_int_equal(s->jsonl.max_bytes, AGENT_JSONL_MAX_BYTES);
	assert_int_equal(s->jsonl.keep, AGENT_JSONL_KEEP);
	s = &c.sinks[2];
	assert_int_equal(s->type, AGENT_SINK_SYSLOG);
	assert_string_equal(s->syslog.target, "udp://127.0.0.1:514");
	assert_int_equal(s->syslog.facility, 16);
	assert_int_equal(s->syslog.max_message, 4096);
	assert_string_equal(s->syslog.sd_id, "sbx@99999");
	s = &c.sinks[3];
	assert_int_equal(s->syslog.facility, -1);	/* the sink's default: authpriv */
	assert_int_equal(s->syslog.queue_bytes, 1 << 20);
	assert_null(s->syslog.sd_id);
	s = &c.sinks[4];
	assert_int_equal(s->type, AGENT_SINK_PROMETHEUS);
	assert_string_equal(s->prom.listen, "127.0.0.1:9464");
	assert_int_equal(s->prom.max_sandboxes, 10);
	agent_config_free(&c);
	agent_config_free(&c);				/* freeing twice is harmless */

	assert_int_equal(agent_config_load_string(&c, "x", "{}", &d), 0);
	assert_null(c.host);
	assert_int_equal(c.nr_sinks, 0);
	agent_config_free(&c);
}

/* Each mistake, with where it is. */
static void test_errors(void **state)
{
	static const struct { const char *json, *want; } cases[] = {
		{ "{\n  \"sinks\": [\n    {\"type\": \"jsonl\",}\n  ]\n}", "c.json:3:22: invalid JSON" },
		{ "{\"sinks\": [], \"sinks\": []}", "c.json:1:21: invalid JSON: duplicate object key" },
		{ "[]", "c.json:1:1: the agent configuration is a JSON object, not an array" },
		{ "{\n  \"hosts\": \"x\"\n}",
		  "c.json:2:3: unknown key 'hosts' at the top level (known keys: host, sinks, accept_missing)" },
		{ "{\"accept_missing\": \"bpf\"}", "c.json:1:20: 'accept_missing' must be an array of hook names" },
		{ "{\"accept_missing\": [\"bpf\", \"perf_event_opn\"]}",
		  "c.json:1:28: \"perf_event_opn\" is not a hook of sbx-bpf's programs (see 'sbx-bpf hooks')" },
		{ "{\"accept_missing\": [1]}", "c.json:1:21: 'accept_missing[0]' must be a string" },
		{ "{\"host\": \"a b\"}", "c.json:1:10: 'a b': a host name is printable ASCII without spaces" },
		{ "{\"host\": \"\"}", "c.json:1:10: a host name has 1 to 255 characters" },
		{ "{\"sinks\": {}}", "c.json:1:11: 'sinks' must be an array of sinks, not an object" },
		{ "{\"sinks\": [\"jsonl\"]}", "c.json:1:12: 'sinks[0]' must be an object, not a string" },
		{ "{\"sinks\": [\n {\"path\": \"/x\"}]}", "c.json:2:2: a sink needs a \"type\"" },
		{ "{\"sinks\": [{\"type\": \"kafka\"}]}", "c.json:1:21: 'kafka': unknown sink type" },
		{ "{\"sinks\": [{\"type\": 7}]}", "c.json:1:21: 'sinks[0].type' must be a string, not a number" },
		{ "{\"sinks\": [{\"type\": \"jsonl\", \"path\": \"events.jsonl\"}]}",
		  "c.json:1:38: 'events.jsonl': a jsonl path is absolute, or \"-\" for stdout" },
		{ "{\"sinks\": [{\"type\": \"jsonl\",\n \"max_byte\": 5}]}",
		  "c.json:2:2: unknown key 'max_byte' in sinks[0] (known keys: type, path, format, max_bytes, keep)" },
		{ "{\"sinks\": [{\"type\": \"jsonl\", \"keep\": 1001}]}",
		  "c.json:1:38: 'sinks[0].keep' must be a whole number from 0 to 1000" },
		{ "{\"sinks\": [{\"type\": \"jsonl\", \"keep\": \"5\"}]}", "c.json:1:38: 'sinks[0].keep' must be a whole number" },
		{ "{\"sinks\": [{\"type\": \"jsonl\", \"max_bytes\": \"10X\"}]}",
		  "c.json:1:43: 'sinks[0].max_bytes': '10X' is not a size" },
		{ "{\"sinks\": [{\"type\": \"jsonl\", \"max_bytes\": -1}]}",
		  "c.json:1:43: 'sinks[0].max_bytes' must be a whole number from 0" },
		{ "{\"sinks\": [{\"type\": \"jsonl\", \"format\": \"xml\"}]}",
		  "c.json:1:40: 'xml': unknown format (use \"json\" or \"ocsf\")" },
		{ "{\"sinks\": [{\"type\": \"jsonl\", \"path\": \"/a\"},\n  {\"type\": \"jsonl\", \"path\": \"/a\"}]}",
		  "c.json:2:29: '/a' is already written by sinks[0]" },
		{ "{\"sinks\": [{\"type\": \"jsonl\"}, {\"type\": \"jsonl\", \"format\": \"ocsf\"}]}",
		  "c.json:1:31: '-' is already written by sinks[0]" },
		{ "{\"sinks\": [{\"type\": \"syslog\"}]}", "c.json:1:12: a syslog sink needs \"target\"" },
		{ "{\"sinks\": [{\"type\": \"syslog\", \"target\": \"udp://logs.example.com\"}]}",
		  "c.json:1:41: 'udp://logs.example.com': 'logs.example.com' is not an IP address" },
		{ "{\"sinks\": [{\"type\": \"syslog\", \"target\": \"udp:/x\"}]}",
		  "c.json:1:41: 'udp:/x': not a syslog target; use udp://HOST[:PORT]" },
		{ "{\"sinks\": [{\"type\": \"syslog\", \"target\": \"udp://127.0.0.1\", \"facility\": \"local9\"}]}",
		  "c.json:1:72: 'local9': unknown facility" },
		{ "{\"sinks\": [{\"type\": \"syslog\", \"target\": \"udp://127.0.0.1\", \"format\": \"rfc3164\"}]}",
		  "c.json:1:70: 'rfc3164': unknown format (syslog speaks \"rfc5424\")" },
		{ "{\"sinks\": [{\"type\": \"syslog\", \"target\": \"udp://127.0.0.1\", \"sd_id\": \"sbx\"}]}",
		  "c.json:1:69: 'sbx' is not an enterprise SD-ID" },
		{ "{\"sinks\": [{\"type\": \"syslog\", \"target\": \"udp://127.0.0.1\", \"max_message\": 100}]}",
		  "c.json:1:75: 'sinks[0].max_message' must be a whole number from 480 to 1048576" },
		{ "{\"sinks\": [{\"type\": \"syslog\", \"max_message\": 70000,\n \"target\": \"udp://127.0.0.1\"}]}",
		  "c.json:1:46: 70000 bytes do not fit in a UDP datagram (at most 65507)" },
		{ "{\"sinks\": [{\"type\": \"syslog\", \"target\": \"tcp://127.0.0.1\", \"queue_bytes\": 10}]}",
		  "c.json:1:75: 'sinks[0].queue_bytes' must be a whole number from 65536" },
		{ "{\"sinks\": [{\"type\": \"prometheus\"}]}", "c.json:1:12: a prometheus sink needs \"listen\"" },
		{ "{\"sinks\": [{\"type\": \"prometheus\", \"listen\": \"localhost:9464\"}]}",
		  "c.json:1:45: 'localhost:9464': listen on ADDRESS:PORT" },
		{ "{\"sinks\": [{\"type\": \"prometheus\", \"listen\": \"127.0.0.1:0\"}]}",
		  "c.json:1:45: '127.0.0.1:0': listen on" },
		{ "{\"sinks\": [{\"type\": \"prometheus\", \"listen\": \"127.0.0.1:9464\", \"max_sandboxes\": 0}]}",
		  "c.json:1:80: 'sinks[0].max_sandboxes' must be a whole number from 1 to 4096" },
		{ "{\"sinks\": [{\"type\": \"prometheus\", \"listen\": \"127.0.0.1:9464\", \"path\": \"/x\"}]}",
		  "c.json:1:63: unknown key 'path' in sinks[0] (known keys: type, listen, max_sandboxes)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct agent_config c = { 0 };
		struct agent_diag d = { "" };

		assert_int_equal(agent_config_load_string(&c, "c.json", cases[i].json, &d), -EINVAL);
		if (strncmp(d.error, cases[i].want, strlen(cases[i].want)))
			fail_msg("case %zu:\n  got  %s\n  want %s", i, d.error, cases[i].want);
		assert_int_equal(c.nr_sinks, 0);		/* nothing half-parsed is handed back */
		assert_null(c.sinks);
	}
}

static void test_file(void **state)
{
	char *dir = make_tmpdir(), path[256];
	struct agent_config c = { 0 };
	struct agent_diag d;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/agent.json", dir);
	assert_int_equal(agent_config_load(&c, path, &d), -ENOENT);
	assert_non_null(strstr(d.error, "No such file or directory"));
	assert_non_null(strstr(d.error, path));
	f = fopen(path, "w");
	fputs("{\"sinks\": [{\"type\": \"jsonl\", \"path\": \"/x\"},\n{\"type\": \"jsonl\", \"keep\": -3}]}\n", f);
	fclose(f);
	assert_int_equal(agent_config_load(&c, path, &d), -EINVAL);
	if (!strstr(d.error, "/agent.json:2:27: 'sinks[1].keep'"))
		fail_msg("%s", d.error);
	rm_tmpdir(dir);
}

static int free_port(int type)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, type, 0), port;

	bind(fd, (struct sockaddr *)&a, sizeof(a));
	getsockname(fd, (struct sockaddr *)&a, &len);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* From the file to records: every configured sink is opened, in order, and gets the event. */
static void test_open(void **state)
{
	char *dir = make_tmpdir(), json[1024], path[256], buf[4096];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 2 };
	socklen_t alen = sizeof(a);
	struct agent_config c = { 0 };
	struct agent_diag d;
	struct sink_set *set;
	struct sbx_event ev;
	struct sink_ctx in = { .sandbox = "agent" };
	int udp = socket(AF_INET, SOCK_DGRAM, 0);
	char *text;
	FILE *f;

	(void)state;
	bind(udp, (struct sockaddr *)&a, sizeof(a));
	getsockname(udp, (struct sockaddr *)&a, &alen);
	setsockopt(udp, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	snprintf(json, sizeof(json),
		 "{\"host\": \"h9\", \"sinks\": [{\"type\": \"jsonl\", \"path\": \"%s\", \"format\": \"ocsf\"},"
		 " {\"type\": \"syslog\", \"target\": \"udp://127.0.0.1:%d\"},"
		 " {\"type\": \"prometheus\", \"listen\": \"127.0.0.1:%d\"}]}",
		 path, ntohs(a.sin_port), free_port(SOCK_STREAM));
	assert_int_equal(agent_config_load_string(&c, "agent.json", json, &d), 0);
	set = sink_set_new(&(struct sink_ident){ .host = c.host, .boot_id = "b" });
	assert_int_equal(agent_sinks_open(&c, set, "7.7", &d), 0);
	assert_int_equal(sink_set_count(set), 3);
	assert_string_equal(sink_set_get(set, 2)->ops->type, "prometheus");
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/etc/shadow");
	assert_int_equal(sink_set_emit(set, &ev, &in), 0);

	f = fopen(path, "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_non_null(strstr(buf, "\"class_uid\":1001"));
	assert_non_null(strstr(buf, "\"hostname\":\"h9\""));
	assert_true(recv(udp, buf, sizeof(buf) - 1, 0) > 0);
	assert_int_equal(strncmp(buf, "<84>1 ", 6), 0);
	text = sink_prom_render(sink_set_get(set, 2), NULL);
	snprintf(buf, sizeof(buf), "sbx_build_info{version=\"7.7\",abi=\"%d\"} 1", SBX_ABI_VERSION);
	assert_non_null(strstr(text, buf));
	assert_non_null(strstr(text, "sbx_sandbox_violations_total{sandbox=\"agent\"} 1"));
	free(text);
	sink_set_free(set);
	agent_config_free(&c);
	close(udp);
	rm_tmpdir(dir);
}

/* A sink that cannot open names itself by its place in the file, and says why. */
static void test_open_fails(void **state)
{
	static const char json[] = "{\"sinks\": [{\"type\": \"jsonl\"},\n"
				   "  {\"type\": \"jsonl\", \"path\": \"/nonexistent-dir/e.jsonl\"}]}";
	struct agent_config c = { 0 };
	struct agent_diag d;
	struct sink_set *set;

	(void)state;
	assert_int_equal(agent_config_load_string(&c, "agent.json", json, &d), 0);
	set = sink_set_new(NULL);
	assert_int_equal(agent_sinks_open(&c, set, "1", &d), -ENOENT);
	assert_string_equal(d.error, "agent.json:2:3: cannot open '/nonexistent-dir/e.jsonl': "
			    "No such file or directory");
	assert_int_equal(sink_set_count(set), 1);	/* the ones before it are open */
	sink_set_free(set);
	agent_config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_open_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
