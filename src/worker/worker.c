/* rtid-cuda-worker: the one process that loads libcuda for a batch. It is
 * started by the resolver with a socketpair end as fd 3, dies with its parent,
 * pays cuInit once, then answers queries (restore tid, state, and the lock,
 * checkpoint, restore and unlock actions) until the socket closes.
 *
 *   rtid-cuda-worker PARENT_PID LIBCUDA_PATH */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rtid.h"
#include "basic/parse.h"
#include "proto/worker-proto.h"

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_version_fn)(int *);
typedef int (*cu_restore_tid_fn)(int, int *);
typedef int (*cu_error_name_fn)(int, const char **);
typedef int (*cu_state_fn)(int, int *);
typedef int (*cu_action_fn)(int, void *);

/* The driver's argument structs: 64 bytes each, reserved fields zeroed. */
struct cu_lock_args {
	unsigned timeout_ms;
	unsigned reserved0;
	unsigned long long reserved1[7];
};
struct cu_args {
	unsigned long long reserved[8];
};
/* CUcheckpointRestoreArgs since CUDA 13.0: the pairs, then reserved. */
struct cu_restore_args {
	const struct rtid__gpu_pair *pairs; /* CUcheckpointGpuPair: two CUuuid, old then new */
	unsigned npairs;
	char reserved[52 - sizeof(void *)];
	unsigned long long reserved1;
};
_Static_assert(sizeof(struct rtid__gpu_pair) == 32, "CUcheckpointGpuPair is two CUuuid");
_Static_assert(sizeof(struct cu_restore_args) == 64, "CUcheckpointRestoreArgs is 64 bytes");
_Static_assert(sizeof(struct cu_lock_args) == 64, "CUcheckpointLockArgs is 64 bytes");
_Static_assert(sizeof(struct cu_args) == 64, "the checkpoint argument structs are 64 bytes");

struct api {
	cu_init_fn init;
	cu_version_fn version;
	cu_restore_tid_fn restore_tid;
	cu_error_name_fn error_name, error_string;
	cu_state_fn state;
	cu_action_fn action[RTID__OP_COUNT]; /* lock .. unlock; NULL where the driver lacks it */
	bool maps; /* restore takes GPU pairs */
};

static const char *const action_sym[RTID__OP_COUNT] = {
	[RTID__OP_LOCK] = "cuCheckpointProcessLock",
	[RTID__OP_CHECKPOINT] = "cuCheckpointProcessCheckpoint",
	[RTID__OP_RESTORE] = "cuCheckpointProcessRestore",
	[RTID__OP_UNLOCK] = "cuCheckpointProcessUnlock",
};

static int say(const struct rtid__hello *h)
{
	return send(RTID__WORKER_FD, h, sizeof(*h), MSG_NOSIGNAL) == (ssize_t)sizeof(*h) ? 0 : 1;
}

static int refuse(struct rtid__hello *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int refuse(struct rtid__hello *h, const char *fmt, ...)
{
	va_list ap;

	h->ok = 0;
	va_start(ap, fmt);
	vsnprintf(h->why, sizeof(h->why), fmt, ap);
	va_end(ap);
	return say(h) ? 1 : 2;
}

/* Load, check and initialise the driver; on failure say why and exit. */
static int open_driver(const char *path, struct api *a, struct rtid__hello *h)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int r;

	if (!lib)
		return refuse(h, "cannot load %s", dlerror());
	a->init = (cu_init_fn)dlsym(lib, "cuInit");
	a->version = (cu_version_fn)dlsym(lib, "cuDriverGetVersion");
	a->restore_tid = (cu_restore_tid_fn)dlsym(lib, "cuCheckpointProcessGetRestoreThreadId");
	a->error_name = (cu_error_name_fn)dlsym(lib, "cuGetErrorName");
	a->error_string = (cu_error_name_fn)dlsym(lib, "cuGetErrorString");
	a->state = (cu_state_fn)dlsym(lib, "cuCheckpointProcessGetState");
	for (int op = RTID__OP_LOCK; op < RTID__OP_COUNT; op++)
		a->action[op] = (cu_action_fn)dlsym(lib, action_sym[op]);
	if (!a->init || !a->version)
		return refuse(h, "%s lacks cuInit or cuDriverGetVersion", path);
	if (!a->restore_tid)
		return refuse(h, "%s lacks cuCheckpointProcessGetRestoreThreadId (driver older "
			      "than r570)", path);
	if ((r = a->version(&h->version)) != 0)
		return refuse(h, "cuDriverGetVersion failed: CUresult %d", r);
	if (h->version < RTID__API_MIN_VERSION)
		return refuse(h, "driver API version %d is older than %d (CUDA 12.8)", h->version,
			      RTID__API_MIN_VERSION);
	/* The attach every cuda-checkpoint spawn pays, paid once here. */
	if ((r = a->init(0)) != 0)
		return refuse(h, "cuInit failed: CUresult %d", r);
	/* What it has, so that an action it lacks is refused before it is said
	 * to have started. */
	h->ops = 1u << RTID__OP_RESTORE_TID | (a->state ? 1u << RTID__OP_GET_STATE : 0);
	for (int op = RTID__OP_LOCK; op < RTID__OP_COUNT; op++)
		h->ops |= a->action[op] ? 1u << op : 0;
	a->maps = a->action[RTID__OP_RESTORE] && h->version >= RTID__API_MAP_VERSION;
	h->ops |= a->maps ? RTID__OPS_MAP : 0;
	h->ok = 1;
	return say(h);
}

/* Make the call q asks for; r->missing when this driver lacks it. */
static void call(const struct api *a, const struct rtid__query *q, struct rtid__reply *r)
{
	struct cu_lock_args lock = { .timeout_ms = q->timeout_ms };
	struct cu_args args = { { 0 } };
	struct cu_restore_args restore = { .pairs = q->map.pair, .npairs = q->map.n };

	if (q->op == RTID__OP_RESTORE_TID)
		r->cuerr = a->restore_tid(q->pid, &r->tid);
	else if (q->op == RTID__OP_GET_STATE && a->state)
		r->cuerr = a->state(q->pid, &r->tid);
	else if (q->op == RTID__OP_LOCK && a->action[q->op])
		r->cuerr = a->action[q->op](q->pid, &lock);
	else if (q->op == RTID__OP_RESTORE && q->map.n && a->maps)
		r->cuerr = a->action[q->op](q->pid, &restore);
	else if (q->op == RTID__OP_RESTORE && q->map.n) /* never without its map */
		r->missing = 1;
	else if (q->op > RTID__OP_LOCK && q->op < RTID__OP_COUNT && a->action[q->op])
		r->cuerr = a->action[q->op](q->pid, &args);
	else
		r->missing = 1;
}

static void answer(const struct api *a, const struct rtid__query *q)
{
	struct rtid__reply r = { .pid = q->pid };
	const char *name = NULL, *text = NULL;

	call(a, q, &r);
	if (r.cuerr && a->error_name && a->error_name(r.cuerr, &name) == 0 && name)
		snprintf(r.name, sizeof(r.name), "%s", name);
	if (r.cuerr && a->error_string && a->error_string(r.cuerr, &text) == 0 && text)
		snprintf(r.text, sizeof(r.text), "%s", text);
	send(RTID__WORKER_FD, &r, sizeof(r), MSG_NOSIGNAL);
}

int main(int argc, char **argv)
{
	struct rtid__hello h = { 0 };
	struct rtid__query q;
	struct api a = { 0 };
	int parent, r;

	if (argc != 3 || rtid__parse_pid(argv[1], &parent) < 0) {
		fprintf(stderr, "rtid-cuda-worker: started by the rtid library only\n");
		return 2;
	}
	/* Die with the resolver; if it is already gone, do not linger. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* Whatever libcuda starts must not hold our end of the socket: the
	 * resolver would not see this worker die. */
	fcntl(RTID__WORKER_FD, F_SETFD, FD_CLOEXEC);
	if (getppid() != parent)
		return 1;
	r = open_driver(argv[2], &a, &h);
	if (r != 0 || !h.ok)
		return r;
	while (recv(RTID__WORKER_FD, &q, sizeof(q), 0) == (ssize_t)sizeof(q))
		answer(&a, &q);
	return 0;
}
