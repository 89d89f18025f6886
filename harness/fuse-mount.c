/* Taking down a FUSE mount of the test's own, as root or as a user. Root
 * detaches it with umount2. A user cannot: only the setuid fusermount3 may
 * unmount there, and libfuse's auto_unmount does not work for a user either
 * (fusermount3 opens the mount point as root to see whether its server died,
 * and FUSE refuses root on a user's mount: EACCES, libfuse issue 586, as in
 * Debian 12's libfuse 3.14). So a user's server leaves a watcher behind it,
 * which unmounts when the server dies without saying it is done. */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#define FUSERMOUNT "/usr/bin/fusermount3"

/* Async-signal-safe: fork, execve and waitpid only (fakeproc_stop runs in
 * a signal handler). */
void fuse_detach(const char *mnt)
{
	char *const argv[] = { "fusermount3", "-u", "-z", "-q", (char *)mnt, NULL };
	char *const envp[] = { NULL };
	pid_t pid;

	if (geteuid() == 0) {
		umount2(mnt, MNT_DETACH);
		return;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		/* Not mounted, or not the user's: fusermount3 says so; quiet here. */
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execve(FUSERMOUNT, argv, envp);
		_exit(127);
	}
	while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int fuse_watch_start(const char *mnt)
{
	int p[2];
	pid_t pid;

	if (geteuid() == 0)
		return -1; /* auto_unmount works for root */
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		char done = 0;
		int null = open("/dev/null", O_RDWR);

		/* Nothing of the server's: no end of a pipe that a runner waits
		 * to see closed, no device fd that would keep the mount alive. */
		if (dup2(p[0], 3) < 0)
			_exit(1);
		if (null >= 0)
			for (int fd = 0; fd < 3; fd++)
				dup2(null, fd);
		close_range(4, ~0U, 0);
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		while (read(3, &done, 1) < 0 && errno == EINTR)
			;
		if (done != 'd')
			fuse_detach(mnt); /* the server died with the mount up */
		_exit(0);
	}
	close(p[0]);
	return p[1];
}

void fuse_watch_done(int fd)
{
	if (fd < 0)
		return;
	if (write(fd, "d", 1) != 1) {
		/* the watcher is gone: nothing to tell */
	}
	close(fd);
}
