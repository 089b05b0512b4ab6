// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The sink set, the boot-scoped sequence, JSON lines (rotation, reopen) and the OCSF mapping. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "sinktest.h"

static const struct sink_ident ident = { .host = "host-1", .boot_id = "b00t", .version = "9.9" };

/* Every line of @path parsed; the array's reference is the caller's. */
static json_t *read_lines(const char *path)
{
	json_t *all = json_array();
	char line[65536];
	FILE *f = fopen(path, "r");

	if (!f)
		return all;
	while (fgets(line, sizeof(line), f)) {
		json_error_t err;
		json_t *j = json_loads(line, 0, &err);

		assert_non_null(j);	/* every line is one whole JSON object */
		json_array_append_new(all, j);
	}
	fclose(f);
	return all;
}

static struct sink *jsonl(const char *path, enum sink_format fmt, unsigned long long max, unsigned keep)
{
	struct sink_jsonl_opts o = { .path = path, .format = fmt, .max_bytes = max, .keep = keep };
	struct sink *s = sink_jsonl_new(&o);

	assert_non_null(s);
	return s;
}

static const char *str(json_t *j, const char *key)
{
	return json_string_value(json_object_get(j, key));
}

static long long num(json_t *j, const char *key)
{
	return json_integer_value(json_object_get(j, key));
}

/* --- JSON lines and the set ---------------------------------------------------------- */

static void test_json_lines(void **state)
{
	char *dir = make_tmpdir(), path[256];
	struct sink_lifecycle lc = { .event = "oom_kill", .detail = "1 process(es) killed", .cgroup_id = 76 };
	struct sink_ctx in = { .rule_text = "denyRead ~/.ssh", .sandbox = "agent" };
	struct sink_set *set = sink_set_new(&ident);
	struct sbx_event ev;
	json_t *lines, *j;

	(void)state;
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	assert_int_equal(sink_set_add(set, jsonl(path, SINK_FORMAT_JSON, 0, 0)), 0);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/root/.ssh/id_rsa");
	assert_int_equal(sink_set_emit(set, &ev, &in), 0);
	fill_net(&ev, SBX_OP_CONNECT, SBX_VERDICT_DENY, "10.0.0.1", 443, IPPROTO_TCP);
	in.domain = "api.example.com";
	assert_int_equal(sink_set_emit(set, &ev, &in), 0);
	assert_int_equal(sink_set_lifecycle(set, &lc, "agent"), 0);
	sink_set_free(set);

	lines = read_lines(path);
	assert_int_equal(json_array_size(lines), 3);
	for (size_t i = 0; i < 3; i++) {
		j = json_array_get(lines, i);
		assert_string_equal(str(j, "host"), "host-1");
		assert_string_equal(str(j, "boot_id"), "b00t");
		assert_int_equal(num(j, "seq"), i + 1);
		assert_string_equal(str(j, "schema"), SBX_EVENT_SCHEMA);
		assert_string_equal(str(j, "sandbox"), "agent");
	}
	j = json_array_get(lines, 0);
	assert_string_equal(str(j, "path"), "/root/.ssh/id_rsa");
	assert_string_equal(str(json_object_get(j, "rule"), "text"), "denyRead ~/.ssh");
	assert_string_equal(str(json_array_get(lines, 1), "domain"), "api.example.com");
	j = json_array_get(lines, 2);
	assert_string_equal(str(j, "type"), "lifecycle");
	assert_string_equal(str(j, "event"), "oom_kill");
	assert_int_equal(num(j, "sandbox_cgroup_id"), 76);
	assert_true(json_is_null(json_object_get(j, "process")));
	json_decref(lines);
	rm_tmpdir(dir);
}

static int fail_emit(struct sink *s, const struct sbx_event *ev, const struct sink_ctx *ctx)
{
	(void)ev; (void)ctx;
	s->dropped++;
	return -EIO;
}

static void fail_close(struct sink *s)
{
	free(s);
}

static const struct sink_ops fail_ops = { .type = "fail", .emit = fail_emit, .close = fail_close };

/* One failing sink does not keep the record from the others, and each record has one seq. */
static void test_set_fanout(void **state)
{
	char *dir = make_tmpdir(), a[256], b[256];
	struct sink_set *set = sink_set_new(&ident);
	struct sink *bad = calloc(1, sizeof(*bad));
	struct sbx_event ev;
	json_t *la, *lb;

	(void)state;
	bad->ops = &fail_ops;
	snprintf(a, sizeof(a), "%s/a.jsonl", dir);
	snprintf(b, sizeof(b), "%s/b.jsonl", dir);
	assert_int_equal(sink_set_add(set, jsonl(a, SINK_FORMAT_JSON, 0, 0)), 0);
	assert_int_equal(sink_set_add(set, bad), 0);
	assert_int_equal(sink_set_add(set, jsonl(b, SINK_FORMAT_OCSF, 0, 0)), 0);
	assert_int_equal(sink_set_count(set), 3);
	fill_event(&ev, SBX_OP_WRITE, SBX_VERDICT_DENY, "/etc/passwd");
	assert_int_equal(sink_set_emit(set, &ev, NULL), -EIO);
	assert_int_equal(sink_set_emit(set, &ev, NULL), -EIO);
	assert_int_equal(sink_set_dropped(set), 2);
	assert_int_equal(sink_set_next_seq(set), 3);
	sink_set_free(set);

	la = read_lines(a);
	lb = read_lines(b);
	assert_int_equal(json_array_size(la), 2);
	assert_int_equal(json_array_size(lb), 2);
	assert_int_equal(num(json_array_get(la, 1), "seq"), 2);
	assert_int_equal(num(json_object_get(json_array_get(lb, 1), "metadata"), "sequence"), 2);
	json_decref(la);
	json_decref(lb);
	rm_tmpdir(dir);
}

/* A clean restart goes on; a crash skips to the next block; another boot starts at 1. */
static void test_seq_file(void **state)
{
	char *dir = make_tmpdir(), path[256];
	struct sink_ident other = ident;
	struct sink_set *set, *crashed;
	struct sbx_event ev;

	(void)state;
	snprintf(path, sizeof(path), "%s/seq", dir);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/x");
	set = sink_set_new(&ident);
	assert_int_equal(sink_set_seq_file(set, path), 0);
	assert_int_equal(sink_set_next_seq(set), 1);
	for (int i = 0; i < 3; i++)
		sink_set_emit(set, &ev, NULL);
	sink_set_free(set);

	crashed = sink_set_new(&ident);
	assert_int_equal(sink_set_seq_file(crashed, path), 0);
	assert_int_equal(sink_set_next_seq(crashed), 4);	/* clean stop: no gap */
	sink_set_emit(crashed, &ev, NULL);
	/* A crash: that set is not freed (until the end), so what is on disk is its reservation. */
	set = sink_set_new(&ident);
	assert_int_equal(sink_set_seq_file(set, path), 0);
	assert_int_equal(sink_set_next_seq(set), 4 + SINK_SEQ_BLOCK);
	for (int i = 0; i < SINK_SEQ_BLOCK + 1; i++)		/* past its block: a new reservation */
		sink_set_emit(set, &ev, NULL);
	/* Crash again: the next daemon starts beyond every number handed out. */
	{
		struct sink_set *next = sink_set_new(&ident);

		assert_int_equal(sink_set_seq_file(next, path), 0);
		assert_true(sink_set_next_seq(next) >= sink_set_next_seq(set));
		sink_set_free(next);
	}
	sink_set_free(set);

	other.boot_id = "another-boot";
	set = sink_set_new(&other);
	assert_int_equal(sink_set_seq_file(set, path), 0);
	assert_int_equal(sink_set_next_seq(set), 1);
	sink_set_free(set);
	sink_set_free(crashed);
	rm_tmpdir(dir);
}

static void test_ident(void **state)
{
	char boot[64], host[256];
	struct sink_set *set = sink_set_new(NULL);

	(void)state;
	assert_int_equal(sink_boot_id(boot, sizeof(boot)), 0);
	assert_int_equal(strlen(boot), 36);			/* a UUID, without the newline */
	assert_int_equal(sink_hostname(host, sizeof(host)), 0);
	assert_string_equal(sink_set_boot_id(set), boot);
	assert_string_equal(sink_set_host(set), host);
	sink_set_free(set);
}

static size_t count_files(const char *dir)
{
	char cmd[300], path[300];
	size_t n = 0;
	struct stat st;

	(void)cmd;
	for (int i = 0; i < 10; i++) {
		snprintf(path, sizeof(path), i ? "%s/e.jsonl.%d" : "%s/e.jsonl", dir, i);
		n += !stat(path, &st);
	}
	return n;
}

/* The file never grows past max_bytes; keep 2 leaves e.jsonl, .1 and .2, oldest in .2. */
static void test_rotation(void **state)
{
	char *dir = make_tmpdir(), path[256], old[300];
	struct sink_set *set = sink_set_new(&ident);
	long long last = 0;
	struct sbx_event ev;
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/e.jsonl", dir);
	assert_int_equal(sink_set_add(set, jsonl(path, SINK_FORMAT_JSON, 2000, 2)), 0);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/home/u/.ssh/id_rsa");
	for (int i = 0; i < 40; i++)
		assert_int_equal(sink_set_emit(set, &ev, NULL), 0);
	sink_set_free(set);

	assert_int_equal(count_files(dir), 3);
	for (int i = 2; i >= 0; i--) {
		json_t *lines;

		snprintf(old, sizeof(old), i ? "%s.%d" : "%s", path, i);
		assert_int_equal(stat(old, &st), 0);
		assert_true(st.st_size <= 2000);
		lines = read_lines(old);
		assert_true(json_array_size(lines) > 0);
		/* Older files hold older records, and no record is split or repeated. */
		assert_int_equal(num(json_array_get(lines, 0), "seq"), last ? last + 1 : num(json_array_get(lines, 0), "seq"));
		last = num(json_array_get(lines, json_array_size(lines) - 1), "seq");
		json_decref(lines);
	}
	assert_int_equal(last, 40);
	rm_tmpdir(dir);
}

/* keep 0: the full file is started over. */
static void test_rotation_keep0(void **state)
{
	char *dir = make_tmpdir(), path[256];
	struct sink *s;
	struct sbx_event ev;
	struct sink_ctx ctx = { .host = "h", .boot_id = "b" };
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/e.jsonl", dir);
	s = jsonl(path, SINK_FORMAT_JSON, 1500, 0);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/x");
	for (int i = 0; i < 20; i++) {
		ctx.seq = i + 1;
		assert_int_equal(s->ops->emit(s, &ev, &ctx), 0);
	}
	s->ops->close(s);
	assert_int_equal(count_files(dir), 1);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size <= 1500 && st.st_size > 0);
	rm_tmpdir(dir);
}

/* After logrotate's rename, reopen (SIGHUP) starts a new file at the old name. */
static void test_reopen(void **state)
{
	char *dir = make_tmpdir(), path[256], moved[300];
	struct sink_set *set = sink_set_new(&ident);
	struct sbx_event ev;
	json_t *a, *b;

	(void)state;
	snprintf(path, sizeof(path), "%s/e.jsonl", dir);
	snprintf(moved, sizeof(moved), "%s/e.jsonl.old", dir);
	assert_int_equal(sink_set_add(set, jsonl(path, SINK_FORMAT_JSON, 0, 0)), 0);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/x");
	sink_set_emit(set, &ev, NULL);
	assert_int_equal(rename(path, moved), 0);
	sink_set_emit(set, &ev, NULL);		/* still into the renamed file */
	assert_int_equal(sink_set_reopen(set), 0);
	sink_set_emit(set, &ev, NULL);
	sink_set_free(set);
	a = read_lines(moved);
	b = read_lines(path);
	assert_int_equal(json_array_size(a), 2);
	assert_int_equal(json_array_size(b), 1);
	assert_int_equal(num(json_array_get(b, 0), "seq"), 3);
	json_decref(a);
	json_decref(b);
	rm_tmpdir(dir);
}

static void test_jsonl_errors(void **state)
{
	struct sink_jsonl_opts o = { .path = "/nonexistent-dir/x/events.jsonl" };
	int fd;

	(void)state;
	errno = 0;
	assert_null(sink_jsonl_new(&o));
	assert_int_equal(errno, ENOENT);
	/* O_CLOEXEC: the sink's descriptor is not inherited by what the daemon runs. */
	o.path = "/tmp/sbx-sinks-cloexec.jsonl";
	struct sink *s = sink_jsonl_new(&o);

	assert_non_null(s);
	for (fd = 3; fd < 64; fd++) {
		char link[64], target[256];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0 && (target[n] = '\0', !strcmp(target, o.path)))
			break;
	}
	assert_true(fd < 64);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(fd, F_GETFL) & O_APPEND);
	s->ops->close(s);
	unlink(o.path);
}

/* "-" writes to stdout. */
static void test_jsonl_stdout(void **state)
{
	char *dir = make_tmpdir(), path[256];
	struct sink_jsonl_opts o = { .path = "-" };
	struct sink_ctx ctx = { .host = "h", .boot_id = "b", .seq = 7 };
	int saved = dup(STDOUT_FILENO), fd;
	bool open_after;
	struct sbx_event ev;
	struct sink *s;
	json_t *lines;

	(void)state;
	snprintf(path, sizeof(path), "%s/out", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	s = sink_jsonl_new(&o);
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/x");
	assert_int_equal(s->ops->emit(s, &ev, &ctx), 0);
	s->ops->close(s);
	open_after = fcntl(STDOUT_FILENO, F_GETFD) != -1;	/* the sink does not close stdout */
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(fd);
	assert_true(open_after);
	lines = read_lines(path);
	assert_int_equal(json_array_size(lines), 1);
	assert_int_equal(num(json_array_get(lines, 0), "seq"), 7);
	json_decref(lines);
	rm_tmpdir(dir);
}

/* --- OCSF ---------------------------------------------------------------------------- */

static const struct sink_ctx octx = { .rule_text = "denyRead ~/.ssh", .sandbox = "agent",
				      .host = "host-1", .boot_id = "b00t", .version = "9.9", .seq = 12 };

static json_t *at(json_t *j, const char *path)
{
	char key[64];
	const char *dot = strchr(path, '.');

	if (!dot)
		return json_object_get(j, path);
	snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
	return at(json_object_get(j, key), dot + 1);
}

static long long inum(json_t *j, const char *path)
{
	assert_true(json_is_integer(at(j, path)));
	return json_integer_value(at(j, path));
}

static const char *istr(json_t *j, const char *path)
{
	assert_true(json_is_string(at(j, path)));
	return json_string_value(at(j, path));
}

/* class, activity and type of every operation, and what each verdict makes of it */
/* A "throttled" record is a fact about the sandbox: sinks show it as lifecycle. */
static void test_throttled(void **state)
{
	char *dir = make_tmpdir(), path[256];
	struct sink_ctx in = { .sandbox = "agent" };
	struct sink_set *set = sink_set_new(&ident);
	struct sbx_event ev;
	json_t *lines, *j;

	(void)state;
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	assert_int_equal(sink_set_add(set, jsonl(path, SINK_FORMAT_JSON, 0, 0)), 0);
	fill_event(&ev, SBX_OP_THROTTLED, SBX_VERDICT_DENY, "");
	ev.repeat = 640;
	ev.sandbox_cgroup_id = 31;
	assert_int_equal(sink_set_emit(set, &ev, &in), 0);
	sink_set_free(set);
	lines = read_lines(path);
	assert_int_equal(json_array_size(lines), 1);
	j = json_array_get(lines, 0);
	assert_string_equal(str(j, "type"), "lifecycle");
	assert_string_equal(str(j, "event"), "throttled");
	assert_non_null(strstr(str(j, "detail"), "640 violations"));
	assert_int_equal(num(j, "sandbox_cgroup_id"), 31);
	json_decref(lines);
	rm_tmpdir(dir);
}

static void test_ocsf_classes(void **state)
{
	static const struct { __u32 op; int cls, act; } want[] = {
		{ SBX_OP_READ, 1001, 2 }, { SBX_OP_WRITE, 1001, 3 }, { SBX_OP_CREATE, 1001, 1 },
		{ SBX_OP_MKDIR, 1001, 1 }, { SBX_OP_RMDIR, 1001, 4 }, { SBX_OP_UNLINK, 1001, 4 },
		{ SBX_OP_RENAME, 1001, 5 }, { SBX_OP_LINK, 1001, 1 }, { SBX_OP_SYMLINK, 1001, 1 },
		{ SBX_OP_TRUNCATE, 1001, 3 }, { SBX_OP_CHMOD, 1001, 7 }, { SBX_OP_CHOWN, 1001, 7 },
		{ SBX_OP_UTIMES, 1001, 6 }, { SBX_OP_SETXATTR, 1001, 6 }, { SBX_OP_REMOVEXATTR, 1001, 6 },
		{ SBX_OP_IOCTL, 1001, 6 }, { SBX_OP_MOUNT, 1001, 12 }, { SBX_OP_UMOUNT, 1001, 13 },
		{ SBX_OP_PIVOT_ROOT, 1001, 99 }, { SBX_OP_USERNS, 1007, 99 },
		{ SBX_OP_CONNECT, 4001, 5 }, { SBX_OP_SENDTO, 4001, 6 }, { SBX_OP_BIND, 4001, 99 },
		{ SBX_OP_LISTEN, 4001, 99 }, { SBX_OP_SOCKET, 4001, 99 }, { SBX_OP_DNS, 4003, 2 },
	};
	struct sbx_event ev;

	(void)state;
	/* Every violation op is mapped ("throttled" goes the lifecycle way: test_throttled). */
	assert_int_equal(sizeof(want) / sizeof(want[0]), SBX_OP_THROTTLED - 1);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		json_t *o;

		fill_event(&ev, want[i].op, SBX_VERDICT_DENY, "/w/f");
		o = sink_ocsf_event(&ev, &octx);
		assert_non_null(o);
		assert_int_equal(inum(o, "class_uid"), want[i].cls);
		assert_int_equal(inum(o, "category_uid"), want[i].cls / 1000);
		assert_int_equal(inum(o, "activity_id"), want[i].act);
		assert_int_equal(inum(o, "type_uid"), want[i].cls * 100 + want[i].act);
		assert_int_equal(inum(o, "action_id"), 2);		/* Denied */
		assert_int_equal(inum(o, "disposition_id"), 2);	/* Blocked */
		assert_int_equal(inum(o, "status_id"), 2);		/* Failure */
		assert_int_equal(inum(o, "severity_id"), 3);
		assert_string_equal(istr(o, "firewall_rule.name"), "denyRead ~/.ssh");
		assert_string_equal(istr(o, "firewall_rule.uid"), "3");
		assert_string_equal(istr(o, "metadata.version"), SINK_OCSF_VERSION);
		assert_string_equal(istr(o, "metadata.uid"), "b00t:12");
		assert_int_equal(inum(o, "metadata.sequence"), 12);
		assert_string_equal(istr(o, "metadata.product.name"), "sbx-bpf");
		assert_string_equal(istr(o, "metadata.product.version"), "9.9");
		assert_string_equal(istr(o, "device.hostname"), "host-1");
		assert_string_equal(istr(o, "unmapped.sandbox"), "agent");
		assert_int_equal(inum(o, "unmapped.cgroup_id"), 77);
		json_decref(o);

		ev.verdict = SBX_VERDICT_AUDIT;
		o = sink_ocsf_event(&ev, &octx);
		assert_int_equal(inum(o, "action_id"), 1);		/* Allowed */
		assert_int_equal(inum(o, "disposition_id"), 15);	/* Detected */
		assert_int_equal(inum(o, "status_id"), 1);
		assert_int_equal(inum(o, "severity_id"), 2);
		if (want[i].op == SBX_OP_CONNECT)	/* it went ahead: an open connection */
			assert_int_equal(inum(o, "activity_id"), 1);
		if (want[i].op == SBX_OP_DNS)		/* the query got its real answer */
			assert_int_equal(inum(o, "activity_id"), 1);
		json_decref(o);
	}
}

static void test_ocsf_file(void **state)
{
	struct sink_ctx ctx = octx;
	struct sbx_event ev;
	struct timespec now;
	json_t *o;

	(void)state;
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/root/.ssh/id_rsa");
	o = sink_ocsf_event(&ev, &ctx);
	assert_string_equal(istr(o, "file.path"), "/root/.ssh/id_rsa");
	assert_string_equal(istr(o, "file.name"), "id_rsa");
	assert_string_equal(istr(o, "file.parent_folder"), "/root/.ssh");
	assert_int_equal(inum(o, "actor.process.pid"), 42);
	assert_int_equal(inum(o, "actor.process.tid"), 43);
	assert_int_equal(inum(o, "actor.process.parent_process.pid"), 1);
	assert_string_equal(istr(o, "actor.process.name"), "cat");
	assert_string_equal(istr(o, "actor.process.user.uid"), "1000");
	assert_string_equal(istr(o, "actor.user.uid"), "1000");
	assert_string_equal(istr(o, "type_name"), "File System Activity: Read");
	assert_non_null(strstr(istr(o, "message"), "denied read /root/.ssh/id_rsa (denyRead ~/.ssh)"));
	clock_gettime(CLOCK_REALTIME, &now);	/* time: epoch milliseconds */
	assert_true(llabs(inum(o, "time") - (now.tv_sec * 1000LL + now.tv_nsec / 1000000)) < 5000);
	json_decref(o);

	fill_event(&ev, SBX_OP_RENAME, SBX_VERDICT_DENY, "/w/.git");
	ev.flags = SBX_EV_PATH2;
	ev.path2_len = 4;
	memcpy(ev.path2, "/w/g", 5);
	ev.rule_id = SBX_RULE_DEFAULT_WRITE;	/* built-in: a name but no uid */
	ctx.rule_text = NULL;
	o = sink_ocsf_event(&ev, &ctx);
	assert_string_equal(istr(o, "file.name"), ".git");
	assert_string_equal(istr(o, "file_result.path"), "/w/g");
	assert_string_equal(istr(o, "firewall_rule.name"), "default: no allowWrite rule covers it");
	assert_null(at(o, "firewall_rule.uid"));
	json_decref(o);

	fill_event(&ev, SBX_OP_MKDIR, SBX_VERDICT_DENY, "/top");
	o = sink_ocsf_event(&ev, &ctx);
	assert_string_equal(istr(o, "file.parent_folder"), "/");
	assert_int_equal(inum(o, "file.type_id"), 2);		/* Folder */
	json_decref(o);

	fill_event(&ev, SBX_OP_WRITE, SBX_VERDICT_DENY, "");
	ev.flags = SBX_EV_PATH_UNRESOLVED;
	o = sink_ocsf_event(&ev, &ctx);
	assert_string_equal(istr(o, "file.name"), "(unresolvable path)");
	assert_true(json_is_true(at(o, "unmapped.path_unresolved")));
	json_decref(o);
}

static void test_ocsf_network(void **state)
{
	struct sink_ctx ctx = octx;
	struct sbx_event ev;
	json_t *o;

	(void)state;
	ctx.domain = "api.example.com";
	fill_net(&ev, SBX_OP_CONNECT, SBX_VERDICT_DENY, "10.0.0.1", 443, IPPROTO_TCP);
	o = sink_ocsf_event(&ev, &ctx);
	assert_string_equal(istr(o, "dst_endpoint.ip"), "10.0.0.1");
	assert_int_equal(inum(o, "dst_endpoint.port"), 443);
	assert_string_equal(istr(o, "dst_endpoint.hostname"), "api.example.com");
	assert_string_equal(istr(o, "src_endpoint.hostname"), "host-1");
	assert_string_equal(istr(o, "connection_info.protocol_name"), "tcp");
	assert_int_equal(inum(o, "connection_info.protocol_num"), 6);
	assert_int_equal(inum(o, "connection_info.protocol_ver_id"), 4);
	assert_int_equal(inum(o, "connection_info.direction_id"), 2);	/* Outbound */
	assert_null(at(o, "firewall_rule.uid"));
	json_decref(o);

	ctx.domain = NULL;
	fill_net(&ev, SBX_OP_BIND, SBX_VERDICT_DENY, "2001:db8::1", 8080, IPPROTO_TCP);
	o = sink_ocsf_event(&ev, &ctx);
	assert_string_equal(istr(o, "activity_name"), "Bind");
	assert_string_equal(istr(o, "dst_endpoint.ip"), "2001:db8::1");
	assert_string_equal(istr(o, "dst_endpoint.hostname"), "host-1");
	assert_int_equal(inum(o, "connection_info.protocol_ver_id"), 6);
	assert_int_equal(inum(o, "connection_info.direction_id"), 1);	/* Inbound */
	json_decref(o);

	fill_event(&ev, SBX_OP_CONNECT, SBX_VERDICT_DENY, "/run/docker.sock");
	ev.flags = SBX_EV_NET;
	ev.family = AF_UNIX;
	ev.sock_type = SOCK_STREAM;
	o = sink_ocsf_event(&ev, &ctx);
	assert_string_equal(istr(o, "dst_endpoint.name"), "unix:/run/docker.sock");
	assert_null(at(o, "dst_endpoint.ip"));
	assert_null(at(o, "connection_info.protocol_ver_id"));
	json_decref(o);

	fill_event(&ev, SBX_OP_SOCKET, SBX_VERDICT_DENY, "");
	ev.flags = SBX_EV_NET;
	ev.family = AF_PACKET;
	ev.sock_type = SOCK_RAW;
	o = sink_ocsf_event(&ev, &ctx);
	assert_null(at(o, "dst_endpoint"));
	assert_string_equal(istr(o, "src_endpoint.hostname"), "host-1");
	assert_int_equal(inum(o, "connection_info.direction_id"), 0);
	json_decref(o);
}

static void test_ocsf_dns(void **state)
{
	struct sbx_event ev;
	json_t *o;

	(void)state;
	fill_event(&ev, SBX_OP_DNS, SBX_VERDICT_DENY, "blocked.example");
	ev.protocol = IPPROTO_UDP;
	ev.error = 0;
	o = sink_ocsf_event(&ev, &octx);
	assert_int_equal(inum(o, "class_uid"), 4003);
	assert_int_equal(inum(o, "type_uid"), 400302);
	assert_string_equal(istr(o, "query.hostname"), "blocked.example");
	assert_int_equal(inum(o, "rcode_id"), 3);			/* NXDomain */
	assert_string_equal(istr(o, "connection_info.protocol_name"), "udp");
	json_decref(o);
	ev.verdict = SBX_VERDICT_AUDIT;
	ev.tgid = 0;		/* the resolver could not tell who asked */
	o = sink_ocsf_event(&ev, &octx);
	assert_int_equal(inum(o, "type_uid"), 400301);
	assert_null(at(o, "rcode_id"));
	assert_null(at(o, "actor"));
	json_decref(o);
}

static void test_ocsf_lifecycle(void **state)
{
	struct sink_lifecycle lc = { .event = "oom_kill", .detail = "1 process(es) killed",
				     .cgroup_id = 76, .pid = 100, .comm = "agent.sh" };
	json_t *o;

	(void)state;
	o = sink_ocsf_lifecycle(&lc, &octx);
	assert_int_equal(inum(o, "class_uid"), 1007);
	assert_int_equal(inum(o, "activity_id"), 2);			/* Terminate */
	assert_int_equal(inum(o, "type_uid"), 100702);
	assert_int_equal(inum(o, "severity_id"), 1);
	assert_int_equal(inum(o, "process.pid"), 100);
	assert_string_equal(istr(o, "process.name"), "agent.sh");
	assert_string_equal(istr(o, "metadata.uid"), "b00t:12");
	assert_string_equal(istr(o, "metadata.log_name"), "lifecycle");
	assert_string_equal(istr(o, "unmapped.event"), "oom_kill");
	assert_int_equal(inum(o, "unmapped.sandbox_cgroup_id"), 76);
	assert_string_equal(istr(o, "message"), "oom_kill in sandbox agent: 1 process(es) killed");
	json_decref(o);
	lc.event = "frozen";
	lc.pid = 0;
	o = sink_ocsf_lifecycle(&lc, &octx);
	assert_int_equal(inum(o, "activity_id"), 99);
	assert_string_equal(istr(o, "activity_name"), "frozen");
	assert_string_equal(istr(o, "process.name"), "agent");
	json_decref(o);
}

/* A container's labels: OCSF's container object and metadata.labels; ours as "labels". */
static void test_labels_in_sinks(void **state)
{
	json_t *labels = json_pack("{s:s, s:s, s:s}", "container.id", "c0ffee", "container.name", "web",
				   "k8s.pod.name", "web-7d");
	struct sink_ctx ctx = octx;
	struct sink_lifecycle lc = { .event = "gone", .detail = "cgroup gone", .cgroup_id = 76 };
	struct sbx_event ev;
	json_t *o, *ml;

	(void)state;
	fill_event(&ev, SBX_OP_READ, SBX_VERDICT_DENY, "/root/.ssh/id_rsa");
	o = sink_ocsf_event(&ev, &ctx);
	assert_null(at(o, "container"));			/* no labels: no container */
	assert_null(at(o, "metadata.labels"));
	json_decref(o);
	ctx.labels = labels;
	o = sink_ocsf_event(&ev, &ctx);
	assert_string_equal(istr(o, "container.uid"), "c0ffee");
	assert_string_equal(istr(o, "container.name"), "web");
	ml = at(o, "metadata.labels");
	assert_int_equal(json_array_size(ml), 3);
	assert_string_equal(json_string_value(json_array_get(ml, 0)), "container.id=c0ffee");
	assert_string_equal(json_string_value(json_array_get(ml, 2)), "k8s.pod.name=web-7d");
	json_decref(o);
	o = sink_json_event(&ev, &ctx);
	assert_true(json_equal(json_object_get(o, "labels"), labels));
	json_decref(o);
	lc.labels = labels;
	o = sink_json_lifecycle(&lc, &ctx);
	assert_true(json_equal(json_object_get(o, "labels"), labels));
	json_decref(o);
	o = sink_ocsf_lifecycle(&lc, &ctx);
	assert_string_equal(istr(o, "container.uid"), "c0ffee");
	json_decref(o);
	json_decref(labels);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_lines),
		cmocka_unit_test(test_set_fanout),
		cmocka_unit_test(test_seq_file),
		cmocka_unit_test(test_ident),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_rotation_keep0),
		cmocka_unit_test(test_reopen),
		cmocka_unit_test(test_jsonl_errors),
		cmocka_unit_test(test_jsonl_stdout),
		cmocka_unit_test(test_ocsf_classes),
		cmocka_unit_test(test_throttled),
		cmocka_unit_test(test_ocsf_file),
		cmocka_unit_test(test_ocsf_network),
		cmocka_unit_test(test_ocsf_dns),
		cmocka_unit_test(test_ocsf_lifecycle),
		cmocka_unit_test(test_labels_in_sinks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
