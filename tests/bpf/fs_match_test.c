// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The path matcher of the LSM programs, run in the host kernel through
 * BPF_PROG_TEST_RUN (see fs_match_test.bpf.c), with map entries compiled by
 * the same userspace code `sbx-bpf run` uses (fsrules.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fsrules.h"
#include "policy.h"
#include "fs_match_test.skel.h"

struct fs_verdict {
	__u32 read_deny, read_rule, write_deny, write_rule, guard, guard_rule, guard_mandatory, pad;
};

struct match_args {
	__u32 policy_id;
	__u32 len;
	__u32 mask;
	__u32 split;
	struct fs_verdict v;
	__u32 dir_stop, dir_expiring;
	__u32 quick, pad;
	struct fs_verdict dir_v;
	__u64 store[4];
	char path[SBX_PATH_MAX];
};

static struct fs_match_test_bpf *skel;
static struct policy pol;
static __u32 mask;

static int setup(void **state)
{
	(void)state;
	skel = fs_match_test_bpf__open_and_load();
	return skel ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fs_match_test_bpf__destroy(skel);
	return 0;
}

/* Write one key as loader__put_fs_rule does: its filter bit first. */
static void put_rule(const struct sbx_fs_key *key, const struct sbx_fs_rule *rule)
{
	__u32 bit = sbx_fs_filter_bit(key->policy_id, key->len, key->h1, key->h2);

	skel->bss->fs_filter[bit >> 6] |= 1ULL << (bit & 63);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.fs_rules), key, rule, BPF_ANY), 0);
}

/* Empty the rule map, its filter and the policy between tests. */
static int clear_rules(void **state)
{
	int fd = bpf_map__fd(skel->maps.fs_rules);
	struct sbx_fs_key key;

	(void)state;
	while (!bpf_map_get_next_key(fd, NULL, &key))
		bpf_map_delete_elem(fd, &key);
	memset((void *)skel->bss->fs_filter, 0, sizeof(skel->bss->fs_filter));
	for (size_t i = 0; i < pol.nr_rules; i++)
		free(pol.rules[i].path);
	free(pol.rules);
	memset(&pol, 0, sizeof(pol));
	mask = 0;
	return 0;
}

/* Add a rule to the policy; rules() compiles and installs them all. */
static __u32 add(enum rule_kind kind, enum rule_scope scope, const char *path)
{
	pol.rules = realloc(pol.rules, (pol.nr_rules + 1) * sizeof(*pol.rules));
	assert_non_null(pol.rules);
	pol.rules[pol.nr_rules] = (struct policy_rule){ .kind = kind, .scope = scope,
							.path = strdup(path) };
	return (__u32)pol.nr_rules++;
}

static void install(__u32 policy_id)
{
	struct fs_compiled c;

	assert_int_equal(fs_compile(&pol, policy_id, &c), 0);
	for (size_t i = 0; i < c.nr; i++)
		put_rule(&c.entries[i].key, &c.entries[i].rule);
	mask = c.any_depth_mask;
	fs_compiled_free(&c);
}

/* What the last judge_len() learnt resuming its path from its directory's state (the directory memo's way). */
static struct {
	bool compared;		/* the resumed verdict was compared with the whole path's */
	__u32 dir_expiring;
	__u32 quick;		/* fs_name_clear's answer: the name's length, or 0 (match it) */
} resumed;

/* The name @name (@len bytes) as a dentry's inline store: its NUL, then what an older, longer name left. */
static void name_store(__u64 store[4], const char *name, size_t len)
{
	char *b = (char *)store;

	memset(b, '/', 4 * sizeof(*store));	/* junk a walk would take for component ends */
	memcpy(b, name, len < 32 ? len : 32);
	if (len < 32)
		b[len] = '\0';
}

/*
 * fs_name_clear's answer for the name of @args, against the resumed match
 * @v: a length only when the name's own, and then the resumed verdict is
 * the directory's with its guard cleared; none past 31 bytes, where the
 * store has no NUL, nor from a state whose walk stopped.
 */
static void check_quick(const struct match_args *args, size_t name_len, const struct fs_verdict *v)
{
	struct fs_verdict dir = args->dir_v;

	if (name_len > 31 || args->dir_stop) {
		assert_int_equal(args->quick, 0);
		return;
	}
	if (!args->quick)
		return;
	assert_int_equal(args->quick, name_len);
	dir.guard = 0;
	dir.guard_mandatory = 0;
	assert_memory_equal(v, &dir, sizeof(dir));
}

static struct fs_verdict run_match(struct bpf_program *prog, struct match_args *args)
{
	/* A syscall program's context is copied back: its outs land in @args. */
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(*args));

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(prog), &opts), 0);
	assert_int_equal(opts.retval, 0);
	return args->v;
}

/*
 * @path's verdict under @policy. Every path with a last name is also
 * judged as fs.bpf.c's directory memo judges it, its directory first and
 * the name resumed from that state, and must get the same verdict (where
 * the directory's walk did not stop early: the memo keeps no such state).
 */
static struct fs_verdict judge_len(__u32 policy, const char *path, size_t len)
{
	static struct match_args args;
	struct fs_verdict whole, v;
	const char *slash;

	memset(&args, 0, sizeof(args));
	args.policy_id = policy;
	args.len = (__u32)len;
	args.mask = mask;
	memcpy(args.path, path, len < SBX_PATH_MAX ? len : SBX_PATH_MAX - 1);
	whole = run_match(skel->progs.match, &args);
	memset(&resumed, 0, sizeof(resumed));
	slash = len > 1 && len < SBX_PATH_MAX ? memrchr(path, '/', len) : NULL;
	if (!slash || (size_t)(slash - path) + 1 >= len || len - (size_t)(slash - path) - 1 > SBX_NAME_MAX)
		return whole;
	args.split = (__u32)(slash - path);
	name_store(args.store, slash + 1, len - (size_t)(slash - path) - 1);
	v = run_match(skel->progs.resume, &args);
	resumed.dir_expiring = args.dir_expiring;
	resumed.quick = args.quick;
	check_quick(&args, len - (size_t)(slash - path) - 1, &v);
	if (!args.dir_stop) {
		assert_memory_equal(&v, &whole, sizeof(v));
		resumed.compared = true;
	}
	return whole;
}

static struct fs_verdict judge(const char *path)
{
	return judge_len(1, path, strlen(path));
}

#define assert_read(path, deny, rule) do {				\
	struct fs_verdict _v = judge(path);				\
	assert_int_equal(_v.read_deny, (deny));				\
	assert_int_equal(_v.read_rule, (rule));				\
} while (0)

#define assert_write(path, deny, rule) do {				\
	struct fs_verdict _v = judge(path);				\
	assert_int_equal(_v.write_deny, (deny));			\
	assert_int_equal(_v.write_rule, (rule));			\
} while (0)

static void test_no_rules(void **state)
{
	(void)state;
	install(1);
	assert_read("/etc/passwd", 0, SBX_RULE_NONE);
	assert_write("/etc/passwd", 1, SBX_RULE_DEFAULT_WRITE);	/* writes start denied */
	assert_read("/", 0, SBX_RULE_NONE);
}

static void test_deny_read_covers_subtree_not_siblings(void **state)
{
	__u32 r;

	(void)state;
	r = add(RULE_DENY_READ, RULE_ABSOLUTE, "/home/u/.ssh");
	install(1);
	assert_read("/home/u/.ssh", 1, r);
	assert_read("/home/u/.ssh/id_rsa", 1, r);
	assert_read("/home/u/.ssh/a/b/c", 1, r);
	assert_read("/home/u/.sshx", 0, SBX_RULE_NONE);	/* component boundary */
	assert_read("/home/u/.ss", 0, SBX_RULE_NONE);
	assert_read("/home/u", 0, SBX_RULE_NONE);
}

static void test_read_nesting(void **state)
{
	__u32 d, a, rd;

	(void)state;
	d = add(RULE_DENY_READ, RULE_ABSOLUTE, "/data");
	a = add(RULE_ALLOW_READ, RULE_ABSOLUTE, "/data/pub");
	rd = add(RULE_DENY_READ, RULE_ABSOLUTE, "/data/pub/secret");
	install(1);
	assert_read("/data/x", 1, d);
	assert_read("/data/pub", 0, a);
	assert_read("/data/pub/readme", 0, a);
	assert_read("/data/pub/secret", 1, rd);
	assert_read("/data/pub/secret/key", 1, rd);
	assert_read("/database", 0, SBX_RULE_NONE);
}

static void test_write_nesting(void **state)
{
	__u32 a, d, ra;

	(void)state;
	a = add(RULE_ALLOW_WRITE, RULE_ABSOLUTE, "/work");
	d = add(RULE_DENY_WRITE, RULE_ABSOLUTE, "/work/locked");
	ra = add(RULE_ALLOW_WRITE, RULE_ABSOLUTE, "/work/locked/scratch");
	install(1);
	assert_write("/work", 0, a);
	assert_write("/work/f", 0, a);
	assert_write("/work/locked/f", 1, d);
	assert_int_equal(resumed.quick, 1);	/* the directory's deny, which the name leaves as it is */
	assert_write("/work/locked/scratch/f", 0, ra);
	assert_write("/work/locked", 1, d);
	assert_int_equal(resumed.quick, 0);	/* a rule's own path */
	assert_write("/workshop", 1, SBX_RULE_DEFAULT_WRITE);
	assert_write("/", 1, SBX_RULE_DEFAULT_WRITE);
	/* Reads are a separate dimension. */
	assert_read("/work/locked/f", 0, SBX_RULE_NONE);
}

static void test_root_rule(void **state)
{
	__u32 d, a;

	(void)state;
	d = add(RULE_DENY_READ, RULE_ABSOLUTE, "/");
	a = add(RULE_ALLOW_READ, RULE_ABSOLUTE, "/tmp");
	install(1);
	assert_read("/", 1, d);
	assert_read("/etc/passwd", 1, d);
	assert_read("/tmp/f", 0, a);
}

/* The mandatory set: any depth, created later or not, no allow overrides it. */
static void test_mandatory_any_depth(void **state)
{
	__u32 w, hooks, rc, cfg;

	(void)state;
	w = add(RULE_ALLOW_WRITE, RULE_ABSOLUTE, "/work");
	add(RULE_ALLOW_WRITE, RULE_ABSOLUTE, "/work/a/b/c/d/e/.git/hooks/x");	/* cannot win */
	hooks = add(RULE_MANDATORY, RULE_ANY_DEPTH, ".git/hooks");
	rc = add(RULE_MANDATORY, RULE_ANY_DEPTH, ".bashrc");
	cfg = add(RULE_MANDATORY, RULE_ANY_DEPTH, ".git/config");
	install(1);
	assert_int_equal(mask, 0x3);	/* 1- and 2-component patterns */
	assert_write("/work/a/b/c/d/e/.git/hooks/pre-commit", 1, hooks);
	assert_true(resumed.compared);	/* judge_len's second way ran, and agreed: its check can fail */
	assert_write("/work/a/b/c/d/e/.git/hooks/x", 1, hooks);
	assert_write("/work/a/b/c/d/e/.git/hooks", 1, hooks);
	assert_write("/work/repo/.git/config", 1, cfg);
	assert_int_equal(resumed.quick, 0);	/* ".git/config" is a rule's key: the name is matched */
	assert_write("/work/repo/.git/configs", 0, w);
	assert_int_equal(resumed.quick, 7);	/* none of "configs"'s keys is: the quick way answers */
	assert_write("/work/repo/.bashrc", 1, rc);
	assert_int_equal(resumed.quick, 0);
	assert_write("/work/repo/.git/objects/ab", 0, w);
	assert_write("/work/repo/hooks/x", 0, w);	/* "hooks" alone is not ".git/hooks" */
	assert_write("/work/.bashrc", 1, rc);
	assert_write("/work/x/.bashrc/y", 1, rc);
	assert_write("/work/.bashrc.bak", 0, w);
	assert_read("/work/.bashrc", 0, SBX_RULE_NONE);
}

/* Rename guards: ancestors of absolute rules, leading parts of any-depth ones. */
static void test_guards(void **state)
{
	__u32 ssh, hooks;

	(void)state;
	add(RULE_ALLOW_WRITE, RULE_ABSOLUTE, "/home/u/work");
	ssh = add(RULE_DENY_READ, RULE_ABSOLUTE, "/home/u/.ssh");
	hooks = add(RULE_MANDATORY, RULE_ANY_DEPTH, ".git/hooks");
	install(1);
	assert_true(judge("/home/u").guard);
	assert_true(judge("/home/u/.ssh").guard);
	assert_int_equal(judge("/home/u/.ssh").guard_rule, ssh);
	assert_true(judge("/home/u/work/repo/.git").guard);
	assert_int_equal(judge("/home/u/work/repo/.git").guard_rule, hooks);
	assert_true(judge("/home/u/work/repo/.git/hooks").guard);
	assert_false(judge("/home/u/work/repo/.git/index").guard);
	assert_false(judge("/home/u/work/file").guard);
	assert_false(judge("/home/u/.sshx").guard);
}

static void test_policies_are_separate(void **state)
{
	__u32 r;

	(void)state;
	r = add(RULE_DENY_READ, RULE_ABSOLUTE, "/secret");
	install(2);
	assert_read("/secret", 0, SBX_RULE_NONE);
	assert_int_equal(judge_len(2, "/secret/x", 9).read_deny, 1);
	assert_int_equal(judge_len(2, "/secret/x", 9).read_rule, r);
}

/* Deny beats allow at the same component end, whatever the rule order. */
static void test_deny_beats_allow_at_same_place(void **state)
{
	__u32 d, md;

	(void)state;
	add(RULE_ALLOW_READ, RULE_ABSOLUTE, "/both");
	d = add(RULE_DENY_READ, RULE_ABSOLUTE, "/both");
	add(RULE_ALLOW_WRITE, RULE_ABSOLUTE, "/w/.x");
	md = add(RULE_DENY_WRITE, RULE_ANY_DEPTH, ".x");
	install(1);
	assert_read("/both/f", 1, d);
	assert_write("/w/.x", 1, md);	/* absolute allow and any-depth deny end together */
}

/*
 * A component end's hits keep the rule ids of earlier component ends in
 * the walk's state (fs_state.hit): an id is read only for a flag hit at
 * the same end. A read rule above and an any-depth write rule below, and
 * the other way round, each keep their own id.
 */
static void test_hits_of_earlier_components(void **state)
{
	__u32 r, w, a, dr;

	(void)state;
	r = add(RULE_DENY_READ, RULE_ABSOLUTE, "/a");
	w = add(RULE_DENY_WRITE, RULE_ANY_DEPTH, ".x");
	a = add(RULE_ALLOW_WRITE, RULE_ABSOLUTE, "/b");
	dr = add(RULE_DENY_READ, RULE_ANY_DEPTH, ".y");
	install(1);
	assert_read("/a/c/.x", 1, r);
	assert_write("/a/c/.x", 1, w);
	assert_write("/b/c/.y", 0, a);
	assert_read("/b/c/.y", 1, dr);
	assert_read("/b/c/d", 0, SBX_RULE_NONE);
	assert_write("/b/c/d", 0, a);
}

static void test_long_paths(void **state)
{
	static char path[SBX_PATH_MAX + 16];
	struct fs_verdict v;
	__u32 d, a;
	size_t len;

	(void)state;
	/* 4095 bytes: /deep/abcdefghi/… deep below a denied directory. */
	strcpy(path, "/deep");
	while (strlen(path) < SBX_PATH_MAX - 1 - 10)
		strcat(path, "/abcdefghi");
	len = strlen(path);
	d = add(RULE_DENY_READ, RULE_ABSOLUTE, "/deep/abcdefghi");
	a = add(RULE_ALLOW_READ, RULE_ABSOLUTE, path);	/* matches at the end of the walk */
	install(1);
	v = judge_len(1, path, len);
	assert_int_equal(v.read_deny, 0);
	assert_int_equal(v.read_rule, a);
	path[len - 1] = 'X';
	v = judge_len(1, path, len);
	assert_int_equal(v.read_deny, 1);
	assert_int_equal(v.read_rule, d);
	/* Too long to judge: everything denied, no rule. */
	v = judge_len(1, path, SBX_PATH_MAX);
	assert_int_equal(v.read_deny, 1);
	assert_int_equal(v.write_deny, 1);
	assert_int_equal(v.read_rule, SBX_RULE_NONE);
	assert_int_equal(v.write_rule, SBX_RULE_NONE);
}

/*
 * The matcher reads the path 8 bytes at a time (fs_walk_step): names of
 * every length around that stride, at every alignment in the path, match
 * the rules userspace compiled, absolute and any-depth, and a name one
 * byte longer does not.
 */
static void test_chunk_boundaries(void **state)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxy";
	static __u32 d[26][9], w[26];
	char name[32], dir[16], path[128];

	(void)state;
	for (int n = 1; n <= 25; n++) {
		snprintf(name, sizeof(name), "%.*s", n, letters);
		w[n] = add(RULE_DENY_WRITE, RULE_ANY_DEPTH, name);
		for (int o = 0; o <= 8; o++) {
			snprintf(path, sizeof(path), "/%.*s/%s", o + 1, "ooooooooo", name);
			d[n][o] = add(RULE_DENY_READ, RULE_ABSOLUTE, path);
		}
	}
	install(1);
	for (int n = 1; n <= 25; n++) {
		snprintf(name, sizeof(name), "%.*s", n, letters);
		for (int o = 0; o <= 8; o++) {
			snprintf(dir, sizeof(dir), "/%.*s", o + 1, "ooooooooo");
			snprintf(path, sizeof(path), "%s/%s", dir, name);
			assert_read(path, 1, d[n][o]);
			snprintf(path, sizeof(path), "%s/%s/f", dir, name);
			assert_read(path, 1, d[n][o]);
			snprintf(path, sizeof(path), "%s/%sZ", dir, name);
			assert_read(path, 0, SBX_RULE_NONE);
			/* Any-depth: the same name wherever it starts. */
			snprintf(path, sizeof(path), "/%.*s/%s", o + 1, "ttttttttt", name);
			assert_write(path, 1, w[n]);
			snprintf(path, sizeof(path), "/%.*s/Z%s", o + 1, "ttttttttt", name);
			assert_write(path, 1, SBX_RULE_DEFAULT_WRITE);
		}
	}
}

/*
 * bytes_near_slash's name: @n bytes 'm' but @byte at @k, in @name; and in
 * @path, the name under "/o…", of 1 to 9 bytes as @n, @k and @b (the
 * byte's index) give: how many, returned.
 */
static int odd_path(char *path, size_t size, char *name, int n, int k, unsigned char byte, int b)
{
	int o = 1 + (n + k + b) % 9;

	memset(name, 'm', n);
	name[n] = '\0';
	name[k] = (char)byte;
	snprintf(path, size, "/%.*s/%s", o, "ooooooooo", name);
	return o;
}

/*
 * The bytes before a word's first '/' go into the component's chunk at
 * once (fs_walk_step): bytes next to '/' (0x2e, 0x30), '/' with its high
 * bit (0xaf) and other high bytes are a name's own, at every place in names
 * of 1 to 17 bytes, under directories of 1 to 9 bytes (so at alignments
 * that vary with the name). The same name with a '/' in that place is two
 * components, and each matches a rule of its own: its first part as a
 * denied directory, its last part as an any-depth name (which also makes
 * every walk go to the end, so the resumed match is compared each time).
 * Names of 200 to 255 bytes, as a directory memo resumes them, too.
 */
static void test_bytes_near_slash(void **state)
{
	static const unsigned char odd[] = { 0x2e, 0x30, 0xaf, 0x80, 0xff, 0x01 };
	static __u32 d[18][18][6], dir[10][18], tail[18];
	static char name[256], path[320];

	(void)state;
	for (int t = 1; t <= 17; t++) {
		memset(name, 'm', t);
		name[t] = '\0';
		tail[t] = add(RULE_DENY_WRITE, RULE_ANY_DEPTH, name);
	}
	for (int n = 1; n <= 17; n++)
		for (int k = 0; k < n; k++)
			for (size_t b = 0; b < sizeof(odd); b++) {
				int o = odd_path(path, sizeof(path), name, n, k, odd[b], (int)b);

				d[n][k][b] = add(RULE_DENY_READ, RULE_ABSOLUTE, path);
				if (k > 0 && k + 1 < n && !dir[o][k]) {	/* "/o…/m…m": one rule per place */
					snprintf(path, sizeof(path), "/%.*s/%.*s", o, "ooooooooo", k, name);
					dir[o][k] = add(RULE_DENY_READ, RULE_ABSOLUTE, path);
				}
			}
	install(1);
	for (int n = 1; n <= 17; n++)
		for (int k = 0; k < n; k++)
			for (size_t b = 0; b < sizeof(odd); b++) {
				int o = odd_path(path, sizeof(path), name, n, k, odd[b], (int)b);

				assert_read(path, 1, d[n][k][b]);
				assert_write(path, 1, SBX_RULE_DEFAULT_WRITE);	/* no "m…m" name in it */
				if (k == 0 || k + 1 >= n)
					continue;	/* "//" or a trailing "/": no path the kernel walks */
				name[k] = '/';
				snprintf(path, sizeof(path), "/%.*s/%s", o, "ooooooooo", name);
				assert_read(path, 1, dir[o][k]);
				assert_write(path, 1, tail[n - k - 1]);
			}
	/* Long names: several whole words, then the odd byte, then the tail. */
	clear_rules(NULL);
	for (int n = 200; n <= 255; n += 11) {
		memset(name, 'q', n);
		name[n] = '\0';
		name[n / 2] = (char)0xaf;
		snprintf(path, sizeof(path), "/l/%s", name);
		d[0][0][0] = add(RULE_DENY_READ, RULE_ABSOLUTE, path);
		install(1);
		assert_read(path, 1, d[0][0][0]);
		name[n - 1] = 'Q';
		snprintf(path, sizeof(path), "/l/%s", name);
		assert_read(path, 0, SBX_RULE_NONE);
		assert_true(resumed.compared);
		clear_rules(NULL);
	}
}

/* Paths of 4,095 bytes whose last component ends in the buffer's last 8 bytes, at several lengths. */
static void test_path_at_buffer_end(void **state)
{
	static char path[SBX_PATH_MAX];
	static const __u32 lasts[] = { 1, 3, 7, 8, 9, 13 };

	(void)state;
	for (size_t i = 0; i < sizeof(lasts) / sizeof(lasts[0]); i++) {
		size_t len, fill;
		__u32 d, a;

		clear_rules(NULL);
		strcpy(path, "/deep");
		while (strlen(path) < SBX_PATH_MAX - 1 - lasts[i] - 1 - 20)
			strcat(path, "/abcdefghi");
		fill = SBX_PATH_MAX - 1 - lasts[i] - 1 - strlen(path) - 1;	/* one more component */
		strcat(path, "/");
		memset(path + strlen(path), 'p', fill);
		path[SBX_PATH_MAX - 1 - lasts[i] - 1] = '\0';
		strcat(path, "/");
		memset(path + strlen(path), 'L', lasts[i]);
		path[SBX_PATH_MAX - 1] = '\0';
		len = strlen(path);
		assert_int_equal(len, SBX_PATH_MAX - 1);
		d = add(RULE_DENY_READ, RULE_ABSOLUTE, "/deep/abcdefghi");
		a = add(RULE_ALLOW_READ, RULE_ABSOLUTE, path);
		install(1);
		assert_read(path, 0, a);
		path[len - 1] = 'X';
		assert_read(path, 1, d);
	}
}

/* 10,000 rules: verdicts stay exact (cost is per component, see bench/). */
static void test_many_rules(void **state)
{
	char p[64];

	(void)state;
	for (int i = 0; i < 10000; i++) {
		snprintf(p, sizeof(p), "/r/%d", i);
		add((i % 2) ? RULE_DENY_READ : RULE_ALLOW_READ, RULE_ABSOLUTE, p);
	}
	install(1);
	assert_read("/r/9999/x", 1, 9999);
	assert_read("/r/5000", 0, 5000);
	assert_read("/r/10000", 0, SBX_RULE_NONE);
	assert_read("/r", 0, SBX_RULE_NONE);
}

/* CLOCK_BOOTTIME, as bpf_ktime_get_boot_ns() sees it. */
static __u64 boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* Put a grant's entry at @path: allow-read until @expires, @base after it. */
static void grant_entry(const char *path, __u32 id, __u64 expires, const struct sbx_fs_rule *base)
{
	struct sbx_fs_key key = fs_key_absolute(1, path);
	struct sbx_fs_rule r = { .read_rule = SBX_RULE_GRANT_BASE + id, .write_rule = SBX_RULE_GRANT_BASE + id,
				 .guard_rule = SBX_RULE_GRANT_BASE + id, .flags = SBX_FS_ALLOW_READ,
				 .expires_ns = expires };

	if (base) {
		r.base_read_rule = base->read_rule;
		r.base_write_rule = base->write_rule;
		r.base_guard_rule = base->guard_rule;
		r.base_unix_rule = base->unix_rule;
		r.base_flags = base->flags;
	}
	put_rule(&key, &r);
}

/* A grant's entry says its own verdict until it expires, then the policy's (the kernel ends it). */
static void test_grant_expiry(void **state)
{
	int fd = bpf_map__fd(skel->maps.fs_rules);
	struct sbx_fs_key key;
	struct sbx_fs_rule policy_own;
	__u32 d;

	(void)state;
	d = add(RULE_DENY_READ, RULE_ABSOLUTE, "/home/u/.ssh");
	install(1);
	/* Beneath the denied directory: a new entry, nothing behind it. */
	grant_entry("/home/u/.ssh/known_hosts", 3, boot_ns() + 60000000000ULL, NULL);
	assert_read("/home/u/.ssh/known_hosts", 0, SBX_RULE_GRANT_BASE + 3);
	assert_read("/home/u/.ssh/id_rsa", 1, d);
	grant_entry("/home/u/.ssh/known_hosts", 3, boot_ns() - 1, NULL);
	assert_read("/home/u/.ssh/known_hosts", 1, d);
	/* At the denied directory itself: the policy's own entry is behind the grant's. */
	key = fs_key_absolute(1, "/home/u/.ssh");
	assert_int_equal(bpf_map_lookup_elem(fd, &key, &policy_own), 0);
	grant_entry("/home/u/.ssh", 4, boot_ns() + 60000000000ULL, &policy_own);
	assert_read("/home/u/.ssh/id_rsa", 0, SBX_RULE_GRANT_BASE + 4);
	/* A directory whose state an expiring entry made is marked: the directory memo keeps none. */
	assert_true(resumed.dir_expiring);
	assert_read("/home/u/.ssh", 0, SBX_RULE_GRANT_BASE + 4);
	assert_false(resumed.dir_expiring);	/* "/home/u" */
	grant_entry("/home/u/.ssh", 4, boot_ns() - 1, &policy_own);
	assert_read("/home/u/.ssh/id_rsa", 1, d);
	/* expires_ns 0: no grant, whatever the base fields say. */
	policy_own.base_flags = SBX_FS_ALLOW_READ;
	policy_own.expires_ns = 0;
	put_rule(&key, &policy_own);
	assert_read("/home/u/.ssh/id_rsa", 1, d);
}

/*
 * The matcher looks a key up only when its filter bit is set: the bit the
 * programs compute is the one userspace sets (every other test here relies
 * on it), and a key written without its bit is not seen, which is why the
 * loader sets the bit first.
 */
/*
 * The directory memo's quick way (fs_name_clear) at its edges: a 2-component
 * pattern whose first component is the root's child (ncomp 2, the least it
 * asks k = 2 at), names of 26 to 31 bytes with a rule of their own (its
 * last word partly the name), and a policy with a 3-component pattern,
 * under which it answers nothing at all. judge_len checks every answer
 * against the resumed match.
 */
static void test_quick_name_edges(void **state)
{
	char name[64], path[96];
	__u32 w, hooks, three, r[32];

	(void)state;
	w = add(RULE_ALLOW_WRITE, RULE_ABSOLUTE, "/");
	hooks = add(RULE_MANDATORY, RULE_ANY_DEPTH, ".git/hooks");
	for (int n = 26; n <= 31; n++) {
		memset(name, 'q', (size_t)n);
		name[n] = '\0';
		snprintf(path, sizeof(path), "/w/%s", name);
		r[n] = add(RULE_DENY_WRITE, RULE_ABSOLUTE, path);
	}
	install(1);
	assert_write("/.git/hooks", 1, hooks);	/* k = 2 with the name the path's second component */
	assert_int_equal(resumed.quick, 0);
	assert_write("/.git/hookz", 0, w);
	assert_int_equal(resumed.quick, 5);
	for (int n = 26; n <= 31; n++) {
		memset(name, 'q', (size_t)n);
		name[n] = '\0';
		snprintf(path, sizeof(path), "/w/%s", name);
		assert_write(path, 1, r[n]);
		assert_int_equal(resumed.quick, 0);	/* the name's own rule */
		path[strlen(path) - 1] = 'z';
		assert_write(path, 0, w);
		assert_int_equal(resumed.quick, (__u32)n);
	}
	clear_rules(NULL);
	w = add(RULE_ALLOW_WRITE, RULE_ABSOLUTE, "/");
	three = add(RULE_DENY_WRITE, RULE_ANY_DEPTH, "a/b/c");
	install(1);
	assert_int_equal(mask & 0x4, 0x4);
	assert_write("/x/a/b/c", 1, three);
	assert_int_equal(resumed.quick, 0);
	assert_write("/x/a/b/d", 0, w);
	assert_int_equal(resumed.quick, 0);	/* sizes past 2 are not the quick way's: none answered */
}

static void test_filter_gates_lookups(void **state)
{
	__u32 d;

	(void)state;
	d = add(RULE_DENY_READ, RULE_ABSOLUTE, "/home/u/.ssh");
	install(1);
	assert_read("/home/u/.ssh/id_rsa", 1, d);
	memset((void *)skel->bss->fs_filter, 0, sizeof(skel->bss->fs_filter));
	assert_read("/home/u/.ssh/id_rsa", 0, SBX_RULE_NONE);
	install(1);
	assert_read("/home/u/.ssh/id_rsa", 1, d);
}

/*
 * With no any-depth pattern to look for, the matcher stops at the first
 * prefix that has no entry: the loader guards every ancestor of a rule, so
 * nothing beneath can match. An entry put without those guards is not seen,
 * which is why fsrules.c writes them; with them, it is. Any-depth patterns
 * keep the walk going to the end of the path.
 */
static void test_walk_ends_at_unguarded_prefix(void **state)
{
	struct sbx_fs_rule deny = { .read_rule = 7, .write_rule = 7, .guard_rule = 7,
				    .unix_rule = SBX_RULE_NONE, .flags = SBX_FS_DENY_READ };
	struct sbx_fs_rule guard = { .read_rule = 7, .write_rule = 7, .guard_rule = 7,
				     .unix_rule = SBX_RULE_NONE, .flags = SBX_FS_GUARD };
	struct sbx_fs_key key;
	__u32 env;

	(void)state;
	key = fs_key_absolute(1, "/srv/a/key");
	put_rule(&key, &deny);
	assert_read("/srv/a/key", 0, SBX_RULE_NONE);
	key = fs_key_absolute(1, "/srv");
	put_rule(&key, &guard);
	assert_read("/srv/a/key", 0, SBX_RULE_NONE);	/* /srv/a has none */
	key = fs_key_absolute(1, "/srv/a");
	put_rule(&key, &guard);
	assert_read("/srv/a/key", 1, 7);
	assert_read("/srv/a/key/inner", 1, 7);
	/* The compiled policy guards its own rules: found at any depth. */
	env = add(RULE_DENY_READ, RULE_ANY_DEPTH, ".env");
	install(1);
	assert_true(mask != 0);
	assert_read("/opt/x/y/z/.env", 1, env);
	assert_read("/srv/a/key", 1, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_no_rules, clear_rules),
		cmocka_unit_test_setup(test_filter_gates_lookups, clear_rules),
		cmocka_unit_test_setup(test_walk_ends_at_unguarded_prefix, clear_rules),
		cmocka_unit_test_setup(test_deny_read_covers_subtree_not_siblings, clear_rules),
		cmocka_unit_test_setup(test_read_nesting, clear_rules),
		cmocka_unit_test_setup(test_write_nesting, clear_rules),
		cmocka_unit_test_setup(test_root_rule, clear_rules),
		cmocka_unit_test_setup(test_mandatory_any_depth, clear_rules),
		cmocka_unit_test_setup(test_quick_name_edges, clear_rules),
		cmocka_unit_test_setup(test_hits_of_earlier_components, clear_rules),
		cmocka_unit_test_setup(test_guards, clear_rules),
		cmocka_unit_test_setup(test_policies_are_separate, clear_rules),
		cmocka_unit_test_setup(test_deny_beats_allow_at_same_place, clear_rules),
		cmocka_unit_test_setup(test_long_paths, clear_rules),
		cmocka_unit_test_setup(test_chunk_boundaries, clear_rules),
		cmocka_unit_test_setup(test_bytes_near_slash, clear_rules),
		cmocka_unit_test_setup(test_path_at_buffer_end, clear_rules),
		cmocka_unit_test_setup(test_many_rules, clear_rules),
		cmocka_unit_test_setup(test_grant_expiry, clear_rules),
	};

	return cmocka_run_group_tests_name("bpf_fs_match", tests, setup, teardown);
}
