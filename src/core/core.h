/* Internal interfaces between rtid's modules. Names carry a double underscore. */
#ifndef RTID_INTERNAL_H
#define RTID_INTERNAL_H

#include <poll.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "parse.h"
#include "rtid.h"

#define RTID__OUT_MAX 256  /* kept stdout bytes; a tid needs 11 */
#define RTID__STDERR_KEEP 512 /* kept stderr bytes, for the error detail */
#define RTID__MAX_CHILDREN 64 /* most children one wait handles */
#define RTID__NOPIDFD_POLL_MS 5 /* how often an exit is asked for without pidfds */
#define RTID__EXIT_GRACE_S 0.2 /* output still awaited after a child's exit */

/* --- match.c: the thread-name matcher --- */
struct rtid__matcher {
	bool builtin; /* the default pattern, matched without regex */
	regex_t re;
};
int rtid__matcher_init(struct rtid__matcher *m, const char *pattern);
void rtid__matcher_fini(struct rtid__matcher *m);
/* comm is len bytes, without the trailing newline; a NUL inside never matches. */
bool rtid__matcher_match(const struct rtid__matcher *m, const char *comm, size_t len);

/* --- scan.c: walk <proc>/<pid>/task/x/comm --- */
enum rtid__scan_status {
	RTID__SCAN_FOUND,    /* exactly one candidate, stable on re-read */
	RTID__SCAN_ZERO,
	RTID__SCAN_MULTIPLE,
	RTID__SCAN_UNSTABLE, /* the single candidate changed or vanished, or the walk
			     * could not be proven complete */
	RTID__SCAN_ERROR,    /* a task could not be read: uniqueness unproven */
	RTID__SCAN_NOPROC,   /* the process is not there */
};
struct rtid__scan {
	enum rtid__scan_status status;
	int tid;        /* the candidate when FOUND */
	int candidates; /* matches seen in the walk */
	int err;        /* negative errno behind SCAN_ERROR, else 0 */
};
/* What one scan saw of a process: the facts that the exactly-one-and-stable
 * rule (decide.c) reads. */
enum rtid__reread {
	RTID__REREAD_NOT_DONE, /* the single candidate was not read again */
	RTID__REREAD_SAME,     /* it still matches */
	RTID__REREAD_CHANGED,  /* renamed or exited since the walk */
	RTID__REREAD_ERROR,    /* it could not be read */
};
struct rtid__scan_seen {
	bool gone;       /* the process was not there after the walk */
	int err;         /* negative errno of a task that could not be read, or 0 */
	bool incomplete; /* no listing of its tasks was provably complete */
	int candidates;  /* matching threads in the walk */
	enum rtid__reread reread;
};
/* Always fills *out (the walk itself cannot fail as a call). */
void rtid__scan(const char *proc_root, int pid, const struct rtid__matcher *m,
		struct rtid__scan *out);
/* Read a comm file at dirfd/path into buf (no trailing newline). Returns the
 * length or a negative errno. */
ssize_t rtid__read_comm(int dirfd, const char *path, char *buf, size_t buflen);

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

/* --- spawn.c and children.c: a child with captured output, a timeout, its
 * own group, killed if we die --- */
struct rtid__child {
	pid_t pid;
	int pidfd;
	int fd[2]; /* stdout, stderr read ends; -1 once at EOF */
	bool reaped, timed_out;
	int status;      /* waitpid status once reaped */
	double deadline; /* monotonic seconds */
	char out[RTID__OUT_MAX];
	size_t out_len;
	bool out_overflow;
	char err[RTID__STDERR_KEEP];
	size_t err_len;
};
/* Start path with argv (stdin /dev/null, fresh process group, default signal
 * dispositions and mask, PR_SET_PDEATHSIG SIGKILL; only our read ends of the
 * pipes are non-blocking). Registered for rtid_kill_children until reaped.
 * Returns 0 or a negative errno (-ENOENT: no such program; -EMFILE, -ENFILE,
 * -EAGAIN: out of fds or processes for now). */
int rtid__child_start(struct rtid__child *c, const char *path, char *const argv[],
		      double timeout_s);
/* The same, with extra_fd (when >= 0) as the child's fd 3. */
int rtid__child_start_fd(struct rtid__child *c, const char *path, char *const argv[],
			 double timeout_s, int extra_fd);
bool rtid__child_done(const struct rtid__child *c);
/* waitpid(pid, status, 0), again after EINTR; a child reaped by someone else
 * reads as killed by SIGKILL. */
void rtid__wait(pid_t pid, int *status);
/* Take pid out of the registry of running children (it is being reaped). */
void rtid__live_remove(pid_t pid);
/* Fill up to 3 pollfds for c; returns how many. */
int rtid__child_pollfds(const struct rtid__child *c, struct pollfd *p);
/* Without a pidfd: reap the child if it has exited (no-op otherwise). */
void rtid__child_check_exit(struct rtid__child *c);
/* Consume the events of the pollfds that rtid__child_pollfds gave. */
void rtid__child_handle(struct rtid__child *c, const struct pollfd *p, int np);
/* Kill the group, reap the child, close everything; marks timed_out when asked. */
void rtid__child_abort(struct rtid__child *c, bool timed_out);
/* Run children until each is done (any: until one is), a child past its own
 * deadline being aborted as timed out, or until batch_deadline (monotonic
 * seconds, <= 0: none) passes. Returns true if the batch deadline stopped it;
 * undone children are then left for the caller to abort. */
bool rtid__children_wait(struct rtid__child **v, size_t n, double batch_deadline, bool any);

/* --- clock --- */
double rtid__now(void); /* CLOCK_MONOTONIC seconds */

/* --- tool.c: the cuda-checkpoint query --- */
/* Find the program name (NULL: "cuda-checkpoint"): a path with '/' as it is,
 * else the first executable of that name on PATH that is not the running
 * program itself, by inode or by identical content (so that a shim, or a
 * copy of it, never finds itself). Returns 0 and a malloc'd *out, -ENOENT,
 * or -ENOMEM. */
int rtid__tool_find(const char *name, char **out);
/* 0 when execve could run path: a regular file we may execute (a directory
 * passes access(X_OK), and execvp passes over it); else -errno, -EACCES for
 * anything but a regular file. The PATH search and the worker lookup both
 * take only what this accepts. */
int rtid__executable(const char *path);
/* Whether path is the running program or a byte-identical copy of it. */
bool rtid__is_self(const char *path);
/* What a driver backend says about one pid. Backends write only this;
 * resolve.c alone turns it into the caller's rtid_result. */
struct rtid__answer {
	int tid;              /* > 0: the restore thread; 0: none, or see error */
	enum rtid_error error;
	int code;             /* the tool's exit status, or -signal; the CUresult */
	double ms;            /* time spent asking */
	char detail[sizeof(((struct rtid_result *)0)->detail)];
};
/* Make a an error: tid 0, e, and the detail. */
void rtid__answer_fail(struct rtid__answer *a, enum rtid_error e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Turn a finished child into an answer or error in a. */
void rtid__tool_interpret(const struct rtid__child *c, struct rtid__answer *a);

/* --- decide.c: pure decisions --- */
/* Whether the walk left exactly one candidate to read again. */
bool rtid__scan_needs_reread(const struct rtid__scan_seen *s);
/* Exactly one and stable: the status of a scan that saw s. */
enum rtid__scan_status rtid__scan_rule(const struct rtid__scan_seen *s);
enum rtid_fallback rtid__scan_fallback(const struct rtid__scan *s);
enum rtid_xcheck rtid__crosscheck(const struct rtid__scan *s, int driver_tid);
/* What the scan's trust rests on, for the running driver version. */
struct rtid__trust {
	bool attested;         /* a clean attestation */
	bool revoked;          /* a mismatch on record */
	bool allow_unattested; /* the caller's permission */
	bool version_mismatch; /* the configured version is not the running one */
};
bool rtid__scan_trusted(const struct rtid__trust *t);
enum rtid_fallback rtid__untrusted_why(const struct rtid__trust *t);
bool rtid__canary_may_try(const struct rtid__trust *t);
enum rtid__plan {
	RTID__PLAN_DRIVER,     /* the driver only */
	RTID__PLAN_UNTRUSTED,  /* the driver, saying why the scan may not be used */
	RTID__PLAN_SCAN_FIRST, /* the scan; the driver only when it names no thread */
	RTID__PLAN_BOTH,       /* the scan and the driver; the driver's answer is used */
};
enum rtid__plan rtid__plan_for(enum rtid_mode mode, bool trusted);
enum rtid__canary_step {
	RTID__CANARY_NEXT_PID,   /* no verdict: cross-check the next pid */
	RTID__CANARY_SCAN_REST,  /* agreement: scan the rest */
	RTID__CANARY_DRIVER_REST /* mismatch: the driver for the rest */
};
enum rtid__canary_step rtid__canary_next(enum rtid_xcheck x);
enum rtid__said {
	RTID__SAID_TID,   /* success: a tid, still to be checked as one */
	RTID__SAID_NONE,  /* a definite "no CUDA in this process" */
	RTID__SAID_FAILED /* anything else: an error */
};
enum rtid__said rtid__driver_said(int status);

/* --- attest-store.c --- */
/* Replace path with len bytes atomically, as rtid_attest_save writes: the old
 * content or the new, never a part; nothing left behind on failure. Under the
 * lock PATH.lock, which also removes the temp files of killed writers. */
int rtid__file_replace(const char *path, const void *buf, size_t len);

/* --- version.c --- */
/* Read <proc>/driver/nvidia/version. Returns 0 and out, or a negative errno. */
int rtid__driver_version_read(const char *proc_root, char *out, size_t outlen);

/* --- context --- */
struct rtid_ctx {
	struct rtid_config cfg;
	char *proc_root, *tool_name, *tool_path, *libcuda, *service_socket;
	char driver_version[32];
	bool have_version, attested, revoked;
	bool version_mismatch; /* the given version is not the running one */
	struct rtid__matcher matcher;
	struct rtid__worker *worker; /* api backend, during one rtid_resolve_many */
};

/* --- driver.c: run the driver queries of a batch --- */
/* For every i with need[i], ask the configured backend for pids[i] and write
 * its answer to ans[i] (zeroed by the caller); the others are not touched. */
void rtid__driver_batch(struct rtid_ctx *ctx, const int *pids, const bool *need,
			size_t n, struct rtid__answer *ans, double batch_deadline);
/* End what the backend keeps between the groups of one batch (the api
 * worker, attached once for the batch). Idempotent. */
void rtid__driver_end(struct rtid_ctx *ctx);

/* --- api.c: the driver-API worker --- */
/* The worker program to run: RTID_WORKER, else beside the running program,
 * else the installed one. 0 and the path in buf, or -ENOENT and in why the
 * paths tried and the variable that overrides them. */
int rtid__worker_path(char *buf, size_t len, char *why, size_t wlen);

void rtid__api_batch(struct rtid_ctx *ctx, const int *pids, const bool *need, size_t n,
		     struct rtid__answer *ans, double batch_deadline);
/* Stop the context's worker, if any. */
void rtid__api_end(struct rtid_ctx *ctx);

/* --- service.c: the driver's answers from rtid serve --- */
void rtid__service_batch(struct rtid_ctx *ctx, const int *pids, const bool *need, size_t n,
			 struct rtid__answer *ans, double batch_deadline);

#endif
