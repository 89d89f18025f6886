#include "fakeproc-run.h"
#include "helpers.h"

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

pid_t fakeproc_start(const char *fakeproc, const char *casefile, const char *mnt, int *status)
{
	char fdstr[16], line[8];
	int pp[2], st = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(pp) < 0)
		return -1;
	snprintf(fdstr, sizeof(fdstr), "%d", pp[1]);
	char *argv[] = { (char *)fakeproc, "-f", "--ready-fd", fdstr, (char *)casefile,
			 (char *)mnt, NULL };
	if (posix_spawn(&pid, fakeproc, NULL, NULL, argv, environ) != 0) {
		close(pp[0]);
		close(pp[1]);
		return -1;
	}
	close(pp[1]);
	/* Blocks until the mount is up, or EOF if fakeproc died first. */
	n = read(pp[0], line, sizeof(line));
	close(pp[0]);
	if (n == 6 && memcmp(line, "ready\n", 6) == 0)
		return pid;
	waitpid(pid, &st, 0);
	if (status)
		*status = st;
	return -1;
}

void fakeproc_stop(pid_t pid, const char *mnt)
{
	/* SIGTERM alone can be lost: libfuse's loop checks its exit flag and then
	 * blocks in read(/dev/fuse), and a signal handled between the two leaves
	 * it blocked for good (under valgrind, whose signal delivery widens that
	 * window, it happened within a minute). Unmounting ends the read with
	 * ENODEV, so the daemon exits either way before it is reaped. */
	if (pid > 0)
		kill(pid, SIGTERM);
	if (mnt && mnt[0])
		fuse_detach(mnt);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}
