/* SPDX-License-Identifier: GPL-2.0 */
/* fs_verdict.h — what fs_match() says about one path (fs_match.h), on its own so that sandbox.h can keep one in scratch memory. */
#ifndef SBX_FS_VERDICT_H
#define SBX_FS_VERDICT_H

struct fs_verdict {
	__u32 read_deny;	/* 1: reading is denied */
	__u32 read_rule;
	__u32 write_deny;	/* 1: writing is denied */
	__u32 write_rule;
	__u32 guard;		/* a rule is at or beneath this very path */
	__u32 guard_rule;
	__u32 guard_mandatory;	/* this very path leads into a mandatory pattern */
	__u32 unix_allow;	/* allowUnixSockets covers this path (at it or above) */
};

#endif /* SBX_FS_VERDICT_H */
