/* A batch: one query for many processes in one request (serve-proto.h),
 * so that a client with a whole tree to ask about (rtid's CRIU plugin, at a
 * checkpoint of a frozen tree) pays one round trip and one hand-over to a
 * worker rather than one per process. Every rule of a single request holds
 * for each pid, read right before its query is handed over: the request
 * rule (sa_check), the process's identity (its start time, again before its
 * answer goes back), never beside a call about the process still inside the
 * driver, and the record of work in flight listing each pid until its
 * answer is in. A pid that cannot be batched under those rules (a call
 * about it in the driver, a request for it queued before) is answered
 * "not-batched": its client asks it alone.
 * Below the clients' side and the dispatch (which call into it), so also
 * where both find what a worker's reply becomes (sv_translate) and how a
 * client is closed (sv_drop). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc/proc.h"
#include "serve/serve.h"


bool sb_is_batch(const char *buf, size_t n)
{
	return n > 6 && !memcmp(buf, "batch ", 6);
}

static void set(struct sbatch *b, size_t j, enum rtid__svc_kind kind, const char *name,
		const char *text)
{
	b->ans[j] = (struct rtid__svc_ans){ .kind = kind };
	snprintf(b->ans[j].name, sizeof(b->ans[j].name), "%s", name);
	snprintf(b->ans[j].text, sizeof(b->ans[j].text), "%.119s", text);
	b->done[j] = true;
}

/* Every pid of client i's waiting batch answered kind, reason, text. */
static void refuse(struct server *s, int i, const char *reason, const char *text)
{
	struct rtid__svc_ans a = { .kind = RTID__SVC_ERROR };

	snprintf(a.name, sizeof(a.name), "%s", reason);
	snprintf(a.text, sizeof(a.text), "%s", text);
	sb_answer_all(s, i, &a);
}

int sb_take(struct server *s, int i, const char *buf, size_t n)
{
	struct client *c = &s->c[i];
	struct sbatch *b = calloc(1, sizeof(*b));
	int op;

	if (!b || rtid__svc_batch_parse(buf, n, &op, b->pid, &b->n) < 0) {
		free(b);
		return -EINVAL;
	}
	b->op = op;
	for (size_t j = 0; j < RTID__SVC_BATCH_MAX; j++)
		b->pidfd[j] = -1;
	c->req = (struct rtid__svc_req){ .op = op, .pid = b->pid[0] };
	c->pid = c->process = 0; /* no one process: its_turn holds nothing back for it */
	c->queued = true;
	c->batch = b;
	/* Numbers of another pid namespace are translated one request at a
	 * time, where that rule lives. */
	if (c->other_ns)
		refuse(s, i, RTID__SVC_NOT_BATCHED, "a client in another pid namespace asks one "
		       "process at a time");
	else if (s->stopping)
		refuse(s, i, "shutting-down", "the daemon is stopping");
	else
		c->seq = ++s->seq;
	return 0;
}

/* Whether a request for process other than the batch's is queued before it
 * (client i): it goes first, so the batch leaves that pid to be asked alone. */
static bool queued_before(const struct server *s, int i, int process)
{
	for (unsigned o = 0; o < s->cfg->max_clients; o++) {
		const struct client *e = &s->c[o];

		if ((int)o != i && e->fd >= 0 && e->queued && !e->batch && e->seq < s->c[i].seq &&
		    e->process == process)
			return true;
	}
	return false;
}

/* The answers, in the batch's order, to client i if it is still there; the
 * batch freed. */
static void finish(struct server *s, int i, struct sbatch *b)
{
	struct client *c = i >= 0 ? &s->c[i] : NULL;

	for (size_t j = 0; c && j < b->n && c->fd >= 0; j++) {
		char buf[RTID__SVC_MSG_MAX];
		size_t len;

		b->ans[j].op = b->op;
		b->ans[j].pid = b->pid[j];
		c->req.pid = b->pid[j]; /* counted and logged per pid */
		st_answered(s, c, &b->ans[j]);
		len = rtid__svc_ans_format(&b->ans[j], buf);
		if (send(c->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len)
			sv_drop(s, i);
	}
	if (c && c->fd >= 0) {
		c->queued = c->inflight = false;
		c->batch = NULL;
		c->idle_until = rtid__now() + s->cfg->client_timeout_s;
	}
	sv_free_batch(b);
}

void sv_free_batch(struct sbatch *b)
{
	for (size_t j = 0; b && j < b->n; j++)
		if (b->pidfd[j] >= 0)
			close(b->pidfd[j]);
	free(b);
}

/* Whether pid j is no longer the process it was when handed over: its pidfd
 * readable (it has exited), else its start time changed. */
static bool changed(const struct server *s, const struct sbatch *b, size_t j)
{
	struct pollfd p = { .fd = b->pidfd[j], .events = POLLIN };
	unsigned long long now;

	if (b->pidfd[j] >= 0)
		return poll(&p, 1, 0) != 0;
	return b->known[j] ? rtid_proc_start_time(s->cfg->proc_root, b->pid[j], &now) < 0 ||
			     now != b->start[j]
			   : rtid_proc_start_time(s->cfg->proc_root, b->pid[j], &now) == 0;
}

void sb_answer_all(struct server *s, int i, const struct rtid__svc_ans *a)
{
	struct sbatch *b = s->c[i].batch;

	for (size_t j = 0; j < b->n; j++)
		if (!b->done[j]) {
			b->ans[j] = *a;
			b->done[j] = true;
		}
	s->c[i].batch = NULL;
	finish(s, i, b);
}

void sv_drop_batch(struct client *c)
{
	sv_free_batch(c->batch);
	c->batch = NULL;
}

/* The next pid with the worker not answered yet, from j; n when none. */
static size_t next_sent(const struct sbatch *b, size_t j)
{
	while (j < b->n && (!b->sent[j] || b->done[j]))
		j++;
	return j;
}

/* The job's process is the one the worker is on (a worker killed now was in
 * the driver for it, the record says so); the rest wait in its socket. */
static void follow(struct sjob *job, const struct sbatch *b)
{
	job->pid = job->process = b->pid[b->cur];
	job->pstart = b->known[b->cur] ? b->start[b->cur] : 0;
}

int sb_hand(struct server *s, int i, unsigned k, double deadline)
{
	struct client *c = &s->c[i];
	struct sworker *w = &s->pool.w[k];
	struct sbatch *b = c->batch;
	size_t nsent = 0;

	for (size_t j = 0; j < b->n; j++) {
		struct rtid__svc_req q = { .op = b->op, .pid = b->pid[j] };
		const char *why;

		/* Who the pid is, taken first: the facts read next are of that
		 * process or of none (a pidfd: one call now and one after the
		 * answer; a thread has none, its start time is read). */
		if (s->cfg->proc_root && !strcmp(s->cfg->proc_root, "/proc"))
			b->pidfd[j] = (int)syscall(SYS_pidfd_open, b->pid[j], 0);
		if (b->pidfd[j] < 0)
			b->known[j] = rtid_proc_start_time(s->cfg->proc_root, b->pid[j],
							   &b->start[j]) == 0;
		if ((why = sa_check(s->cfg, c->uid, c->may_act, &q, &b->process[j]))) {
			set(b, j, RTID__SVC_DENIED, "", why);
			continue;
		}
		if (sv_in_driver(s, b->process[j]) || queued_before(s, i, b->process[j])) {
			set(b, j, RTID__SVC_ERROR, RTID__SVC_NOT_BATCHED, "a call about this process "
			    "is inside the driver or asked before; ask it alone");
			continue;
		}
		for (size_t o = 0; o < j && !b->done[j]; o++) /* one process once per batch */
			if (b->sent[o] && b->process[o] == b->process[j])
				set(b, j, RTID__SVC_ERROR, RTID__SVC_NOT_BATCHED, "its process is "
				    "earlier in the batch; ask it alone");
		if (!b->done[j]) {
			b->sent[j] = true;
			nsent++;
		}
	}
	c->batch = NULL;
	if (!nsent) {
		finish(s, i, b);
		return 0;
	}
	b->cur = next_sent(b, 0);
	w->busy = true;
	w->job = (struct sjob){ .client = i, .conn = c->conn, .op = b->op, .batch = b,
				.until = rtid__now() + deadline };
	follow(&w->job, b);
	c->inflight = true;
	/* Recorded before the driver may have any of them. */
	if (si_write(s, NULL) < 0) {
		for (size_t j = 0; j < b->n; j++)
			if (b->sent[j])
				set(b, j, RTID__SVC_ERROR, "no-record", "the record of work in flight "
				    "cannot be written; not started");
		w->busy = false;
		w->job.batch = NULL;
		finish(s, i, b);
		return 0;
	}
	for (size_t j = b->cur; j < b->n; j = next_sent(b, j + 1)) {
		struct rtid__query q = { .pid = b->pid[j], .op = b->op };

		if (send(w->sock, &q, sizeof(q), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(q)) {
			snprintf(s->pool.why, sizeof(s->pool.why), "driver API worker does not take "
				 "queries");
			return -EIO;
		}
	}
	return 0;
}

bool sb_reply(struct server *s, unsigned k, const struct rtid__reply *r)
{
	struct sworker *w = &s->pool.w[k];
	struct sbatch *b = w->job.batch;
	size_t j = b->cur;
	int i;

	if (r->pid != b->pid[j])
		return false;
	sv_translate(s->cfg, r, b->op, &b->ans[j]);
	/* Still the process asked about (as a single query's answer). */
	if (changed(s, b, j))
		set(b, j, RTID__SVC_ERROR, "process-changed", "the process exited or its pid was "
		    "reused meanwhile");
	b->done[j] = true;
	if ((b->cur = next_sent(b, j + 1)) < b->n) {
		follow(&w->job, b);
		return true;
	}
	i = w->job.client >= 0 && s->c[w->job.client].fd >= 0 &&
	    s->c[w->job.client].conn == w->job.conn ? w->job.client : -1;
	w->busy = false;
	w->job.batch = NULL;
	finish(s, i, b);
	return true;
}

void sb_down(struct server *s, struct sworker *w, int i, const char *reason, const char *why)
{
	struct sbatch *b = w->job.batch;

	for (size_t j = 0; j < b->n; j++)
		if (!b->done[j])
			set(b, j, RTID__SVC_ERROR, reason, why);
	w->job.batch = NULL;
	finish(s, i, b);
}

bool sb_busy(const struct server *s)
{
	for (unsigned k = 0; k < s->pool.n; k++)
		if (s->pool.w[k].busy && s->pool.w[k].job.batch)
			return true;
	return false;
}

void sv_drop(struct server *s, int i)
{
	sv_drop_batch(&s->c[i]);
	close(s->c[i].fd);
	s->c[i].fd = -1;
	s->c[i].queued = s->c[i].inflight = false;
}

/* What the real tool would have produced, from the worker's reply. A tid is
 * answered only as a live thread of the process asked about (the rule of
 * every entry point); anything else is an error, and the client asks the
 * tool. */
void sv_translate(const struct serve_cfg *cfg, const struct rtid__reply *r, int op,
		  struct rtid__svc_ans *a)
{
	int e;

	if (r->missing) {
		a->kind = RTID__SVC_ERROR;
		snprintf(a->name, sizeof(a->name), "unsupported");
		snprintf(a->text, sizeof(a->text), "this driver lacks %s", rtid__svc_op_name(op));
	} else if (r->cuerr) {
		a->kind = RTID__SVC_CUERR;
		a->value = r->cuerr;
		snprintf(a->name, sizeof(a->name), "%s", r->name);
		snprintf(a->text, sizeof(a->text), "%s", r->text);
	} else if (op == RTID__OP_RESTORE_TID && r->tid > 0 &&
		   (e = rtid__thread_of(cfg->proc_root, r->pid, r->tid)) < 0) {
		a->kind = RTID__SVC_ERROR;
		snprintf(a->name, sizeof(a->name), "not-a-thread");
		snprintf(a->text, sizeof(a->text), "the driver named tid %d, %s", r->tid,
			 e == -EXDEV ? "a thread of another process" : "which is no thread of it");
	} else if (op == RTID__OP_RESTORE_TID && r->tid > 0) {
		a->kind = RTID__SVC_TID;
		a->value = r->tid;
	} else if (op == RTID__OP_GET_STATE && rtid__svc_state_name(r->tid)) {
		a->kind = RTID__SVC_STATE;
		a->value = r->tid;
	} else if (op >= RTID__OP_LOCK) {
		a->kind = RTID__SVC_DONE;
	} else {
		a->kind = RTID__SVC_ERROR;
		snprintf(a->name, sizeof(a->name), "bad-output");
		snprintf(a->text, sizeof(a->text), "the driver answered %d", r->tid);
	}
}
