/* A client of rtid serve: one connection, greeted once, any number of
 * requests one after another, every wait bounded by a monotonic deadline. */
#ifndef RTID_SERVICE_CLIENT_H
#define RTID_SERVICE_CLIENT_H

#include <stdbool.h>

#include "basic/basic.h" /* rtid__now(): the clock of every deadline here */
#include "proto/serve-proto.h"

struct rtid__svc_conn {
	int fd;
	int version;  /* the protocol it greeted with */
	bool greeted; /* the daemon's greeting has been read */
	bool actions; /* the daemon serves actions (known once greeted) */
	/* Set by each call: the daemon said its action was started (handed to the
	 * driver). Once set, the action must not be run again by anyone: the real
	 * tool neither. */
	bool started;
};

/* The socket clients use: path if given, else $RTID_SOCKET, else the default. */
const char *rtid__svc_path(const char *path);

/* Connect to the daemon at path and send the greeting (its answer is read by
 * the first call, so a request costs one round trip). Returns 0, -ENOENT when
 * there is no socket, -ECONNREFUSED when nobody listens, -EAGAIN when the
 * daemon's backlog is full, or another negative errno. */
int rtid__svc_open(const char *path, struct rtid__svc_conn *c);
/* rtid__svc_open greeting with version: RTID__SVC_VERSION_MAP to send a
 * restore with a device map (a daemon that does not know maps refuses the
 * greeting: rtid__svc_call says -EPROTO). */
int rtid__svc_open_version(const char *path, struct rtid__svc_conn *c, int version);

/* Whether the daemon at the other end of c may be believed: only root's,
 * ours, or the uid RTID_SERVE_UID names (anyone else listening on the path
 * could lie). NULL when it may, else why not, in buf. The shim and the CRIU
 * plugin both ask this. */
const char *rtid__svc_untrusted(const struct rtid__svc_conn *c, char *buf, size_t len);
/* Whether want (RTID_SERVE_UID's value; NULL: unset) names uid: the one uid
 * besides root's and the caller's whose daemon is believed. rtid doctor asks
 * it for the shim as CRIU runs it. */
bool rtid__svc_uid_named(const char *want, uid_t uid);

/* Read the daemon's greeting now rather than with the first answer: 0 (also
 * when read already), -ETIMEDOUT, -EPROTO (refused), -EIO. */
int rtid__svc_greeted(struct rtid__svc_conn *c, double until);

/* Send q and wait until `until` (monotonic seconds) for its answer. Returns 0
 * and *out, -ETIMEDOUT, -EPROTO when the daemon refused us (our version, or
 * busy), -EIO for a closed connection or a malformed or mismatched answer,
 * -EINVAL (nothing sent) for a map on anything but a restore or on a
 * connection not greeted with RTID__SVC_VERSION_MAP.
 * For an action, c->started tells whether a failure may have reached the
 * driver: once the daemon says "started", the wait becomes the daemon's own
 * deadline for it plus a margin, whatever `until` said; an action still
 * queued at `until` is cancelled by closing the connection both ways, after
 * which the daemon can no longer start it (it announces every start first,
 * and the announcement can no longer be sent). */
int rtid__svc_call(struct rtid__svc_conn *c, const struct rtid__svc_req *q, double until,
		   struct rtid__svc_ans *out);

/* One batch (serve-proto.h): op, a query, for pids[0..n), 1 to
 * RTID__SVC_BATCH_MAX of them, in one request; out[i] is pids[i]'s answer.
 * 0, or -ETIMEDOUT, -EPROTO (refused), -EINVAL (op or n out of range), -EIO
 * (closed, or a malformed or mismatched answer: a daemon that does not know
 * batches closes the connection). Nothing in out on failure. */
int rtid__svc_batch(struct rtid__svc_conn *c, int op, const int *pids, size_t n, double until,
		    struct rtid__svc_ans *out);

/* Ask for the daemon's counters ("status", protocol 2): fn gets each "stat
 * ..." message without the word stat, until "end". 0, or -ETIMEDOUT, -EPROTO
 * (refused), -EIO (closed, or not the protocol). */
int rtid__svc_status(struct rtid__svc_conn *c, double until,
		     void (*fn)(void *ctx, const char *stat), void *ctx);

void rtid__svc_close(struct rtid__svc_conn *c);

#endif
