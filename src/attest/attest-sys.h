/* The calls of the attestation's storage that libfiu's preload cannot reach,
 * as failure points "rtid/<call>" of the RTID_FIU build (see sys.h). */
#ifndef RTID_ATTEST_SYS_H
#define RTID_ATTEST_SYS_H

#include <stdlib.h>
#include <sys/file.h>
#include <sys/random.h>

#include "basic/sys.h"

#define RTID__ATT_FAIL(point, fail_value)      \
	do {                                   \
		int e_ = rtid__fail(point);    \
		if (e_) {                      \
			errno = e_;            \
			return fail_value;     \
		}                              \
	} while (0)

static inline int rtid__att_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	RTID__ATT_FAIL("rtid/openat", -1);
	return openat(dirfd, path, flags, mode);
}

static inline int rtid__att_renameat(int d1, const char *a, int d2, const char *b)
{
	RTID__ATT_FAIL("rtid/renameat", -1);
	return renameat(d1, a, d2, b);
}

static inline int rtid__att_flock(int fd, int op)
{
	RTID__ATT_FAIL("rtid/flock", -1);
	return flock(fd, op);
}

static inline int rtid__att_fstat(int fd, struct stat *st)
{
	RTID__ATT_FAIL("rtid/fstat", -1);
	return fstat(fd, st);
}

static inline int rtid__att_lstat(const char *path, struct stat *st)
{
	RTID__ATT_FAIL("rtid/lstat", -1);
	return lstat(path, st);
}

static inline int rtid__att_stat(const char *path, struct stat *st)
{
	RTID__ATT_FAIL("rtid/stat", -1);
	return stat(path, st);
}

static inline int rtid__att_fchmod(int fd, mode_t mode)
{
	RTID__ATT_FAIL("rtid/fchmod", -1);
	return fchmod(fd, mode);
}

static inline char *rtid__att_realpath(const char *path, char *out)
{
	RTID__ATT_FAIL("rtid/realpath", NULL);
	return realpath(path, out);
}

static inline ssize_t rtid__att_getrandom(void *buf, size_t len, unsigned flags)
{
	RTID__ATT_FAIL("rtid/getrandom", -1);
	return getrandom(buf, len, flags);
}

#endif
