/* The daemon's workers: who runs what, and what their replies become.
 * Requests for different processes run side by side, each worker one attach
 * and one driver call at a time (as separate tool runs would: the driver API
 * promises nothing of concurrent calls in one process). Requests for one
 * process go in arrival order, never two at once. Actions never take the
 * last worker, so a query never waits behind an action on another process;
 * an action that finds no worker free for it is refused at once, before any
 * start, and its client runs the real tool: NCCL-bound processes whose locks
 * wait for each other are then never held back by the daemon's bound. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "proc/proc.h"
#include "serve/serve.h"

void sv_set_ready(struct server *s)
{
	if (!s->ready)
		sl_ready(s->cfg);
	s->ready = true;
}

unsigned sv_busy(const struct server *s, bool actions)
{
	unsigned n = 0;

	for (unsigned k = 0; k < s->pool.n; k++)
		n += s->pool.w[k].busy && (!actions || s->pool.w[k].job.op >= RTID__OP_LOCK);
	return n;
}

/* The client a job answers, or -1 when it has left. */
static int owner(const struct server *s, const struct sjob *j)
{
	return j->client >= 0 && s->c[j->client].fd >= 0 && s->c[j->client].conn == j->conn
	       ? j->client : -1;
}

/* A batch's replies the worker sent before it went down: taken, so that
 * only the pids it never answered are failed. */
static void drain(struct server *s, unsigned k)
{
	struct sworker *w = &s->pool.w[k];
	struct rtid__reply r;

	while (w->busy && w->job.batch && w->state == SW_READY &&
	       recv(w->sock, &r, sizeof(r), MSG_DONTWAIT) == (ssize_t)sizeof(r) &&
	       sb_reply(s, k, &r))
		;
}

void sv_worker_down(struct server *s, unsigned k, const char *reason)
{
	struct sworker *w = &s->pool.w[k];
	char why[200];
	int i;
	bool started;

	drain(s, k);
	i = w->busy ? owner(s, &w->job) : -1;
	started = w->busy && w->job.started;

	s->stats.worker_failures++;
	/* Answered at once, before the worker is gone (a worker stuck in the
	 * kernel may never be): its process stays in the driver (sv_in_driver)
	 * until the worker is reaped, and nothing else for it is handed over
	 * meanwhile. */
	snprintf(why, sizeof(why), "%s", s->pool.why);
	/* Only a failed attach counts for the backoff: a call that hung or
	 * crashed is one process's trouble, and the next request deserves a
	 * fresh worker at once. */
	sw_stop(&s->pool, w, w->state == SW_STARTING ? SW_FAILED : SW_KILL);
	if (w->job.batch) {
		sb_down(s, w, i, reason, why);
	} else if (i >= 0 && started) {
		struct rtid__svc_ans a = { .kind = RTID__SVC_UNKNOWN };

		snprintf(a.name, sizeof(a.name), "%s", reason);
		snprintf(a.text, sizeof(a.text), "started, outcome unknown: %.90s", why);
		sv_answer(s, i, &a);
	} else if (i >= 0) {
		sv_fail(s, i, reason, why);
	}
	serve_log(SLOG_ERR "%s; a new attach %s", why,
		  s->pool.retry_at > rtid__now() ? "after a backoff" : "when needed");
	sv_set_ready(s);
}

/* The answer of a query whose process is still the one asked about, in the
 * client's numbers; else an error. An action is done whatever happened
 * since: saying otherwise would have its client run it again. */
static void checked(const struct server *s, int i, struct rtid__svc_ans *a)
{
	const struct client *c = &s->c[i];

	if (c->req.op < RTID__OP_LOCK && !sv_same_process(s, i)) {
		*a = (struct rtid__svc_ans){ .kind = RTID__SVC_ERROR };
		snprintf(a->name, sizeof(a->name), "process-changed");
		snprintf(a->text, sizeof(a->text), "process %d exited or its pid was reused meanwhile",
			 c->pid);
	}
	/* A tid for a client in another pid namespace is its number there. */
	if (a->kind == RTID__SVC_TID && c->other_ns &&
	    rtid__pid_to_ns("/proc", c->ns, a->value, &a->value) < 0) {
		*a = (struct rtid__svc_ans){ .kind = RTID__SVC_ERROR };
		snprintf(a->name, sizeof(a->name), "not-a-thread");
		snprintf(a->text, sizeof(a->text), "the restore thread has no number in the client's "
			 "pid namespace");
	}
}

void sv_worker_readable(struct server *s, unsigned k)
{
	struct sworker *w = &s->pool.w[k];
	struct rtid__svc_ans a = {}; /* translate() gives its kind on every path */
	struct rtid__reply r;
	ssize_t n;
	int i;

	if (w->state == SW_STARTING) {
		int h = sw_read_hello(&s->pool, w);

		if (h > 0) {
			s->stats.attach_s = rtid__now() - w->since;
			serve_log("driver attached (worker pid %d) in %.3f s", (int)w->pid,
				  s->stats.attach_s);
			sv_set_ready(s);
		} else if (h < 0) {
			sv_worker_down(s, k, "worker-failed");
		}
		return;
	}
	/* No EINTR here or below: every signal the daemon takes is blocked and
	 * read from the signalfd. A batch's replies: as many as are there. */
	for (;;) {
		n = recv(w->sock, &r, sizeof(r), MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN)
			return;
		if (n != (ssize_t)sizeof(r) || !w->busy || !w->job.batch)
			break;
		if (!sb_reply(s, k, &r)) {
			n = -1; /* not the reply awaited */
			break;
		}
		if (!w->busy)
			return; /* the batch is answered */
	}
	if (n != (ssize_t)sizeof(r) || !w->busy || r.pid != w->job.pid) {
		snprintf(s->pool.why, sizeof(s->pool.why), "driver API worker died");
		sv_worker_down(s, k, "worker-crashed");
		return;
	}
	s->pool.failures = 0;
	/* The job is over; its client may ask again once answered (sv_answer
	 * ends its request). */
	i = owner(s, &w->job);
	w->busy = false;
	if (i < 0) {
		serve_log(SLOG_WARNING "%s %d ended after its client left; answer dropped",
			  rtid__svc_op_name(w->job.op), w->job.pid);
		return;
	}
	sv_translate(s->cfg, &r, w->job.op, &a);
	checked(s, i, &a);
	sv_answer(s, i, &a);
}

/* Whether the request of client queue[j] may go to a worker, or be refused
 * for want of one, in this round (queue: the round's requests, oldest
 * first): nothing for its process is inside the driver (sv_in_driver: a
 * worker killed but not yet reaped, or a previous daemon's, included), and
 * no older request for the process is still queued. An older one left
 * waiting for a worker is not in the driver yet: without the second test a
 * later action on the process is refused "busy" (its client then runs the
 * tool beside the daemon's call to come) or handed before it. Not its turn:
 * it stays queued, for a later round, in order. */
static bool its_turn(const struct server *s, const int *queue, unsigned j)
{
	const struct client *c = &s->c[queue[j]];

	if (c->batch) /* each of its pids is looked at when it is handed over */
		return true;
	if (sv_in_driver(s, c->process))
		return false;
	/* A launch job's actions one at a time, in order: none beside an action
	 * of the job with a worker, none before an older one still queued. */
	for (unsigned k = 0; c->req.op >= RTID__OP_LOCK && k < s->pool.n; k++) {
		const struct sjob *b = &s->pool.w[k].job;

		if (s->pool.w[k].busy && !b->batch && b->op >= RTID__OP_LOCK &&
		    !rtid__jobs_apart(&b->job, &c->job))
			return false;
	}
	for (unsigned o = 0; o < j; o++) {
		const struct client *e = &s->c[queue[o]];

		if (e->fd >= 0 && e->queued && !e->inflight &&
		    (e->process == c->process ||
		     (c->req.op >= RTID__OP_LOCK && e->req.op >= RTID__OP_LOCK && !e->batch &&
		      !rtid__jobs_apart(&e->job, &c->job))))
			return false;
	}
	return true;
}

static int idle_worker(const struct server *s)
{
	for (unsigned k = 0; k < s->pool.n; k++)
		if (s->pool.w[k].state == SW_READY && !s->pool.w[k].busy)
			return (int)k;
	return -1;
}

static unsigned in_state(const struct server *s, enum sw_state st)
{
	unsigned n = 0;

	for (unsigned k = 0; k < s->pool.n; k++)
		n += s->pool.w[k].state == st;
	return n;
}

/* Hand client i's request to worker k. An action's client hears "started"
 * first: it can never learn of a start after the driver has the action, and
 * one that has left (or cancelled) by then is never started. */
static void hand(struct server *s, int i, unsigned k)
{
	struct client *c = &s->c[i];
	struct sworker *w = &s->pool.w[k];
	struct rtid__query q = { .pid = c->pid, .op = c->req.op, .timeout_ms = c->req.timeout_ms,
				 .map = c->req.map };
	double deadline = sv_deadline_of(s->cfg, &c->req);
	bool action = c->req.op >= RTID__OP_LOCK;
	/* A thread's start time is not its process's: unknown then. */
	struct sheld next = { .pid = w->pid, .start = w->start, .process = c->process,
			      .pstart = c->start_known && c->pid == c->process ? c->start : 0 };

	/* An action this driver lacks is refused before it could be said to
	 * have started, so that the client may still ask the tool. */
	if (action && !(w->ops & 1u << c->req.op)) {
		sv_fail(s, i, "unsupported", "this driver lacks the action; not started");
		return;
	}
	/* Never served without its map: refused where the driver takes none. */
	if (c->req.map.n && !(w->ops & RTID__OPS_MAP)) {
		sv_fail(s, i, "no-device-map", "this driver's API takes no device map (CUDA 13.0, "
			"r580); not started");
		return;
	}
	/* Recorded before the driver may have it: a daemon started after this
	 * one learns of the call from the record (serve-inflight.c). */
	if (si_write(s, &next) < 0) {
		sv_fail(s, i, "no-record", "the record of work in flight cannot be written; "
			"not started");
		return;
	}
	if (action) {
		struct rtid__svc_ans a = { .kind = RTID__SVC_STARTED, .op = c->req.op,
					   .pid = c->req.pid,
					   .value = deadline < 2e6 ? (int)(deadline * 1000) : 2000000000 };
		char buf[RTID__SVC_MSG_MAX];
		size_t n = rtid__svc_ans_format(&a, buf);

		if (send(c->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)n) {
			sv_drop(s, i);
			return;
		}
	}
	w->busy = true;
	w->job = (struct sjob){ .client = i, .conn = c->conn, .op = c->req.op, .pid = c->pid,
				.process = c->process, .pstart = next.pstart, .started = action,
				.job = c->job,
				.until = rtid__now() + deadline };
	c->inflight = true;
	if (send(w->sock, &q, sizeof(q), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(q)) {
		snprintf(s->pool.why, sizeof(s->pool.why), "driver API worker does not take queries");
		sv_worker_down(s, k, "worker-crashed");
	}
}

/* Start workers for the requests left waiting, and a spare while an action
 * runs, so that the next query does not pay an attach. The waiting wait for
 * a worker that is attaching or one that runs a query (it is free soon);
 * with neither (the backoff, or only actions running), they fail at once:
 * their clients ask the tool now rather than wait for a driver that keeps
 * failing, or behind an action. True when it failed some. */
static bool grow(struct server *s, const int *waiting, unsigned nw)
{
	unsigned starting = in_state(s, SW_STARTING);
	unsigned want = nw + (sv_busy(s, true) > 0 && idle_worker(s) < 0);

	for (unsigned k = 0; k < s->pool.n && starting < want; k++) {
		if (s->pool.w[k].state != SW_DOWN)
			continue;
		int r = sw_start(&s->pool, &s->pool.w[k], s->cfg);

		if (r == -EBUSY) /* this slot's killed workers are stuck: another slot */
			continue;
		if (r < 0)
			break;
		starting++;
	}
	if (starting > 0 || sv_busy(s, false) > sv_busy(s, true))
		return false;
	for (unsigned j = 0; j < nw; j++)
		sv_fail(s, waiting[j], "worker-failed", s->pool.why);
	return nw > 0;
}

/* One pass over the requests not yet with a worker, oldest first. True when
 * another pass is due at once: grow failed requests left waiting while a
 * later one was held back (its_turn), maybe for them, and nothing else would
 * wake the loop for it before its own deadline. Each such pass answers at
 * least one request, so the passes end. */
static bool dispatch_round(struct server *s)
{
	unsigned max = s->cfg->max_clients, nq = 0, nw = 0;
	int queue[SERVE_MAX_CLIENTS], waiting[SERVE_MAX_CLIENTS];
	bool held = false;

	/* The requests not yet with a worker, oldest first. */
	for (unsigned i = 0; i < max; i++) {
		const struct client *c = &s->c[i];
		unsigned j = nq++;

		if (c->fd < 0 || !c->queued || c->inflight) {
			nq--;
			continue;
		}
		for (; j > 0 && s->c[queue[j - 1]].seq > c->seq; j--)
			queue[j] = queue[j - 1];
		queue[j] = (int)i;
	}
	for (unsigned j = 0; j < nq; j++) {
		int i = queue[j], k;

		if (s->c[i].fd < 0)
			continue;
		if (!its_turn(s, queue, j)) {
			held = true;
			continue;
		}
		if (s->c[i].req.op >= RTID__OP_LOCK && sv_busy(s, true) + 1 >= s->pool.n) {
			sv_fail(s, i, "busy", "every worker that may run an action is busy; not started");
			continue;
		}
		while ((k = idle_worker(s)) >= 0 && sw_version_changed(&s->pool.w[k], s->cfg)) {
			serve_log("driver version changed; attaching again");
			sw_stop(&s->pool, &s->pool.w[k], SW_RETIRE);
		}
		if (s->c[i].batch && sb_busy(s))
			continue; /* after the one with a worker (its answer wakes the loop) */
		if (k < 0)
			waiting[nw++] = i;
		else if (!s->c[i].batch && sv_still_allowed(s, i)) /* the rule again, on the facts of now */
			hand(s, i, (unsigned)k);
		else if (s->c[i].batch &&
			 sb_hand(s, i, (unsigned)k, sv_deadline_of(s->cfg, &s->c[i].req)) < 0)
			sv_worker_down(s, (unsigned)k, "worker-crashed");
	}
	return grow(s, waiting, nw) && held;
}

void sv_dispatch(struct server *s)
{
	while (dispatch_round(s))
		;
}
