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
	struct rtid__job job; /* an action's process's launch job: none beside it (its_turn) */
	double until;        /* its deadline */
	struct sbatch *batch; /* a batch's (pid, process: the one on the worker); NULL: none */
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

/* --- the daemon's event loop, shared between serve.c (the loop),
 * serve-dispatch.c and serve-batch.c (the workers' side) and
 * serve-clients.c (the clients' side); private to the daemon --- */

/* accept() failing for want of fds or memory: the listening socket rests
 * this long before the next try, doubled each time up to the maximum. */
#define ACCEPT_PAUSE_FIRST 0.05
#define ACCEPT_PAUSE_MAX 1.0

struct client {
	int fd; /* -1: a free slot */
	unsigned long conn; /* this connection's number (a job's answer finds it by it) */
	uid_t uid;
	gid_t gid;
	pid_t peer;
	int version; /* the protocol it greeted with; 0: not yet */
	bool queued;   /* a request is waiting or with a worker */
	bool inflight; /* with a worker */
	bool may_act; /* the daemon's user, the action group (sa_may_act); root: the rule */
	bool other_ns; /* in another pid namespace: its pids are translated, or refused */
	bool unproven; /* which process connected is not proven (sa_peer_ns): refused */
	char ns[64];   /* that namespace's link ("pid:[INODE]"); "" when unknown */
	int pid;       /* req.pid as this daemon sees it */
	int process;   /* the process it is or is a thread of: one process's requests
			* go in order, whatever number each names */
	bool start_known;         /* the start time of req.pid at intake */
	unsigned long long start; /* (a pid reused meanwhile is another process) */
	struct rtid__svc_req req;
	double idle_until, req_until, asked; /* asked: when its request came */
	struct rtid__job job; /* an action's process's launch job, read at intake */
	struct sbatch *batch; /* a batch waiting for a worker (NULL: none or one request) */
	unsigned long seq;
};

/* The counters of rtid serve status (serve-stats.c). */
#define ST_SAMPLES 1024 /* the latest latencies per operation, for percentiles */
/* Outcomes beyond the answer's kinds: "not-served", an error of its own,
 * and the two denials that are no one's fault of permission. */
#define ST_NOT_SERVED RTID__SVC_KINDS
#define ST_NO_PROCESS (RTID__SVC_KINDS + 1)
#define ST_NOT_A_PROCESS (RTID__SVC_KINDS + 2)
#define ST_OUTCOMES (RTID__SVC_KINDS + 3)
#define ST_REASONS 24 /* errors' reasons told apart; the rest are "other" */
#define ST_BUCKETS 15 /* the latency histogram's bounds (st_bounds), +Inf apart */
struct sstats {
	double started;  /* the daemon's start (rtid__now) */
	double start_unix; /* the same, in seconds since the epoch */
	double attach_s; /* the latest attach's time */
	unsigned long worker_failures;
	unsigned long n[RTID__OP_COUNT][ST_OUTCOMES];
	char reason[ST_REASONS][40];                     /* the known ones, then by first sight */
	unsigned long err[RTID__OP_COUNT][ST_REASONS + 1]; /* by reason; last: other */
	float lat[RTID__OP_COUNT][ST_SAMPLES];
	unsigned nlat[RTID__OP_COUNT];
	double lat_sum[RTID__OP_COUNT];                  /* seconds, every request */
	unsigned long lat_n[RTID__OP_COUNT];
	unsigned long bucket[RTID__OP_COUNT][ST_BUCKETS]; /* requests within each bound */
};

/* A call that a previous daemon left inside the driver (serve-inflight.c):
 * its worker, still there at our start, and the process it is about. */
#define HELD_MAX 256
struct sheld {
	pid_t pid;                 /* the worker */
	int pidfd;                 /* readable once it has exited; -1: none (checked by time) */
	unsigned long long start;  /* its start time: the same process, not a reused pid */
	int process;               /* the process its call is about (our numbers) */
	unsigned long long pstart; /* that process's start time (0: unknown) */
};

struct server {
	const struct serve_cfg *cfg;
	struct slisten l;
	int sigfd;
	struct spool pool;
	struct client *c;
	unsigned long seq, conns;
	bool stopping, ready;
	double stop_until;
	double accept_at;    /* accept failed for want of fds: not before this (0: now) */
	double reap_at;      /* a worker let go is killed then if still there (0: none) */
	struct sstats stats;
	double accept_delay; /* the next such pause */
	struct sheld held[HELD_MAX]; /* calls of a previous daemon still in the driver */
	unsigned nheld;
	double held_check_at; /* held workers without a pidfd are looked at then (0: none) */
	int record_dir;       /* the record's directory, trusted (-1: no record kept) */
	char record[300];     /* its name there (<socket name>.inflight) */
	char *written;        /* the record's text as last written (NULL: none yet) */
};

/* --- serve-clients.c --- */
/* Connections a uid other than root may hold at once (--max-per-uid, else
 * a quarter of --max-clients, at least 2). */
unsigned sv_per_uid(const struct serve_cfg *cfg);
/* Answer client i's request; the client then has its idle deadline again. */
void sv_answer(struct server *s, int i, struct rtid__svc_ans *a);
/* Answer client i's request with an error (reason, text): never started. */
void sv_fail(struct server *s, int i, const char *reason, const char *text);
/* Fail client i's request, not yet with a worker: with reason and text, or
 * RTID__SVC_IN_DRIVER when a call about its process is inside the driver (its
 * client must not run the real tool's action beside that call). */
void sv_fail_waiting(struct server *s, int i, const char *reason, const char *text);
/* Fail every request not yet with a worker (sv_fail_waiting). */
void sv_fail_queued(struct server *s, const char *reason, const char *text);
/* The deadline of q in seconds from its dispatch. */
double sv_deadline_of(const struct serve_cfg *cfg, const struct rtid__svc_req *q);
/* Client i is readable: its greeting, a request, or its leaving. */
void sv_client_readable(struct server *s, int i);
/* Whether client i's pid is still the process it named at intake: false
 * when its start time now differs from the one read then or cannot be read
 * (or can be, where it could not be then). */
bool sv_same_process(const struct server *s, int i);
/* Right before client i's request goes to the driver: the request rule
 * again (sa_check, as at intake) on the facts of now, with the peer's uid
 * and groups from connect, and the process still the one taken at intake.
 * True when it may go; else false after answering it (denied, or
 * process-changed). */
bool sv_still_allowed(struct server *s, int i);
/* Accept every pending connection (or refuse it), within the limits. */
void sv_accept_all(struct server *s);

/* --- serve-inflight.c: the record of work in flight --- */
/* Read the record a previous daemon left at this socket path (trusted only
 * in a directory and a file no one else may write) and hold the processes
 * of its workers that are still there. Logs what it holds, and once why no
 * record is kept when the directory is not ours alone. */
void si_load(struct server *s);
/* Write the record: every call in the driver now (busy workers, killed ones
 * not yet reaped, held ones), and extra when not NULL (a hand-over about to
 * happen). 0 (also when no record is kept, or nothing changed), or -errno:
 * then nothing may be handed over. */
int si_write(struct server *s, const struct sheld *extra);
/* Whether a call about process is inside the driver: a busy worker's, a
 * killed worker's not yet reaped, or a previous daemon's (held). Nothing
 * else for that process goes to the driver meanwhile. */
bool sv_in_driver(const struct server *s, int process);
/* Let go of held entries whose worker has exited. */
void si_check(struct server *s);
/* At exit: the record of the calls still in the driver (stuck workers left
 * behind), or no record when there are none. */
void si_close(struct server *s);

/* --- serve-stats.c --- */
/* The counters at the daemon's start: every count 0, the start time, and
 * the reasons of errors the daemon gives known in advance. */
void st_init(struct sstats *st);
/* Count client c's answer a (and log it, unless --quiet). */
void st_answered(struct server *s, const struct client *c, const struct rtid__svc_ans *a);
/* The counters to fd, "stat ..." messages then "end"; false when it did not
 * take them all. */
bool st_send(const struct server *s, int fd);

/* --- serve-batch.c: one query for many processes; a reply's answer; a
 * client closed --- */
/* A batch (serve-batch.c writes it; the record of work in flight reads
 * which of its processes a worker still has). */
struct sbatch {
	int op;
	size_t n;
	size_t cur; /* with the worker: the first one not answered yet */
	int pid[RTID__SVC_BATCH_MAX], process[RTID__SVC_BATCH_MAX];
	unsigned long long start[RTID__SVC_BATCH_MAX]; /* where known (no pidfd) */
	bool known[RTID__SVC_BATCH_MAX];
	int pidfd[RTID__SVC_BATCH_MAX]; /* its process's, taken right before (-1: none) */
	bool sent[RTID__SVC_BATCH_MAX]; /* handed to the worker */
	bool done[RTID__SVC_BATCH_MAX]; /* answered */
	struct rtid__svc_ans ans[RTID__SVC_BATCH_MAX];
};
/* Close client i (a job of its own runs on, its answer dropped). */
void sv_drop(struct server *s, int i);
/* Whether the message is a batch request. */
bool sb_is_batch(const char *buf, size_t n);
/* Take client i's batch request: 0 (taken, or answered at once), or
 * -EINVAL for a malformed one (nothing taken). */
int sb_take(struct server *s, int i, const char *buf, size_t n);
/* Every pid of client i's waiting batch answered a (a refusal before any
 * went to a worker): sent, the batch freed. */
void sb_answer_all(struct server *s, int i, const struct rtid__svc_ans *a);
/* Free client c's waiting batch; free a batch (its pidfds closed). */
void sv_drop_batch(struct client *c);
void sv_free_batch(struct sbatch *b);
/* Whether a worker has a batch: one at a time, so that the pidfds a batch
 * holds stay within the fds reserved for them (RTID__SVC_BATCH_MAX). */
bool sb_busy(const struct server *s);
/* Hand client i's batch to idle worker k, to end by deadline (seconds from
 * now): each pid under the rules of one request, right before; the ones
 * that may go to the worker back to back. 0, or -EIO when the worker did
 * not take them (s->pool.why: it is to be taken down). */
int sb_hand(struct server *s, int i, unsigned k, double deadline);
/* Worker k's reply r for its batch job: false when it is not the reply
 * awaited (the worker is taken for crashed). The last one answers the
 * client. */
bool sb_reply(struct server *s, unsigned k, const struct rtid__reply *r);
/* Worker w's batch job ended by its failure: every pid not answered gets
 * reason and why; client i (-1: left) answered. */
void sb_down(struct server *s, struct sworker *w, int i, const char *reason, const char *why);

/* What the real tool would have produced, from the worker's reply r to op. */
void sv_translate(const struct serve_cfg *cfg, const struct rtid__reply *r, int op,
		  struct rtid__svc_ans *a);

/* --- serve-dispatch.c --- */
/* Hand every request that may go now to a worker, starting workers as
 * needed: requests for one process in arrival order and never two at once,
 * actions on at most workers - 1 workers (one is always left for queries). */
void sv_dispatch(struct server *s);
/* Worker k's socket is readable: its hello, or its reply. */
void sv_worker_readable(struct server *s, unsigned k);
/* Worker k failed (why in s->pool.why) or died: its job ends with reason
 * (an action that was started: "unknown", never "ask the tool"). */
void sv_worker_down(struct server *s, unsigned k, const char *reason);
/* Workers busy (actions: with an action only). */
unsigned sv_busy(const struct server *s, bool actions);
/* Set when requests are served (readiness, once). */
void sv_set_ready(struct server *s);

#endif
