/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mappurge.h — delete every entry of a BPF map whose key holds one id (a
 * policy id, a cgroup id), or that another map no longer has: how a
 * detached sandbox's rules and counters leave the shared maps. Library
 * code: nothing prints; 0 or -errno.
 */
#ifndef SBX_MAPPURGE_H
#define SBX_MAPPURGE_H

#include <stddef.h>

/* Most bytes a key may have. */
#define MAP_PURGE_KEY_MAX	64

/*
 * Delete every key of the map @fd (keys of @key_size bytes) whose @id_len
 * bytes at @off are @id. Hash maps are read PURGE_BATCH keys per system
 * call; other types (an LPM trie) key by key. A key that went meanwhile is
 * not an error; every other key is still tried after a failed delete, and
 * the first error is returned.
 */
int map_purge(int fd, size_t key_size, size_t off, const void *id, size_t id_len);

/*
 * Delete every key of the map @fd (keys of @key_size bytes) that the map
 * @keep, keyed the same way, has no entry for: what is left of entries
 * removed from @keep (a sandbox's counters a late event made again after
 * its removal). Errors as map_purge's; -EINVAL when the keys differ.
 */
int map_prune(int fd, size_t key_size, int keep);

#endif
