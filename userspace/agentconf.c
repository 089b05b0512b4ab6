// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * agentconf.c — /etc/sbx-bpf/agent.json (docs/agent.md): the agent's host
 * name and its sinks. Every value is checked here, with its position in
 * the file, so that opening the sinks can only fail for reasons of the
 * running system (a directory missing, a port taken).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "agentconf.h"
#include "hooks.h"
#include "jsonloc.h"
#include "sbx_limits.h"
#include "util.h"

#define CONFIG_FILE_MAX	(1 << 20)

struct actx {
	const char *name, *text;
	struct jloc_pos pos;
	struct jloc_step path[4];	/* sinks[2].keep */
	size_t depth;
	struct agent_diag *d;
	struct agent_config *cfg;
	size_t index;			/* the sink being parsed */
};

/* --- messages ---------------------------------------------------------------------- */

static void where(struct actx *c, bool key, char *buf, size_t sz)
{
	long off = jloc_find(c->text, c->path, c->depth, key);

	if (off < 0) {
		snprintf(buf, sz, "%s", c->name);
		return;
	}
	jloc_advance(c->text, &c->pos, off);
	snprintf(buf, sz, "%s:%d:%d", c->name, c->pos.line, c->pos.col);
}

/* The error at the current key (@key) or its value. */
static int __attribute__((format(printf, 3, 4))) fail(struct actx *c, bool key, const char *fmt, ...)
{
	char at[PATH_MAX + 32], msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	where(c, key, at, sizeof(at));
	snprintf(c->d->error, sizeof(c->d->error), "%s: %s", at, msg);
	return -EINVAL;
}

/* "sinks[2].keep" */
static const char *here(struct actx *c, char *buf, size_t sz)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < c->depth && len < sz; i++) {
		if (c->path[i].key)
			len += snprintf(buf + len, sz - len, "%s%s", i ? "." : "", c->path[i].key);
		else
			len += snprintf(buf + len, sz - len, "[%zu]", c->path[i].index);
	}
	return buf;
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

static int fail_type(struct actx *c, const json_t *v, const char *want)
{
	char p[128];

	return fail(c, false, "'%s' must be %s, not %s", here(c, p, sizeof(p)), want, type_name(v));
}

/* --- values --------------------------------------------------------------------------- */

static int want_string(struct actx *c, json_t *v, const char **out)
{
	*out = "";
	if (!json_is_string(v))
		return fail_type(c, v, "a string");
	*out = json_string_value(v);
	return 0;
}

static int want_number(struct actx *c, json_t *v, long long lo, long long hi, long long *out)
{
	char p[128];

	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return fail(c, false, "'%s' must be a whole number from %lld to %lld", here(c, p, sizeof(p)),
			    lo, hi);
	*out = json_integer_value(v);
	return 0;
}

/* 104857600, or "100M" as memory limits are written (K, M, G, T; base 1024). */
static int want_bytes(struct actx *c, json_t *v, long long lo, long long hi, long long *out)
{
	char p[128];

	if (json_is_string(v)) {
		if (limits_parse_bytes(json_string_value(v), out) || *out < lo || *out > hi)
			return fail(c, false, "'%s': '%s' is not a size from %lld to %lld bytes (a number, or "
				    "one with a K, M, G or T suffix such as \"100M\")", here(c, p, sizeof(p)),
				    json_string_value(v), lo, hi);
		return 0;
	}
	if (!json_is_integer(v))
		return fail_type(c, v, "a number of bytes or a size such as \"100M\"");
	return want_number(c, v, lo, hi, out);
}

static int own(struct actx *c, char **dst, const char *s)
{
	free(*dst);
	*dst = strdup(s);
	if (!*dst) {
		snprintf(c->d->error, sizeof(c->d->error), "%s: out of memory", c->name);
		return -ENOMEM;
	}
	return 0;
}

/* --- sink keys ---------------------------------------------------------------------------- */

typedef int (*key_fn)(struct actx *c, json_t *v, struct agent_sink_conf *s);

struct key_def {
	const char *name;
	key_fn parse;		/* NULL: "type", read before the others */
};

static int jsonl_path(struct actx *c, json_t *v, struct agent_sink_conf *s)
{
	const char *path;
	int err = want_string(c, v, &path);

	if (err)
		return err;
	if (strcmp(path, "-") && path[0] != '/')
		return fail(c, false, "'%s': a jsonl path is absolute, or \"-\" for stdout", path);
	if (!strcmp(path, "-"))
		return 0;
	err = own(c, &s->str, path);
	s->jsonl.path = s->str;
	return err;
}

static int jsonl_format(struct actx *c, json_t *v, struct agent_sink_conf *s)
{
	const char *f;
	int err = want_string(c, v, &f);

	if (err)
		return err;
	if (!strcmp(f, "json"))
		s->jsonl.format = SINK_FORMAT_JSON;
	else if (!strcmp(f, "ocsf"))
		s->jsonl.format = SINK_FORMAT_OCSF;
	else
		return fail(c, false, "'%s': unknown format (use \"json\" or \"ocsf\")", f);
	return 0;
}

static int jsonl_max_bytes(struct actx *c, json_t *v, struct agent_sink_conf *s)
{
	long long n;
	int err = want_bytes(c, v, 0, LLONG_MAX, &n);

	s->jsonl.max_bytes = n;
	return err;
}

static int jsonl_keep(struct actx *c, json_t *v, struct agent_sink_conf *s)
{
	long long n;
	int err = want_number(c, v, 0, 1000, &n);

	s->jsonl.keep = n;
	return err;
}

static int syslog_target(struct actx *c, json_t *v, struct agent_sink_conf *s)
{
	struct syslog_target t;
	const char *spec;
	char why[512];
	int err = want_string(c, v, &spec);

	if (err)
		return err;
	if (syslog_parse_target(spec, &t, why, sizeof(why)))
		return fail(c, false, "%s", why);
	err = own(c, &s->str, spec);
	s->syslog.target = s->str;
	return err;
}

static int syslog_facility_key(struct actx *c, json_t *v, struct agent_sink_conf *s)
{
	const char *name;
	int err = want_string(c, v, &name);

	if (err)
		return err;
	s->syslog.facility = syslog_facility(name);
	if (s->syslog.facility < 0)
		return fail(c, false, "'%s': unknown facility (use auth, authpriv, daemon, user, "
			    "local0 … local7, …)", name);
	return 0;
}

static int syslog_format_key(struct actx *c, json_t *v, struct agent_sink_conf *s)
{
	const char *f;
	int err = want_string(c, v, &f);

	(void)s;
	if (err)
		return err;
	return strcmp(f, "rfc5424") ? fail(c, false, "'%s': unknown format (syslog speaks \"rfc5424\")", f) : 0;
}

/* 480: what every RFC 5426 receiver takes; 65507: the most a UDP datagram holds. */
static int syslog_max_message(struct actx *c, json_t *v, struct agent_sink_conf *s)
{
	long long n;
	int err = want_bytes(c, v, SYSLOG_MIN_MESSAGE, 1 << 20, &n);

	s->syslog.max_message = n;
	return err;
}

static int syslog_queue_bytes(struct actx *c, json_t *v, struct agent_sink_conf *s)
{
	long long n;
	int err = want_bytes(c, v, 64 << 10, 64 << 20, &n);

	s->syslog.queue_bytes = n;
	return err;
}

static int syslog_sd_id(struct actx *c, json_t *v, struct agent_sink_conf *s)
{
	const char *id;
	int err = want_string(c, v, &id);

	if (err)
		return err;
	if (!syslog_valid_sd_id(id))
		return fail(c, false, "'%s' is not an enterprise SD-ID (NAME@NUMBER, at most 32 "
			    "printable characters, no '=', ']', '\"' or space)", id);
	err = own(c, &s->sd_id, id);
	s->syslog.sd_id = s->sd_id;
	return err;
}

static int prom_listen(struct actx *c, json_t *v, struct agent_sink_conf *s)
{
	char host[256], port[8];
	const char *spec;
	int err = want_string(c, v, &spec);

	if (err)
		return err;
	if (sink_split_hostport(spec, host, sizeof(host), port, sizeof(port)) || !port[0] ||
	    sink_parse_addr(host, port, NULL, NULL) || !strcmp(port, "0"))
		return fail(c, false, "'%s': listen on ADDRESS:PORT or [IPv6]:PORT, an IP address and a "
			    "port from 1 to 65535 (such as \"127.0.0.1:9464\")", spec);
	err = own(c, &s->str, spec);
	s->prom.listen = s->str;
	return err;
}

static int prom_max_sandboxes(struct actx *c, json_t *v, struct agent_sink_conf *s)
{
	long long n;
	int err = want_number(c, v, 1, 4096, &n);

	s->prom.max_sandboxes = n;
	return err;
}

static const struct key_def jsonl_keys[] = {
	{ "type", NULL }, { "path", jsonl_path }, { "format", jsonl_format },
	{ "max_bytes", jsonl_max_bytes }, { "keep", jsonl_keep },
};
static const struct key_def syslog_keys[] = {
	{ "type", NULL }, { "target", syslog_target }, { "facility", syslog_facility_key },
	{ "format", syslog_format_key }, { "max_message", syslog_max_message },
	{ "queue_bytes", syslog_queue_bytes }, { "sd_id", syslog_sd_id },
};
static const struct key_def prom_keys[] = {
	{ "type", NULL }, { "listen", prom_listen }, { "max_sandboxes", prom_max_sandboxes },
};

static const struct sink_type {
	const char *name;
	enum agent_sink_type type;
	const struct key_def *keys;
	size_t nr_keys;
	const char *required;	/* a key without a default, or NULL */
} sink_types[] = {
	{ "jsonl", AGENT_SINK_JSONL, jsonl_keys, ARRAY_SIZE(jsonl_keys), NULL },
	{ "syslog", AGENT_SINK_SYSLOG, syslog_keys, ARRAY_SIZE(syslog_keys), "target" },
	{ "prometheus", AGENT_SINK_PROMETHEUS, prom_keys, ARRAY_SIZE(prom_keys), "listen" },
};

/* --- sinks --------------------------------------------------------------------------------- */

static int unknown_key(struct actx *c, const char *key, const struct key_def *defs, size_t n,
		       const char *in)
{
	char known[256];
	size_t len = 0;

	known[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += snprintf(known + len, sizeof(known) - len, "%s%s", i ? ", " : "", defs[i].name);
	return fail(c, true, "unknown key '%s' in %s (known keys: %s)", key, in, known);
}

static const struct sink_type *sink_type(struct actx *c, json_t *obj)
{
	json_t *t = json_object_get(obj, "type");
	const char *name;

	c->path[c->depth++] = (struct jloc_step){ .key = "type" };
	if (!t) {
		c->depth--;
		fail(c, false, "a sink needs a \"type\": \"jsonl\", \"syslog\" or \"prometheus\"");
		return NULL;
	}
	if (want_string(c, t, &name)) {
		c->depth--;
		return NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(sink_types); i++) {
		if (!strcmp(name, sink_types[i].name)) {
			c->depth--;
			return &sink_types[i];
		}
	}
	fail(c, false, "'%s': unknown sink type (use \"jsonl\", \"syslog\" or \"prometheus\")", name);
	c->depth--;
	return NULL;
}

static void sink_defaults(struct agent_sink_conf *s, enum agent_sink_type type)
{
	s->type = type;
	switch (type) {
	case AGENT_SINK_JSONL:
		s->jsonl = (struct sink_jsonl_opts){ .max_bytes = AGENT_JSONL_MAX_BYTES,
						     .keep = AGENT_JSONL_KEEP };
		break;
	case AGENT_SINK_SYSLOG:
		s->syslog = (struct sink_syslog_opts){ .facility = -1 };
		break;
	case AGENT_SINK_PROMETHEUS:
		s->prom = (struct sink_prom_opts){ 0 };
		break;
	}
}

/* The same file, or both stdout (NULL). */
static bool same_output(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

/* Two jsonl sinks on one file (or both on stdout) would interleave and rotate each other's lines. */
static int check_jsonl(struct actx *c, json_t *obj, const struct agent_sink_conf *s)
{
	for (size_t i = 0; i < c->index; i++) {
		const struct agent_sink_conf *o = &c->cfg->sinks[i];
		int err;

		if (o->type != AGENT_SINK_JSONL || !same_output(o->str, s->str))
			continue;
		if (json_object_get(obj, "path"))
			c->path[c->depth++] = (struct jloc_step){ .key = "path" };
		err = fail(c, false, "'%s' is already written by sinks[%zu]", s->str ?: "-", i);
		if (json_object_get(obj, "path"))
			c->depth--;
		return err;
	}
	return 0;
}

static int check_sink(struct actx *c, json_t *obj, struct agent_sink_conf *s, const struct sink_type *t)
{
	struct syslog_target st;
	char why[8];

	if (t->required && !json_object_get(obj, t->required))
		return fail(c, false, "a %s sink needs \"%s\"", t->name, t->required);
	if (t->type == AGENT_SINK_JSONL)
		return check_jsonl(c, obj, s);
	if (t->type == AGENT_SINK_SYSLOG && s->syslog.max_message > 65507 &&
	    !syslog_parse_target(s->syslog.target, &st, why, sizeof(why)) && st.transport == SYSLOG_UDP) {
		c->path[c->depth++] = (struct jloc_step){ .key = "max_message" };
		fail(c, false, "%zu bytes do not fit in a UDP datagram (at most 65507)", s->syslog.max_message);
		c->depth--;
		return -EINVAL;
	}
	return 0;
}

static int parse_sink(struct actx *c, json_t *obj, struct agent_sink_conf *s)
{
	const struct sink_type *t;
	char at[PATH_MAX + 32], in[64];
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return fail_type(c, obj, "an object");
	t = sink_type(c, obj);
	if (!t)
		return -EINVAL;
	sink_defaults(s, t->type);
	where(c, false, at, sizeof(at));
	if (own(c, &s->origin, at))
		return -ENOMEM;
	here(c, in, sizeof(in));
	json_object_foreach(obj, key, v) {
		const struct key_def *d = NULL;
		int err;

		for (size_t i = 0; i < t->nr_keys && !d; i++)
			if (!strcmp(key, t->keys[i].name))
				d = &t->keys[i];
		c->path[c->depth++] = (struct jloc_step){ .key = key };
		err = !d ? unknown_key(c, key, t->keys, t->nr_keys, in) : d->parse ? d->parse(c, v, s) : 0;
		c->depth--;
		if (err)
			return err;
	}
	return check_sink(c, obj, s, t);
}

static int parse_sinks(struct actx *c, json_t *arr)
{
	struct agent_config *cfg = c->cfg;
	int err = 0;

	if (!json_is_array(arr))
		return fail_type(c, arr, "an array of sinks");
	cfg->sinks = calloc(json_array_size(arr) ?: 1, sizeof(*cfg->sinks));
	if (!cfg->sinks) {
		snprintf(c->d->error, sizeof(c->d->error), "%s: out of memory", c->name);
		return -ENOMEM;
	}
	for (size_t i = 0; i < json_array_size(arr) && !err; i++) {
		c->index = i;
		c->path[c->depth++] = (struct jloc_step){ .index = i };
		cfg->nr_sinks++;
		err = parse_sink(c, json_array_get(arr, i), &cfg->sinks[i]);
		c->depth--;
	}
	return err;
}

/* RFC 5424's HOSTNAME: 1 to 255 printable US-ASCII characters, no space. */
static int parse_host(struct actx *c, json_t *v)
{
	const char *h;
	int err = want_string(c, v, &h);

	if (err)
		return err;
	if (!h[0] || strlen(h) > 255)
		return fail(c, false, "a host name has 1 to 255 characters");
	for (const char *p = h; *p; p++)
		if (*p < 33 || *p > 126)
			return fail(c, false, "'%s': a host name is printable ASCII without spaces", h);
	return own(c, &c->cfg->host, h);
}

/* "accept_missing": hooks (hooks.h) the daemon may pin a set without. */
static int parse_accept(struct actx *c, json_t *arr)
{
	struct agent_config *cfg = c->cfg;
	int err = 0;

	if (!json_is_array(arr))
		return fail_type(c, arr, "an array of hook names");
	cfg->accept_missing = calloc(json_array_size(arr) + 1, sizeof(*cfg->accept_missing));
	if (!cfg->accept_missing) {
		snprintf(c->d->error, sizeof(c->d->error), "%s: out of memory", c->name);
		return -ENOMEM;
	}
	for (size_t i = 0; i < json_array_size(arr) && !err; i++) {
		const char *h;

		c->path[c->depth++] = (struct jloc_step){ .index = i };
		err = want_string(c, json_array_get(arr, i), &h);
		if (!err && !hooks__known(h))
			err = fail(c, false, "\"%s\" is not a hook of sbx-bpf's programs (see 'sbx-bpf hooks')", h);
		if (!err)
			err = own(c, &cfg->accept_missing[i], h);
		c->depth--;
	}
	return err;
}

static int parse_top(struct actx *c, json_t *root)
{
	const char *key;
	json_t *v;

	if (!json_is_object(root))
		return fail(c, false, "the agent configuration is a JSON object, not %s", type_name(root));
	json_object_foreach(root, key, v) {
		int err;

		c->path[c->depth++] = (struct jloc_step){ .key = key };
		if (!strcmp(key, "host"))
			err = parse_host(c, v);
		else if (!strcmp(key, "sinks"))
			err = parse_sinks(c, v);
		else if (!strcmp(key, "accept_missing"))
			err = parse_accept(c, v);
		else
			err = fail(c, true, "unknown key '%s' at the top level (known keys: host, sinks, "
				   "accept_missing)", key);
		c->depth--;
		if (err)
			return err;
	}
	return 0;
}

int agent_config_load_string(struct agent_config *cfg, const char *name, const char *json,
			     struct agent_diag *d)
{
	struct agent_diag spare;
	struct agent_config tmp = { 0 };
	struct actx c = { .name = name, .text = json, .d = d ?: &spare, .cfg = &tmp };
	json_error_t jerr;
	json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
	int err;

	if (!root) {
		snprintf(c.d->error, sizeof(c.d->error), "%s:%d:%d: invalid JSON: %s", name,
			 jerr.line > 0 ? jerr.line : 1, jerr.column > 0 ? jerr.column : 1, jerr.text);
		return -EINVAL;
	}
	err = parse_top(&c, root);
	json_decref(root);
	if (err) {
		agent_config_free(&tmp);
		return err;
	}
	*cfg = tmp;
	return 0;
}

int agent_config_load(struct agent_config *cfg, const char *file, struct agent_diag *d)
{
	struct agent_diag spare;
	char *text = malloc(CONFIG_FILE_MAX + 1);
	int n, err;

	d = d ?: &spare;
	if (!text)
		return -ENOMEM;
	n = read_file(file, text, CONFIG_FILE_MAX + 1);
	if (n < 0 || n == CONFIG_FILE_MAX) {
		err = n < 0 ? n : -EFBIG;
		snprintf(d->error, sizeof(d->error), "%s: %s", file,
			 n < 0 ? strerror(-n) : "too large for an agent configuration (1 MiB at most)");
		free(text);
		return err;
	}
	err = agent_config_load_string(cfg, file, text, d);
	free(text);
	return err;
}

void agent_config_free(struct agent_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->nr_sinks; i++) {
		free(cfg->sinks[i].origin);
		free(cfg->sinks[i].str);
		free(cfg->sinks[i].sd_id);
	}
	free(cfg->sinks);
	free(cfg->host);
	for (size_t i = 0; cfg->accept_missing && cfg->accept_missing[i]; i++)
		free(cfg->accept_missing[i]);
	free(cfg->accept_missing);
	*cfg = (struct agent_config){ 0 };
}

/* --- opening ------------------------------------------------------------------------------------ */

static struct sink *open_one(const struct agent_sink_conf *s, const char *version)
{
	struct sink_prom_opts prom = s->prom;

	switch (s->type) {
	case AGENT_SINK_JSONL:
		return sink_jsonl_new(&s->jsonl);
	case AGENT_SINK_SYSLOG:
		return sink_syslog_new(&s->syslog);
	case AGENT_SINK_PROMETHEUS:
		prom.version = version;
		return sink_prom_new(&prom);
	}
	errno = EINVAL;
	return NULL;
}

int agent_sinks_open(const struct agent_config *cfg, struct sink_set *set, const char *version,
		     struct agent_diag *d)
{
	static const char *const what[] = { "cannot open", "cannot reach", "cannot listen on" };
	struct agent_diag spare;

	d = d ?: &spare;
	for (size_t i = 0; i < cfg->nr_sinks; i++) {
		const struct agent_sink_conf *s = &cfg->sinks[i];
		struct sink *sk = open_one(s, version);
		int err;

		if (!sk) {
			err = -errno;
			snprintf(d->error, sizeof(d->error), "%s: %s '%s': %s", s->origin, what[s->type],
				 s->str ?: "-", strerror(-err));
			return err;
		}
		err = sink_set_add(set, sk);
		if (err) {
			snprintf(d->error, sizeof(d->error), "%s: %s", s->origin, strerror(-err));
			return err;
		}
	}
	return 0;
}
