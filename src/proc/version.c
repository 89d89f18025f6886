/* The running driver's version, from <proc>/driver/nvidia/version. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "internal.h"
#include "sys.h"

int rtid__driver_version_read(const char *proc_root, char *out, size_t outlen)
{
	char buf[512];
	size_t len = 0;
	int rootfd, fd;

	rootfd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	fd = rtid__openat(rootfd, "driver/nvidia/version", O_RDONLY | O_CLOEXEC);
	close(rootfd);
	if (fd < 0)
		return -errno;
	/* The first line is all we need; it is far shorter than buf. */
	while (len < sizeof(buf)) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return rtid__parse_driver_version(buf, len, out, outlen);
}
