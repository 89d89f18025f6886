/* Restores onto other GPUs: the device map's one reader (proto/devmap.c)
 * and its named errors, the wire's "restore PID map MAP" (protocol 3),
 * rtid serve handing the pairs to the driver (the mock remembers each
 * process's GPUs at its checkpoint and enforces the driver's rules), a
 * driver without maps and a daemon without them refusing before anything
 * starts, and the shim sending the tool's --device-map to the daemon. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "basic/basic.h"
#include "helpers.h"
#include "proto/devmap.h"
#include "proto/serve-proto.h"
#include "proto/service-client.h"
#include "serve-harness.h"

#define A "GPU-0a1b2c3d-0000-4000-8000-00000000000a"
#define B "GPU-0a1b2c3d-0000-4000-8000-00000000000b"
#define C "GPU-0a1b2c3d-0000-4000-8000-00000000000c"
#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define TOOL_CALLS "\"mock\":\"cuda-checkpoint\",\"event\":\"start\""

static const int map_pids[] = { 100, 0 };

static struct daemon d;

static int parse(const char *text, char *why)
{
	struct rtid__devmap m = { .n = 99 };
	int r = rtid__devmap_parse(text, &m, why, 160);

	if (r < 0)
		assert_int_equal(m.n, 99); /* untouched */
	return r;
}

/* The tool's syntax, either case of hex, written back in the tool's own
 * form; each fault named, with the text at fault. */
static void test_map_reader(void **state)
{
	struct rtid__devmap m;
	char why[160], back[RTID__MAP_TEXT + 1], big[(RTID__MAP_MAX + 1) * 84] = "";

	(void)state;
	assert_int_equal(rtid__devmap_parse(A "=" B "," B "=" A, &m, why, sizeof(why)), 0);
	assert_int_equal(m.n, 2);
	assert_int_equal(m.pair[0].from[15], 0x0a);
	assert_int_equal(m.pair[0].to[15], 0x0b);
	assert_int_equal(m.pair[0].from[0], 0x0a);
	assert_int_equal(m.pair[0].from[1], 0x1b);
	assert_int_equal(rtid__devmap_format(&m, back, sizeof(back)), strlen(A "=" B "," B "=" A));
	assert_string_equal(back, A "=" B "," B "=" A);
	assert_int_equal(rtid__devmap_parse("GPU-0A1B2C3D-0000-4000-8000-00000000000A=" B, &m, why,
					    sizeof(why)), 0);
	rtid__devmap_format(&m, back, sizeof(back));
	assert_string_equal(back, A "=" B);
	assert_int_equal(rtid__devmap_format(&m, back, 20), 0); /* only whole pairs */
	assert_string_equal(back, "");
	assert_int_equal(rtid__devmap_format(&m, back, 0), 0);
	assert_int_equal(rtid__devmap_parse(NULL, &m, why, sizeof(why)), -EINVAL);
	/* Every byte of a UUID a hex digit: not one just past 9, F or f, nor before 0, A, a. */
	{
		static const char *const bad[] = {
			A "=GPU-0a1b2c3d-0000-4000-8000-00000000000:", A "=GPU-0a1b2c3d-0000-4000-8000-00000000000/",
			A "=GPU-0a1b2c3d-0000-4000-8000-00000000000G", A "=GPU-0a1b2c3d-0000-4000-8000-00000000000@",
			A "=GPU-0a1b2c3d-0000-4000-8000-00000000000g", A "=GPU-0a1b2c3d-0000-4000-8000-00000000000`",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			assert_int_equal(parse(bad[i], why), -EINVAL);
		assert_int_equal(rtid__devmap_parse(A "=GPU-0A1B2C3D-0000-4000-8000-00000000009F", &m, why,
						    sizeof(why)), 0);
		assert_int_equal(m.pair[0].to[15], 0x9f);
	}
	assert_int_equal(parse("", why), -EINVAL);
	assert_string_equal(why, "device map: empty");
	assert_int_equal(parse(A "=" B ",", why), -EINVAL);
	assert_non_null(strstr(why, "an empty pair"));
	assert_int_equal(parse(A, why), -EINVAL);
	assert_non_null(strstr(why, "not OLD=NEW"));
	assert_int_equal(parse(A "=" B "=" C, why), -EINVAL);
	assert_non_null(strstr(why, "not OLD=NEW"));
	assert_int_equal(parse("GPU-0a1b2c3d-0000-4000-8000-00000000000=" B, why), -EINVAL);
	assert_string_equal(why, "device map: a malformed GPU UUID "
			    "'GPU-0a1b2c3d-0000-4000-8000-00000000000'");
	assert_int_equal(parse(A "=GPU-0a1b2c3d+0000-4000-8000-00000000000b", why), -EINVAL);
	assert_non_null(strstr(why, "malformed GPU UUID 'GPU-0a1b2c3d+0000"));
	assert_int_equal(parse(A "=MIG-0a1b2c3d-0000-4000-8000-00000000000b", why), -EINVAL);
	assert_int_equal(parse(A "=GPU-0a1b2c3d-0000-4000-8000-00000000000g", why), -EINVAL);
	assert_int_equal(parse(A "=GPU-0a1b2c3d-0000-4000-8000-0000000000g0", why), -EINVAL);
	assert_int_equal(parse(A "=" B "," A "=" C, why), -EINVAL);
	assert_string_equal(why, "device map: a GPU mapped twice: '" A "'");
	assert_int_equal(parse(A "=" C "," B "=" C, why), -EINVAL);
	assert_string_equal(why, "device map: a GPU the target twice: '" C "'");
	for (int i = 0; i <= RTID__MAP_MAX; i++) {
		char one[84];

		snprintf(one, sizeof(one), "%sGPU-00000000-0000-0000-0000-%012d=GPU-10000000-0000-0000-"
			 "0000-%012d", i ? "," : "", i, i);
		strcat(big, one);
	}
	assert_int_equal(parse(big, why), -EINVAL);
	assert_string_equal(why, "device map: more than 16 pairs");
	*strrchr(big, ',') = '\0'; /* 16: a node's worth */
	assert_int_equal(rtid__devmap_parse(big, &m, why, sizeof(why)), 0);
	assert_int_equal(m.n, RTID__MAP_MAX);
	assert_int_equal(rtid__devmap_format(&m, back, sizeof(back)), strlen(big));
}

/* "restore PID map MAP": the longest map fits a message and reads back
 * whole; a map on anything but restore, or a bad one, is malformed; a
 * client sends a map only on a connection greeted with protocol 3. */
static void test_map_wire(void **state)
{
	struct rtid__svc_req q = { .op = RTID__OP_RESTORE, .pid = 4194304 }, back;
	char buf[RTID__SVC_MSG_MAX], why[160], text[RTID__MAP_TEXT + 1] = "";
	struct rtid__svc_conn c;
	struct rtid__svc_ans a;
	size_t n;
	int sv[2];

	(void)state;
	for (int i = 0; i < RTID__MAP_MAX; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "%sGPU-ffffffff-ffff-ffff-ffff-%012d=GPU-eeeeeeee-eeee-eeee-eeee-%012d",
			 i ? "," : "", i, i);
	assert_int_equal(strlen(text), RTID__MAP_TEXT);
	assert_int_equal(rtid__devmap_parse(text, &q.map, why, sizeof(why)), 0);
	n = rtid__svc_req_format(&q, buf);
	assert_true(n > RTID__MAP_TEXT && n < RTID__SVC_MSG_MAX - 1);
	assert_int_equal(rtid__svc_req_parse(buf, n, &back), 0);
	assert_int_equal(back.op, RTID__OP_RESTORE);
	assert_int_equal(back.pid, 4194304);
	assert_memory_equal(&back.map, &q.map, sizeof(q.map));
	assert_int_equal(rtid__svc_req_parse("restore 5 map " A "=" B, strlen("restore 5 map " A
									     "=" B), &back), 0);
	assert_int_equal(back.map.n, 1);
	/* Plain requests carry none. */
	assert_int_equal(rtid__svc_req_parse("restore 5", 9, &back), 0);
	assert_int_equal(back.map.n, 0);
	{
		static const char *const bad[] = {
			"checkpoint 5 map " A "=" B, "restore 5 mop " A "=" B, "restore 5 map " A,
			"restore 5 map " A "=" A "," A "=" B, "restore 5 map", "lock 5 map " A "=" B,
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			assert_int_equal(rtid__svc_req_parse(bad[i], strlen(bad[i]), &back), -EINVAL);
	}
	/* A map on a checkpoint is never written, on a connection of protocol 2
	 * never sent. */
	q.op = RTID__OP_CHECKPOINT;
	n = rtid__svc_req_format(&q, buf);
	assert_string_equal(buf, "checkpoint 4194304");
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	c = (struct rtid__svc_conn){ .fd = sv[0], .version = RTID__SVC_VERSION_PLAIN };
	q.op = RTID__OP_RESTORE;
	assert_int_equal(rtid__svc_call(&c, &q, rtid__now() + 1, &a), -EINVAL);
	c.version = RTID__SVC_VERSION_MAP;
	q.op = RTID__OP_CHECKPOINT;
	assert_int_equal(rtid__svc_call(&c, &q, rtid__now() + 1, &a), -EINVAL);
	assert_int_equal(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), -1); /* nothing sent */
	close(sv[0]);
	close(sv[1]);
}

static int setup(void **state)
{
	(void)state;
	hd_prepare(&d, "@serve-device-map", map_pids);
	setenv("RTID_MOCK_GPUS", A "," B, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unsetenv("RTID_MOCK_GPUS");
	unsetenv("RTID_MOCK_PROC_GPUS");
	hd_cleanup(&d);
	return 0;
}

/* One request on a connection of protocol v; rtid__svc_call's result. */
static int ask(int v, int op, const char *map, struct rtid__svc_ans *a)
{
	struct rtid__svc_req q = { .op = op, .pid = 100 };
	struct rtid__svc_conn c;
	char why[160];
	int r;

	if (map)
		assert_int_equal(rtid__devmap_parse(map, &q.map, why, sizeof(why)), 0);
	assert_int_equal(rtid__svc_open_version(d.sock, &c, v), 0);
	r = rtid__svc_call(&c, &q, rtid__now() + 30, a);
	rtid__svc_close(&c);
	return r;
}

static void checkpointed(void)
{
	struct rtid__svc_ans a;

	assert_int_equal(ask(2, RTID__OP_LOCK, NULL, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DONE);
	assert_int_equal(ask(2, RTID__OP_CHECKPOINT, NULL, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DONE);
}

/* Served: the driver got the pairs (the mock logs them as it took them),
 * and the process's GPU is the mapped one after; no tool spawned. Every
 * fault of the driver's (a GPU the process was on left out, a target not on
 * the node) is its answer, and nothing moved. */
static void test_restore_served_with_map(void **state)
{
	struct rtid__svc_ans a;

	(void)state;
	hd_start(&d, ARGS("--actions"));
	checkpointed();
	/* The process was on A: a map without A is the driver's fault. */
	assert_int_equal(ask(3, RTID__OP_RESTORE, B "=" A, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_CUERR);
	assert_int_equal(a.value, 1);
	assert_int_equal(hd_log_count(&d, "\"note\":\"missing " A "\""), 1);
	assert_int_equal(ask(3, RTID__OP_RESTORE, A "=" C, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_CUERR);
	assert_int_equal(a.value, 101);
	assert_string_equal(a.name, "CUDA_ERROR_INVALID_DEVICE");
	assert_int_equal(hd_log_count(&d, "\"note\":\"not on the node " C "\""), 1);
	assert_int_equal(ask(3, RTID__OP_RESTORE, A "=" B, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DONE);
	assert_int_equal(hd_log_count(&d, "\"event\":\"restore-map\",\"pid\":100"), 3);
	assert_int_equal(hd_log_count(&d, "\"note\":\"" A "=" B "\""), 1);
	/* On B now: the next checkpoint and restore go by B. */
	assert_int_equal(ask(2, RTID__OP_UNLOCK, NULL, &a), 0);
	checkpointed();
	assert_int_equal(ask(3, RTID__OP_RESTORE, A "=" B, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_CUERR);
	assert_int_equal(hd_log_count(&d, "\"note\":\"missing " B "\""), 1);
	assert_int_equal(ask(3, RTID__OP_RESTORE, B "=" A, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DONE);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* Never served without its map: a driver whose API takes none (before
 * CUDA 13.0) gets no call, and the client hears why before anything
 * started; a client of protocol 2 that sends one is refused; a daemon that
 * does not know maps refuses the greeting (the client hears -EPROTO). */
static void test_map_never_dropped(void **state)
{
	struct rtid__svc_ans a;
	int fd;
	char buf[RTID__SVC_MSG_MAX];

	(void)state;
	hd_cleanup(&d);
	hd_prepare(&d, "@serve-device-map-old-driver", map_pids);
	hd_start(&d, ARGS("--actions"));
	checkpointed();
	assert_int_equal(ask(3, RTID__OP_RESTORE, A "=" B, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "no-device-map");
	assert_int_equal(hd_log_count(&d, "\"event\":\"restore\""), 0);
	/* Protocol 2 with a map, as a client that ignores the rule would send. */
	fd = hd_connect_raw(d.sock);
	assert_int_equal(send(fd, "hello 2", 7, 0), 7);
	assert_true(hd_recv(fd, buf, sizeof(buf), 5) > 0);
	snprintf(buf, sizeof(buf), "restore 100 map %s=%s", A, B);
	assert_true(send(fd, buf, strlen(buf), 0) > 0);
	assert_true(hd_recv(fd, buf, sizeof(buf), 5) > 0);
	assert_non_null(strstr(buf, "error restore 100 protocol-2"));
	close(fd);
	assert_int_equal(hd_log_count(&d, "\"event\":\"restore\""), 0);
	/* The shim gives the call to the real tool, map and all. */
	assert_int_equal(hd_shim(&d, NULL, ARGS("--action", "restore", "--pid", "100",
						"--device-map", A "=" B)).status, 0);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 1);
	assert_true(hd_log_count(&d, "\"--device-map\",\"" A "=" B "\"]") > 0);
	assert_int_equal(hd_log_count(&d, "\"event\":\"restore\""), 0);
	/* The plain restore is still served. */
	assert_int_equal(ask(2, RTID__OP_RESTORE, NULL, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DONE);
}

/* The shim as CRIU's plugin runs it with a map: the restore goes to the
 * daemon with its pairs; a map the reader refuses goes to the real tool
 * unchanged (its own error), with the reason in the shim's log. */
static void test_shim_sends_map(void **state)
{
	struct shim_run r;

	(void)state;
	hd_start(&d, ARGS("--actions"));
	checkpointed();
	r = hd_shim(&d, NULL, ARGS("--action", "restore", "--pid", "100", "--device-map", A "=" B));
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	assert_int_equal(hd_log_count(&d, "\"note\":\"" A "=" B "\""), 1);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
	r = hd_shim(&d, NULL, ARGS("--action", "restore", "--pid", "100", "--device-map", A "=" A
				   "," B "=" A));
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 1); /* the tool's to judge, unchanged */
	assert_true(hd_log_count(&d, "\"--device-map\",\"" A "=" A "," B "=" A "\"]") > 0);
	/* --device-map with anything but a restore: the tool's too. */
	r = hd_shim(&d, NULL, ARGS("--action", "unlock", "--pid", "100", "--device-map", A "=" B));
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_reader),
		cmocka_unit_test(test_map_wire),
		cmocka_unit_test_setup_teardown(test_restore_served_with_map, setup, teardown),
		cmocka_unit_test_setup_teardown(test_map_never_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shim_sends_map, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
