/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The real tool, run exactly as CRIU's CUDA plugin runs it: cuda-checkpoint
 * from PATH (which may be rtid's shim: it then asks the daemon itself, or
 * runs the tool behind it), stdout and stderr into one pipe, every other fd
 * closed, the output read up to the buffer and the rest drained, no timeout
 * of its own. Only on CRIU's thread, inside a hook. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin/plugin.h"

#define TOOL "cuda-checkpoint"

static void child(int fd[2], const char *const *args)
{
	const char *argv[16] = { TOOL };
	size_t n = 1;

	for (; args[n - 1] && n < 15; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	if (dup2(fd[1], STDOUT_FILENO) == STDOUT_FILENO &&
	    dup2(fd[1], STDERR_FILENO) == STDERR_FILENO) {
		close_range(STDERR_FILENO + 1, ~0U, 0);
		execvp(TOOL, (char **)argv);
		fprintf(stderr, "execvp(\"%s\") failed: %s\n", TOOL, strerror(errno));
	}
	/* Never 1 nor 3, the tool's "no CUDA here": 127, as a shell says it (a
	 * failure to run it is no answer about the process). */
	_exit(127);
}

int plug_tool_run(const char *const *args, char *buf, size_t len)
{
	char scratch[1024];
	size_t got = 0;
	ssize_t r;
	int fd[2], st;
	pid_t pid;

	buf[0] = '\0';
	if (pipe2(fd, O_CLOEXEC) < 0) {
		plug_log(PLUG_ERR, "no pipe for " TOOL ": %m\n");
		return -1;
	}
	if ((pid = fork()) == 0)
		child(fd, args);
	close(fd[1]);
	if (pid < 0) {
		plug_log(PLUG_ERR, "cannot fork for " TOOL ": %m\n");
		close(fd[0]);
		return -1;
	}
	while (got + 1 < len && ((r = read(fd[0], buf + got, len - 1 - got)) > 0 ||
				 (r < 0 && errno == EINTR)))
		got += r > 0 ? (size_t)r : 0;
	buf[got] = '\0';
	while ((r = read(fd[0], scratch, sizeof(scratch))) > 0 || (r < 0 && errno == EINTR))
		;
	close(fd[0]);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			plug_log(PLUG_ERR, "cannot wait for " TOOL " (pid %d): %m\n", (int)pid);
			return -1;
		}
	}
	if (WIFSIGNALED(st)) {
		plug_log(PLUG_ERR, TOOL " killed by signal %d\n", WTERMSIG(st));
		return -1;
	}
	if (WEXITSTATUS(st))
		plug_log(PLUG_DEBUG, TOOL " exit %d: %s\n", WEXITSTATUS(st), buf);
	return WEXITSTATUS(st);
}

bool plug_tool_usable(void)
{
	const char *args[] = { "-h", NULL };
	char out[2048];

	return plug_tool_run(args, out, sizeof(out)) == 0 && strstr(out, "--action");
}
