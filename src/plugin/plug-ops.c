/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One call of CRIU's plugin, on CRIU's thread: rtid serve first, and the
 * real tool, with the arguments CRIU's plugin gives it, where the daemon is
 * absent or nothing reached the driver through it. With rtid's rules: a tid
 * is a live thread of its process, whoever answered. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "basic/parse.h"
#include "plugin/plugin.h"
#include "proto/serve-proto.h"

#define OUT 128 /* CRIU's plugin's buffer for the tool's output */

/* A thread of pid, alive now. */
static bool thread_of(int pid, int tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
	return access(path, F_OK) == 0;
}

/* The tool's answer to a query, as CRIU's plugin reads it (but strictly: a
 * number and nothing else): > 0, 0 for a non-zero exit (no CUDA), -1. */
static int tool_tid(int pid)
{
	char arg[16], out[OUT];
	const char *args[] = { "--get-restore-tid", "--pid", arg, NULL };
	int tid, rc;

	snprintf(arg, sizeof(arg), "%d", pid);
	if ((rc = plug_tool_run(args, out, sizeof(out))) != 0)
		return rc < 0 ? -1 : 0;
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
		if (plug_serve_present())
			plug_log(PLUG_INFO, "%s: asking cuda-checkpoint\n", msg);
		tid = tool_tid(pid);
		break;
	}
	if (tid > 0 && !thread_of(pid, tid)) {
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
	char arg[16], ms[16], out[OUT];
	const char *args[] = { "--action", rtid__svc_op_name(op), "--pid", arg, NULL, NULL, NULL };
	int rc;

	snprintf(arg, sizeof(arg), "%d", pid);
	if (timeout_ms) {
		snprintf(ms, sizeof(ms), "%u", timeout_ms);
		args[4] = "--timeout";
		args[5] = ms;
	}
	if ((rc = plug_tool_run(args, out, sizeof(out))) == 0)
		return 0;
	snprintf(msg, len, "cuda-checkpoint exit %d: %s", rc, out);
	return -1;
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
