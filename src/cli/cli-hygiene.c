/* No process left behind by the rtid command or the shim. rtid is a child
 * subreaper, so that a tool's descendants that escaped its process group
 * (setsid) become rtid's children when the tool exits; SIGTERM, SIGINT and
 * SIGHUP kill the library's children and every remaining child, then end rtid
 * by the same signal (the conventional 128+N status). Everything here that a
 * handler runs is async-signal-safe. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/cov.h"
#include "cli/cli.h"

static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
static struct sigaction saved[3];
static char children_path[64]; /* set once, before any handler can run */

/* Read this process's children from /proc (the kernel's own list: "PID "
 * for each) into v. Returns how many, 0 when there are none or the list
 * cannot be read. Only pids followed by their space are taken, so that one
 * cut off by a full buffer is never misread as another. */
static size_t list_children(pid_t *v, size_t max)
{
	char buf[4096], *p, *sp;
	ssize_t len = rtid__read_at(AT_FDCWD, children_path, buf, sizeof(buf) - 1, 0);
	size_t n = 0;
	int pid;

	if (len < 0)
		return 0;
	buf[len] = '\0';
	for (p = buf; n < max && (sp = strchr(p, ' ')); p = sp + 1) {
		*sp = '\0';
		if (rtid__parse_pid(p, &pid) == 0)
			v[n++] = (pid_t)pid;
	}
	return n;
}

void cli_kill_strays(void)
{
	int saved_errno = errno;
	pid_t v[256];

	/* A stray's own children come to us when it dies: go round until none. */
	for (int round = 0; round < 64; round++) {
		size_t n = list_children(v, sizeof(v) / sizeof(v[0]));

		if (n == 0)
			break;
		for (size_t i = 0; i < n; i++)
			kill(v[i], SIGKILL);
		for (size_t i = 0; i < n; i++)
			while (waitpid(v[i], NULL, 0) < 0 && errno == EINTR)
				;
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = saved_errno;
}

static void on_signal(int sig)
{
	rtid_kill_children();
	cli_kill_strays();
	RTID__COV_DUMP();
	/* SA_RESETHAND made the disposition the default; SA_NODEFER lets it act now. */
	raise(sig);
}

void cli_hygiene_reset_signals(void)
{
	sigset_t none;
	int fd;

	/* Fds 0-2 closed by the caller would be taken by the first sockets and
	 * pipes we open, and a child's standard streams would land on them. */
	while ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0 && fd <= 2)
		fcntl(fd, F_SETFD, 0);
	if (fd > 2)
		close(fd);

	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

void cli_hygiene_init(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND | SA_NODEFER };

	sigfillset(&sa.sa_mask);
	snprintf(children_path, sizeof(children_path), "/proc/self/task/%d/children",
		 (int)getpid());
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (size_t i = 0; i < 3; i++) {
		sigaction(sigs[i], NULL, &saved[i]);
		/* A signal the caller ignores is ignored here too, as by the real tool. */
		if (saved[i].sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

void cli_hygiene_before_exec(void)
{
	cli_kill_strays();
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	for (size_t i = 0; i < 3; i++)
		sigaction(sigs[i], &saved[i], NULL);
}
