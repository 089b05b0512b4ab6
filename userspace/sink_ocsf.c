// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sink_ocsf.c — events as OCSF 1.1.0 objects (the mapping table, with the
 * reasons for each choice, is in docs/events.md "OCSF"):
 *
 *   file operations          File System Activity   1001 (System Activity, 1)
 *   userns_create, ptrace,   Process Activity       1007
 *   signal, bpf, capability
 *   and the other task ops
 *   connect, sendto, bind,   Network Activity       4001 (Network Activity, 4)
 *   listen, socket
 *   dns                      DNS Activity           4003
 *   lifecycle facts          Process Activity       1007
 *
 * A verdict is the security_control profile's pair: denied is action
 * Denied (2) / disposition Blocked (2); audit is action Allowed (1) /
 * disposition Detected (15): a policy violation seen and let through. What
 * OCSF has no attribute for (cgroups, the sandbox, the errno) goes to
 * "unmapped". Everything is built from event_to_json()'s object, so the
 * addresses, names and UTF-8 clean-up are the same as in the JSON format.
 */
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "events.h"
#include "labels.h"
#include "sinks.h"

enum {
	CLASS_FILE = 1001,
	CLASS_PROCESS = 1007,
	CLASS_NETWORK = 4001,
	CLASS_DNS = 4003,
};

enum { FILE_UNKNOWN = 0, FILE_REGULAR = 1, FILE_FOLDER = 2, FILE_SYMLINK = 7 };
enum { SEV_INFO = 1, SEV_LOW = 2, SEV_MEDIUM = 3 };
enum { DIR_UNKNOWN = 0, DIR_INBOUND = 1, DIR_OUTBOUND = 2 };
#define ACTIVITY_OTHER	99

struct activity {
	unsigned class_uid;
	unsigned id;
	const char *name;
	unsigned file_type;	/* File System Activity: the file's type_id when the op tells it */
};

/* Denied connects are refused connections; the audit entries are in audit_activity(). */
static const struct activity op_activity[SBX_OP__MAX] = {
	[SBX_OP_READ]		= { CLASS_FILE, 2, "Read" },
	[SBX_OP_WRITE]		= { CLASS_FILE, 3, "Update" },
	[SBX_OP_CREATE]		= { CLASS_FILE, 1, "Create" },
	[SBX_OP_MKDIR]		= { CLASS_FILE, 1, "Create", FILE_FOLDER },
	[SBX_OP_RMDIR]		= { CLASS_FILE, 4, "Delete", FILE_FOLDER },
	[SBX_OP_UNLINK]		= { CLASS_FILE, 4, "Delete" },
	[SBX_OP_RENAME]		= { CLASS_FILE, 5, "Rename" },
	[SBX_OP_LINK]		= { CLASS_FILE, 1, "Create" },
	[SBX_OP_SYMLINK]	= { CLASS_FILE, 1, "Create", FILE_SYMLINK },
	[SBX_OP_TRUNCATE]	= { CLASS_FILE, 3, "Update" },
	[SBX_OP_CHMOD]		= { CLASS_FILE, 7, "Set Security" },
	[SBX_OP_CHOWN]		= { CLASS_FILE, 7, "Set Security" },
	[SBX_OP_UTIMES]		= { CLASS_FILE, 6, "Set Attributes" },
	[SBX_OP_SETXATTR]	= { CLASS_FILE, 6, "Set Attributes" },
	[SBX_OP_REMOVEXATTR]	= { CLASS_FILE, 6, "Set Attributes" },
	[SBX_OP_IOCTL]		= { CLASS_FILE, 6, "Set Attributes" },
	[SBX_OP_MOUNT]		= { CLASS_FILE, 12, "Mount" },
	[SBX_OP_UMOUNT]		= { CLASS_FILE, 13, "Unmount" },
	[SBX_OP_PIVOT_ROOT]	= { CLASS_FILE, ACTIVITY_OTHER, "Pivot Root" },
	[SBX_OP_USERNS]		= { CLASS_PROCESS, ACTIVITY_OTHER, "Create User Namespace" },
	[SBX_OP_CONNECT]	= { CLASS_NETWORK, 5, "Refuse" },
	[SBX_OP_SENDTO]		= { CLASS_NETWORK, 6, "Traffic" },
	[SBX_OP_BIND]		= { CLASS_NETWORK, ACTIVITY_OTHER, "Bind" },
	[SBX_OP_LISTEN]		= { CLASS_NETWORK, ACTIVITY_OTHER, "Listen" },	/* 1.1.0 has no Listen */
	[SBX_OP_SOCKET]		= { CLASS_NETWORK, ACTIVITY_OTHER, "Socket" },
	[SBX_OP_DNS]		= { CLASS_DNS, 2, "Response" },	/* the NXDOMAIN the resolver sent */
	/* Task and system ops: what the sandboxed process tried (its target, if any, in unmapped). */
	[SBX_OP_PTRACE]		= { CLASS_PROCESS, 3, "Open" },
	[SBX_OP_SIGNAL]		= { CLASS_PROCESS, ACTIVITY_OTHER, "Signal" },
	[SBX_OP_SCHED]		= { CLASS_PROCESS, ACTIVITY_OTHER, "Set Scheduling" },
	[SBX_OP_BPF]		= { CLASS_PROCESS, ACTIVITY_OTHER, "BPF" },
	[SBX_OP_KERNEL_LOAD]	= { CLASS_PROCESS, ACTIVITY_OTHER, "Load Kernel Code" },
	[SBX_OP_PERF]		= { CLASS_PROCESS, ACTIVITY_OTHER, "Open Perf Event" },
	[SBX_OP_CAPABILITY]	= { CLASS_PROCESS, ACTIVITY_OTHER, "Use Capability" },
	[SBX_OP_TTY]		= { CLASS_PROCESS, ACTIVITY_OTHER, "Terminal Input" },
	[SBX_OP_CLONE_CGROUP]	= { CLASS_PROCESS, 1, "Launch" },
};

static struct activity event_activity(const struct sbx_event *ev)
{
	static const struct activity open = { CLASS_NETWORK, 1, "Open", FILE_UNKNOWN };
	static const struct activity query = { CLASS_DNS, 1, "Query", FILE_UNKNOWN };

	if (ev->op >= SBX_OP__MAX || !op_activity[ev->op].class_uid)
		return (struct activity){ CLASS_FILE, ACTIVITY_OTHER, sbx_op_name(ev->op), FILE_UNKNOWN };
	/* In audit mode the connection went ahead, and the query got its real answer. */
	if (ev->verdict == SBX_VERDICT_AUDIT && ev->op == SBX_OP_CONNECT)
		return open;
	if (ev->verdict == SBX_VERDICT_AUDIT && ev->op == SBX_OP_DNS)
		return query;
	return op_activity[ev->op];
}

static const char *class_name(unsigned class_uid)
{
	switch (class_uid) {
	case CLASS_FILE: return "File System Activity";
	case CLASS_PROCESS: return "Process Activity";
	case CLASS_NETWORK: return "Network Activity";
	case CLASS_DNS: return "DNS Activity";
	}
	return "Unknown";
}

static const char *category_name(unsigned class_uid)
{
	return class_uid / 1000 == 1 ? "System Activity" : "Network Activity";
}

static const char *severity_name(int id)
{
	switch (id) {
	case SEV_INFO: return "Informational";
	case SEV_LOW: return "Low";
	case SEV_MEDIUM: return "Medium";
	}
	return "Unknown";
}

static json_t *text(const char *s)
{
	return event_json_text(s, s ? strlen(s) : 0);
}

static json_t *metadata(const struct sink_ctx *ctx, const char *log_name, bool control)
{
	char uid[160];
	json_t *m, *labels;
	const char *key;
	json_t *v;

	snprintf(uid, sizeof(uid), "%s:%llu", ctx->boot_id ? ctx->boot_id : "-", ctx->seq);
	m = json_pack("{s:s, s:{s:s, s:s, s:o}, s:o, s:I, s:s, s:[s, s*]}",
		      "version", SINK_OCSF_VERSION,
		      "product", "name", "sbx-bpf", "vendor_name", "sbx-bpf",
		      "version", text(ctx->version ? ctx->version : "unknown"),
		      "uid", text(uid),
		      "sequence", (json_int_t)ctx->seq,
		      "log_name", log_name,
		      "profiles", "host", control ? "security_control" : NULL);
	if (!m || !json_object_size(ctx->labels))
		return m;
	/* OCSF's metadata.labels is a list of strings: the sandbox's labels as "KEY=VALUE". */
	labels = json_array();
	json_object_foreach((json_t *)ctx->labels, key, v) {
		char kv[LABEL_KEY_MAX + LABEL_VALUE_MAX + 2];

		snprintf(kv, sizeof(kv), "%s=%s", key, json_string_value(v) ?: "");
		json_array_append_new(labels, json_string(kv));
	}
	json_object_set_new(m, "labels", labels);
	return m;
}

/* A sandbox that is a container (the OCI hook's labels): OCSF's container object. */
static int set_container(json_t *o, const struct sink_ctx *ctx)
{
	const char *id = json_string_value(json_object_get(ctx->labels, "container.id"));
	const char *name = json_string_value(json_object_get(ctx->labels, "container.name"));

	if (!id)
		return 0;
	return json_object_set_new(o, "container", json_pack("{s:s, s:s*}", "uid", id, "name", name));
}

/* What every class has: classification, time, severity, metadata, the device. */
static json_t *base(const struct activity *a, __u64 mono_ns, int severity, const char *message,
		    const struct sink_ctx *ctx, const char *log_name, bool control)
{
	char type_name[96];
	struct timespec ts;

	event_wall_time(mono_ns, &ts);
	snprintf(type_name, sizeof(type_name), "%s: %s", class_name(a->class_uid), a->name);
	return json_pack("{s:i, s:s, s:i, s:s, s:i, s:o, s:I, s:o, s:I, s:i, s:s, s:o, s:o,"
			 " s:{s:o, s:i, s:s}}",
			 "class_uid", (int)a->class_uid, "class_name", class_name(a->class_uid),
			 "category_uid", (int)(a->class_uid / 1000),
			 "category_name", category_name(a->class_uid),
			 "activity_id", (int)a->id, "activity_name", text(a->name),
			 "type_uid", (json_int_t)a->class_uid * 100 + a->id, "type_name", text(type_name),
			 "time", (json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
			 "severity_id", severity, "severity", severity_name(severity),
			 "message", text(message),
			 "metadata", metadata(ctx, log_name, control),
			 "device", "hostname", text(ctx->host), "type_id", 0, "type", "Unknown");
}

/* --- violations ------------------------------------------------------------------------ */

static json_t *get(json_t *obj, const char *path)
{
	char key[32];
	const char *dot = strchr(path, '.');

	if (!dot)
		return json_object_get(obj, path);
	snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
	return get(json_object_get(obj, key), dot + 1);
}

static json_t *copy(json_t *obj, const char *path)
{
	json_t *v = get(obj, path);

	return v ? json_incref(v) : json_null();
}

static json_t *process(json_t *j)
{
	char uid[16];

	snprintf(uid, sizeof(uid), "%lld", json_integer_value(get(j, "process.uid")));
	return json_pack("{s:o, s:o, s:o, s:{s:s}, s:{s:o}}",
			 "pid", copy(j, "process.pid"), "tid", copy(j, "process.tid"),
			 "name", copy(j, "process.comm"), "user", "uid", uid,
			 "parent_process", "pid", copy(j, "process.ppid"));
}

/* The process that tried; a resolver event whose sender is unknown (pid 0) has none. */
static int set_actor(json_t *o, const struct sbx_event *ev, json_t *j)
{
	char uid[16];

	if (!ev->tgid)
		return 0;
	snprintf(uid, sizeof(uid), "%u", ev->uid);
	return json_object_set_new(o, "actor", json_pack("{s:o, s:{s:s}}", "process", process(j),
							 "user", "uid", uid));
}

/* action/disposition/status, and the rule as the firewall_rule that decided. */
static int set_control(json_t *o, const struct sbx_event *ev, json_t *j)
{
	bool denied = ev->verdict == SBX_VERDICT_DENY;	/* audit and granted: let through */
	json_t *id = get(j, "rule.id"), *rule;
	char uid[16];

	rule = json_pack("{s:o}", "name", copy(j, "rule.text"));
	if (rule && json_is_integer(id)) {
		snprintf(uid, sizeof(uid), "%lld", json_integer_value(id));
		json_object_set_new(rule, "uid", json_string(uid));
	}
	return json_object_update_new(o, json_pack("{s:i, s:s, s:i, s:s, s:i, s:s, s:o, s:o}",
			"action_id", denied ? 2 : 1, "action", denied ? "Denied" : "Allowed",
			"disposition_id", denied ? 2 : 15, "disposition", denied ? "Blocked" : "Detected",
			"status_id", denied ? 2 : 1, "status", denied ? "Failure" : "Success",
			"status_detail", copy(j, "rule.text"),
			"firewall_rule", rule));
}

static json_t *file_object(json_t *path_json, unsigned type_id, bool unresolved)
{
	static const char *const types[] = { [FILE_UNKNOWN] = "Unknown", [FILE_REGULAR] = "Regular File",
					     [FILE_FOLDER] = "Folder", [FILE_SYMLINK] = "Symbolic Link" };
	const char *path = json_string_value(path_json), *slash = path ? strrchr(path, '/') : NULL;
	json_t *f;

	if (unresolved || !path || !path[0])
		return json_pack("{s:s, s:i, s:s}", "name", "(unresolvable path)", "type_id", 0,
				 "type", types[0]);
	f = json_pack("{s:s, s:s, s:i, s:s}", "path", path, "name", slash ? slash + 1 : path,
		      "type_id", (int)type_id, "type", types[type_id]);
	if (f && slash)
		json_object_set_new(f, "parent_folder",
				    slash == path ? json_string("/") : json_stringn(path, slash - path));
	return f;
}

/* file; for rename and link the other name as file_result (what it would have become). */
static int set_file(json_t *o, const struct sbx_event *ev, json_t *j, const struct activity *a)
{
	bool unresolved = ev->flags & SBX_EV_PATH_UNRESOLVED;
	int err = json_object_set_new(o, "file", file_object(get(j, "path"), a->file_type, unresolved));

	if (!err && (ev->flags & SBX_EV_PATH2))
		err = json_object_set_new(o, "file_result", file_object(get(j, "path2"), a->file_type, false));
	return err;
}

static json_t *endpoint(json_t *j, const struct sbx_event *ev, const char *host)
{
	json_t *e = json_object(), *net = get(j, "net");
	char name[SBX_PATH_MAX + 16];

	if (!e)
		return NULL;
	if (json_is_string(json_object_get(net, "address"))) {
		json_object_set(e, "ip", json_object_get(net, "address"));
		json_object_set(e, "port", json_object_get(net, "port"));
	}
	if (ev->family == AF_UNIX) {
		snprintf(name, sizeof(name), "unix:%s%s", (ev->flags & SBX_EV_ABSTRACT) ? "@" : "",
			 json_string_value(get(j, "path")) ?: "");
		json_object_set_new(e, "name", json_string(name));
	}
	if (host)
		json_object_set_new(e, "hostname", text(host));
	else if (json_is_string(get(j, "domain")))
		json_object_set(e, "hostname", get(j, "domain"));
	return e;
}

static json_t *connection_info(json_t *j, const struct sbx_event *ev, int direction)
{
	static const char *const dirs[] = { "Unknown", "Inbound", "Outbound" };
	json_t *addr = get(j, "net.address");
	json_t *c = json_pack("{s:o, s:i, s:s}", "protocol_name", copy(j, "net.protocol"),
			      "direction_id", direction, "direction", dirs[direction]);

	if (c && json_is_string(addr)) {	/* an IP connection: a v4-mapped address is IPv4 */
		json_object_set_new(c, "protocol_num", json_integer(ev->protocol));
		json_object_set_new(c, "protocol_ver_id",
				    json_integer(strchr(json_string_value(addr), ':') ? 6 : 4));
	}
	return c;
}

/*
 * connect/sendto: from this host to the target; bind/listen: the local
 * address that would have accepted (dst_endpoint, the responder's side);
 * socket: no address at all.
 */
static int set_network(json_t *o, const struct sbx_event *ev, json_t *j, const struct sink_ctx *ctx)
{
	bool inbound = ev->op == SBX_OP_BIND || ev->op == SBX_OP_LISTEN;
	int dir = inbound ? DIR_INBOUND : ev->op == SBX_OP_SOCKET ? DIR_UNKNOWN : DIR_OUTBOUND;
	int err;

	if (inbound) {
		err = json_object_set_new(o, "dst_endpoint", endpoint(j, ev, ctx->host));
	} else {
		err = json_object_set_new(o, "src_endpoint", json_pack("{s:o}", "hostname", text(ctx->host)));
		if (!err && ev->op != SBX_OP_SOCKET)
			err = json_object_set_new(o, "dst_endpoint", endpoint(j, ev, NULL));
	}
	return err ?: json_object_set_new(o, "connection_info", connection_info(j, ev, dir));
}

/* The refused name; a denied query was answered NXDOMAIN by sbx-bpf's resolver. */
static int set_dns(json_t *o, const struct sbx_event *ev, json_t *j, const struct sink_ctx *ctx)
{
	int err = json_object_update_new(o, json_pack("{s:{s:o}, s:{s:o}}",
			"query", "hostname", copy(j, "path"),
			"src_endpoint", "hostname", text(ctx->host)));

	if (!err && (ev->protocol == IPPROTO_UDP || ev->protocol == IPPROTO_TCP))
		err = json_object_set_new(o, "connection_info", json_pack("{s:s, s:i, s:i, s:s}",
				"protocol_name", ev->protocol == IPPROTO_TCP ? "tcp" : "udp",
				"protocol_num", (int)ev->protocol,
				"direction_id", DIR_OUTBOUND, "direction", "Outbound"));
	if (!err && ev->verdict == SBX_VERDICT_DENY)
		err = json_object_update_new(o, json_pack("{s:i, s:s}", "rcode_id", 3, "rcode", "NXDomain"));
	return err;
}

static int set_class(json_t *o, const struct sbx_event *ev, json_t *j, const struct activity *a,
		     const struct sink_ctx *ctx)
{
	switch (a->class_uid) {
	case CLASS_FILE: return set_file(o, ev, j, a);
	case CLASS_PROCESS: return json_object_set_new(o, "process", process(j));
	case CLASS_NETWORK: return set_network(o, ev, j, ctx);
	case CLASS_DNS: return set_dns(o, ev, j, ctx);
	}
	return -1;
}

/* What OCSF has no attribute for, under the names of our own schema. */
static json_t *unmapped(json_t *j, const struct sink_ctx *ctx)
{
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "schema", SBX_EVENT_SCHEMA, "boot_id", text(ctx->boot_id),
			 "op", copy(j, "op"), "verdict", copy(j, "verdict"),
			 "sandbox", copy(j, "sandbox"), "cgroup_id", copy(j, "cgroup_id"),
			 "sandbox_cgroup_id", copy(j, "sandbox_cgroup_id"), "errno", copy(j, "errno"),
			 "path_unresolved", copy(j, "path_unresolved"),
			 "moves_between_rules", copy(j, "moves_between_rules"),
			 "directory_only", copy(j, "directory_only"),
			 "net", copy(j, "net"), "domain", copy(j, "domain"),
			 "target", copy(j, "target"), "detail", copy(j, "detail"), "arg", copy(j, "arg"),
			 "descriptor", copy(j, "descriptor"));
}

json_t *sink_ocsf_event(const struct sbx_event *ev, const struct sink_ctx *ctx)
{
	json_t *j = event_to_json(ev, ctx->rule_text, ctx->domain, ctx->sandbox), *o;
	struct activity a = event_activity(ev);
	char msg[2 * SBX_PATH_MAX + 512];
	bool bad;

	if (!j)
		return NULL;
	sink_human_line(ev, ctx, msg, sizeof(msg));
	o = base(&a, ev->ts_ns, ev->verdict == SBX_VERDICT_DENY ? SEV_MEDIUM : SEV_LOW, msg, ctx,
		 "violation", true);
	bad = !o || set_control(o, ev, j) || set_actor(o, ev, j) || set_class(o, ev, j, &a, ctx) ||
	      json_object_set_new(o, "unmapped", unmapped(j, ctx)) || set_container(o, ctx) ||
	      /* OCSF's own field for "this happened N times" (coalesced violations). */
	      json_object_set_new(o, "count", json_integer(event_repeat(ev)));
	json_decref(j);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* --- lifecycle ---------------------------------------------------------------------------- */

/*
 * The sandbox's tree as a process: oom_kill, timeout and killed end it
 * (Terminate); pids_max, frozen and thawed are Other. The actor is
 * sbx-bpf, whose limits the kernel enforced.
 */
json_t *sink_ocsf_lifecycle(const struct sink_lifecycle *lc, const struct sink_ctx *ctx)
{
	static const char *const ends[] = { "oom_kill", "timeout", "killed" };
	struct activity a = { CLASS_PROCESS, ACTIVITY_OTHER, lc->event ?: "unknown", FILE_UNKNOWN };
	const char *sandbox = ctx->sandbox ?: "unknown";
	char msg[512];
	json_t *o, *proc;
	bool bad;

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (lc->event && !strcmp(lc->event, ends[i]))
			a = (struct activity){ CLASS_PROCESS, 2, "Terminate", FILE_UNKNOWN };
	snprintf(msg, sizeof(msg), "%s in sandbox %s: %s", lc->event ?: "?",
		 sandbox, lc->detail ?: "");
	o = base(&a, lc->ts_ns ?: event_mono_now(), SEV_INFO, msg, ctx, "lifecycle", false);
	proc = lc->pid ? json_pack("{s:i, s:o}", "pid", (int)lc->pid, "name", text(lc->comm ?: sandbox))
		       : json_pack("{s:o}", "name", text(sandbox));
	bad = !o || json_object_update_new(o, json_pack("{s:o, s:{s:s}, s:i, s:s, s:{s:s, s:o, s:o, s:o, s:o, s:o}}",
			"process", proc, "actor", "app_name", "sbx-bpf",
			"status_id", 1, "status", "Success",
			"unmapped", "schema", SBX_EVENT_SCHEMA, "boot_id", text(ctx->boot_id),
			"event", text(lc->event), "detail", text(lc->detail), "sandbox", text(ctx->sandbox),
			"sandbox_cgroup_id", lc->cgroup_id ? json_integer((json_int_t)lc->cgroup_id) : json_null()));
	if (!bad && lc->missing)
		json_object_set(json_object_get(o, "unmapped"), "missing", lc->missing);
	bad = bad || set_container(o, ctx);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}
