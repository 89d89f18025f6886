/* cuda-checkpoint as a source of the driver's answer: up to d->jobs children
 * at once, each under its timeout, all under the batch deadline, and what
 * each one did read as an answer. Only exit 0 with one positive decimal on stdout is a
 * tid; exit 1 or 3 is the driver's "no restore thread"; all else is an error. */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "driver/driver.h"
#include "rules/rules.h"

/* A printable excerpt of foreign bytes for an error message; one that does
 * not fit ends at a word's end with "..." rather than inside a word. */
static void excerpt(const char *buf, size_t len, char *out, size_t outlen)
{
	size_t o = 0, i = 0;

	for (; i < len && o + 8 < outlen; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n' && i + 1 == len) {
			i = len;
			break;
		}
		if (c >= 0x20 && c < 0x7f)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
	}
	out[o] = '\0';
	if (i < len) { /* cut: back to the last space, if the excerpt keeps some words */
		char *sp = strrchr(out, ' ');

		if (sp && sp - out > (ptrdiff_t)(o / 2))
			*sp = '\0';
		strcat(out, "...");
	}
}

static void interpret_exit0(const struct rtid__child *c, struct rtid__answer *r)
{
	char ex[64];
	int tid;

	if (c->out_overflow) {
		rtid__answer_fail(r, RTID_ERR_BAD_OUTPUT, "stdout longer than %d bytes",
				RTID__OUT_MAX);
		return;
	}
	if (rtid__parse_tid(c->out, c->out_len, &tid) < 0) {
		excerpt(c->out, c->out_len, ex, sizeof(ex));
		rtid__answer_fail(r, RTID_ERR_BAD_OUTPUT, "stdout is not one positive number: \"%s\"",
				ex);
		return;
	}
	r->tid = tid;
}

void rtid__tool_interpret(const struct rtid__child *c, struct rtid__answer *r)
{
	char ex[sizeof(r->detail) - 32]; /* room for "cuda-checkpoint exit N: " */
	int code;

	if (c->timed_out) {
		rtid__answer_fail(r, RTID_ERR_TIMEOUT, "cuda-checkpoint did not finish in time");
		return;
	}
	r->code = WIFSIGNALED(c->status) ? -WTERMSIG(c->status) : WEXITSTATUS(c->status);
	if (WIFSIGNALED(c->status)) {
		rtid__answer_fail(r, RTID_ERR_TOOL_CRASHED, "cuda-checkpoint killed by signal %d (%s)",
				WTERMSIG(c->status), sigabbrev_np(WTERMSIG(c->status)) ?: "?");
		return;
	}
	code = WEXITSTATUS(c->status);
	if (rtid__driver_said(code) == RTID__SAID_TID)
		interpret_exit0(c, r);
	else if (rtid__driver_said(code) == RTID__SAID_NONE)
		r->tid = 0;
	else {
		excerpt(c->err_len ? c->err : c->out, c->err_len ? c->err_len : c->out_len, ex,
			sizeof(ex));
		rtid__answer_fail(r, RTID_ERR_TOOL_FAILED, "cuda-checkpoint exit %d: %s", code, ex);
	}
}

struct slot {
	struct rtid__child child;
	size_t idx;   /* which pid */
	bool busy;
	double start; /* monotonic seconds */
};

/* Out of fds or processes: passes once a running child has ended. */
static bool transient(int e)
{
	return e == -EMFILE || e == -ENFILE || e == -EAGAIN || e == -ENOMEM;
}

/* Start the query for pid. Returns 0; or the errno, the result then carrying
 * the error (for a transient one the caller may retry instead). */
static int start_query(struct rtid__driver *d, struct slot *s, int pid, struct rtid__answer *r)
{
	char pidstr[16];
	char *argv[] = { d->tool_path, "--get-restore-tid", "--pid", pidstr, NULL };
	int e;

	memset(r, 0, sizeof(*r)); /* a retry after a transient failure starts clean */
	if (!d->tool_path) {
		const char *name = d->tool_name ? d->tool_name : "cuda-checkpoint";

		rtid__answer_fail(r, RTID_ERR_TOOL_NOT_FOUND, strchr(name, '/') ? "%s: no such "
				"executable" : "no %s on PATH", name);
		return -ENOENT;
	}
	snprintf(pidstr, sizeof(pidstr), "%d", pid);
	s->start = rtid__now();
	e = rtid__child_start(&s->child, d->tool_path, argv, d->timeout_s);
	if (e == -ENOENT)
		rtid__answer_fail(r, RTID_ERR_TOOL_NOT_FOUND, "%s: no such file", d->tool_path);
	else if (e < 0)
		rtid__answer_fail(r, RTID_ERR_SPAWN_FAILED, "%s: %s", d->tool_path, strerror(-e));
	return e;
}

static bool past(double deadline)
{
	return deadline > 0 && rtid__now() >= deadline;
}

/* Give a free slot the next pid that needs the driver. Returns false when
 * there is none left (or the deadline passed), or when the pid could not be
 * started for want of fds or processes while others run (*wait set: the pid
 * is retried once one of them has ended). */
static bool fill(struct rtid__driver *d, struct slot *s, const int *pids, const bool *need,
		 size_t n, size_t *next, struct rtid__answer *out, double deadline,
		 size_t running, bool *wait)
{
	while (*next < n && !past(deadline)) {
		size_t i = (*next)++;
		int e;

		if (!need[i])
			continue;
		e = start_query(d, s, pids[i], &out[i]);
		if (e == 0) {
			s->idx = i;
			s->busy = true;
			return true;
		}
		if (transient(e) && running > 0) {
			(*next)--;
			*wait = true;
			return false;
		}
	}
	return false;
}

static void finish(struct slot *s, struct rtid__answer *out)
{
	rtid__tool_interpret(&s->child, &out[s->idx]);
	out[s->idx].ms += (rtid__now() - s->start) * 1000.0;
	s->busy = false;
}

static void deadline_all(struct slot *slots, size_t jobs, const bool *need, size_t next,
			 size_t n, struct rtid__answer *out)
{
	for (size_t j = 0; j < jobs; j++) {
		if (!slots[j].busy)
			continue;
		rtid__child_abort(&slots[j].child, false);
		slots[j].busy = false;
		rtid__answer_fail(&out[slots[j].idx], RTID_ERR_DEADLINE,
				"batch deadline passed during the driver query");
	}
	for (size_t i = next; i < n; i++)
		if (need[i])
			rtid__answer_fail(&out[i], RTID_ERR_DEADLINE,
					  "batch deadline passed before the driver query");
}

static void tool_batch(struct rtid__driver *d, const int *pids, const bool *need, size_t n,
		       struct rtid__answer *out, double deadline)
{
	struct slot slots[RTID__MAX_CHILDREN] = { 0 };
	struct rtid__child *cv[RTID__MAX_CHILDREN];
	size_t jobs = d->jobs, next = 0;

	for (;;) {
		size_t nact = 0, running = 0;
		bool wait = false;

		for (size_t j = 0; j < jobs; j++)
			running += slots[j].busy;
		for (size_t j = 0; j < jobs; j++) {
			if (!slots[j].busy && !wait &&
			    fill(d, &slots[j], pids, need, n, &next, out, deadline, running, &wait))
				running++;
			if (slots[j].busy)
				cv[nact++] = &slots[j].child;
		}
		if (nact == 0)
			break;
		if (rtid__children_wait(cv, nact, deadline, true))
			break;
		for (size_t j = 0; j < jobs; j++)
			if (slots[j].busy && rtid__child_done(&slots[j].child))
				finish(&slots[j], out);
	}
	/* Whatever is still running or not started has met the deadline. */
	deadline_all(slots, jobs, need, next, n, out);
}

const struct rtid__backend rtid__tool_backend = { .batch = tool_batch, .end = NULL };
