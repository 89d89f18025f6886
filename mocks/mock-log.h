/* The call log of the mocks: one JSON object per line, appended with a single
 * write so that parallel callers never interleave. */
#ifndef RTID_MOCK_LOG_H
#define RTID_MOCK_LOG_H

#include <stddef.h>

/* Append {"mock":who,"event":event,"pid":pid,"argv":[...],"t":now,"note":note}
 * to $RTID_MOCK_LOG when set. argv may be NULL. */
void mock_log(const char *who, const char *event, int pid, int argc, char **argv,
	      const char *note);

/* Wall-clock seconds, for log timestamps comparable across processes. */
double mock_now(void);

/* Whether op is in the comma list in environment variable var; when the
 * list is unset or empty: all. */
int mock_listed(const char *var, const char *op, int all);

/* The stand-in for a long driver call: an op named in $RTID_MOCK_SLOW_OPS
 * takes $RTID_MOCK_SLOW_S seconds (scaled by RTID_TIME_SCALE), in the mock
 * tool and the mock libcuda alike. */
void mock_slow_op(const char *op);
/* mock_slow_op for an action on pid: with $RTID_MOCK_STUCK_PIDS set (a comma
 * list of pids), $RTID_MOCK_STUCK_OPS hangs only those pids' calls, so that
 * one process's call is stuck while the others' go through. */
void mock_slow_op_on(const char *op, int pid);

/* A driver call that never returns: in the kernel, where SIGKILL cannot end
 * it, while $RTID_MOCK_STUCK_FILE names a file of a running stuck-fs (its
 * reads are never answered); else in pause(). An op named in
 * $RTID_MOCK_STUCK_OPS hangs so (mock_slow_op), as does "answer PID hang". */
void mock_hang(void) __attribute__((noreturn));

/* With $RTID_MOCK_BY_NAME set, the mocks stand in for a driver over real
 * processes: a process is a CUDA process when one of its threads (in the
 * real /proc) is named as the driver names its restore thread
 * (^cuda[0-9a-f]{11}$), and that thread is its restore thread. Returns -1
 * when the mode is off; else 1 and *tid (and *pid: the process a tid names
 * belongs to), or 0 when the process has no such thread or is gone. */
int mock_by_name(int *pid, int *tid);

/* The name of the file that keeps pid's driver state. The driver's state is
 * in the process's memory, so it follows the process through a checkpoint
 * and a restore, even to another pid (a container restored into a new pid
 * namespace). Over real processes ($RTID_MOCK_BY_NAME) the name is made of
 * what a restore keeps and what tells containers apart: the process's cgroups
 * (CRIU restores them; each container has its own) and its pid in its own
 * namespace; else the pid. (Its root is no key: from outside, a container's
 * /proc/PID/root reads "/".) Returns 0, or -1 when the process is gone. */
int mock_state_key(int pid, char *buf, size_t len);
/* $RTID_MOCK_STATE/KEY plus suffix, pid's file there (mock_state_key); ""
 * when there is no such directory or the process is gone. */
void mock_state_path(int pid, const char *suffix, char *buf, size_t len);

/* Launch jobs as the driver requires them: no two actions at once on
 * processes of one job ($RTID_MOCK_JOBS, "100,200;300,400", kept in
 * $RTID_MOCK_STATE). mock_job_enter: 1 entered (mock_job_leave when done),
 * 0 no job, -1 another action of its job is in the driver (logged
 * "job-overlap": the action fails). */
int mock_job_enter(const char *op, int pid);
void mock_job_leave(int pid);

#endif
