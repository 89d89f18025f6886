/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Restore tids asked ahead, many in one request to rtid serve, each answer
 * used only for the process it was given for: a frozen tree's tasks are
 * bound by the freeze (seized, none reaped: no pid reused); a running
 * tree's by a pidfd taken first (a live process's pid is its own), for the
 * first AHEAD_FDS only (CRIU's own fds take the top of its range), else by
 * the start time read first (a kernel without pidfd_open, before 5.3, or
 * the fds spent): the pid reused by another process starts later. */
#include <errno.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "basic/basic.h"
#include "plugin/plugin.h"
#include "proto/serve-proto.h"

#define AHEAD_FDS 512

struct ahead {
	int pid, tid;             /* tid > 0, 0 none, -1 failed (said), -2 not answered: ask alone */
	int pidfd;                /* -1: none */
	unsigned long long start; /* without a pidfd: the start time read first (0: unknown) */
	bool frozen;              /* asked of a frozen tree: bound by the freeze */
};
static struct ahead ahead[PLUG_TASKS_MAX];
static size_t nahead;
static double ahead_s;

double plug_ahead_s(void)
{
	return ahead_s;
}

void plug_tree_charge(double s)
{
	ahead_s += s;
}

/* What binds an answer for pids[i] to its process, taken before the
 * question (pidfd_open sets close-on-exec). */
static void bind_to(struct ahead *a, size_t i)
{
	a->pidfd = a->frozen || i >= AHEAD_FDS ? -1 : (int)syscall(SYS_pidfd_open, a->pid, 0);
	if (!a->frozen && a->pidfd < 0 && rtid__start_time_read(NULL, a->pid, &a->start) < 0)
		a->start = 0;
}

/* Whether the process asked about still has the pid (false when it cannot
 * be told). */
static bool same_process(const struct ahead *a)
{
	struct pollfd p = { .fd = a->pidfd, .events = POLLIN };
	unsigned long long now;

	if (a->frozen)
		return true;
	if (a->pidfd >= 0)
		return poll(&p, 1, 0) == 0;
	return a->start != 0 && rtid__start_time_read(NULL, a->pid, &now) == 0 && now == a->start;
}

void plug_ahead_ask(const int *pids, size_t n, bool frozen)
{
	static int values[PLUG_TASKS_MAX];
	static enum plug_ans ans[PLUG_TASKS_MAX];
	static char msgs[PLUG_TASKS_MAX][160];
	double t0 = rtid__now();

	plug_ahead_clear();
	if (n > PLUG_TASKS_MAX)
		return;
	for (size_t i = 0; i < n; i++) {
		ahead[i] = (struct ahead){ .pid = pids[i], .tid = -2, .frozen = frozen };
		bind_to(&ahead[i], i);
	}
	plug_serve_batch(RTID__OP_RESTORE_TID, pids, n, ans, values, msgs);
	for (size_t i = 0; i < n; i++) {
		if (ans[i] == ANS_NONE) {
			ahead[i].tid = 0;
		} else if (ans[i] == ANS_VALUE) {
			ahead[i].tid = values[i];
		} else if (ans[i] == ANS_FAILED) {
			plug_log(PLUG_ERR, "pid %d: no restore tid: %s\n", pids[i], msgs[i]);
			ahead[i].tid = -1;
		}
	}
	nahead = n;
	ahead_s += rtid__now() - t0;
}

void plug_ahead_tree(bool (*skip)(int pid))
{
	static int pids[PLUG_TASKS_MAX];
	size_t n = plug_criu_tasks(pids, PLUG_TASKS_MAX), k = 0;

	plug_ahead_clear();
	if (n > PLUG_TASKS_MAX) /* each asked alone, in its own call */
		return;
	for (size_t i = 0; i < n; i++)
		if (!skip(pids[i]))
			pids[k++] = pids[i];
	plug_ahead_ask(pids, k, true);
}

void plug_ahead_below(int pid)
{
	static int pids[PLUG_TASKS_MAX];
	size_t n = plug_descendants(pid, pids, PLUG_TASKS_MAX);

	plug_ahead_clear();
	if (n > 1 && n <= PLUG_TASKS_MAX) /* pid itself is asked alone, as it is asked now */
		plug_ahead_ask(pids + 1, n - 1, false);
}

void plug_ahead_clear(void)
{
	for (size_t i = 0; i < nahead; i++)
		if (ahead[i].pidfd >= 0)
			close(ahead[i].pidfd);
	nahead = 0;
}

int plug_ahead_tid(int pid, bool none_only)
{
	for (size_t i = 0; i < nahead; i++) {
		const struct ahead *a = &ahead[i];

		if (a->pid != pid)
			continue;
		/* Not answered, or not of the kind wanted, or the pid is another
		 * process's now: asked alone. */
		if (a->tid == -2 || (none_only && a->tid != 0) || !same_process(a))
			break;
		/* The rule of every answer: a tid is a live thread of its process. */
		if (a->tid > 0 && !plug_thread_of(pid, a->tid)) {
			plug_log(PLUG_ERR, "pid %d: restore tid %d is no thread of it\n", pid,
				 a->tid);
			return -1;
		}
		return a->tid;
	}
	return plug_restore_tid(pid);
}
