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
	bool may_act; /* root, or in the action group (sa_may_act) */
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
struct sstats {
	double started;  /* the daemon's start */
	double attach_s; /* the latest attach's time */
	unsigned long worker_failures;
	unsigned long n[RTID__OP_COUNT][RTID__SVC_KINDS];
	float lat[RTID__OP_COUNT][ST_SAMPLES];
	unsigned nlat[RTID__OP_COUNT];
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
};

/* --- serve-clients.c --- */
/* Close client i (a job of its own runs on, its answer dropped). */
void sv_drop(struct server *s, int i);
/* Answer client i's request; the client then has its idle deadline again. */
void sv_answer(struct server *s, int i, struct rtid__svc_ans *a);
/* Answer client i's request with an error (reason, text): never started. */
void sv_fail(struct server *s, int i, const char *reason, const char *text);
/* Fail every request not yet with a worker. */
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

/* --- serve-stats.c --- */
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
