/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fdscan.h — does a sandbox start out holding descriptors its policy never
 * saw opened? If so, their uses must be judged (SBX_SANDBOX_FD_JUDGE,
 * loader__fd_judging_on); if not, reads and writes cost nothing.
 *
 * What counts is what the kernel judges on use (fs.bpf.c file_permission):
 * regular files, directories, block devices and /dev/mem, /dev/kmem,
 * /dev/port. Pipes, sockets, terminals and other devices have no path a
 * policy speaks of.
 *
 * Library code: nothing prints; errors are -errno.
 */
#ifndef SBX_FDSCAN_H
#define SBX_FDSCAN_H

#include <stdbool.h>
#include <sys/stat.h>

/* Is @st a file whose uses the kernel judges? */
bool fdscan_judged(const struct stat *st);
/*
 * Would a program this process executes inherit such a descriptor? Every
 * descriptor without FD_CLOEXEC counts, except 0, 1 and 2 where they are
 * regular files: `run`'s own stdio, which the kernel exempts by inode.
 */
bool fdscan_self_passes_on(void);
/*
 * Does a process of the cgroup directory @path, or of one below it, hold
 * such a descriptor? Call with the cgroup frozen, or a process may fork or
 * open meanwhile. 1, 0, or -errno (a process that exits during the scan is
 * no error).
 */
int fdscan_cgroup(const char *path);

#endif
