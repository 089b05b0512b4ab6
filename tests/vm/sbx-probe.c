// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbx-probe — performs one system call for a test and reports exactly what
 * the kernel answered, so tests assert on errno names rather than on the
 * wording of some tool's error message.
 *
 *   sbx-probe open PATH [r|w|rw|a|creat|rwcreat|wcreat|trunc|rtrunc|peek|dir]
 *                                   open(2) (then read one byte if readable,
 *                                   but for peek = O_RDONLY and
 *                                   dir = O_RDONLY|O_DIRECTORY);
 *                                   creat = O_CREAT|O_EXCL|O_WRONLY,
 *                                   rwcreat = O_CREAT|O_EXCL|O_RDWR,
 *                                   wcreat = O_CREAT|O_WRONLY (may exist),
 *                                   rtrunc = O_RDONLY|O_TRUNC,
 *                                   rwtrunc = O_RDWR|O_CREAT|O_TRUNC
 *   sbx-probe creat-open NEW PATH   mknod(NEW, S_IFREG), then at once
 *                                   open(PATH, wcreat): PATH's result, or
 *                                   "first-ERRNO" if NEW could not be made
 *   sbx-probe open-truncate FIRST MODE PATH   open(FIRST, MODE) and close
 *                                   it, then at once truncate(PATH, 0):
 *                                   PATH's result, or "first-ERRNO"
 *   sbx-probe openat2 DIR PATH RESOLVE[,RESOLVE…] [r|w]
 *                                   RESOLVE: beneath in_root no_symlinks
 *                                   no_magiclinks no_xdev none
 *   sbx-probe uring-open PATH [r|w|creat]   openat through io_uring
 *   sbx-probe mkdir|rmdir|unlink|truncate|utimes PATH
 *   sbx-probe mknod PATH            a FIFO
 *   sbx-probe rename OLD NEW [exchange|noreplace]
 *   sbx-probe link OLD NEW | symlink TARGET LINK
 *   sbx-probe chmod PATH MODE | chown PATH UID GID
 *   sbx-probe setxattr PATH NAME VALUE | removexattr PATH NAME
 *                                   VALUE acl:MODE: a POSIX ACL equal to MODE
 *   sbx-probe ftruncate FD          on an inherited descriptor
 *   sbx-probe reopen FD [r|w]       open("/proc/self/fd/FD")
 *   sbx-probe open-tree DIR NAME    read DIR/NAME through a detached clone of
 *                                   DIR's mount (open_tree OPEN_TREE_CLONE)
 *   sbx-probe setflags PATH         FS_IOC_GETFLAGS then FS_IOC_SETFLAGS (same flags)
 *   sbx-probe pid                   print own pid (for matching events)
 *   sbx-probe open-loop PATH STOP   open(PATH, O_RDONLY) and close it again and
 *                                   again until the file STOP exists: prints
 *                                   how many opens were refused with EACCES,
 *                                   how many were let go, how many failed
 *                                   otherwise and the first such errno
 *   sbx-probe forks N               fork N children that wait, then end them:
 *                                   OK, or the errno of the first fork that
 *                                   failed (EAGAIN at pids.max)
 *
 * Network (ADDR: IPv4, or IPv6 incl. "::ffff:10.0.0.1", which uses an
 * AF_INET6 socket):
 *   sbx-probe connect ADDR PORT [tcp|udp]   connect(2) (tcp: a refused
 *                                   connection prints ECONNREFUSED)
 *   sbx-probe udp-send ADDR PORT    connected UDP: connect + send
 *   sbx-probe sendto ADDR PORT      unconnected UDP sendto
 *   sbx-probe tfo ADDR PORT         TCP Fast Open: sendto(MSG_FASTOPEN), no connect
 *   sbx-probe bind ADDR PORT [tcp|udp] | listen ADDR PORT
 *   sbx-probe socket raw|packet|ping|vsock|sctp|seqpacket   create one socket
 *                                   (sctp: SOCK_STREAM/IPPROTO_SCTP; seqpacket:
 *                                   SOCK_SEQPACKET/0, which is SCTP too)
 *   sbx-probe sendto-unspec ADDR PORT   IPv4 UDP sendto, sin_family AF_UNSPEC
 *   sbx-probe bind-unspec PORT      IPv4 UDP bind to 0.0.0.0:PORT, AF_UNSPEC
 *   sbx-probe unix-connect PATH [stream|dgram]   "@NAME": abstract
 *   sbx-probe unix-bind PATH        "@NAME": abstract
 *
 * BPF:
 *   sbx-probe bpf-progs [lsm]       how many BPF programs the kernel holds
 *                                   (lsm: of type BPF_PROG_TYPE_LSM only)
 *
 * Prints "OK" or the errno name (e.g. "EACCES"); exit 0 on success, 1 on a
 * refused call, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/io_uring.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
#include <sys/xattr.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/bpf.h>
#include <stddef.h>

static const char *errno_name(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case EEXIST: return "EEXIST";
	case EISDIR: return "EISDIR";
	case ELOOP: return "ELOOP";
	case EXDEV: return "EXDEV";
	case EINVAL: return "EINVAL";
	case ENOTEMPTY: return "ENOTEMPTY";
	case EBADF: return "EBADF";
	case ENOSYS: return "ENOSYS";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOTTY: return "ENOTTY";
	case ENXIO: return "ENXIO";
	case ENODEV: return "ENODEV";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ENETUNREACH: return "ENETUNREACH";
	case EADDRINUSE: return "EADDRINUSE";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case ESOCKTNOSUPPORT: return "ESOCKTNOSUPPORT";
	case EINPROGRESS: return "EINPROGRESS";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EAGAIN: return "EAGAIN";
	case EROFS: return "EROFS";
	}
	return "EOTHER";
}

static int report(int rc)
{
	if (rc < 0) {
		int e = errno;

		printf("%s\n", errno_name(e));
		fprintf(stderr, "sbx-probe: %s\n", strerror(e));
		return 1;
	}
	printf("OK\n");
	return 0;
}

static int open_flags(const char *mode)
{
	static const struct { const char *name; int flags; } modes[] = {
		{ "r", O_RDONLY }, { "w", O_WRONLY }, { "rw", O_RDWR },
		{ "a", O_WRONLY | O_APPEND }, { "creat", O_WRONLY | O_CREAT | O_EXCL },
		{ "rwcreat", O_RDWR | O_CREAT | O_EXCL }, { "wcreat", O_WRONLY | O_CREAT },
		{ "trunc", O_WRONLY | O_TRUNC }, { "rtrunc", O_RDONLY | O_TRUNC },
		{ "rwtrunc", O_RDWR | O_CREAT | O_TRUNC },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(mode, modes[i].name))
			return modes[i].flags;
	fprintf(stderr, "sbx-probe: unknown open mode '%s'\n", mode);
	exit(2);
}

/* After a successful open: read a byte when readable, to prove access. */
static int opened(int fd, int flags)
{
	char c;

	if (fd < 0)
		return report(-1);
	if ((flags & O_ACCMODE) != O_WRONLY && read(fd, &c, 1) < 0) {
		close(fd);
		return report(-1);
	}
	close(fd);
	return report(0);
}

/*
 * "peek" (O_RDONLY) and "dir" (O_RDONLY|O_DIRECTORY) read nothing: the
 * open's verdict alone, where a read would be judged again on use.
 */
static int do_open(const char *path, const char *mode)
{
	bool dir = !strcmp(mode, "dir"), peek = dir || !strcmp(mode, "peek");
	int flags = dir ? O_RDONLY | O_DIRECTORY : peek ? O_RDONLY : open_flags(mode);
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (!peek)
		return opened(fd, flags);
	if (fd >= 0)
		close(fd);
	return report(fd);
}

/*
 * Opens as fast as one task can make them, for a test that changes the
 * task's cgroup meanwhile (tests/e2e/20-outside-cache.sh, "moved"). STOP is
 * looked for every 256 opens: a stat is not a hook the loop races.
 */
static int do_open_loop(const char *path, const char *stop)
{
	unsigned long refused = 0, allowed = 0, other = 0;
	int first = 0;
	struct stat st;

	for (unsigned long n = 0; (n & 255) || stat(stop, &st) < 0; n++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			close(fd);
			allowed++;
		} else if (errno == EACCES) {
			refused++;
		} else if (!other++) {
			first = errno;
		}
	}
	printf("%lu %lu %lu %s\n", refused, allowed, other, other ? errno_name(first) : "-");
	return other ? 1 : 0;
}

/*
 * A regular file made by mknod(2), whose allow no open has used, then a
 * creating open of another file: judged on its own path.
 */
static int do_creat_open(const char *first, const char *second)
{
	if (mknod(first, S_IFREG | 0644, 0) < 0) {
		printf("first-%s\n", errno_name(errno));
		return 1;
	}
	return opened(open(second, O_WRONLY | O_CREAT | O_CLOEXEC, 0644), O_WRONLY);
}

/*
 * An open that leaves its task a note for its truncation (bpf/fs.bpf.c
 * open_told), then at once a truncate(2) of another file: judged on its
 * own path, whatever the note says.
 */
static int do_open_truncate(const char *first, const char *mode, const char *path)
{
	int fd = open(first, open_flags(mode) | O_CLOEXEC, 0644);

	if (fd < 0) {
		printf("first-%s\n", errno_name(errno));
		return 1;
	}
	close(fd);
	return report(truncate(path, 0));
}

static int do_openat2(const char *dir, const char *path, const char *resolve, const char *mode)
{
	struct open_how how = { .flags = (unsigned)open_flags(mode) | O_CLOEXEC };
	char buf[256], *tok, *save;
	int dfd;

	snprintf(buf, sizeof(buf), "%s", resolve);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "beneath")) how.resolve |= RESOLVE_BENEATH;
		else if (!strcmp(tok, "in_root")) how.resolve |= RESOLVE_IN_ROOT;
		else if (!strcmp(tok, "no_symlinks")) how.resolve |= RESOLVE_NO_SYMLINKS;
		else if (!strcmp(tok, "no_magiclinks")) how.resolve |= RESOLVE_NO_MAGICLINKS;
		else if (!strcmp(tok, "no_xdev")) how.resolve |= RESOLVE_NO_XDEV;
		else if (strcmp(tok, "none")) { fprintf(stderr, "bad resolve flag %s\n", tok); return 2; }
	}
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return report(-1);
	return opened((int)syscall(SYS_openat2, dfd, path, &how, sizeof(how)), (int)how.flags);
}

/* One IORING_OP_OPENAT through a ring set up with raw system calls (no liburing). */
static int do_uring_open(const char *path, const char *mode)
{
	struct io_uring_params p = {};
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqe;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_mask;
	int flags = open_flags(mode), ring, res;
	char *sq, *cq;

	ring = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		return report(-1);
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return report(-1);
	sq_tail = (unsigned *)(sq + p.sq_off.tail);
	sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	sq_array = (unsigned *)(sq + p.sq_off.array);
	cq_head = (unsigned *)(cq + p.cq_off.head);
	cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);

	unsigned idx = *sq_tail & *sq_mask;
	memset(&sqes[idx], 0, sizeof(sqes[idx]));
	sqes[idx].opcode = IORING_OP_OPENAT;
	sqes[idx].fd = AT_FDCWD;
	sqes[idx].addr = (uint64_t)(uintptr_t)path;
	sqes[idx].open_flags = (unsigned)flags;
	sqes[idx].len = 0644;
	sq_array[idx] = idx;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return report(-1);
	cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes) +
	      (__atomic_load_n(cq_head, __ATOMIC_ACQUIRE) & *cq_mask);
	res = cqe->res;
	if (res < 0) {
		errno = -res;
		return report(-1);
	}
	return opened(res, flags);
}

static int do_open_tree(const char *dir, const char *name)
{
	int tree = (int)syscall(SYS_open_tree, AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);

	if (tree < 0)
		return report(-1);
	return opened(openat(tree, name, O_RDONLY | O_CLOEXEC), O_RDONLY);
}

static int do_setflags(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), flags = 0, rc;

	if (fd < 0)
		return report(-1);
	rc = ioctl(fd, FS_IOC_GETFLAGS, &flags);
	if (!rc)
		rc = ioctl(fd, FS_IOC_SETFLAGS, &flags);
	return report(rc);
}

/*
 * VALUE "acl:MODE" (octal) is a POSIX access ACL equal to MODE, in the
 * kernel's xattr format: tmpfs takes system.posix_acl_access on every
 * kernel (user.* only from 6.6), and, unlike trusted.*, it needs no
 * CAP_SYS_ADMIN, which a sandbox never has.
 */
static int do_setxattr(const char *path, const char *name, const char *value)
{
	struct { uint16_t tag, perm; uint32_t id; } __attribute__((packed)) e[3];
	unsigned char acl[4 + sizeof(e)];
	unsigned long mode;
	uint32_t version = 2;

	if (strncmp(value, "acl:", 4))
		return report(setxattr(path, name, value, strlen(value), 0));
	mode = strtoul(value + 4, NULL, 8);
	e[0] = (typeof(e[0])){ 0x01, (mode >> 6) & 7, 0xffffffff };	/* ACL_USER_OBJ */
	e[1] = (typeof(e[0])){ 0x04, (mode >> 3) & 7, 0xffffffff };	/* ACL_GROUP_OBJ */
	e[2] = (typeof(e[0])){ 0x20, mode & 7, 0xffffffff };		/* ACL_OTHER */
	memcpy(acl, &version, 4);
	memcpy(acl + 4, e, sizeof(e));
	return report(setxattr(path, name, acl, sizeof(acl), 0));
}

static int do_rename(const char *from, const char *to, const char *how)
{
	unsigned flags = 0;

	if (how && !strcmp(how, "exchange"))
		flags = RENAME_EXCHANGE;
	else if (how && !strcmp(how, "noreplace"))
		flags = RENAME_NOREPLACE;
	return report(renameat2(AT_FDCWD, from, AT_FDCWD, to, flags));
}

static int do_utimes(const char *path)
{
	struct timespec ts[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };

	return report(utimensat(AT_FDCWD, path, ts, 0));
}

static int do_reopen(const char *fd, const char *mode)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%s", fd);
	return do_open(path, mode);
}

/* ADDR PORT → a socket address; its family in *family. */
static socklen_t inet_target(const char *addr, const char *port, struct sockaddr_storage *ss, int *family)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = *family = AF_INET;
		in->sin_port = htons((uint16_t)atoi(port));
		return sizeof(*in);
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = *family = AF_INET6;
		in6->sin6_port = htons((uint16_t)atoi(port));
		return sizeof(*in6);
	}
	fprintf(stderr, "bad address %s\n", addr);
	exit(2);
}

static int do_inet(const char *op, const char *addr, const char *port, const char *proto)
{
	struct sockaddr_storage ss;
	int family, fd, udp = proto && !strcmp(proto, "udp");
	socklen_t len = inet_target(addr, port, &ss, &family);

	if (!strcmp(op, "udp-send") || !strcmp(op, "sendto"))
		udp = 1;
	fd = socket(family, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	if (fd < 0)
		return report(-1);
	if (!strcmp(op, "connect"))
		return report(connect(fd, (struct sockaddr *)&ss, len));
	if (!strcmp(op, "udp-send")) {
		if (connect(fd, (struct sockaddr *)&ss, len))
			return report(-1);
		return report(send(fd, "x", 1, 0) == 1 ? 0 : -1);
	}
	if (!strcmp(op, "sendto") || !strcmp(op, "tfo"))
		return report(sendto(fd, "x", 1, udp ? 0 : MSG_FASTOPEN, (struct sockaddr *)&ss, len) == 1 ? 0 : -1);
	if (!strcmp(op, "bind"))
		return report(bind(fd, (struct sockaddr *)&ss, len));
	if (bind(fd, (struct sockaddr *)&ss, len))	/* listen */
		return report(-1);
	return report(listen(fd, 1));
}

static int do_socket(const char *kind)
{
	if (!strcmp(kind, "raw"))
		return report(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	if (!strcmp(kind, "packet"))
		return report(socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)));
	if (!strcmp(kind, "ping"))
		return report(socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
	if (!strcmp(kind, "sctp"))
		return report(socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP));
	if (!strcmp(kind, "seqpacket"))
		return report(socket(AF_INET, SOCK_SEQPACKET, 0));
	if (!strcmp(kind, "vsock"))
		return report(socket(40 /* AF_VSOCK */, SOCK_STREAM, 0));
	fprintf(stderr, "bad socket kind %s\n", kind);
	return 2;
}

/* The kernel takes AF_UNSPEC as AF_INET for IPv4 UDP sends and binds. */
static int do_unspec(const char *op, const char *addr, const char *port)
{
	struct sockaddr_in in = { .sin_family = AF_UNSPEC, .sin_port = htons((uint16_t)atoi(port)) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		return report(-1);
	if (!strcmp(op, "bind-unspec"))
		return report(bind(fd, (struct sockaddr *)&in, sizeof(in)));
	if (inet_pton(AF_INET, addr, &in.sin_addr) != 1)
		return 2;
	return report(sendto(fd, "x", 1, 0, (struct sockaddr *)&in, sizeof(in)) == 1 ? 0 : -1);
}

/* "@NAME" is abstract. */
static socklen_t unix_target(const char *path, struct sockaddr_un *un)
{
	size_t n = strlen(path);

	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	if (n >= sizeof(un->sun_path))
		exit(2);
	memcpy(un->sun_path, path, n);
	if (path[0] == '@')
		un->sun_path[0] = '\0';
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] != '@'));
}

static int do_unix(const char *op, const char *path, const char *type)
{
	struct sockaddr_un un;
	socklen_t len = unix_target(path, &un);
	int dgram = type && !strcmp(type, "dgram");
	int fd = socket(AF_UNIX, dgram ? SOCK_DGRAM : SOCK_STREAM, 0);

	if (fd < 0)
		return report(-1);
	if (!strcmp(op, "unix-bind"))
		return report(bind(fd, (struct sockaddr *)&un, len));
	if (dgram)
		return report(sendto(fd, "x", 1, 0, (struct sockaddr *)&un, len) == 1 ? 0 : -1);
	return report(connect(fd, (struct sockaddr *)&un, len));
}

/* Fork @n children that pause; the first failure is the answer. All are gone on return. */
static int do_forks(const char *n_arg)
{
	int n = atoi(n_arg), made = 0, err = 0;
	pid_t kids[4096];

	if (n < 1 || n > 4096)
		return 2;
	for (; made < n; made++) {
		pid_t p = fork();

		if (p < 0) {
			err = errno;
			break;
		}
		if (p == 0) {
			pause();
			_exit(0);
		}
		kids[made] = p;
	}
	for (int i = 0; i < made; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < made; i++)
		waitpid(kids[i], NULL, 0);
	errno = err;
	return report(err ? -1 : 0);
}

/* How many BPF programs the kernel holds (BPF_PROG_GET_NEXT_ID): loading any shows here. */
/* Is program @id of @type? -1 with errno set when it cannot be asked (gone: ENOENT). */
static int prog_is(unsigned int id, unsigned int type)
{
	struct bpf_prog_info info;
	union bpf_attr attr;
	int fd, ok;

	memset(&attr, 0, sizeof(attr));
	attr.prog_id = id;
	fd = syscall(SYS_bpf, BPF_PROG_GET_FD_BY_ID, &attr, sizeof(attr));
	if (fd < 0)
		return -1;
	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uintptr_t)&info;
	ok = syscall(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr));
	close(fd);
	return ok ? -1 : info.type == type;
}

static int do_bpf_progs(bool lsm_only)
{
	union bpf_attr attr;
	unsigned int n = 0, id = 0;
	int is;

	for (;;) {
		memset(&attr, 0, sizeof(attr));
		attr.start_id = id;
		if (syscall(SYS_bpf, BPF_PROG_GET_NEXT_ID, &attr, sizeof(attr)))
			break;
		id = attr.next_id;
		is = lsm_only ? prog_is(id, BPF_PROG_TYPE_LSM) : 1;
		if (is < 0 && errno != ENOENT)	/* one that went in between counts as gone */
			return report(-1);
		n += is > 0;
	}
	if (errno != ENOENT)
		return report(-1);
	printf("%u\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";
	const char *a = argc > 2 ? argv[2] : NULL, *b = argc > 3 ? argv[3] : NULL;
	const char *c = argc > 4 ? argv[4] : NULL, *d = argc > 5 ? argv[5] : NULL;

	if (!strcmp(op, "pid") && argc == 2) {
		printf("%d\n", (int)getpid());
		return 0;
	}
	if (!strcmp(op, "bpf-progs") && argc == 2)
		return do_bpf_progs(false);
	if (!strcmp(op, "bpf-progs") && argc == 3 && !strcmp(a, "lsm"))
		return do_bpf_progs(true);
	if (!a)
		goto usage;
	if (!strcmp(op, "open"))
		return do_open(a, b ? b : "r");
	if (!strcmp(op, "creat-open") && b)
		return do_creat_open(a, b);
	if (!strcmp(op, "open-loop") && b)
		return do_open_loop(a, b);
	if (!strcmp(op, "open-truncate") && c)
		return do_open_truncate(a, b, c);
	if (!strcmp(op, "uring-open"))
		return do_uring_open(a, b ? b : "r");
	if (!strcmp(op, "mkdir"))
		return report(mkdir(a, 0755));
	if (!strcmp(op, "rmdir"))
		return report(rmdir(a));
	if (!strcmp(op, "unlink"))
		return report(unlink(a));
	if (!strcmp(op, "truncate"))
		return report(truncate(a, 0));
	if (!strcmp(op, "utimes"))
		return do_utimes(a);
	if (!strcmp(op, "mknod"))
		return report(mknod(a, S_IFIFO | 0644, 0));
	if (!strcmp(op, "setflags"))
		return do_setflags(a);
	if (!strcmp(op, "ftruncate"))
		return report(ftruncate(atoi(a), 0));
	if (!strcmp(op, "reopen"))
		return do_reopen(a, b ? b : "r");
	if (!strcmp(op, "socket"))
		return do_socket(a);
	if (!strcmp(op, "forks"))
		return do_forks(a);
	if (!strcmp(op, "bind-unspec"))
		return do_unspec(op, NULL, a);
	if (!strcmp(op, "unix-connect") || !strcmp(op, "unix-bind"))
		return do_unix(op, a, b);
	if (!b)
		goto usage;
	if (!strcmp(op, "rename"))
		return do_rename(a, b, c);
	if (!strcmp(op, "open-tree"))
		return do_open_tree(a, b);
	if (!strcmp(op, "link"))
		return report(link(a, b));
	if (!strcmp(op, "symlink"))
		return report(symlink(a, b));
	if (!strcmp(op, "chmod"))
		return report(chmod(a, (mode_t)strtoul(b, NULL, 8)));
	if (!strcmp(op, "removexattr"))
		return report(removexattr(a, b));
	if (!strcmp(op, "sendto-unspec"))
		return do_unspec(op, a, b);
	if (!strcmp(op, "connect") || !strcmp(op, "udp-send") || !strcmp(op, "sendto") ||
	    !strcmp(op, "tfo") || !strcmp(op, "bind") || !strcmp(op, "listen"))
		return do_inet(op, a, b, c);
	if (!c)
		goto usage;
	if (!strcmp(op, "openat2"))
		return do_openat2(a, b, c, d ? d : "r");
	if (!strcmp(op, "chown"))
		return report(chown(a, (uid_t)atoi(b), (gid_t)atoi(c)));
	if (!strcmp(op, "setxattr"))
		return do_setxattr(a, b, c);
usage:
	fprintf(stderr, "usage: see the comment at the top of tests/vm/sbx-probe.c\n");
	return 2;
}
