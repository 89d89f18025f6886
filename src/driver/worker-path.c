/* Where the driver-API worker program is: RTID_WORKER when set (an explicit
 * choice, so it is the only place tried), else beside the running program
 * (so that a build tree works as it is), else the libexecdir relative to the
 * program (an install moved elsewhere), else the configured libexecdir. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "basic/basic.h"
#include "driver/driver.h"

#define WORKER_NAME "rtid-cuda-worker"

/* The directory of /proc/self/exe with rel appended, or -errno. */
static int beside_self(const char *rel, char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n < 0)
		return -errno;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/%s", exe, rel) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* path into buf when it fits whole; buf is left alone otherwise. */
static bool take(const char *path, char *buf, size_t len)
{
	size_t n = strlen(path);

	if (n >= len)
		return false;
	memcpy(buf, path, n + 1);
	return true;
}

int rtid__worker_path(char *buf, size_t len, char *why, size_t wlen)
{
	const char *env = getenv("RTID_WORKER");
	char here[PATH_MAX] = "";

	if (env && *env) {
		int e = -rtid__executable(env);

		if (e == 0 && take(env, buf, len))
			return 0;
		snprintf(why, wlen, "driver API worker RTID_WORKER=%s: %s", env,
			 strerror(e ? e : ENAMETOOLONG));
		return -ENOENT;
	}
	if (beside_self(WORKER_NAME, here, sizeof(here)) == 0 && rtid__executable(here) == 0 &&
	    take(here, buf, len))
		return 0;
#ifdef RTID_WORKER_FROM_BINDIR
	char moved[PATH_MAX];

	if (beside_self(RTID_WORKER_FROM_BINDIR, moved, sizeof(moved)) == 0 &&
	    rtid__executable(moved) == 0 && take(moved, buf, len))
		return 0;
#endif
	if (rtid__executable(RTID_WORKER_PATH) == 0 && take(RTID_WORKER_PATH, buf, len))
		return 0;
	snprintf(why, wlen, "driver API worker not found: tried %s and %s (set RTID_WORKER)",
		 *here ? here : "the program's directory", RTID_WORKER_PATH);
	return -ENOENT;
}
