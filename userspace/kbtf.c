// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kbtf.c — the running kernel's BTF as a digest, cached per kernel and binary (kbtf.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "kbtf.h"
#include "util.h"

#define KBTF_MAGIC	"SBXKBTF"	/* with its NUL, 8 bytes */
#define KBTF_VERSION	1u
#define BUILD_ID_MAX	32		/* a SHA-1's 20 and room for longer ones */
#define KBTF_MAX_SIZE	(64u << 20)	/* the whole of 6.12's BTF is 5.5 MB; a digest far less */
#define NT_BUILD_ID	3		/* NT_GNU_BUILD_ID, by the name "GNU" */

/* Whose digest a file holds: the kernel's build, this binary's, and the roots it was cut for. */
struct kbtf_key {
	__u8 kernel[BUILD_ID_MAX];
	__u8 self[BUILD_ID_MAX];
	__u8 kernel_len, self_len;
	__u8 zero[2];
	__u32 btf_size;		/* of /sys/kernel/btf/vmlinux: the BTF, were it rewritten after the link */
	__u64 roots;
};

/* The file: this, then nr __u32 kernel IDs (the first 0), then btf_size bytes of raw BTF. */
struct kbtf_head {
	char magic[8];
	__u32 version;
	__u32 nr;
	__u32 btf_size;
	__u32 zero;
	__u64 sum;		/* of all that follows the head (sum_of) */
	struct kbtf_key key;
};

_Static_assert(sizeof(struct kbtf_head) == 112, "no padding in the file's head");

/*
 * A digest's bytes, summed 8 at a time (FNV-1a's constants, a word a
 * step): what a bit flipped or a block lost on the way changes. Not a
 * signature: only the loader's own user can write the file.
 */
static __u64 sum_of(const void *p, size_t len)
{
	const __u8 *b = p;
	__u64 h = 0xcbf29ce484222325ULL, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h ^ len;
}

size_t kbtf__note_build_id(const void *notes, size_t len, __u8 *id, size_t sz)
{
	const __u8 *p = notes, *end = p + len;

	while (end - p >= 12) {
		__u32 namesz, descsz, type;
		const __u8 *name, *desc;

		memcpy(&namesz, p, 4);
		memcpy(&descsz, p + 4, 4);
		memcpy(&type, p + 8, 4);
		name = p + 12;
		if (((namesz + 3ull) & ~3ull) > (size_t)(end - name) ||
		    (size_t)(end - name) - ((namesz + 3ull) & ~3ull) < descsz)
			return 0;	/* cut short: no note to trust */
		desc = name + ((namesz + 3ull) & ~3ull);
		if (type == NT_BUILD_ID && namesz == 4 && !memcmp(name, "GNU", 4) && descsz && descsz <= sz) {
			memcpy(id, desc, descsz);
			return descsz;
		}
		if ((size_t)(end - desc) < ((descsz + 3ull) & ~3ull))
			return 0;
		p = desc + ((descsz + 3ull) & ~3ull);
	}
	return 0;
}

static size_t kernel_build_id(__u8 *id)
{
	__u8 notes[4096];
	ssize_t n;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, notes, sizeof(notes));
	close(fd);
	return n > 0 ? kbtf__note_build_id(notes, (size_t)n, id, BUILD_ID_MAX) : 0;
}

/* dl_iterate_phdr's callback: the running program's (the first object) build ID, then stop. */
static int self_note(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct kbtf_key *key = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum && !key->self_len; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE)
			key->self_len = (__u8)kbtf__note_build_id((const void *)(info->dlpi_addr + ph->p_vaddr),
								   ph->p_memsz, key->self, BUILD_ID_MAX);
	}
	return 1;
}

/* 0, or -ENOKEY (why in @why) where the kernel or this binary has no build ID to key a cache by. */
static int key_find(struct kbtf_key *key, const struct corebtf_root *roots, size_t nr, const char **why)
{
	struct stat st;

	memset(key, 0, sizeof(*key));
	for (size_t i = 0; i < nr; i++) {
		__u64 r[2] = { sum_of(roots[i].name, strlen(roots[i].name)),
			       (__u64)roots[i].kind << 32 | roots[i].flags };

		key->roots = sum_of(r, sizeof(r)) ^ (key->roots * 0x100000001b3ULL);
	}
	key->kernel_len = (__u8)kernel_build_id(key->kernel);
	dl_iterate_phdr(self_note, key);
	key->btf_size = stat("/sys/kernel/btf/vmlinux", &st) ? 0 : (__u32)st.st_size;
	*why = !key->kernel_len ? "the kernel has no build ID in /sys/kernel/notes" :
	       !key->self_len	? "sbx-bpf was linked without a build ID" :
	       !key->btf_size	? "/sys/kernel/btf/vmlinux cannot be read" : NULL;
	return *why ? -ENOKEY : 0;
}

/* The cache file, or NULL where SBX_BTF_CACHE=off asks for none. */
static const char *cache_path(void)
{
	const char *p = getenv("SBX_BTF_CACHE");

	if (p && !strcmp(p, "off"))
		return NULL;
	return p && *p ? p : KBTF_CACHE;
}

/* Only a file the loader's user owns and alone can write is read, in a directory the same holds for. */
static const char *not_private(const struct stat *st)
{
	if (st->st_uid != geteuid())
		return "another user owns it";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "others can write it";
	return NULL;
}

/*
 * The cache file's directory, open, if only the loader's user can write
 * it: its fd, with @base pointing at the file's name in @path; or -errno
 * with @why. The file is then opened and renamed relative to it, so the
 * directory checked is the one used.
 */
static int dir_open(const char *path, const char **base, const char **why)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;
	int fd;

	*why = NULL;
	*base = slash ? slash + 1 : path;
	if (!**base || (slash && snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= (int)sizeof(dir))) {
		*why = "not a file's path";
		return -EINVAL;
	}
	fd = open(!slash ? "." : slash == path ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		*why = errno == ENOENT ? "none yet" : "its directory cannot be opened";
		return -errno;
	}
	if (fstat(fd, &st) || (*why = not_private(&st))) {
		if (!*why)
			*why = "its directory cannot be read";
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* The file's bytes, checked for what kbtf_head says of them (@size set), or NULL with @why. */
static void *cache_load(const char *path, size_t *size, const char **why)
{
	const char *base;
	struct stat st;
	void *buf = NULL;
	int dfd = dir_open(path, &base, why), fd;

	if (dfd < 0)
		return NULL;
	/* Not a link, and never waiting on a FIFO someone left there. */
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0) {
		*why = errno == ENOENT ? "none yet" : "it cannot be opened";
		return NULL;
	}
	*why = NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		*why = "not a regular file";
	else if ((*why = not_private(&st)))
		;
	else if (st.st_size < (off_t)sizeof(struct kbtf_head) || st.st_size > KBTF_MAX_SIZE)
		*why = "its size is not a digest's";
	else if (!(buf = malloc((size_t)st.st_size)))
		*why = "no memory";
	else if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size)
		*why = "it cannot be read";
	close(fd);
	if (*why) {
		free(buf);
		return NULL;
	}
	*size = (size_t)st.st_size;
	return buf;
}

/*
 * Whether @ids (@nr of them) could be a cut's: 0 first, then rising, as
 * the cut copies the kernel's types in its order. What a map written
 * wrong but summed right would most likely break.
 */
static bool ids_rise(const __u32 *ids, __u32 nr)
{
	for (__u32 i = 1; i < nr; i++)
		if (ids[i] <= ids[i - 1])
			return false;
	return !ids[0];
}

/* The digest in cache file @path, if it is @key's and whole, into @k. 0, or -errno with @why. */
static int cache_read(const char *path, const struct kbtf_key *key, struct kbtf *k, const char **why)
{
	size_t size;
	struct kbtf_head *h = cache_load(path, &size, why);
	const __u32 *ids;

	if (!h)
		return -ENOENT;
	ids = (const __u32 *)(h + 1);
	if (memcmp(h->magic, KBTF_MAGIC, sizeof(h->magic)) || h->version != KBTF_VERSION)
		*why = "not a digest of this format";
	else if (memcmp(&h->key, key, sizeof(*key)))
		*why = "made for another kernel, sbx-bpf or root set";
	else if (!h->nr || h->nr > (size - sizeof(*h)) / 4 ||
		 size - sizeof(*h) - 4 * (size_t)h->nr != h->btf_size)
		*why = "its parts do not add up to its size";
	else if (sum_of(ids, size - sizeof(*h)) != h->sum)
		*why = "its sum does not match";
	else if (!ids_rise(ids, h->nr))
		*why = "its kernel IDs do not rise";
	if (!*why) {
		k->btf = btf__new(ids + h->nr, h->btf_size);
		if (!k->btf || btf__type_cnt(k->btf) != h->nr)
			*why = "its BTF does not parse, or has another number of types";
	}
	if (!*why && !(k->kernel_id = malloc(4 * (size_t)h->nr)))
		*why = "no memory";
	if (*why) {
		btf__free(k->btf);
		k->btf = NULL;
		free(h);
		return -EINVAL;
	}
	memcpy(k->kernel_id, ids, 4 * (size_t)h->nr);
	k->nr = h->nr;
	free(h);
	return 0;
}

/*
 * The cache's directory for a write: dir_open's, made first if it is
 * missing (one level: /run/sbx-bpf). Its fd, or -errno with @why.
 */
static int dir_for_write(const char *path, const char **base, const char **why)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int dfd = dir_open(path, base, why);

	if (dfd != -ENOENT || !slash || slash == path)
		return dfd;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);	/* dir_open checked its length */
	if (mkdir(dir, 0755) && errno != EEXIST) {
		*why = "its directory cannot be made";
		return -errno;
	}
	return dir_open(path, base, why);
}

/*
 * Head @h and @body into @path, whole or not at all: written to a name of
 * its own beside it (pid and random, never another writer's), then
 * renamed over it. The directory must pass dir_open's check, as for a
 * read. 0, or -errno with @why.
 */
static int body_write(const char *path, const struct kbtf_head *h, const void *body, const char **why)
{
	char tmp[NAME_MAX + 1];
	const char *base;
	unsigned long long nonce = 0;
	int dfd = dir_for_write(path, &base, why), fd, err;

	if (dfd < 0)
		return dfd;
	*why = "it cannot be written";
	if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
		nonce = clock_ns(CLOCK_MONOTONIC);
	if (snprintf(tmp, sizeof(tmp), "%s.%d.%llx", base, (int)getpid(), nonce) >= (int)sizeof(tmp)) {
		close(dfd);
		return -ENAMETOOLONG;
	}
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		close(dfd);
		return err;
	}
	err = write_all(fd, (const char *)h, sizeof(*h));
	err = err ? err : write_all(fd, body, 4 * (size_t)h->nr + h->btf_size);
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(dfd, tmp, dfd, base))
		err = -errno;
	if (err)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	return err;
}

/* @k's digest into cache file @path, under @key: whole or not at all (a rename). 0 or -errno. */
static int cache_write(const char *path, const struct kbtf_key *key, const struct kbtf *k, const char **why)
{
	struct kbtf_head h = { .magic = KBTF_MAGIC, .version = KBTF_VERSION, .nr = k->nr, .key = *key };
	const void *raw = btf__raw_data(k->btf, &h.btf_size);
	void *body;
	int err;

	*why = "no memory";
	if (!raw)
		return -ENOMEM;
	body = malloc(4 * (size_t)k->nr + h.btf_size);	/* summed, then written in one go */
	if (!body)
		return -ENOMEM;
	memcpy(body, k->kernel_id, 4 * (size_t)k->nr);
	memcpy((char *)body + 4 * (size_t)k->nr, raw, h.btf_size);
	h.sum = sum_of(body, 4 * (size_t)k->nr + h.btf_size);
	err = body_write(path, &h, body, why);
	free(body);
	return err;
}

/*
 * The id of the kernel's own BTF object ("vmlinux", not a module's), or 0.
 * It is usually the first one made after boot (a module's is made after
 * it), so the search ends at once; it gives up after a few rather than
 * walk every program's BTF, and the caller reads the file instead.
 */
static __u32 vmlinux_btf_id(void)
{
	__u32 id = 0;

	for (int i = 0; i < 16 && !bpf_btf_get_next_id(id, &id); i++) {
		struct bpf_btf_info info = {};
		__u32 len = sizeof(info);
		char name[sizeof("vmlinux")] = "";
		int fd = bpf_btf_get_fd_by_id(id);
		bool found;

		if (fd < 0)
			continue;	/* gone meanwhile: the next */
		info.name = (__u64)(unsigned long)name;
		info.name_len = sizeof(name);
		found = !bpf_obj_get_info_by_fd(fd, &info, &len) && info.kernel_btf &&
			!strncmp(name, "vmlinux", sizeof(name));
		close(fd);
		if (found)
			return id;
	}
	return 0;
}

/*
 * The kernel's whole BTF, from the kernel's own object through bpf(2):
 * its 5.5 MB copied out in one copy (libbpf asks twice: its size, then
 * all of it). /sys/kernel/btf/vmlinux hands it out a page a read (1,349
 * reads on 6.1), each page copied twice on the way. The same bytes; the
 * file is the way when bpf(2) will not answer (no CAP_SYS_ADMIN, a
 * seccomp filter). (A buffer of our own asked for in huge pages faulted
 * 730 times less and cost 2.2 M instructions more on 6.12: not kept.)
 */
static struct btf *whole_load(const char **from)
{
	__u32 id = vmlinux_btf_id();
	struct btf *whole = id ? btf__load_from_kernel_by_id(id) : NULL;

	*from = "bpf(2)";
	if (whole)
		return whole;
	*from = "sysfs";
	return btf__load_vmlinux_btf();
}

/* @whole, the kernel's whole BTF, as @k: its own IDs, no memfd (libbpf searches the whole too). */
static void whole_take(struct kbtf *k, struct btf *whole, const char *from, const char *why)
{
	k->btf = whole;
	k->nr = btf__type_cnt(whole);
	snprintf(k->how, sizeof(k->how), "the whole BTF, %u types, read through %s%s%s%s", k->nr, from,
		 why ? " (no digest: " : "", why ? why : "", why ? ")" : "");
}

/*
 * The digest of @roots, cut from the whole BTF: 0, or -errno. 1 where it
 * cannot be cut: then @k is the whole BTF, as before there was a digest,
 * and nothing is cached. Mostly a root the kernel must have and lacks:
 * libbpf would go on to search the modules' BTF for it, which the cut has
 * none of (corebtf.h).
 */
static int digest_build(struct kbtf *k, const struct corebtf_root *roots, size_t nr, const char **from)
{
	struct btf *whole = whole_load(from);

	if (!whole)
		return -errno;
	k->btf = corebtf__cut(whole, roots, nr, &k->kernel_id);
	if (!k->btf) {
		whole_take(k, whole, *from, errno == ENOENT ? "a root of ours is not in it" : strerror(errno));
		return 1;
	}
	btf__free(whole);
	k->nr = btf__type_cnt(k->btf);
	return 0;
}

/*
 * The digest, from the cache or built (and cached where it can be). 0 or
 * -errno. @k->how says which, and why a file there was not read.
 */
static int digest_open(struct kbtf *k, const struct corebtf_root *roots, size_t nr)
{
	const char *path = cache_path(), *why = "SBX_BTF_CACHE=off", *from = "";
	struct kbtf_key key;
	bool keyed = path && !key_find(&key, roots, nr, &why);
	int err;

	if (keyed && !cache_read(path, &key, k, &why)) {
		snprintf(k->how, sizeof(k->how), "digest of %u types read from %s", k->nr, path);
		return 0;
	}
	err = digest_build(k, roots, nr, &from);
	if (err)
		return err < 0 ? err : 0;
	if (!keyed) {
		snprintf(k->how, sizeof(k->how), "digest of %u types (the whole BTF read through %s) built, not cached: %s",
			 k->nr, from, why);
		return 0;
	}
	{
		const char *unread = why, *unwritten = "";

		err = cache_write(path, &key, k, &unwritten);
		snprintf(k->how, sizeof(k->how), "digest of %u types (the whole BTF read through %s) built (%s: %s), %s%s%s%s",
			 k->nr, from, path, unread, err ? "not written: " : "written", err ? unwritten : "",
			 err ? ", " : "", err ? strerror(-err) : "");
	}
	return 0;
}

int kbtf__open(struct kbtf *k, const struct corebtf_root *roots, size_t nr, unsigned flags)
{
	int err;

	memset(k, 0, sizeof(*k));
	k->fd = -1;
	if (flags & KBTF_WHOLE) {
		const char *from;
		struct btf *whole = whole_load(&from);

		if (!whole)
			return -errno;
		whole_take(k, whole, from, NULL);
		return 0;
	}
	err = digest_open(k, roots, nr);
	if (err) {
		kbtf__close(k);
		return err;
	}
	/* None (the whole BTF, or no memfd): libbpf searches the whole BTF; the IDs are mapped all the same. */
	if (k->kernel_id)
		k->fd = corebtf__memfd(k->btf);
	if (k->fd < 0)
		k->fd = -1;
	return 0;
}

__u32 kbtf__kernel_id(const struct kbtf *k, __u32 id)
{
	if (!k->kernel_id)
		return id;
	return id < k->nr ? k->kernel_id[id] : 0;
}

void kbtf__close(struct kbtf *k)
{
	btf__free(k->btf);
	free(k->kernel_id);
	if (k->fd >= 0)
		close(k->fd);
	k->btf = NULL;
	k->kernel_id = NULL;
	k->nr = 0;
	k->fd = -1;
}
