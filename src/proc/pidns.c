/* Numbers of another pid namespace, as the kernel maps them: a client of
 * rtid serve in a container names its own pids. Each process's status has
 * NSpid: its pid in every namespace from the proc's down to its own, so a
 * process whose own namespace is the client's has the client's number last.
 * Only that case is translated: exactly one match, or none at all. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "proc/proc.h"

int rtid__pidns_of(const char *proc_root, int pid, char *buf, size_t len)
{
	char path[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/ns/pid", proc_root, pid);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* The last number of the NSpid: line of <proc>/<pid>/status: the pid in its
 * own namespace. */
static int own_nspid(const char *proc_root, int pid, int *out)
{
	char path[4096], buf[4096], tok[16];
	const char *p, *end;
	ssize_t n;
	int last = 0, v;

	snprintf(path, sizeof(path), "%s/%d/status", proc_root, pid);
	n = rtid__read_at(AT_FDCWD, path, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	p = strstr(buf, "\nNSpid:");
	if (!p)
		return -EINVAL;
	p += 7;
	end = p + strcspn(p, "\n");
	/* Numbers separated by tabs, each checked whole. */
	while (p < end) {
		size_t len;

		p += strspn(p, " \t");
		len = strcspn(p, " \t\n");
		if (len == 0)
			break;
		if (len >= sizeof(tok))
			return -EINVAL;
		memcpy(tok, p, len);
		tok[len] = '\0';
		if (rtid__parse_pid(tok, &v) < 0)
			return -EINVAL;
		last = v;
		p += len;
	}
	if (last <= 0)
		return -EINVAL;
	*out = last;
	return 0;
}

int rtid__pid_to_ns(const char *proc_root, const char *ns, int host, int *nspid)
{
	char own[64];
	int r = rtid__pidns_of(proc_root, host, own, sizeof(own));

	if (r < 0)
		return r;
	if (strcmp(own, ns) != 0)
		return -EXDEV;
	return own_nspid(proc_root, host, nspid);
}

int rtid__pid_from_ns(const char *proc_root, const char *ns, int nspid, int *host)
{
	DIR *d = opendir(proc_root);
	struct dirent *de;
	int found = 0, pid, v;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (rtid__parse_pid(de->d_name, &pid) < 0 ||
		    rtid__pid_to_ns(proc_root, ns, pid, &v) < 0 || v != nspid)
			continue;
		if (found)
			found = -1;
		else
			found = pid;
		if (found < 0)
			break;
	}
	closedir(d);
	if (found == 0)
		return -ESRCH;
	if (found < 0)
		return -ENOTUNIQ;
	*host = found;
	return 0;
}
