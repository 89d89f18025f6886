/* The messages between rtid and its driver-API worker, over a SOCK_SEQPACKET
 * socketpair (one message per packet). Both ends are built from the same
 * tree, so the structs travel as they are. */
#ifndef RTID_WORKER_PROTO_H
#define RTID_WORKER_PROTO_H

#include <sys/types.h>

#include "proto/devmap.h"

#define RTID__WORKER_FD 3          /* the worker's end of the socketpair */
#define RTID__API_MIN_VERSION 12080 /* CUDA 12.8: the checkpoint API appeared */
/* CUDA 13.0 (r580): CUcheckpointRestoreArgs takes GPU pairs. */
#define RTID__API_MAP_VERSION 13000
/* In rtid__hello.ops beside the ops: restore takes a device map. */
#define RTID__OPS_MAP (1u << 31)

struct rtid__hello {
	int ok;          /* 1: ready for queries; 0: see why */
	int version;     /* cuDriverGetVersion */
	unsigned ops;    /* 1u << op for each rtid__worker_op this driver has */
	char why[120];
};

/* What a query asks the driver; 0 is the restore-tid query of the batch API. */
enum rtid__worker_op {
	RTID__OP_RESTORE_TID, /* cuCheckpointProcessGetRestoreThreadId */
	RTID__OP_GET_STATE,   /* cuCheckpointProcessGetState */
	RTID__OP_LOCK,        /* cuCheckpointProcessLock (timeout_ms) */
	RTID__OP_CHECKPOINT,  /* cuCheckpointProcessCheckpoint */
	RTID__OP_RESTORE,     /* cuCheckpointProcessRestore */
	RTID__OP_UNLOCK,      /* cuCheckpointProcessUnlock */
	RTID__OP_COUNT,
};

struct rtid__query {
	int pid;
	int op;              /* enum rtid__worker_op */
	unsigned timeout_ms; /* lock: CUcheckpointLockArgs.timeoutMs (0: none) */
	struct rtid__devmap map; /* restore: CUcheckpointRestoreArgs.gpuPairs (n 0: none) */
};

struct rtid__reply {
	int pid;
	int cuerr;       /* the CUresult of the call */
	int tid;         /* restore tid, or the CUprocessState of get-state */
	int missing;     /* 1: this driver lacks the call; cuerr means nothing */
	char name[40];   /* cuGetErrorName, when there is one */
	char text[80];   /* cuGetErrorString, when there is one */
};

/* --- worker-start.c: shared by everyone who starts the worker --- */
/* The socketpair between starter (sv[0]) and worker (sv[1], to become its
 * fd RTID__WORKER_FD), both ends close-on-exec. 0 or a negative errno. */
int rtid__worker_pair(int sv[2]);
/* The worker's command line: path, our pid (it dies with us), libcuda
 * (NULL: libcuda.so.1). cmd->argv stays valid as long as cmd, path, libcuda. */
struct rtid__worker_cmd {
	char parent[16];
	char *argv[4];
};
void rtid__worker_argv(struct rtid__worker_cmd *cmd, const char *path, const char *libcuda);
/* The worker's greeting h, of n bytes as received: 0 when it is ready; else
 * -EIO, and why says what the worker said when it said something (why is
 * untouched for a short or failed read: the starter knows the reason). */
int rtid__worker_greeting(const struct rtid__hello *h, ssize_t n, char *why, size_t len);

#endif
