/* What rtid reads of /proc: a listing of a process's threads proven
 * complete (walk.c), the scan of their names (scan.c, match.c), the running
 * driver's version (version.c), the processes that may use CUDA
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
/* The next tid of a listing from *off (start at 0); false at the end. */
bool rtid__tasks_next(const struct rtid__tasks *l, size_t *off, int *tid);
void rtid__tasks_free(struct rtid__tasks *l);

/* --- version.c --- */
/* Read <proc>/driver/nvidia/version. Returns 0 and out, or a negative errno. */
int rtid__driver_version_read(const char *proc_root, char *out, size_t outlen);

#endif
