/* A small file read whole (a comm, a status, a version file, an id): one
 * loop for all of rtid, because a read may return fewer bytes than are there
 * and a signal may interrupt it. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "basic/basic.h"
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
