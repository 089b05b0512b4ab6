// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <linux/capability.h>
#include <linux/magic.h>

#include "cgroup.h"
#include "doctor.h"
#include "hooks.h"
#include "loader.h"
#include "util.h"

/* bpf_loop (5.17) is the newest kernel feature the programs rely on. */
#define MIN_MAJOR 5
#define MIN_MINOR 17

#define SECURITYFS "/sys/kernel/security"
#define BPFFS "/sys/fs/bpf"

static const char *const required_controllers[] = { "cpu", "memory", "io", "pids" };

const char *check_status_name(enum check_status s)
{
	return s == CHECK_PASS ? "PASS" : s == CHECK_WARN ? "WARN" : "FAIL";
}

static struct check *add(struct doctor_report *r, const char *name, enum check_status st)
{
	struct check *c = &r->checks[r->nr < DOCTOR_MAX_CHECKS ? r->nr++ : DOCTOR_MAX_CHECKS - 1];

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->status = st;
	return c;
}

void doctor_lsm_with_bpf(const char *active, char *out, size_t sz)
{
	if (!active || !active[0])
		snprintf(out, sz, "lsm=bpf");
	else if (list_has(active, "bpf"))
		snprintf(out, sz, "lsm=%s", active);
	else
		snprintf(out, sz, "lsm=%s,bpf", active);
}

int doctor_lockdown_mode(const char *text, char *out, size_t sz)
{
	const char *a = strchr(text, '['), *b = a ? strchr(a, ']') : NULL;

	if (!a || !b)
		return -EINVAL;
	snprintf(out, sz, "%.*s", (int)(b - a - 1), a + 1);
	return 0;
}

void doctor_missing_controllers(const char *controllers, char *out, size_t sz)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(required_controllers); i++) {
		const char *want = required_controllers[i];
		const char *p = controllers;
		bool found = false;
		size_t wl = strlen(want);

		while ((p = strstr(p, want))) {
			if ((p == controllers || p[-1] == ' ') && (p[wl] == ' ' || p[wl] == '\n' || !p[wl])) {
				found = true;
				break;
			}
			p += wl;
		}
		if (!found && len < sz)
			len += snprintf(out + len, sz - len, "%s%s", len ? " " : "", want);
	}
}

static void check_kernel(struct doctor_report *r)
{
	struct utsname u;
	int maj, min, patch;
	struct check *c;

	uname(&u);
	if (parse_kernel_release(u.release, &maj, &min, &patch)) {
		c = add(r, "kernel", CHECK_WARN);
		snprintf(c->detail, sizeof(c->detail), "cannot parse release '%s'", u.release);
		return;
	}
	if (maj > MIN_MAJOR || (maj == MIN_MAJOR && min >= MIN_MINOR)) {
		c = add(r, "kernel", CHECK_PASS);
		snprintf(c->detail, sizeof(c->detail), "Linux %s (need >= %d.%d)", u.release,
			 MIN_MAJOR, MIN_MINOR);
		return;
	}
	c = add(r, "kernel", CHECK_FAIL);
	snprintf(c->detail, sizeof(c->detail), "Linux %s is older than %d.%d", u.release,
		 MIN_MAJOR, MIN_MINOR);
	snprintf(c->fix, sizeof(c->fix), "boot a kernel >= %d.%d (Debian 12's 6.1 works)",
		 MIN_MAJOR, MIN_MINOR);
}

static void check_btf(struct doctor_report *r)
{
	struct check *c;

	if (access("/sys/kernel/btf/vmlinux", R_OK) == 0) {
		c = add(r, "btf", CHECK_PASS);
		snprintf(c->detail, sizeof(c->detail), "/sys/kernel/btf/vmlinux present");
		return;
	}
	c = add(r, "btf", CHECK_FAIL);
	snprintf(c->detail, sizeof(c->detail), "/sys/kernel/btf/vmlinux missing: no kernel BTF for CO-RE");
	snprintf(c->fix, sizeof(c->fix), "use a kernel built with CONFIG_DEBUG_INFO_BTF=y");
}

static bool is_mounted(const char *path, long magic)
{
	struct statfs s;

	return statfs(path, &s) == 0 && s.f_type == magic;
}

/*
 * securityfs is where the active LSM list and the lockdown mode live. When it
 * is not mounted, mount it in a private mount namespace of this process only:
 * the host is not changed, and the answer is exact instead of a guess.
 */
static bool securityfs_readable(bool *was_mounted)
{
	*was_mounted = is_mounted(SECURITYFS, SECURITYFS_MAGIC);
	if (*was_mounted)
		return true;
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return false;
	return mount("securityfs", SECURITYFS, "securityfs", 0, NULL) == 0;
}

/* Sets *bpf_active to 1/0, or -1 when the active list cannot be known. */
static void check_lsm(struct doctor_report *r, int *bpf_active)
{
	char lsm[512], fix[300];
	struct check *c;
	bool was_mounted, readable = securityfs_readable(&was_mounted);

	*bpf_active = -1;
	if (was_mounted) {
		c = add(r, "securityfs", CHECK_PASS);
		snprintf(c->detail, sizeof(c->detail), "mounted at %s", SECURITYFS);
	} else {
		c = add(r, "securityfs", CHECK_WARN);
		snprintf(c->detail, sizeof(c->detail), "not mounted at %s%s", SECURITYFS,
			 readable ? " (doctor read it through a private mount)" : "");
		snprintf(c->fix, sizeof(c->fix), "mount -t securityfs securityfs %s", SECURITYFS);
	}
	if (!readable || read_file(SECURITYFS "/lsm", lsm, sizeof(lsm)) < 0) {
		c = add(r, "lsm", CHECK_WARN);
		snprintf(c->detail, sizeof(c->detail), "active LSM list unknown (securityfs unavailable)");
		snprintf(c->fix, sizeof(c->fix), "mount -t securityfs securityfs %s as root, then run doctor again",
			 SECURITYFS);
		return;
	}
	strip(lsm);
	*bpf_active = list_has(lsm, "bpf");
	doctor_lsm_with_bpf(lsm, fix, sizeof(fix));
	c = add(r, "lsm", *bpf_active ? CHECK_PASS : CHECK_FAIL);
	snprintf(c->detail, sizeof(c->detail), "active LSMs: %s%s", lsm, *bpf_active ? "" : " (bpf missing)");
	if (!*bpf_active)
		snprintf(c->fix, sizeof(c->fix),
			 "add '%s' to the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, "
			 "then update-grub and reboot)", fix);
}

static void check_lsm_load(struct doctor_report *r, int bpf_active)
{
	char fix[300] = "";
	struct check *c;
	int err = loader__probe_lsm();

	if (!err) {
		c = add(r, "lsm_load", CHECK_PASS);
		snprintf(c->detail, sizeof(c->detail), "a BPF-LSM program loaded and attached (lsm/file_open)");
		return;
	}
	c = add(r, "lsm_load", CHECK_FAIL);
	snprintf(c->detail, sizeof(c->detail), "loading a trivial lsm/file_open program failed: %s (%s)",
		 strerror(-err), err == -EPERM ? "EPERM" : err == -EINVAL ? "EINVAL" : "error");
	if (err == -EPERM && geteuid() != 0)
		snprintf(fix, sizeof(fix), "run as root (or with CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN)");
	else if (bpf_active == 0)
		snprintf(fix, sizeof(fix), "enable the bpf LSM (see the 'lsm' check) and reboot");
	else if (bpf_active < 0)
		snprintf(fix, sizeof(fix), "see the 'lsm' check: if bpf is not active, enable it; if it is, "
			 "this kernel refuses BPF-LSM programs");
	else if (err == -EPERM)
		snprintf(fix, sizeof(fix),
			 "this kernel refuses BPF-LSM programs even to root (a hypervisor or vendor "
			 "policy, or lockdown): run sbx-bpf on a kernel that allows them, e.g. "
			 "Debian's linux-image-amd64, or use the VM rig (scripts/vm.sh)");
	else
		snprintf(fix, sizeof(fix), "run with -v to see the verifier/libbpf log");
	snprintf(c->fix, sizeof(c->fix), "%s", fix);
}

/*
 * The kernel's move counts (moves.h), as the programs @l loaded got them:
 * with them, a memo whose path nothing has moved since it was last walked
 * is not walked again. Finding them makes and removes a directory and a
 * child's mount namespace.
 */
static void check_move_counts(struct doctor_report *r, const struct sbx_loader *l)
{
	char why[160];
	struct check *c;

	if (loader__move_counts(l, why, sizeof(why)) > 0) {
		c = add(r, "move_counts", CHECK_PASS);
		snprintf(c->detail, sizeof(c->detail), "rename_lock and mount_lock found, seen to move and given "
			 "to the programs: a memo's path goes unwalked while no dentry or mount moves, a "
			 "second at most");
		return;
	}
	c = add(r, "move_counts", CHECK_WARN);
	snprintf(c->detail, sizeof(c->detail), "%s: every memo check walks its path (the same verdicts, "
		 "more instructions per open and write)", why);
	snprintf(c->fix, sizeof(c->fix), "they need CONFIG_KALLSYMS_ALL, bpf_kallsyms_lookup_name (5.16+), "
		 "kernel.kptr_restrict below 2 and struct seqcount in the kernel's BTF; their check, a "
		 "writable TMPDIR (or /tmp) and unshare(CLONE_NEWNS)");
}

/*
 * FMODE_CREATED as the programs @l loaded got it (loader.c created_bit):
 * with it, the open that created its file goes by its path_mknod's judging
 * instead of being judged again.
 */
static void check_created_bit(struct doctor_report *r, const struct sbx_loader *l)
{
	char why[96];
	__u32 bit = loader__created_bit(l, why, sizeof(why));
	struct check *c;

	if (bit) {
		c = add(r, "created_opens", CHECK_PASS);
		snprintf(c->detail, sizeof(c->detail), "FMODE_CREATED (0x%x) given to the programs: an open that "
			 "created its file goes by its path_mknod's judging", bit);
		return;
	}
	c = add(r, "created_opens", CHECK_WARN);
	snprintf(c->detail, sizeof(c->detail), "%s: an open that created its file is judged again (the same "
		 "verdicts, more instructions per create)", why);
	snprintf(c->fix, sizeof(c->fix), "a kernel from 4.19 to 7.3 with path_mknod loaded; a later kernel "
		 "needs its FMODE_CREATED checked in its headers first (loader.c created_bit)");
}

/* The hooks with more than one program variant, and the one this kernel got: "bpf: task_bpf_kernel, …". */
static void variants_line(const struct hook_picks *picks, char *buf, size_t sz)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < picks->nr && len < sz; i++)
		if (picks->p[i].variants > 1 && picks->p[i].fit == HOOK_FIT)
			len += (size_t)snprintf(buf + len, sz - len, "%s%s: %s", len ? ", " : "",
						picks->p[i].hook, picks->p[i].prog);
}

/*
 * The real enforcement object, loaded (verified, never attached) the way
 * `run` and the daemon load it: "can enforce" only if every program loads.
 * Each one that does not is a FAIL of its own, with the reason.
 */
static void check_programs(struct doctor_report *r)
{
	static struct hook_picks picks;
	struct sbx_loader *l = loader__load(&picks, 0, NULL, NULL);
	const struct hook_gaps *g;
	char variants[256];
	struct check *c;
	unsigned int fitting = 0;

	if (!l) {
		c = add(r, "programs", CHECK_FAIL);
		snprintf(c->detail, sizeof(c->detail), "the enforcement programs do not load: %s",
			 strerror(errno));
		snprintf(c->fix, sizeof(c->fix), "run 'sbx-bpf -v doctor' to see libbpf's and the verifier's log");
		return;
	}
	for (unsigned int i = 0; i < picks.nr; i++)
		fitting += picks.p[i].fit == HOOK_FIT;
	variants_line(&picks, variants, sizeof(variants));
	g = loader__gaps(l);
	c = add(r, "programs", g->nr || g->dropped ? CHECK_FAIL : CHECK_PASS);
	if (!g->nr && !g->dropped)
		snprintf(c->detail, sizeof(c->detail), "every program loads and verifies (%u LSM hooks; "
			 "variants for this kernel: %s)", fitting, variants[0] ? variants : "none needed");
	else
		snprintf(c->detail, sizeof(c->detail), "%u protection(s) cannot load on this kernel: run, attach "
			 "and the daemon refuse to start unless each is accepted by name", g->nr + g->dropped);
	for (unsigned int i = 0; i < g->nr; i++) {
		char name[48];

		snprintf(name, sizeof(name), "hook:%s", g->g[i].hook);
		c = add(r, name, CHECK_FAIL);
		snprintf(c->detail, sizeof(c->detail), "%s; without it: %s", g->g[i].reason,
			 hooks__protection(g->g[i].hook));
		snprintf(c->fix, sizeof(c->fix), "use a kernel and sbx-bpf release that match, or run without this "
			 "protection knowingly: --accept-missing %s", g->g[i].hook);
	}
	check_move_counts(r, l);
	check_created_bit(r, l);
	loader__destroy(l);
}

static void check_lockdown(struct doctor_report *r)
{
	char text[128], mode[32];
	struct check *c;

	if (read_file(SECURITYFS "/lockdown", text, sizeof(text)) < 0 ||
	    doctor_lockdown_mode(text, mode, sizeof(mode))) {
		c = add(r, "lockdown", CHECK_PASS);
		snprintf(c->detail, sizeof(c->detail), "no lockdown information (LSM absent or no securityfs)");
		return;
	}
	if (!strcmp(mode, "confidentiality")) {
		c = add(r, "lockdown", CHECK_FAIL);
		snprintf(c->detail, sizeof(c->detail), "lockdown=confidentiality blocks the BPF helpers sbx-bpf needs");
		snprintf(c->fix, sizeof(c->fix), "boot with lockdown=integrity (or none)");
		return;
	}
	c = add(r, "lockdown", CHECK_PASS);
	snprintf(c->detail, sizeof(c->detail), "lockdown=%s", mode);
}

static void check_bpffs(struct doctor_report *r)
{
	struct check *c;

	if (is_mounted(BPFFS, BPF_FS_MAGIC)) {
		c = add(r, "bpffs", CHECK_PASS);
		snprintf(c->detail, sizeof(c->detail), "mounted at %s", BPFFS);
		return;
	}
	/* Only pinning (the daemon) needs it; `run` works without. */
	c = add(r, "bpffs", CHECK_WARN);
	snprintf(c->detail, sizeof(c->detail), "bpffs not mounted at %s (needed to pin enforcement)", BPFFS);
	snprintf(c->fix, sizeof(c->fix), "mount -t bpf bpf %s", BPFFS);
}

static void check_cgroup(struct doctor_report *r)
{
	char v2[PATH_MAX], path[PATH_MAX + 32], ctrl[512], missing[128];
	enum cgroup_layout l = cgroup_layout(v2, sizeof(v2));
	struct check *c;

	if (l != CGROUP_UNIFIED) {
		c = add(r, "cgroup", CHECK_FAIL);
		snprintf(c->detail, sizeof(c->detail), "cgroup layout is %s%s%s", cgroup_layout_name(l),
			 v2[0] ? "; v2 at " : "", v2);
		snprintf(c->fix, sizeof(c->fix),
			 "boot with systemd.unified_cgroup_hierarchy=1 (and without "
			 "systemd.legacy_systemd_cgroup_controller or cgroup_no_v1=) so that cgroup v2 "
			 "is mounted alone at /sys/fs/cgroup");
		return;
	}
	snprintf(path, sizeof(path), "%s/cgroup.controllers", v2);
	if (read_file(path, ctrl, sizeof(ctrl)) < 0)
		ctrl[0] = '\0';
	strip(ctrl);
	doctor_missing_controllers(ctrl, missing, sizeof(missing));
	c = add(r, "cgroup", missing[0] ? CHECK_WARN : CHECK_PASS);
	snprintf(c->detail, sizeof(c->detail), "cgroup v2 at %s; controllers: %s%s%s", v2,
		 ctrl[0] ? ctrl : "(none)", missing[0] ? "; missing: " : "", missing);
	if (missing[0])
		snprintf(c->fix, sizeof(c->fix),
			 "limits on %s need those controllers: enable them in the kernel or give "
			 "sbx-bpf a delegated subtree (systemd: Delegate=yes)", missing);
}

static bool has_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

static void check_caps(struct doctor_report *r)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	static const struct { int cap; const char *name; } need[] = {
		{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
		{ CAP_BPF, "CAP_BPF" },
		{ CAP_PERFMON, "CAP_PERFMON" },
	};
	char missing[128] = "";
	size_t len = 0;
	struct check *c;

	if (syscall(SYS_capget, &h, d)) {
		c = add(r, "capabilities", CHECK_FAIL);
		snprintf(c->detail, sizeof(c->detail), "capget failed: %s", strerror(errno));
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(need); i++)
		if (!has_cap(d, need[i].cap))
			len += snprintf(missing + len, sizeof(missing) - len, "%s%s", len ? " " : "",
					need[i].name);
	if (!missing[0]) {
		c = add(r, "capabilities", CHECK_PASS);
		snprintf(c->detail, sizeof(c->detail), "CAP_SYS_ADMIN CAP_BPF CAP_PERFMON effective");
		return;
	}
	c = add(r, "capabilities", CHECK_FAIL);
	snprintf(c->detail, sizeof(c->detail), "missing: %s", missing);
	snprintf(c->fix, sizeof(c->fix), "run as root (sudo), or grant %s", missing);
}

void doctor_run(struct doctor_report *r)
{
	int bpf_active;

	memset(r, 0, sizeof(*r));
	check_kernel(r);
	check_btf(r);
	check_lsm(r, &bpf_active);
	check_lsm_load(r, bpf_active);
	if (r->checks[r->nr - 1].status == CHECK_PASS) {	/* the kernel takes LSM programs at all */
		check_programs(r);	/* and the move counts its programs got */
	}
	check_lockdown(r);
	check_bpffs(r);
	check_cgroup(r);
	check_caps(r);
}

bool doctor_ok(const struct doctor_report *r)
{
	for (size_t i = 0; i < r->nr; i++)
		if (r->checks[i].status == CHECK_FAIL)
			return false;
	return true;
}

void doctor_print(const struct doctor_report *r, FILE *out)
{
	for (size_t i = 0; i < r->nr; i++) {
		const struct check *c = &r->checks[i];

		fprintf(out, "%s  %-13s %s\n", check_status_name(c->status), c->name, c->detail);
		if (c->fix[0])
			fprintf(out, "      %-13s fix: %s\n", "", c->fix);
	}
	fprintf(out, "%s\n", doctor_ok(r) ? "sbx-bpf can enforce on this host."
					  : "sbx-bpf cannot enforce on this host (see FAIL lines).");
}

json_t *doctor_to_json(const struct doctor_report *r)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < r->nr; i++) {
		const struct check *c = &r->checks[i];

		json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s?}", "name", c->name,
						     "status", check_status_name(c->status),
						     "detail", c->detail, "fix", c->fix[0] ? c->fix : NULL));
	}
	return json_pack("{s:b, s:o}", "ok", doctor_ok(r), "checks", arr);
}
