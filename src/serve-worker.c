/* The daemon's driver-API worker: started once, restarted after a death with
 * a backoff, and replaced when the driver version file changes (a driver
 * upgrade or reload: the old attach belongs to a driver that is gone). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"

/* A first failure restarts at once; then 0.1 s, doubled after each failure in a
 * row, at most 5 s. */
#define BACKOFF_FIRST 0.1
#define BACKOFF_MAX 5.0

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sw_init(struct sworker *w)
{
	memset(w, 0, sizeof(*w));
	w->sock = -1;
	w->pid = -1;
}

/* The whole version file into buf; (size_t)-1 when it cannot be read. */
static size_t read_version(const struct serve_cfg *cfg, char *buf, size_t cap)
{
	char path[4096];
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/driver/nvidia/version", cfg->proc_root);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return (size_t)-1;
	while (len < cap && (n = read(fd, buf + len, cap - len)) > 0)
		len += (size_t)n;
	close(fd);
	return len;
}

bool sw_version_changed(const struct sworker *w, const struct serve_cfg *cfg)
{
	char buf[sizeof(w->version)];
	size_t len = read_version(cfg, buf, sizeof(buf));

	return len != w->version_len || (len != (size_t)-1 && memcmp(buf, w->version, len) != 0);
}

/* In the child: fd 3 is the socket, nothing else of the daemon stays open
 * (everything is O_CLOEXEC), signals as the worker expects them. */
static void exec_worker(const struct serve_cfg *cfg, int sock, char *parent)
{
	char *argv[] = { (char *)cfg->worker, parent, (char *)cfg->libcuda, NULL };
	sigset_t none;
	int null = open("/dev/null", O_RDWR);

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (null >= 0) {
		dup2(null, 0);
		dup2(2, 1); /* nothing of the worker's may look like an answer */
	}
	if (sock == 3)
		fcntl(3, F_SETFD, 0);
	else if (dup2(sock, 3) < 0)
		_exit(127);
	execv(cfg->worker, argv);
	_exit(127);
}

int sw_start(struct sworker *w, const struct serve_cfg *cfg)
{
	char parent[16];
	int sv[2];

	if (w->state != SW_DOWN || now() < w->retry_at)
		return w->state == SW_DOWN ? -EAGAIN : 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	w->version_len = read_version(cfg, w->version, sizeof(w->version));
	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	w->pid = fork();
	if (w->pid == 0)
		exec_worker(cfg, sv[1], parent);
	close(sv[1]);
	if (w->pid < 0) {
		int e = errno;

		close(sv[0]);
		snprintf(w->why, sizeof(w->why), "cannot start the worker: %s", strerror(e));
		w->retry_at = now() + BACKOFF_MAX;
		return -e;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	w->sock = sv[0];
	w->state = SW_STARTING;
	w->until = now() + cfg->attach_timeout_s;
	w->attaches++;
	return 0;
}

void sw_stop(struct sworker *w, bool failed)
{
	double delay = BACKOFF_FIRST;

	if (w->pid > 0) {
		kill(w->pid, SIGKILL);
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (w->sock >= 0)
		close(w->sock);
	w->sock = -1;
	w->pid = -1;
	w->state = SW_DOWN;
	if (!failed) {
		w->failures = 0;
		w->retry_at = 0;
		return;
	}
	for (unsigned i = 1; i < w->failures && delay < BACKOFF_MAX; i++)
		delay *= 2;
	w->retry_at = w->failures ? now() + (delay < BACKOFF_MAX ? delay : BACKOFF_MAX) : 0;
	w->failures++;
}

int sw_read_hello(struct sworker *w)
{
	struct rtid_hello h;
	ssize_t n = recv(w->sock, &h, sizeof(h), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n == (ssize_t)sizeof(h) && h.ok) {
		w->state = SW_READY;
		return 1;
	}
	if (n == (ssize_t)sizeof(h))
		snprintf(w->why, sizeof(w->why), "driver API worker: %.120s", h.why);
	else
		snprintf(w->why, sizeof(w->why), "driver API worker ended before it was ready");
	return -1;
}
