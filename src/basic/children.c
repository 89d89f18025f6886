/* Waiting for children: their output, their exit, their deadlines. A child
 * is done when it has exited and both its pipes are at EOF; a descendant that
 * keeps a pipe open gets a short grace after the child's exit, no more. */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/basic.h"

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

bool rtid__child_done(const struct rtid__child *c)
{
	return c->reaped && c->fd[0] < 0 && c->fd[1] < 0;
}

int rtid__child_pollfds(const struct rtid__child *c, struct pollfd *p)
{
	int n = 0;

	for (int i = 0; i < 2; i++)
		if (c->fd[i] >= 0)
			p[n++] = (struct pollfd){ .fd = c->fd[i], .events = POLLIN };
	if (!c->reaped && c->pidfd >= 0)
		p[n++] = (struct pollfd){ .fd = c->pidfd, .events = POLLIN };
	return n;
}



/* Keep what fits; keep reading the rest so the child never blocks on a full pipe. */
static void drain(struct rtid__child *c, int i)
{
	char *buf = i == 0 ? c->out : c->err;
	size_t cap = i == 0 ? sizeof(c->out) : sizeof(c->err);
	size_t *len = i == 0 ? &c->out_len : &c->err_len;
	char sink[4096];

	for (;;) {
		ssize_t n;

		if (*len < cap)
			n = read(c->fd[i], buf + *len, cap - *len);
		else
			n = read(c->fd[i], sink, sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close_fd(&c->fd[i]);
			return;
		}
		if (*len < cap)
			*len += (size_t)n;
		else if (i == 0)
			c->out_overflow = true;
	}
}

/* The leader has exited: kill what it left in its group while its zombie still
 * pins the group id, then reap it. Output it wrote is in the pipes already;
 * a descendant outside the group that holds them open gets only the grace. */
static void reap(struct rtid__child *c)
{
	double grace = rtid__now() + RTID__EXIT_GRACE_S;
	siginfo_t si;

	/* Only while the child or its zombie pins the group id: one reaped by
	 * someone else (SIGCHLD ignored, a waitpid(-1) elsewhere) left a number
	 * that another group may hold by now. */
	if (waitid(P_PID, c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 || errno != ECHILD)
		killpg(c->pid, SIGKILL);
	rtid__live_remove(c->pid);
	rtid__wait(c->pid, &c->status);
	c->reaped = true;
	close_fd(&c->pidfd);
	if (grace < c->deadline)
		c->deadline = grace;
}

/* Without pidfds (kernels before 5.3, valgrind 3.19) a child's exit is
 * noticed by asking, between short polls: waitid with WNOWAIT leaves the
 * zombie in place so that reap() can still kill its group first. */
void rtid__child_check_exit(struct rtid__child *c)
{
	siginfo_t si = { 0 };
	int r;

	if (c->reaped || c->pidfd >= 0)
		return;
	r = waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT);
	/* ECHILD: someone else reaped it; waiting on would run to the timeout. */
	if ((r == 0 && si.si_pid) || (r < 0 && errno == ECHILD))
		reap(c);
}

void rtid__child_handle(struct rtid__child *c, const struct pollfd *p, int np)
{
	rtid__child_check_exit(c);
	for (int k = 0; k < np; k++) {
		if (!p[k].revents)
			continue;
		if (c->pidfd >= 0 && p[k].fd == c->pidfd && !c->reaped)
			reap(c);
		else if (p[k].fd == c->fd[0])
			drain(c, 0);
		else if (p[k].fd == c->fd[1])
			drain(c, 1);
	}
}

void rtid__child_abort(struct rtid__child *c, bool timed_out)
{
	if (!c->reaped) {
		c->timed_out = timed_out;
		reap(c);
	}
	close_fd(&c->fd[0]);
	close_fd(&c->fd[1]);
}

static int poll_timeout_ms(struct rtid__child **v, size_t n, double batch_deadline)
{
	double next = batch_deadline > 0 ? batch_deadline : 0;
	double wait;

	for (size_t i = 0; i < n; i++)
		if (!rtid__child_done(v[i]) && (next <= 0 || v[i]->deadline < next))
			next = v[i]->deadline;
	wait = (next - rtid__now()) * 1000.0;
	for (size_t i = 0; i < n; i++)
		if (!v[i]->reaped && v[i]->pidfd < 0 && wait > RTID__NOPIDFD_POLL_MS)
			wait = RTID__NOPIDFD_POLL_MS;
	return wait < 0 ? 0 : wait > 60000 ? 60000 : (int)wait + 1;
}

/* Children past their own deadline are aborted as timed out. A child that has
 * exited but whose pipes stay open (an escaped grandchild) ends at the end of
 * its grace, keeping its real status and what it wrote. */
static size_t expire(struct rtid__child **v, size_t n, double now)
{
	size_t active = 0;

	for (size_t i = 0; i < n; i++) {
		if (rtid__child_done(v[i]))
			continue;
		if (now >= v[i]->deadline) {
			/* Whatever arrived before the grace ended still counts. */
			for (int k = 0; k < 2; k++)
				if (v[i]->reaped && v[i]->fd[k] >= 0)
					drain(v[i], k);
			rtid__child_abort(v[i], !v[i]->reaped);
		} else {
			active++;
		}
	}
	return active;
}

static size_t count_done(struct rtid__child **v, size_t n)
{
	size_t done = 0;

	for (size_t i = 0; i < n; i++)
		done += rtid__child_done(v[i]);
	return done;
}

bool rtid__children_wait(struct rtid__child **v, size_t n, double batch_deadline, bool any)
{
	struct pollfd p[3 * RTID__MAX_CHILDREN];
	int cnt[RTID__MAX_CHILDREN];

	if (n > RTID__MAX_CHILDREN)
		n = RTID__MAX_CHILDREN;
	for (;;) {
		double now = rtid__now();
		int np = 0;

		if (batch_deadline > 0 && now >= batch_deadline)
			return expire(v, n, now) > 0;
		if (expire(v, n, now) == 0 || (any && count_done(v, n) > 0))
			return false;
		for (size_t i = 0; i < n; i++) {
			cnt[i] = rtid__child_done(v[i]) ? 0 : rtid__child_pollfds(v[i], p + np);
			np += cnt[i];
		}
		if (poll(p, (nfds_t)np, poll_timeout_ms(v, n, batch_deadline)) < 0 &&
		    errno != EINTR) {
			/* Cannot wait any more: end them rather than leave them running. */
			for (size_t i = 0; i < n; i++)
				rtid__child_abort(v[i], true);
			return false;
		}
		for (size_t i = 0, k = 0; i < n; k += (size_t)cnt[i], i++)
			rtid__child_handle(v[i], p + k, cnt[i]);
	}
}
