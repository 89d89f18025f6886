/* What a number names under a proc root: a process, a thread of one, or
 * nothing, who owns it, and when it started (a pid reused is another
 * process). The facts only; rules/ decides what they allow.
 * Both read <proc>/<n>/status, which the kernel serves for a thread too
 * (hidden from the listing), with Tgid: naming its process. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/sys.h"
#include "proc/proc.h"
#include "rtid.h"

static bool gone(int e)
{
	return e == -ENOENT || e == -ESRCH;
}

void rtid__request_facts(const char *proc_root, int pid, struct rtid__req_facts *f)
{
	int rootfd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), tgid, threads, e;
	char path[16];
	struct stat st;

	f->pid = pid;
	f->present = true; /* unless the tree says otherwise */
	f->tgid = 0;
	f->owner_known = false;
	f->owner = 0;
	if (rootfd < 0)
		return;
	snprintf(path, sizeof(path), "%d", pid);
	/* The directory's owner is the process's: what the kernel checks too.
	 * Whether it is there at all is the status read's to say: a directory
	 * that is gone has no status either. */
	if (rtid__fstatat(rootfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		f->owner_known = true;
		f->owner = st.st_uid;
	}
	e = rtid__status_read(rootfd, pid, &tgid, &threads);
	close(rootfd);
	if (e == 0)
		f->tgid = tgid;
	else if (gone(e))
		f->present = false;
}

int rtid__thread_of(const char *proc_root, int pid, int tid)
{
	int rootfd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), tgid, threads, e;
	char path[48];
	struct stat st;

	if (rootfd < 0)
		return -errno;
	/* The kernel resolves <pid>/task/<tid> only within pid's thread group,
	 * also for a thread its readdir skipped. */
	snprintf(path, sizeof(path), "%d/task/%d", pid, tid);
	e = rtid__fstatat(rootfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
	if (gone(e)) {
		/* Not ours: a thread of another process, or nothing at all. */
		e = rtid__status_read(rootfd, tid, &tgid, &threads);
		e = e == 0 && tgid != pid ? -EXDEV : -ESRCH;
	}
	close(rootfd);
	return e;
}

int rtid_proc_start_time(const char *proc_root, int pid, unsigned long long *out)
{
	return rtid__start_time_read(proc_root, pid, out);
}
