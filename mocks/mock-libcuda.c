/* A mock of libcuda.so.1 for the driver-API backend, driven by the case file
 * ($RTID_CASE) like the mock tool: a scaled attach delay in cuInit, the case's
 * answer per pid as a CUresult, hangs and crashes, and a call log
 * ($RTID_MOCK_LOG). Built twice: with the checkpoint API, and without it
 * (MOCK_OLD_DRIVER) to stand for a driver older than r570, and a third time
 * with the restore-tid query but without the state calls and actions
 * (MOCK_NO_ACTIONS), for a driver that lacks some of the calls.
 *
 * The state calls and actions (GetState, Lock, Checkpoint, Restore, Unlock)
 * keep a state per pid as the driver does (running, locked, checkpointed;
 * an action in the wrong state is CUDA_ERROR_ILLEGAL_STATE). A pid whose
 * answer is not a tid gets that answer (none, exit N, hang, crash) from every
 * call, or only from the calls named in $RTID_MOCK_FAULT_OPS (a comma list of
 * get-restore-tid, get-state, lock, checkpoint, restore, unlock); from the
 * other calls it then behaves as a CUDA process whose restore tid is pid + 1.
 * The case's cuInit fault ("libcuda-init ...") applies to every attach, or,
 * with $RTID_MOCK_INIT_FAULT_WHILE, only while the file it names exists. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "casefile.h"
#include "mock-gpus.h"
#include "mock-log.h"

#define WHO "libcuda"
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_ILLEGAL_STATE 401
#define CUDA_ERROR_UNKNOWN 999

/* The exported driver API, declared here to keep -Wmissing-prototypes happy. */
int cuInit(unsigned flags);
int cuDriverGetVersion(int *version);
int cuGetErrorName(int err, const char **name);
int cuGetErrorString(int err, const char **text);
#ifndef MOCK_OLD_DRIVER
int cuCheckpointProcessGetRestoreThreadId(int pid, int *tid);
#ifndef MOCK_NO_ACTIONS
int cuCheckpointProcessGetState(int pid, int *state);
int cuCheckpointProcessLock(int pid, void *args);
int cuCheckpointProcessCheckpoint(int pid, void *args);
int cuCheckpointProcessRestore(int pid, void *args);
int cuCheckpointProcessUnlock(int pid, void *args);
#endif
#endif

static struct casefile *the_case;
static int initialised;

static struct casefile *load(void)
{
	const char *path = getenv("RTID_CASE");
	char err[512];

	if (!the_case && (!path || cf_load(path, &the_case, err, sizeof(err)) < 0)) {
		fprintf(stderr, "libcuda (mock): %s\n", path ? err : "RTID_CASE is not set");
		return NULL;
	}
	return the_case;
}

static void pause_for(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int cuDriverGetVersion(int *version)
{
	struct casefile *c = load();

	if (!c || !version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = c->api_version ? c->api_version : 13000;
	return CUDA_SUCCESS;
}

int cuInit(unsigned flags)
{
	struct casefile *c = load();
	const char *gate;

	(void)flags;
	if (!c)
		return CUDA_ERROR_UNKNOWN;
	mock_log(WHO, "cuInit", 0, 0, NULL, NULL);
	/* RTID_MOCK_HELPER: a helper process as the driver may start one, forked
	 * without exec, so that it holds every fd the worker has. */
	if (getenv("RTID_MOCK_HELPER")) {
		int p[2];
		char byte;

		if (pipe(p) < 0)
			return CUDA_ERROR_UNKNOWN;
		if (fork() == 0) {
			mock_log(WHO, "helper", 0, 0, NULL, NULL);
			(void)!write(p[1], "h", 1); /* logged: the attach goes on */
			for (;;)
				pause();
		}
		(void)!read(p[0], &byte, 1);
		close(p[0]);
		close(p[1]);
	}
	pause_for(cf_scaled(c->attach_delay_s)); /* the driver attach */
	/* $RTID_MOCK_INIT_FAULT_WHILE: the case's init fault only while that
	 * file exists, so that one daemon meets a failing attach, a good one,
	 * and a failing one again. */
	if ((gate = getenv("RTID_MOCK_INIT_FAULT_WHILE")) && access(gate, F_OK) < 0) {
		initialised = 1;
		return CUDA_SUCCESS;
	}
	if (c->init.kind == CF_ANS_HANG)
		for (;;)
			pause();
	if (c->init.kind == CF_ANS_CRASH) {
		signal(c->init.value, SIG_DFL);
		raise(c->init.value);
	}
	if (c->init.kind == CF_ANS_EXIT)
		return c->init.value;
	initialised = 1;
	return CUDA_SUCCESS;
}

/* Names and strings as the real driver gives them. */
static const struct { int code; const char *name, *text; } errors[] = {
	{ 0, "CUDA_SUCCESS", "no error" },
	{ 1, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ 3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
	{ 101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ 401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state" },
	{ 700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered" },
	{ 999, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static int error_info(int err, const char **out, int text)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == err) {
			*out = text ? errors[i].text : errors[i].name;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

int cuGetErrorName(int err, const char **name)
{
	return error_info(err, name, 0);
}

int cuGetErrorString(int err, const char **text)
{
	return error_info(err, text, 1);
}

#ifndef MOCK_OLD_DRIVER
static int faulty(const char *op);

static int from_answer(const struct cf_answer *a, int *tid)
{
	switch (a->kind) {
	case CF_ANS_TID:
		*tid = a->value;
		return CUDA_SUCCESS;
	case CF_ANS_NONE:
		return CUDA_ERROR_INVALID_VALUE;
	case CF_ANS_NOTINIT:
		return CUDA_ERROR_NOT_INITIALIZED;
	case CF_ANS_EXIT:
		return a->value;
	case CF_ANS_HANG:
		mock_hang();
	case CF_ANS_CRASH:
		signal(a->value, SIG_DFL);
		raise(a->value);
		return CUDA_ERROR_UNKNOWN;
	case CF_ANS_STDOUT:
		break;
	}
	return CUDA_ERROR_UNKNOWN;
}

/* RTID_MOCK_REPLACE_FILE gets RTID_MOCK_REPLACE_TEXT during the call: the
 * process asked about exits and its pid is reused meanwhile. */
static void replace_file(void)
{
	const char *path = getenv("RTID_MOCK_REPLACE_FILE"), *text = getenv("RTID_MOCK_REPLACE_TEXT");
	FILE *f;

	if (!path || !text || !(f = fopen(path, "w")))
		return;
	fputs(text, f);
	fclose(f);
}

int cuCheckpointProcessGetRestoreThreadId(int pid, int *tid)
{
	struct casefile *c = load();
	const struct cf_answer *a = c ? cf_answer_for(c, pid) : NULL;
	int by_name;

	if (!initialised)
		return CUDA_ERROR_NOT_INITIALIZED;
	if ((by_name = mock_by_name(&pid, tid)) >= 0) {
		mock_log(WHO, "start", pid, 0, NULL, "by name");
		return by_name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	}
	if (!a) {
		mock_log(WHO, "unexpected", pid, 0, NULL, "no answer for this pid in the case");
		return CUDA_ERROR_UNKNOWN;
	}
	mock_log(WHO, "start", pid, 0, NULL, NULL);
	mock_slow_op("get-restore-tid"); /* a query the pool's only worker is busy with */
	replace_file();
	if (a->kind != CF_ANS_TID && !faulty("get-restore-tid")) {
		*tid = pid + 1;
		return CUDA_SUCCESS;
	}
	return from_answer(a, tid);
}

/* --- state and actions --- */

/* Whether the pid's fault applies to op ($RTID_MOCK_FAULT_OPS, default all). */
static int faulty(const char *op)
{
	return mock_listed("RTID_MOCK_FAULT_OPS", op, 1);
}

#ifndef MOCK_NO_ACTIONS
enum { ST_RUNNING, ST_LOCKED, ST_CHECKPOINTED };

static struct { int pid, state; } states[256];
static size_t nstates;

/* The driver keeps a process's state where every caller sees it: with
 * $RTID_MOCK_STATE (a directory) the state is kept in a file per process
 * (mock_state_path), so that the several workers of one rtid serve, and separate processes, agree. */
static void state_path(int pid, char *buf, size_t len)
{
	mock_state_path(pid, "", buf, len);
}

static int *state_of(int pid)
{
	char path[1024];
	int *s = NULL;
	FILE *f;

	for (size_t i = 0; i < nstates && !s; i++)
		if (states[i].pid == pid)
			s = &states[i].state;
	if (!s && nstates == sizeof(states) / sizeof(states[0]))
		return NULL;
	if (!s) {
		states[nstates].pid = pid;
		states[nstates].state = ST_RUNNING;
		s = &states[nstates++].state;
	}
	state_path(pid, path, sizeof(path));
	if (path[0] && (f = fopen(path, "r"))) {
		int c = fgetc(f);

		if (c >= '0' && c <= '2')
			*s = c - '0';
		fclose(f);
	}
	return s;
}

static void keep_state(int pid, int state)
{
	char path[1024];
	FILE *f;

	state_path(pid, path, sizeof(path));
	if (path[0] && (f = fopen(path, "w"))) {
		fprintf(f, "%d\n", state);
		fclose(f);
	}
}

/* The process a tid belongs to: the driver takes a tid wherever it takes a
 * pid, as the real tool does (it resolves --pid through /proc). */
static int process_of(const struct casefile *c, int pid)
{
	for (size_t i = 0; c && i < c->ntasks; i++)
		if (c->tasks[i].tid == pid && !cf_answer_for(c, pid))
			return c->tasks[i].pid;
	return pid;
}

/* The common part of every state call: the case's answer, or NULL to go on. */
static int fault_of(const char *op, int *pid, int *done)
{
	struct casefile *c = load();
	const struct cf_answer *a;
	int tid;

	*done = 1;
	if (!initialised)
		return CUDA_ERROR_NOT_INITIALIZED;
	if ((tid = mock_by_name(pid, &tid)) >= 0) {
		mock_log(WHO, op, *pid, 0, NULL, "by name");
		*done = !tid;
		return tid ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	}
	*pid = process_of(c, *pid);
	a = c ? cf_answer_for(c, *pid) : NULL;
	if (!a) {
		mock_log(WHO, "unexpected", *pid, 0, NULL, op);
		return CUDA_ERROR_UNKNOWN;
	}
	mock_log(WHO, op, *pid, 0, NULL, NULL);
	if (a->kind == CF_ANS_TID || !faulty(op)) {
		*done = 0;
		return CUDA_SUCCESS;
	}
	return from_answer(a, &tid);
}

int cuCheckpointProcessGetState(int pid, int *state)
{
	int done, r = fault_of("get-state", &pid, &done);
	int *s = done ? NULL : state_of(pid);

	if (done)
		return r;
	mock_slow_op("get-state"); /* a fault injected, as for the actions */
	if (!s || !state)
		return CUDA_ERROR_INVALID_VALUE;
	*state = *s;
	return CUDA_SUCCESS;
}

/* One action: from state `from` to state `to`. An op named in
 * $RTID_MOCK_SLOW_OPS takes $RTID_MOCK_SLOW_S seconds (scaled), a stand-in
 * for a long checkpoint (the restore-tid query too, as get-restore-tid, and
 * the state call, as get-state);
 * every action logs "OP-end" when it returns. */
static int act(const char *op, int pid, const void *args, int from, int to)
{
	static const unsigned char zero[64];
	char end[32];
	int done, r = fault_of(op, &pid, &done), job = 0;
	int *s = done ? NULL : state_of(pid);

	snprintf(end, sizeof(end), "%s-end", op);
	if (!done && (job = mock_job_enter(op, pid)) < 0)
		return CUDA_ERROR_ILLEGAL_STATE;
	mock_slow_op_on(op, pid);
	mock_log(WHO, end, pid, 0, NULL, NULL);
	if (job > 0)
		mock_job_leave(pid);
	if (done)
		return r;
	/* The driver requires the reserved fields zeroed (lock: all after
	 * timeoutMs; restore: all after its pairs, mock-gpus.c). */
	if (!s || !args)
		return CUDA_ERROR_INVALID_VALUE;
	if (strcmp(op, "restore") && (memcmp((const char *)args + 4, zero, 60) != 0 ||
				      (strcmp(op, "lock") && memcmp(args, zero, 4) != 0)))
		return CUDA_ERROR_INVALID_VALUE;
	if (*s != from)
		return CUDA_ERROR_ILLEGAL_STATE;
	if (!strcmp(op, "restore") && (r = mock_gpus_restore(pid, args)) != CUDA_SUCCESS)
		return r;
	if (!strcmp(op, "checkpoint"))
		mock_gpus_checkpoint(pid);
	*s = to;
	keep_state(pid, to);
	return CUDA_SUCCESS;
}

int cuCheckpointProcessLock(int pid, void *args)
{
	char note[32];

	if (args) {
		unsigned ms;

		memcpy(&ms, args, sizeof(ms));
		snprintf(note, sizeof(note), "timeout %u", ms);
		mock_log(WHO, "lock-args", pid, 0, NULL, note);
	}
	return act("lock", pid, args, ST_RUNNING, ST_LOCKED);
}

int cuCheckpointProcessCheckpoint(int pid, void *args)
{
	return act("checkpoint", pid, args, ST_LOCKED, ST_CHECKPOINTED);
}

int cuCheckpointProcessRestore(int pid, void *args)
{
	return act("restore", pid, args, ST_CHECKPOINTED, ST_LOCKED);
}

int cuCheckpointProcessUnlock(int pid, void *args)
{
	return act("unlock", pid, args, ST_LOCKED, ST_RUNNING);
}
#endif
#endif
