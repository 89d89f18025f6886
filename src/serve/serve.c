/* The daemon's event loop: one poll over the listening socket, the clients,
 * the worker and a signalfd. Nothing blocks: a client that sends nothing or
 * sends slowly only runs out its own deadline, and the worker answers one
 * request at a time, each under its own deadline. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/proc.h"
#include "serve/serve-loop.h"

#define STOP_GRACE 5.0 /* seconds a request in flight may still take at SIGTERM */

static void set_ready(struct server *s)
{
	if (!s->ready)
		sl_ready(s->cfg);
	s->ready = true;
}

/* The worker failed to start or died: its request in flight gets an error. */
static void worker_down(struct server *s, const char *reason)
{
	char why[200];

	snprintf(why, sizeof(why), "%s", s->w.why);
	sw_stop(&s->w, true);
	serve_log("%s; a new attach %s", why, s->w.retry_at > rtid__now() ? "after a backoff" : "at once");
	if (s->inflight >= 0)
		sv_fail(s, s->inflight, reason, why);
	s->inflight = -1;
	set_ready(s);
}

/* What the real tool would have produced, from the worker's reply. A tid is
 * answered only as a live thread of the process asked about (the rule of
 * every entry point); anything else is an error, and the client asks the
 * tool. */
static void translate(const struct serve_cfg *cfg, const struct rtid__reply *r, int op,
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

static void worker_readable(struct server *s)
{
	struct rtid__svc_ans a = { 0 };
	struct rtid__reply r;
	ssize_t n;

	if (s->w.state == SW_STARTING) {
		int h = sw_read_hello(&s->w);

		if (h > 0) {
			serve_log("driver attached (worker pid %d)", (int)s->w.pid);
			set_ready(s);
		} else if (h < 0) {
			worker_down(s, "worker-failed");
		}
		return;
	}
	/* No EINTR here or below: every signal the daemon takes is blocked and
	 * read from the signalfd. */
	n = recv(s->w.sock, &r, sizeof(r), MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n != (ssize_t)sizeof(r) || s->inflight < 0 || r.pid != s->c[s->inflight].pid) {
		snprintf(s->w.why, sizeof(s->w.why), "driver API worker died");
		worker_down(s, "worker-crashed");
		return;
	}
	s->w.failures = 0;
	translate(s->cfg, &r, s->c[s->inflight].req.op, &a);
	/* A query answered for a pid that is another process by now is no
	 * answer. An action is done whatever happened since: saying otherwise
	 * would have the shim run it again. */
	if (s->c[s->inflight].req.op < RTID__OP_LOCK && !sv_same_process(s, s->inflight)) {
		a = (struct rtid__svc_ans){ .kind = RTID__SVC_ERROR };
		snprintf(a.name, sizeof(a.name), "process-changed");
		snprintf(a.text, sizeof(a.text), "process %d exited or its pid was reused meanwhile",
			 r.pid);
	}
	/* A tid for a client in another pid namespace is its number there. */
	if (a.kind == RTID__SVC_TID && s->c[s->inflight].other_ns &&
	    rtid__pid_to_ns("/proc", s->c[s->inflight].ns, a.value, &a.value) < 0) {
		a = (struct rtid__svc_ans){ .kind = RTID__SVC_ERROR };
		snprintf(a.name, sizeof(a.name), "not-a-thread");
		snprintf(a.text, sizeof(a.text), "the restore thread has no number in the client's "
			 "pid namespace");
	}
	sv_answer(s, s->inflight, &a);
	s->inflight = -1;
}

/* The queued request asked first, or -1. */
static int next_queued(const struct server *s)
{
	int best = -1;

	for (unsigned i = 0; i < s->cfg->max_clients; i++)
		if (s->c[i].fd >= 0 && s->c[i].queued && (int)i != s->inflight &&
		    (best < 0 || s->c[i].seq < s->c[best].seq))
			best = (int)i;
	return best;
}

/* Hand the next request to the worker, starting or replacing it first. */
static void dispatch(struct server *s)
{
	int i = next_queued(s);
	struct rtid__query q;

	if (i < 0 || s->inflight >= 0)
		return;
	if (s->w.state == SW_READY && sw_version_changed(&s->w, s->cfg)) {
		serve_log("driver version changed; attaching again");
		sw_stop(&s->w, false);
	}
	/* In the backoff the request fails at once: its client asks the tool now
	 * rather than wait for a driver that keeps failing. */
	if (s->w.state == SW_DOWN && sw_start(&s->w, s->cfg) < 0) {
		sv_fail(s, i, "worker-failed", s->w.why);
		return;
	}
	if (s->w.state != SW_READY)
		return;
	if (!sv_same_process(s, i)) {
		sv_fail(s, i, "process-changed", "the process exited or its pid was reused before "
			"the driver was asked");
		return;
	}
	q = (struct rtid__query){ .pid = s->c[i].pid, .op = s->c[i].req.op,
				 .timeout_ms = s->c[i].req.timeout_ms };
	if (send(s->w.sock, &q, sizeof(q), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(q)) {
		snprintf(s->w.why, sizeof(s->w.why), "driver API worker does not take queries");
		worker_down(s, "worker-crashed");
		return;
	}
	s->inflight = i;
	s->inflight_until = rtid__now() + sv_deadline_of(s->cfg, &s->c[i].req);
}

static void expire(struct server *s, double t)
{
	if (s->inflight >= 0 && t >= s->inflight_until) {
		serve_log("driver API call %s %d past its deadline; killing the worker",
			  rtid__svc_op_name(s->c[s->inflight].req.op), s->c[s->inflight].req.pid);
		snprintf(s->w.why, sizeof(s->w.why), "the driver did not answer in time");
		worker_down(s, "timeout");
	}
	if (s->w.state == SW_STARTING && t >= s->w.until) {
		snprintf(s->w.why, sizeof(s->w.why), "driver API worker did not attach in time");
		worker_down(s, "worker-failed");
	}
	for (unsigned i = 0; i < s->cfg->max_clients; i++) {
		struct client *c = &s->c[i];

		if (c->fd < 0 || (int)i == s->inflight)
			continue;
		if (c->queued && t >= c->req_until) {
			sv_fail(s, (int)i, "timeout", "no driver answer in time");
		} else if (!c->queued && t >= c->idle_until) {
			serve_log("client pid %d sent nothing in time; closing it", (int)c->peer);
			sv_drop(s, (int)i);
		}
	}
}

static void begin_stop(struct server *s)
{
	if (s->stopping)
		return;
	serve_log("stopping");
	sl_stopping();
	s->stopping = true;
	s->stop_until = rtid__now() + STOP_GRACE;
	sl_close(&s->l, s->cfg);
	sv_fail_queued(s, "shutting-down", "the daemon is stopping");
}

static double min_d(double a, double b)
{
	return a < b ? a : b;
}

/* The earliest time something must happen. */
static double next_event(const struct server *s)
{
	double t = s->stopping ? s->stop_until : rtid__now() + 3600;

	if (s->inflight >= 0)
		t = min_d(t, s->inflight_until);
	if (s->w.state == SW_STARTING)
		t = min_d(t, s->w.until);
	for (unsigned i = 0; i < s->cfg->max_clients; i++)
		if (s->c[i].fd >= 0 && (int)i != s->inflight)
			t = min_d(t, s->c[i].queued ? s->c[i].req_until : s->c[i].idle_until);
	return t;
}

enum { P_SIG, P_LISTEN, P_WORKER, P_FIXED };

/* SIGCHLD came: if the worker has exited (seen without reaping it, so that
 * its zombie still pins the group sw_stop kills), it is down now, also when
 * a process it started still holds its socket open. */
static void worker_exited(struct server *s)
{
	siginfo_t si = { 0 };

	if (s->w.pid <= 0 || waitid(P_PID, (id_t)s->w.pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
	    si.si_pid != s->w.pid)
		return;
	snprintf(s->w.why, sizeof(s->w.why), "driver API worker died");
	worker_down(s, s->w.state == SW_STARTING ? "worker-failed" : "worker-crashed");
}

static void poll_once(struct server *s, struct pollfd *p, int *slot)
{
	nfds_t np = P_FIXED;
	double left = (next_event(s) - rtid__now()) * 1000.0;

	p[P_SIG] = (struct pollfd){ .fd = s->sigfd, .events = POLLIN };
	p[P_LISTEN] = (struct pollfd){ .fd = s->stopping ? -1 : s->l.fd, .events = POLLIN };
	p[P_WORKER] = (struct pollfd){ .fd = s->w.sock, .events = POLLIN };
	for (unsigned i = 0; i < s->cfg->max_clients; i++)
		if (s->c[i].fd >= 0 && !s->c[i].queued) {
			slot[np] = (int)i;
			p[np++] = (struct pollfd){ .fd = s->c[i].fd, .events = POLLIN };
		}
	if (poll(p, np, left <= 0 ? 0 : (int)left + 1) < 0) {
		serve_log("poll: %s", strerror(errno));
		return;
	}
	/* The worker's socket first: what it said before it died (a failed
	 * greeting, a reply) is read before its death is noticed. */
	if (p[P_WORKER].revents && s->w.sock >= 0)
		worker_readable(s);
	if (p[P_SIG].revents) {
		struct signalfd_siginfo si;
		bool child = false;

		while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGCHLD)
				child = true;
			else
				begin_stop(s);
		}
		if (child)
			worker_exited(s);
	}
	for (nfds_t k = P_FIXED; k < np; k++)
		if (p[k].revents && s->c[slot[k]].fd == p[k].fd)
			sv_client_readable(s, slot[k]);
	if (p[P_LISTEN].revents && !s->stopping)
		sv_accept_all(s);
}

static int setup(struct server *s, const struct serve_cfg *cfg)
{
	sigset_t set;

	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->inflight = -1;
	s->l.fd = -1;
	sw_init(&s->w);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD); /* the worker's exit, read from the signalfd too */
	sigprocmask(SIG_BLOCK, &set, NULL);
	s->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	s->c = calloc(cfg->max_clients, sizeof(*s->c));
	if (s->sigfd < 0 || !s->c) {
		serve_log("cannot set up: %s", strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i < cfg->max_clients; i++)
		s->c[i].fd = -1;
	return sl_open(cfg, &s->l);
}

static void teardown(struct server *s)
{
	if (s->inflight >= 0)
		sv_fail(s, s->inflight, "shutting-down", "the daemon stopped before the driver answered");
	s->inflight = -1;
	sw_stop(&s->w, false);
	for (size_t i = 0; i < sizeof(s->w.reap) / sizeof(s->w.reap[0]); i++)
		if (s->w.reap[i] > 0)
			waitpid(s->w.reap[i], NULL, 0); /* at exit: none may be left */
	for (unsigned i = 0; s->c && i < s->cfg->max_clients; i++)
		if (s->c[i].fd >= 0)
			sv_drop(s, (int)i);
	sl_close(&s->l, s->cfg);
	if (s->sigfd >= 0)
		close(s->sigfd);
	free(s->c);
}

int serve_run(const struct serve_cfg *cfg)
{
	struct server s;
	struct pollfd *p;
	int *slot, rc = 0;

	memset(&s, 0, sizeof(s));
	s.l.fd = s.sigfd = -1;
	p = calloc(cfg->max_clients + P_FIXED, sizeof(*p));
	slot = calloc(cfg->max_clients + P_FIXED, sizeof(*slot));
	if (!p || !slot || setup(&s, cfg) < 0) {
		rc = 1;
		goto out;
	}
	serve_log("serving %s on %s", cfg->actions ? "queries and actions" : "queries",
		  s.l.created ? cfg->socket_path : "the socket systemd passed");
	/* The attach is paid now, before the first request, not by it. */
	if (sw_start(&s.w, cfg) < 0)
		worker_down(&s, "worker-failed");
	while (!s.stopping || (s.inflight >= 0 && rtid__now() < s.stop_until)) {
		poll_once(&s, p, slot);
		sw_reap(&s.w);
		expire(&s, rtid__now());
		if (s.stopping)
			sv_fail_queued(&s, "shutting-down", "the daemon is stopping");
		else
			dispatch(&s);
	}
out:
	teardown(&s);
	free(p);
	free(slot);
	return rc;
}
