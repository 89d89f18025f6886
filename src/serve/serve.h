/* rtid serve: the daemon that holds one driver attach for a node and answers
 * the shim, the library and anyone allowed over a unix socket (doc/serve.md).
 * Part of the rtid command, not of librtid. */
#ifndef RTID_SERVE_H
#define RTID_SERVE_H

#include <stdbool.h>
#include <sys/types.h>

#include "basic/basic.h"
#include "proto/serve-proto.h"

struct serve_cfg {
	const char *socket_path;  /* default RTID__SVC_SOCKET_DEFAULT */
	const char *worker;       /* rtid-cuda-worker */
	const char *libcuda;      /* default libcuda.so.1 */
	const char *proc_root;    /* default /proc: owners of pids, the driver version */
	bool actions;             /* serve lock, checkpoint, restore, unlock */
	bool have_group, have_action_group;
	gid_t group;              /* the socket's group (0660); default root only */
	gid_t action_group;       /* members may ask for actions; default root only */
	double timeout_s;         /* a query's deadline in the worker */
	double action_timeout_s;  /* an action's deadline (lock: plus its own timeout) */
	double attach_timeout_s;  /* the worker's cuInit */
	double client_timeout_s;  /* a client's time to send each message */
	unsigned max_clients;
	int ready_fd;             /* -1: none */
};

/* Run the daemon until SIGTERM or SIGINT. Returns the exit status. */
int serve_run(const struct serve_cfg *cfg);

/* --- serve-worker.c: the one driver attach --- */
enum sw_state { SW_DOWN, SW_STARTING, SW_READY };

struct sworker {
	enum sw_state state;
	pid_t pid;
	int sock;                  /* -1 when down */
	int pidfd;                 /* the worker's, for a bounded wait on its death; -1: none */
	pid_t reap[8];             /* killed, not yet reaped (stuck in the kernel) */
	double until;              /* STARTING: the hello's deadline */
	double retry_at;           /* DOWN: not restarted before this */
	unsigned failures;         /* in a row, for the backoff */
	unsigned long attaches;    /* workers started so far */
	char version[512];         /* the driver version file when it started */
	size_t version_len;        /* (size_t)-1: there was no such file */
	char why[160];             /* why the last one failed */
};

void sw_init(struct sworker *w);
/* Start a worker (state STARTING) if down and past its backoff. */
int sw_start(struct sworker *w, const struct serve_cfg *cfg);
/* Kill the worker's group and reap it, or leave it to sw_reap when it does
 * not exit at once; failed: count a failure for the backoff. Never blocks
 * past a clean worker's short grace. */
void sw_stop(struct sworker *w, bool failed);
/* Reap what sw_stop killed and left (never blocks). */
void sw_reap(struct sworker *w);
/* The worker's socket is readable: read its hello (STARTING). Returns 1 when
 * it became READY, 0 when not yet, -1 after it failed (why says why). */
int sw_read_hello(struct sworker *w);
/* Whether the driver version file differs from the one at the worker's start. */
bool sw_version_changed(const struct sworker *w, const struct serve_cfg *cfg);

/* --- serve-auth.c: who may ask what --- */
/* Whether the peer on fd (uid, primary gid) may ask for actions at all:
 * root, or a member of the action group by the groups the kernel gives for
 * the connection (SO_PEERGROUPS). */
bool sa_may_act(const struct serve_cfg *cfg, int fd, uid_t uid, gid_t gid);
/* NULL when a peer of uid (may_act: sa_may_act's) may make request q, else
 * why not: the request rule of rules/ (rtid__request_rule). */
const char *sa_check(const struct serve_cfg *cfg, uid_t uid, bool may_act,
		     const struct rtid__svc_req *q);

/* --- serve-listen.c: the socket, systemd, readiness --- */
struct slisten {
	int fd;
	bool created; /* we made the socket file (not systemd): remove it at exit */
	dev_t dev;
	ino_t ino;
};
/* The listening socket: systemd's (sd_listen_fds) or one created at the
 * configured path. Returns 0 or -1 after logging why. */
int sl_open(const struct serve_cfg *cfg, struct slisten *l);
/* Close it and remove the socket file if we made it and it is still ours. */
void sl_close(struct slisten *l, const struct serve_cfg *cfg);
/* Tell systemd (sd_notify) and the ready fd that requests are served. */
void sl_ready(const struct serve_cfg *cfg);
void sl_stopping(void);

/* Log one line to stderr (the journal under systemd). */
void serve_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
