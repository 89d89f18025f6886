/* Storing attestations so that no update is lost and no file can be planted:
 * an exclusive flock on PATH.lock around load-modify-save, the file read again
 * under it; a temp file of a random name created O_EXCL|O_NOFOLLOW beside the
 * file (a planted link is never followed), mode 0644 whatever the umask,
 * fsync, rename, fsync of the directory. A crash leaves the old file or the
 * new one; its temp file is removed by the next update, under the lock. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attest/attest.h"
#include "attest/attest-sys.h"

#define TMP_TRIES 100

static uint64_t getrandom64(void *arg)
{
	uint64_t v = 0;

	(void)arg;
	if (rtid__att_getrandom(&v, sizeof(v), 0) != sizeof(v))
		v ^= (uint64_t)getpid() << 32 ^ (uint64_t)clock();
	return v;
}

int rtid__tmp_create(int dirfd, const char *prefix, uint64_t (*rnd)(void *), void *rarg,
		     char *name, size_t namelen)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789";

	for (int t = 0; t < TMP_TRIES; t++) {
		uint64_t v = (rnd ? rnd : getrandom64)(rarg);
		char suffix[13];
		int fd;

		for (int i = 0; i < 12; i++, v /= 36)
			suffix[i] = abc[v % 36];
		suffix[12] = '\0';
		if ((size_t)snprintf(name, namelen, "%s%s", prefix, suffix) >= namelen)
			return -ENAMETOOLONG;
		/* O_EXCL fails on any existing name, a symlink included. */
		fd = rtid__att_openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int rtid__replace_at(int dirfd, const char *base, const void *buf, size_t len)
{
	char prefix[NAME_MAX + 1], tmp[NAME_MAX + 1];
	int fd, r = 0;

	if ((size_t)snprintf(prefix, sizeof(prefix), ".%s.tmp-", base) >= sizeof(prefix) - 12)
		return -ENAMETOOLONG;
	fd = rtid__tmp_create(dirfd, prefix, NULL, NULL, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	if (rtid__att_fchmod(fd, 0644) < 0 || (r = write_all(fd, buf, len)) < 0 || fsync(fd) < 0)
		r = r ? r : -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno; /* where a delayed write error shows (NFS) */
	if (r == 0 && rtid__att_renameat(dirfd, tmp, dirfd, base) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dirfd, tmp, 0);
		return r;
	}
	/* The rename itself is durable only once the directory is. */
	return fsync(dirfd) < 0 && errno != EINVAL ? -errno : 0;
}

/* Where a write of path goes: a symlink is written through to its target
 * (which must exist); the directory is opened, base is its last component. */
struct target {
	char full[PATH_MAX], dir[PATH_MAX], base[NAME_MAX + 1];
};

static int target_of(const char *path, struct target *t, char *err, size_t errlen)
{
	char real[PATH_MAX], *dir = t->dir, *base = t->base;
	const char *slash, *name, *p = path;
	struct stat st;
	int st_ok = rtid__att_lstat(path, &st) == 0;

	if (st_ok && S_ISLNK(st.st_mode)) {
		if (!rtid__att_realpath(path, real)) {
			snprintf(err, errlen, "%s: a symlink to a missing file or directory "
				 "(not followed)", path);
			return -ENOENT;
		}
		p = real;
	} else if (st_ok && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	slash = strrchr(p, '/');
	name = slash ? slash + 1 : p;
	if (strlen(p) >= PATH_MAX || !*name || strlen(name) > NAME_MAX) {
		snprintf(err, errlen, "%s: not a file name", path);
		return -EINVAL;
	}
	if (slash) { /* "/x" is in "/" */
		size_t n = slash == p ? 1 : (size_t)(slash - p);

		memcpy(dir, p, n);
		dir[n] = '\0';
	} else {
		strcpy(dir, ".");
	}
	strcpy(base, name);
	strcpy(t->full, p);
	return 0;
}

static int open_dir(const char *dir, const char *path, char *err, size_t errlen)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), e = errno;

	if (fd < 0)
		snprintf(err, errlen, "%.200s: directory %.200s: %s", path, dir, strerror(e));
	return fd < 0 ? -e : fd;
}

static int lock(int dirfd, const struct target *t, char *err, size_t errlen)
{
	char name[NAME_MAX + 8];
	struct stat st;
	int fd, e;

	snprintf(name, sizeof(name), "%s.lock", t->base);
	fd = rtid__att_openat(dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s/%s: %s", t->dir, name,
			 e == ELOOP ? "the lock file is a symlink (not followed)" : strerror(e));
		return -e;
	}
	if (rtid__att_fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "%s/%s: the lock file is not a regular file", t->dir, name);
		return -EINVAL;
	}
	if (st.st_uid == geteuid() && (st.st_mode & 07777) != 0644)
		rtid__att_fchmod(fd, 0644); /* umask is no reason to change who may lock */
	while (rtid__att_flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			e = errno;
			close(fd);
			snprintf(err, errlen, "%s/%s: flock: %s", t->dir, name, strerror(e));
			return -e;
		}
	}
	return fd;
}

/* Temp files of saves that were killed: only a lock holder makes them, so
 * under the lock every one is stale. */
static void clean_stale(int dirfd, const char *base)
{
	char prefix[NAME_MAX + 8];
	int fd = rtid__dup(dirfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	size_t n = (size_t)snprintf(prefix, sizeof(prefix), ".%s.tmp-", base);

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, prefix, n))
			unlinkat(dirfd, de->d_name, 0);
	closedir(d);
}

static int save_at(const struct rtid_attestation *a, int dirfd, const char *base)
{
	json_t *root = rtid__att_to_json(a);
	char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	int r = text ? 0 : -ENOMEM;

	if (text) {
		size_t len = strlen(text);

		text[len] = '\n'; /* json_dumps leaves no newline; its NUL has room */
		r = rtid__replace_at(dirfd, base, text, len + 1);
	}
	free(text);
	json_decref(root);
	return r;
}

/* A file others could have written is not made ours (and so trusted) by
 * saving it again: its content would pass for evidence. Nor is one made
 * where others could replace it. */
static int not_laundered(const struct target *t, char *err, size_t errlen)
{
	char why[512];
	int r = rtid_attest_path_safe(t->full, why, sizeof(why));

	if (r == -ENOENT && (r = rtid__att_dir_safe(t->dir, why, sizeof(why))) == -EPERM) {
		snprintf(err, errlen, "not trusted, not created: %.400s", why);
		return r;
	}
	if (r == -EPERM)
		snprintf(err, errlen, "not trusted, not updated: %.400s", why);
	return r == -EPERM ? r : 0;
}

int rtid_attest_update(const char *path, int (*fn)(struct rtid_attestation *a, void *arg),
		       void *arg, char *err, size_t errlen)
{
	struct rtid_attestation *a = NULL;
	struct target t;
	char dummy[1];
	int dirfd, lockfd, r;

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (!path || !fn)
		return -EINVAL;
	if ((r = target_of(path, &t, err, errlen)) < 0)
		return r;
	/* Checked before anything is made there (a file of ours and every
	 * directory above only root or we can change, so it holds under the lock). */
	if ((r = not_laundered(&t, err, errlen)) < 0)
		return r;
	if ((dirfd = open_dir(t.dir, path, err, errlen)) < 0)
		return dirfd;
	if ((lockfd = r = lock(dirfd, &t, err, errlen)) < 0)
		goto out_dir;
	clean_stale(dirfd, t.base);
	if ((r = rtid_attest_load(t.full, &a, err, errlen)) < 0)
		goto out_lock;
	if ((r = fn(a, arg)) < 0) {
		snprintf(err, errlen, "%s", strerror(-r));
		goto out_free;
	}
	if ((r = save_at(a, dirfd, t.base)) < 0)
		snprintf(err, errlen, "%s: %s", t.full, strerror(-r));
out_free:
	rtid_attest_free(a);
out_lock:
	close(lockfd); /* the lock goes with the last fd of it */
out_dir:
	close(dirfd);
	return r < 0 ? r : 0;
}

int rtid_attest_save(const struct rtid_attestation *a, const char *path)
{
	struct target t;
	char err[512];
	int dirfd, r;

	if (!a || !path)
		return -EINVAL;
	if ((r = target_of(path, &t, err, sizeof(err))) < 0)
		return r;
	if ((dirfd = open_dir(t.dir, path, err, sizeof(err))) < 0)
		return dirfd;
	r = save_at(a, dirfd, t.base);
	close(dirfd);
	return r;
}

int rtid__file_replace(const char *path, const void *buf, size_t len)
{
	struct target t;
	char err[512];
	int dirfd, lockfd, r;

	if (!path || (!buf && len))
		return -EINVAL;
	if ((r = target_of(path, &t, err, sizeof(err))) < 0)
		return r;
	if ((dirfd = open_dir(t.dir, path, err, sizeof(err))) < 0)
		return dirfd;
	/* Under the lock too, so that a killed writer's temp file goes. */
	if ((lockfd = r = lock(dirfd, &t, err, sizeof(err))) >= 0) {
		clean_stale(dirfd, t.base);
		r = rtid__replace_at(dirfd, t.base, buf, len);
		close(lockfd);
	}
	close(dirfd);
	return r;
}
