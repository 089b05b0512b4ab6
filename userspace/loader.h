/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * loader.h — loads and attaches the enforcement programs (fs.bpf.c) and
 * writes sandboxes and rules into their maps.
 */
#ifndef SBX_LOADER_H
#define SBX_LOADER_H

#include <stdbool.h>
#include <linux/types.h>
#include "sbx_abi.h"

struct sbx_loader;

struct cgroup_ids;
struct hook_gaps;
struct hook_picks;

/*
 * Called once the kernel's BTF has shown the gaps known before anything
 * loads (hooks it lacks or has no fitting variant for, those left out on
 * request), before the verifier's work: nonzero stops the load. Only the
 * verifier can add gaps after it.
 */
typedef int (*loader_gate_fn)(const struct hook_gaps *gaps, void *arg);

/*
 * Leave lsm/file_permission out: no sandbox of this set will hold a
 * descriptor opened outside its policy (a `run` whose command inherits
 * none). It is the largest program, and verifying it is start-up time.
 * loader__fd_judging_on() then fails with -ENOPKG, not the -ENOENT of a
 * hook the kernel lacks.
 */
#define LOADER_WITHOUT_FD_JUDGING	(1u << 0)

/*
 * Open and load the enforcement programs, attach nothing yet: of each hook
 * the variant that fits this kernel (hooks.h), then every program the
 * kernel accepts. What could not load is in loader__gaps(), by hook, with
 * the reason; the caller decides whether to go on without it. @picks (may
 * be NULL) gets the variant chosen for every hook. @flags: LOADER_*.
 * @gate (may be NULL) may stop the load before verifying: NULL with errno
 * ECANCELED. NULL with errno set when the failure is not one program's (no
 * kernel BTF, a map refused).
 */
struct sbx_loader *loader__load(struct hook_picks *picks, unsigned flags, loader_gate_fn gate, void *arg);
/*
 * Which variant of each hook fits the kernel whose BTF is @btf_path (a
 * vmlinux ELF or raw BTF; NULL: the running kernel's), without loading
 * anything: hooks__select on the object. 0 or -errno.
 */
int loader__pick(const char *btf_path, struct hook_picks *picks, struct hook_gaps *gaps);
/* Attach every loaded program: enforcement starts. 0 or -errno. */
int loader__attach(struct sbx_loader *l);
/*
 * The descriptors of the links this loader attached its own programs with,
 * the hooks' and then the extensions' (none for a set adopted from bpffs),
 * at most @max of them in @fds: how many there are.
 */
size_t loader__link_fds(const struct sbx_loader *l, int *fds, size_t max);
/* What this set lacks: from its load, or, for a pinned set, as the loader that pinned it recorded. */
const struct hook_gaps *loader__gaps(const struct sbx_loader *l);
/*
 * Whether @l's programs were given the kernel's move counts (moves.h), as
 * its .rodata holds them: 1, or 0 with the reason in @why; -ENOENT for a
 * set adopted from bpffs, whose .rodata this process did not write.
 */
int loader__move_counts(const struct sbx_loader *l, char *why, size_t sz);

/*
 * The FMODE_CREATED bit @l's programs were given (loader.c created_bit):
 * with it, an open that created its file goes by its path_mknod's judging.
 * 0, and why in @why (@sz bytes), when they got none.
 */
__u32 loader__created_bit(const struct sbx_loader *l, char *why, size_t sz);

/*
 * The verifier's reason for a refusal, from its log: the message lines at
 * its end ("func 'bpf_lsm_bpf' doesn't have 4-th argument: invalid
 * bpf_context access off=24 size=8"), without the instruction trace.
 */
void loader__verifier_reason(const char *log, char *out, size_t sz);
void loader__destroy(struct sbx_loader *l);

/* Write / remove one fs_rules entry. 0 or -errno. */
int loader__put_fs_rule(struct sbx_loader *l, const struct sbx_fs_key *key,
			const struct sbx_fs_rule *rule);
int loader__delete_fs_rule(struct sbx_loader *l, const struct sbx_fs_key *key);
/* The same for @n keys at once (one bpf() call where the kernel can); put: 0 or -errno. */
int loader__put_fs_rules(struct sbx_loader *l, const struct sbx_fs_key *keys,
			 const struct sbx_fs_rule *rules, __u32 n);
void loader__delete_fs_rules(struct sbx_loader *l, const struct sbx_fs_key *keys, __u32 n);
/* Read one fs_rules entry (-ENOENT: none); walk the keys (NULL: the first; -ENOENT past the last). */
int loader__get_fs_rule(struct sbx_loader *l, const struct sbx_fs_key *key, struct sbx_fs_rule *rule);
int loader__next_fs_key(struct sbx_loader *l, const struct sbx_fs_key *prev, struct sbx_fs_key *key);
/* Put cgroup @cgid under @policy_id. Rules go in first, so no open slips by. */
/*
 * With no SBX_SANDBOX_ARMING entry left, execs stop looking for one
 * (arming_set cleared). The caller holds the records' lock, which every
 * attach holds while it adds such an entry. How many are still arming.
 */
int loader__arming_settle(struct sbx_loader *l);
/*
 * Put the sandbox @sb on cgroup @cgid. Any cgroup may lie above or below
 * another sandbox's: from here on, every level of a task's cgroups is judged.
 */
int loader__add_sandbox(struct sbx_loader *l, __u64 cgid, const struct sbx_sandbox *sb);
/*
 * The same for a cgroup just made under sbx-bpf's own parent (`run`): no
 * sandbox lies below it (it is new), and any above it was added by
 * loader__add_sandbox (attach, the OCI hook, a run under SBX_CGROUP_ROOT),
 * which turned nesting on first. Its tasks are then judged by this one
 * entry, with one lookup.
 */
int loader__add_leaf_sandbox(struct sbx_loader *l, __u64 cgid, const struct sbx_sandbox *sb);
/* What the sandbox of @cgid refused, by kind, summed over CPUs (zeros before its first). 0 or -errno. */
int loader__sandbox_stats(struct sbx_loader *l, __u64 cgid, struct sbx_sandbox_stats *sum);
/*
 * True when the sandbox of @cgid has counted nothing at all (no denial, audit
 * hit or grant): the kernel then sent no record of it, so there is nothing
 * to wait for. False when it has, or when that cannot be told.
 */
bool loader__sandbox_quiet(struct sbx_loader *l, __u64 cgid);
int loader__remove_sandbox(struct sbx_loader *l, __u64 cgid);
/*
 * Drop the counters of every sandbox no longer in place: a call that began
 * before a removal and counts after it makes them again (sbx_count_for_sandbox),
 * and nothing else would; left, they fill the map and new sandboxes go
 * uncounted. 0 or -errno.
 */
int loader__prune_sandbox_stats(struct sbx_loader *l);
/* Drop the counters of the sandbox of @cgid (removed): none may be there. */
void loader__drop_sandbox_stats(struct sbx_loader *l, __u64 cgid);

/*
 * Every sandbox lies beneath the cgroup open at @cgroup_fd: tasks elsewhere
 * are let go after one check. Without it, every ancestor level is looked up.
 */
int loader__set_scope(struct sbx_loader *l, int cgroup_fd);
/* The events ring buffer map fd, and the summed stats counters. */
int loader__events_fd(const struct sbx_loader *l);
/* Which loaded set this is (its stats map's id: a new load, a new id); 0 if unknown. */
__u32 loader__set_id(const struct sbx_loader *l);

/*
 * Event volume (sbx_abi.h "Coalescing"): identical violations within
 * @coalesce_ns make one record; at most @rate records per second per
 * sandbox, @burst at once (0: no limit). A fresh load sets the defaults.
 */
#define SBX_COALESCE_NS_DEFAULT	1000000000ULL
#define SBX_RATE_DEFAULT	1000
#define SBX_BURST_DEFAULT	2000
void loader__set_event_limits(struct sbx_loader *l, __u64 coalesce_ns, __u32 rate, __u32 burst);
__u64 loader__coalesce_ns(const struct sbx_loader *l);
/* The kernel's coalescing and throttle slots, mapped into this process (evsweep.h). */
int loader__event_slots(struct sbx_loader *l, struct sbx_coalesce_slot **co, struct sbx_throttle_slot **th);
int loader__stat(const struct sbx_loader *l, enum sbx_stat which, __u64 *value);
/* One counter per CPU into @out (CPUs past @max add to the last); the CPU count or -errno. */
int loader__stat_percpu(const struct sbx_loader *l, enum sbx_stat which, __u64 *out, size_t max);
/* How full the events ring buffer is, 0..1 (unread bytes / size). 0 or -errno. */
int loader__ringbuf_fill(struct sbx_loader *l, double *ratio);

/* Network: one net_rules (LPM trie) entry; 0 or -errno. */
int loader__put_net_prefix(struct sbx_loader *l, const struct sbx_net_key *k,
			   const struct sbx_net_ports *v);
int loader__delete_net_prefix(struct sbx_loader *l, const struct sbx_net_key *k);
/* The resolver's side: dns_allow entries and who asked (dns_clients). */
int loader__dns_update(struct sbx_loader *l, const struct sbx_dns_key *k,
		       const struct sbx_dns_entry *e);
int loader__dns_delete(struct sbx_loader *l, const struct sbx_dns_key *k);
/* Read one dns_allow entry (-ENOENT: none); walk the keys as loader__next_fs_key. */
int loader__dns_lookup(struct sbx_loader *l, const struct sbx_dns_key *k, struct sbx_dns_entry *e);
int loader__next_dns_key(struct sbx_loader *l, const struct sbx_dns_key *prev, struct sbx_dns_key *k);
int loader__dns_client(struct sbx_loader *l, __u32 key, struct sbx_dns_client *out);
/*
 * Attach the DNS steering programs to the cgroup open at @cgroup_fd: its
 * port-53 traffic (and below) goes to the resolver whose ports the
 * sandbox's entry holds (struct sbx_sandbox dns_port4/6). Links are this
 * loader's: they go with it. 0 or -errno.
 */
int loader__steer_dns(struct sbx_loader *l, int cgroup_fd);
/* The same, as links of the caller's: their fds into @links (all or none). 0 or -errno. */
#define LOADER_NR_STEER	8
int loader__steer_links(struct sbx_loader *l, int cgroup_fd, int links[LOADER_NR_STEER]);

/*
 * Pinned state (the host agent): loader__pin puts the maps, the LSM links
 * and the steering programs of a loaded object under @dir (bpffs: maps/,
 * links/, progs/, and meta, written last); they stay when this process
 * exits, so enforcement does. loader__open_pinned adopts a complete set
 * built from this binary's object (-ESTALE for another build, -ENOENT for
 * none): the same calls then work on it, nothing is loaded or attached.
 * loader__unpin removes the set: enforcement ends with the last user (0
 * when there is none; -EXDEV for a directory not on bpffs, left alone).
 */
/* Where the daemon pins the programs, and where `run` and `attach` look for them. */
#define SBX_PIN_DIR	"/sys/fs/bpf/sbx"
int loader__pin(struct sbx_loader *l, const char *dir);
struct sbx_loader *loader__open_pinned(const char *dir);
int loader__unpin(const char *dir);
bool loader__adopted(const struct sbx_loader *l);
/*
 * DNS steering of an attached cgroup, pinned under @dir/steer/CGID/ so
 * that it outlives the daemon that runs the cgroup's resolver: with the
 * daemon gone, port-53 traffic still goes to the (dead) resolver port and
 * fails, rather than slipping past the rules (docs/agent.md). Nothing is
 * done when a whole set is pinned already. 0 or -errno.
 */
int loader__pin_steer(struct sbx_loader *l, const char *dir, __u64 cgid, int cgroup_fd);
/*
 * The daemon's steering of the sandboxes' parent (<cgroup2>/sbx-bpf, id
 * @cgid), pinned under @dir/rootsteer/CGID/: every `run` below it is
 * steered, and pins no set of its own (loader__root_steered). Sets of an
 * earlier parent (another id) go. 0 or -errno.
 */
int loader__pin_root_steer(struct sbx_loader *l, const char *dir, __u64 cgid, int cgroup_fd);
/* Is a whole such set pinned for the parent whose id is @cgid? */
bool loader__root_steered(const char *dir, __u64 cgid);
/* Remove that set (-ENOENT counts as done); the links go with the last reference. */
int loader__unpin_steer(const char *dir, __u64 cgid);
/* The cgroups with a pinned set: at most @max ids into @out; how many there are, or -errno. */
int loader__steer_pinned(const char *dir, __u64 *out, size_t max);
/* How long ago the set of @cgid was pinned (last changed), in seconds. 0 or -errno. */
int loader__steer_age(const char *dir, __u64 cgid, long *seconds);

/*
 * Descriptor uses (read, write through an open file: lsm/file_permission)
 * cost every task of the host a program call per read and write, and need
 * judging only where a sandbox may hold a descriptor its policy did not
 * see opened (SBX_SANDBOX_FD_JUDGE: attached to running processes, policy
 * replaced, a grant, inherited descriptors). So the program is attached
 * only while some sandbox of the set has that flag. loader__fd_judging_on
 * attaches it (before the flag is set: no moment with the flag but no
 * program); loader__fd_judging_settle detaches it when no sandbox has the
 * flag any more (after one went). On a pinned set both hold a lock on the
 * set, and the link is pinned (links/fs_file_permission); _on keeps the
 * lock until the sandbox entry that wants judging is written, so that no
 * other process's settle finds the new link unwanted in between.
 * loader__fd_judging_sweep settles only if nobody holds the lock (-EAGAIN:
 * someone does; the daemon's periodic clean-up after killed runs).
 * 0 or -errno (-ENOENT: this set has no such program, a gap).
 */
int loader__fd_judging_on(struct sbx_loader *l);
int loader__fd_judging_settle(struct sbx_loader *l);
int loader__fd_judging_sweep(struct sbx_loader *l);
/* Is the program attached now? */
bool loader__fd_judging(const struct sbx_loader *l);

/* Shared sandboxes (attach/detach/list on the pinned set). */
__u32 loader__new_policy_id(struct sbx_loader *l);
int loader__get_sandbox(struct sbx_loader *l, __u64 cgid, struct sbx_sandbox *sb);
/*
 * The resolver of the nearest of the cgroups @above that is a sandbox with
 * domain rules (dns_ops.via): 1 and its IPv4 port in *@port4; 0 when none
 * is, or when that sandbox is one of @self (the caller's own cgroup and
 * those above it, may be NULL: the kernel then steers the caller's queries
 * to the configured servers into it); -EHOSTUNREACH when it has no
 * resolver now, or the lookup's -errno.
 */
int loader__outer_resolver(struct sbx_loader *l, const struct cgroup_ids *above, const struct cgroup_ids *self,
			   __u16 *port4);
int loader__replace_sandbox(struct sbx_loader *l, __u64 cgid, const struct sbx_sandbox *sb);
/* The sandbox after @prev (NULL: the first); -ENOENT past the last. */
int loader__next_sandbox(struct sbx_loader *l, const __u64 *prev, __u64 *cgid, struct sbx_sandbox *sb);
/*
 * Wait until the programs that were judging when this was called have
 * returned (an RCU grace period): a policy replaced in `sandboxes` may
 * still be in use by a call that read the old entry. 0 or -errno.
 */
int loader__wait_judging(void);
/* Remove every fs and net rule of @policy_id. */
int loader__purge_policy(struct sbx_loader *l, __u32 policy_id);
/* Remove every dns_allow entry of the sandbox @cgid (its connect grants, its resolver's answers). */
int loader__purge_dns(struct sbx_loader *l, __u64 cgid);

/* How full the maps are (status). */
enum loader_fill { LOADER_FILL_SANDBOXES, LOADER_FILL_FS_RULES, LOADER_FILL_NET_RULES, LOADER_FILL_DNS };
int loader__fill(struct sbx_loader *l, enum loader_fill which, __u32 *used, __u32 *max);

/*
 * What the verifier spent on each program (doctor --verifier-stats, for
 * bench/verifier.sh): the programs this host would load are loaded, never
 * attached, with the kernel's statistics log (BPF_LOG_STATS), and dropped
 * again. One entry per loaded program, in the object's order; *out is
 * malloc'ed. 0 or -errno (a program the kernel refuses fails it all).
 */
struct loader_prog_stats {
	char name[64];		/* the program's name in the object */
	char section[64];	/* its ELF section: "lsm/file_open", "cgroup/connect4" */
	__u32 insns_processed;	/* "processed N insns": what the 1M-instruction limit counts */
	__u32 total_states;	/* states the verifier stored */
	__u32 peak_states;
	__u32 verify_us;	/* "verification time N usec" (6.1 and later print it) */
	__u32 xlated_insns;	/* the program's size after the verifier's rewrites */
};
int loader__verifier_stats(struct loader_prog_stats **out, size_t *nr);

/* Load and attach the trivial LSM probe program, then drop it. 0 or -errno. */
int loader__probe_lsm(void);

#endif
