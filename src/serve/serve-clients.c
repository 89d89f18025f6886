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
#include "serve/serve-loop.h"

void sv_drop(struct server *s, int i)
{
	close(s->c[i].fd);
	s->c[i].fd = -1;
	s->c[i].queued = false;
}

/* Answer client i's request; the client then has its idle deadline again. */
void sv_answer(struct server *s, int i, struct rtid__svc_ans *a)
{
	struct client *c = &s->c[i];
	char buf[RTID__SVC_MSG_MAX];
	size_t n;

	a->op = c->req.op;
	a->pid = c->req.pid; /* the client's number for it */
	n = rtid__svc_ans_format(a, buf);
	c->queued = false;
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

void sv_fail_queued(struct server *s, const char *reason, const char *text)
{
	for (unsigned i = 0; i < s->cfg->max_clients; i++)
		if (s->c[i].fd >= 0 && s->c[i].queued && (int)i != s->inflight)
			sv_fail(s, (int)i, reason, text);
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

static void take_request(struct server *s, int i, const char *buf, size_t n)
{
	struct client *c = &s->c[i];
	const char *why;

	if (rtid__svc_req_parse(buf, n, &c->req) < 0) {
		serve_log("client pid %d sent a malformed request; closing it", (int)c->peer);
		sv_drop(s, i);
		return;
	}
	c->queued = true; /* sv_answer() below needs the request in place */
	c->pid = c->req.pid;
	if (c->req.op >= RTID__OP_LOCK && !s->cfg->actions) {
		sv_fail(s, i, "not-served", "this daemon serves queries only (see --actions)");
		return;
	}
	why = c->other_ns ? from_client_ns(c) : NULL;
	if (!why) {
		struct rtid__svc_req q = c->req;

		q.pid = c->pid;
		why = sa_check(s->cfg, c->uid, c->may_act, &q);
	}
	if (why) {
		struct rtid__svc_ans a = { .kind = RTID__SVC_DENIED };

		serve_log("denied uid %d (pid %d): %s %d: %s", (int)c->uid, (int)c->peer,
			  rtid__svc_op_name(c->req.op), c->req.pid, why);
		snprintf(a.text, sizeof(a.text), "%s", why);
		sv_answer(s, i, &a);
		return;
	}
	if (s->stopping) {
		sv_fail(s, i, "shutting-down", "the daemon is stopping");
		return;
	}
	/* Who the pid is now: checked again before the driver is called and
	 * before a query's answer goes back. */
	c->start_known = rtid_proc_start_time(s->cfg->proc_root, c->pid, &c->start) == 0;
	c->seq = ++s->seq;
	c->req_until = rtid__now() + sv_deadline_of(s->cfg, &c->req);
}

void sv_client_readable(struct server *s, int i)
{
	struct client *c = &s->c[i];
	char buf[RTID__SVC_MSG_MAX];
	ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
	int v;

	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0 || n >= (ssize_t)sizeof(buf)) {
		sv_drop(s, i); /* closed, or longer than any message may be */
		return;
	}
	if (c->greeted) {
		take_request(s, i, buf, (size_t)n);
		return;
	}
	if (rtid__svc_hello_parse(buf, (size_t)n, &v) < 0 || v != RTID__SVC_VERSION) {
		n = snprintf(buf, sizeof(buf), "refused %d version", RTID__SVC_VERSION);
		send(c->fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
		sv_drop(s, i);
		return;
	}
	n = snprintf(buf, sizeof(buf), "hello %d %s", RTID__SVC_VERSION,
		     s->cfg->actions ? "actions" : "queries");
	c->greeted = true;
	c->idle_until = rtid__now() + s->cfg->client_timeout_s;
	if (send(c->fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) != n)
		sv_drop(s, i);
}

bool sv_same_process(const struct server *s, int i)
{
	const struct client *c = &s->c[i];
	unsigned long long now;

	return !c->start_known ||
	       (rtid_proc_start_time(s->cfg->proc_root, c->pid, &now) == 0 && now == c->start);
}

/* Whether the peer shares our pid namespace, so that the numbers it names
 * are the ones we see. A peer we cannot place (pid 0: an ancestor
 * namespace; its ns link unreadable) is not. */
static bool same_pidns(pid_t peer)
{
	char a[64], b[64], path[48];
	ssize_t n, m;

	if (peer <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)peer);
	n = readlink(path, a, sizeof(a));
	m = readlink("/proc/self/ns/pid", b, sizeof(b));
	return n > 0 && n == m && memcmp(a, b, (size_t)n) == 0;
}

void sv_accept_all(struct server *s)
{
	for (;;) {
		struct ucred cr;
		socklen_t len = sizeof(cr);
		int fd = accept4(s->l.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), i = -1;

		if (fd < 0)
			return;
		for (unsigned k = 0; k < s->cfg->max_clients && i < 0; k++)
			if (s->c[k].fd < 0)
				i = (int)k;
		if (i < 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
			/* Full: said at once, so that the client asks the tool now. */
			send(fd, "refused 1 busy", 14, MSG_DONTWAIT | MSG_NOSIGNAL);
			close(fd);
			continue;
		}
		s->c[i] = (struct client){ .fd = fd, .uid = cr.uid, .gid = cr.gid, .peer = cr.pid,
					   .may_act = sa_may_act(s->cfg, fd, cr.uid, cr.gid),
					   .other_ns = !same_pidns(cr.pid),
					   .idle_until = rtid__now() + s->cfg->client_timeout_s };
		if (s->c[i].other_ns && (cr.pid <= 0 ||
					 rtid__pidns_of("/proc", cr.pid, s->c[i].ns, sizeof(s->c[i].ns)) < 0))
			s->c[i].ns[0] = '\0'; /* cannot be placed: every request refused */
	}
}
