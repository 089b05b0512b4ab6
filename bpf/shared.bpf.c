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
 *   freplace/sbx_emit      a violation's record: filled, coalesced,
 *                          throttled or sent (report.h); its stand-in
 *                          sends nothing and counts the record as lost,
 *                          and the verdict stands either way
 *   freplace/sbx_current_chain  the sandboxes over the current task
 *   freplace/sbx_unjudged  and whether a call without a work slot is
 *                          refused (sandbox.h); their stand-ins take no
 *                          chain and refuse such a call: a task the outside
 *                          cache does not know is denied what is judged
 *   freplace/sbx_judge_task  whether a sandboxed task may act on another
 *                          (task_judge.h); its stand-in refuses
 *   freplace/sbx_judge_path  a resolved path's verdict under each sandbox
 *                          of the chain, with its events (fs_judge.h);
 *                          its stand-in refuses
 *   freplace/fs_name_clear  whether a name in a directory the directory
 *                          memo holds leaves the directory's verdict as
 *                          it is (fs_match.h); its stand-in says it may
 *                          not, so the name is matched the whole way
 *
 * The stand-ins are what a program runs until its extensions are attached,
 * and the loader attaches no program before that: a program whose
 * extension could not be attached is a protection that cannot load, named
 * like any other (loader.c). Verified in each program that walks paths or
 * reports, they took most of the verifier's time over all programs
 * (bench/RESULTS.md, stops 41 and 42).
 *
 * The maps are the enforcement object's: the loader hands this object
 * every map of its of the same name, and its .bss (bpf_map__reuse_fd), so
 * the matcher reads the rules and the filter userspace writes, and a
 * record goes into the same ring buffer, counters and slots. Variables of
 * that .bss are read where the enforcement object has them:
 * sbx_bss_layout.h, made by the build from that object's BTF, says at which
 * offset each is and how large, and how large the section is; loader.c
 * asserts, when it is compiled, that both skeletons agree.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sbx_abi.h"
#include "sbx_bss_layout.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * The enforcement object's .bss: that map is this one's (loader.c), and of
 * the same size, which libbpf maps for both. SBX_BSS(type, name): its
 * variable @name, asserted where it is used to be a @type. sandbox.h
 * declares none of them here (SBX_EXTENSION): the names below are these.
 */
struct {
	char raw[SBX_BSS_SIZE];
} sbx_bss __attribute__((aligned(8)));
#define SBX_BSS(type, name)							\
	(*({									\
		_Static_assert(sizeof(type) == SBX_BSS_SIZE_##name, #name " is not a " #type); \
		(volatile type *)(sbx_bss.raw + SBX_BSS_OFF_##name);		\
	}))
typedef __u64 sbx_fs_filter_words[SBX_FS_FILTER_WORDS];

#define nr_sandboxes		SBX_BSS(__u32, nr_sandboxes)
#define sandbox_gen		SBX_BSS(__u64, sandbox_gen)
#define scope_set		SBX_BSS(__u32, scope_set)
#define policy_seq		SBX_BSS(__u32, policy_seq)
#define arming_set		SBX_BSS(__u32, arming_set)
#define nest_set		SBX_BSS(__u32, nest_set)
#define rare_loop_flags		SBX_BSS(__u64, rare_loop_flags)
#define coalesce_ns		SBX_BSS(__u64, coalesce_ns)
#define rate_interval_ns	SBX_BSS(__u64, rate_interval_ns)
#define rate_burst		SBX_BSS(__u32, rate_burst)
#define ev_seq			SBX_BSS(__u64, ev_seq)
#define verdict_gen		SBX_BSS(__u64, verdict_gen)
#define outside_tab		SBX_BSS(struct sbx_outside, outside_tab)
#define fs_filter		SBX_BSS(sbx_fs_filter_words, fs_filter)

/* The maps, as the enforcement object defines them: the loader gives this object those very maps. */
#define SBX_DEFINE_MAPS
#define SBX_EXTENSION
#include "sandbox.h"

#include "fs_match.h"
#include "resolve.h"
#include "fs_judge.h"
#include "task_judge.h"
