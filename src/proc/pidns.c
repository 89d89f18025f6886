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

#define PID_DIGITS 10 /* INT_MAX's; the kernel writes no leading zeros */
#define PID_TOKEN (PID_DIGITS + 1) /* and its NUL */

int rtid__pidns_of(const char *proc_root, int pid, char *buf, size_t len)
{
	char path[4096], link[128];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/ns/pid", proc_root, pid);
	n = readlink(path, link, sizeof(link));
	if (n == -1)
		return -errno;
	/* A name cut to fit could equal another cut the same way: refused. */
	if ((size_t)n >= sizeof(link) || (size_t)n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, link, (size_t)n);
	buf[n] = '\0';
	return 0;
}

/* The last number of an NSpid: line, the pid in the process's own namespace,
 * into *arg (0 when the line is another; -EINVAL when it is malformed, cut,
 * or a second one: every number is checked whole). The line is read to its
 * end and the file too, so a second NSpid: line is seen. */
static int nspid_line(const char *line, size_t len, bool whole, void *arg)
{
	const char *p = line + 6, *end = line + len;
	int *out = arg, last = 0, v;

	if (len < 6 || memcmp(line, "NSpid:", 6) != 0)
		return 0;
	if (!whole || *out != 0)
		return -EINVAL;
	for (;;) {
		char tok[PID_TOKEN];
		const char *t;

		while (p != end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			break;
		for (t = p; t != end && *t != ' ' && *t != '\t'; t++)
			;
		if (t - p > PID_DIGITS)
			return -EINVAL;
		memcpy(tok, p, (size_t)(t - p));
		tok[t - p] = '\0';
		if (rtid__parse_pid(tok, &v) < 0)
			return -EINVAL;
		last = v;
		p = t;
	}
	if (last == 0)
		return -EINVAL;
	*out = last;
	return 0;
}

/* The pid's number in its own namespace, from <proc>/<pid>/status read line
 * by line: NSpid: comes after Groups:, which may be longer than any buffer.
 * -ENOTSUP when there is no NSpid: line (a kernel before 4.1). */
static int own_nspid(const char *proc_root, int pid, int *out)
{
	char path[4096];
	int v = 0, r;

	snprintf(path, sizeof(path), "%s/%d/status", proc_root, pid);
	r = rtid__read_lines(AT_FDCWD, path, nspid_line, &v);
	if (r < 0)
		return r;
	if (v == 0)
		return -ENOTSUP;
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
	int found = 0, r = 0, pid, v;

	if (!d)
		return -errno;
	while (r == 0 && (de = readdir(d))) {
		if (rtid__parse_pid(de->d_name, &pid) < 0 ||
		    rtid__pid_to_ns(proc_root, ns, pid, &v) < 0 || v != nspid)
			continue;
		if (found != 0)
			r = -ENOTUNIQ; /* never a guess */
		found = pid;
	}
	closedir(d);
	if (r == 0 && found == 0)
		r = -ESRCH;
	if (r == 0)
		*host = found;
	return r;
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

/* The number of a Pid: line into *arg (0 when the line is another). -ESRCH
 * when it names no process of ours: -1 (the process is gone), 0 (it has no
 * number in our namespace), anything else not a pid, a line cut, or a second
 * Pid: line (the file is read to its end, so one is seen). */
static int pid_line(const char *line, size_t len, bool whole, void *arg)
{
	int *out = arg;

	if (len < 4 || memcmp(line, "Pid:", 4) != 0)
		return 0;
	if (!whole || *out != 0 || rtid__parse_tid(line + 4, len - 4, out) < 0)
		return -ESRCH;
	return 0;
}

int rtid__fdinfo_pid(int dirfd, const char *path, int *pid)
{
	int v = 0, r = rtid__read_lines(dirfd, path, pid_line, &v);

	if (r < 0)
		return r;
	if (v == 0)
		return -ENOENT; /* no Pid: line: not a pidfd, or a kernel before 5.4 */
	*pid = v;
	return 0;
}

int rtid__pidfd_pid(int pidfd, int *pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	return rtid__fdinfo_pid(AT_FDCWD, path, pid);
}
