/* The messages between the resolver and its driver-API worker, over a
 * SOCK_SEQPACKET socketpair (one message per packet). Both ends are built
 * from the same tree, so the structs travel as they are. */
#ifndef RTID_WORKER_PROTO_H
#define RTID_WORKER_PROTO_H

#define RTID_WORKER_FD 3          /* the worker's end of the socketpair */
#define RTID_API_MIN_VERSION 12080 /* CUDA 12.8: the checkpoint API appeared */

struct rtid_hello {
	int ok;          /* 1: ready for queries; 0: see why */
	int version;     /* cuDriverGetVersion */
	char why[120];
};

struct rtid_query {
	int pid;
};

struct rtid_reply {
	int pid;
	int cuerr;       /* CUresult of cuCheckpointProcessGetRestoreThreadId */
	int tid;
	char name[40];   /* cuGetErrorName, when there is one */
};

#endif
