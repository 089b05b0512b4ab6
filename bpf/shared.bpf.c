// SPDX-License-Identifier: GPL-2.0
/*
 * shared.bpf.c — the extension object: code that many enforcement programs
 * call, verified once here instead of once in each of them, and put in
 * place of their stand-ins with BPF freplace links (loader.c shared_*).
 *
 * No hooks of its own; what it replaces, in every program that calls it:
 *
 *   freplace/fs_match      the path matcher (fs_match.h): whether a path is
 *                          denied reading or writing under a policy; its
 *                          stand-in denies every path everything
 *   freplace/resolve_in    the walk from a dentry and a mount up to the
 *                          root of the mount namespace (resolve.h); its
 *                          stand-in resolves nothing, so every judged call
 *                          that needs a path is denied
 *
 * The stand-ins are what a program runs until its extensions are attached,
 * and the loader attaches no program before that: a program whose
 * extension could not be attached is a protection that cannot load, named
 * like any other (loader.c). Verified in each program that walks paths,
 * the two took a third to two fifths of the verifier's time over all
 * programs (bench/RESULTS.md, stop 41).
 *
 * The maps are the enforcement object's: the loader hands this object its
 * fs_rules and its .bss (bpf_map__reuse_fd), so the matcher reads the
 * rules and the filter userspace writes. The filter is read where the
 * enforcement object's .bss has it: sbx_bss_layout.h, made by the build
 * from that object's BTF, says at which offset and how large that .bss is,
 * and loader.c asserts, when it is compiled, that both skeletons agree.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sbx_abi.h"
#include "fs_verdict.h"
#include "sbx_bss_layout.h"

char LICENSE[] SEC("license") = "GPL";

/* As sandbox.h defines it; the loader gives this object that very map. */
SBX_FS_RULES_MAP();

/*
 * The enforcement object's .bss, the filter where it has it: that map is
 * this one's (loader.c), and of the same size, which libbpf maps for both.
 */
struct {
	char before[SBX_BSS_FS_FILTER_OFFSET];
	volatile __u64 fs_filter[SBX_FS_FILTER_WORDS];
	char after[SBX_BSS_SIZE - SBX_BSS_FS_FILTER_OFFSET - SBX_FS_FILTER_WORDS * 8];
} sbx_bss;
#define fs_filter	(sbx_bss.fs_filter)

#define SBX_EXTENSION
#include "fs_match.h"
#include "resolve.h"
