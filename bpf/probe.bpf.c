// SPDX-License-Identifier: GPL-2.0
/*
 * probe.bpf.c — the smallest possible LSM program, for `sbx-bpf doctor`.
 *
 * Hooks:
 *   lsm/file_open   denies nothing: returns the verdict of the LSMs before it.
 *
 * Loading and attaching it answers "can this kernel run our enforcement?"
 * more reliably than any configuration check: lockdown, a hypervisor policy
 * or a missing CONFIG_BPF_LSM all show up as the errno of this load.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int BPF_PROG(probe_file_open, struct file *file, int ret)
{
	return ret;
}
