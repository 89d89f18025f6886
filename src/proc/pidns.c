/* Numbers of another pid namespace, as the kernel maps them: a client of
 * rtid serve in a container names its own pids. Each process's status has
 * NSpid: its pid in every namespace from the proc's down to its own, so a
 * process whose own namespace is the client's has the client's number last.
 * Only that case is translated: exactly one match, or none at all.
 * Also what proves which process a connection is: the pid behind a pidfd,
 * and whether a process holds a given socket among its fds. */
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

/* The last number of an NSpid: line: the pid in its own namespace (0 when
 * the line is not NSpid:, -EINVAL when it is and is malformed or cut). */
static int nspid_line(const char *line, size_t len, bool whole, void *arg)
{
	const char *p = line + 6, *end = line + len;
	char tok[16];
	int last = 0, v;

	if (len < 6 || memcmp(line, "NSpid:", 6))
		return 0;
	if (!whole)
		return -EINVAL;
	/* Numbers separated by tabs, each checked whole. */
	while (p < end) {
		size_t n = 0;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		while (p + n < end && p[n] != ' ' && p[n] != '\t')
			n++;
		if (n == 0)
			break;
		if (n >= sizeof(tok))
			return -EINVAL;
		memcpy(tok, p, n);
		tok[n] = '\0';
		if (rtid__parse_pid(tok, &v) < 0)
			return -EINVAL;
		last = v;
		p += n;
	}
	if (last <= 0)
		return -EINVAL;
	*(int *)arg = last;
	return 1;
}

/* The pid's number in its own namespace, from <proc>/<pid>/status read line
 * by line: NSpid: comes after Groups:, which may be longer than any buffer. */
static int own_nspid(const char *proc_root, int pid, int *out)
{
	char path[4096];
	int v = 0, r;

	snprintf(path, sizeof(path), "%s/%d/status", proc_root, pid);
	r = rtid__read_lines(AT_FDCWD, path, nspid_line, &v);
	if (r < 0)
		return r;
	if (v <= 0)
		return -EINVAL;
	*out = v;
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

int rtid__holds_file(const char *proc_root, int pid, const char *target)
{
	char path[4096], link[128];
	size_t want = strlen(target);
	struct dirent *de;
	int r = -ENOENT;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/fd", proc_root, pid);
	if (!(d = opendir(path)))
		return -errno;
	while (r == -ENOENT && (de = readdir(d))) {
		ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof(link));

		/* An fd closed meanwhile, or "." and "..": not the one. */
		if (n == (ssize_t)want && memcmp(link, target, want) == 0)
			r = 0;
	}
	closedir(d);
	return r;
}

/* The number of a Pid: line (0 when the line is another; -ESRCH for a
 * pidfd whose process is gone (-1) or has no number here (0)). */
static int pid_line(const char *line, size_t len, bool whole, void *arg)
{
	char tok[16];
	size_t n;

	if (len < 4 || memcmp(line, "Pid:", 4))
		return 0;
	line += 4;
	len -= 4;
	while (len && (*line == ' ' || *line == '\t'))
		line++, len--;
	for (n = 0; n < len && line[n] != ' ' && line[n] != '\t'; n++)
		;
	if (!whole || n == 0 || n >= sizeof(tok))
		return -ESRCH;
	memcpy(tok, line, n);
	tok[n] = '\0';
	return rtid__parse_pid(tok, (int *)arg) < 0 ? -ESRCH : 1;
}

int rtid__pidfd_pid(int pidfd, int *pid)
{
	char path[64];
	int v = 0, r;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	r = rtid__read_lines(AT_FDCWD, path, pid_line, &v);
	if (r < 0)
		return r;
	if (v <= 0)
		return -ENOENT; /* no Pid: line: not a pidfd, or a kernel before 5.4 */
	*pid = v;
	return 0;
}
