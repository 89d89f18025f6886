/* What rtid reads of /proc: a listing of a process's threads proven
 * complete (walk.c), the scan of their names (scan.c, match.c), the running
 * driver's version (version.c), a process's launch job (job.c), the
 * processes that may use CUDA
 * (discover.c). Gathers facts only; what they mean is rules/. */
#ifndef RTID_PROC_H
#define RTID_PROC_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rules/rules.h"

/* --- match.c: the thread-name matcher --- */
struct rtid__matcher {
	bool builtin; /* the default pattern, matched without regex */
	regex_t re;
};
/* 0, or -EINVAL for a pattern regcomp refuses. */
int rtid__matcher_init(struct rtid__matcher *m, const char *pattern);
void rtid__matcher_fini(struct rtid__matcher *m);
/* comm is len bytes, without the trailing newline; a NUL inside never matches. */
bool rtid__matcher_match(const struct rtid__matcher *m, const char *comm, size_t len);

/* --- scan.c: walk <proc>/<pid>/task/x/comm --- */
/* Always fills *out (the walk itself cannot fail as a call). */
void rtid__scan(const char *proc_root, int pid, const struct rtid__matcher *m,
		struct rtid__scan *out);

/* --- walk.c: a listing of a process's threads, complete or refused --- */
struct rtid__tasks {
	char *buf; /* getdents64 records */
	size_t len;
};
/* Read Tgid: and Threads: of <rootfd>/<pid>/status. 0, or a negative errno
 * (-EINVAL: a status without them). */
int rtid__status_read(int rootfd, int pid, int *tgid, int *threads);
/* List <pid>'s tasks (taskfd: its task directory) so that no thread alive for
 * the whole call is missing (the proof is in walk.c). 0 and *out (free with
 * rtid__tasks_free), -EAGAIN when no listing could be proven complete, or
 * another negative errno. */
int rtid__tasks_list(int rootfd, int taskfd, int pid, struct rtid__tasks *out);
/* How many distinct tids a listing names (0 when that cannot be counted). */
size_t rtid__tasks_count(const struct rtid__tasks *l);
/* The next tid of a listing from *off (start at 0); false at the end. */
bool rtid__tasks_next(const struct rtid__tasks *l, size_t *off, int *tid);
void rtid__tasks_free(struct rtid__tasks *l);

/* --- job.c: a process's launch job --- */
/* pid's job into *out (always written): none where its environment names
 * no job file (or there is no <proc>/<pid>/environ), the file's device and
 * inode, or unknown with why (len bytes): an environment that cannot be
 * read, a job file's path that is not absolute, a file that cannot be
 * looked at. */
void rtid__job_read(const char *proc_root, int pid, struct rtid__job *out, char *why, size_t len);

/* --- version.c --- */
/* Read <proc>/driver/nvidia/version. Returns 0 and out, or a negative errno. */
int rtid__driver_version_read(const char *proc_root, char *out, size_t outlen);

/* --- ident.c: what a number names, for the rule of who may ask what --- */
/* Fill f's facts about pid under proc_root (present, tgid, owner); the
 * caller's part of f (kind, check_caller, caller, may_act) is left as it is.
 * Never fails: what cannot be read stays unknown (present: only ENOENT and
 * ESRCH say "not there"). */
void rtid__request_facts(const char *proc_root, int pid, struct rtid__req_facts *f);
/* Whether tid is a live thread of process pid: 0 when <proc>/<pid>/task/<tid>
 * is there; -EXDEV when it is not and <proc>/<tid>/status names another
 * process; -ESRCH when it names no thread at all; another negative errno
 * when the task cannot be looked up. */
int rtid__thread_of(const char *proc_root, int pid, int tid);

/* --- pidns.c: numbers of another pid namespace, and whose a connection is --- */
/* The pid namespace of <proc>/<pid> as its ns link reads ("pid:[INODE]"),
 * into buf. 0, -ENAMETOOLONG when the name and its NUL do not fit in len
 * (never a name cut), or a negative errno. */
int rtid__pidns_of(const char *proc_root, int pid, char *buf, size_t len);
/* The process that is nspid in the pid namespace ns (an ns link, as
 * rtid__pidns_of gives it), among the processes whose own namespace that is:
 * 0 and *host when exactly one is; -ESRCH when none is, -ENOTUNIQ when
 * several are (never a guess). */
int rtid__pid_from_ns(const char *proc_root, const char *ns, int nspid, int *host);
/* The number the task host has in its own pid namespace, when that is ns:
 * 0 and *nspid, -EXDEV when it lives in another namespace, -ENOTSUP when
 * its status has no NSpid: line (a kernel before 4.1), -EINVAL when that
 * line is malformed, or a negative errno. */
int rtid__pid_to_ns(const char *proc_root, const char *ns, int host, int *nspid);
/* Whether the process pid holds an open file whose fd link reads target
 * exactly (a socket: "socket:[INODE]"): 0 when it does, -ENOENT when none
 * of its fds does, or the negative errno of listing them. */
int rtid__holds_file(const char *proc_root, int pid, const char *target);
/* The pid, in the reader's pid namespace, of the process a pidfd of ours
 * refers to (the Pid: line of /proc/self/fdinfo/FD): 0 and *pid; -ESRCH
 * when that process is gone or has no number here; -ENOENT when the fd
 * shows no pid; or the read's negative errno. */
int rtid__pidfd_pid(int pidfd, int *pid);
/* The same from an fdinfo file at path (relative to dirfd): what
 * rtid__pidfd_pid reads, for any file laid out as the kernel writes it. */
int rtid__fdinfo_pid(int dirfd, const char *path, int *pid);

#endif
