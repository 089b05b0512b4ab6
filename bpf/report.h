/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report.h — how a violation becomes a record: the maps a report writes
 * (the events ring buffer, the counters, the coalescing and rate-limit
 * slots) and sbx_emit, which fills an event and sends it unless it is
 * coalesced or throttled (sbx_abi.h "Coalescing").
 *
 * sbx_emit is verified once, in the extension object (shared.bpf.c,
 * SBX_EXTENSION), and put in place of a stand-in in every enforcement
 * program (SBX_DEFINE_MAPS: fs.bpf.c defines the stand-in; the other files
 * declare it). Verified in each program that reports, its steps took a
 * fifth of the verifier's work on 6.1 and a third of its time on 7.x
 * (bench/RESULTS.md, stop 42). The verdict never depends on it.
 *
 * The includer defines SBX_SHARED (the maps' storage) and rare_loop()
 * (sandbox.h); the extension (shared.bpf.c) also names where the steps
 * find the enforcement object's .bss variables: rare_loop_flags,
 * coalesce_ns, rate_interval_ns, rate_burst, ev_seq.
 */
#ifndef SBX_REPORT_H
#define SBX_REPORT_H

SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SBX_RINGBUF_BYTES);
} events SEC(".maps");

SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SBX_STAT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * Allocated per entry (BPF_F_NO_PREALLOC), not up front: preallocating
 * 4,096 per-CPU entries cost a load up to 39 M instructions on one CPU
 * (when the per-CPU allocator had no pages ready), more with more CPUs.
 * Userspace makes a sandbox's entry before the sandbox exists (loader.c
 * sandbox_stats_create), so a program normally only looks it up.
 */
SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SBX_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct sbx_sandbox_stats);
} sandbox_stats SEC(".maps");

/* Coalescing and rate-limit state (sbx_abi.h "Coalescing"); mmapped by the consumer. */
SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SBX_COALESCE_SLOTS);
	__type(key, __u32);
	__type(value, struct sbx_coalesce_slot);
} coalesce SEC(".maps");

SBX_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SBX_THROTTLE_SLOTS);
	__type(key, __u32);
	__type(value, struct sbx_throttle_slot);
} throttle SEC(".maps");

/*
 * Global, so a program has one lookup of the stats map, not one at each of
 * the dozen or more places that count. 6.10 and later inline a per-CPU
 * array lookup, and until upstream's change of August 2025 each inlined
 * call made the verifier copy its per-instruction data for the whole
 * program (bpf_patch_insn_data): some 350,000 instructions per call on
 * 6.12. Every caller is on a path that denies or reports, where a call
 * costs nothing that matters.
 */
#if defined(SBX_DEFINE_MAPS) || defined(SBX_EXTENSION)
__noinline int sbx_stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n;
	return 0;
}
#else
extern int sbx_stat_add(__u32 idx, __u64 n);
#endif

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	sbx_stat_add(idx, n);
}

static __always_inline void stat_inc(__u32 idx)
{
	stat_add(idx, 1);
}

static __always_inline __u64 key_mix(__u64 h, __u64 x)
{
	h = (h ^ x) * SBX_HASH2_MUL;
	return h ^ (h >> 29);
}

#ifdef SBX_EXTENSION
/*
 * What key_word works on: 16 bytes, for the stack is nearly full when a
 * hook reports. The event itself rides along (a pointer kept on the stack
 * keeps its type), so the callback needs no way back to the work slot.
 */
struct key_ctx {
	__u64 h;
	const struct sbx_event *ev;
};

/* Fold 8 bytes (@at..@at+8, of which @end - @at are the path's) into c->h. */
static __always_inline long key_fold(struct key_ctx *c, __u32 at, __u32 end)
{
	__u64 w;

	if (at >= end)
		return 1;
	w = *(const __u64 *)(c->ev->path + (at & (2 * SBX_PATH_MAX - 8)));
	/* Bytes past the path are an earlier event's: never part of the key. */
	if (end - at < 8)
		w &= (1ULL << ((end - at) * 8)) - 1;
	c->h = key_mix(c->h, w);
	return 0;
}

/* bpf_loop callbacks: the @i-th 8 bytes of the event's path, of its second path. */
static long key_word(__u32 i, void *ctx)
{
	struct key_ctx *c = ctx;

	return key_fold(c, i * 8, c->ev->path_len & (SBX_PATH_MAX - 1));
}

static long key_word2(__u32 i, void *ctx)
{
	struct key_ctx *c = ctx;

	return key_fold(c, SBX_PATH_MAX + i * 8, SBX_PATH_MAX + (c->ev->path2_len & (SBX_PATH_MAX - 1)));
}

/*
 * What makes two violations identical, as a non-zero 64-bit key, into
 * ev->key. This and the other steps of a report below are global functions:
 * the verifier checks each once, alone. As parts of one
 * function their paths multiplied (coalesced or not, throttled or not, one
 * path or two): on 6.1, 17,000 of the 273,000 instructions processed in
 * all programs, 75 M instructions of verifying.
 */
__noinline int sbx_event_key(struct sbx_event *ev)
{
	struct key_ctx c = { .ev = ev };
	__u64 h = SBX_HASH2_INIT;
	__u32 len;
	bool ok;

	if (!ev)
		return 0;
	h = key_mix(h, ev->cgroup_id);
	h = key_mix(h, ev->sandbox_cgroup_id);
	h = key_mix(h, (__u64)ev->tgid << 32 | ev->op);
	h = key_mix(h, (__u64)ev->verdict << 32 | ev->rule_id);
	h = key_mix(h, (__u64)ev->flags << 32 | ev->domain_id);
	h = key_mix(h, (__u64)ev->arg << 32 | ev->target);
	h = key_mix(h, (__u64)ev->family << 48 | (__u64)ev->sock_type << 32 | ev->protocol << 16 | ev->port);
	h = key_mix(h, *(__u64 *)&ev->addr[0]);
	h = key_mix(h, *(__u64 *)&ev->addr[8]);
	len = ev->path_len & (SBX_PATH_MAX - 1);
	c.h = key_mix(h, len);
	ok = rare_loop((len + 7) / 8, key_word, &c) >= 0;
	if (ev->flags & SBX_EV_PATH2) {
		len = ev->path2_len & (SBX_PATH_MAX - 1);
		c.h = key_mix(c.h, len);
		ok &= rare_loop((len + 7) / 8, key_word2, &c) >= 0;
	}
	/* Paths that could not be hashed: a key of the event's own time, which repeats nothing. */
	if (!ok)
		c.h = key_mix(c.h, ev->ts_ns);
	ev->key = c.h | 1;
	return 0;
}

/*
 * Before the rate limit: -1 if @ev repeats the violation whose record
 * opened its slot @c's window less than coalesce_ns ago (counted there, no
 * record). Otherwise ev->repeat is @ev plus the ones coalesced since this
 * kind's last record, which go with it, sent or throttled; returns 1 if
 * the slot is this kind's, 0 if not.
 */
__noinline int sbx_coalesce_in(struct sbx_event *ev, struct sbx_coalesce_slot *c)
{
	int own;

	if (!ev)
		return 0;
	ev->repeat = 1;
	if (!c)
		return 0;
	own = c->key == ev->key;
	if (own && coalesce_ns && ev->ts_ns - c->since_ns < coalesce_ns) {
		__sync_fetch_and_add(&c->pending, 1);
		stat_inc(SBX_STAT_COALESCED);
		return -1;
	}
	if (own && c->pending)
		ev->repeat += __sync_lock_test_and_set(&c->pending, 0);
	return own;
}

/*
 * After the rate limit let @ev through: the window of its slot @c opens
 * now; a slot that was another kind's (@own 0) becomes this one's, and
 * what that kind had pending loses its detail, not its number.
 */
__noinline int sbx_coalesce_open(struct sbx_event *ev, struct sbx_coalesce_slot *c, int own)
{
	__u64 n;

	if (!ev || !c)
		return 0;
	c->since_ns = ev->ts_ns;
	if (!own) {
		n = c->pending ? __sync_lock_test_and_set(&c->pending, 0) : 0;
		if (n)
			stat_add(SBX_STAT_UNREPORTED, n);
		c->key = ev->key;
	}
	return 0;
}

/* "Throttled: @n violations withheld" for sandbox @cgid, ahead of the record that passed. */
static __noinline void send_throttled(__u64 cgid, __u64 n, __u64 now, __u32 verdict)
{
	struct sbx_event *t = bpf_ringbuf_reserve(&events, offsetof(struct sbx_event, path) + 8, 0);

	if (!t) {
		/* The count is lost with the record: it stays in the THROTTLED counter only. */
		stat_inc(SBX_STAT_EVENTS_LOST);
		return;
	}
	__builtin_memset(t, 0, offsetof(struct sbx_event, path) + 8);
	t->ts_ns = now;
	t->seq = __sync_fetch_and_add(&ev_seq, 1) + 1;
	t->repeat = n > 0xffffffff ? 0xffffffff : n;
	t->cgroup_id = cgid;
	t->sandbox_cgroup_id = cgid;
	t->op = SBX_OP_THROTTLED;
	t->verdict = verdict;
	t->rule_id = SBX_RULE_NONE;
	stat_inc(SBX_STAT_THROTTLE_RECORDS);
	bpf_ringbuf_submit(t, 0);
}

/* 1 if the sandbox's record rate is used up: @ev is withheld and counted. */
__noinline int sbx_throttled(struct sbx_event *ev)
{
	__u64 cgid, interval = rate_interval_ns, tat, n, now;
	struct sbx_throttle_slot *t;
	__u32 idx, burst = rate_burst;

	if (!ev || !interval)
		return 0;
	cgid = ev->sandbox_cgroup_id;
	now = ev->ts_ns;
	idx = key_mix(SBX_HASH2_INIT, cgid) & (SBX_THROTTLE_SLOTS - 1);
	t = bpf_map_lookup_elem(&throttle, &idx);
	if (!t)
		return 0;
	if (t->cgid != cgid) {
		n = t->suppressed ? __sync_lock_test_and_set(&t->suppressed, 0) : 0;
		if (n)
			stat_add(SBX_STAT_UNREPORTED, n);
		t->cgid = cgid;
		t->tat_ns = 0;
	}
	tat = t->tat_ns > now ? t->tat_ns : now;
	if (tat - now > (__u64)(burst ? burst - 1 : 0) * interval) {
		__sync_fetch_and_add(&t->suppressed, ev->repeat);
		t->last_ns = now;
		stat_inc(SBX_STAT_THROTTLED);
		return 1;
	}
	t->tat_ns = tat + interval;
	n = t->suppressed ? __sync_lock_test_and_set(&t->suppressed, 0) : 0;
	if (n)
		send_throttled(cgid, n, now, ev->verdict);
	return 0;
}

/* The kind of @ev for the sandbox's counters (sbx_abi.h sandbox_stats). */
static __always_inline __u32 event_kind(const struct sbx_event *ev)
{
	if (ev->verdict == SBX_VERDICT_GRANTED)
		return SBX_KIND_GRANTED;
	if (ev->verdict == SBX_VERDICT_AUDIT)
		return SBX_KIND_AUDIT;
	if (ev->op == SBX_OP_READ)
		return SBX_KIND_READ;
	if (ev->op >= SBX_OP_PTRACE)
		return SBX_KIND_TASK;
	if (ev->op >= SBX_OP_MOUNT && ev->op <= SBX_OP_USERNS)
		return SBX_KIND_NAMESPACE;
	if (ev->op >= SBX_OP_CONNECT)
		return SBX_KIND_NETWORK;
	return SBX_KIND_WRITE;
}

/* Zeroes to create a sandbox's counters from (a map value, not stack). */
static const struct sbx_sandbox_stats no_stats;

/* Count @ev for its sandbox: once per violation, sent or not. */
__noinline int sbx_count_for_sandbox(struct sbx_event *ev)
{
	struct sbx_sandbox_stats *st;
	__u32 kind;
	__u64 cgid;

	if (!ev)
		return 0;
	cgid = ev->sandbox_cgroup_id;
	st = bpf_map_lookup_elem(&sandbox_stats, &cgid);
	if (!st) {
		bpf_map_update_elem(&sandbox_stats, &cgid, &no_stats, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&sandbox_stats, &cgid);
		if (!st)
			return 0;	/* full: the global counters still have it */
	}
	kind = event_kind(ev);
	if (kind < SBX_KIND__MAX)
		st->n[kind]++;
	return 0;
}

/*
 * Send a filled event, cut to its paths' real size, unless coalesced or
 * throttled. A subprogram of its own: its locals must not add to the
 * frame of the hook, whose stack the matcher's calls already fill.
 */
static __noinline void send_record(struct sbx_event *ev)
{
	struct sbx_coalesce_slot *c;
	__u64 size;
	__u32 idx;
	int own;

	stat_inc(SBX_STAT_VIOLATIONS);
	sbx_count_for_sandbox(ev);
	sbx_event_key(ev);
	idx = ev->key & (SBX_COALESCE_SLOTS - 1);
	c = bpf_map_lookup_elem(&coalesce, &idx);
	own = sbx_coalesce_in(ev, c);
	if (own < 0)
		return;
	if (sbx_throttled(ev))
		return;	/* no window opens: what follows a throttled record is judged afresh */
	sbx_coalesce_open(ev, c, own);
	ev->seq = __sync_fetch_and_add(&ev_seq, 1) + 1;
	if (ev->flags & SBX_EV_PATH2)
		size = offsetof(struct sbx_event, path2) + (ev->path2_len & (SBX_PATH_MAX - 1)) + 1;
	else
		size = offsetof(struct sbx_event, path) + (ev->path_len & (SBX_PATH_MAX - 1)) + 1;
	if (size > sizeof(*ev))
		size = sizeof(*ev);
	if (bpf_ringbuf_output(&events, ev, size, 0))
		stat_inc(SBX_STAT_EVENTS_LOST);
}

/*
 * Fill the task fields of event @ev (of the sandbox @sandbox_cgid: @op in
 * the upper, the verdict in the lower half of @op_verdict) and send it, cut
 * to its paths' real size — unless it repeats one just sent (coalesced) or
 * its sandbox is over its record rate (throttled). The verdict never
 * depends on this. Put in place of every program's stand-in below
 * (sbx_emit_ext): verified once, not in each program that reports.
 */
__noinline int sbx_emit(struct sbx_event *ev, __u64 sandbox_cgid, __u64 op_verdict, __u32 rule_id, int error)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();

	if (!ev)
		return 0;
	ev->ts_ns = bpf_ktime_get_ns();
	ev->cgroup_id = bpf_get_current_cgroup_id();
	ev->sandbox_cgroup_id = sandbox_cgid;
	ev->pid = (__u32)id;
	ev->tgid = id >> 32;
	ev->ppid = BPF_CORE_READ(task, real_parent, tgid);
	ev->uid = (__u32)bpf_get_current_uid_gid();
	ev->op = op_verdict >> 32;
	ev->verdict = (__u32)op_verdict;
	ev->rule_id = rule_id;
	ev->error = error;
	if (!(ev->flags & SBX_EV_NET)) {
		ev->sock_type = ev->protocol = ev->port = 0;
		__builtin_memset(ev->addr, 0, sizeof(ev->addr));
	}
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	send_record(ev);
	return 0;
}

/*
 * The extension itself: the function above, which the extension's own
 * judges (task_judge.h) call too. libbpf links calls only to functions in
 * .text, not to another program's entry.
 */
SEC("freplace/sbx_emit")
int sbx_emit_ext(struct sbx_event *ev, __u64 sandbox_cgid, __u64 op_verdict, __u32 rule_id, int error)
{
	return sbx_emit(ev, sandbox_cgid, op_verdict, rule_id, error);
}
#elif defined(SBX_DEFINE_MAPS)
/*
 * The enforcement object's sbx_emit: a stand-in the loader replaces with
 * the extension's before any program is attached (loader.c shared_load).
 * Until then, and if it never is, the verdict stands and the record is
 * lost, counted as a violation and as a lost event (never silently).
 * Opaque to the compiler, which must neither drop an argument nor assume
 * what it writes.
 */
__noinline int sbx_emit(struct sbx_event *ev, __u64 sandbox_cgid, __u64 op_verdict, __u32 rule_id, int error)
{
	int r = 0;

	asm volatile("" : "+r"(r) : "r"(ev), "r"(sandbox_cgid), "r"(op_verdict), "r"(rule_id), "r"(error)
		     : "memory");
	stat_inc(SBX_STAT_VIOLATIONS);
	stat_inc(SBX_STAT_EVENTS_LOST);
	return r;
}
#else
extern int sbx_emit(struct sbx_event *ev, __u64 sandbox_cgid, __u64 op_verdict, __u32 rule_id, int error);
#endif

#endif /* SBX_REPORT_H */
