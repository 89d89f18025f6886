/* The resolver: per pid, what the mode asks of the scan and of the driver,
 * and how the two answers combine. Driver queries of a batch run together
 * (driver.c); scans are quick and run in order. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "basic/basic.h"
#include "core/core.h"
#include "rules/rules.h"

/* Resolve's own error, before any source: pid names no process under the
 * proc root (tgid 0), or is a thread of process tgid. */
static void not_a_process(const struct rtid_ctx *ctx, int pid, int tgid, struct rtid_result *r)
{
	r->tid = 0;
	r->error = tgid > 0 ? RTID_ERR_NOT_A_PROCESS : RTID_ERR_NO_SUCH_PROCESS;
	if (tgid > 0)
		snprintf(r->detail, sizeof(r->detail), "%d is a thread of process %d, not a process",
			 pid, tgid);
	else
		snprintf(r->detail, sizeof(r->detail), "no process %d under %s", pid, ctx->proc_root);
}

static struct rtid__trust trust_of(const struct rtid_ctx *ctx)
{
	return (struct rtid__trust){ .attested = ctx->attested, .revoked = ctx->revoked,
				     .allow_unattested = ctx->cfg.allow_unattested,
				     .version_mismatch = ctx->version_mismatch };
}

static enum rtid_source driver_source(const struct rtid_ctx *ctx)
{
	if (ctx->cfg.backend == RTID_BACKEND_SERVICE)
		return RTID_SRC_SERVICE;
	return ctx->cfg.backend == RTID_BACKEND_API ? RTID_SRC_API : RTID_SRC_TOOL;
}

/* Scan pid into r and s; returns false when the process is missing, which
 * ends the pid with an error and no driver query. */
static bool scan_into(struct rtid_ctx *ctx, int pid, struct rtid_result *r, struct rtid__scan *s)
{
	rtid__scan(ctx->proc_root, pid, &ctx->matcher, s);
	r->scan_candidates = s->candidates;
	r->scan_tid = s->status == RTID__SCAN_FOUND ? s->tid : 0;
	if (s->status != RTID__SCAN_NOPROC)
		return true;
	r->scan_candidates = -1;
	not_a_process(ctx, pid, 0, r);
	return false;
}

/* The scan, and its answer when it names the thread; returns whether the
 * driver must be asked. */
static bool scan_first(struct rtid_ctx *ctx, int pid, struct rtid_result *r,
		       struct rtid__scan *s)
{
	if (!scan_into(ctx, pid, r, s))
		return false;
	r->fallback = rtid__scan_fallback(s);
	if (r->fallback != RTID_FB_NONE)
		return true;
	r->tid = s->tid;
	r->source = RTID_SRC_SCAN;
	return false;
}

/* The number must name a process before anything acts on it: the kernel
 * also serves a thread as <proc>/<tid> (not listed), and cuda-checkpoint
 * acting on a tid can harm the real process. The request rule (rules/)
 * settles it, as at every entry point; the library asks as its caller, whom
 * the kernel and the driver check. Returns false after setting the error; a
 * status that cannot be read for another reason (EACCES under hidepid)
 * leaves the question to the driver. */
static bool is_process(struct rtid_ctx *ctx, int pid, struct rtid_result *r)
{
	struct rtid__req_facts f = { .kind = RTID__REQ_QUERY };

	rtid__request_facts(ctx->proc_root, pid, &f);
	switch (rtid__request_rule(&f)) {
	case RTID__REQ_NO_PROCESS:
		not_a_process(ctx, pid, 0, r);
		return false;
	case RTID__REQ_A_THREAD:
		not_a_process(ctx, pid, f.tgid, r);
		return false;
	default:
		return true;
	}
}

/* Do the scan half of a plan; returns whether the driver must be asked. */
static bool follow(struct rtid_ctx *ctx, enum rtid__plan p, int pid, struct rtid_result *r,
		   struct rtid__scan *s)
{
	struct rtid__trust t = trust_of(ctx);

	switch (p) {
	case RTID__PLAN_UNTRUSTED:
		r->fallback = rtid__untrusted_why(&t);
		return true;
	case RTID__PLAN_SCAN_FIRST:
		return scan_first(ctx, pid, r, s);
	case RTID__PLAN_BOTH:
		return scan_into(ctx, pid, r, s);
	case RTID__PLAN_DRIVER:
		break;
	}
	return true;
}

/* Fill what needs no driver; returns whether the driver must be asked. */
static bool plan(struct rtid_ctx *ctx, enum rtid_mode mode, bool trusted, int pid,
		 struct rtid_result *r, struct rtid__scan *s)
{
	double t0 = rtid__now();
	bool need = true;

	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->scan_candidates = -1;
	if (!is_process(ctx, pid, r))
		need = false;
	else
		need = follow(ctx, rtid__plan_for(mode, trusted), pid, r, s);
	if (need)
		r->source = driver_source(ctx);
	r->ms = (rtid__now() - t0) * 1000.0;
	return need;
}

static void verdict(enum rtid_mode mode, struct rtid_result *r, const struct rtid__scan *s)
{
	if (rtid__plan_for(mode, false) == RTID__PLAN_BOTH && r->error == RTID_OK)
		r->crosscheck = rtid__crosscheck(s, r->tid);
}

/* Who a pid was when it was asked about: its start time, when the proc root
 * shows one (a pid reused is another process). */
struct ident {
	bool known;
	unsigned long long start;
};

struct batch {
	struct rtid_ctx *ctx;
	double deadline;
	const int *pids;
	struct rtid_result *out;
	struct rtid__scan *scans;
	bool *need;
	struct rtid__answer *ans; /* the driver's, for the pids that need it */
	struct ident *ids;
};

/* Whether pid is still the process id was: false only when a start time was
 * known and the pid now has another one, or none (it exited). */
static bool same_process(const struct rtid_ctx *ctx, int pid, const struct ident *id)
{
	unsigned long long now;

	return !id->known || (rtid_proc_start_time(ctx->proc_root, pid, &now) == 0 &&
			      now == id->start);
}

static void changed(struct rtid_result *r)
{
	r->tid = 0;
	r->error = RTID_ERR_PROCESS_CHANGED;
	snprintf(r->detail, sizeof(r->detail), "process %d exited, or its pid was reused, while "
		 "it was asked about (its start time changed)", r->pid);
}

/* The driver's answer into the result, whose source plan() has set. An
 * answer is about the process asked about, or it is an error: a process that
 * changed meanwhile (its pid reused) gets process-changed, and a tid is
 * returned only as a live thread of it: a driver or tool that names another
 * number (1, a thread of another process, one gone) gives not-a-thread. */
static void take_answer(const struct rtid_ctx *ctx, struct rtid_result *r,
			const struct rtid__answer *a, const struct ident *id)
{
	int e;

	r->tid = a->tid;
	r->error = a->error;
	r->code = a->code;
	r->ms += a->ms;
	memcpy(r->detail, a->detail, sizeof(r->detail));
	if (r->error == RTID_OK && !same_process(ctx, r->pid, id)) {
		changed(r);
		return;
	}
	if (r->tid <= 0 || (e = rtid__thread_of(ctx->proc_root, r->pid, r->tid)) == 0)
		return;
	snprintf(r->detail, sizeof(r->detail), "the driver named tid %d, %s", r->tid,
		 e == -EXDEV ? "a thread of another process" :
		 e == -ESRCH ? "which is no thread" : "whose status cannot be read");
	r->error = RTID_ERR_NOT_A_THREAD;
	r->tid = 0;
}

/* Resolve pids [from, to) in one mode. */
static void run_group(struct batch *b, size_t from, size_t to, enum rtid_mode mode,
		      bool trusted, enum rtid_fallback why)
{
	for (size_t i = from; i < to; i++) {
		b->need[i] = plan(b->ctx, mode, trusted, b->pids[i], &b->out[i], &b->scans[i]);
		if (why != RTID_FB_NONE && b->out[i].fallback == RTID_FB_NONE &&
		    b->out[i].source != RTID_SRC_SCAN)
			b->out[i].fallback = why;
	}
	/* Right before the driver is asked: a pid reused since it was planned is
	 * never asked about. */
	for (size_t i = from; i < to; i++)
		if (b->need[i] && !same_process(b->ctx, b->pids[i], &b->ids[i])) {
			changed(&b->out[i]);
			b->need[i] = false;
		}
	memset(b->ans + from, 0, (to - from) * sizeof(*b->ans));
	rtid__driver_batch(&b->ctx->drv, b->pids + from, b->need + from, to - from, b->ans + from,
			   b->deadline);
	for (size_t i = from; i < to; i++) {
		if (b->need[i])
			take_answer(b->ctx, &b->out[i], &b->ans[i], &b->ids[i]);
		verdict(mode, &b->out[i], &b->scans[i]);
	}
}

/* Canary: cross-check pids one by one until one gives a verdict on the naming
 * (agree or mismatch); then the rest go by scan, or all by the driver. */
static void run_canary(struct batch *b, size_t n)
{
	struct rtid__trust t = trust_of(b->ctx);

	if (!rtid__canary_may_try(&t)) {
		run_group(b, 0, n, RTID_MODE_DRIVER, false, rtid__untrusted_why(&t));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		run_group(b, i, i + 1, RTID_MODE_CROSSCHECK, false, RTID_FB_NONE);
		switch (rtid__canary_next(b->out[i].crosscheck)) {
		case RTID__CANARY_SCAN_REST:
			run_group(b, i + 1, n, RTID_MODE_SCAN, true, RTID_FB_NONE);
			return;
		case RTID__CANARY_DRIVER_REST:
			run_group(b, i + 1, n, RTID_MODE_DRIVER, false, RTID_FB_CANARY_MISMATCH);
			return;
		case RTID__CANARY_NEXT_PID:
			break;
		}
	}
}

/* Results of another size than this library's (a caller built with an older
 * or newer header) are worked out in an array of ours, then copied out. */
static void results_out(const struct rtid_ctx *ctx, const struct rtid_result *r, size_t n,
			struct rtid_result *out)
{
	size_t stride = ctx->cfg.result_size;
	size_t keep = stride < sizeof(*r) ? stride : sizeof(*r);

	for (size_t i = 0; i < n; i++) {
		unsigned char *slot = (unsigned char *)out + i * stride;

		memcpy(slot, &r[i], keep);
		memset(slot + keep, 0, stride - keep);
	}
}

static void batch_free(struct batch *b, struct rtid_result *caller)
{
	if (b->out != caller)
		free(b->out);
	free(b->ans);
	free(b->scans);
	free(b->need);
	free(b->ids);
}

int rtid_resolve_many(struct rtid_ctx *ctx, const int *pids, size_t n, struct rtid_result *out)
{
	struct batch b = { ctx, 0, pids, out, NULL, NULL, NULL, NULL };
	struct rtid__trust t;
	bool trusted;

	if (!ctx || (n && (!pids || !out)))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (pids[i] <= 0)
			return -EINVAL;
	b.scans = calloc(n ? n : 1, sizeof(*b.scans));
	b.need = calloc(n ? n : 1, sizeof(*b.need));
	b.ans = calloc(n ? n : 1, sizeof(*b.ans));
	b.ids = calloc(n ? n : 1, sizeof(*b.ids));
	if (ctx->cfg.result_size != sizeof(*out))
		b.out = calloc(n ? n : 1, sizeof(*out));
	if (!b.scans || !b.need || !b.ans || !b.ids || (n && !b.out)) {
		batch_free(&b, out);
		return -ENOMEM;
	}
	if (ctx->cfg.deadline_s > 0)
		b.deadline = rtid__now() + ctx->cfg.deadline_s;
	/* Who each pid is, taken once, when the request arrives. */
	for (size_t i = 0; i < n; i++)
		b.ids[i].known = rtid_proc_start_time(ctx->proc_root, pids[i], &b.ids[i].start) == 0;
	t = trust_of(ctx);
	trusted = rtid__scan_trusted(&t);
	if (ctx->cfg.mode == RTID_MODE_CANARY)
		run_canary(&b, n);
	else
		run_group(&b, 0, n, ctx->cfg.mode, trusted, RTID_FB_NONE);
	rtid__driver_end(&ctx->drv);
	if (b.out != out)
		results_out(ctx, b.out, n, out);
	batch_free(&b, out);
	return 0;
}

int rtid_resolve(struct rtid_ctx *ctx, int pid, struct rtid_result *out)
{
	return rtid_resolve_many(ctx, &pid, 1, out);
}
