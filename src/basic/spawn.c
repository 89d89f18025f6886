/* Start a program as a child with stdout and stderr captured apart, in a
 * process group of its own so that a timeout can kill it and anything it
 * started, with a pidfd so that its exit wakes poll() like its output does,
 * and tied to our life: PR_SET_PDEATHSIG kills it if we die, even by SIGKILL.
 * posix_spawn cannot set the death signal, so this forks and sets up the
 * child itself, with async-signal-safe calls only. Every running child is in
 * a registry that rtid__kill_children() empties from a signal handler. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic/cov.h"
#include "basic/basic.h"
#include "basic/sys.h"

extern char **environ;

#define LIVE_MAX 256 /* children registered at once; more run unregistered */
#define HIGH_FD 10   /* where the child parks its fds before placing them */

static pid_t live[LIVE_MAX];

void rtid__wait(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0) {
		if (errno == EINTR)
			continue;
		/* Reaped by someone else (waitpid(-1), SIGCHLD ignored): the exit
		 * status is lost, and an unknown status is never read as a clean
		 * exit. As a kill, it makes the answer an error. */
		if (status)
			*status = SIGKILL;
		return;
	}
}

static void live_add(pid_t pid)
{
	for (size_t i = 0; i < LIVE_MAX; i++) {
		pid_t none = 0;

		if (__atomic_compare_exchange_n(&live[i], &none, pid, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return;
	}
}

void rtid__live_remove(pid_t pid)
{
	for (size_t i = 0; i < LIVE_MAX; i++) {
		pid_t p = pid;

		if (__atomic_compare_exchange_n(&live[i], &p, 0, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return;
	}
}

void rtid__kill_children(void)
{
	int saved = errno;

	/* Kill every group first, then reap: the slowest to die sets the pace once. */
	for (size_t i = 0; i < LIVE_MAX; i++) {
		pid_t p = __atomic_load_n(&live[i], __ATOMIC_SEQ_CST);

		if (p > 0)
			killpg(p, SIGKILL);
	}
	for (size_t i = 0; i < LIVE_MAX; i++) {
		pid_t p = __atomic_exchange_n(&live[i], 0, __ATOMIC_SEQ_CST);

		if (p > 0)
			rtid__wait(p, NULL);
	}
	errno = saved;
}

/* fd to a number above the ones being placed, so that dup2 order never
 * clobbers a source (the caller may have closed 0-2). */
static int park(int fd, int *out)
{
	if (fd < 0) {
		*out = -1;
		return 0;
	}
	*out = fcntl(fd, F_DUPFD, HIGH_FD);
	return *out < 0 ? -1 : 0;
}

/* Close every fd from 'from' on except keep (the exec-error pipe, CLOEXEC). */
static void close_rest(int from, int keep)
{
	struct rlimit rl;

	if (rtid__close_range((unsigned)from, (unsigned)keep - 1) == 0 &&
	    rtid__close_range((unsigned)keep + 1, ~0U) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > 65536)
		rl.rlim_cur = 65536;
	for (int fd = from; fd < (int)rl.rlim_cur; fd++)
		if (fd != keep)
			close(fd);
}

/* In the child: returns only on failure, the errno. errfd is CLOEXEC. */
static int child_exec(const char *path, char *const argv[], pid_t parent, const int fds[3],
		      int errfd)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	int p[3], null;
	sigset_t none;

	/* If the parent died before prctl, no signal will come: check by pid. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		return ESRCH;
	setpgid(0, 0);
	/* The caller (CRIU) may block or ignore signals; the tool must not inherit that. */
	for (int s = 1; s < NSIG; s++)
		sigaction(s, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int i = 0; i < 3; i++)
		if (park(fds[i], &p[i]) < 0)
			return errno;
	null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, 0) < 0 || dup2(p[0], 1) < 0 || dup2(p[1], 2) < 0 ||
	    (p[2] >= 0 && dup2(p[2], 3) < 0))
		return errno;
	close_rest(p[2] >= 0 ? 4 : 3, errfd);
	execve(path, argv, environ);
	return errno;
}

/* The child's side of do_spawn: never returns. */
static __attribute__((noreturn)) void child_run(const char *path, char *const argv[],
						pid_t parent, const int fds[3], int ep[2])
{
	int errfd, e;

	close(ep[0]);
	/* Above the fds being placed, so that neither clobbers the other. */
	errfd = fcntl(ep[1], F_DUPFD_CLOEXEC, HIGH_FD);
	e = errfd < 0 ? errno : child_exec(path, argv, parent, fds, errfd);
	/* Before the parent learns of the failure: nobody kills us meanwhile, and
	 * a SIGKILL in the middle of the write would spoil the counters. */
	RTID__COV_DUMP();
	if (errfd >= 0)
		(void)!write(errfd, &e, sizeof(e));
	_exit(127);
}

/* Fork and exec; 0 and c->pid, or the child's exec errno negated. */
static int do_spawn(struct rtid__child *c, const char *path, char *const argv[],
		    const int fds[3])
{
	pid_t parent = getpid();
	int ep[2], e = 0, st;
	sigset_t all, old;
	ssize_t n;

	if (rtid__pipe2(ep, O_CLOEXEC) < 0)
		return -errno;
	/* No handler of ours may run in the child before it has reset them all:
	 * it would act on the parent's copy of the registry. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	c->pid = rtid__fork();
	e = errno;
	if (c->pid == 0)
		child_run(path, argv, parent, fds, ep);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (c->pid < 0) {
		close(ep[0]);
		close(ep[1]);
		return -e;
	}
	close(ep[1]);
	while ((n = read(ep[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (n == (ssize_t)sizeof(e)) {
		rtid__wait(c->pid, &st);
		return -(e ? e : EIO);
	}
	live_add(c->pid);
	return 0;
}

int rtid__child_start(struct rtid__child *c, const char *path, char *const argv[],
		      double timeout_s)
{
	return rtid__child_start_fd(c, path, argv, timeout_s, -1);
}

/* A pipe whose read end (ours) is non-blocking and whose write end (the
 * child's stdout or stderr) stays blocking: a tool must never see EAGAIN. */
static int out_pipe(int p[2])
{
	if (rtid__pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
		int e = -errno;

		close(p[0]);
		close(p[1]);
		return e;
	}
	return 0;
}

int rtid__child_start_fd(struct rtid__child *c, const char *path, char *const argv[],
			 double timeout_s, int extra_fd)
{
	int po[2], pe[2], r;

	memset(c, 0, sizeof(*c));
	c->pidfd = c->fd[0] = c->fd[1] = -1;
	if ((r = out_pipe(po)) < 0)
		return r;
	if ((r = out_pipe(pe)) < 0)
		goto close_out;
	r = do_spawn(c, path, argv, (const int[3]){ po[1], pe[1], extra_fd });
	if (r < 0)
		goto close_err;
	c->pidfd = rtid__pidfd_open(c->pid);
	/* ESRCH: the child is gone already, reaped by someone else (a zombie
	 * would still be found); its end is then seen as with no pidfds. */
	if (c->pidfd < 0 && errno != ENOSYS && errno != ESRCH) {
		r = -errno;
		killpg(c->pid, SIGKILL);
		rtid__live_remove(c->pid);
		rtid__wait(c->pid, NULL);
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
