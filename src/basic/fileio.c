/* A small file read whole (a comm, a status, a version file, an id), or a
 * file of lines of any length read line by line (a status with thousands of
 * groups): one loop for all of rtid, because a read may return fewer bytes
 * than are there and a signal may interrupt it. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "basic/sys.h"

ssize_t rtid__read_at(int dirfd, const char *path, char *buf, size_t cap, unsigned flags)
{
	int oflags = O_RDONLY | O_CLOEXEC | O_NOCTTY;
	size_t len = 0;
	int fd, e = 0;

	if (flags & RTID__READ_NOFOLLOW)
		oflags |= O_NOFOLLOW;
	fd = rtid__openat(dirfd, path, oflags);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;
		char probe;

		if (len == cap) {
			/* Full: whole-file reads must prove there is no more. */
			if (flags & RTID__READ_WHOLE) {
				do
					n = read(fd, &probe, 1);
				while (n < 0 && errno == EINTR);
				if (n != 0)
					e = n < 0 ? errno : EOVERFLOW;
			}
			break;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return e ? -e : (ssize_t)len;
}

int rtid__read_lines(int dirfd, const char *path, rtid__line_fn fn, void *arg)
{
	char buf[RTID__LINE_PIECE];
	size_t have = 0;
	bool skipping = false; /* inside a line longer than buf, already reported cut */
	int fd = rtid__openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY), r = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		size_t end, start = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		end = have + (size_t)n;
		for (size_t i = have; i < end && r == 0; i++) {
			if (buf[i] != '\n')
				continue;
			if (!skipping)
				r = fn(buf + start, i - start, true, arg);
			skipping = false;
			start = i + 1;
		}
		if (r != 0)
			break;
		if (n == 0) { /* the last line, without its newline */
			if (start < end && !skipping)
				r = fn(buf + start, end - start, true, arg);
			break;
		}
		if (start == 0 && end == sizeof(buf)) {
			/* One line fills the buffer: its start is all anyone sees. */
			if (!skipping)
				r = fn(buf, end, false, arg);
			if (r != 0)
				break;
			skipping = true;
			have = 0;
			continue;
		}
		memmove(buf, buf + start, end - start);
		have = end - start;
	}
	close(fd);
	return r < 0 ? r : 0;
}

int rtid__mkdir_safe(const char *path, mode_t mode)
{
	const char *slash = strrchr(path, '/');
	char parent[4096];
	int dfd, fd, e = 0;

	if (!slash || !slash[1] || (size_t)(slash - path) >= sizeof(parent))
		return -EINVAL;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
	dfd = open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	/* mkdirat makes no directory through a link at the name (EEXIST), and
	 * the open below follows none: what is there must be a directory. */
	if (mkdirat(dfd, slash + 1, mode) == 0) {
		fd = openat(dfd, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* The umask took bits of the mode asked for: give them back. */
		if (fd < 0 || fchmod(fd, mode) < 0)
			e = -errno;
		if (fd >= 0)
			close(fd);
	} else if (errno != EEXIST) {
		e = -errno;
	} else if ((fd = openat(dfd, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				O_CLOEXEC)) < 0) {
		e = errno == ELOOP ? -ELOOP : -errno; /* a link, or no directory */
	} else {
		close(fd);
		e = 1;
	}
	close(dfd);
	return e;
}

int rtid__file_has_cstring(const char *path, const char *s)
{
	struct stat st;
	void *map = MAP_FAILED;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), e = 0, r;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		e = -errno;
	else if (st.st_size > 0 &&
		 (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
		e = -errno;
	close(fd); /* the mapping stays without it */
	if (map == MAP_FAILED)
		return e;
	r = rtid__has_cstring(map, (size_t)st.st_size, s);
	munmap(map, (size_t)st.st_size);
	return r;
}

int rtid__start_time_read(const char *proc_root, int pid, unsigned long long *out)
{
	char path[4096], buf[1024];
	unsigned long long v;
	ssize_t n;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%d/stat", proc_root ? proc_root : "/proc", pid);
	n = rtid__read_at(AT_FDCWD, path, buf, sizeof(buf), 0);
	if (n < 0)
		return (int)n;
	if (rtid__parse_stat_start(buf, (size_t)n, &v) < 0)
		return -EINVAL;
	*out = v;
	return 0;
}
