/* Listing the threads of a process so that none alive for the whole walk is
 * missed.
 *
 * Why readdir is not enough: a walk of <proc>/<pid>/task that takes more than
 * one getdents call is not a snapshot. The kernel (proc_task_readdir) resumes
 * each later call from the tid it could not return last time, and when that
 * thread has exited meanwhile it resumes by position, counting threads from
 * the start of the list again: with threads exiting in front of the resume
 * point, threads that were alive the whole time are skipped.
 *
 * What the walk does: read Threads: from <proc>/<pid>/status (n), then list
 * the directory with ONE getdents64 call on a freshly opened descriptor (so it
 * starts at the head of the thread list, with no saved tid), into a buffer
 * sized for n and more. The walk is complete when that one call returned at
 * least n task entries. Why that is a proof, from the kernel's semantics:
 *
 *  - Threads: is signal->nr_threads read under the sighand lock, and the
 *    kernel adds a thread to the group's list and counts it, or removes and
 *    uncounts it, under that same lock: n is exactly the length of the list
 *    at one instant t0 before the walk.
 *  - Threads are only ever appended at the tail of that list. Within one
 *    call the kernel steps from each thread to its successor (under RCU; a
 *    removed thread keeps its forward link), so the entries of one call are
 *    threads in list order, each of them in the list at some time after t0.
 *  - Say a thread T alive from t0 to the end of the call is not listed. The
 *    walk then stopped before T (a call ends early when the thread it stands
 *    on exits), so every entry comes before T in the list: threads created
 *    before T, hence in the list at t0 (they were in it after t0, and
 *    created before T, which was in it at t0). That is at most n - 1 threads
 *    of the n at t0, not counting T. So n entries or more mean no such T.
 *
 * Whatever falls short (a call cut short, a buffer too small, a file system
 * whose getdents returns less per call, such as FUSE) is tried again a few
 * times and then reported as not provably complete: the scan then falls back
 * to the driver as unstable, it never answers from such a walk. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "basic/sys.h"
#include "proc/proc.h"

#define RECORD_MAX 32  /* a task's getdents64 record: 19-byte header, <= 10 digits, NUL */
#define NAME_RECORD 280 /* the largest record of any name (NAME_MAX 255) */
#define WALK_TRIES 4

/* The Tgid: and Threads: lines of a status file (-1: not seen). */
struct status_want {
	int tgid, threads;
};

/* Each key once: the file is read to its end, and a second Tgid: or
 * Threads: line is not the kernel's (refused, neither is taken). Only
 * Groups: grows long enough to be cut; a key of ours cut stays unseen, and
 * rtid__status_read refuses a status without it. */
static int status_line(const char *line, size_t len, bool whole, void *arg)
{
	struct status_want *w = arg;
	int *slot, v;

	if (!whole)
		return 0;
	if (rtid__status_field(line, len, "Tgid", &v) == 0)
		slot = &w->tgid;
	else if (rtid__status_field(line, len, "Threads", &v) == 0)
		slot = &w->threads;
	else
		return 0;
	if (*slot != -1)
		return -EINVAL;
	*slot = v;
	return 0;
}

int rtid__status_read(int rootfd, int pid, int *tgid, int *threads)
{
	struct status_want w = { -1, -1 }; /* -1: not seen */
	char path[32];
	int r;

	snprintf(path, sizeof(path), "%d/status", pid);
	/* Read line by line: with thousands of supplementary groups a status
	 * file is larger than any buffer we would pick, and Threads: comes
	 * after Groups:. */
	r = rtid__read_lines(rootfd, path, status_line, &w);
	if (r < 0)
		return r;
	if (w.tgid <= 0 || w.threads < 0)
		return -EINVAL;
	*tgid = w.tgid;
	*threads = w.threads;
	return 0;
}

/* One getdents64 call on a fresh descriptor of the task directory. */
static ssize_t list_once(int taskfd, char *buf, size_t cap)
{
	int fd = rtid__openat(taskfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = rtid__getdents64(fd, buf, cap);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

size_t rtid__tasks_count(const struct rtid__tasks *l)
{
	size_t off = 0, n = 0, distinct = 0;
	int tid, *v;

	while (rtid__tasks_next(l, &off, &tid))
		n++;
	if (n == 0)
		return 0;
	/* Only distinct tids prove anything: a listing that named one thread
	 * twice has not named two. Out of memory, nothing is proven. */
	v = malloc(n * sizeof(*v));
	if (!v)
		return 0;
	for (off = 0, n = 0; rtid__tasks_next(l, &off, &tid);)
		v[n++] = tid;
	/* Equal is what the sort calls equal: one comparison for both. */
	qsort(v, n, sizeof(*v), cmp_int);
	for (size_t i = 0; i < n; i++)
		distinct += i == 0 || cmp_int(&v[i], &v[i - 1]) != 0;
	free(v);
	return distinct;
}

int rtid__tasks_list(int rootfd, int taskfd, int pid, struct rtid__tasks *out)
{
	size_t cap = 0, grow = 1;
	char *buf = NULL;
	int r = -EAGAIN;

	for (int i = 0; i < WALK_TRIES && r == -EAGAIN; i++) {
		int tgid, threads;
		ssize_t got;
		size_t need;
		char *nb;

		r = rtid__status_read(rootfd, pid, &tgid, &threads);
		if (r < 0)
			break;
		/* Room for the threads counted now, a quarter more, and growth
		 * each time a call filled the buffer. */
		need = (NAME_RECORD + ((size_t)threads + (size_t)threads / 4 + 64) * RECORD_MAX) * grow;
		if (need > cap) {
			nb = realloc(buf, need);
			if (!nb) {
				r = -ENOMEM;
				break;
			}
			buf = nb;
			cap = need;
		}
		got = list_once(taskfd, buf, cap);
		if (got < 0) {
			r = (int)got;
			break;
		}
		r = threads > 0 && rtid__tasks_count(&(struct rtid__tasks){ buf, (size_t)got }) >=
					   (size_t)threads ? 0 : -EAGAIN;
		if (r == 0) {
			*out = (struct rtid__tasks){ buf, (size_t)got };
			return 0;
		}
		if (cap - (size_t)got < NAME_RECORD)
			grow *= 2; /* the call may have stopped for room */
	}
	free(buf);
	return r;
}

bool rtid__tasks_next(const struct rtid__tasks *l, size_t *off, int *tid)
{
	while (*off + offsetof(struct dirent64, d_name) < l->len) {
		const struct dirent64 *d = (const struct dirent64 *)(l->buf + *off);

		if (d->d_reclen == 0 || *off + d->d_reclen > l->len)
			return false;
		*off += d->d_reclen;
		/* ".", "..", or anything a task could not be is skipped; the kernel
		 * writes a tid without leading zeros. */
		if (d->d_name[0] != '0' && rtid__parse_pid(d->d_name, tid) == 0)
			return true;
	}
	return false;
}

void rtid__tasks_free(struct rtid__tasks *l)
{
	free(l->buf);
	l->buf = NULL;
	l->len = 0;
}
