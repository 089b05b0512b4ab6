/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * evsweep.h — the consumer's half of in-kernel coalescing and rate limits
 * (sbx_abi.h "Coalescing"): the kernel folds identical violations into the
 * next record of the same kind and withholds records over a sandbox's rate,
 * announcing the count with the next record that passes. When no later
 * record comes (the flood stopped), the counts would wait forever: the
 * consumer sweeps the kernel's slots (its mmap of the two arrays), takes
 * the counts with an atomic exchange, and sends them as a summary of the
 * last record of that kind (SBX_EV_SUMMARY, repeat = count) or as a
 * "throttled" record.
 *
 * Library code: nothing prints; NULL/-errno on failure.
 */
#ifndef SBX_EVSWEEP_H
#define SBX_EVSWEEP_H

#include <stddef.h>
#include "sbx_abi.h"

struct evsweep;

typedef void (*evsweep_emit_fn)(void *ctx, const struct sbx_event *ev);

/*
 * A sweeper over the kernel's slot arrays (each SBX_*_SLOTS long, shared
 * with the kernel), for windows of @window_ns. NULL with errno on failure.
 */
struct evsweep *evsweep_new(struct sbx_coalesce_slot *coalesce, struct sbx_throttle_slot *throttle,
			    __u64 window_ns);
void evsweep_free(struct evsweep *sw);

/* Remember @ev (a record as received, @size bytes) as the last of its kind. */
void evsweep_note(struct evsweep *sw, const struct sbx_event *ev, size_t size);

/*
 * At CLOCK_MONOTONIC @now_ns: send (through @emit) a summary for every
 * slot whose window ended with violations still pending, and a throttled
 * record for every sandbox that fell silent with records withheld.
 * Returns how many records were sent.
 */
int evsweep_run(struct evsweep *sw, __u64 now_ns, evsweep_emit_fn emit, void *ctx);

/* Pending violations found with no record to attribute them to (e.g. after a restart). */
unsigned long long evsweep_unattributed(const struct evsweep *sw);

#endif
