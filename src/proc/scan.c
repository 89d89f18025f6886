/* The scan: find the threads of a process whose comm matches the pattern.
 *
 * The rules it serves: exactly one candidate, among tasks listed by a walk
 * proven complete (walk.c), stable when read again after the walk, is an
 * answer; anything else (none, several, a changed name, a task that could not
 * be read, a listing that may have missed a thread) is a reason to ask the
 * driver instead. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/sys.h"
#include "proc/proc.h"

/* A comm file without its newline (the names are compared as they are). */
static ssize_t read_comm(int dirfd, const char *path, char *buf, size_t buflen)
{
	ssize_t n = rtid__read_at(dirfd, path, buf, buflen, RTID__READ_WHOLE);

	if (n > 0 && buf[n - 1] == '\n')
		n--;
	return n;
}

/* A task that exited between readdir and open is normal, not an error. */
static bool vanished(ssize_t err)
{
	return err == -ENOENT || err == -ESRCH;
}

struct walk {
	int candidates, first, err;
	bool incomplete; /* no listing of the tasks was provably complete */
};

/* ENOENT or ESRCH on a task's comm means it exited only if its directory is
 * gone too: the error of a task that is still listed proves nothing, and
 * skipping it could leave a wrong single candidate (found by the libfiu
 * enumeration). Returns 0 when the task is gone, else the (negative) error to report. */
static int confirm_gone(int taskfd, int tid, ssize_t err)
{
	char name[16];
	struct stat st;

	snprintf(name, sizeof(name), "%d", tid);
	if (rtid__fstatat(taskfd, name, &st, 0) < 0 && vanished(-errno))
		return 0;
	return (int)err;
}

/* Read one task's comm and count it. Returns false when the walk must stop. */
static bool visit_task(int taskfd, int tid, const struct rtid__matcher *m, struct walk *w)
{
	char path[64], comm[64];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/comm", tid);
	n = read_comm(taskfd, path, comm, sizeof(comm));
	if (vanished(n) && (w->err = confirm_gone(taskfd, tid, n)) == 0)
		return true;
	if (n < 0) {
		w->err = (int)n;
		return false;
	}
	if (rtid__matcher_match(m, comm, (size_t)n) && w->candidates++ == 0)
		w->first = tid;
	return true;
}

/* A listing that cannot be proven complete (walk.c) is no walk at all. */
static void walk_tasks(int rootfd, int taskfd, int pid, const struct rtid__matcher *m,
		       struct walk *w)
{
	struct rtid__tasks l;
	size_t off = 0;
	int tid, r = rtid__tasks_list(rootfd, taskfd, pid, &l);

	if (r == -EAGAIN) {
		w->incomplete = true;
		return;
	}
	if (r < 0) {
		w->err = r;
		return;
	}
	while (rtid__tasks_next(&l, &off, &tid))
		if (!visit_task(taskfd, tid, m, w))
			break;
	rtid__tasks_free(&l);
}

static bool process_gone(int rootfd, int pid)
{
	char name[16];
	struct stat st;

	snprintf(name, sizeof(name), "%d", pid);
	return rtid__fstatat(rootfd, name, &st, 0) < 0 && vanished(-errno);
}

/* Re-read the single candidate: a name that changed since the walk proves
 * nothing about which thread is the driver's. */
static enum rtid__reread reread(int taskfd, int tid, const struct rtid__matcher *m, int *err)
{
	char path[64], comm[64];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/comm", tid);
	n = read_comm(taskfd, path, comm, sizeof(comm));
	if (vanished(n) && confirm_gone(taskfd, tid, n) == 0)
		return RTID__REREAD_CHANGED;
	if (n < 0) {
		*err = (int)n;
		return RTID__REREAD_ERROR;
	}
	return rtid__matcher_match(m, comm, (size_t)n) ? RTID__REREAD_SAME : RTID__REREAD_CHANGED;
}

/* The facts of the walk, then the rule (decide.c) on them. */
static void classify(int rootfd, int taskfd, int pid, const struct rtid__matcher *m,
		     const struct walk *w, struct rtid__scan *out)
{
	struct rtid__scan_seen seen = { .gone = process_gone(rootfd, pid), .err = w->err,
					.incomplete = w->incomplete,
					.candidates = w->candidates };
	int err = w->err; /* a re-read happens only after a walk with none */

	if (rtid__scan_needs_reread(&seen))
		seen.reread = reread(taskfd, w->first, m, &err);
	out->candidates = w->candidates;
	out->status = rtid__scan_rule(&seen);
	if (out->status == RTID__SCAN_ERROR)
		out->err = err;
	if (out->status == RTID__SCAN_FOUND)
		out->tid = w->first;
}

void rtid__scan(const char *proc_root, int pid, const struct rtid__matcher *m,
		struct rtid__scan *out)
{
	struct walk w = { 0 };
	char path[32];
	int rootfd, taskfd;

	memset(out, 0, sizeof(*out));
	rootfd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		out->status = RTID__SCAN_ERROR;
		out->err = -errno;
		return;
	}
	snprintf(path, sizeof(path), "%d/task", pid);
	taskfd = rtid__openat(rootfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (taskfd < 0) {
		out->status = vanished(-errno) ? RTID__SCAN_NOPROC : RTID__SCAN_ERROR;
		out->err = -errno;
		close(rootfd);
		return;
	}
	walk_tasks(rootfd, taskfd, pid, m, &w);
	classify(rootfd, taskfd, pid, m, &w, out);
	close(taskfd);
	close(rootfd);
}
