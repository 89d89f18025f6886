/* The daemon's event loop: one poll over the listening socket, the clients,
 * the workers, a signalfd and the pidfds of a previous daemon's workers.
 * Nothing blocks: a client that sends nothing or sends slowly only runs out
 * its own deadline, each worker answers one request at a time, each under
 * its own deadline (serve-dispatch.c), and no child is ever waited for: a
 * killed worker is reaped when SIGCHLD says it has exited, and until then its
 * process counts as in the driver (sv_in_driver). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/proc.h"
#include "serve/serve.h"

#define STOP_GRACE 5.0 /* seconds a query in flight may still take at a stop */
#define STOP_REAP 1.0  /* seconds a stop waits for killed workers to be gone, past
			* the grace of those let go; then they are left, recorded */
#define FD_RESERVE 16  /* fds besides clients and workers: stdio, socket, signalfd, reads */

static void expire(struct server *s, double t)
{
	for (unsigned k = 0; k < s->pool.n; k++) {
		struct sworker *w = &s->pool.w[k];

		if (w->busy && t >= w->job.until) {
			serve_log(SLOG_ERR "driver API call %s %d past its deadline; killing the worker",
				  rtid__svc_op_name(w->job.op), w->job.pid);
			snprintf(s->pool.why, sizeof(s->pool.why), "the driver did not answer in time");
			sv_worker_down(s, k, "timeout");
		} else if (w->state == SW_STARTING && t >= w->until) {
			snprintf(s->pool.why, sizeof(s->pool.why),
				 "driver API worker did not attach in time");
			sv_worker_down(s, k, "worker-failed");
		}
	}
	/* Stopping: a query with a worker has had its grace; an action runs on
	 * to its own deadline. */
	for (unsigned k = 0; s->stopping && t >= s->stop_until && k < s->pool.n; k++)
		if (s->pool.w[k].busy && s->pool.w[k].job.op < RTID__OP_LOCK) {
			snprintf(s->pool.why, sizeof(s->pool.why), "the daemon is stopping");
			sv_worker_down(s, k, "shutting-down");
		}
	for (unsigned i = 0; i < s->cfg->max_clients; i++) {
		struct client *c = &s->c[i];

		if (c->fd < 0 || c->inflight)
			continue;
		if (c->queued && t >= c->req_until) {
			sv_fail_waiting(s, (int)i, "timeout", "no driver answer in time; not started");
		} else if (!c->queued && t >= c->idle_until) {
			/* A connection kept between questions (rtid's CRIU plugin keeps
			 * one per CRIU run) is closed without a word: its client opens
			 * another when it asks again. One that never asked is said. */
			if (!c->asked)
				serve_log_limited(SLOG_CLIENT, "client pid %d sent nothing in time; "
						  "closing it", (int)c->peer);
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
	s->accept_at = 0;
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
	double now = rtid__now(), t = s->stopping && now < s->stop_until ? s->stop_until : now + 3600;

	for (unsigned k = 0; k < s->pool.n; k++) {
		if (s->pool.w[k].busy)
			t = min_d(t, s->pool.w[k].job.until);
		if (s->pool.w[k].state == SW_STARTING)
			t = min_d(t, s->pool.w[k].until);
	}
	if (!s->stopping && s->accept_at > now)
		t = min_d(t, s->accept_at);
	if (s->reap_at > 0)
		t = min_d(t, s->reap_at);
	if (s->held_check_at > 0)
		t = min_d(t, s->held_check_at);
	if (serve_log_due() > 0) /* the summary at its window's end, not at the next event */
		t = min_d(t, serve_log_due());
	for (unsigned i = 0; i < s->cfg->max_clients; i++)
		if (s->c[i].fd >= 0 && !s->c[i].inflight)
			t = min_d(t, s->c[i].queued ? s->c[i].req_until : s->c[i].idle_until);
	return t;
}

enum { P_SIG, P_LISTEN, P_FIXED };

/* SIGCHLD came: each worker that has exited (seen without reaping it, so
 * that its zombie still pins the group sw_stop kills) is down now, also when
 * a process it started still holds its socket open. */
static void workers_exited(struct server *s)
{
	for (unsigned k = 0; k < s->pool.n; k++) {
		struct sworker *w = &s->pool.w[k];
		siginfo_t si = { 0 };

		if (w->pid <= 0 || waitid(P_PID, (id_t)w->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
		    si.si_pid != w->pid)
			continue;
		snprintf(s->pool.why, sizeof(s->pool.why), "driver API worker died");
		sv_worker_down(s, k, w->state == SW_STARTING ? "worker-failed" : "worker-crashed");
	}
}

static void signals(struct server *s)
{
	struct signalfd_siginfo si;
	bool child = false;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			child = true;
		else
			begin_stop(s);
	}
	if (child)
		workers_exited(s);
}

static void poll_once(struct server *s, struct pollfd *p, int *slot)
{
	nfds_t np = P_FIXED, nw;
	double now = rtid__now(), left;
	bool listen;

	if (s->accept_at > 0 && now >= s->accept_at)
		s->accept_at = 0; /* the pause is over */
	left = (next_event(s) - now) * 1000.0;
	listen = !s->stopping && s->accept_at == 0;

	p[P_SIG] = (struct pollfd){ .fd = s->sigfd, .events = POLLIN };
	p[P_LISTEN] = (struct pollfd){ .fd = listen ? s->l.fd : -1, .events = POLLIN };
	for (unsigned k = 0; k < s->pool.n; k++)
		if (s->pool.w[k].sock >= 0) {
			slot[np] = (int)k;
			p[np++] = (struct pollfd){ .fd = s->pool.w[k].sock, .events = POLLIN };
		}
	nw = np;
	/* A previous daemon's workers: their exit only wakes the loop (si_check). */
	for (unsigned j = 0; j < s->nheld; j++)
		if (s->held[j].pidfd >= 0) {
			slot[np] = -1;
			p[np++] = (struct pollfd){ .fd = s->held[j].pidfd, .events = POLLIN };
		}
	for (unsigned i = 0; i < s->cfg->max_clients; i++)
		if (s->c[i].fd >= 0) {
			slot[np] = (int)i;
			p[np++] = (struct pollfd){ .fd = s->c[i].fd, .events = POLLIN };
		}
	if (poll(p, np, left <= 0 ? 0 : (int)left + 1) < 0) {
		/* Never EINTR (every signal comes by the signalfd): out of memory,
		 * or fds. A pause, rather than the same failure again at once. */
		struct timespec pause = { 0, (long)(ACCEPT_PAUSE_FIRST * 1e9) };

		serve_log_limited(SLOG_POLL, "poll: %s", strerror(errno));
		nanosleep(&pause, NULL);
		signals(s); /* a stop is still heard */
		return;
	}
	/* The workers' sockets first: what one said before it died (a failed
	 * greeting, a reply) is read before its death is noticed. */
	for (nfds_t j = P_FIXED; j < nw; j++)
		if (p[j].revents && s->pool.w[slot[j]].sock == p[j].fd)
			sv_worker_readable(s, (unsigned)slot[j]);
	if (p[P_SIG].revents)
		signals(s);
	for (nfds_t j = nw; j < np; j++)
		if (p[j].revents && slot[j] >= 0 && s->c[slot[j]].fd == p[j].fd)
			sv_client_readable(s, slot[j]);
	if (p[P_LISTEN].revents && !s->stopping)
		sv_accept_all(s);
}

/* Room for max_clients connections within RLIMIT_NOFILE, raising the soft
 * limit when the hard one allows; else fewer clients, said once. 0, or -1
 * when not even one client fits. */
static int fit_fd_limit(struct serve_cfg *cfg)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)cfg->max_clients + 3 * (rlim_t)cfg->workers + FD_RESERVE +
		      RTID__SVC_BATCH_MAX; /* the pidfds of the one batch with a worker */

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max > rl.rlim_cur) {
		rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_cur < 3 * (rlim_t)cfg->workers + FD_RESERVE + 1) {
		serve_log(SLOG_ERR "the fd limit (RLIMIT_NOFILE %llu) leaves no room for a client beside "
			  "%u workers; raise it (LimitNOFILE=) or lower --workers",
			  (unsigned long long)rl.rlim_cur, cfg->workers);
		return -1;
	}
	serve_log(SLOG_WARNING "--max-clients %u does not fit the fd limit (RLIMIT_NOFILE %llu): "
		  "serving at most %llu clients; raise the limit (LimitNOFILE=) to serve more",
		  cfg->max_clients, (unsigned long long)rl.rlim_cur,
		  (unsigned long long)(rl.rlim_cur - 3 * cfg->workers - FD_RESERVE));
	cfg->max_clients = (unsigned)(rl.rlim_cur - 3 * cfg->workers - FD_RESERVE);
	return 0;
}

static int setup(struct server *s, const struct serve_cfg *cfg)
{
	sigset_t set;

	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->l.fd = s->l.lock = s->record_dir = -1;
	s->accept_delay = ACCEPT_PAUSE_FIRST;
	st_init(&s->stats);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	/* Every stop signal stops alike (begin_stop): a hangup of the terminal
	 * or ssh session of a daemon in the foreground, ^C, ^\, systemd's stop. */
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGCHLD); /* the workers' exits, read from the signalfd too */
	sigprocmask(SIG_BLOCK, &set, NULL);
	s->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	s->c = calloc(cfg->max_clients, sizeof(*s->c));
	if (s->sigfd < 0 || !s->c || sp_init(&s->pool, cfg->workers) < 0) {
		serve_log(SLOG_ERR "cannot set up: %s", strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i < cfg->max_clients; i++)
		s->c[i].fd = -1;
	if (sl_open(cfg, &s->l) < 0)
		return -1;
	si_load(s); /* under the lock: no other daemon writes the record now */
	return 0;
}

/* Every worker gone: the busy ones killed (their clients told), the others
 * let go all at once; then each reaped as SIGCHLD says, those outstaying
 * their grace killed. Bounded: a killed worker stuck in the kernel is left
 * after STOP_REAP (the init process reaps it when it ends) and stays in the
 * record of work in flight (si_close) for the next daemon. A stop never
 * waits for ever, against systemd's stop timeout. */
static void end_workers(struct server *s)
{
	double until = rtid__now() + 1.0 + STOP_REAP; /* the grace of those let go, and more */
	bool left = true;

	for (unsigned k = 0; k < s->pool.n; k++) {
		if (s->pool.w[k].busy) {
			snprintf(s->pool.why, sizeof(s->pool.why),
				 "the daemon stopped before the driver answered");
			sv_worker_down(s, k, "shutting-down");
		}
		sw_stop(&s->pool, &s->pool.w[k], SW_RETIRE);
	}
	while (left && s->sigfd >= 0) {
		struct signalfd_siginfo si;
		double next = until, now;

		left = false;
		for (unsigned k = 0; k < s->pool.n; k++) {
			struct sworker *w = &s->pool.w[k];
			double t = sw_reap(w);

			next = t > 0 && t < next ? t : next;
			for (size_t i = 0; i < sizeof(w->reap) / sizeof(w->reap[0]); i++)
				left = left || w->reap[i] > 0;
		}
		now = rtid__now();
		if (!left || now >= until)
			break;
		poll(&(struct pollfd){ .fd = s->sigfd, .events = POLLIN }, 1,
		     (int)((next - now) * 1000.0) + 1);
		while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
	}
	if (left)
		serve_log(SLOG_WARNING "workers stuck in the driver are left behind at exit");
}

static void teardown(struct server *s)
{
	if (s->pool.w)
		end_workers(s);
	for (unsigned i = 0; s->c && i < s->cfg->max_clients; i++)
		if (s->c[i].fd >= 0)
			sv_drop(s, (int)i);
	sl_close(&s->l, s->cfg);
	if (s->l.lock >= 0)
		si_close(s); /* the record is the lock holder's alone */
	sl_unlock(&s->l);
	if (s->sigfd >= 0)
		close(s->sigfd);
	sp_free(&s->pool);
	free(s->c);
}

/* Whether the loop goes on: until stopped, then while an action runs (to its
 * own deadline: cutting it would leave its process in an unknown state) or a
 * query runs within the grace. */
static bool going_on(const struct server *s)
{
	return !s->stopping || sv_busy(s, true) > 0 ||
	       (sv_busy(s, false) > 0 && rtid__now() < s->stop_until);
}

int serve_run(const struct serve_cfg *given)
{
	struct serve_cfg cfg = *given;
	struct server s;
	struct pollfd *p = NULL;
	int *slot = NULL, rc = 0;

	memset(&s, 0, sizeof(s));
	s.l.fd = s.l.lock = s.sigfd = s.record_dir = -1;
	if (fit_fd_limit(&cfg) < 0)
		return 1;
	p = calloc(cfg.max_clients + cfg.workers + HELD_MAX + P_FIXED, sizeof(*p));
	slot = calloc(cfg.max_clients + cfg.workers + HELD_MAX + P_FIXED, sizeof(*slot));
	if (!p || !slot || setup(&s, &cfg) < 0) {
		rc = 1;
		goto out;
	}
	serve_log("rtid " RTID_VERSION " serving %s on %s with up to %u workers; at most %u "
		  "clients, %u per uid; deadlines: query %.1f s, action %.1f s, attach %.1f s; "
		  "driver library %s", cfg.actions ? "queries and actions" : "queries",
		  s.l.created ? cfg.socket_path : "the socket systemd passed", cfg.workers,
		  cfg.max_clients, sv_per_uid(&cfg),
		  cfg.timeout_s, cfg.action_timeout_s, cfg.attach_timeout_s,
		  cfg.libcuda);
	/* The first attach is paid now, before the first request, not by it. */
	if (sw_start(&s.pool, &s.pool.w[0], &cfg) < 0)
		sv_worker_down(&s, 0, "worker-failed");
	while (going_on(&s)) {
		poll_once(&s, p, slot);
		s.reap_at = 0;
		for (unsigned k = 0; k < s.pool.n; k++) {
			double t = sw_reap(&s.pool.w[k]);

			s.reap_at = t > 0 && (s.reap_at == 0 || t < s.reap_at) ? t : s.reap_at;
		}
		si_check(&s);
		expire(&s, rtid__now());
		serve_log_flush();
		if (s.stopping)
			sv_fail_queued(&s, "shutting-down", "the daemon is stopping; not started");
		else
			sv_dispatch(&s);
	}
out:
	teardown(&s);
	free(p);
	free(slot);
	return rc;
}
