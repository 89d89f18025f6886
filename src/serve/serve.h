/* rtid serve: the daemon that holds one driver attach for a node and answers
 * the shim, the library and anyone allowed over a unix socket (doc/serve.md).
 * Part of the rtid command, not of librtid. */
#ifndef RTID_SERVE_H
#define RTID_SERVE_H

#include <stdbool.h>
#include <sys/types.h>

#include "basic/basic.h"
#include "proto/serve-proto.h"

/* --max-clients at most: the daemon's dispatch lists every waiting request in
 * arrays of this size on its stack (sv_dispatch), so the option's bound and
 * theirs are one number. A plain literal: the help text spells it. */
#define SERVE_MAX_CLIENTS 1024

struct serve_cfg {
	const char *socket_path;  /* default RTID__SVC_SOCKET_DEFAULT */
	const char *worker;       /* rtid-cuda-worker */
	const char *libcuda;      /* default libcuda.so.1 */
	const char *proc_root;    /* default /proc: owners of pids, the driver version */
	bool actions;             /* serve lock, checkpoint, restore, unlock */
	bool quiet;               /* no log line per request */
	bool have_group, have_action_group;
	gid_t group;              /* the socket's group (0660); default root only */
	gid_t action_group;       /* members may ask for actions; default root only */
	double timeout_s;         /* a query's deadline in the worker */
	double action_timeout_s;  /* an action's deadline (lock: plus its own timeout) */
	double attach_timeout_s;  /* the worker's cuInit */
	double client_timeout_s;  /* a client's time to send each message */
	unsigned max_clients;     /* 1..SERVE_MAX_CLIENTS */
	unsigned max_per_uid;     /* connections of one uid other than root (0: max_clients / 4) */
	unsigned workers;         /* attaches at most; actions take at most workers - 1 */
	int ready_fd;             /* -1: none */
};

/* Run the daemon until SIGTERM, SIGINT, SIGHUP or SIGQUIT, each a graceful
 * stop. Returns the exit status. */
int serve_run(const struct serve_cfg *cfg);

/* --- serve-worker.c: the driver attaches --- */
enum sw_state { SW_DOWN, SW_STARTING, SW_READY };

/* What one worker is doing for a client: the request, and whom to answer.
 * A job outlives its client's connection: an action handed to the driver
 * runs to its end, and its answer is dropped. */
struct sjob {
	int client;          /* the client slot, or -1 once its client left */
	unsigned long conn;  /* that slot's connection number, to tell a new one */
	int op, pid;         /* pid: as the daemon sees it */
	int process;         /* the process pid is or is a thread of */
	unsigned long long pstart; /* its start time at intake (0: unknown), for the record */
	bool started;        /* the client was told "started" */
	double until;        /* its deadline */
};

struct sworker {
	enum sw_state state;
	pid_t pid;
	int sock;                  /* -1 when down */
	unsigned long long start;  /* the worker's start time (/proc/PID/stat; 0: unknown) */
	pid_t reap[8];             /* stopped, not yet reaped (exiting, or stuck in the kernel) */
	int reap_process[8];       /* the process its last job was about (0: none) */
	unsigned long long reap_start[8], reap_pstart[8]; /* the two start times, for the record */
	double reap_kill_at[8];    /* let go: killed at this time if still there (0: killed) */
	double until;              /* STARTING: the hello's deadline */
	double since;              /* STARTING: when it was started */
	char version[512];         /* the driver version file when it started */
	size_t version_len;        /* (size_t)-1: there was no such file */
	unsigned ops;              /* READY: the calls its driver has (rtid__hello.ops) */
	bool busy;                 /* job is with the driver */
	struct sjob job;
};

/* The workers: each one attach and one call at a time, so that requests for
 * different processes run side by side as separate tool runs would. The
 * backoff is the pool's: a driver that fails to attach fails for all. */
struct spool {
	struct sworker *w;
	unsigned n;                /* cfg->workers */
	unsigned failures;         /* in a row, for the backoff */
	double retry_at;           /* no new attach before this */
	unsigned long attaches;    /* workers started so far */
	/* Attaches that failed: a worker that could not be started (not in
	 * attaches), or one started whose driver never became ready. */
	unsigned long attach_failures;
	char why[160];             /* why the last one failed */
};

/* 0, or -ENOMEM. */
int sp_init(struct spool *p, unsigned n);
void sp_free(struct spool *p);
/* Start worker w (state STARTING) if down and the pool is past its backoff:
 * 0, -EAGAIN in the backoff, -EBUSY when w's killed workers are all stuck
 * unreaped (try another slot), or another negative errno (p->why says why). */
int sw_start(struct spool *p, struct sworker *w, const struct serve_cfg *cfg);
/* How a worker ends: let go (no fault of its own: a driver change, the
 * daemon's stop; it exits when its socket closes, and is killed a second
 * later only if it has not), killed (it hung or crashed in a call), or
 * killed and counted for the pool's backoff (it failed to attach). */
enum sw_end { SW_RETIRE, SW_KILL, SW_FAILED };
/* End worker w as how says; what has not exited is left to sw_reap. Never
 * waits for a child: a killed worker stays in w->reap (its job's process
 * still "in the driver") until sw_reap finds it gone, on the SIGCHLD the
 * loop reads. The job is the caller's to answer. */
void sw_stop(struct spool *p, struct sworker *w, enum sw_end how);
/* Reap what sw_stop left, kill what was let go and outstayed its grace
 * (never blocks). Returns the next such kill time, or 0 for none. */
double sw_reap(struct sworker *w);
/* The worker's socket is readable: read its hello (STARTING). Returns 1 when
 * it became READY, 0 when not yet, -1 after it failed (p->why says why). */
int sw_read_hello(struct spool *p, struct sworker *w);
/* Whether the driver version file differs from the one at the worker's start. */
bool sw_version_changed(const struct sworker *w, const struct serve_cfg *cfg);

/* --- serve-auth.c: who may ask what --- */
/* Whether the peer on fd (uid, primary gid) may ask for actions: it is the
 * daemon's own user, or a member of the action group by the groups the kernel
 * gives for the connection (SO_PEERGROUPS). Root may act whatever this says:
 * the request rule (rules/) says so, in one place. */
bool sa_may_act(const struct serve_cfg *cfg, int fd, uid_t uid, gid_t gid);
/* NULL when a peer of uid (may_act: sa_may_act's) may make request q, and
 * *process is the process q.pid is or is a thread of (its Tgid); else why
 * not: the request rule of rules/ (rtid__request_rule). */
const char *sa_check(const struct serve_cfg *cfg, uid_t uid, bool may_act,
		     const struct rtid__svc_req *q, int *process);

/* The pid namespace (its ns link, "pid:[INODE]") of the process that
 * connected on fd, pid by SO_PEERCRED: by SO_PEERPIDFD where the kernel has
 * it (the namespace by PIDFD_GET_PID_NAMESPACE from 6.11, else read by the
 * pidfd's number and proven by the pidfd still alive), elsewhere read by
 * pid and proven by the peer socket among pid's fds. 0; -ESRCH when the
 * connecting process is gone or not proven; -ENAMETOOLONG when len cannot
 * hold the link's text; another negative errno when nothing can prove it
 * here (no unix_diag: -EPROTONOSUPPORT) or a call failed (the connection's
 * stat, a netlink socket). ns is written only when proven. Test switches:
 * RTID_SERVE_NO_PEERPIDFD=1 (the fallback), RTID_SERVE_NO_PIDFD_NS=1. */
int sa_peer_ns(int fd, pid_t pid, char *ns, size_t len);

/* --- serve-listen.c: the socket, systemd, readiness --- */
struct slisten {
	int fd;
	int lock; /* <socket>.lock, flock'ed for the daemon's life; -1: none */
	bool created; /* we made the socket file (not systemd): remove it at exit */
	dev_t dev;
	ino_t ino;
};
/* The lock beside the configured socket path (one daemon per path, also when
 * two start at once), then the listening socket: systemd's (sd_listen_fds)
 * or one created at the path, replacing only a stale socket (its connect
 * refused). Returns 0 or -1 after logging why. */
int sl_open(const struct serve_cfg *cfg, struct slisten *l);
/* Close it and remove the socket file if we made it and it is still ours.
 * The lock stays: the daemon still owns the path's record (sl_unlock). */
void sl_close(struct slisten *l, const struct serve_cfg *cfg);
/* Let go of the lock, the last thing before exit. */
void sl_unlock(struct slisten *l);
/* Tell systemd (sd_notify) and the ready fd that requests are served. */
void sl_ready(const struct serve_cfg *cfg);
void sl_stopping(void);

/* Log one line to stderr: with sd-daemon's priority prefix when stderr is
 * the journal (JOURNAL_STREAM), else after the time (UTC, as the shim's). fmt may begin
 * with a priority (SLOG_ERR "cannot ..."); the default is info. */
#define SLOG_ERR "<3>"
#define SLOG_WARNING "<4>"
void serve_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What a client can make the daemon log: each kind at most LOG_BURST lines
 * in LOG_WINDOW seconds, then one line saying how many were left out. */
enum serve_log_kind { SLOG_CLIENT, SLOG_DENIED, SLOG_LIMIT, SLOG_ACCEPT, SLOG_POLL, SLOG_KINDS };
void serve_log_limited(enum serve_log_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Say what was left out of a window that has ended (the loop calls it). */
void serve_log_flush(void);
/* When the soonest window with lines left out ends (the loop wakes then to
 * say so, also when idle), or 0 when none has any. */
double serve_log_due(void);

#endif
