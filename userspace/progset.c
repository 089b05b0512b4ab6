// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * progset.c — the enforcement programs as the commands that enforce get
 * them (run, attach, daemon, doctor): loaded, and never used with a
 * protection missing that the user did not accept by name.
 */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "cli.h"
#include "hooks.h"
#include "loader.h"
#include "util.h"

static const char *kernel_release(void)
{
	static struct utsname u;

	return uname(&u) ? "?" : u.release;
}

/*
 * Say what @g lacks and that nothing starts: each hook, why, and what a
 * sandbox could do without it; then how to accept it, naming @unaccepted.
 */
static void refuse(const struct hook_gaps *g, const char *unaccepted, const char *how)
{
	if (cli.json) {
		print_json(json_pack("{s:s, s:s, s:o}", "error", "protections missing; nothing was started",
				     "accept_with", how, "missing", hooks__gaps_json(g)));
		return;
	}
	fprintf(stderr, "sbx-bpf: error: this kernel (Linux %s) lacks %u of sbx-bpf's protections; "
		"nothing was started:\n", kernel_release(), g->nr + g->dropped);
	hooks__print_gaps(g, stderr, "  ");
	fprintf(stderr, "sbx-bpf: to run without %s anyway, accept it by name: %s %s\n",
		strchr(unaccepted, ',') ? "them" : "it", how, unaccepted);
}

int cli_gaps_accepted(const struct hook_gaps *g, const char *const *accept, const char *how)
{
	char names[1024];

	if (hooks__unaccepted(g, accept, names, sizeof(names))) {
		refuse(g, names, how);
		return -1;
	}
	for (unsigned int i = 0; i < g->nr; i++)
		p_warn("running without the %s hook (accepted): %s", g->g[i].hook,
		       hooks__protection(g->g[i].hook));
	return 0;
}

/* What cli_load_programs tells its loader__load gate: what the user accepts, and how to say so. */
struct accept_ctx {
	const char *const *accept;
	const char *how;
};

/*
 * Refuse before verifying when the kernel's BTF already shows a gap not
 * accepted: the verifier's work (seconds, billions of instructions on
 * the newest kernels) would be spent only to refuse. The verifier may
 * still find more; cli_gaps_accepted judges the loaded set again.
 */
static int refuse_foreseen(const struct hook_gaps *g, void *arg)
{
	const struct accept_ctx *a = arg;
	char names[1024];

	if (!hooks__unaccepted(g, a->accept, names, sizeof(names)))
		return 0;
	refuse(g, names, a->how);
	return 1;
}

struct sbx_loader *cli_load_programs(const char *const *accept, const char *how, unsigned flags)
{
	struct accept_ctx a = { .accept = accept, .how = how };
	struct sbx_loader *l;
	int err;

	l = loader__load(NULL, flags, refuse_foreseen, &a);
	if (!l) {
		if (errno != ECANCELED)	/* refused: refuse_foreseen said why */
			p_err("cannot load the enforcement programs: %s (run 'sbx-bpf doctor')", strerror(errno));
		return NULL;
	}
	if (cli_gaps_accepted(loader__gaps(l), accept, how)) {
		loader__destroy(l);
		return NULL;
	}
	trace_phase("gaps-checked");
	err = loader__attach(l);
	trace_phase("attached");
	if (err) {
		p_err("cannot attach the enforcement programs: %s (run 'sbx-bpf doctor')", strerror(-err));
		loader__destroy(l);
		return NULL;
	}
	return l;
}

static const char *fit_name(enum hook_fit f)
{
	static const char *const names[] = {
		[HOOK_FIT] = "fits", [HOOK_ABSENT_OPTIONAL] = "absent (not needed)",
		[HOOK_ABSENT] = "absent", [HOOK_NO_VARIANT] = "no variant",
	};

	return names[f];
}

static json_t *picks_json(const struct hook_picks *p, const struct hook_gaps *g, const char *btf)
{
	json_t *hooks = json_array();

	for (unsigned int i = 0; i < p->nr; i++) {
		const struct hook_pick *h = &p->p[i];

		json_array_append_new(hooks, json_pack("{s:s, s:s?, s:i, s:s?, s:s, s:s}", "hook", h->hook,
			"program", h->prog[0] ? h->prog : NULL, "variants", (int)h->variants,
			"kernel_proto", h->kernel_proto[0] ? h->kernel_proto : NULL, "fit", fit_name(h->fit),
			"protection", hooks__protection(h->hook)));
	}
	return json_pack("{s:s, s:o, s:o}", "btf", btf, "hooks", hooks, "missing", hooks__gaps_json(g));
}

static void usage_hooks(FILE *out)
{
	fprintf(out, "Usage: sbx-bpf hooks [--btf FILE] [--json]\n\n"
		"For every LSM hook the enforcement programs use: the program variant that\n"
		"fits the kernel, the kernel's prototype of the hook, and what a sandbox\n"
		"could do without it. Nothing is loaded: the programs' recorded arguments are\n"
		"compared with the kernel's BTF, the running kernel's or, with --btf, a\n"
		"vmlinux (ELF with a .BTF section) or raw BTF file of another kernel.\n"
		"Exit status 0 when every hook has a fitting variant (or the kernel does not\n"
		"need it), 1 when a protection would be missing, 2 for a bad command line.\n");
}

int do_hooks(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "btf", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static struct hook_picks picks;
	struct hook_gaps gaps = { .nr = 0 };
	const char *btf = NULL;
	int c, err;

	while ((c = getopt_long(argc, argv, "jvh", opts, NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		if (c == 'b') {
			btf = optarg;
			continue;
		}
		usage_hooks(c == 'h' ? stdout : stderr);
		return c == 'h' ? 0 : EXIT_USAGE;
	}
	if (optind < argc) {
		p_err("hooks takes no arguments (got '%s')", argv[optind]);
		return EXIT_USAGE;
	}
	err = loader__pick(btf, &picks, &gaps);
	if (err) {
		p_err("cannot read the BTF of %s: %s", btf ? btf : "the running kernel", strerror(-err));
		return btf ? EXIT_USAGE : 1;
	}
	if (cli.json) {
		print_json(picks_json(&picks, &gaps, btf ? btf : "/sys/kernel/btf/vmlinux"));
		return gaps.nr || gaps.dropped ? 1 : 0;
	}
	printf("%-22s %-28s %-20s %s\n", "hook", "program", "fit", "kernel's arguments");
	for (unsigned int i = 0; i < picks.nr; i++) {
		const struct hook_pick *h = &picks.p[i];

		printf("%-22s %-28s %-20s %s\n", h->hook, h->prog[0] ? h->prog : "-", fit_name(h->fit),
		       h->kernel_proto[0] ? h->kernel_proto : "-");
	}
	if (gaps.nr || gaps.dropped) {
		printf("\nmissing on this kernel:\n");
		hooks__print_gaps(&gaps, stdout, "  ");
		return 1;
	}
	printf("\nevery hook has a program that takes this kernel's arguments.\n");
	return 0;
}
