/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* sinktest.h — events and temporary directories shared by the sink tests. */
#ifndef SBX_SINKTEST_H
#define SBX_SINKTEST_H

#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "events.h"
#include "sinks.h"

static inline void fill_event(struct sbx_event *ev, __u32 op, __u32 verdict, const char *path)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = event_mono_now();
	ev->tgid = 42; ev->pid = 43; ev->ppid = 1; ev->uid = 1000;
	ev->op = op;
	ev->verdict = verdict;
	ev->rule_id = 3;
	ev->error = verdict == SBX_VERDICT_AUDIT ? 0 : -13;
	ev->cgroup_id = 77; ev->sandbox_cgroup_id = 76;
	memcpy(ev->comm, "cat", 4);
	ev->path_len = (__u32)strlen(path);
	memcpy(ev->path, path, ev->path_len + 1);
}

/* A network event: @addr is IPv4 ("10.0.0.1") or IPv6 ("2001:db8::1"). */
static inline void fill_net(struct sbx_event *ev, __u32 op, __u32 verdict, const char *addr,
			    __u16 port, __u16 proto)
{
	fill_event(ev, op, verdict, "");
	ev->rule_id = SBX_RULE_NET_DEFAULT;
	ev->flags = SBX_EV_NET;
	ev->family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	ev->sock_type = proto == IPPROTO_TCP ? SOCK_STREAM : SOCK_DGRAM;
	ev->protocol = proto;
	ev->port = port;
	if (ev->family == AF_INET6) {
		inet_pton(AF_INET6, addr, ev->addr);
	} else {
		ev->addr[10] = ev->addr[11] = 0xff;
		inet_pton(AF_INET, addr, ev->addr + 12);
	}
}

/* A fresh directory under /tmp, removed (with what is in it) by rm_tmpdir(). */
static inline char *make_tmpdir(void)
{
	char *d = strdup("/tmp/sbx-sinks-XXXXXX");

	return d && mkdtemp(d) ? d : NULL;
}

static inline int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(p);
}

static inline void rm_tmpdir(char *d)
{
	nftw(d, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	free(d);
}

#endif
