/* The driver's answer for a batch of pids, from one of three backends behind
 * one table: cuda-checkpoint children (tool.c), one driver-API worker that
 * attaches once per batch (api.c), or rtid serve (service.c). Backends see
 * only their settings (struct rtid__driver), never the resolver's context,
 * and write only their own answers (struct rtid__answer): what an answer
 * means for the caller is decided in core/. */
#ifndef RTID_DRIVER_H
#define RTID_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "basic/basic.h"
#include "rtid.h"

/* What a driver backend says about one pid. */
struct rtid__answer {
	int tid;              /* > 0: the restore thread; 0: none, or see error */
	enum rtid_error error;
	int code;             /* the tool's exit status, or -signal; the CUresult */
	double ms;            /* time spent asking */
	char detail[sizeof(((struct rtid_result *)0)->detail)];
};

/* --- answer.c --- */
/* Make a an error: tid 0, e, and the detail. */
void rtid__answer_fail(struct rtid__answer *a, enum rtid_error e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The settings of the driver backends, filled once by the resolver's context
 * (which owns the strings) and read by the backends alone. */
struct rtid__worker; /* api.c: the attached worker of one batch */
struct rtid__driver {
	enum rtid_backend backend;
	double timeout_s;     /* each query (the api worker's reply, each child) */
	unsigned jobs;        /* cuda-checkpoint children at once, <= RTID__MAX_CHILDREN */
	char *tool_name;      /* the configured tool (NULL: cuda-checkpoint), for errors */
	char *tool_path;      /* the tool found, or NULL */
	char *libcuda;        /* the api worker's libcuda (NULL: libcuda.so.1) */
	char *service_socket; /* rtid serve's socket (NULL: $RTID_SOCKET, the default) */
	struct rtid__worker *worker; /* the api worker, during one rtid_resolve_many */
};

/* One backend: batch asks for every i with need[i] and writes ans[i] (zeroed
 * by the caller); the others are not touched. end (may be NULL) ends what it
 * keeps between the groups of one batch. */
struct rtid__backend {
	void (*batch)(struct rtid__driver *d, const int *pids, const bool *need, size_t n,
		      struct rtid__answer *ans, double batch_deadline);
	void (*end)(struct rtid__driver *d);
};
extern const struct rtid__backend rtid__tool_backend;    /* tool.c */
extern const struct rtid__backend rtid__api_backend;     /* api.c */
extern const struct rtid__backend rtid__service_backend; /* service.c */

/* --- driver.c: the backend d->backend names --- */
void rtid__driver_batch(struct rtid__driver *d, const int *pids, const bool *need, size_t n,
			struct rtid__answer *ans, double batch_deadline);
/* End what the backend keeps between the groups of one batch (the api
 * worker, attached once for the batch). Idempotent. */
void rtid__driver_end(struct rtid__driver *d);

/* --- tool.c --- */
/* Turn a finished cuda-checkpoint child into an answer or error in a. */
void rtid__tool_interpret(const struct rtid__child *c, struct rtid__answer *a);

/* --- worker-path.c --- */
/* The worker program to run: RTID_WORKER, else beside the running program,
 * else the installed one. 0 and the path in buf, or -ENOENT and in why the
 * paths tried and the variable that overrides them. */
int rtid__worker_path(char *buf, size_t len, char *why, size_t wlen);

#endif
