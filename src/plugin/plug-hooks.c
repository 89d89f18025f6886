/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hooks, as CRIU's CUDA plugin behaves where CRIU relies on it, with
 * the GPU work side by side. CRIU runs each hook as a loop over the whole
 * tree: every PAUSE_DEVICES (while seizing), then every CHECKPOINT_DEVICES
 * once the tree is seized; at restore every RESUME_DEVICES_LATE once the
 * tree is restored and stopped. So the first CHECKPOINT_DEVICES starts the
 * checkpoint of every task locked here, the first RESUME_DEVICES_LATE the
 * restore and unlock of every task the record names, and each call waits
 * for its own. Locks stay one by one, with CRIU's --timeout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/basic.h"
#include "plugin/plugin.h"
#include "proto/worker-proto.h"

struct task {
	int pid, tid;
	enum plug_state initial; /* at PAUSE_DEVICES */
	bool resumed;            /* its restore thread runs; its mask in save */
	bool queued;             /* jobs[i] is its side-by-side work */
	bool alone;              /* restore: the record cannot speak for it; asked alone */
	const char *lost;        /* restore: why its GPU state cannot be restored */
	struct plug_sigset save;
};

static struct task tasks[PLUG_TASKS_MAX];
static struct plug_job jobs[PLUG_TASKS_MAX];
static size_t ntasks;
static bool disabled, inventoried, first_done, recorded, asked_below;

static struct task *find(int pid)
{
	for (size_t i = 0; i < ntasks; i++)
		if (tasks[i].pid == pid)
			return &tasks[i];
	return NULL;
}

/* The task a restore worked on alone (no record), for plug_cuda_task. */
static int alone_pid;

static bool paused_cuda(int pid)
{
	return find(pid) != NULL;
}

bool plug_cuda_task(int pid)
{
	const struct task *t = find(pid);

	return (t && t->tid > 0) || (pid == alone_pid && pid > 0);
}

static int lose(int pid, const char *why)
{
	plug_criu_kill(pid);
	return plug_lose(pid, why);
}

static int resume(struct task *t)
{
	if (!t->resumed && plug_thread_resume(t->tid, &t->save) == 0)
		t->resumed = true;
	return t->resumed ? 0 : -1;
}

static int interrupt(struct task *t)
{
	int r = t->resumed ? plug_thread_interrupt(t->tid, &t->save) : 0;

	t->resumed = false;
	return r;
}

/* Who is still waiting, said beside a failure: the driver may hold the
 * failed one behind a peer (an NCCL job). */
static void pending(const struct task *failed)
{
	char list[512] = "";
	size_t n = 0;

	for (const struct task *t = tasks; t < tasks + ntasks; t++)
		if (t->queued && t != failed && jobs[t - tasks].state != 3 && n < sizeof(list) - 16)
			n += (size_t)snprintf(list + n, sizeof(list) - n, " %d", t->pid);
	if (n)
		plug_log(PLUG_ERR, "still pending:%s\n", list);
}

/* Finish t's own work: its side-by-side job (what the daemon could not start
 * goes to the tool now), else every op here. Then stop its thread again. */
static int finish(struct task *t, const int *ops, int nops, bool tool_only)
{
	struct plug_job *j = t->queued ? &jobs[t - tasks] : NULL;
	char msg[200] = "";
	int k = 0, r = 0;

	if (j) {
		plug_run_wait(j);
		k = j->done;
		if (j->end == ANS_FAILED) {
			plug_log(PLUG_ERR, "pid %d: %s failed: %s\n", t->pid,
				 ops[k] == RTID__OP_UNLOCK ? "unlock" : ops[k] == RTID__OP_RESTORE
				 ? "restore" : "checkpoint", j->msg);
			pending(t);
			r = -1;
			k = nops;
		} else if (j->end == ANS_TO_TOOL && k < nops) {
			plug_log(PLUG_INFO, "pid %d: %s: asking cuda-checkpoint\n", t->pid, j->msg);
			tool_only = true;
		}
		t->queued = false;
	}
	for (; k < nops && r == 0; k++)
		if ((tool_only ? plug_act_tool(ops[k], t->pid, 0, msg, sizeof(msg))
			       : plug_act(ops[k], t->pid, 0, msg, sizeof(msg))) < 0) {
			plug_log(PLUG_ERR, "pid %d: action failed: %s\n", t->pid, msg);
			r = -1;
		}
	return interrupt(t) < 0 ? -1 : r;
}

/* Start ops for every task that is resumed and not started: side by side
 * through the daemon (a task left out works alone in its own call). */
static void start_all(int op0, int op1)
{
	size_t n = 0;
	int e;

	if (!plug_serve_present())
		return; /* the tool's runs stay one by one, each in its own call */
	/* Every job written: one not queued has state 0, and the runner passes
	 * over it (a job of an earlier stage never runs again). */
	for (size_t i = 0; i < ntasks; i++) {
		if (!tasks[i].resumed) {
			jobs[i] = (struct plug_job){ 0 };
			continue;
		}
		jobs[i] = (struct plug_job){ .pid = tasks[i].pid, .ops = { op0, op1 },
					     .nops = op1 < 0 ? 1 : 2, .state = 1 };
		tasks[i].queued = true;
		n++;
	}
	if (n && (e = plug_run_start(jobs, ntasks, plug_run_parallel())) < 0)
		plug_log(PLUG_WARN, "no threads (%s): the GPU work ran one task at a time\n",
			 strerror(-e));
}

int plug_init(enum plug_stage s)
{
	int e = plug_enabled(s);

	ntasks = 0;
	inventoried = first_done = recorded = asked_below = false;
	disabled = e <= 0;
	if (e > 0)
		plug_criu_interrupt_only();
	return e < 0 ? -1 : 0;
}

int plug_pause(int pid)
{
	char msg[200];
	struct task *t;
	int tid;
	enum plug_state st;

	if (disabled)
		return -ENOTSUP;
	if (find(pid))
		return 0; /* paused already: CRIU may ask again */
	/* The first call is the root's: its descendants asked now, at once. Only
	 * an answer of none for the same process spares a question; one that
	 * gains CUDA before the freeze fails CHECKPOINT_DEVICES, as ever. */
	if (!asked_below && plug_serve_present())
		plug_ahead_below(pid);
	asked_below = true;
	if ((tid = plug_ahead_tid(pid, true)) <= 0) {
		if (tid == 0)
			plug_log(PLUG_INFO, "no need to pause devices on pid %d\n", pid);
		return tid == 0 ? 0 : plug_untold("PAUSE_DEVICES", pid);
	}
	if ((st = plug_get_state(pid, tid)) == ST_UNKNOWN) {
		plug_log(PLUG_ERR, "no CUDA state for pid %d\n", pid);
		return -1;
	}
	if (!inventoried && plug_criu_inventory_add() != 0) {
		plug_log(PLUG_ERR, "cannot add " PLUG_NAME " to the inventory\n");
		return -1;
	}
	inventoried = true;
	if (ntasks == PLUG_TASKS_MAX) {
		plug_log(PLUG_ERR, "more than %d CUDA tasks\n", PLUG_TASKS_MAX);
		return -1;
	}
	if (st == ST_RUNNING) {
		plug_log(PLUG_INFO, "pausing devices on pid %d\n", pid);
		if (plug_act(RTID__OP_LOCK, pid, plug_criu_timeout_s() * 1000, msg, sizeof(msg)) < 0) {
			plug_log(PLUG_ERR, "PAUSE_DEVICES failed on pid %d: %s\n", pid, msg);
			if (plug_criu_alarm() && plug_act(RTID__OP_UNLOCK, pid, 0, msg, sizeof(msg)) < 0)
				plug_log(PLUG_ERR, "cannot unlock pid %d, which may hang: %s\n", pid, msg);
			return -1;
		}
	}
	t = &tasks[ntasks++];
	*t = (struct task){ .pid = pid, .tid = tid, .initial = st };
	return 0;
}

int plug_checkpoint(int pid)
{
	static const int ops[] = { RTID__OP_CHECKPOINT };
	struct task *t;

	if (disabled)
		return -ENOTSUP;
	if (!first_done) {
		static int pids[PLUG_TASKS_MAX];

		first_done = true;
		for (size_t i = 0; i < ntasks; i++)
			pids[i] = tasks[i].pid;
		plug_record_dump(pids, ntasks);
		for (size_t i = 0; i < ntasks && plug_serve_present(); i++)
			if (tasks[i].initial != ST_CHECKPOINTED)
				resume(&tasks[i]);
		start_all(RTID__OP_CHECKPOINT, -1);
		/* Frozen now: the tasks paused as without CUDA asked at once; nothing
		 * asked before the freeze spares one (they ran since), daemon or not. */
		plug_serve_present() ? plug_ahead_tree(paused_cuda) : plug_ahead_clear();
	}
	if (!(t = find(pid))) {
		int tid;

		/* "No CUDA" at the pause came before CRIU froze the task: it ran
		 * since, and may have made its first context. Asked again. */
		if ((tid = plug_ahead_tid(pid, false)) < 0)
			return plug_untold("CHECKPOINT_DEVICES", pid);
		if (tid > 0) {
			plug_log(PLUG_ERR, "pid %d has CUDA state now and had none when it was paused: "
				 "not locked, it cannot be checkpointed; the dump fails\n", pid);
			return -1;
		}
		plug_log(PLUG_INFO, "no need to checkpoint devices on pid %d\n", pid);
		return 0;
	}
	if (t->initial == ST_CHECKPOINTED) {
		plug_log(PLUG_INFO, "pid %d already in a checkpointed state\n", pid);
		return 0;
	}
	plug_log(PLUG_INFO, "Checkpointing CUDA devices on pid %d restore_tid %d\n", pid, t->tid);
	if (resume(t) < 0)
		return -1;
	return finish(t, ops, 1, false);
}

/* The first call of a restore: the tasks the record names, restored side by
 * side; each one's restore tid asked again. false without a record. */
static bool restore_all(void)
{
	static int ns[PLUG_TASKS_MAX], pids[PLUG_TASKS_MAX];
	static signed char named[PLUG_TASKS_MAX];
	size_t n, nn = 0, np = plug_criu_tasks(pids, PLUG_TASKS_MAX);
	double t0; /* the record's matching */
	char run[PLUG_RUN_MAX];
	int e = plug_record_read(plug_criu_image_dir(), ns, PLUG_TASKS_MAX, &n, run), tid;

	if (e < 0) {
		if (e != -ENOENT)
			plug_log(PLUG_WARN, PLUG_RECORD " unreadable: working task by task\n");
		return false;
	}
	/* Only this image's own record may spare a question. */
	if (!run[0] || strcmp(run, plug_criu_dump_run_id()) != 0) {
		plug_log(PLUG_WARN, PLUG_RECORD " is another dump's (run %s; this image's %s): "
			 "working task by task\n", run[0] ? run : "none",
			 plug_criu_dump_run_id()[0] ? plug_criu_dump_run_id() : "none");
		return false;
	}
	if (np > PLUG_TASKS_MAX) { /* a task left unread would be spared unasked */
		plug_log(PLUG_WARN, "%zu tasks, more than %d: working task by task\n", np,
			 PLUG_TASKS_MAX);
		return false;
	}
	/* At most one entry per task: np fit. The named asked at once (the tree
	 * is stopped), the matching's time charged to the tasks without CUDA. */
	t0 = rtid__now();
	plug_record_match(pids, np, ns, n, named);
	plug_tree_charge(rtid__now() - t0);
	for (size_t i = 0; i < np; i++)
		if (named[i] > 0)
			pids[nn++] = pids[i];
		else if (named[i] < 0)
			tasks[ntasks++] = (struct task){ .pid = pids[i], .alone = true };
	if (plug_serve_present())
		plug_ahead_ask(pids, nn, true);
	for (size_t i = 0; i < nn; i++) {
		if ((tid = plug_ahead_tid(pids[i], false)) <= 0) {
			/* Its own call says so, and kills it (lose). */
			tasks[ntasks++] = (struct task){ .pid = pids[i], .tid = -1, .lost = tid == 0
				? "it had CUDA state at the dump and has no restore thread now"
				: "no word of its restore thread" };
			continue;
		}
		tasks[ntasks] = (struct task){ .pid = pids[i], .tid = tid, .initial = ST_RUNNING };
		if (plug_serve_present())
			resume(&tasks[ntasks]); /* a failure is its own call's to report */
		ntasks++;
	}
	start_all(RTID__OP_RESTORE, RTID__OP_UNLOCK);
	return true;
}

int plug_resume_late(int pid)
{
	static const int ops[] = { RTID__OP_RESTORE, RTID__OP_UNLOCK };
	struct task *t, one;
	int tid;

	if (disabled)
		return -ENOTSUP;
	if (!first_done) {
		first_done = true;
		recorded = restore_all();
	}
	if (!(t = find(pid)) && recorded)
		return 0; /* this image's record: no CUDA task at its dump */
	if (!t || t->alone) {
		/* An image without our record, or a task it cannot speak for: this
		 * task alone, as CRIU's plugin. */
		if ((tid = plug_restore_tid(pid)) <= 0) {
			if (tid == 0)
				plug_log(PLUG_INFO, "no need to resume devices on pid %d\n", pid);
			return tid == 0 ? 0 : lose(pid, "no word of its restore thread");
		}
		one = (struct task){ .pid = pid, .tid = tid, .initial = ST_RUNNING };
		t = &one;
		alone_pid = pid;
	}
	if (t->lost)
		return lose(pid, t->lost);
	plug_log(PLUG_INFO, "resuming devices on pid %d\n", pid);
	plug_log(PLUG_DEBUG, "Restore thread pid %d found for real pid %d\n", t->tid, pid);
	if (resume(t) < 0)
		return lose(pid, "its restore thread cannot run");
	return finish(t, ops, 2, false) < 0 ? lose(pid, "restore or unlock failed: said above") : 0;
}

/* A dump that failed, or -R: every task back as it was at PAUSE_DEVICES,
 * by the state the driver reports now (a checkpoint may have run or not).
 * Each task that cannot be set back is said, with why (the same rules as
 * any call: never the tool beside a call still in the driver). */
static void roll_back(struct task *t)
{
	char msg[200];
	enum plug_state now;

	if (resume(t) < 0) {
		plug_log(PLUG_ERR, "pid %d: not set back: its restore thread %d cannot run\n",
			 t->pid, t->tid);
		return;
	}
	now = plug_get_state(t->pid, t->tid);
	if (now == ST_UNKNOWN)
		plug_log(PLUG_ERR, "pid %d: not set back: its state is unknown\n", t->pid);
	else if (now == ST_CHECKPOINTED && t->initial != ST_CHECKPOINTED &&
	    plug_act(RTID__OP_RESTORE, t->pid, 0, msg, sizeof(msg)) < 0)
		plug_log(PLUG_ERR, "pid %d: not set back: restore failed: %s\n", t->pid, msg);
	else if (now != ST_RUNNING && t->initial == ST_RUNNING &&
		 plug_act(RTID__OP_UNLOCK, t->pid, 0, msg, sizeof(msg)) < 0)
		plug_log(PLUG_ERR, "pid %d: not set back: unlock failed, it may hang: %s\n", t->pid,
			 msg);
	interrupt(t);
}

void plug_fini(enum plug_stage s, int ret)
{
	if (disabled)
		return;
	plug_log(PLUG_INFO, "finished stage %d err %d\n", s, ret);
	/* Work started whose call never came ends here, and its thread stops. */
	plug_run_settle();
	for (size_t i = 0; i < ntasks; i++)
		if (tasks[i].queued) {
			tasks[i].queued = false;
			if (jobs[i].end != ANS_VALUE)
				plug_log(PLUG_ERR, "pid %d: %s\n", tasks[i].pid, jobs[i].msg);
			if (s == PLUG_DUMP)
				interrupt(&tasks[i]);
		}
	if (s == PLUG_DUMP && (ret != 0 || plug_criu_leave_running()))
		for (size_t i = 0; i < ntasks; i++)
			roll_back(&tasks[i]);
	ntasks = 0;
	plug_ahead_clear();
	plug_serve_close();
}
