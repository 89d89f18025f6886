/* The driver's answers for a batch: up to cfg.jobs cuda-checkpoint children at
 * once, each under its timeout, all under the batch deadline. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

void rtid__answer_fail(struct rtid__answer *a, enum rtid_error e, const char *fmt, ...)
{
	va_list ap;

	a->error = e;
	a->tid = 0;
	va_start(ap, fmt);
	vsnprintf(a->detail, sizeof(a->detail), fmt, ap);
	va_end(ap);
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
static int start_query(struct rtid_ctx *ctx, struct slot *s, int pid, struct rtid__answer *r)
{
	char pidstr[16];
	char *argv[] = { ctx->tool_path, "--get-restore-tid", "--pid", pidstr, NULL };
	int e;

	memset(r, 0, sizeof(*r)); /* a retry after a transient failure starts clean */
	if (!ctx->tool_path) {
		const char *name = ctx->tool_name ? ctx->tool_name : "cuda-checkpoint";

		rtid__answer_fail(r, RTID_ERR_TOOL_NOT_FOUND, strchr(name, '/') ? "%s: no such "
				"executable" : "no %s on PATH", name);
		return -ENOENT;
	}
	snprintf(pidstr, sizeof(pidstr), "%d", pid);
	s->start = rtid__now();
	e = rtid__child_start(&s->child, ctx->tool_path, argv, ctx->cfg.timeout_s);
	if (e == -ENOENT)
		rtid__answer_fail(r, RTID_ERR_TOOL_NOT_FOUND, "%s: no such file", ctx->tool_path);
	else if (e < 0)
		rtid__answer_fail(r, RTID_ERR_SPAWN_FAILED, "%s: %s", ctx->tool_path, strerror(-e));
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
static bool fill(struct rtid_ctx *ctx, struct slot *s, const int *pids, const bool *need,
		 size_t n, size_t *next, struct rtid__answer *out, double deadline,
		 size_t running, bool *wait)
{
	while (*next < n && !past(deadline)) {
		size_t i = (*next)++;
		int e;

		if (!need[i])
			continue;
		e = start_query(ctx, s, pids[i], &out[i]);
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

static void tool_batch(struct rtid_ctx *ctx, const int *pids, const bool *need, size_t n,
		       struct rtid__answer *out, double deadline)
{
	struct slot slots[RTID__MAX_CHILDREN] = { 0 };
	struct rtid__child *cv[RTID__MAX_CHILDREN];
	size_t jobs = ctx->cfg.jobs, next = 0;

	for (;;) {
		size_t nact = 0, running = 0;
		bool wait = false;

		for (size_t j = 0; j < jobs; j++)
			running += slots[j].busy;
		for (size_t j = 0; j < jobs; j++) {
			if (!slots[j].busy && !wait &&
			    fill(ctx, &slots[j], pids, need, n, &next, out, deadline, running, &wait))
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

void rtid__driver_batch(struct rtid_ctx *ctx, const int *pids, const bool *need, size_t n,
			struct rtid__answer *out, double deadline)
{
	if (ctx->cfg.backend == RTID_BACKEND_API)
		rtid__api_batch(ctx, pids, need, n, out, deadline);
	else if (ctx->cfg.backend == RTID_BACKEND_SERVICE)
		rtid__service_batch(ctx, pids, need, n, out, deadline);
	else
		tool_batch(ctx, pids, need, n, out, deadline);
}

void rtid__driver_end(struct rtid_ctx *ctx)
{
	rtid__api_end(ctx);
}
