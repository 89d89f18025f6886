/* The driver-API backend's failures that need no case file: no worker, no
 * library, a library without the driver API, a worker started by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "config.h"
#include "helpers.h"
#include "rtid.h"

static struct rtid_result ask(const char *libcuda)
{
	struct rtid_config cfg = { RTID_CONFIG_INIT, .backend = RTID_BACKEND_API, .libcuda = libcuda,
				   .timeout_s = 5 };
	struct rtid_ctx *ctx = NULL;
	struct rtid_result r;

	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(rtid_resolve(ctx, getpid(), &r), 0); /* a process that is there */
	rtid_ctx_free(ctx);
	return r;
}

static void missing_library(void **state)
{
	struct rtid_result r = ask("/nonexistent/libcuda.so.1");

	(void)state;
	assert_int_equal(r.error, RTID_ERR_WORKER_FAILED);
	assert_int_equal(r.source, RTID_SRC_API);
	assert_non_null(strstr(r.detail, "cannot load"));
}

static void library_without_driver_api(void **state)
{
	struct rtid_result r = ask("libm.so.6");

	(void)state;
	assert_int_equal(r.error, RTID_ERR_WORKER_FAILED);
	assert_non_null(strstr(r.detail, "lacks cuInit"));
}

static void missing_worker(void **state)
{
	char *saved = strdup(getenv("RTID_WORKER"));
	struct rtid_result r;

	(void)state;
	setenv("RTID_WORKER", "/nonexistent/rtid-cuda-worker", 1);
	r = ask("libm.so.6");
	setenv("RTID_WORKER", saved, 1);
	free(saved);
	assert_int_equal(r.error, RTID_ERR_WORKER_FAILED);
	/* An explicit RTID_WORKER is the only place tried, and it is named. */
	assert_non_null(strstr(r.detail, "RTID_WORKER=/nonexistent/rtid-cuda-worker"));
}

/* Without RTID_WORKER the error names every path tried and the variable. */
static void worker_not_found_names_paths(void **state)
{
	char *saved = strdup(getenv("RTID_WORKER"));
	char exe[4096], beside[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct rtid_result r;

	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(beside, sizeof(beside), "%s/rtid-cuda-worker", exe);
	unsetenv("RTID_WORKER");
	r = ask("libm.so.6");
	setenv("RTID_WORKER", saved, 1);
	free(saved);
	if (access(RTID_WORKER_PATH, X_OK) == 0)
		skip(); /* an installed worker would be found: nothing to name */
	assert_int_equal(r.error, RTID_ERR_WORKER_FAILED);
	assert_non_null(strstr(r.detail, beside));
	assert_non_null(strstr(r.detail, RTID_WORKER_PATH));
	assert_non_null(strstr(r.detail, "set RTID_WORKER"));
}

static void worker_refuses_to_run_by_hand(void **state)
{
	char cmd[1024];
	int st;

	(void)state;
	snprintf(cmd, sizeof(cmd), "'%s' >/dev/null 2>&1", getenv("RTID_WORKER"));
	st = system(cmd);
	assert_int_equal(WEXITSTATUS(st), 2);
	/* A parent that is not ours: it exits rather than serve. */
	snprintf(cmd, sizeof(cmd), "'%s' 1 libm.so.6 >/dev/null 2>&1", getenv("RTID_WORKER"));
	st = system(cmd);
	assert_int_equal(WEXITSTATUS(st), 1);
}

/* Why the api backend reads again after ECONNRESET: a worker that dies with
 * queries unread leaves that error pending ahead of the replies it sent, and
 * those replies are still there to read (the kernel's order, shown with a
 * socketpair; the case api-worker-crash lost one now and then before). */
static void dead_peer_reset_comes_before_its_replies(void **state)
{
	char buf[16];
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	assert_int_equal(send(sv[1], "reply", 5, 0), 5); /* the worker answered one */
	assert_int_equal(send(sv[0], "query", 5, 0), 5); /* and had the next one unread */
	close(sv[1]);                                     /* when it died */
	assert_int_equal(recv(sv[0], buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, ECONNRESET);
	assert_int_equal(recv(sv[0], buf, sizeof(buf), MSG_DONTWAIT), 5);
	assert_int_equal(recv(sv[0], buf, sizeof(buf), MSG_DONTWAIT), 0);
	close(sv[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missing_library), cmocka_unit_test(library_without_driver_api),
		cmocka_unit_test(missing_worker), cmocka_unit_test(worker_not_found_names_paths),
		cmocka_unit_test(worker_refuses_to_run_by_hand),
		cmocka_unit_test(dead_peer_reset_comes_before_its_replies),
	};

	env_path("RTID_WORKER");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
