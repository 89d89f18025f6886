/* The record of work in flight, <socket>.inflight beside the socket: which
 * processes have a call inside the driver, so that a daemon started after
 * this one (a crash, a restart, a stop that left a stuck worker) sends
 * nothing for them to the driver until that call is over. A worker stuck in
 * the kernel outlives its daemon: the SIGKILL that its daemon's death sends
 * it (PR_SET_PDEATHSIG) takes effect only when the call returns. Each worker
 * leads its own process group, so only this record names them.
 *
 * After the line "rtid-inflight 1", one line per call: "WORKER WSTART
 * PROCESS PSTART", pids and /proc start times (PSTART 0: unknown). Written
 * whole to a new file and renamed over the old one before each hand-over
 * that changes it, mode 0600; removed at exit when nothing is left in the
 * driver. Read at start only from a directory of ours (or root's) and a
 * regular file of ours that no one else may write; an entry counts only
 * when its worker is still the same process (pid and start time, checked
 * after its pidfd is open, so a pid reused meanwhile is never taken for it)
 * and its process has not been replaced. Such a worker is watched with its
 * pidfd (where there is none, as under valgrind, by its start time every
 * NO_PIDFD_CHECK seconds) and its process held until it has exited. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rtid.h"
#include "serve/serve.h"

#define RECORD_HEAD "rtid-inflight 1\n"
#define RECORD_MAX 65536
#define LINE_MAX_LEN 88       /* four numbers of at most 20 digits, their spaces */
#define NO_PIDFD_CHECK 0.25   /* seconds between looks at a held worker without a pidfd */

/* Whether st may be trusted: a directory of ours or root's, or a regular
 * file of ours with one name; either writable by its owner alone. */
static bool ours_alone(const struct stat *st, bool dir)
{
	uid_t me = geteuid();

	if (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode) || st->st_nlink != 1)
		return false;
	return (st->st_uid == me || (dir && st->st_uid == 0)) && !(st->st_mode & 022);
}

/* The record's directory (the socket's), trusted, and its name there; -1
 * and said once when it cannot be trusted. */
static int open_dir(struct server *s)
{
	const char *path = s->cfg->socket_path, *slash = strrchr(path, '/');
	char dir[4096];
	struct stat st;
	int fd;

	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	snprintf(s->record, sizeof(s->record), "%.280s.inflight", slash ? slash + 1 : path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && ours_alone(&st, true))
		return fd;
	serve_log(SLOG_WARNING "%s: %s: no record of work in flight is kept, and a daemon started "
		  "after this one will not know of calls it leaves inside the driver", dir,
		  fd < 0 ? strerror(errno) : "not a directory of ours alone");
	if (fd >= 0)
		close(fd);
	return -1;
}

/* One decimal of the record and the character after it, sep: 0 and *out
 * (and *p past sep), else -EINVAL. */
static int number(const char **p, const char *end, char sep, unsigned long long *out)
{
	const char *q = *p;
	unsigned long long v = 0;

	if (q == end || *q < '0' || *q > '9')
		return -EINVAL;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		if (v > (~0ULL - 9) / 10)
			return -EINVAL;
		v = v * 10 + (unsigned)(*q - '0');
	}
	if (q == end || *q != sep)
		return -EINVAL;
	*p = q + 1;
	*out = v;
	return 0;
}

/* Hold the call of one entry (worker, its start, process, its start) when
 * its worker is still that process and its process has not been replaced. */
static void take(struct server *s, const unsigned long long v[4])
{
	struct sheld h = { .pid = (pid_t)v[0], .start = v[1], .process = (int)v[2],
			   .pstart = v[3], .pidfd = -1 };
	unsigned long long now;

	if (v[0] == 0 || v[0] > INT_MAX || v[1] == 0 || v[2] == 0 || v[2] > INT_MAX ||
	    s->nheld == HELD_MAX)
		return;
	/* The pidfd first, then the start time: a pid reused in between shows
	 * another start time, and then the pidfd is not the worker's. */
	h.pidfd = (int)syscall(SYS_pidfd_open, h.pid, 0);
	if ((h.pidfd < 0 && errno == ESRCH) || rtid_proc_start_time("/proc", h.pid, &now) < 0 ||
	    now != h.start ||
	    (h.pstart && rtid_proc_start_time(s->cfg->proc_root, h.process, &now) == 0 &&
	     now != h.pstart)) {
		if (h.pidfd >= 0)
			close(h.pidfd);
		return;
	}
	s->held[s->nheld++] = h;
	serve_log(SLOG_WARNING "process %d has a call inside the driver from a previous daemon "
		  "(worker pid %d): nothing for it goes to the driver until that worker has exited",
		  h.process,
		  (int)h.pid);
}

/* Parse the record's text and take each entry; a malformed one ends it. */
static void parse(struct server *s, const char *buf, size_t n)
{
	const char *p = buf + strlen(RECORD_HEAD), *end = buf + n;

	if (n < strlen(RECORD_HEAD) || memcmp(buf, RECORD_HEAD, strlen(RECORD_HEAD))) {
		serve_log(SLOG_WARNING "%s: not a record of work in flight; ignored", s->record);
		return;
	}
	while (p < end) {
		unsigned long long v[4];

		if (number(&p, end, ' ', &v[0]) < 0 || number(&p, end, ' ', &v[1]) < 0 ||
		    number(&p, end, ' ', &v[2]) < 0 || number(&p, end, '\n', &v[3]) < 0) {
			serve_log(SLOG_WARNING "%s: a malformed line; the rest is ignored", s->record);
			return;
		}
		take(s, v);
	}
}

void si_load(struct server *s)
{
	struct stat st;
	char *buf;
	size_t n = 0;
	ssize_t r = 1;
	int fd;

	if ((s->record_dir = open_dir(s)) < 0)
		return;
	fd = openat(s->record_dir, s->record, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			serve_log(SLOG_WARNING "cannot read %s: %s", s->record, strerror(errno));
		return;
	}
	buf = malloc(RECORD_MAX);
	if (fstat(fd, &st) < 0 || !ours_alone(&st, false)) {
		serve_log(SLOG_WARNING "%s: not a regular file of ours alone; ignored", s->record);
		r = -1;
	}
	while (buf && r > 0 && n < RECORD_MAX)
		if ((r = read(fd, buf + n, RECORD_MAX - n)) > 0)
			n += (size_t)r;
	close(fd);
	if (buf && r == 0)
		parse(s, buf, n);
	else if (r >= 0)
		serve_log(SLOG_WARNING "cannot read %s: %s", s->record, buf ? "too long" : strerror(ENOMEM));
	free(buf);
}

static size_t line(char *buf, size_t at, pid_t pid, unsigned long long start, int process,
		   unsigned long long pstart)
{
	return at + (size_t)snprintf(buf + at, LINE_MAX_LEN, "%d %llu %d %llu\n", (int)pid, start,
				     process, pstart);
}

/* The record's text now: NULL without memory; just the head when empty. */
static char *text(const struct server *s, const struct sheld *extra)
{
	size_t lines = s->nheld + 1, cap, n; /* + 1: extra */
	char *buf;

	for (unsigned k = 0; k < s->pool.n; k++) {
		const struct sworker *w = &s->pool.w[k];

		lines += !w->busy ? 0 : w->job.batch ? w->job.batch->n : 1;
		for (size_t r = 0; r < sizeof(w->reap) / sizeof(w->reap[0]); r++)
			lines += w->reap[r] > 0 && w->reap_process[r];
	}
	cap = sizeof(RECORD_HEAD) + lines * LINE_MAX_LEN;
	buf = malloc(cap);

	if (!buf)
		return NULL;
	n = (size_t)snprintf(buf, cap, "%s", RECORD_HEAD);
	for (unsigned k = 0; k < s->pool.n; k++) {
		const struct sworker *w = &s->pool.w[k];

		if (w->busy && w->job.batch) { /* each of its pids until answered */
			const struct sbatch *b = w->job.batch;

			for (size_t j = b->cur; j < b->n; j++)
				if (b->sent[j] && !b->done[j])
					n = line(buf, n, w->pid, w->start, b->process[j],
						 b->known[j] ? b->start[j] : 0);
		} else if (w->busy) {
			n = line(buf, n, w->pid, w->start, w->job.process, w->job.pstart);
		}
		for (size_t r = 0; r < sizeof(w->reap) / sizeof(w->reap[0]); r++)
			if (w->reap[r] > 0 && w->reap_process[r])
				n = line(buf, n, w->reap[r], w->reap_start[r], w->reap_process[r],
					 w->reap_pstart[r]);
	}
	for (unsigned j = 0; j < s->nheld; j++)
		n = line(buf, n, s->held[j].pid, s->held[j].start, s->held[j].process,
			 s->held[j].pstart);
	if (extra)
		line(buf, n, extra->pid, extra->start, extra->process, extra->pstart);
	return buf;
}

int si_write(struct server *s, const struct sheld *extra)
{
	char tmp[sizeof(s->record) + 8], *buf;
	size_t len;
	int fd, e = 0;

	if (s->record_dir < 0)
		return 0;
	if (!(buf = text(s, extra)))
		return -ENOMEM;
	if (s->written && !strcmp(buf, s->written)) {
		free(buf);
		return 0;
	}
	len = strlen(buf);
	snprintf(tmp, sizeof(tmp), "%s.new", s->record);
	if (len == strlen(RECORD_HEAD)) { /* nothing in the driver: no record */
		if (unlinkat(s->record_dir, s->record, 0) < 0 && errno != ENOENT)
			e = -errno;
	} else if ((fd = openat(s->record_dir, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
				O_CLOEXEC, 0600)) < 0) {
		e = -errno;
	} else {
		if (write(fd, buf, len) != (ssize_t)len)
			e = errno ? -errno : -EIO;
		if (close(fd) < 0 && !e)
			e = -errno;
		if (!e && renameat(s->record_dir, tmp, s->record_dir, s->record) < 0)
			e = -errno;
		if (e)
			unlinkat(s->record_dir, tmp, 0);
	}
	if (e) {
		serve_log_limited(SLOG_LIMIT, "cannot write %s: %s; not handing over", s->record,
				  strerror(-e));
		free(buf);
		return e;
	}
	free(s->written);
	s->written = buf;
	return 0;
}

bool sv_in_driver(const struct server *s, int process)
{
	for (unsigned k = 0; k < s->pool.n; k++) {
		const struct sworker *w = &s->pool.w[k];

		const struct sbatch *b = w->busy ? w->job.batch : NULL;

		if (w->busy && w->job.process == process)
			return true;
		/* A batch's pids not answered yet: in the driver, or queued in the
		 * worker's socket to be. */
		for (size_t j = b ? b->cur : 0; b && j < b->n; j++)
			if (b->sent[j] && !b->done[j] && b->process[j] == process)
				return true;
		for (size_t r = 0; r < sizeof(w->reap) / sizeof(w->reap[0]); r++)
			if (w->reap[r] > 0 && w->reap_process[r] == process)
				return true;
	}
	for (unsigned j = 0; j < s->nheld; j++)
		if (s->held[j].process == process)
			return true;
	return false;
}

void si_check(struct server *s)
{
	s->held_check_at = 0;
	for (unsigned j = 0; j < s->nheld;) {
		struct sheld *h = &s->held[j];
		unsigned long long now;
		bool gone;

		if (h->pidfd >= 0)
			gone = poll(&(struct pollfd){ .fd = h->pidfd, .events = POLLIN }, 1, 0) != 0;
		else
			gone = rtid_proc_start_time("/proc", h->pid, &now) < 0 || now != h->start;
		if (!gone) {
			if (h->pidfd < 0)
				s->held_check_at = rtid__now() + NO_PIDFD_CHECK;
			j++;
			continue;
		}
		serve_log("the previous daemon's worker pid %d has exited: process %d is served again",
			  (int)h->pid, h->process);
		if (h->pidfd >= 0)
			close(h->pidfd);
		*h = s->held[--s->nheld];
	}
}

void si_close(struct server *s)
{
	si_check(s);
	if (s->record_dir >= 0) {
		char *left = text(s, NULL);

		/* What is still in the driver stays recorded for the next daemon. */
		if (left && strcmp(left, RECORD_HEAD))
			serve_log(SLOG_WARNING "calls still inside the driver at exit are in %s for the next "
				  "daemon", s->record);
		free(left);
		if (si_write(s, NULL) < 0)
			serve_log(SLOG_WARNING "the record of work in flight may be stale: the next daemon "
				  "checks each worker it names");
		close(s->record_dir);
		s->record_dir = -1;
	}
	for (unsigned j = 0; j < s->nheld; j++)
		if (s->held[j].pidfd >= 0)
			close(s->held[j].pidfd);
	s->nheld = 0;
	free(s->written);
	s->written = NULL;
}
