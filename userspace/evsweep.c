// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * evsweep.c — summaries of coalescing windows and throttled runs that no
 * later kernel record closed (see evsweep.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "evsweep.h"

/* Throttled counts are sent once the sandbox has been quiet this long. */
#define QUIET_NS	1000000000ULL

struct evsweep {
	struct sbx_coalesce_slot *co;
	struct sbx_throttle_slot *th;
	__u64 window_ns;
	/* The last record of each coalescing slot, trimmed to its paths: bounded by the slot count. */
	struct sbx_event *last[SBX_COALESCE_SLOTS];
	size_t last_size[SBX_COALESCE_SLOTS];
	unsigned long long unattributed;
};

struct evsweep *evsweep_new(struct sbx_coalesce_slot *coalesce, struct sbx_throttle_slot *throttle,
			    __u64 window_ns)
{
	struct evsweep *sw;

	if (!coalesce || !throttle) {
		errno = EINVAL;
		return NULL;
	}
	sw = calloc(1, sizeof(*sw));
	if (!sw)
		return NULL;
	sw->co = coalesce;
	sw->th = throttle;
	sw->window_ns = window_ns;
	return sw;
}

void evsweep_free(struct evsweep *sw)
{
	if (!sw)
		return;
	for (size_t i = 0; i < SBX_COALESCE_SLOTS; i++)
		free(sw->last[i]);
	free(sw);
}

void evsweep_note(struct evsweep *sw, const struct sbx_event *ev, size_t size)
{
	struct sbx_event *copy;
	size_t idx;

	if (!sw || !ev->key || ev->op == SBX_OP_THROTTLED)
		return;
	idx = ev->key & (SBX_COALESCE_SLOTS - 1);
	if (size > sizeof(*ev))
		size = sizeof(*ev);
	copy = malloc(size);
	if (!copy)
		return;	/* the count is then reported as unattributed */
	memcpy(copy, ev, size);
	free(sw->last[idx]);
	sw->last[idx] = copy;
	sw->last_size[idx] = size;
}

static bool send_summary(struct evsweep *sw, size_t idx, __u64 key, __u64 n, __u64 now,
			 evsweep_emit_fn emit, void *ctx)
{
	static struct sbx_event ev;	/* 8 KiB: not on the stack of every caller */

	if (!sw->last[idx] || sw->last[idx]->key != key) {
		sw->unattributed += n;
		return false;
	}
	/* The unsent tail of the paths reads as zeroes. */
	memset(&ev, 0, sizeof(ev));
	memcpy(&ev, sw->last[idx], sw->last_size[idx]);
	ev.ts_ns = now;
	ev.seq = 0;
	ev.repeat = n > 0xffffffffULL ? 0xffffffffU : (__u32)n;
	ev.flags |= SBX_EV_SUMMARY;
	emit(ctx, &ev);
	return true;
}

static int sweep_coalesce(struct evsweep *sw, __u64 now, evsweep_emit_fn emit, void *ctx)
{
	int sent = 0;

	for (size_t i = 0; i < SBX_COALESCE_SLOTS; i++) {
		struct sbx_coalesce_slot *s = &sw->co[i];
		__u64 key, since, n;

		if (!__atomic_load_n(&s->pending, __ATOMIC_RELAXED))
			continue;
		key = __atomic_load_n(&s->key, __ATOMIC_RELAXED);
		since = __atomic_load_n(&s->since_ns, __ATOMIC_RELAXED);
		/* Still open: the kernel folds them into the next record of the kind. */
		if (now < since || now - since < sw->window_ns)
			continue;
		n = __atomic_exchange_n(&s->pending, 0, __ATOMIC_SEQ_CST);
		if (!n)
			continue;
		sent += send_summary(sw, i, key, n, now, emit, ctx);
	}
	return sent;
}

static int sweep_throttle(struct evsweep *sw, __u64 now, evsweep_emit_fn emit, void *ctx)
{
	int sent = 0;

	for (size_t i = 0; i < SBX_THROTTLE_SLOTS; i++) {
		struct sbx_throttle_slot *s = &sw->th[i];
		static struct sbx_event ev;
		__u64 last, n;

		if (!__atomic_load_n(&s->suppressed, __ATOMIC_RELAXED))
			continue;
		last = __atomic_load_n(&s->last_ns, __ATOMIC_RELAXED);
		if (now < last || now - last < QUIET_NS)
			continue;
		n = __atomic_exchange_n(&s->suppressed, 0, __ATOMIC_SEQ_CST);
		if (!n)
			continue;
		memset(&ev, 0, offsetof(struct sbx_event, path) + 1);
		ev.ts_ns = now;
		ev.repeat = n > 0xffffffffULL ? 0xffffffffU : (__u32)n;
		ev.cgroup_id = ev.sandbox_cgroup_id = __atomic_load_n(&s->cgid, __ATOMIC_RELAXED);
		ev.op = SBX_OP_THROTTLED;
		ev.verdict = SBX_VERDICT_DENY;
		ev.rule_id = SBX_RULE_NONE;
		ev.flags = SBX_EV_SUMMARY;
		emit(ctx, &ev);
		sent++;
	}
	return sent;
}

int evsweep_run(struct evsweep *sw, __u64 now_ns, evsweep_emit_fn emit, void *ctx)
{
	if (!sw)
		return 0;
	return sweep_coalesce(sw, now_ns, emit, ctx) + sweep_throttle(sw, now_ns, emit, ctx);
}

unsigned long long evsweep_unattributed(const struct evsweep *sw)
{
	return sw ? sw->unattributed : 0;
}
