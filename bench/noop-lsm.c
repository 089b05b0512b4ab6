// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * noop-lsm: attach a `return 0` program to every LSM hook sbx-bpf uses
 * (bench/noop-gen.sh), then run a command and detach when it exits. The
 * command's cost over the same command without them is the trampoline's
 * floor: what any BPF-LSM program on those hooks costs before it does
 * anything (bench/cost.sh).
 *
 *   noop-lsm [--without HOOK]... -- CMD [ARG]...
 *
 * A hook this kernel does not have (file_truncate before 6.2, …) is left
 * out and named on stderr, as sbx-bpf leaves it out. Exits with CMD's
 * status; 1 when the programs cannot be loaded or attached.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "noop.skel.h"

static bool listed(char **list, int n, const char *hook)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(list[i], hook))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct bpf_program *prog;
	struct noop_bpf *skel;
	char *without[64], name[128];
	int nwithout = 0, i = 1, status, attached = 0;
	pid_t pid;

	while (i < argc && strcmp(argv[i], "--")) {
		if (!strcmp(argv[i], "--without") && i + 1 < argc && nwithout < 64) {
			without[nwithout++] = argv[i + 1];
			i += 2;
			continue;
		}
		fprintf(stderr, "usage: noop-lsm [--without HOOK]... -- CMD [ARG]...\n");
		return 2;
	}
	if (i + 1 >= argc || !vmlinux) {
		fprintf(stderr, "noop-lsm: %s\n", vmlinux ? "no command" : "no kernel BTF");
		return 2;
	}
	skel = noop_bpf__open();
	if (!skel) {
		fprintf(stderr, "noop-lsm: open: %s\n", strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		const char *hook = bpf_program__section_name(prog) + strlen("lsm/");

		snprintf(name, sizeof(name), "bpf_lsm_%s", hook);
		if (btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) < 0 || listed(without, nwithout, hook)) {
			fprintf(stderr, "noop-lsm: %s left out\n", hook);
			bpf_program__set_autoload(prog, false);
		}
	}
	if (noop_bpf__load(skel)) {
		fprintf(stderr, "noop-lsm: load: %s\n", strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		if (!bpf_program__autoload(prog))
			continue;
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "noop-lsm: attach %s: %s\n", bpf_program__name(prog), strerror(errno));
			return 1;
		}
		attached++;
	}
	fprintf(stderr, "noop-lsm: %d no-op programs attached\n", attached);
	pid = fork();
	if (pid == 0) {
		execvp(argv[i + 1], argv + i + 1);
		fprintf(stderr, "noop-lsm: %s: %s\n", argv[i + 1], strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return 1;
	/* The links go with the process. */
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
