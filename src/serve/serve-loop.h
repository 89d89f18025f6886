/* The daemon's event loop, shared between serve.c (the loop), serve-dispatch.c
 * (the workers' side) and serve-clients.c (the clients' side). Private to the
 * daemon. */
#ifndef RTID_SERVE_LOOP_H
#define RTID_SERVE_LOOP_H

#include "serve/serve.h"

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
	double idle_until, req_until;
	double asked;  /* when its request came */
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
/* Close client i (a job of its own runs on, its answer dropped). */
void sv_drop(struct server *s, int i);
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
