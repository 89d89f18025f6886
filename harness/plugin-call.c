/* Calls made as CRIU makes them, and a ready rtid serve. See plugin-call.h. */
#include "plugin-call.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Read into out what fits, then the rest to EOF, as the plugin does. */
static void read_all(int fd, char *out, size_t outlen)
{
	char drain[512];
	size_t got = 0;
	ssize_t n;

	while (got + 1 < outlen && (n = read(fd, out + got, outlen - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	out[got] = '\0';
	while ((n = read(fd, drain, sizeof(drain))) != 0)
		if (n < 0 && errno != EINTR)
			break;
}

int plugin_call(const char *file, char *const argv[], const char *const env[], char *out,
		size_t outlen)
{
	int p[2];
	pid_t pid;

	out[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		for (; env && *env; env++)
			putenv((char *)*env); /* the child's own copy; it execs at once */
		execvp(file, argv);
		_exit(127);
	}
	close(p[1]);
	read_all(p[0], out, outlen);
	close(p[0]);
	return reap(pid);
}

/* Wait up to timeout_s for fd to be readable; returns 0 or -ETIMEDOUT. */
static int wait_readable(int fd, double timeout_s)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int r;

	while ((r = poll(&pf, 1, (int)(timeout_s * 1000))) < 0 && errno == EINTR)
		;
	return r == 1 ? 0 : -ETIMEDOUT;
}

/* "ready\n", then EOF; returns 0 or a negative errno. */
static int await_ready(int fd, double timeout_s)
{
	char buf[16];
	int e = wait_readable(fd, timeout_s);

	if (e < 0)
		return e;
	if (read(fd, buf, sizeof(buf)) != 6 || memcmp(buf, "ready\n", 6) != 0)
		return -EPROTO;
	e = wait_readable(fd, timeout_s);
	if (e < 0)
		return e;
	return read(fd, buf, sizeof(buf)) == 0 ? 0 : -EPROTO;
}

pid_t serve_spawn(const char *const argv[], int err_fd, double timeout_s)
{
	const char *args[44];
	char fdnum[16];
	size_t n = 0;
	int p[2], e;
	pid_t pid;

	for (; argv[n] && n < 40; n++)
		args[n] = argv[n];
	if (argv[n])
		return -E2BIG;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	snprintf(fdnum, sizeof(fdnum), "%d", p[1]);
	args[n++] = "--ready-fd";
	args[n++] = fdnum;
	args[n] = NULL;
	pid = fork();
	if (pid == 0) {
		int err = err_fd >= 0 ? err_fd : open("/dev/null", O_WRONLY | O_CLOEXEC);

		/* Gone with whoever started it: a test that fails midway leaves
		 * no daemon holding its output open. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		fcntl(p[1], F_SETFD, 0); /* the one fd the daemon inherits */
		dup2(err, 2);
		execv(args[0], (char *const *)args);
		_exit(127);
	}
	e = pid < 0 ? -errno : 0;
	close(p[1]);
	if (e == 0)
		e = await_ready(p[0], timeout_s);
	close(p[0]);
	if (e == 0 || pid < 0)
		return e == 0 ? pid : e;
	kill(pid, SIGKILL);
	reap(pid);
	return e;
}
