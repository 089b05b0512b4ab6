// SPDX-License-Identifier: GPL-2.0
/*
 * task.bpf.c — what a sandboxed task may do to other tasks and to the
 * kernel itself, whatever its policy says. A sandbox's processes may run as
 * root; these hooks keep that root inside its cgroup.
 *
 * Hooks and what each denies, only for tasks in a sandboxed cgroup; each
 * denial is -EPERM (the errno these calls document for "not allowed") plus
 * one event, or an audit event in audit mode:
 *
 *   lsm/ptrace_access_check  ptrace attach/seize, /proc/PID/{mem,environ,fd,
 *                            ns,root,…}, process_vm_*, pidfd_getfd, kcmp of a
 *                            task outside the sandbox's cgroup subtree.
 *                            Probes the kernel marks PTRACE_MODE_NOAUDIT (ps
 *                            reading /proc/PID/stat) are refused without an
 *                            event: they are not requests, and are many
 *   lsm/ptrace_traceme       PTRACE_TRACEME when the parent is outside
 *   lsm/task_kill            any signal, 0 and SIGSTOP included, to a task
 *                            outside (kill, tgkill, pidfd_send_signal)
 *   lsm/task_setnice         renicing, I/O priority, scheduling policy,
 *   lsm/task_setioprio       rlimits (prlimit) and page migration of a task
 *   lsm/task_setscheduler    outside
 *   lsm/task_setrlimit
 *   lsm/task_movememory
 *   lsm/file_fcntl           F_SETOWN to another process (its SIGIO, with
 *                            F_SETSIG any signal, would reach a task outside)
 *                            and F_SETOWN_EX, whose target is in user memory
 *   lsm/task_alloc           clone3(CLONE_INTO_CGROUP): a child started in
 *                            another cgroup would be outside the sandbox
 *   lsm/bpf                  every bpf(2) command: no programs, maps, links
 *                            or pinned objects, ours included
 *   lsm/kernel_module_request  modules the kernel would load for the task
 *   lsm/kernel_read_file     finit_module, kexec_file_load, firmware and
 *   lsm/kernel_load_data     policy loading; init_module, kexec_load
 *   lsm/perf_event_open      every perf event
 *   lsm/capable              the host-administration capabilities in
 *                            DENIED_CAPS (CAP_SYS_ADMIN: mount, setns,
 *                            unshare; CAP_NET_ADMIN: routes, firewall;
 *                            CAP_SYS_NICE: real-time scheduling; …) when the
 *                            sandboxed task asks for itself. NOAUDIT checks
 *                            (the kernel asking on its own account, e.g.
 *                            on every mmap) are refused without an event
 *
 * "Outside" is judged per sandbox of the task's chain: the target must run
 * in that sandbox's cgroup or below it, for every level (nested sandboxes).
 * The target's process id and name go in the event (SBX_EV_TARGET).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sbx_abi.h"
#include "sandbox.h"

#define PTRACE_MODE_NOAUDIT	0x04
#define CAP_OPT_NOAUDIT		(1 << 1)
#define F_SETOWN		8
#define F_SETOWN_EX		15

/* Capabilities no sandboxed task gets (linux/capability.h numbers). */
#define CAPBIT(n)		(1ULL << (n))
#define DENIED_CAPS							\
	(CAPBIT(12) /* NET_ADMIN */ | CAPBIT(15) /* IPC_OWNER */ |		\
	 CAPBIT(16) /* SYS_MODULE */ | CAPBIT(17) /* SYS_RAWIO */ |		\
	 CAPBIT(20) /* SYS_PACCT */ | CAPBIT(21) /* SYS_ADMIN */ |		\
	 CAPBIT(22) /* SYS_BOOT */ | CAPBIT(23) /* SYS_NICE */ |		\
	 CAPBIT(25) /* SYS_TIME */ | CAPBIT(26) /* SYS_TTY_CONFIG */ |		\
	 CAPBIT(29) /* AUDIT_WRITE */ | CAPBIT(30) /* AUDIT_CONTROL */ |	\
	 CAPBIT(31) /* SETFCAP */ | CAPBIT(32) /* MAC_OVERRIDE */ |		\
	 CAPBIT(33) /* MAC_ADMIN */ | CAPBIT(34) /* SYSLOG */ |			\
	 CAPBIT(35) /* WAKE_ALARM */ | CAPBIT(36) /* BLOCK_SUSPEND */ |		\
	 CAPBIT(37) /* AUDIT_READ */ | CAPBIT(38) /* PERFMON */ |		\
	 CAPBIT(39) /* BPF */ | CAPBIT(40) /* CHECKPOINT_RESTORE */)

#include "task_judge.h"

/*
 * @op on task @t: allowed when @t runs under every sandbox of the caller's
 * chain, else -EPERM and an event (none when @quiet): sbx_judge_task.
 */
static __always_inline int judge_task(struct task_struct *t, __u32 op, __u32 arg, bool quiet)
{
	JUDGE(j);
	int res;

	if (!t)
		return 0;
	res = judge_begin(&j);
	if (res <= 0)
		return res ? -EPERM : 0;
	return sbx_judge_task(j.s, ptr_value(t), op, arg, quiet);
}

/* @op is refused to every sandboxed task; @name (may be NULL) goes in the event's path. */
static __always_inline int judge_named(__u32 op, __u32 arg, const char *name, __u32 rule)
{
	JUDGE(j);
	int res;

	res = judge_begin(&j);
	if (res <= 0)
		return res ? -EPERM : 0;
	j.s->ev.arg = arg;
	if (name) {
		res = bpf_probe_read_kernel_str(j.s->ev.path, 256, name);
		j.s->ev.path_len = res > 0 ? (res - 1) & (SBX_PATH_MAX - 1) : 0;
	}
	return deny_err(&j, op, rule, -EPERM);
}

static __always_inline int judge_system(__u32 op, __u32 arg, const char *name)
{
	return judge_named(op, arg, name, SBX_RULE_SYSTEM);
}

static __always_inline int judge_task_rule(__u32 op, __u32 arg, __u32 rule)
{
	return judge_named(op, arg, NULL, rule);
}

SBX_LSM(ptrace_access_check, task_ptrace_access_check, struct task_struct *child, unsigned int mode)
{
	return judge_task(child, SBX_OP_PTRACE, mode, mode & PTRACE_MODE_NOAUDIT);
}

SBX_LSM(ptrace_traceme, task_ptrace_traceme, struct task_struct *parent)
{
	return judge_task(parent, SBX_OP_PTRACE, 0, false);
}

SBX_LSM(task_kill, task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred)
{
	return judge_task(p, SBX_OP_SIGNAL, sig, false);
}

SBX_LSM(task_setnice, task_setnice, struct task_struct *p, int nice)
{
	return judge_task(p, SBX_OP_SCHED, 0, false);
}

SBX_LSM(task_setioprio, task_setioprio, struct task_struct *p, int ioprio)
{
	return judge_task(p, SBX_OP_SCHED, 0, false);
}

SBX_LSM(task_setscheduler, task_setscheduler, struct task_struct *p)
{
	return judge_task(p, SBX_OP_SCHED, 0, false);
}

SBX_LSM(task_setrlimit, task_setrlimit, struct task_struct *p, unsigned int resource, struct rlimit *new_rlim)
{
	return judge_task(p, SBX_OP_SCHED, resource, false);
}

SBX_LSM(task_movememory, task_movememory, struct task_struct *p)
{
	return judge_task(p, SBX_OP_SCHED, 0, false);
}

/*
 * F_SETOWN makes the kernel signal the owner on I/O (SIGIO, or with
 * F_SETSIG any signal, SIGKILL included), checked against credentials
 * that root always passes. Only the caller itself (or nobody) may own a
 * descriptor; F_SETOWN_EX's owner is in user memory, so it is refused.
 */
SBX_LSM(file_fcntl, task_file_fcntl, struct file *file, unsigned int cmd, unsigned long arg)
{
	__u64 id = bpf_get_current_pid_tgid();
	int owner = (int)arg;

	if (cmd == F_SETOWN && (owner == 0 || owner == (int)(id >> 32) || owner == (int)(__u32)id))
		return 0;
	if (cmd != F_SETOWN && cmd != F_SETOWN_EX)
		return 0;
	return judge_system(SBX_OP_SIGNAL, cmd, NULL);
}

/*
 * clone3(CLONE_INTO_CGROUP) starts the child in any cgroup whose
 * cgroup.procs the caller could write: for root, outside the sandbox. The
 * cgroup is not among the hook's arguments, so the flag is refused outright
 * (a sandbox's children are born where it runs, below which it may not
 * write cgroup files anyway).
 */
#define CLONE_INTO_CGROUP	0x200000000ULL

SBX_LSM(task_alloc, task_alloc, struct task_struct *task, unsigned long clone_flags)
{
	if (!(clone_flags & CLONE_INTO_CGROUP))
		return 0;
	return judge_task_rule(SBX_OP_CLONE_CGROUP, 0, SBX_RULE_TASK);
}

/*
 * Two prototypes: 7.x added `kernel` (the command comes from a BPF program,
 * e.g. a light skeleton's loader, not from user space). Both are refused:
 * a sandboxed task has no business loading such a program either.
 */
SBX_LSM(bpf, task_bpf, int cmd, union bpf_attr *attr, unsigned int size)
{
	return judge_system(SBX_OP_BPF, cmd, NULL);
}

SBX_LSM(bpf, task_bpf_kernel, int cmd, union bpf_attr *attr, unsigned int size, bool kernel)
{
	return judge_system(SBX_OP_BPF, cmd, NULL);
}

SBX_LSM(kernel_module_request, task_kernel_module_request, char *kmod_name)
{
	return judge_system(SBX_OP_KERNEL_LOAD, SBX_LOAD_MODULE_REQUEST, kmod_name);
}

SBX_LSM(kernel_read_file, task_kernel_read_file, struct file *file, int id, bool contents)
{
	return judge_system(SBX_OP_KERNEL_LOAD, id, NULL);
}

SBX_LSM(kernel_load_data, task_kernel_load_data, int id, bool contents)
{
	return judge_system(SBX_OP_KERNEL_LOAD, id | SBX_LOAD_FROM_MEMORY, NULL);
}

/*
 * Two prototypes: 6.1 passes the event's attributes (the event names their
 * type: hardware, software, tracepoint…); the stable point releases from
 * 6.12.117 on, and 7.x, pass only the access asked for (open, cpu, kernel,
 * tracepoint), which the event names instead (SBX_PERF_ACCESS).
 */
SBX_LSM(perf_event_open, task_perf_event_open, int type)
{
	return judge_system(SBX_OP_PERF, SBX_PERF_ACCESS | (type & 0xff), NULL);
}

/*
 * type is the first field of the UAPI struct perf_event_attr, fixed by the
 * ABI: read without CO-RE, which would cost a search of the kernel's BTF
 * (about 4.4 M instructions of every load on 6.1) for a layout that cannot move.
 */
SBX_LSM(perf_event_open, task_perf_event_open_attr, struct perf_event_attr *attr, int type)
{
	__u32 t;

	bpf_probe_read_kernel(&t, sizeof(t), (void *)attr);	/* zeroed if unreadable, as BPF_CORE_READ's */
	return judge_system(SBX_OP_PERF, t, NULL);
}

SBX_LSM(capable, task_capable, const struct cred *cred, struct user_namespace *ns, int cap,
	     unsigned int opts)
{
	struct task_struct *task;
	JUDGE(j);
	int res;

	if (cap < 0 || cap > 63 || !(DENIED_CAPS & CAPBIT(cap)))
		return 0;
	/* Before the cred is read: most of these asks on a host are by tasks in no sandbox. */
	if (task_outside())
		return 0;
	/*
	 * Only the task's own capabilities: not another task's (has_capability),
	 * not a file's opener's. A plain load (the current task is a typed
	 * pointer on every kernel), untrusted as the verifier is cheaper with:
	 * only the address is compared.
	 */
	task = UNTRUSTED(task_struct, bpf_get_current_task_btf());
	if (cred != task->cred)
		return 0;
	if (!(opts & CAP_OPT_NOAUDIT))
		return judge_system(SBX_OP_CAPABILITY, cap, NULL);
	/* Not counted: the kernel asks this on every mmap (vm_enough_memory). */
	res = judge_begin(&j);
	if (res <= 0)
		return res ? -EPERM : 0;
	return (j.sb->flags & SBX_SANDBOX_AUDIT) ? 0 : -EPERM;
}
