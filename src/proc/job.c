/* A process's launch job as the kernel shows it (rules.h, struct rtid__job).
 * cuda-checkpoint --launch-job (r590) makes a memfd the job file and sets
 * CUDA_CHECKPOINT_JOB_FILE for the program it starts, whose children
 * inherit both (the tool's help; the value's form is not documented: a path
 * of the process's own, such as /proc/self/fd/N, is what callers are seen to
 * read). The environment is the one of the process's exec,
 * <proc>/<pid>/environ; the path is resolved from the process's side. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic/basic.h"
#include "proc/proc.h"

#define JOB_VAR "CUDA_CHECKPOINT_JOB_FILE="
#define ENV_MAX (256 * 1024) /* more is no environment CUDA jobs are run with: unknown */

/* Unknown, and why: what could not be had (what), and the error e. */
static void unknown(struct rtid__job *out, char *why, size_t len, const char *what, int e)
{
	*out = (struct rtid__job){ .kind = RTID__JOB_UNKNOWN };
	snprintf(why, len, "%s: %s", what, strerror(e));
}

/* The job file's path as this side sees it into path: 0, or -EINVAL. */
static int resolve(const char *proc_root, int pid, const char *v, size_t n, char *path,
		   size_t len)
{
	int r;

	if (n > 4096 || n == 0 || v[0] != '/')
		return -EINVAL;
	if (n > 11 && !memcmp(v, "/proc/self/", 11))
		r = snprintf(path, len, "%s/%d/%.*s", proc_root, pid, (int)(n - 11), v + 11);
	else if (n > 8 && !memcmp(v, "/dev/fd/", 8))
		r = snprintf(path, len, "%s/%d/fd/%.*s", proc_root, pid, (int)(n - 8), v + 8);
	else
		r = snprintf(path, len, "%s/%d/root%.*s", proc_root, pid, (int)n, v);
	return r > 0 && (size_t)r < len ? 0 : -EINVAL;
}

void rtid__job_read(const char *proc_root, int pid, struct rtid__job *out, char *why, size_t len)
{
	char env[64], path[4200];
	char *buf = malloc(ENV_MAX);
	const char *v = NULL;
	size_t vlen = 0, k = strlen(JOB_VAR);
	ssize_t n;
	struct stat st;

	snprintf(env, sizeof(env), "%s/%d/environ", proc_root, pid);
	n = buf ? rtid__read_at(AT_FDCWD, env, buf, ENV_MAX, RTID__READ_WHOLE) : -ENOMEM;
	/* No environ at all: gone (its action fails on its own), or a tree
	 * that shows none. */
	if (n == -ENOENT) {
		*out = (struct rtid__job){ .kind = RTID__JOB_NONE };
		free(buf);
		return;
	}
	if (n < 0) {
		unknown(out, why, len, env, (int)-n);
		free(buf);
		return;
	}
	/* NUL-ended entries; the first of the name counts, as for getenv. */
	for (size_t off = 0; off < (size_t)n && !v;) {
		size_t l = strnlen(buf + off, (size_t)n - off);

		if (l >= k && !memcmp(buf + off, JOB_VAR, k))
			v = buf + off + k, vlen = l - k;
		off += l + 1;
	}
	if (!v) {
		*out = (struct rtid__job){ .kind = RTID__JOB_NONE };
	} else if (resolve(proc_root, pid, v, vlen, path, sizeof(path)) < 0) {
		snprintf(path, sizeof(path), "CUDA_CHECKPOINT_JOB_FILE=%.*s", (int)(vlen < 200 ? vlen
										 : 200), v);
		unknown(out, why, len, path, EINVAL);
	} else if (stat(path, &st) < 0) {
		unknown(out, why, len, path, errno);
	} else {
		*out = (struct rtid__job){ .kind = RTID__JOB_KNOWN, .dev = st.st_dev,
					   .ino = st.st_ino };
	}
	free(buf);
}
