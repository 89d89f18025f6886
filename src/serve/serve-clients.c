/* The daemon's client side: greetings, requests, who may ask what, answers.
 * Every read and write is non-blocking; a client that misbehaves loses only
 * its own connection. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proc/proc.h"
#include "rtid.h"
#include "serve/serve.h"

/* Answer client i's request; the client then has its idle deadline again. */
void sv_answer(struct server *s, int i, struct rtid__svc_ans *a)
{
	struct client *c = &s->c[i];
	char buf[RTID__SVC_MSG_MAX];
	size_t n;

	if (c->batch) {
		sb_answer_all(s, i, a);
		return;
	}
	a->op = c->req.op;
	a->pid = c->req.pid; /* the client's number for it */
	st_answered(s, c, a);
	n = rtid__svc_ans_format(a, buf);
	c->queued = c->inflight = false;
	c->idle_until = rtid__now() + s->cfg->client_timeout_s;
	if (send(c->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)n)
		sv_drop(s, i); /* gone, or not reading: its loss alone */
}

void sv_fail(struct server *s, int i, const char *reason, const char *text)
{
	struct rtid__svc_ans a = { .kind = RTID__SVC_ERROR };

	snprintf(a.name, sizeof(a.name), "%.39s", reason);
	snprintf(a.text, sizeof(a.text), "%.119s", text);
	sv_answer(s, i, &a);
}

void sv_fail_waiting(struct server *s, int i, const char *reason, const char *text)
{
	if (sv_in_driver(s, s->c[i].process))
		sv_fail(s, i, RTID__SVC_IN_DRIVER, "an earlier call about this process is still "
			"inside the driver; not started");
	else
		sv_fail(s, i, reason, text);
}

void sv_fail_queued(struct server *s, const char *reason, const char *text)
{
	for (unsigned i = 0; i < s->cfg->max_clients; i++)
		if (s->c[i].fd >= 0 && s->c[i].queued && !s->c[i].inflight)
			sv_fail_waiting(s, (int)i, reason, text);
}

double sv_deadline_of(const struct serve_cfg *cfg, const struct rtid__svc_req *q)
{
	if (q->op < RTID__OP_LOCK)
		return cfg->timeout_s;
	return cfg->action_timeout_s + (q->op == RTID__OP_LOCK ? q->timeout_ms / 1000.0 : 0);
}

/* A client in another pid namespace names its own pids: the one process
 * whose own namespace is the client's and whose number there is req.pid, or
 * a refusal (a thread, a process of a nested namespace, no or several
 * matches). NULL when c->pid is set, else why not. */
static const char *from_client_ns(struct client *c)
{
	static char why[120];
	int host, r = -ESRCH;

	if (c->unproven)
		return "the client's process is not proven: it left or handed on its connection "
		       "after connecting";
	if (c->ns[0])
		r = rtid__pid_from_ns("/proc", c->ns, c->req.pid, &host);
	if (r == 0) {
		c->pid = host;
		return NULL;
	}
	snprintf(why, sizeof(why), "a client in another pid namespace: its pid %d is %s here",
		 c->req.pid, r == -ENOTUNIQ ? "not one process" : "no process known");
	return why;
}

/* Client i may not make its request: said to it, and logged. */
static void deny(struct server *s, int i, const char *why)
{
	struct client *c = &s->c[i];
	struct rtid__svc_ans a = { .kind = RTID__SVC_DENIED };

	serve_log_limited(SLOG_DENIED, "denied uid %d (pid %d): %s %d: %s", (int)c->uid,
			  (int)c->peer, rtid__svc_op_name(c->req.op), c->req.pid, why);
	snprintf(a.text, sizeof(a.text), "%s", why);
	sv_answer(s, i, &a);
}

static void take_request(struct server *s, int i, const char *buf, size_t n)
{
	struct client *c = &s->c[i];
	const char *why;

	c->asked = rtid__now();
	if (n == 6 && !memcmp(buf, "status", 6) && c->version >= 2) {
		/* Counters only, nothing of any process: anyone who may connect. */
		if (!st_send(s, c->fd))
			sv_drop(s, i);
		return;
	}
	if (sb_is_batch(buf, n) ? sb_take(s, i, buf, n) < 0
				: rtid__svc_req_parse(buf, n, &c->req) < 0) {
		serve_log_limited(SLOG_CLIENT, "client pid %d sent a malformed request; closing it",
				  (int)c->peer);
		sv_drop(s, i);
		return;
	}
	if (sb_is_batch(buf, n)) { /* taken, or answered already */
		if (c->batch)
			c->req_until = rtid__now() + sv_deadline_of(s->cfg, &c->req);
		return;
	}
	c->queued = true; /* sv_answer() below needs the request in place */
	c->pid = c->req.pid;
	if (c->req.op >= RTID__OP_LOCK && !s->cfg->actions) {
		sv_fail(s, i, "not-served", "this daemon serves queries only (see --actions)");
		return;
	}
	/* Protocol 1 has no "started": its client would run a failed action
	 * again through the tool. Refused before anything ran, it runs it once. */
	if (c->req.op >= RTID__OP_LOCK && c->version < 2) {
		sv_fail(s, i, "protocol-1", "actions need protocol 2; not started");
		return;
	}
	if (c->req.map.n && c->version < RTID__SVC_VERSION_MAP) {
		sv_fail(s, i, "protocol-2", "a device map needs protocol 3; not started");
		return;
	}
	why = c->other_ns ? from_client_ns(c) : NULL;
	if (!why) {
		struct rtid__svc_req q = c->req;

		q.pid = c->pid;
		why = sa_check(s->cfg, c->uid, c->may_act, &q, &c->process);
	}
	if (why) {
		deny(s, i, why);
		return;
	}
	if (s->stopping) {
		sv_fail(s, i, "shutting-down", "the daemon is stopping");
		return;
	}
	/* Who the pid is now: checked again before the driver is called and
	 * before a query's answer goes back. */
	c->start_known = rtid_proc_start_time(s->cfg->proc_root, c->pid, &c->start) == 0;
	/* An action's launch job: one job's actions run one after another. */
	c->job = (struct rtid__job){ .kind = RTID__JOB_NONE };
	if (c->req.op >= RTID__OP_LOCK) {
		char jwhy[300];

		rtid__job_read(s->cfg->proc_root, c->process, &c->job, jwhy, sizeof(jwhy));
		if (c->job.kind == RTID__JOB_UNKNOWN)
			serve_log("%s %d: its launch job cannot be read (%s): never run beside a "
				  "process of a job", rtid__svc_op_name(c->req.op), c->req.pid, jwhy);
	}
	c->seq = ++s->seq;
	c->req_until = rtid__now() + sv_deadline_of(s->cfg, &c->req);
}

/* The greeting of client i: protocol 1 to 3, answered in its own version. */
static void greet(struct server *s, int i, const char *msg, size_t len)
{
	struct client *c = &s->c[i];
	char buf[RTID__SVC_MSG_MAX];
	int v, n;

	if (rtid__svc_hello_parse(msg, len, &v) < 0 || v < RTID__SVC_VERSION_MIN ||
	    v > RTID__SVC_VERSION) {
		n = snprintf(buf, sizeof(buf), "refused %d version", RTID__SVC_VERSION);
		send(c->fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
		sv_drop(s, i);
		return;
	}
	n = snprintf(buf, sizeof(buf), "hello %d %s", v, s->cfg->actions ? "actions" : "queries");
	c->version = v;
	c->idle_until = rtid__now() + s->cfg->client_timeout_s;
	if (send(c->fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) != n)
		sv_drop(s, i);
}

void sv_client_readable(struct server *s, int i)
{
	struct client *c = &s->c[i];
	char buf[RTID__SVC_MSG_MAX];
	ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);

	if (n < 0 && errno == EAGAIN)
		return;
	/* Closed (or half-closed: a client cancelling a request that waits, which
	 * then never starts; closing tells it so), longer than any message may
	 * be, or a second request while one is open: the connection ends. A
	 * request already with a worker runs on, its answer dropped. */
	if (n <= 0 || n >= (ssize_t)sizeof(buf) || c->queued) {
		sv_drop(s, i);
		return;
	}
	if (c->version)
		take_request(s, i, buf, (size_t)n);
	else
		greet(s, i, buf, (size_t)n);
}

bool sv_same_process(const struct server *s, int i)
{
	const struct client *c = &s->c[i];
	unsigned long long now;
	bool known = rtid_proc_start_time(s->cfg->proc_root, c->pid, &now) == 0;

	/* A start time that cannot be read now is a change, as is one that can
	 * be read now but could not be then. Neither ever read (a proc tree
	 * that has none) leaves the judgement to the request rule. */
	if (c->start_known)
		return known && now == c->start;
	return !known;
}

bool sv_still_allowed(struct server *s, int i)
{
	struct client *c = &s->c[i];
	struct rtid__svc_req q = c->req;
	const char *why;
	int process;

	/* The facts of now, under the intake's rule and the peer's identity
	 * from connect: an owner that changed is denied as a new request is. */
	q.pid = c->pid;
	why = sa_check(s->cfg, c->uid, c->may_act, &q, &process);
	if (why) {
		deny(s, i, why);
		return false;
	}
	/* Read after those facts: they were the facts of the process taken at
	 * intake, not of one that took its pid meanwhile. */
	if (!sv_same_process(s, i)) {
		sv_fail(s, i, "process-changed", "the process exited or its pid was reused "
			"before the driver was asked");
		return false;
	}
	return true;
}

/* The pid namespace of client i, placed at connect by the kernel's word
 * about the connection (sa_peer_ns), never by whatever holds the peer's
 * number later: ours (its numbers are the ones we see), another (they are
 * translated), or not proven (every request refused). */
static void place(struct server *s, int i, pid_t peer)
{
	static char own[64]; /* ours, read once: a process never changes it */
	struct client *c = &s->c[i];
	int r = sa_peer_ns(c->fd, peer, c->ns, sizeof(c->ns));

	if (!own[0] && readlink("/proc/self/ns/pid", own, sizeof(own) - 1) <= 0)
		own[0] = '\0';
	c->unproven = r < 0;
	if (r < 0 || !own[0]) {
		c->ns[0] = '\0';
		c->other_ns = true;
		if (r < 0 && r != -ESRCH)
			serve_log_limited(SLOG_CLIENT, "cannot prove which process client pid %d "
					  "is: %s", (int)peer, strerror(-r));
		return;
	}
	c->other_ns = strcmp(c->ns, own) != 0;
}

unsigned sv_per_uid(const struct serve_cfg *cfg)
{
	if (cfg->max_per_uid)
		return cfg->max_per_uid;
	return cfg->max_clients >= 8 ? cfg->max_clients / 4 : 2;
}

static unsigned of_uid(const struct server *s, uid_t uid)
{
	unsigned n = 0;

	for (unsigned k = 0; k < s->cfg->max_clients; k++)
		n += s->c[k].fd >= 0 && s->c[k].uid == uid;
	return n;
}

/* A slot for a new connection: a free one, else the oldest held by a client
 * that has not greeted, so that silent connections never keep out one that
 * speaks. -1 when there is none. */
static int slot_for(struct server *s)
{
	int oldest = -1;

	for (unsigned k = 0; k < s->cfg->max_clients; k++)
		if (s->c[k].fd < 0)
			return (int)k;
	for (unsigned k = 0; k < s->cfg->max_clients; k++)
		if (!s->c[k].version && (oldest < 0 || s->c[k].conn < s->c[oldest].conn))
			oldest = (int)k;
	if (oldest >= 0) {
		serve_log_limited(SLOG_LIMIT, "full: client pid %d had not greeted; its slot goes "
				  "to a new one", (int)s->c[oldest].peer);
		sv_drop(s, oldest);
	}
	return oldest;
}

/* Said at once, so that the client asks the tool now. Its greeting is read
 * first: closing over unread data would reset the connection, and the
 * client would read the reset instead of the reason. */
static void refuse(int fd)
{
	char buf[RTID__SVC_MSG_MAX];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	send(fd, "refused 2 busy", 14, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

/* accept() failed. Nothing more to take, or one peer that left: go on. Any
 * other failure (no fds or memory; a security module refusing, which leaves
 * the connection queued) would wake poll again at once: the listening
 * socket rests a while instead. */
static void accept_failed(struct server *s, int e)
{
	if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR || e == ECONNABORTED)
		return;
	serve_log_limited(SLOG_ACCEPT, "cannot accept: %s; not listening for %.2f s", strerror(e),
			  s->accept_delay);
	s->accept_at = rtid__now() + s->accept_delay;
	s->accept_delay = s->accept_delay * 2 < ACCEPT_PAUSE_MAX ? s->accept_delay * 2
								 : ACCEPT_PAUSE_MAX;
}

void sv_accept_all(struct server *s)
{
	for (;;) {
		struct ucred cr;
		socklen_t len = sizeof(cr);
		int fd = accept4(s->l.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), i;

		if (fd < 0) {
			accept_failed(s, errno);
			return;
		}
		s->accept_at = 0;
		s->accept_delay = ACCEPT_PAUSE_FIRST;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
			refuse(fd);
			continue;
		}
		if (cr.uid != 0 && of_uid(s, cr.uid) >= sv_per_uid(s->cfg)) {
			serve_log_limited(SLOG_LIMIT, "uid %u holds %u connections, its limit; "
					  "refusing pid %d", (unsigned)cr.uid, sv_per_uid(s->cfg),
					  (int)cr.pid);
			refuse(fd);
			continue;
		}
		if ((i = slot_for(s)) < 0) {
			serve_log_limited(SLOG_LIMIT, "full (%u clients); refusing pid %d",
					  s->cfg->max_clients, (int)cr.pid);
			refuse(fd);
			continue;
		}
		s->c[i] = (struct client){ .fd = fd, .conn = ++s->conns, .uid = cr.uid,
					   .gid = cr.gid, .peer = cr.pid,
					   .may_act = sa_may_act(s->cfg, fd, cr.uid, cr.gid),
					   .idle_until = rtid__now() + s->cfg->client_timeout_s };
		place(s, i, cr.pid);
		/* Its greeting, when already sent, is read now: a client that has
		 * spoken is not one that a silent flood may displace. */
		sv_client_readable(s, i);
	}
}
