#include "check-serve.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t check_serve_start(const char *rtid, const char *sock, const char *mnt, const char *lib)
{
	char fd[16], ready[8];
	int p[2];
	ssize_t n;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	snprintf(fd, sizeof(fd), "%d", p[1]);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		close(p[0]);
		if (null >= 0)
			dup2(null, 2);
		execl(rtid, "rtid", "serve", "--socket", sock, "--proc", mnt, "--libcuda", lib,
		      "--ready-fd", fd, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	/* "ready\n" once attached; EOF if it died first. */
	n = pid > 0 ? read(p[0], ready, sizeof(ready)) : -1;
	close(p[0]);
	if (n == 6 && memcmp(ready, "ready\n", 6) == 0)
		return pid;
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

void check_serve_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}
