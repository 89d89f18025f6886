/* What every starter of rtid-cuda-worker shares (the api backend in the
 * library, the daemon's worker): the socket between them, the worker's
 * command line, and how its greeting is read. How the process is spawned
 * stays with each starter (a captured child of a batch; a long-lived child
 * of the daemon's event loop). */
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "basic/sys.h"
#include "proto/worker-proto.h"

int rtid__worker_pair(int sv[2])
{
	int p[2];

	if (rtid__socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) < 0)
		return -errno;
	sv[0] = p[0];
	sv[1] = p[1];
	return 0;
}

void rtid__worker_argv(struct rtid__worker_cmd *cmd, const char *path, const char *libcuda)
{
	snprintf(cmd->parent, sizeof(cmd->parent), "%d", (int)getpid());
	cmd->argv[0] = (char *)path;
	cmd->argv[1] = cmd->parent;
	cmd->argv[2] = (char *)(libcuda ? libcuda : "libcuda.so.1");
	cmd->argv[3] = NULL;
}

int rtid__worker_greeting(const struct rtid__hello *h, ssize_t n, char *why, size_t len)
{
	if (n == (ssize_t)sizeof(*h) && h->ok)
		return 0;
	if (n == (ssize_t)sizeof(*h))
		snprintf(why, len, "driver API worker: %.*s", (int)sizeof(h->why) - 1, h->why);
	return -EIO;
}
