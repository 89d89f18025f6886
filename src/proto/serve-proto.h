/* The protocol of rtid serve: one line of printable ASCII per SOCK_SEQPACKET
 * message, at most RTID__SVC_MSG_MAX bytes. The client greets first with the
 * version it speaks; every request names an operation and a pid, and every
 * answer carries what the real cuda-checkpoint would have produced. The full
 * grammar is in doc/serve.md. Shared by the daemon and its clients. */
#ifndef RTID_SERVE_PROTO_H
#define RTID_SERVE_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "proto/devmap.h"
#include "proto/worker-proto.h"
#include "rules/rules.h"

/* 2 adds "started" and "unknown" (exactly-once actions); a client of 1 is
 * still answered its queries, and its actions are refused before any start.
 * 3 adds a device map to restore ("restore PID map MAP"): a client greets
 * with 3 only to send one, so that a daemon that does not know maps refuses
 * it at the greeting and never serves the restore without its map; every
 * other client greets with 2, which every daemon since actions takes. */
#define RTID__SVC_VERSION 3
#define RTID__SVC_VERSION_MIN 1
#define RTID__SVC_VERSION_PLAIN 2
#define RTID__SVC_VERSION_MAP 3
/* Room for a restore with the longest map (RTID__MAP_TEXT) and the rest. */
#define RTID__SVC_MSG_MAX 1536
/* /run/rtid/rtid.sock, or under the build tree in a build with its tests
 * (-Ddefaults, src/meson.build). */
#define RTID__SVC_SOCKET_DEFAULT RTID_DEFAULT_SOCKET
#define RTID__SVC_TEXT_MAX 120
/* The reason of an error answer to a request held back past its deadline
 * because a call about its process is still inside the driver (the
 * daemon's, or a previous daemon's): nothing started, and for an action no
 * reason to run the real tool, whose call would overlap the one in the
 * driver: its client fails it, as the tool fails an action. */
#define RTID__SVC_IN_DRIVER "in-driver"

/* A batch: one query for up to this many processes in one request, "batch
 * OP PID..." (OP get-restore-tid or get-state), answered with one answer
 * per pid, in its order, sent together once all are known. A daemon that
 * does not know batches closes the connection (a malformed request): its
 * client asks one by one. An answer "error not-batched" says to ask that
 * pid alone (in its own request, under every rule of one). */
#define RTID__SVC_BATCH_MAX 24
#define RTID__SVC_NOT_BATCHED "not-batched"

struct rtid__svc_req {
	int op;              /* enum rtid__worker_op */
	int pid;
	unsigned timeout_ms; /* lock only */
	struct rtid__devmap map; /* restore only, protocol 3 (map.n 0: none) */
};

enum rtid__svc_kind {
	RTID__SVC_TID,    /* value: the restore tid */
	RTID__SVC_STATE,  /* value: CUprocessState (0 running .. 3 failed) */
	RTID__SVC_DONE,   /* an action returned CUDA_SUCCESS */
	RTID__SVC_CUERR,  /* value: the CUresult; name, text: its name and string */
	RTID__SVC_ERROR,  /* the daemon could not answer (name: reason): ask the tool */
	RTID__SVC_DENIED, /* the peer may not ask this (text: why) */
	/* Version 2, actions only. STARTED comes before the answer: the action
	 * has been handed to the driver (value: the daemon's deadline for it in
	 * ms), so it must never be run again. UNKNOWN ends a started action whose
	 * outcome the daemon cannot tell (name: reason): not "ask the tool". */
	RTID__SVC_STARTED,
	RTID__SVC_UNKNOWN,
	RTID__SVC_KINDS,
};

struct rtid__svc_ans {
	enum rtid__svc_kind kind;
	int op, pid, value;
	char name[40];
	char text[RTID__SVC_TEXT_MAX];
};

/* "get-restore-tid", ...; NULL for an op out of range. */
const char *rtid__svc_op_name(int op);
/* The request rule's kind (rules/) of wire operation op: a query, get-state
 * (which takes a thread too) or an action. One mapping for the daemon's
 * intake and the shim, which must rule alike. */
enum rtid__req_kind rtid__svc_op_kind(int op);
/* "running", ...; NULL for a state out of range. */
const char *rtid__svc_state_name(int state);

/* Format into buf (RTID__SVC_MSG_MAX bytes), without a newline. Return the
 * length. Text that is not printable ASCII is replaced by '?'. A request's
 * map is written for restore only. */
size_t rtid__svc_hello_format(char *buf, int version);
size_t rtid__svc_req_format(const struct rtid__svc_req *q, char *buf);
size_t rtid__svc_ans_format(const struct rtid__svc_ans *a, char *buf);

/* Parse a client greeting "hello V": 0 and *version, or -EINVAL. */
int rtid__svc_hello_parse(const char *buf, size_t len, int *version);
/* Parse the daemon's greeting to a client that said version: 0 and *actions
 * (the daemon serves actions), or -EPROTO when it refused us (version, busy),
 * -EINVAL for anything else (another version included). */
int rtid__svc_welcome_parse(const char *buf, size_t len, int version, bool *actions);
/* A batch request of op for pids[0..n) into buf: its length, or 0 when it
 * does not fit (n 0 or over RTID__SVC_BATCH_MAX, op not a query, or the
 * message too long). */
size_t rtid__svc_batch_format(int op, const int *pids, size_t n, char *buf);
/* Parse a batch request: 0, *op, pids (RTID__SVC_BATCH_MAX of room) and
 * *n; -EINVAL for anything else (a single request included). */
int rtid__svc_batch_parse(const char *buf, size_t len, int *op, int *pids, size_t *n);
/* Parse one request or answer. Return 0 and *out, or -EINVAL. */
int rtid__svc_req_parse(const char *buf, size_t len, struct rtid__svc_req *out);
int rtid__svc_ans_parse(const char *buf, size_t len, struct rtid__svc_ans *out);

#endif
