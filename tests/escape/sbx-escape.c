// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbx-escape — performs ONE escape attempt for the adversarial tests and
 * reports exactly what the kernel answered, so tests assert on errno names.
 *
 * Output: one line on stdout — "OK" if the attack's decisive system call
 * succeeded, else its errno name (e.g. "EPERM"), or a word documented below.
 * Exit 0: the attack worked; 1: it was refused; 2: bad usage, or a setup step
 * failed — then stdout says "SETUP <what> <errno name>" and stderr why.
 *
 * Victim and server (run outside the sandbox, in the background):
 *   sbx-escape victim FILE          holds a 64-byte buffer "INTACT"; writes
 *                                   "PID ADDR\n" (ADDR: 0x… of the buffer) to
 *                                   FILE atomically, then every 50 ms the
 *                                   buffer's string to FILE.state; SIGUSR1
 *                                   writes "SIGUSR1" to FILE.sig; all other
 *                                   signals have their default action
 *   sbx-escape scm-serve SOCKPATH FILE r|w|rw
 *                                   unix stream server: sends every client an
 *                                   fd of FILE (SCM_RIGHTS, data "x"); the
 *                                   socket appears only once it listens
 *
 * Processes (PID decimal, ADDR hex, SIG a number or KILL STOP CONT TERM INT
 * HUP USR1 USR2 IO, with or without "SIG"):
 *   sbx-escape ptrace-attach PID | ptrace-seize PID   (then detach)
 *   sbx-escape traceme              PTRACE_TRACEME in a forked child (control)
 *   sbx-escape traceme-self         PTRACE_TRACEME here (tracer: our parent)
 *   sbx-escape proc-mem-write PID ADDR TEXT   open /proc/PID/mem O_RDWR + pwrite
 *                                   TEXT and its NUL (first failure)
 *   sbx-escape proc-mem-read PID ADDR         open O_RDONLY + pread 6 bytes
 *   sbx-escape vm-writev PID ADDR TEXT        process_vm_writev (TEXT + NUL)
 *   sbx-escape pidfd-getfd PID FD   pidfd_getfd (pidfd_open is setup)
 *   sbx-escape kill PID SIG | pidfd-kill PID SIG
 *   sbx-escape sigio PID SIG        pipe F_SETOWN PID, F_SETSIG SIG, O_ASYNC,
 *                                   write a byte (first failure)
 *   sbx-escape fiosetown PID        ioctl(FIOSETOWN) on a unix socket
 *   sbx-escape setns-pidfd PID mnt|net   setns on a pidfd (pidfd_open is setup)
 *   sbx-escape setns-proc PID NS    open /proc/PID/ns/NS + setns (first failure)
 *   sbx-escape unshare mnt|user|net
 *   sbx-escape socket-proto PROTO stream|dgram   socket(AF_INET, TYPE, PROTO): an
 *                                   unloaded protocol makes the kernel ask for
 *                                   its module on the caller's behalf
 *   sbx-escape cgroup-move CGDIR    write own pid to CGDIR/cgroup.procs
 *   sbx-escape clone3-cgroup CGDIR  clone3(CLONE_INTO_CGROUP) a child into CGDIR;
 *                                   the child prints its /proc/self/cgroup line
 *                                   on stderr and exits
 *   sbx-escape sethostname NAME | settime (CLOCK_REALTIME := now) |
 *              sched-fifo (prio 1) | renice PID (19) |
 *              prlimit PID (RLIMIT_NOFILE read, then set to the same value;
 *              first failure) | reboot (LINUX_REBOOT_CMD_CAD_OFF)
 *
 * Kernel:
 *   sbx-escape bpf-prog-load        socket filter "r0 = 0; exit", GPL
 *   sbx-escape bpf-map-create       array, key 4, value 4, 1 entry
 *   sbx-escape bpf-link-detach      LINK_GET_NEXT_ID from 0, GET_FD_BY_ID,
 *                                   LINK_DETACH of that one link (first failure)
 *   sbx-escape bpf-obj-get PATH
 *   sbx-escape perf-open            software cpu-clock event on self
 *   sbx-escape init-module          64 zero bytes (never loads: see the errno)
 *   sbx-escape finit-module PATH    (opening PATH is setup)
 *   sbx-escape kexec-load           kexec_load(0, 0, NULL, 0)
 *   sbx-escape kexec-file-load PATH (opening PATH is setup) no initramfs
 *   sbx-escape binfmt PATH          write a 16-byte file starting 01 02 7f 7f,
 *                                   exec it in a child (binfmt module autoload):
 *                                   the child's execve errno (ENOEXEC expected)
 *   sbx-escape tiocsti              a new pty as a child's controlling tty,
 *                                   TIOCSTI "x"; LEAKED if the master then reads
 *                                   anything (echo) within 200 ms, else the
 *                                   TIOCSTI result
 *   sbx-escape dev-mem              open /dev/mem + read a byte
 *   sbx-escape write-file PATH TEXT open O_WRONLY|O_TRUNC + write (first failure)
 *   sbx-escape setxattr PATH NAME VALUE
 *
 * File system:
 *   sbx-escape bind-mount SRC DST
 *   sbx-escape chroot-escape DIR FILE   chroot DIR/sub with cwd DIR, chdir ..
 *                                   ×64, chroot ., open FILE + read a byte
 *                                   (first failure; mkdir/chdir DIR are setup)
 *   sbx-escape open-by-handle PATH [DIR]  name_to_handle_at, open_by_handle_at
 *                                   with DIR (default "/", on PATH's mount)
 *                                   as the mount, read a byte (first failure)
 *   sbx-escape opath-reopen PATH r|w|rw   O_PATH, then /proc/self/fd/N
 *   sbx-escape memfd-exec PROG [ARG…]     PROG copied into a memfd, execveat:
 *                                   its errno, or PROG's own output
 *   sbx-escape symlink-race LINK ALLOWED DENIED SECONDS
 *                                   a thread flips LINK between the two; open +
 *                                   read LINK for SECONDS: LEAKED if a read
 *                                   showed "SECRET", else EACCES if an open got
 *                                   EACCES, else the last other errno, else
 *                                   INTACT (counts on stderr)
 *
 * io_uring (a ring from raw system calls; io_uring_setup failing is SETUP):
 *   sbx-escape uring-connect ADDR PORT    IORING_OP_CONNECT, TCP, IPv4
 *   sbx-escape uring-unlink PATH          IORING_OP_UNLINKAT
 *   sbx-escape uring-open PATH r|w        IORING_OP_OPENAT (+ read a byte)
 *
 * Descriptors (OP: read a byte | write "x" | splice a byte into a pipe |
 * sendfile a byte to /dev/null | ftruncate to 0):
 *   sbx-escape scm-recv SOCKPATH read|write|splice|sendfile|ftruncate
 *                                   receive an fd from scm-serve (connect is
 *                                   setup); CTRUNC if none arrived
 *   sbx-escape fd-read FD | fd-write FD | fd-ftruncate FD | fd-sendfile FD
 *                                   on an inherited descriptor
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#ifndef KEXEC_FILE_NO_INITRAMFS
#define KEXEC_FILE_NO_INITRAMFS 0x4
#endif

extern char **environ;

/* --- output ----------------------------------------------------------------- */

static const char *errname(int e)
{
	static char buf[16];
	const char *n = strerrorname_np(e);

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

/* The answer to the decisive call @call: rc < 0 is a refusal (errno). */
static int report(const char *call, long rc)
{
	if (rc < 0) {
		int e = errno;

		printf("%s\n", errname(e));
		fprintf(stderr, "sbx-escape: %s: %s\n", call, strerror(e));
		return 1;
	}
	printf("OK\n");
	return 0;
}

/* The kernel's answer as a negative errno (io_uring CQE) or 0/positive. */
static int report_res(const char *call, int res)
{
	if (res < 0)
		errno = -res;
	return report(call, res < 0 ? -1 : 0);
}

/* A step before the attack failed: the attack was never tried. */
static int setup(const char *what)
{
	int e = errno;

	printf("SETUP %s %s\n", what, errname(e));
	fprintf(stderr, "sbx-escape: setup: %s: %s\n", what, strerror(e));
	return 2;
}

/* A special answer word; @worked: the attack succeeded. */
static int answer(const char *word, int worked)
{
	printf("%s\n", word);
	return worked ? 0 : 1;
}

static void usage_exit(const char *why, const char *arg)
{
	fprintf(stderr, "sbx-escape: %s '%s' (see the comment at the top of tests/escape/sbx-escape.c)\n",
		why, arg);
	exit(2);
}

static long num(const char *s, int base)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, base);
	if (errno || end == s || *end)
		usage_exit("bad number", s);
	return v;
}

static pid_t pid_arg(const char *s)
{
	return (pid_t)num(s, 10);
}

static uint64_t addr_arg(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 16);
	if (errno || end == s || *end)
		usage_exit("bad address", s);
	return v;
}

static int sig_arg(const char *s)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "KILL", SIGKILL }, { "STOP", SIGSTOP }, { "CONT", SIGCONT }, { "TERM", SIGTERM },
		{ "INT", SIGINT }, { "HUP", SIGHUP }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
		{ "IO", SIGIO },
	};
	const char *n = strncmp(s, "SIG", 3) ? s : s + 3;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(n, sigs[i].name))
			return sigs[i].sig;
	return (int)num(s, 10);
}

static int mode_arg(const char *s)
{
	if (!strcmp(s, "r"))
		return O_RDONLY;
	if (!strcmp(s, "w"))
		return O_WRONLY;
	if (!strcmp(s, "rw"))
		return O_RDWR;
	usage_exit("bad mode", s);
	return -1;
}

static int pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* After a successful open: read a byte when readable, to prove access. */
static int opened(const char *call, int fd, int flags)
{
	char c;

	if (fd < 0)
		return report(call, -1);
	if ((flags & O_ACCMODE) != O_WRONLY && read(fd, &c, 1) < 0)
		return report("read", -1);
	return report(call, 0);
}

/* Write @text to @path via @path.tmp + rename, so readers never see half of it. */
static int write_atomic(const char *path, const char *text)
{
	char tmp[4096];
	int fd;
	ssize_t n;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	if (n != (ssize_t)strlen(text))
		return -1;
	return rename(tmp, path);
}

/* --- victim and server ---------------------------------------------------------- */

static char victim_buf[64] = "INTACT";
static char victim_sig_path[4096];

static void victim_usr1(int sig)
{
	int fd = open(victim_sig_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	(void)sig;
	if (fd >= 0) {
		if (write(fd, "SIGUSR1\n", 8) < 0) {
			/* nothing to do in a handler */
		}
		close(fd);
	}
}

static int do_victim(char **a)
{
	char path[4096], text[128];
	struct sigaction sa = { .sa_handler = victim_usr1 };
	sigset_t none;

	snprintf(victim_sig_path, sizeof(victim_sig_path), "%s.sig", a[0]);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (sigaction(SIGUSR1, &sa, NULL))
		return setup("sigaction");
	snprintf(text, sizeof(text), "%d %p\n", (int)getpid(), (void *)victim_buf);
	if (write_atomic(a[0], text))
		return setup("write-pidfile");
	snprintf(path, sizeof(path), "%s.state", a[0]);
	for (;;) {
		char cur[sizeof(victim_buf) + 1];
		struct timespec ts = { .tv_nsec = 50 * 1000 * 1000 };

		__asm__ volatile("" ::: "memory");	/* other processes write the buffer */
		memcpy(cur, victim_buf, sizeof(victim_buf));
		cur[sizeof(victim_buf)] = '\0';
		snprintf(text, sizeof(text), "%s\n", cur);
		write_atomic(path, text);
		nanosleep(&ts, NULL);
	}
}

static socklen_t unix_addr(const char *path, struct sockaddr_un *un)
{
	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(un->sun_path))
		usage_exit("socket path too long", path);
	strcpy(un->sun_path, path);
	return sizeof(*un);
}

static int send_fd(int sock, int fd)
{
	char data = 'x';
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } c;
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	memset(&c, 0, sizeof(c));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* Bound to SOCKPATH.tmp and renamed once listening: connecting never races the listen. */
static int do_scm_serve(char **a)
{
	struct sockaddr_un un;
	char tmp[4096];
	int fd = open(a[1], mode_arg(a[2]) | O_CLOEXEC), srv;

	if (fd < 0)
		return setup("open");
	snprintf(tmp, sizeof(tmp), "%s.tmp", a[0]);
	unlink(tmp);
	srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (srv < 0)
		return setup("socket");
	if (bind(srv, (struct sockaddr *)&un, unix_addr(tmp, &un)) || listen(srv, 16))
		return setup("bind");
	if (rename(tmp, a[0]))
		return setup("rename");
	for (;;) {
		int c = accept4(srv, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0)
			continue;
		if (send_fd(c, fd))
			perror("sbx-escape: scm-serve: sendmsg");
		close(c);
	}
}

/* --- processes ------------------------------------------------------------------ */

static int do_ptrace_attach(char **a)
{
	pid_t pid = pid_arg(a[0]);
	int st;

	if (ptrace(PTRACE_ATTACH, pid, 0, 0) < 0)
		return report("ptrace(ATTACH)", -1);
	waitpid(pid, &st, __WALL);
	ptrace(PTRACE_DETACH, pid, 0, 0);
	return report("ptrace(ATTACH)", 0);
}

static int do_ptrace_seize(char **a)
{
	pid_t pid = pid_arg(a[0]);
	int st;

	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0)
		return report("ptrace(SEIZE)", -1);
	/* A seized tracee must be stopped to detach; our exit would detach it anyway. */
	if (!ptrace(PTRACE_INTERRUPT, pid, 0, 0) && waitpid(pid, &st, __WALL) == pid)
		ptrace(PTRACE_DETACH, pid, 0, 0);
	return report("ptrace(SEIZE)", 0);
}

static int do_traceme(char **a)
{
	int p[2], e = 0;
	pid_t child;

	(void)a;
	if (pipe2(p, O_CLOEXEC))
		return setup("pipe");
	child = fork();
	if (child < 0)
		return setup("fork");
	if (child == 0) {
		e = ptrace(PTRACE_TRACEME, 0, 0, 0) < 0 ? errno : 0;
		_exit(write(p[1], &e, sizeof(e)) == sizeof(e) ? 0 : 1);
	}
	close(p[1]);
	if (read(p[0], &e, sizeof(e)) != sizeof(e))
		return setup("child");
	waitpid(child, NULL, 0);
	errno = e;
	return report("ptrace(TRACEME)", e ? -1 : 0);
}

static int do_traceme_self(char **a)
{
	(void)a;
	return report("ptrace(TRACEME)", ptrace(PTRACE_TRACEME, 0, 0, 0));
}

static int open_proc_mem(pid_t pid, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	return open(path, flags | O_CLOEXEC);
}

static int do_proc_mem_write(char **a)
{
	int fd = open_proc_mem(pid_arg(a[0]), O_RDWR);
	size_t len = strlen(a[2]) + 1;
	ssize_t n;

	if (fd < 0)
		return report("open", -1);
	n = pwrite(fd, a[2], len, (off_t)addr_arg(a[1]));
	if (n >= 0 && (size_t)n != len)
		errno = EIO, n = -1;
	return report("pwrite", n);
}

static int do_proc_mem_read(char **a)
{
	int fd = open_proc_mem(pid_arg(a[0]), O_RDONLY);
	char buf[7] = "";
	ssize_t n;

	if (fd < 0)
		return report("open", -1);
	n = pread(fd, buf, 6, (off_t)addr_arg(a[1]));
	if (n > 0)
		fprintf(stderr, "sbx-escape: read \"%.*s\"\n", (int)n, buf);
	return report("pread", n);
}

static int do_vm_writev(char **a)
{
	struct iovec local = { .iov_base = a[2], .iov_len = strlen(a[2]) + 1 };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr_arg(a[1]), .iov_len = local.iov_len };

	return report("process_vm_writev", process_vm_writev(pid_arg(a[0]), &local, 1, &remote, 1, 0));
}

static int do_pidfd_getfd(char **a)
{
	int pidfd = pidfd_open(pid_arg(a[0]));

	if (pidfd < 0)
		return setup("pidfd_open");
	return report("pidfd_getfd", syscall(SYS_pidfd_getfd, pidfd, (int)num(a[1], 10), 0));
}

static int do_kill(char **a)
{
	return report("kill", kill(pid_arg(a[0]), sig_arg(a[1])));
}

static int do_pidfd_kill(char **a)
{
	int sig = sig_arg(a[1]), pidfd = pidfd_open(pid_arg(a[0]));

	if (pidfd < 0)
		return setup("pidfd_open");
	return report("pidfd_send_signal", syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0));
}

static int do_sigio(char **a)
{
	int p[2], fl;

	if (pipe2(p, O_CLOEXEC))
		return setup("pipe");
	if (fcntl(p[0], F_SETOWN, pid_arg(a[0])))
		return report("fcntl(F_SETOWN)", -1);
	if (fcntl(p[0], F_SETSIG, sig_arg(a[1])))
		return report("fcntl(F_SETSIG)", -1);
	fl = fcntl(p[0], F_GETFL);
	if (fl < 0 || fcntl(p[0], F_SETFL, fl | O_ASYNC))
		return report("fcntl(F_SETFL)", -1);
	return report("write", write(p[1], "x", 1));
}

static int do_fiosetown(char **a)
{
	int sv[2], pid = pid_arg(a[0]);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return setup("socketpair");
	return report("ioctl(FIOSETOWN)", ioctl(sv[0], FIOSETOWN, &pid));
}

static int do_setns_pidfd(char **a)
{
	int flag, pidfd;

	if (!strcmp(a[1], "mnt"))
		flag = CLONE_NEWNS;
	else if (!strcmp(a[1], "net"))
		flag = CLONE_NEWNET;
	else
		usage_exit("bad namespace", a[1]);
	pidfd = pidfd_open(pid_arg(a[0]));
	if (pidfd < 0)
		return setup("pidfd_open");
	return report("setns", setns(pidfd, flag));
}

static int do_setns_proc(char **a)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid_arg(a[0]), a[1]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return report("open", -1);
	return report("setns", setns(fd, 0));
}

static int do_unshare(char **a)
{
	int flag = 0;

	if (!strcmp(a[0], "mnt"))
		flag = CLONE_NEWNS;
	else if (!strcmp(a[0], "user"))
		flag = CLONE_NEWUSER;
	else if (!strcmp(a[0], "net"))
		flag = CLONE_NEWNET;
	else
		usage_exit("bad namespace", a[0]);
	return report("unshare", unshare(flag));
}

static int do_cgroup_move(char **a)
{
	char path[4096], pid[32];
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", a[0]);
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return report("open", -1);
	return report("write", write(fd, pid, strlen(pid)));
}

static int do_clone3_cgroup(char **a)
{
	struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
	int cg = open(a[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC), st;
	long pid;

	if (cg < 0)
		return setup("open cgroup");
	args.cgroup = (__u64)cg;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0) {
		char line[256] = "";
		FILE *f = fopen("/proc/self/cgroup", "r");

		if (f && fgets(line, sizeof(line), f))
			fprintf(stderr, "child: %s", line);
		_exit(0);
	}
	if (pid > 0)
		waitpid((pid_t)pid, &st, 0);
	return report("clone3", pid);
}

static int do_socket_proto(char **a)
{
	int type = !strcmp(a[1], "dgram") ? SOCK_DGRAM : SOCK_STREAM;

	return report("socket", socket(AF_INET, type | SOCK_CLOEXEC, atoi(a[0])));
}

static int do_sethostname(char **a)
{
	return report("sethostname", sethostname(a[0], strlen(a[0])));
}

static int do_settime(char **a)
{
	struct timespec now;

	(void)a;
	if (clock_gettime(CLOCK_REALTIME, &now))
		return setup("clock_gettime");
	return report("clock_settime", clock_settime(CLOCK_REALTIME, &now));
}

static int do_sched_fifo(char **a)
{
	struct sched_param sp = { .sched_priority = 1 };

	(void)a;
	return report("sched_setscheduler", sched_setscheduler(0, SCHED_FIFO, &sp));
}

static int do_renice(char **a)
{
	return report("setpriority", setpriority(PRIO_PROCESS, (id_t)pid_arg(a[0]), 19));
}

static int do_prlimit(char **a)
{
	pid_t pid = pid_arg(a[0]);
	struct rlimit cur;

	if (prlimit(pid, RLIMIT_NOFILE, NULL, &cur))
		return report("prlimit(read)", -1);
	return report("prlimit(set)", prlimit(pid, RLIMIT_NOFILE, &cur, NULL));
}

static int do_reboot(char **a)
{
	(void)a;
	return report("reboot", syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
					 LINUX_REBOOT_CMD_CAD_OFF, NULL));
}

/* --- kernel --------------------------------------------------------------------- */

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int do_bpf_prog_load(char **a)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	(void)a;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	attr.license = (uint64_t)(uintptr_t)"GPL";
	return report("bpf(PROG_LOAD)", sys_bpf(BPF_PROG_LOAD, &attr));
}

static int do_bpf_map_create(char **a)
{
	union bpf_attr attr;

	(void)a;
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	return report("bpf(MAP_CREATE)", sys_bpf(BPF_MAP_CREATE, &attr));
}

/* Detaches at most the first link the kernel lists. */
static int do_bpf_link_detach(char **a)
{
	union bpf_attr attr;
	unsigned int id;
	long fd;

	(void)a;
	memset(&attr, 0, sizeof(attr));
	attr.start_id = 0;
	if (sys_bpf(BPF_LINK_GET_NEXT_ID, &attr))
		return report("bpf(LINK_GET_NEXT_ID)", -1);
	id = attr.next_id;
	memset(&attr, 0, sizeof(attr));
	attr.link_id = id;
	fd = sys_bpf(BPF_LINK_GET_FD_BY_ID, &attr);
	if (fd < 0)
		return report("bpf(LINK_GET_FD_BY_ID)", -1);
	fprintf(stderr, "sbx-escape: detaching link id %u\n", id);
	memset(&attr, 0, sizeof(attr));
	attr.link_detach.link_fd = (unsigned int)fd;
	return report("bpf(LINK_DETACH)", sys_bpf(BPF_LINK_DETACH, &attr));
}

static int do_bpf_obj_get(char **a)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (uint64_t)(uintptr_t)a[0];
	return report("bpf(OBJ_GET)", sys_bpf(BPF_OBJ_GET, &attr));
}

static int do_perf_open(char **a)
{
	struct perf_event_attr attr;

	(void)a;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return report("perf_event_open", syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

static int do_init_module(char **a)
{
	static char image[64];

	(void)a;
	return report("init_module", syscall(SYS_init_module, image, sizeof(image), ""));
}

static int do_finit_module(char **a)
{
	int fd = open(a[0], O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return setup("open");
	return report("finit_module", syscall(SYS_finit_module, fd, "", 0));
}

static int do_kexec_load(char **a)
{
	(void)a;
	return report("kexec_load", syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0UL));
}

static int do_kexec_file_load(char **a)
{
	int fd = open(a[0], O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return setup("open");
	return report("kexec_file_load", syscall(SYS_kexec_file_load, fd, -1, 1UL, "",
						 (unsigned long)KEXEC_FILE_NO_INITRAMFS));
}

/* Unknown binary format: the kernel tries request_module("binfmt-7f7f") on our behalf. */
static int do_binfmt(char **a)
{
	static const unsigned char image[16] = { 0x01, 0x02, 0x7f, 0x7f };
	int fd = open(a[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755), p[2], e = 0;
	pid_t child;

	if (fd < 0)
		return setup("open");
	if (write(fd, image, sizeof(image)) != sizeof(image) || close(fd))
		return setup("write");
	if (chmod(a[0], 0755))
		return setup("chmod");
	if (pipe2(p, O_CLOEXEC))
		return setup("pipe");
	child = fork();
	if (child < 0)
		return setup("fork");
	if (child == 0) {
		char *argv[] = { a[0], NULL };

		execve(a[0], argv, environ);
		e = errno;
		_exit(write(p[1], &e, sizeof(e)) == sizeof(e) ? 0 : 1);
	}
	close(p[1]);
	if (read(p[0], &e, sizeof(e)) != sizeof(e))
		e = 0;		/* the exec succeeded: the pipe closed on exec */
	waitpid(child, NULL, 0);
	errno = e;
	return report("execve", e ? -1 : 0);
}

struct tiocsti_result { int setup_errno; int err; };

/* In a new session with the pty slave as controlling tty: inject "x". */
static void tiocsti_child(int slave, int out)
{
	struct tiocsti_result r = { 0, 0 };

	if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0))
		r.setup_errno = errno;
	else if (ioctl(slave, TIOCSTI, "x"))
		r.err = errno;
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	pause();	/* stays the session leader until the parent has looked */
	_exit(0);
}

static int do_tiocsti(char **a)
{
	struct tiocsti_result r;
	int master, slave, p[2];
	struct pollfd pfd;
	pid_t child;
	char c;

	(void)a;
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0)
		return setup("posix_openpt");
	if (grantpt(master) || unlockpt(master))
		return setup("unlockpt");
	slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return setup("open-slave");
	if (pipe2(p, O_CLOEXEC))
		return setup("pipe");
	child = fork();
	if (child < 0)
		return setup("fork");
	if (child == 0)
		tiocsti_child(slave, p[1]);
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r.setup_errno = EPIPE;
	pfd = (struct pollfd){ .fd = master, .events = POLLIN };
	if (!r.setup_errno && poll(&pfd, 1, 200) == 1 && (pfd.revents & POLLIN) && read(master, &c, 1) == 1) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return answer("LEAKED", 1);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	errno = r.setup_errno;
	if (r.setup_errno)
		return setup("setsid/TIOCSCTTY");
	errno = r.err;
	return report("ioctl(TIOCSTI)", r.err ? -1 : 0);
}

static int do_dev_mem(char **a)
{
	(void)a;
	return opened("open", open("/dev/mem", O_RDONLY | O_CLOEXEC), O_RDONLY);
}

static int do_write_file(char **a)
{
	int fd = open(a[0], O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd < 0)
		return report("open", -1);
	return report("write", write(fd, a[1], strlen(a[1])));
}

static int do_setxattr(char **a)
{
	return report("setxattr", setxattr(a[0], a[1], a[2], strlen(a[2]), 0));
}

/* --- file system ---------------------------------------------------------------- */

static int do_bind_mount(char **a)
{
	return report("mount", mount(a[0], a[1], NULL, MS_BIND, NULL));
}

static int do_chroot_escape(char **a)
{
	char c;
	int fd;

	if (chdir(a[0]))
		return setup("chdir");
	if (mkdir("sub", 0755) && errno != EEXIST)
		return setup("mkdir");
	if (chroot("sub"))
		return report("chroot(sub)", -1);
	for (int i = 0; i < 64; i++)
		if (chdir(".."))
			return report("chdir(..)", -1);
	if (chroot("."))
		return report("chroot(.)", -1);
	fd = open(a[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return report("open", -1);
	return report("read", read(fd, &c, 1));
}

static int do_open_by_handle(char **a)
{
	struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);
	int mount_id, mfd;

	if (!h)
		return setup("malloc");
	h->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, a[0], h, &mount_id, 0))
		return report("name_to_handle_at", -1);
	/* Any directory on the file's mount will do as the mount descriptor. */
	mfd = open(a[1] ? a[1] : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return setup("open mount dir");
	return opened("open_by_handle_at", open_by_handle_at(mfd, h, O_RDONLY | O_CLOEXEC), O_RDONLY);
}

static int do_opath_reopen(char **a)
{
	int flags = mode_arg(a[1]), fd = open(a[0], O_PATH | O_CLOEXEC);
	char path[64];

	if (fd < 0)
		return report("open(O_PATH)", -1);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return opened("reopen", open(path, flags | O_CLOEXEC), flags);
}

static int do_memfd_exec(char **a)
{
	int mfd = memfd_create("x", 0), fd = open(a[0], O_RDONLY | O_CLOEXEC);
	char buf[65536];
	ssize_t n;

	if (mfd < 0)
		return setup("memfd_create");
	if (fd < 0)
		return setup("open");
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(mfd, buf, (size_t)n) != n)
			return setup("write");
	if (n < 0)
		return setup("read");
	close(fd);
	syscall(SYS_execveat, mfd, "", a, environ, AT_EMPTY_PATH);
	return report("execveat", -1);
}

/* --- symlink race ---------------------------------------------------------------- */

struct race {
	const char *link, *target[2];
	char tmp[4096];
	int stop;
	unsigned long swaps, swap_errors;
};

static int point_link(const char *tmp, const char *link, const char *target)
{
	unlink(tmp);
	if (symlink(target, tmp))
		return -1;
	return rename(tmp, link);
}

static void *race_swapper(void *arg)
{
	struct race *r = arg;

	for (unsigned long i = 0; !__atomic_load_n(&r->stop, __ATOMIC_RELAXED); i++) {
		if (point_link(r->tmp, r->link, r->target[i & 1]))
			r->swap_errors++;
		else
			r->swaps++;
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int do_symlink_race(char **a)
{
	struct race r = { .link = a[0], .target = { a[1], a[2] } };
	unsigned long ok = 0, eacces = 0, other = 0;
	double end = now_s() + (double)num(a[3], 10);
	int leaked = 0, last_other = 0;
	pthread_t th;

	snprintf(r.tmp, sizeof(r.tmp), "%s.swap", a[0]);
	if (point_link(r.tmp, r.link, r.target[0]))
		return setup("symlink");
	if ((errno = pthread_create(&th, NULL, race_swapper, &r)))
		return setup("pthread_create");
	while (!leaked && now_s() < end) {
		char buf[65];
		int fd = open(r.link, O_RDONLY | O_CLOEXEC);
		ssize_t n;

		if (fd < 0) {
			if (errno == EACCES)
				eacces++;
			else
				other++, last_other = errno;
			continue;
		}
		ok++;
		n = read(fd, buf, 64);
		close(fd);
		if (n > 0 && memmem(buf, (size_t)n, "SECRET", 6))
			leaked = 1;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	unlink(r.tmp);
	fprintf(stderr, "sbx-escape: opens ok %lu, EACCES %lu, other %lu; swaps %lu, failed %lu\n",
		ok, eacces, other, r.swaps, r.swap_errors);
	if (leaked)
		return answer("LEAKED", 1);
	if (eacces)
		return answer("EACCES", 0);
	if (last_other)
		return answer(errname(last_other), 0);
	return answer("INTACT", 0);
}

/* --- io_uring --------------------------------------------------------------------- */

/* Submit one SQE on a ring set up with raw system calls; its CQE result in *res. */
static int uring_one(const struct io_uring_sqe *sqe, int *res)
{
	struct io_uring_params p;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_mask, idx;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqe;
	char *sq, *cq;
	int ring;

	memset(&p, 0, sizeof(p));
	ring = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		return setup("io_uring_setup");
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return setup("mmap");
	sq_tail = (unsigned *)(sq + p.sq_off.tail);
	sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	sq_array = (unsigned *)(sq + p.sq_off.array);
	cq_head = (unsigned *)(cq + p.cq_off.head);
	cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);

	idx = *sq_tail & *sq_mask;
	sqes[idx] = *sqe;
	sq_array[idx] = idx;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return setup("io_uring_enter");
	cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes) +
	      (__atomic_load_n(cq_head, __ATOMIC_ACQUIRE) & *cq_mask);
	*res = cqe->res;
	return 0;
}

static int do_uring_connect(char **a)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons((uint16_t)num(a[1], 10)) };
	struct io_uring_sqe sqe;
	int fd, res;

	if (inet_pton(AF_INET, a[0], &in.sin_addr) != 1)
		usage_exit("bad IPv4 address", a[0]);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return setup("socket");
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_CONNECT;
	sqe.fd = fd;
	sqe.addr = (uint64_t)(uintptr_t)&in;
	sqe.off = sizeof(in);
	if (uring_one(&sqe, &res))
		return 2;
	return report_res("IORING_OP_CONNECT", res);
}

static int do_uring_unlink(char **a)
{
	struct io_uring_sqe sqe;
	int res;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_UNLINKAT;
	sqe.fd = AT_FDCWD;
	sqe.addr = (uint64_t)(uintptr_t)a[0];
	sqe.unlink_flags = 0;
	if (uring_one(&sqe, &res))
		return 2;
	return report_res("IORING_OP_UNLINKAT", res);
}

static int do_uring_open(char **a)
{
	int flags = mode_arg(a[1]), res;
	struct io_uring_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_OPENAT;
	sqe.fd = AT_FDCWD;
	sqe.addr = (uint64_t)(uintptr_t)a[0];
	sqe.open_flags = (unsigned)(flags | O_CLOEXEC);
	if (uring_one(&sqe, &res))
		return 2;
	if (res < 0)
		return report_res("IORING_OP_OPENAT", res);
	return opened("IORING_OP_OPENAT", res, flags);
}

/* --- descriptors ------------------------------------------------------------------ */

/* One operation on @fd: read write splice sendfile ftruncate. */
static int fd_op(int fd, const char *op)
{
	char c;

	if (!strcmp(op, "read"))
		return report("read", read(fd, &c, 1));
	if (!strcmp(op, "write"))
		return report("write", write(fd, "x", 1));
	if (!strcmp(op, "ftruncate"))
		return report("ftruncate", ftruncate(fd, 0));
	if (!strcmp(op, "splice")) {
		int p[2];

		if (pipe2(p, O_CLOEXEC))
			return setup("pipe");
		return report("splice", splice(fd, NULL, p[1], NULL, 1, 0));
	}
	if (!strcmp(op, "sendfile")) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (null < 0)
			return setup("open(/dev/null)");
		return report("sendfile", sendfile(null, fd, NULL, 1));
	}
	usage_exit("bad descriptor operation", op);
	return 2;
}

static int do_scm_recv(char **a)
{
	struct sockaddr_un un;
	char data;
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } c;
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
	struct cmsghdr *cm;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), fd;

	if (s < 0)
		return setup("socket");
	if (connect(s, (struct sockaddr *)&un, unix_addr(a[0], &un)))
		return setup("connect");
	memset(&c, 0, sizeof(c));
	if (recvmsg(s, &msg, MSG_CMSG_CLOEXEC) < 0)
		return report("recvmsg", -1);
	cm = CMSG_FIRSTHDR(&msg);
	if ((msg.msg_flags & MSG_CTRUNC) || !cm || cm->cmsg_level != SOL_SOCKET ||
	    cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(sizeof(int)))
		return answer("CTRUNC", 0);
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd_op(fd, a[1]);
}

static int do_fd_read(char **a) { return fd_op((int)num(a[0], 10), "read"); }
static int do_fd_write(char **a) { return fd_op((int)num(a[0], 10), "write"); }
static int do_fd_ftruncate(char **a) { return fd_op((int)num(a[0], 10), "ftruncate"); }
static int do_fd_sendfile(char **a) { return fd_op((int)num(a[0], 10), "sendfile"); }

/* --- dispatch ------------------------------------------------------------------- */

#define AT_LEAST 100	/* argc >= AT_LEAST: at least argc - AT_LEAST arguments */

static const struct cmd {
	const char *name;
	int argc;
	int (*fn)(char **args);
} cmds[] = {
	{ "victim", 1, do_victim },
	{ "scm-serve", 3, do_scm_serve },
	{ "ptrace-attach", 1, do_ptrace_attach },
	{ "ptrace-seize", 1, do_ptrace_seize },
	{ "traceme", 0, do_traceme },
	{ "traceme-self", 0, do_traceme_self },
	{ "proc-mem-write", 3, do_proc_mem_write },
	{ "proc-mem-read", 2, do_proc_mem_read },
	{ "vm-writev", 3, do_vm_writev },
	{ "pidfd-getfd", 2, do_pidfd_getfd },
	{ "kill", 2, do_kill },
	{ "pidfd-kill", 2, do_pidfd_kill },
	{ "sigio", 2, do_sigio },
	{ "fiosetown", 1, do_fiosetown },
	{ "bpf-prog-load", 0, do_bpf_prog_load },
	{ "bpf-map-create", 0, do_bpf_map_create },
	{ "bpf-link-detach", 0, do_bpf_link_detach },
	{ "bpf-obj-get", 1, do_bpf_obj_get },
	{ "perf-open", 0, do_perf_open },
	{ "init-module", 0, do_init_module },
	{ "finit-module", 1, do_finit_module },
	{ "kexec-load", 0, do_kexec_load },
	{ "kexec-file-load", 1, do_kexec_file_load },
	{ "binfmt", 1, do_binfmt },
	{ "tiocsti", 0, do_tiocsti },
	{ "setns-pidfd", 2, do_setns_pidfd },
	{ "setns-proc", 2, do_setns_proc },
	{ "unshare", 1, do_unshare },
	{ "bind-mount", 2, do_bind_mount },
	{ "chroot-escape", 2, do_chroot_escape },
	{ "cgroup-move", 1, do_cgroup_move },
	{ "clone3-cgroup", 1, do_clone3_cgroup },
	{ "socket-proto", 2, do_socket_proto },
	{ "open-by-handle", AT_LEAST + 1, do_open_by_handle },
	{ "opath-reopen", 2, do_opath_reopen },
	{ "memfd-exec", AT_LEAST + 1, do_memfd_exec },
	{ "uring-connect", 2, do_uring_connect },
	{ "uring-unlink", 1, do_uring_unlink },
	{ "uring-open", 2, do_uring_open },
	{ "scm-recv", 2, do_scm_recv },
	{ "fd-write", 1, do_fd_write },
	{ "fd-read", 1, do_fd_read },
	{ "fd-ftruncate", 1, do_fd_ftruncate },
	{ "fd-sendfile", 1, do_fd_sendfile },
	{ "symlink-race", 4, do_symlink_race },
	{ "setxattr", 3, do_setxattr },
	{ "sethostname", 1, do_sethostname },
	{ "settime", 0, do_settime },
	{ "sched-fifo", 0, do_sched_fifo },
	{ "renice", 1, do_renice },
	{ "prlimit", 1, do_prlimit },
	{ "reboot", 0, do_reboot },
	{ "write-file", 2, do_write_file },
	{ "dev-mem", 0, do_dev_mem },
};

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";
	int nargs = argc - 2;

	setvbuf(stdout, NULL, _IOLBF, 0);	/* the line is out before an exec or a kill */
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const struct cmd *c = &cmds[i];

		if (strcmp(op, c->name))
			continue;
		if (c->argc >= AT_LEAST ? nargs < c->argc - AT_LEAST : nargs != c->argc)
			usage_exit("wrong number of arguments for", op);
		return c->fn(argv + 2);
	}
	usage_exit("unknown subcommand", op);
	return 2;
}
