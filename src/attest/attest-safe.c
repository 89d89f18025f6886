/* Which attestation files may be trusted, as OpenSSH's StrictModes decides:
 * one that anyone but root and the invoking user can write, or replace
 * through a directory above it, is no evidence. A sticky directory (/tmp) is
 * acceptable above an entry owned by root or that user, since only they can
 * remove or rename that entry. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attest/attest.h"
#include "attest/attest-sys.h"

static bool owner_ok(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == getuid();
}

static int unsafe(char *why, size_t len, const char *what, const char *path,
		  const struct stat *st, const char *reason)
{
	snprintf(why, len, "%s %s %s (owner uid %u, mode %04o)", what, path, reason,
		 (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
	return -EPERM;
}

/* Every directory above real (absolute, no symlinks), up to /. */
static int dirs_safe(char *real, char *why, size_t len)
{
	struct stat st;
	char *slash;

	while ((slash = strrchr(real, '/'))) {
		slash[slash == real] = '\0'; /* "/a/b" -> "/a", "/a" -> "/" */
		if (rtid__att_stat(real, &st) < 0) {
			int e = errno;

			snprintf(why, len, "directory %s: %s", real, strerror(e));
			return -e;
		}
		if (!owner_ok(&st))
			return unsafe(why, len, "directory", real, &st, "is owned by another user");
		/* The entry below it was checked to be owned by root or us. */
		if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))
			return unsafe(why, len, "directory", real, &st,
				      "is writable by group or others");
		if (!strcmp(real, "/"))
			return 0;
	}
	return 0;
}

int rtid_attest_path_safe(const char *path, char *why, size_t whylen)
{
	char real[PATH_MAX], dummy[1];
	struct stat st;

	if (!why) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	if (!path || rtid__att_lstat(path, &st) < 0) {
		int e = path ? errno : EINVAL;

		snprintf(why, whylen, "%s: %s", path ? path : "(null)", strerror(e));
		return -e;
	}
	if (S_ISLNK(st.st_mode) && !owner_ok(&st))
		return unsafe(why, whylen, "symlink", path, &st, "is owned by another user");
	if (!rtid__att_realpath(path, real) || rtid__att_stat(real, &st) < 0) {
		int e = errno;

		snprintf(why, whylen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s is not a regular file", real);
		return -EPERM;
	}
	if (!owner_ok(&st))
		return unsafe(why, whylen, "file", real, &st, "is owned by another user");
	if (st.st_mode & 022)
		return unsafe(why, whylen, "file", real, &st, "is writable by group or others");
	return dirs_safe(real, why, whylen);
}

int rtid__att_dir_safe(const char *dir, char *why, size_t whylen)
{
	char real[PATH_MAX];

	if (!rtid__att_realpath(dir, real) || strlen(real) + 3 > sizeof(real)) {
		int e = errno ? errno : ENAMETOOLONG;

		snprintf(why, whylen, "directory %s: %s", dir, strerror(e));
		return -e;
	}
	strcat(real, strcmp(real, "/") ? "/x" : "x"); /* the walk starts above the entry */
	return dirs_safe(real, why, whylen);
}

int rtid_attest_load_trusted(const char *path, struct rtid_attestation **out, bool *trusted,
			     char *err, size_t errlen)
{
	char why[512] = "";
	int safe = rtid_attest_path_safe(path, why, sizeof(why));
	int r = rtid_attest_load(path, out, err, errlen);

	if (r < 0)
		return r;
	(*out)->untrusted = safe < 0 && safe != -ENOENT;
	if (trusted)
		*trusted = !(*out)->untrusted;
	if ((*out)->untrusted && err)
		snprintf(err, errlen, "%s", why);
	return 0;
}
