/* Run a program as a child with stdout and stderr captured apart, in a process
 * group of its own so that a timeout can kill it and anything it started, and
 * with a pidfd so that its exit wakes poll() like its output does. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "sys.h"

extern char **environ;

double rtid__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static int spawn_attrs(posix_spawnattr_t *a)
{
	sigset_t none, all;

	sigemptyset(&none);
	sigfillset(&all);
	/* The caller (CRIU) may block or ignore signals; the tool must not inherit
	 * that, and must lead its own group so killpg reaches all it starts. */
	if (posix_spawnattr_init(a))
		return -ENOMEM;
	posix_spawnattr_setsigmask(a, &none);
	posix_spawnattr_setsigdefault(a, &all);
	posix_spawnattr_setpgroup(a, 0);
	posix_spawnattr_setflags(a, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				    POSIX_SPAWN_SETPGROUP);
	return 0;
}

static int spawn_actions(posix_spawn_file_actions_t *fa, int out, int err, int extra)
{
	if (posix_spawn_file_actions_init(fa))
		return -ENOMEM;
	if (posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0) ||
	    posix_spawn_file_actions_adddup2(fa, out, 1) ||
	    posix_spawn_file_actions_adddup2(fa, err, 2) ||
	    (extra >= 0 && posix_spawn_file_actions_adddup2(fa, extra, 3)) ||
	    posix_spawn_file_actions_addclosefrom_np(fa, extra >= 0 ? 4 : 3)) {
		posix_spawn_file_actions_destroy(fa);
		return -ENOMEM;
	}
	return 0;
}

static int do_spawn(struct rtid__child *c, const char *path, char *const argv[],
		    int out_w, int err_w, int extra)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int r;

	r = spawn_actions(&fa, out_w, err_w, extra);
	if (r < 0)
		return r;
	r = spawn_attrs(&attr);
	if (r < 0) {
		posix_spawn_file_actions_destroy(&fa);
		return r;
	}
	r = -rtid__posix_spawn(&c->pid, path, &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return r;
}

int rtid__child_start(struct rtid__child *c, const char *path, char *const argv[],
		      double timeout_s)
{
	return rtid__child_start_fd(c, path, argv, timeout_s, -1);
}

int rtid__child_start_fd(struct rtid__child *c, const char *path, char *const argv[],
			 double timeout_s, int extra_fd)
{
	int po[2], pe[2], r;

	memset(c, 0, sizeof(*c));
	c->pidfd = c->fd[0] = c->fd[1] = -1;
	if (rtid__pipe2(po, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	if (rtid__pipe2(pe, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = -errno;
		goto close_out;
	}
	r = do_spawn(c, path, argv, po[1], pe[1], extra_fd);
	if (r < 0)
		goto close_err;
	c->pidfd = rtid__pidfd_open(c->pid);
	if (c->pidfd < 0 && errno != ENOSYS) {
		r = -errno;
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		goto close_err;
	}
	close(po[1]);
	close(pe[1]);
	c->fd[0] = po[0];
	c->fd[1] = pe[0];
	c->deadline = rtid__now() + timeout_s;
	return 0;
close_err:
	close(pe[0]);
	close(pe[1]);
close_out:
	close(po[0]);
	close(po[1]);
	return r;
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
 * pins the group id, then reap it. */
static void reap(struct rtid__child *c)
{
	killpg(c->pid, SIGKILL);
	while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
		;
	c->reaped = true;
	close_fd(&c->pidfd);
}

/* Without pidfds (kernels before 5.3, valgrind 3.19) a child's exit is
 * noticed by asking, between short polls: waitid with WNOWAIT leaves the
 * zombie in place so that reap() can still kill its group first. */
void rtid__child_check_exit(struct rtid__child *c)
{
	siginfo_t si = { 0 };

	if (c->reaped || c->pidfd >= 0)
		return;
	if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid)
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
 * exited but whose pipes stay open (an escaped grandchild) ends there too,
 * keeping its real status. */
static size_t expire(struct rtid__child **v, size_t n, double now)
{
	size_t active = 0;

	for (size_t i = 0; i < n; i++) {
		if (rtid__child_done(v[i]))
			continue;
		if (now >= v[i]->deadline)
			rtid__child_abort(v[i], !v[i]->reaped);
		else
			active++;
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
