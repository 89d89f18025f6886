/* A mock of NVIDIA's cuda-checkpoint, driven by a case file ($RTID_CASE).
 * It takes the real tool's options, pays a scaled attach delay, answers as
 * the case says, and logs every call ($RTID_MOCK_LOG). A query for a pid the
 * case gives no answer for is an unexpected call: logged and failed loudly.
 * RTID_MOCK_FAIL_ACTION=NAME makes "--action NAME" fail (exit 1 and a
 * message on stderr, as the real tool reports a failed action);
 * RTID_MOCK_SLOW_OPS/_S make actions slow, as in the mock libcuda. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "casefile.h"
#include "mock-log.h"
#include "basic/parse.h"
#include "rtid.h"

#define WHO "cuda-checkpoint"

static const char help[] =
	"CUDA checkpoint and restore utility (rtid mock).\n"
	"Toggles the state of CUDA within a process between suspended and running.\n"
	"Usage: cuda-checkpoint [OPTIONS]\n"
	"  --get-state --pid PID\n"
	"  --get-restore-tid --pid PID\n"
	"  --toggle --pid PID\n"
	"  --action lock|checkpoint|restore|unlock --pid PID [--timeout MS]\n"
	"  --device-map MAP\n"
	"  --launch-job\n"
	"  -h, --help\n";

struct call {
	const char *op; /* "get-restore-tid", "get-state", "toggle", "action" */
	const char *action;
	int pid;
	bool help;
};

static int parse(int argc, char **argv, struct call *c)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			c->help = true;
		else if (!strcmp(a, "--get-state") || !strcmp(a, "--get-restore-tid") ||
			 !strcmp(a, "--toggle") || !strcmp(a, "--launch-job"))
			c->op = a + 2;
		else if (!strcmp(a, "--action") && i + 1 < argc)
			c->op = "action", c->action = argv[++i];
		else if (!strcmp(a, "--pid") && i + 1 < argc) {
			if (rtid__parse_pid(argv[++i], &c->pid) < 0)
				return -EINVAL;
		} else if ((!strcmp(a, "--timeout") || !strcmp(a, "--device-map")) && i + 1 < argc)
			i++;
		else
			return -EINVAL;
	}
	return c->help || (c->op && (c->pid > 0 || !strcmp(c->op, "launch-job"))) ? 0 : -EINVAL;
}

static void pause_for(double seconds)
{
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int answer(const struct cf_answer *a, int pid)
{
	if (a->noise)
		fputs(a->noise, stderr);
	switch (a->kind) {
	case CF_ANS_TID:
		printf("%d\n", a->value);
		return 0;
	case CF_ANS_NONE:
		fprintf(stderr, "Could not get restore thread ID for process ID %d: "
				"\"invalid argument\"\n", pid);
		return 1;
	case CF_ANS_NOTINIT:
		fprintf(stderr, "Error initializing CUDA: \"initialization error\"\n");
		return 3;
	case CF_ANS_EXIT:
		fprintf(stderr, "Could not get restore thread ID for process ID %d: "
				"\"error %d\"\n", pid, a->value);
		return a->value;
	case CF_ANS_HANG:
		fflush(NULL);
		for (;;)
			pause();
	case CF_ANS_CRASH:
		fflush(NULL);
		signal(a->value, SIG_DFL);
		raise(a->value);
		return 128 + a->value;
	case CF_ANS_STDOUT:
		fputs(a->text, stdout);
		return 0;
	}
	return 2;
}

static bool fail_action(const char *action, int pid)
{
	const char *fail = getenv("RTID_MOCK_FAIL_ACTION");

	if (!fail || strcmp(fail, action))
		return false;
	fprintf(stderr, "Could not %s process ID %d: \"operation not permitted\"\n", action, pid);
	return true;
}

static bool is_none(const struct cf_answer *a)
{
	return a && (a->kind == CF_ANS_NONE || a->kind == CF_ANS_NOTINIT);
}

static int restore_tid(const struct casefile *c, int pid, int argc, char **argv)
{
	const struct cf_answer *a = cf_answer_for(c, pid);
	int code, tid;

	if ((code = mock_by_name(&pid, &tid)) == 1) {
		printf("%d\n", tid);
		return 0;
	} else if (code == 0) {
		fprintf(stderr, "Could not get restore thread ID for process ID %d: "
				"\"invalid argument\"\n", pid);
		return 1;
	}

	if (!a) {
		mock_log(WHO, "unexpected", pid, argc, argv, "no answer for this pid in the case");
		fprintf(stderr, "cuda-checkpoint (mock): unexpected call for pid %d\n", pid);
		return 99;
	}
	code = answer(a, pid);
	fflush(NULL);
	return code;
}

int main(int argc, char **argv)
{
	const char *path = getenv("RTID_CASE");
	struct casefile *c = NULL;
	struct call call = { 0 };
	char err[512];
	int code = 0;

	if (parse(argc, argv, &call) < 0) {
		fprintf(stderr, "%s", help);
		return 1;
	}
	if (call.help) {
		fputs(help, stdout);
		return 0;
	}
	if (!path || cf_load(path, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "cuda-checkpoint (mock): %s\n", path ? err : "RTID_CASE is not set");
		return 2;
	}
	mock_log(WHO, "start", call.pid, argc, argv, NULL);
	/* The driver attach every spawn pays; a pid without CUDA state may cost less. */
	pause_for(cf_scaled(c->none_delay_s >= 0 && is_none(cf_answer_for(c, call.pid))
				    ? c->none_delay_s : c->attach_delay_s));
	if (!strcmp(call.op, "get-restore-tid"))
		code = restore_tid(c, call.pid, argc, argv);
	else if (!strcmp(call.op, "get-state"))
		puts("running");
	else if (!strcmp(call.op, "action") && fail_action(call.action, call.pid))
		code = 1;
	else if (!strcmp(call.op, "action"))
		mock_slow_op_on(call.action, call.pid);
	mock_log(WHO, "end", call.pid, argc, argv, NULL);
	cf_free(c);
	return code;
}
