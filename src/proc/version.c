/* The running driver's version, from <proc>/driver/nvidia/version. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "proc/proc.h"

int rtid__driver_version_read(const char *proc_root, char *out, size_t outlen)
{
	char buf[512];
	ssize_t n;
	int rootfd;

	rootfd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	/* The first line is all we need; it is far shorter than buf. */
	n = rtid__read_at(rootfd, "driver/nvidia/version", buf, sizeof(buf), 0);
	close(rootfd);
	if (n < 0)
		return (int)n;
	return rtid__parse_driver_version(buf, (size_t)n, out, outlen);
}
