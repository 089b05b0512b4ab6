// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * check.c — `sbx-bpf check`: load a policy exactly as `run` would
 * (including the mandatory set) and show what it compiles to, without
 * touching the kernel. Exit 0 when valid, 2 when not.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "netrules.h"
#include "policy.h"

static void check_usage(FILE *out)
{
	fprintf(out,
		"Usage: sbx-bpf check [--json] (POLICY | --preset NAME)\n"
		"\n"
		"Validate a policy file (sbx-bpf or sandbox-runtime settings JSON) or a\n"
		"built-in preset, and print the rules it compiles to: kind, scope, the\n"
		"resolved path, the text shown in events, and where each came from; then\n"
		"the network section, the limits (as the cgroup files they write), the\n"
		"mode and any warnings. '~' and relative paths\n"
		"resolve as they would for `run` from here (under sudo, '~' is the\n"
		"invoking user's home). The format is in docs/policy.md.\n"
		"\n"
		"  --preset NAME   a built-in preset:");
	for (size_t i = 0; policy_preset_name(i); i++)
		fprintf(out, " %s", policy_preset_name(i));
	fprintf(out,
		"\n"
		"  -j, --json      the compiled policy as one JSON document\n"
		"\n"
		"Exit status: 0 valid (warnings allowed); 2 invalid, with FILE:LINE:COL.\n");
}

static void print_warnings(const struct policy_diag *d)
{
	for (size_t i = 0; i < d->nr_warnings; i++)
		p_warn("%s", d->warnings[i]);
	if (d->nr_warnings_dropped)
		p_warn("%zu more warnings not shown", d->nr_warnings_dropped);
}

/* {"valid": true, "policy": {…}, "warnings": […]} */
static int print_check_json(const struct policy *p, const struct policy_diag *d)
{
	char *text = policy_to_json(p);
	json_t *pol = text ? json_loads(text, 0, NULL) : NULL, *warnings = json_array();

	free(text);
	if (!pol) {
		json_decref(warnings);
		p_err("out of memory");
		return 1;
	}
	for (size_t i = 0; i < d->nr_warnings; i++)
		json_array_append_new(warnings, json_string(d->warnings[i]));
	print_json(json_pack("{s:b, s:o, s:o, s:I}", "valid", 1, "policy", pol, "warnings", warnings,
			     "warnings_dropped", (json_int_t)d->nr_warnings_dropped));
	return 0;
}

/* What `run` would refuse when it compiles the rules (a prefix needing too many port ranges). */
static int compiles_for_kernel(const struct policy *p, struct policy_diag *d)
{
	struct net_compiled c;
	int err = net_compile(p, 0, &c, d->error, sizeof(d->error));

	net_compiled_free(&c);
	return err;
}

static int load(struct policy *p, const char *file, const char *preset, struct policy_diag *d)
{
	char home[PATH_MAX], cwd[PATH_MAX];
	struct policy_env env;
	int err;

	err = policy_env_default(&env, home, sizeof(home), cwd, sizeof(cwd));
	if (err) {
		policy_env_strerror(err, d->error, sizeof(d->error));
		return err;
	}
	err = file ? policy_load(p, file, &env, d) : policy_load_preset(p, preset, &env, d);
	if (err)
		return err;
	err = policy_add_mandatory(p);
	if (err) {
		snprintf(d->error, sizeof(d->error), "%s", strerror(-err));
		return err;
	}
	return compiles_for_kernel(p, d);
}

int do_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "preset", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct policy_diag diag = {};
	struct policy p = {};
	const char *preset = NULL, *file = NULL;
	int c, rc;

	while ((c = getopt_long(argc, argv, "jvh", opts, NULL)) != -1) {
		if (cli_common_opt(c))
			continue;
		switch (c) {
		case 'p': preset = optarg; break;
		case 'h': check_usage(stdout); return 0;
		default:
			fprintf(stderr, "Try 'sbx-bpf check --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		file = argv[optind++];
	if (!file == !preset || optind < argc) {
		p_err("check takes one policy: a FILE or --preset NAME (try 'sbx-bpf check --help')");
		return EXIT_USAGE;
	}
	if (load(&p, file, preset, &diag)) {
		policy_free(&p);
		p_err("%s", diag.error);
		return EXIT_USAGE;
	}
	if (cli.json) {
		rc = print_check_json(&p, &diag);
	} else {
		policy_print(&p, stdout);
		print_warnings(&diag);
		rc = 0;
	}
	policy_free(&p);
	return rc;
}
