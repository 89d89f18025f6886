/* The daemon's driver-API workers: each started when needed, restarted after
 * a death with the pool's backoff, and replaced when the driver version file
 * changes (a driver upgrade or reload: the old attach belongs to a driver
 * that is gone). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rtid.h"
#include "serve/serve.h"

extern char **environ;

/* A first failure restarts at once; then 0.1 s, doubled after each failure in a
 * row, at most 5 s. */
#define BACKOFF_FIRST 0.1
#define BACKOFF_MAX 5.0
#define QUIT_WAIT_MS 1000

int sp_init(struct spool *p, unsigned n)
{
	memset(p, 0, sizeof(*p));
	p->w = calloc(n, sizeof(*p->w));
	if (!p->w)
		return -ENOMEM;
	p->n = n;
	for (unsigned i = 0; i < n; i++) {
		p->w[i].sock = -1;
		p->w[i].pid = -1;
	}
	return 0;
}

void sp_free(struct spool *p)
{
	free(p->w);
	p->w = NULL;
	p->n = 0;
}

/* The whole version file into buf; (size_t)-1 when it cannot be read. */
static size_t read_version(const struct serve_cfg *cfg, char *buf, size_t cap)
{
	char path[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/driver/nvidia/version", cfg->proc_root);
	n = rtid__read_at(AT_FDCWD, path, buf, cap, RTID__READ_NOFOLLOW);
	return n < 0 ? (size_t)-1 : (size_t)n;
}

bool sw_version_changed(const struct sworker *w, const struct serve_cfg *cfg)
{
	char buf[sizeof(w->version)];
	size_t len = read_version(cfg, buf, sizeof(buf));

	return len != w->version_len || (len != (size_t)-1 && memcmp(buf, w->version, len) != 0);
}

/* Start the worker with sock as its fd 3 and nothing else of the daemon
 * (everything else is O_CLOEXEC), stdin /dev/null, stdout on stderr (nothing
 * of the worker's may look like an answer), signals as the worker expects. */
static int spawn_worker(const struct serve_cfg *cfg, int sock, pid_t *pid)
{
	struct rtid__worker_cmd cmd;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	int r;

	rtid__worker_argv(&cmd, cfg->worker, cfg->libcuda);
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, 2, 1);
	posix_spawn_file_actions_adddup2(&fa, sock, 3);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	/* A group of its own: whatever the driver starts goes with it. */
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				      POSIX_SPAWN_SETPGROUP);
	r = posix_spawn(pid, cfg->worker, &fa, &at, cmd.argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return -r;
}

/* Keep a worker that has not exited to reap later: process, the one its job
 * was about (none: 0), kill_at, when a worker let go is killed if it has
 * not exited by then (0: killed already). sw_start keeps a free entry for
 * this (reap_room), so there is always one. */
static void park(struct sworker *w, int process, double kill_at)
{
	size_t i = 0;

	/* Bounded all the same: the last entry, were the room ever gone. */
	while (i < sizeof(w->reap) / sizeof(w->reap[0]) - 1 && w->reap[i] > 0)
		i++;
	w->reap[i] = w->pid;
	w->reap_process[i] = process;
	w->reap_start[i] = w->start;
	w->reap_pstart[i] = process ? w->job.pstart : 0;
	w->reap_kill_at[i] = kill_at;
}

double sw_reap(struct sworker *w)
{
	double now = rtid__now(), next = 0;

	for (size_t i = 0; i < sizeof(w->reap) / sizeof(w->reap[0]); i++) {
		siginfo_t si = { 0 };
		int e;

		if (w->reap[i] <= 0)
			continue;
		/* Seen exited without reaping it, so that its zombie still pins the
		 * group's id for the kill below: a worker let go may leave a helper
		 * of the driver's in its group. Reaped only after that kill (a
		 * waitpid that found it exiting on its own would skip it). */
		e = waitid(P_PID, (id_t)w->reap[i], &si, WEXITED | WNOHANG | WNOWAIT);
		if (e < 0) { /* not ours to wait for any more */
			w->reap[i] = 0;
			continue;
		}
		if (si.si_pid == w->reap[i] || (w->reap_kill_at[i] > 0 && now >= w->reap_kill_at[i])) {
			killpg(w->reap[i], SIGKILL);
			w->reap_kill_at[i] = 0;
		}
		if (si.si_pid == w->reap[i] && waitpid(w->reap[i], NULL, WNOHANG) != 0)
			w->reap[i] = 0;
		else if (w->reap_kill_at[i] > 0 && (next == 0 || w->reap_kill_at[i] < next))
			next = w->reap_kill_at[i];
	}
	return next;
}

/* Whether w can take one more stopped worker to reap: workers killed but
 * stuck in the kernel (a hung driver) fill it; the slot then stays down
 * rather than block the loop waiting for one. */
static bool reap_room(struct sworker *w)
{
	sw_reap(w);
	for (size_t i = 0; i < sizeof(w->reap) / sizeof(w->reap[0]); i++)
		if (w->reap[i] <= 0)
			return true;
	return false;
}

int sw_start(struct spool *p, struct sworker *w, const struct serve_cfg *cfg)
{
	int sv[2], r;

	if (w->state != SW_DOWN || rtid__now() < p->retry_at)
		return w->state == SW_DOWN ? -EAGAIN : 0;
	if (!reap_room(w)) {
		snprintf(p->why, sizeof(p->why), "killed workers are stuck in the driver");
		return -EBUSY;
	}
	/* Never fd 3 itself: dup2 onto the same fd would keep its O_CLOEXEC. */
	if ((r = rtid__worker_pair(sv)) < 0) {
		p->attach_failures++; /* as a worker that could not be started */
		return r;
	}
	w->version_len = read_version(cfg, w->version, sizeof(w->version));
	r = sv[1] == 3 ? -EBADF : spawn_worker(cfg, sv[1], &w->pid);
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		w->pid = -1;
		p->attach_failures++;
		snprintf(p->why, sizeof(p->why), "cannot start the worker %s: %s", cfg->worker,
			 strerror(-r));
		p->failures++;
		p->retry_at = rtid__now() + BACKOFF_MAX;
		return r;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	w->sock = sv[0];
	/* Its identity in the record of work in flight (serve-inflight.c): the
	 * real /proc, whatever --proc serves. Its exit is seen by SIGCHLD. */
	if (rtid_proc_start_time("/proc", w->pid, &w->start) < 0)
		w->start = 0;
	w->state = SW_STARTING;
	w->since = rtid__now();
	w->until = w->since + cfg->attach_timeout_s;
	w->busy = false;
	p->attaches++;
	return 0;
}

void sw_stop(struct spool *p, struct sworker *w, enum sw_end how)
{
	double delay = BACKOFF_FIRST;
	int process = w->busy ? w->job.process : 0;

	if (w->sock >= 0)
		close(w->sock);
	w->sock = -1;
	if (w->pid > 0 && how == SW_RETIRE) {
		/* Not at fault: it exits when its socket closes, and detaches from
		 * the driver as a process does; killed only if it has not within
		 * QUIT_WAIT_MS. Nobody waits for it here. */
		park(w, process, rtid__now() + QUIT_WAIT_MS / 1000.0);
	} else if (w->pid > 0) {
		/* The group while its unreaped leader still pins the id. Never a
		 * wait here, not even a short one: a worker stuck in the kernel
		 * (a hung driver call) outlives SIGKILL, and each wait would stall
		 * every client. It is reaped by sw_reap when SIGCHLD says it is
		 * gone; until then its process counts as in the driver. */
		killpg(w->pid, SIGKILL);
		park(w, process, 0);
	}
	w->pid = -1;
	w->state = SW_DOWN;
	w->busy = false;
	if (how != SW_FAILED)
		return;
	p->attach_failures++; /* only a worker that never became ready ends so */
	for (unsigned i = 1; i < p->failures && delay < BACKOFF_MAX; i++)
		delay *= 2;
	p->retry_at = p->failures ? rtid__now() + (delay < BACKOFF_MAX ? delay : BACKOFF_MAX) : 0;
	p->failures++;
}

int sw_read_hello(struct spool *p, struct sworker *w)
{
	struct rtid__hello h;
	ssize_t n = recv(w->sock, &h, sizeof(h), MSG_DONTWAIT);

	if (n < 0 && errno == EAGAIN)
		return 0;
	if (rtid__worker_greeting(&h, n, p->why, sizeof(p->why)) == 0) {
		w->state = SW_READY;
		w->ops = h.ops;
		return 1;
	}
	if (n != (ssize_t)sizeof(h))
		snprintf(p->why, sizeof(p->why), "driver API worker ended before it was ready");
	return -1;
}
