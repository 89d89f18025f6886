/* A mock of libcuda.so.1 for the driver-API backend, driven by the case file
 * ($RTID_CASE) like the mock tool: a scaled attach delay in cuInit, the case's
 * answer per pid as a CUresult, hangs and crashes, and a call log
 * ($RTID_MOCK_LOG). Built twice: with the checkpoint API, and without it
 * (MOCK_OLD_DRIVER) to stand for a driver older than r570. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "casefile.h"
#include "mock-log.h"

#define WHO "libcuda"
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_UNKNOWN 999

/* The exported driver API, declared here to keep -Wmissing-prototypes happy. */
int cuInit(unsigned flags);
int cuDriverGetVersion(int *version);
int cuGetErrorName(int err, const char **name);
#ifndef MOCK_OLD_DRIVER
int cuCheckpointProcessGetRestoreThreadId(int pid, int *tid);
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

	(void)flags;
	if (!c)
		return CUDA_ERROR_UNKNOWN;
	mock_log(WHO, "cuInit", 0, 0, NULL, NULL);
	pause_for(cf_scaled(c->attach_delay_s)); /* the driver attach */
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

int cuGetErrorName(int err, const char **name)
{
	static const struct { int code; const char *name; } t[] = {
		{ 0, "CUDA_SUCCESS" }, { 1, "CUDA_ERROR_INVALID_VALUE" },
		{ 3, "CUDA_ERROR_NOT_INITIALIZED" }, { 2, "CUDA_ERROR_OUT_OF_MEMORY" },
		{ 700, "CUDA_ERROR_ILLEGAL_ADDRESS" }, { 999, "CUDA_ERROR_UNKNOWN" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].code == err) {
			*name = t[i].name;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

#ifndef MOCK_OLD_DRIVER
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
		for (;;)
			pause();
	case CF_ANS_CRASH:
		signal(a->value, SIG_DFL);
		raise(a->value);
		return CUDA_ERROR_UNKNOWN;
	case CF_ANS_STDOUT:
		break;
	}
	return CUDA_ERROR_UNKNOWN;
}

int cuCheckpointProcessGetRestoreThreadId(int pid, int *tid)
{
	struct casefile *c = load();
	const struct cf_answer *a = c ? cf_answer_for(c, pid) : NULL;

	if (!initialised)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!a) {
		mock_log(WHO, "unexpected", pid, 0, NULL, "no answer for this pid in the case");
		return CUDA_ERROR_UNKNOWN;
	}
	mock_log(WHO, "start", pid, 0, NULL, NULL);
	return from_answer(a, tid);
}
#endif
