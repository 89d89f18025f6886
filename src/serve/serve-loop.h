/* The daemon's event loop, shared between serve.c (the loop, the worker
 * side) and serve-clients.c (the client side). Private to the daemon. */
#ifndef RTID_SERVE_LOOP_H
#define RTID_SERVE_LOOP_H

#include "serve/serve.h"

struct client {
	int fd; /* -1: a free slot */
	uid_t uid;
	gid_t gid;
	pid_t peer;
	bool greeted, queued;
	bool may_act; /* root, or in the action group (sa_may_act) */
	bool other_ns; /* in another pid namespace: its pids are translated, or refused */
	char ns[64];   /* that namespace's link ("pid:[INODE]"); "" when unknown */
	int pid;       /* req.pid as this daemon sees it */
	bool start_known;         /* the start time of req.pid at intake */
	unsigned long long start; /* (a pid reused meanwhile is another process) */
	struct rtid__svc_req req;
	double idle_until, req_until;
	unsigned long seq;
};

struct server {
	const struct serve_cfg *cfg;
	struct slisten l;
	int sigfd;
	struct sworker w;
	struct client *c;
	int inflight; /* a client slot, or -1 */
	double inflight_until;
	unsigned long seq;
	bool stopping, ready;
	double stop_until;
};

/* Close client i. */
void sv_drop(struct server *s, int i);
/* Answer client i's request; the client then has its idle deadline again. */
void sv_answer(struct server *s, int i, struct rtid__svc_ans *a);
/* Answer client i's request with an error (reason, text). */
void sv_fail(struct server *s, int i, const char *reason, const char *text);
/* Fail every queued request not in flight. */
void sv_fail_queued(struct server *s, const char *reason, const char *text);
/* The deadline of q in seconds from its dispatch. */
double sv_deadline_of(const struct serve_cfg *cfg, const struct rtid__svc_req *q);
/* Client i is readable: its greeting or a request. */
void sv_client_readable(struct server *s, int i);
/* Whether client i's pid is still the process it named at intake: false only
 * when a start time was read then and the pid now has another, or none. */
bool sv_same_process(const struct server *s, int i);
/* Accept every pending connection (or say busy). */
void sv_accept_all(struct server *s);

#endif
