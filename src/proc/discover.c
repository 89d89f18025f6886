/* Finding the processes worth validating: those that hold a GPU device open
 * or have a thread named like the driver's restore thread. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/parse.h"
#include "proc/proc.h"

/* A GPU device node's path starts so: the driver's /dev/nvidia0..N,
 * nvidiactl, nvidia-uvm. */
#define NV_DEV "/dev/nvidia"

static bool holds_nvidia(const char *proc_root, int pid)
{
	char path[4096], link[sizeof(NV_DEV)];
	struct dirent *de;
	bool found = false;
	DIR *d;

	/* opendir: one call that either gives the listing or leaves nothing
	 * open (an fd then fdopendir had a failure path of its own to close). */
	snprintf(path, sizeof(path), "%s/%d/fd", proc_root, pid);
	d = opendir(path);
	if (!d)
		return false; /* gone, or not ours to look at */
	/* Only the prefix matters: readlinkat truncates a longer target to the
	 * buffer and writes no NUL, so nothing here depends on the length. */
	while (!found && (de = readdir(d))) {
		ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof(link));

		found = n >= (ssize_t)strlen(NV_DEV) && !memcmp(link, NV_DEV, strlen(NV_DEV));
	}
	closedir(d);
	return found;
}

static int add(int **v, size_t *n, size_t *cap, int pid)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 32;
		int *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = pid;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static int walk(DIR *d, const char *proc_root, const struct rtid__matcher *m, int **v,
		size_t *n)
{
	size_t cap = 0;
	struct dirent *de;
	int r = 0;

	while (r == 0 && (de = readdir(d))) {
		struct rtid__scan s;
		int pid;

		if (rtid__parse_pid(de->d_name, &pid) < 0 || pid == getpid())
			continue;
		if (holds_nvidia(proc_root, pid)) {
			r = add(v, n, &cap, pid);
			continue;
		}
		rtid__scan(proc_root, pid, m, &s);
		if (s.candidates > 0 && s.status != RTID__SCAN_NOPROC)
			r = add(v, n, &cap, pid);
	}
	return r;
}

int rtid_find_candidates(const char *proc_root, const char *pattern, int **pids, size_t *n)
{
	struct rtid__matcher m;
	int *v = NULL, r;
	size_t cnt = 0;
	DIR *d;

	if (!proc_root || !pids || !n)
		return -EINVAL;
	if (rtid__matcher_init(&m, pattern) < 0)
		return -EINVAL;
	d = opendir(proc_root);
	if (!d) {
		r = -errno;
		rtid__matcher_fini(&m);
		return r;
	}
	r = walk(d, proc_root, &m, &v, &cnt);
	closedir(d);
	rtid__matcher_fini(&m);
	if (r < 0) {
		free(v);
		return r;
	}
	if (v) /* NULL when nothing was found: qsort must not see it */
		qsort(v, cnt, sizeof(*v), cmp_int);
	*pids = v;
	*n = cnt;
	return 0;
}
