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
#define ENV_BUF (ENV_MAX + 1)  /* and a NUL after the last byte read */

/* The job file v (a NUL-ended value) as this side sees it, into path: 0, or
 * -EINVAL for a relative path or one too long. */
static int resolve(const char *proc_root, int pid, const char *v, char *path, size_t len)
{
	int r;

	if (v[0] != '/')
		return -EINVAL;
	if (!strncmp(v, "/proc/self/", 11))
		r = snprintf(path, len, "%s/%d/%s", proc_root, pid, v + 11);
	else if (!strncmp(v, "/dev/fd/", 8))
		r = snprintf(path, len, "%s/%d/fd/%s", proc_root, pid, v + 8);
	else
		r = snprintf(path, len, "%s/%d/root%s", proc_root, pid, v);
	return (size_t)r < len ? 0 : -ENAMETOOLONG;
}

/* The value of the first JOB_VAR entry of env (n bytes, NUL-ended entries,
 * env[n] a NUL), or NULL. */
static const char *job_var(const char *env, size_t n)
{
	for (size_t off = 0; off < n; off += strlen(env + off) + 1)
		if (!strncmp(env + off, JOB_VAR, strlen(JOB_VAR)))
			return env + off + strlen(JOB_VAR);
	return NULL;
}

void rtid__job_read(const char *proc_root, int pid, struct rtid__job *out, char *why, size_t len)
{
	char file[64], path[4200];
	char *env = calloc(1, ENV_BUF); /* zeroed: a NUL after whatever is read */
	const char *v = NULL;
	ssize_t n = -ENOMEM;
	struct stat st;

	snprintf(file, sizeof(file), "%s/%d/environ", proc_root, pid);
	if (env)
		n = rtid__read_at(AT_FDCWD, file, env, ENV_MAX, RTID__READ_WHOLE);
	*out = (struct rtid__job){ .kind = RTID__JOB_UNKNOWN };
	/* No environ at all: gone (its action fails on its own), or a tree
	 * that shows none: in no job. */
	if (n == -ENOENT || (n >= 0 && !(v = job_var(env, (size_t)n)))) {
		out->kind = RTID__JOB_NONE;
	} else if (n < 0) {
		snprintf(why, len, "%s: %s", file, strerror((int)-n));
	} else if (resolve(proc_root, pid, v, path, sizeof(path)) != 0) {
		snprintf(why, len, "CUDA_CHECKPOINT_JOB_FILE=%.200s: not a path of its own", v);
	} else if (stat(path, &st) < 0) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
	} else {
		*out = (struct rtid__job){ .kind = RTID__JOB_KNOWN, .dev = st.st_dev,
					   .ino = st.st_ino };
	}
	free(env);
}
