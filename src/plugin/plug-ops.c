/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One call of CRIU's plugin, on CRIU's thread: rtid serve first, and the
 * real tool, with the arguments CRIU's plugin gives it, where the daemon is
 * absent or nothing reached the driver through it. With rtid's rules: a tid
 * is a live thread of its process, whoever answered. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "plugin/plugin.h"
#include "proto/serve-proto.h"
#include "rules/rules.h"

#define OUT 128 /* CRIU's plugin's buffer for the tool's output */

/* The real tool, run exactly as CRIU's CUDA plugin runs it: cuda-checkpoint
 * from PATH (which may be rtid's shim: it then asks the daemon itself, or
 * runs the tool behind it), stdout and stderr into one pipe, every other fd
 * closed, the output read up to the buffer and the rest drained, no timeout
 * of its own. Only on CRIU's thread, inside a hook. */
#define TOOL "cuda-checkpoint"

static void child(int fd[2], const char *const *args)
{
	const char *argv[16] = { TOOL };
	size_t n = 1;

	for (; args[n - 1] && n < 15; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	if (dup2(fd[1], STDOUT_FILENO) == STDOUT_FILENO &&
	    dup2(fd[1], STDERR_FILENO) == STDERR_FILENO) {
		close_range(STDERR_FILENO + 1, ~0U, 0);
		execvp(TOOL, (char **)argv);
		fprintf(stderr, "execvp(\"%s\") failed: %s\n", TOOL, strerror(errno));
	}
	/* Never 1 nor 3, the tool's "no CUDA here": 127, as a shell says it (a
	 * failure to run it is no answer about the process). */
	_exit(127);
}

int plug_tool_run(const char *const *args, char *buf, size_t len)
{
	char scratch[1024];
	size_t got = 0;
	ssize_t r;
	int fd[2], st;
	pid_t pid;

	buf[0] = '\0';
	if (pipe2(fd, O_CLOEXEC) < 0) {
		plug_log(PLUG_ERR, "no pipe for " TOOL ": %m\n");
		return -1;
	}
	if ((pid = fork()) == 0)
		child(fd, args);
	close(fd[1]);
	if (pid < 0) {
		plug_log(PLUG_ERR, "cannot fork for " TOOL ": %m\n");
		close(fd[0]);
		return -1;
	}
	while (got + 1 < len && ((r = read(fd[0], buf + got, len - 1 - got)) > 0 ||
				 (r < 0 && errno == EINTR)))
		got += r > 0 ? (size_t)r : 0;
	buf[got] = '\0';
	while ((r = read(fd[0], scratch, sizeof(scratch))) > 0 || (r < 0 && errno == EINTR))
		;
	close(fd[0]);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			plug_log(PLUG_ERR, "cannot wait for " TOOL " (pid %d): %m\n", (int)pid);
			return -1;
		}
	}
	if (WIFSIGNALED(st)) {
		plug_log(PLUG_ERR, TOOL " killed by signal %d\n", WTERMSIG(st));
		return -1;
	}
	if (WEXITSTATUS(st))
		plug_log(PLUG_DEBUG, TOOL " exit %d: %s\n", WEXITSTATUS(st), buf);
	return WEXITSTATUS(st);
}

bool plug_tool_usable(void)
{
	const char *args[] = { "-h", NULL };
	char out[2048];

	return plug_tool_run(args, out, sizeof(out)) == 0 && strstr(out, "--action");
}

bool plug_thread_of(int pid, int tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
	return access(path, F_OK) == 0;
}

/* The tool's answer to a query, strictly: a number and nothing else; the
 * driver's "no CUDA here" only by its exits 1 and 3 (the rule of every
 * entry point, rtid__driver_said), any other failure an error: > 0, 0 for
 * none, -1 (said). */
static int tool_tid(int pid)
{
	char arg[16], out[OUT];
	const char *args[] = { "--get-restore-tid", "--pid", arg, NULL };
	int tid, rc;

	snprintf(arg, sizeof(arg), "%d", pid);
	if ((rc = plug_tool_run(args, out, sizeof(out))) != 0) {
		if (rc > 0 && rtid__driver_said(rc) == RTID__SAID_NONE)
			return 0;
		if (rc < 0)
			plug_log(PLUG_ERR, "pid %d: cuda-checkpoint did not run or was killed: no "
				 "word whether it has CUDA state\n", pid);
		else
			plug_log(PLUG_ERR, "pid %d: cuda-checkpoint exit %d, no word whether it has "
				 "CUDA state: %s\n", pid, rc, out);
		return -1;
	}
	if (rtid__parse_tid(out, strlen(out), &tid) < 0) {
		plug_log(PLUG_ERR, "pid %d: cuda-checkpoint printed no tid: %s\n", pid, out);
		return -1;
	}
	return tid;
}

int plug_restore_tid(int pid)
{
	char msg[200];
	int tid = 0;

	switch (plug_serve_ask(RTID__OP_RESTORE_TID, pid, 0, &tid, msg, sizeof(msg))) {
	case ANS_VALUE:
		break;
	case ANS_NONE:
		return 0;
	case ANS_FAILED: /* the daemon's call may still be in the driver: no tool beside it */
		plug_log(PLUG_ERR, "pid %d: no restore tid: %s\n", pid, msg);
		return -1;
	case ANS_TO_TOOL:
	case ANS_ALONE: /* a batch's only */
		if (plug_serve_present())
			plug_log(PLUG_INFO, "%s: asking cuda-checkpoint\n", msg);
		tid = tool_tid(pid);
		break;
	}
	if (tid > 0 && !plug_thread_of(pid, tid)) {
		plug_log(PLUG_ERR, "pid %d: restore tid %d is no thread of it\n", pid, tid);
		return -1;
	}
	return tid;
}

static enum plug_state state_of(const char *s)
{
	static const char *const names[] = { "running", "locked", "checkpointed" };

	for (int i = 0; i < 3; i++)
		if (!strncmp(s, names[i], strlen(names[i])))
			return (enum plug_state)i;
	return ST_UNKNOWN;
}

enum plug_state plug_get_state(int pid, int tid)
{
	char msg[200], arg[16], out[OUT];
	const char *args[] = { "--get-state", "--pid", arg, NULL };
	int st;

	switch (plug_serve_ask(RTID__OP_GET_STATE, tid, 0, &st, msg, sizeof(msg))) {
	case ANS_VALUE:
		return st >= ST_RUNNING && st <= ST_CHECKPOINTED ? (enum plug_state)st : ST_UNKNOWN;
	case ANS_FAILED:
		plug_log(PLUG_ERR, "pid %d: no state for thread %d: %s\n", pid, tid, msg);
		return ST_UNKNOWN;
	default:
		break;
	}
	if (plug_serve_present())
		plug_log(PLUG_INFO, "%s: asking cuda-checkpoint\n", msg);
	snprintf(arg, sizeof(arg), "%d", tid);
	if (plug_tool_run(args, out, sizeof(out)) != 0) {
		plug_log(PLUG_ERR, "pid %d: no state for thread %d: %s\n", pid, tid, out);
		return ST_UNKNOWN;
	}
	return state_of(out);
}

int plug_act_tool(int op, int pid, unsigned timeout_ms, char *msg, size_t len)
{
	char arg[16], ms[16], out[OUT], map[RTID__MAP_TEXT + 1];
	const char *args[] = { "--action", rtid__svc_op_name(op), "--pid", arg, NULL, NULL, NULL };
	int rc;

	snprintf(arg, sizeof(arg), "%d", pid);
	if (timeout_ms) {
		snprintf(ms, sizeof(ms), "%u", timeout_ms);
		args[4] = "--timeout";
		args[5] = ms;
	} else if (op == RTID__OP_RESTORE && plug_serve_map_text(map, sizeof(map))) {
		args[4] = "--device-map";
		args[5] = map;
	}
	if ((rc = plug_tool_run(args, out, sizeof(out))) == 0)
		return 0;
	snprintf(msg, len, "cuda-checkpoint exit %d: %s", rc, out);
	return -1;
}

void plug_conf_note(void *ctx, const char *what)
{
	(void)ctx;
	plug_log(PLUG_WARN, "%s\n", what);
}

int plug_act(int op, int pid, unsigned timeout_ms, char *msg, size_t len)
{
	int v;

	switch (plug_serve_ask(op, pid, timeout_ms, &v, msg, len)) {
	case ANS_VALUE:
		return 0;
	case ANS_TO_TOOL:
		if (plug_serve_present())
			plug_log(PLUG_INFO, "%s: asking cuda-checkpoint\n", msg);
		return plug_act_tool(op, pid, timeout_ms, msg, len);
	default:
		return -1;
	}
}

/* --- a process whose GPU state cannot be had: at a dump the dump fails
 * (CRIU's own plugin dumps it without its GPU state and says nothing), unless
 * the operator asked for the old way; at a restore the task is killed with
 * the reason, as CRIU 4.2 takes no error of the restore hook --- */

/* RTID_PLUGIN_NO_CUDA_ON_ERROR=1: a process whose CUDA state cannot be told
 * at the dump is dumped without it, as CRIU's own plugin does; off by
 * default, when the dump fails instead. */
static bool lenient(void)
{
	const char *v = getenv("RTID_PLUGIN_NO_CUDA_ON_ERROR");

	return v && !strcmp(v, "1");
}

/* A task whose CUDA state cannot be had at the dump: the dump fails, unless
 * the setting says otherwise. 0 or -1. */
int plug_untold(const char *hook, int pid)
{
	if (lenient()) {
		plug_log(PLUG_WARN, "pid %d: no word whether it has CUDA state: dumped without it "
			 "(RTID_PLUGIN_NO_CUDA_ON_ERROR=1)\n", pid);
		return 0;
	}
	plug_log(PLUG_ERR, "%s failed on pid %d: no word whether it has CUDA state (said above); "
		 "the dump fails rather than leave its GPU state out\n", hook, pid);
	return -1;
}

/* A restored task whose GPU state is not restored: CRIU 4.2 takes no error
 * of RESUME_DEVICES_LATE (it logs it at debug level and the restore exits
 * 0), so the hook kills the task, never left running as if whole. -1. */
int plug_lose(int pid, const char *why)
{
	plug_log(PLUG_ERR, "pid %d: its GPU state was not restored (%s): killed, so that it is not "
		 "left running as if restored\n", pid, why);
	return -1;
}
