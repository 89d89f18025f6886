/* System calls that libfiu's preload library cannot reach (openat, pipe2,
 * fork, ...), wrapped so that a build with RTID_FIU can fail them on
 * demand. Without RTID_FIU these are the plain calls. Failure points are
 * named "rtid/<call>"; the errno comes from the point's failinfo, else EIO. */
#ifndef RTID_SYS_H
#define RTID_SYS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef RTID_FIU
#include <fiu.h>

static inline int rtid__fail(const char *name)
{
	void *info;

	if (!fiu_fail(name))
		return 0;
	info = fiu_failinfo();
	return info ? (int)(intptr_t)info : EIO;
}
#else
static inline int rtid__fail(const char *name)
{
	(void)name;
	return 0;
}
#endif

static inline int rtid__openat(int dirfd, const char *path, int flags)
{
	int e = rtid__fail("rtid/openat");

	if (e) {
		errno = e;
		return -1;
	}
	return openat(dirfd, path, flags);
}

static inline int rtid__fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	int e = rtid__fail("rtid/fstatat");

	if (e) {
		errno = e;
		return -1;
	}
	return fstatat(dirfd, path, st, flags);
}

static inline int rtid__pipe2(int fds[2], int flags)
{
	int e = rtid__fail("rtid/pipe2");

	if (e) {
		errno = e;
		return -1;
	}
	return pipe2(fds, flags);
}

static inline int rtid__dup(int fd)
{
	int e = rtid__fail("rtid/dup");

	if (e) {
		errno = e;
		return -1;
	}
	return dup(fd);
}

static inline int rtid__socketpair(int domain, int type, int proto, int sv[2])
{
	int e = rtid__fail("rtid/socketpair");

	if (e) {
		errno = e;
		return -1;
	}
	return socketpair(domain, type, proto, sv);
}

static inline int rtid__pidfd_open(pid_t pid)
{
	int e = rtid__fail("rtid/pidfd_open");

	if (e) {
		errno = e;
		return -1;
	}
	/* The system call, not glibc's wrapper (2.36): the GPU kit's rtid then
	 * runs on glibc 2.34 and later (Ubuntu 22.04, RHEL 9). */
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static inline ssize_t rtid__getdents64(int fd, void *buf, size_t len)
{
	int e = rtid__fail("rtid/getdents64");

	if (e) {
		errno = e;
		return -1;
	}
	return getdents64(fd, buf, len);
}

/* close_range, failable so that the loop for kernels before 5.9 runs too. */
static inline int rtid__close_range(unsigned first, unsigned last)
{
	int e = rtid__fail("rtid/close_range");

	if (e) {
		errno = e;
		return -1;
	}
	return close_range(first, last, 0);
}

/* fork, failable on demand like the calls above. */
static inline pid_t rtid__fork(void)
{
	int e = rtid__fail("rtid/fork");

	if (e) {
		errno = e;
		return -1;
	}
	return fork();
}

#endif
