/* rtid's CUDA plugin's hooks, as CRIU calls them, with CRIU's side stubbed
 * (plug-criu.c's answers set by each test) and the tool a script on PATH:
 * what each hook returns and says in CRIU's log when CRIU refuses, the
 * driver has no state, an action or the record fails, and a failed dump is
 * rolled back. Needs root: a GPU under /proc/driver, in a mount namespace of
 * its own (as tests/criu/criu-plugin.c), else exit 77. No daemon here. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "plugin/plugin.h"
#include "proto/devmap.h"
#include "proto/serve-proto.h"
#include "plug-log.h"
#include "serve-harness.h"

static char dir[90], calls[200];

/* CRIU's side, as each test sets it. */
static const char *check_why;
static bool take, alarm_went, leave_running;
static int inventory_r, image_dir = -1, resume_r, interrupt_r, resumes, interrupts;
static int resume_fails; /* the next this many resumes fail */
static int criu_pids[4];
static size_t criu_n;

int plug_criu_check(char *why, size_t len)
{
	if (!check_why)
		return 0;
	snprintf(why, len, "%s", check_why);
	return -EPROTO;
}
unsigned plug_criu_timeout_s(void) { return 10; }
bool plug_criu_leave_running(void) { return leave_running; }
bool plug_criu_alarm(void) { return alarm_went; }
int plug_criu_inventory_add(void) { return inventory_r; }
bool plug_criu_inventory_take(void) { return take; }
void plug_criu_interrupt_only(void) {}
/* Tasks the plugin killed (a restore that only looked whole): recorded,
 * never killed here, as the task is the test itself. */
static int killed[8], nkilled;
void plug_criu_kill(int pid)
{
	if (nkilled < 8)
		killed[nkilled++] = pid;
}
int plug_criu_image_dir(void) { return image_dir; }
/* This run's id at a dump, the image's at a restore. */
#define RUN "5e1b0c3a-0d2f-4c55-9a43-7f0d6a2b9e11"
static const char *dump_run = RUN;
const char *plug_criu_run_id(void) { return RUN; }
const char *plug_criu_dump_run_id(void) { return dump_run; }
size_t plug_criu_tasks(int *pids, size_t max)
{
	size_t n = criu_n < max ? criu_n : max;

	/* As CRIU's tree: the count of them all, the first max given (a tree
	 * past the four here gives the first four). */
	memcpy(pids, criu_pids, (n < 4 ? n : 4) * sizeof(int));
	return criu_n;
}
int plug_thread_resume(int tid, struct plug_sigset *save)
{
	(void)tid;
	(void)save;
	resumes++;
	if (resume_fails > 0) {
		resume_fails--;
		return -1;
	}
	return resume_r;
}
int plug_thread_interrupt(int tid, const struct plug_sigset *save)
{
	(void)tid;
	(void)save;
	interrupts++;
	return interrupt_r;
}

/* The tool: T_PID's restore tid is T_TID (every restore-tid query exits
 * T_TID_EXIT when set), its state T_STATE (none: exit 1), the actions in
 * T_FAIL fail; every call logged. */
static const char script[] =
	"#!/bin/sh\n"
	"echo \"$*\" >> \"$T_LOG\"\n"
	"case \"$1\" in\n"
	"-h) echo \"${T_HELP:-usage: --action}\" ;;\n"
	"--get-restore-tid) [ -n \"$T_TID_EXIT\" ] && exit \"$T_TID_EXIT\"\n"
	"  [ \"$3\" = \"$T_PID\" ] && echo \"$T_TID\" || exit 1 ;;\n"
	"--get-state) [ -n \"$T_STATE\" ] || exit 1; echo \"$T_STATE\" ;;\n"
	"--action) case \" $T_FAIL \" in *\" $2 \"*) echo \"cannot $2\"; exit 3 ;; esac ;;\n"
	"esac\n";

static int me, thread_tid, hold[2], park[2], dir_fd;

static void *thread(void *arg)
{
	char c;

	(void)arg;
	thread_tid = gettid();
	(void)!write(hold[1], "t", 1);
	(void)!read(park[0], &c, 1); /* until the process exits */
	return NULL;
}

static int setup(void **state)
{
	char v[32];

	(void)state;
	check_why = NULL;
	take = alarm_went = leave_running = false;
	inventory_r = resume_r = interrupt_r = resumes = interrupts = nkilled = resume_fails = 0;
	image_dir = dir_fd;
	dump_run = RUN;
	criu_pids[0] = 1, criu_pids[1] = me, criu_n = 2; /* a failed test leaves no tree behind */
	logged[0] = '\0';
	unlink(calls);
	snprintf(v, sizeof(v), "%d", me);
	setenv("T_PID", v, 1);
	snprintf(v, sizeof(v), "%d", thread_tid);
	setenv("T_TID", v, 1);
	setenv("T_STATE", "running", 1);
	unsetenv("T_FAIL");
	unsetenv("T_HELP");
	unsetenv("T_TID_EXIT");
	unsetenv("RTID_PLUGIN_NO_CUDA_ON_ERROR");
	return 0;
}

static int count_calls(const char *line)
{
	char buf[256];
	int n = 0;
	FILE *f = fopen(calls, "r");

	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		n += strstr(buf, line) != NULL;
	fclose(f);
	return n;
}

static void test_init_refused(void **state)
{
	(void)state;
	check_why = "CRIU 4.0 is not 4.1";
	assert_int_equal(plug_init(PLUG_DUMP), -1);
	assert_non_null(strstr(logged, "refusing to run: CRIU 4.0 is not 4.1; load CRIU's own "
				       "cuda_plugin"));
}

/* A pre-dump, a restore of a dump without it, no usable tool: out of the
 * way, every hook -ENOTSUP (CRIU's "not mine"), nothing run. */
static void test_disabled(void **state)
{
	(void)state;
	assert_int_equal(plug_init(PLUG_PRE_DUMP), 0);
	assert_int_equal(plug_pause(me), -ENOTSUP);
	assert_int_equal(plug_checkpoint(me), -ENOTSUP);
	plug_fini(PLUG_PRE_DUMP, 0);
	assert_int_equal(plug_init(PLUG_RESTORE), 0); /* take: false */
	assert_int_equal(plug_resume_late(me), -ENOTSUP);
	assert_int_equal(count_calls(""), 0);
	setenv("T_HELP", "usage: --toggle", 1);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_non_null(strstr(logged, "neither rtid serve nor a cuda-checkpoint that knows --action"));
	assert_int_equal(plug_pause(me), -ENOTSUP);
}

static void test_dump(void **state)
{
	char p[200], text[256];
	FILE *f;

	(void)state;
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_non_null(strstr(logged, "initialized: stage 0"));
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(plug_pause(me), 0); /* asked again: paused already */
	assert_int_equal(count_calls("--action lock"), 1);
	assert_int_equal(count_calls("--timeout 10000"), 1); /* CRIU's --timeout */
	snprintf(p, sizeof(p), "--get-state --pid %d\n", thread_tid); /* of its restore thread */
	assert_int_equal(count_calls(p), 1);
	assert_int_equal(plug_pause(1), 0); /* no CUDA */
	assert_non_null(strstr(logged, "no need to pause devices on pid 1"));
	assert_int_equal(plug_checkpoint(me), 0);
	snprintf(p, sizeof(p), "--action checkpoint --pid %d\n", me); /* as CRIU's plugin: no --timeout */
	assert_int_equal(count_calls(p), 1);
	assert_int_equal(plug_checkpoint(1), 0);
	assert_non_null(strstr(logged, "no need to checkpoint devices on pid 1"));
	plug_fini(PLUG_DUMP, 0);
	assert_int_equal(count_calls("--action unlock"), 0); /* nothing rolled back */
	/* The record names us by our pid in our namespace. */
	snprintf(p, sizeof(p), "%s/" PLUG_RECORD, dir);
	assert_non_null(f = fopen(p, "r"));
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	snprintf(p, sizeof(p), "\ntask %d\n", plug_nspid(me));
	assert_non_null(strstr(text, p));
	/* And it is this run's. */
	assert_non_null(strstr(text, "\nrun " RUN "\n"));
}

/* The tool cannot tell whether a process has CUDA state (an exit other than
 * its "none", 1 and 3): the dump fails, each hook saying so, never dumping
 * the process without its GPU state; unless the operator asked for that. */
static void test_no_word_fails_the_dump(void **state)
{
	char said[160];

	(void)state;
	setenv("T_TID_EXIT", "2", 1);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), -1);
	snprintf(said, sizeof(said), "pid %d: cuda-checkpoint exit 2, no word whether it has CUDA "
		 "state", me);
	assert_non_null(strstr(logged, said));
	snprintf(said, sizeof(said), "PAUSE_DEVICES failed on pid %d: no word whether it has CUDA "
		 "state", me);
	assert_non_null(strstr(logged, said));
	/* 1 and 3 are the driver's "none": no CUDA, nothing failed. */
	setenv("T_TID_EXIT", "3", 1);
	assert_int_equal(plug_pause(me), 0);
	plug_fini(PLUG_DUMP, -1);
	/* The old way, asked for: dumped without GPU state, with a warning. */
	setup(NULL);
	setenv("T_TID_EXIT", "2", 1);
	setenv("RTID_PLUGIN_NO_CUDA_ON_ERROR", "1", 1);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_non_null(strstr(logged, "dumped without it (RTID_PLUGIN_NO_CUDA_ON_ERROR=1)"));
	plug_fini(PLUG_DUMP, 0);
	/* "None" at the pause, and the task gained CUDA state before CRIU froze
	 * it: asked again at the checkpoint, and the dump fails, said. */
	setup(NULL);
	setenv("T_TID_EXIT", "1", 1);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	unsetenv("T_TID_EXIT");
	assert_int_equal(plug_checkpoint(me), -1);
	snprintf(said, sizeof(said), "pid %d has CUDA state now and had none when it was paused", me);
	assert_non_null(strstr(logged, said));
	assert_int_equal(count_calls("--action checkpoint"), 0);
	plug_fini(PLUG_DUMP, -1);
	/* ... or no word of it there: failed too. */
	setup(NULL);
	setenv("T_TID_EXIT", "1", 1);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	setenv("T_TID_EXIT", "9", 1);
	assert_int_equal(plug_checkpoint(me), -1);
	snprintf(said, sizeof(said), "CHECKPOINT_DEVICES failed on pid %d: no word", me);
	assert_non_null(strstr(logged, said));
	plug_fini(PLUG_DUMP, -1);
}

static void test_pause_failures(void **state)
{
	(void)state;
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	setenv("T_TID", "1", 1); /* no thread of ours */
	assert_int_equal(plug_pause(me), -1);
	setup(NULL);
	unsetenv("T_STATE");
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), -1);
	assert_non_null(strstr(logged, "no CUDA state for pid"));
	setup(NULL);
	inventory_r = -1;
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), -1);
	assert_non_null(strstr(logged, "cannot add cuda_plugin to the inventory"));
	assert_int_equal(count_calls("--action"), 0);
	setup(NULL);
	setenv("T_FAIL", "lock", 1);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), -1);
	assert_non_null(strstr(logged, "PAUSE_DEVICES failed on pid"));
	assert_non_null(strstr(logged, "cannot lock"));
	assert_int_equal(count_calls("--action unlock"), 0);
	/* CRIU's alarm went off: the lock may land late, so it is undone. */
	setup(NULL);
	setenv("T_FAIL", "lock unlock", 1);
	alarm_went = true;
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), -1);
	assert_int_equal(count_calls("--action unlock"), 1);
	assert_non_null(strstr(logged, "which may hang: cuda-checkpoint exit 3: cannot unlock"));
	/* The alarm, and the unlock that undoes the lock works: nothing hangs. */
	setup(NULL);
	setenv("T_FAIL", "lock", 1);
	alarm_went = true;
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), -1);
	assert_int_equal(count_calls("--action unlock"), 1);
	assert_null(strstr(logged, "which may hang"));
}

static void test_checkpoint_failures(void **state)
{
	(void)state;
	/* Checkpointed already at the pause: nothing to do, and no record. */
	setenv("T_STATE", "checkpointed", 1);
	image_dir = -1;
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(plug_checkpoint(me), 0);
	assert_non_null(strstr(logged, "already in a checkpointed state"));
	assert_non_null(strstr(logged, "cannot write rtid-cuda.txt: Bad file descriptor"));
	plug_fini(PLUG_DUMP, 0);
	/* Its thread cannot run. */
	setup(NULL);
	resume_r = -1;
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(plug_checkpoint(me), -1);
	assert_int_equal(count_calls("--action checkpoint"), 0);
	/* The dump failed: the roll-back cannot run it either; it stays as it is. */
	plug_fini(PLUG_DUMP, -1);
	assert_int_equal(count_calls("--action unlock"), 0);
	/* The driver refused. */
	setup(NULL);
	setenv("T_FAIL", "checkpoint", 1);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(plug_checkpoint(me), -1);
	assert_non_null(strstr(logged, "action failed: cuda-checkpoint exit 3: cannot checkpoint"));
	assert_int_equal(interrupts, 1); /* its thread stopped again */
	/* Rolled back by the state now: locked, so unlocked. */
	setenv("T_STATE", "locked", 1);
	plug_fini(PLUG_DUMP, -1);
	assert_int_equal(count_calls("--action unlock"), 1);
	/* Checkpointed, but its thread cannot be stopped again: the call fails
	 * (CRIU must not go on with a thread running), the checkpoint ran once. */
	setup(NULL);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	interrupt_r = -1;
	assert_int_equal(plug_checkpoint(me), -1);
	assert_int_equal(count_calls("--action checkpoint"), 1);
	interrupt_r = 0;
	plug_fini(PLUG_DUMP, 0);
}

/* A task gone before the dump's first checkpoint has no NSpid: no record is
 * written (a restore then works task by task), and that is said. */
static void test_record_of_a_task_gone(void **state)
{
	char v[32], p[200];
	pid_t child;
	int st;

	(void)state;
	if ((child = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	snprintf(v, sizeof(v), "%d", child);
	setenv("T_PID", v, 1);
	setenv("T_TID", v, 1); /* its main thread */
	/* An earlier dump's record in the directory: it must not stay. */
	snprintf(p, sizeof(p), "%s/" PLUG_RECORD, dir);
	{
		FILE *f = fopen(p, "w");

		assert_non_null(f);
		fputs("rtid-cuda-plugin 1\nrun " RUN "\ndriver -\ntask 1\n", f);
		fclose(f);
	}
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(child), 0);
	assert_int_equal(count_calls("--action lock"), 1);
	assert_int_equal(kill(child, SIGKILL), 0);
	assert_int_equal(waitpid(child, &st, 0), child);
	plug_checkpoint(child);
	snprintf(v, sizeof(v), "no NSpid for pid %d: no record", child);
	assert_non_null(strstr(logged, v));
	assert_int_equal(access(p, F_OK), -1);
	plug_fini(PLUG_DUMP, -1);
}

/* A failed dump, or -R: back as at the pause, whatever the driver did; what
 * cannot be set back is said, each process with why. */
static void test_roll_back(void **state)
{
	char said[160];

	(void)state;
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(plug_checkpoint(me), 0);
	setenv("T_STATE", "checkpointed", 1);
	setenv("T_FAIL", "restore", 1);
	plug_fini(PLUG_DUMP, -1);
	assert_non_null(strstr(logged, "not set back: restore failed: cuda-checkpoint exit 3: "
				       "cannot restore"));
	setup(NULL);
	leave_running = true; /* -R: the dump succeeded, the tree lives on */
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(plug_checkpoint(me), 0);
	setenv("T_STATE", "locked", 1);
	setenv("T_FAIL", "unlock", 1);
	plug_fini(PLUG_DUMP, 0);
	assert_non_null(strstr(logged, "not set back: unlock failed, it may hang: "
				       "cuda-checkpoint exit 3"));
	/* Its state cannot be had now: not set back, said, nothing tried. */
	setup(NULL);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	unsetenv("T_STATE");
	plug_fini(PLUG_DUMP, -1);
	snprintf(said, sizeof(said), "pid %d: not set back: its state is unknown", me);
	assert_non_null(strstr(logged, said));
	assert_int_equal(count_calls("--action unlock"), 0);
	/* Its thread cannot run: not set back, said. */
	setup(NULL);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	resume_r = -1;
	plug_fini(PLUG_DUMP, -1);
	snprintf(said, sizeof(said), "pid %d: not set back: its restore thread %d cannot run", me,
		 thread_tid);
	assert_non_null(strstr(logged, said));
	/* Running now: nothing to undo. */
	setup(NULL);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	plug_fini(PLUG_DUMP, -1);
	assert_int_equal(count_calls("--action unlock"), 0);
	assert_int_equal(count_calls("--action restore"), 0);
	/* Back as it was at the pause: checkpointed before the dump, it stays
	 * checkpointed; locked before it, it stays locked. */
	setup(NULL);
	setenv("T_STATE", "checkpointed", 1);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(plug_checkpoint(me), 0);
	plug_fini(PLUG_DUMP, -1);
	assert_int_equal(count_calls("--action"), 0);
	setup(NULL);
	setenv("T_STATE", "locked", 1);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(count_calls("--action lock"), 0);
	assert_int_equal(plug_checkpoint(me), 0);
	assert_int_equal(count_calls("--action checkpoint"), 1);
	plug_fini(PLUG_DUMP, -1);
	assert_int_equal(count_calls("--action unlock"), 0);
	assert_int_equal(count_calls("--action restore"), 0);
}

static void put_record(const char *text)
{
	char p[200];
	FILE *f;

	snprintf(p, sizeof(p), "%s/" PLUG_RECORD, dir);
	if (!text) {
		unlink(p);
		return;
	}
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

#define GA "GPU-0a1b2c3d-0000-4000-8000-00000000000a"
#define GB "GPU-0a1b2c3d-0000-4000-8000-00000000000b"

static void put_map(const char *text, mode_t mode)
{
	char p[200];
	FILE *f;

	snprintf(p, sizeof(p), "%s/" PLUG_MAP_FILE, dir);
	unlink(p);
	if (!text)
		return;
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
}

/* A restore onto other GPUs: the map of RTID_DEVICE_MAP, else of the file
 * beside the images bound to this image's dump, goes with every restore
 * (the tool's as --device-map, the unlock without); a map that cannot be
 * used fails the restore at init, naming why; none is no map. */
static void test_restore_device_map(void **state)
{
	char rec[128], want[200];
	static const struct {
		const char *text, *said;
		mode_t mode;
	} bad[] = {
		{ "rtid-cuda-map 1\nrun " RUN "\nmap " GA "=" GA "," GB "=" GA "\n",
		  "beside the images: device map: a GPU the target twice", 0644 },
		{ "rtid-cuda-map 1\nrun 0000-ffff\nmap " GA "=" GB "\n",
		  "is for the dump of run 0000-ffff, not this image's (" RUN "): not used", 0644 },
		{ "rtid-cuda-map 1\nrun " RUN "\nmap " GA "=" GB "\nmap " GA "=" GB "\n",
		  PLUG_MAP_FILE ": line 4 is malformed", 0644 },
		{ "rtid-cuda-map 2\nrun " RUN "\nmap " GA "=" GB "\n",
		  PLUG_MAP_FILE ": line 1 is malformed", 0644 },
		{ "rtid-cuda-map 1\nmap " GA "=" GB "\n", "no run line or no map line", 0644 },
		{ "rtid-cuda-map 1\nrun " RUN "\n", "no run line or no map line", 0644 },
		{ "rtid-cuda-map 1\nrun " RUN "\nmap " GA "=" GB "\n", "someone but root", 0664 },
		{ "rtid-cuda-map 1\nx\n", PLUG_MAP_FILE ": line 2 is malformed", 0644 },
		{ "rtid-cuda-map 1\nrun " RUN "\nrun " RUN "\n", PLUG_MAP_FILE ": line 3 is malformed",
		  0644 },
		{ "rtid-cuda-map 1\nrun " RUN "\nmapx\n", PLUG_MAP_FILE ": line 3 is malformed", 0644 },
	};

	(void)state;
	snprintf(rec, sizeof(rec), "rtid-cuda-plugin 1\nrun " RUN "\ndriver -\ntask %d\n",
		 plug_nspid(me));
	put_record(rec);
	snprintf(want, sizeof(want), "--action restore --pid %d --device-map " GA "=" GB "\n", me);
	/* From CRIU's environment. */
	take = true;
	setenv("RTID_DEVICE_MAP", GA "=" GB, 1);
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_non_null(strstr(logged, "restoring onto other GPUs: " GA "=" GB " (RTID_DEVICE_MAP)"));
	assert_int_equal(plug_resume_late(me), 0);
	assert_int_equal(count_calls(want), 1);
	assert_int_equal(count_calls("--action unlock"), 1);
	assert_int_equal(count_calls("--device-map"), 1); /* the restore's only */
	plug_fini(PLUG_RESTORE, 0);
	setup(NULL);
	take = true;
	setenv("RTID_DEVICE_MAP", GA, 1);
	assert_int_equal(plug_init(PLUG_RESTORE), -1);
	assert_non_null(strstr(logged, "RTID_DEVICE_MAP: device map: a pair not OLD=NEW: '" GA "'"));
	unsetenv("RTID_DEVICE_MAP");
	/* From the file beside the images, bound to this image's dump. */
	setup(NULL);
	take = true;
	put_map("rtid-cuda-map 1\nrun " RUN "\nmap " GA "=" GB "\n", 0644);
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_non_null(strstr(logged, "restoring onto other GPUs: " GA "=" GB " (" PLUG_MAP_FILE
				       " beside the images)"));
	assert_int_equal(plug_resume_late(me), 0);
	assert_int_equal(count_calls(want), 1);
	plug_fini(PLUG_RESTORE, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setup(NULL);
		take = true;
		put_map(bad[i].text, bad[i].mode);
		assert_int_equal(plug_init(PLUG_RESTORE), -1);
		if (!strstr(logged, bad[i].said))
			fail_msg("case %zu: %s", i, logged);
	}
	/* A map line longer than any map, and a line longer than a piece; no
	 * image directory to read; an image of no dump run. */
	{
		static char text[6000];
		size_t at = (size_t)snprintf(text, sizeof(text), "rtid-cuda-map 1\nrun " RUN "\nmap ");

		for (size_t w = 1400; w <= 5000; w += 3600) {
			memset(text + at, 'x', w);
			strcpy(text + at + w, "\n");
			setup(NULL);
			take = true;
			put_map(text, 0644);
			assert_int_equal(plug_init(PLUG_RESTORE), -1);
			assert_non_null(strstr(logged, PLUG_MAP_FILE ": line 3 is malformed"));
		}
		setup(NULL);
		take = true;
		image_dir = -1;
		assert_int_equal(plug_init(PLUG_RESTORE), -1);
		assert_non_null(strstr(logged, PLUG_MAP_FILE " beside the images: cannot be opened"));
		setup(NULL);
		take = true;
		dump_run = "";
		put_map("rtid-cuda-map 1\nrun " RUN "\nmap " GA "=" GB "\n", 0644);
		assert_int_equal(plug_init(PLUG_RESTORE), -1);
		assert_non_null(strstr(logged, "not this image's (none): not used"));
	}
	/* A link, and a directory, by that name: not trusted. */
	{
		char p[200], big[RTID__MAP_TEXT + 8];

		snprintf(p, sizeof(p), "%s/" PLUG_MAP_FILE, dir);
		put_map(NULL, 0);
		assert_int_equal(symlink(PLUG_RECORD, p), 0);
		setup(NULL);
		take = true;
		assert_int_equal(plug_init(PLUG_RESTORE), -1);
		assert_non_null(strstr(logged, PLUG_MAP_FILE " beside the images: a symbolic link"));
		unlink(p);
		assert_int_equal(mkdir(p, 0755), 0);
		setup(NULL);
		take = true;
		assert_int_equal(plug_init(PLUG_RESTORE), -1);
		assert_non_null(strstr(logged, "or it is no file"));
		rmdir(p);
		/* A map longer than any is refused as one, not cut to fit. */
		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		setenv("RTID_DEVICE_MAP", big, 1);
		setup(NULL);
		take = true;
		assert_int_equal(plug_init(PLUG_RESTORE), -1);
		assert_non_null(strstr(logged, "RTID_DEVICE_MAP: longer than any map"));
		unsetenv("RTID_DEVICE_MAP");
	}
	/* None: the restore as ever, no map. */
	setup(NULL);
	take = true;
	put_map(NULL, 0);
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_int_equal(plug_resume_late(me), 0);
	assert_int_equal(count_calls("--device-map"), 0);
	assert_int_equal(count_calls("--action restore"), 1);
	plug_fini(PLUG_RESTORE, 0);
	put_record(NULL);
}

static void test_restore(void **state)
{
	char rec[128], rec2[64];

	(void)state;
	take = true;
	criu_pids[0] = 1;
	criu_pids[1] = me;
	criu_n = 2;
	snprintf(rec, sizeof(rec), "rtid-cuda-plugin 1\nrun " RUN "\ndriver -\ntask %d\n",
		 plug_nspid(me));
	put_record(rec);
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_int_equal(plug_resume_late(1), 0); /* not named: no CUDA at the dump */
	assert_int_equal(plug_resume_late(me), 0);
	assert_int_equal(count_calls("--action restore"), 1);
	assert_int_equal(count_calls("--action unlock"), 1);
	snprintf(rec2, sizeof(rec2), "--action restore --pid %d\n", me); /* as CRIU's plugin */
	assert_int_equal(count_calls(rec2), 1);
	assert_int_equal(count_calls("--get-restore-tid --pid 1\n"), 0);
	plug_fini(PLUG_RESTORE, 0);
	assert_int_equal(nkilled, 0);
	/* Named, and no restore thread now: said at error level, and killed
	 * (CRIU 4.2 would let it run as if restored). */
	setup(NULL);
	take = true;
	setenv("T_PID", "0", 1);
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_int_equal(plug_resume_late(me), -1);
	assert_non_null(strstr(logged, "its GPU state was not restored (it had CUDA state at the "
				       "dump and has no restore thread now): killed"));
	assert_int_equal(nkilled, 1);
	assert_int_equal(killed[0], me);
	/* Named, and the tool prints no tid: killed, the reason said. */
	setup(NULL);
	take = true;
	setenv("T_TID", "x", 1);
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_int_equal(plug_resume_late(me), -1);
	assert_non_null(strstr(logged, "(no word of its restore thread): killed"));
	assert_int_equal(nkilled, 1);
	/* Its thread cannot run. */
	setup(NULL);
	take = true;
	resume_r = -1;
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_int_equal(plug_resume_late(me), -1);
	assert_non_null(strstr(logged, "(its restore thread cannot run): killed"));
	assert_int_equal(nkilled, 1);
	/* A record not ours: task by task, as CRIU's plugin. */
	setup(NULL);
	take = true;
	put_record("garbage\n");
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_int_equal(plug_resume_late(me), 0);
	assert_non_null(strstr(logged, "rtid-cuda.txt unreadable: working task by task"));
	assert_int_equal(count_calls("--action restore"), 1);
	assert_int_equal(plug_resume_late(1), 0);
	assert_non_null(strstr(logged, "no need to resume devices on pid 1"));
	/* Another dump's record (the directory reused by CRIU's own plugin,
	 * which leaves ours there), or one of no run: it spares nothing, said;
	 * every task is asked, the one it does not name too. */
	for (int k = 0; k < 2; k++) {
		setup(NULL);
		take = true;
		if (k == 0) {
			dump_run = "0a1b2c3d-0000-4000-8000-000000000001";
			put_record(rec); /* this run's, naming us */
		} else {
			put_record("rtid-cuda-plugin 1\ndriver -\ntask 999999\n");
		}
		assert_int_equal(plug_init(PLUG_RESTORE), 0);
		assert_int_equal(plug_resume_late(me), 0);
		assert_non_null(strstr(logged, k == 0 ? "rtid-cuda.txt is another dump's (run " RUN
					 "; this image's 0a1b2c3d-0000-4000-8000-000000000001)"
					 : "rtid-cuda.txt is another dump's (run none; this image's "
					   RUN ")"));
		assert_int_equal(count_calls("--action restore"), 1);
		assert_int_equal(count_calls("--action unlock"), 1);
		assert_int_equal(plug_resume_late(1), 0);
		assert_int_equal(count_calls("--get-restore-tid --pid 1\n"), 1);
		plug_fini(PLUG_RESTORE, 0);
	}
	/* An image of no run id (an older CRIU's): no record is proven. */
	setup(NULL);
	take = true;
	dump_run = "";
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_int_equal(plug_resume_late(1), 0);
	assert_int_equal(count_calls("--get-restore-tid --pid 1\n"), 1);
	assert_non_null(strstr(logged, "this image's none"));
	plug_fini(PLUG_RESTORE, 0);
	/* No record at all (CRIU's own plugin's image), the tid refused. */
	setup(NULL);
	take = true;
	put_record(NULL);
	setenv("T_TID", "1", 1);
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_int_equal(plug_resume_late(me), -1);
	assert_null(strstr(logged, "unreadable"));
	/* The driver refused the restore: unlock is not tried, and the task is
	 * killed, why said. */
	setup(NULL);
	take = true;
	setenv("T_FAIL", "restore", 1);
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_int_equal(plug_resume_late(me), -1);
	assert_int_equal(count_calls("--action unlock"), 0);
	assert_non_null(strstr(logged, "action failed: cuda-checkpoint exit 3: cannot restore"));
	assert_non_null(strstr(logged, "(restore or unlock failed: said above): killed"));
	assert_int_equal(nkilled, 1);
	/* A task whose NSpid cannot be read (here a pid no process has): the
	 * record cannot speak for it, so it is asked alone, said; the others as
	 * the record says. */
	setup(NULL);
	take = true;
	put_record(rec);
	criu_pids[2] = 2147483646;
	criu_n = 3;
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_int_equal(plug_resume_late(1), 0);
	assert_int_equal(plug_resume_late(me), 0);
	assert_int_equal(plug_resume_late(2147483646), 0);
	assert_non_null(strstr(logged, "pid 2147483646: no NSpid to find in rtid-cuda.txt: asked "
				       "alone\n"));
	assert_int_equal(count_calls("--get-restore-tid --pid 2147483646\n"), 1);
	assert_int_equal(count_calls("--get-restore-tid --pid 1\n"), 0);
	assert_int_equal(count_calls("--action restore"), 1);
	plug_fini(PLUG_RESTORE, 0);
	/* More tasks than it can hold: a task it could not read would be spared
	 * unasked, so the record spares none. */
	setup(NULL);
	take = true;
	criu_n = PLUG_TASKS_MAX + 1;
	assert_int_equal(plug_init(PLUG_RESTORE), 0);
	assert_int_equal(plug_resume_late(1), 0);
	assert_non_null(strstr(logged, "4097 tasks, more than 4096: working task by task\n"));
	assert_int_equal(count_calls("--get-restore-tid --pid 1\n"), 1);
	plug_fini(PLUG_RESTORE, 0);
	criu_n = 2;
}

/* rtid serve (its extra options) on the mock driver, which names this
 * process's parked thread as its restore thread; RTID_SOCKET pointed at it,
 * its value before in old. */
static void own_daemon(struct daemon *d, const char *const *extra, char *old, size_t len)
{
	char text[700];
	int pids[] = { me, 0 };

	snprintf(text, sizeof(text),
		 "title hooks\nproves hooks\ndriver 580.159.03\nbackend api\n"
		 "task %d %d python3\ntask %d %d cuda00001400006\nanswer %d tid %d\n"
		 "expect driver %d tid=%d\n",
		 me, me, me, thread_tid, me, thread_tid, me, thread_tid);
	hd_prepare(d, text, pids);
	hd_start(d, extra);
	snprintf(old, len, "%s", getenv("RTID_SOCKET"));
	setenv("RTID_SOCKET", d->sock, 1);
}

/* With rtid serve: the actions side by side, on threads. A checkpoint the
 * driver refuses (its task unlocked behind the plugin's back) fails its own
 * call, said, never run again by the tool; work whose call never came ends
 * at fini, its failure said, and a failed dump is rolled back. */
static void test_side_by_side(void **state)
{
	static struct daemon d;
	char sock[200];
	struct rtid__svc_ans a;

	(void)state;
	own_daemon(&d, ((const char *const[]){ "--actions", NULL }), sock, sizeof(sock));
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_non_null(strstr(logged, "rtid serve present"));
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(hd_ask(&d, RTID__OP_UNLOCK, me, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DONE);
	assert_int_equal(plug_checkpoint(me), -1);
	assert_non_null(strstr(logged, ": checkpoint failed: "));
	assert_int_equal(count_calls("--action"), 0); /* the tool never ran it */
	plug_fini(PLUG_DUMP, -1);
	/* The call never came: fini ends the job and says how it ended. */
	setup(NULL);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(hd_ask(&d, RTID__OP_UNLOCK, me, 0, &a), 0);
	assert_int_equal(plug_checkpoint(1), 0);
	plug_fini(PLUG_DUMP, -1);
	{
		char want[64];

		snprintf(want, sizeof(want), "pid %d: ", me);
		assert_non_null(strstr(logged, want));
	}
	assert_int_equal(interrupts, resumes);
	/* A thread that cannot run is left out of the side-by-side work. */
	setup(NULL);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	resume_r = -1;
	assert_int_equal(plug_checkpoint(me), -1);
	resume_r = 0;
	assert_int_equal(hd_ask(&d, RTID__OP_UNLOCK, me, 0, &a), 0);
	plug_fini(PLUG_DUMP, 0);
	/* It could not run when the work was handed out, and can at its own
	 * call: the daemon checkpoints it then, never the tool. */
	setup(NULL);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	resume_fails = 1;
	assert_int_equal(plug_checkpoint(me), 0);
	assert_int_equal(count_calls("--action"), 0);
	plug_fini(PLUG_DUMP, 0);
	assert_int_equal(interrupts, 1);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE, me, 0, &a), 0);
	assert_int_equal(hd_ask(&d, RTID__OP_UNLOCK, me, 0, &a), 0);
	/* A dump that succeeds with the call never come: its thread is stopped
	 * again all the same (CRIU would detach from a running one). */
	setup(NULL);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(plug_checkpoint(1), 0);
	plug_fini(PLUG_DUMP, 0);
	assert_int_equal(resumes, 1);
	assert_int_equal(interrupts, 1);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE, me, 0, &a), 0);
	assert_int_equal(hd_ask(&d, RTID__OP_UNLOCK, me, 0, &a), 0);
	setenv("RTID_SOCKET", sock, 1);
	hd_cleanup(&d);
}

/* A daemon that serves queries only: the side-by-side job's action it
 * refuses goes to the tool, and the daemon is not asked for it again. */
static void test_queries_only_daemon(void **state)
{
	static struct daemon d;
	char sock[200], line[512], want[64];
	int n = 0;
	FILE *f;

	(void)state;
	own_daemon(&d, ((const char *const[]){ NULL }), sock, sizeof(sock));
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(count_calls("--action lock"), 1);
	assert_int_equal(plug_checkpoint(me), 0);
	snprintf(want, sizeof(want), "--action checkpoint --pid %d\n", me); /* no --timeout */
	assert_int_equal(count_calls(want), 1);
	assert_non_null(strstr(logged, ": asking cuda-checkpoint"));
	plug_fini(PLUG_DUMP, 0);
	setenv("RTID_SOCKET", sock, 1);
	assert_int_equal(hd_stop(&d), 0);
	snprintf(want, sizeof(want), "checkpoint %d for uid", me);
	assert_non_null(f = fopen(d.stderr_path, "r"));
	while (fgets(line, sizeof(line), f))
		n += strstr(line, want) != NULL;
	fclose(f);
	assert_int_equal(n, 1);
	hd_cleanup(&d);
}

/* Requests for pid in the daemon's log (one line per answered pid). */
static int asked(const struct daemon *d, int pid)
{
	char want[64], line[512];
	int n = 0;
	FILE *f = fopen(d->stderr_path, "r");

	snprintf(want, sizeof(want), "get-restore-tid %d for uid", pid);
	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, want) != NULL;
	if (f)
		fclose(f);
	return n;
}

static pid_t sleeper(void)
{
	pid_t p = fork();

	if (p == 0) {
		/* Gone with the test, and holding none of its output open (a failed
		 * test leaves no process behind for meson to wait on). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close_range(0, ~0U, 0);
		pause();
		_exit(0);
	}
	assert_true(p > 0);
	return p;
}

/* rtid serve (with actions) on the case text for pids, the plugin's socket
 * pointed at it; the socket it had into sock, to put back. */
static void serve_case(struct daemon *d, const char *text, const int *pids, char *sock,
		       size_t len)
{
	hd_prepare(d, text, pids);
	hd_start(d, ((const char *const[]){ "--actions", NULL }));
	snprintf(sock, len, "%s", getenv("RTID_SOCKET"));
	setenv("RTID_SOCKET", d->sock, 1);
}

/* The map reaches the driver through the daemon with the restore (the mock
 * driver logs the pairs it took), no tool spawned; a daemon whose driver
 * takes no map leaves the restore to the tool, map and all. */
static void test_restore_map_to_daemon(void **state)
{
	static struct daemon d;
	static const char *const api[] = { "", "api-version 12090\n" };
	struct rtid__devmap m;
	char text[600], sock[200], msg[200], why[160], want[200];
	int pids[] = { me, 0 };

	(void)state;
	assert_int_equal(rtid__devmap_parse(GA "=" GB, &m, why, sizeof(why)), 0);
	snprintf(sock, sizeof(sock), "%s", getenv("RTID_SOCKET"));
	snprintf(want, sizeof(want), "--action restore --pid %d --device-map " GA "=" GB "\n", me);
	setenv("RTID_MOCK_GPUS", GA "," GB, 1);
	for (int k = 0; k < 2; k++) {
		snprintf(text, sizeof(text),
			 "title map\nproves hooks\ndriver 580.159.03\nbackend api\n%s"
			 "task %d %d python3\ntask %d %d cuda00001400006\nanswer %d tid %d\n"
			 "expect driver %d tid=%d\n",
			 api[k], me, me, me, thread_tid, me, thread_tid, me, thread_tid);
		hd_prepare(&d, text, pids);
		hd_start(&d, ((const char *const[]){ "--actions", NULL }));
		setenv("RTID_SOCKET", d.sock, 1);
		assert_int_equal(plug_act(RTID__OP_LOCK, me, 1000, msg, sizeof(msg)), 0);
		assert_int_equal(plug_act(RTID__OP_CHECKPOINT, me, 0, msg, sizeof(msg)), 0);
		plug_serve_map(&m);
		assert_int_equal(plug_act(RTID__OP_RESTORE, me, 0, msg, sizeof(msg)), 0);
		plug_serve_map(&(struct rtid__devmap){ .n = 0 });
		assert_int_equal(hd_log_count(&d, "\"note\":\"" GA "=" GB "\""), k == 0);
		assert_int_equal(count_calls(want), k == 1);
		setenv("RTID_SOCKET", sock, 1);
		hd_cleanup(&d);
	}
	unsetenv("RTID_MOCK_GPUS");
}

/* A tree asked at once: at the root's PAUSE_DEVICES its descendants in one
 * batch, whose answers of none spare each its own question, but only while
 * the process answered for has the pid (one gone is asked alone); at the
 * first CHECKPOINT_DEVICES, the frozen tree's tasks without CUDA in one
 * batch again (the answers from before the freeze spare none of them). The
 * plugin's cost per hook is said at debug level. */
static void test_tree_asked_at_once(void **state)
{
	static struct daemon d;
	char text[1200], sock[200];
	pid_t c1 = sleeper(), c2 = sleeper(), c3 = sleeper();
	int pids[] = { me, c1, c2, c3, 0 };
	struct plug_cost cost = { 0 };

	(void)state;
	snprintf(text, sizeof(text),
		 "title hooks\nproves hooks\ndriver 580.159.03\nbackend api\n"
		 "task %d %d python3\ntask %d %d cuda00001400006\nanswer %d tid %d\n"
		 "answer %d none\nanswer %d none\ntask %d %d python3\nanswer %d tid %d\n"
		 "expect driver %d tid=%d\n",
		 me, me, me, thread_tid, me, thread_tid, c1, c2, c3, c3, c3, c3, me, thread_tid);
	serve_case(&d, text, pids, sock, sizeof(sock));
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(asked(&d, c1), 1);
	assert_int_equal(asked(&d, c2), 1);
	assert_int_equal(plug_pause(c1), 0);
	assert_int_equal(asked(&d, c1), 1); /* spared */
	kill(c2, SIGKILL);
	assert_int_equal(waitpid(c2, NULL, 0), c2);
	assert_int_equal(plug_pause(c2), 0); /* the mock still says none for the number */
	assert_int_equal(asked(&d, c2), 2);  /* not the process answered for: asked */
	assert_int_equal(plug_pause(c3), 0); /* CUDA: asked again, as a task alone is */
	assert_int_equal(asked(&d, c3), 2);
	criu_pids[0] = me, criu_pids[1] = c1, criu_pids[2] = c3, criu_n = 3;
	assert_int_equal(plug_checkpoint(me), 0);
	assert_int_equal(asked(&d, c1), 2); /* the frozen tree, once */
	assert_int_equal(plug_checkpoint(c1), 0);
	assert_int_equal(asked(&d, c1), 2);
	assert_int_equal(plug_checkpoint(c3), 0);
	assert_int_equal(asked(&d, c3), 2); /* a task locked at its pause is not asked again */
	plug_fini(PLUG_DUMP, 0);
	assert_int_equal(count_calls("--get-restore-tid"), 0); /* never the tool */
	/* The daemon's socket gone between the pause and the freeze (no batch
	 * then): the answers from before the freeze spare nothing; the task is
	 * asked again (here on the connection the plugin kept). */
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(plug_pause(c1), 0);
	assert_int_equal(asked(&d, c1), 3);
	setenv("RTID_SOCKET", "/nonexistent/rtid.sock", 1);
	criu_pids[0] = c1, criu_n = 1;
	assert_int_equal(plug_checkpoint(c1), 0);
	assert_int_equal(asked(&d, c1), 4);
	setenv("RTID_SOCKET", d.sock, 1);
	plug_fini(PLUG_DUMP, 0);
	unlink(calls);
	kill(c1, SIGKILL);
	kill(c3, SIGKILL);
	waitpid(c1, NULL, 0);
	waitpid(c3, NULL, 0);
	setenv("RTID_SOCKET", sock, 1);
	hd_cleanup(&d);
	/* The cost line: each hook's calls with and without CUDA, in us. */
	logged[0] = '\0';
	cost.init_s = 0.000012;
	plug_cost_add(&cost, PLUG_H_PAUSE, false, 0.000850);
	plug_cost_add(&cost, PLUG_H_PAUSE, true, 0.000900);
	plug_cost_say(&cost);
	assert_string_equal(logged, "hook cost: init 12 us; PAUSE_DEVICES 1 without CUDA 850 us, 1 "
			    "with 900 us\n");
	logged[0] = '\0';
	plug_cost_say(&(struct plug_cost){ 0 });
	assert_string_equal(logged, "");
}

/* A daemon from before batches, on a thread: it greets, answers every
 * single query "none" and closes a connection that sends a batch (as a
 * malformed request); what it was sent is counted. */
struct old_daemon {
	int fd, batches, singles;
	char path[100];
};

static void *old_daemon_run(void *arg)
{
	struct old_daemon *o = arg;
	int c;

	while ((c = accept(o->fd, NULL, NULL)) >= 0) {
		char buf[RTID__SVC_MSG_MAX + 1];
		ssize_t n;

		while ((n = recv(c, buf, RTID__SVC_MSG_MAX, 0)) > 0) {
			buf[n] = '\0';
			if (!strcmp(buf, "hello 3")) { /* from before device maps */
				send(c, "refused 2 version", 17, MSG_NOSIGNAL);
				break;
			} else if (!strncmp(buf, "hello", 5)) {
				send(c, "hello 2 queries", 15, MSG_NOSIGNAL);
			} else if (!strncmp(buf, "batch ", 6)) {
				__atomic_add_fetch(&o->batches, 1, __ATOMIC_SEQ_CST);
				break;
			} else {
				char ans[RTID__SVC_MSG_MAX];
				int len = snprintf(ans, sizeof(ans), "cuerr %s 1 CUDA_ERROR_INVALID_VALUE -",
						   buf);

				__atomic_add_fetch(&o->singles, 1, __ATOMIC_SEQ_CST);
				send(c, ans, (size_t)len, MSG_NOSIGNAL);
			}
		}
		close(c);
	}
	return NULL;
}

/* A daemon that does not take batches: the tree's questions go one by one,
 * each answered, and nothing reaches the tool. */
static void test_daemon_without_batches(void **state)
{
	struct old_daemon o = { 0 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char sock[200];
	pid_t c1 = sleeper();
	pthread_t t;

	(void)state;
	snprintf(o.path, sizeof(o.path), "%s/old.sock", dir);
	memcpy(sa.sun_path, o.path, strlen(o.path) + 1);
	assert_true((o.fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) >= 0);
	assert_int_equal(bind(o.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(o.fd, 8), 0);
	assert_int_equal(pthread_create(&t, NULL, old_daemon_run, &o), 0);
	snprintf(sock, sizeof(sock), "%s", getenv("RTID_SOCKET"));
	setenv("RTID_SOCKET", o.path, 1);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0); /* its descendants: a batch, closed twice */
	assert_int_equal(plug_pause(c1), 0); /* asked alone */
	assert_int_equal(__atomic_load_n(&o.batches, __ATOMIC_SEQ_CST), 2);
	assert_int_equal(__atomic_load_n(&o.singles, __ATOMIC_SEQ_CST), 2); /* me, c1 */
	assert_null(strstr(logged, "error"));
	plug_fini(PLUG_DUMP, 0);
	assert_int_equal(count_calls("--get-restore-tid"), 0);
	/* A restore with a map: refused at the greeting, so not served without
	 * its map, and not run by the tool beside whatever that daemon runs. */
	{
		struct rtid__devmap m;
		char msg[300], why[160];

		assert_int_equal(rtid__devmap_parse(GA "=" GB, &m, why, sizeof(why)), 0);
		plug_serve_map(&m);
		assert_int_equal(plug_act(RTID__OP_RESTORE, c1, 0, msg, sizeof(msg)), -1);
		plug_serve_map(&(struct rtid__devmap){ .n = 0 });
		assert_non_null(strstr(msg, "refused protocol 3: a daemon without device maps"));
		assert_int_equal(count_calls("--action restore"), 0);
	}
	/* A restore's recorded tasks: asked in a batch on the connection its
	 * first question opens (this daemon closes it; each is then asked alone). */
	{
		char rec[160];
		int before = __atomic_load_n(&o.batches, __ATOMIC_SEQ_CST);

		snprintf(rec, sizeof(rec), "rtid-cuda-plugin 1\nrun " RUN "\ndriver -\ntask %d\n"
			 "task %d\n", plug_nspid(me), plug_nspid(c1));
		put_record(rec);
		take = true;
		criu_pids[0] = me, criu_pids[1] = c1, criu_n = 2;
		assert_int_equal(plug_init(PLUG_RESTORE), 0);
		plug_resume_late(me);
		assert_true(__atomic_load_n(&o.batches, __ATOMIC_SEQ_CST) > before);
		plug_fini(PLUG_RESTORE, 0);
		put_record(NULL);
	}
	shutdown(o.fd, SHUT_RDWR);
	pthread_join(t, NULL);
	close(o.fd);
	unlink(o.path);
	setenv("RTID_SOCKET", sock, 1);
	kill(c1, SIGKILL);
	waitpid(c1, NULL, 0);
}

/* The threads of this process but the caller's that block SIGCHLD: here
 * the plugin's workers, and whatever threads a checker (valgrind, a
 * sanitizer) runs. */
static int threads_blocking_sigchld(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char p[300], line[256];
		FILE *f;

		snprintf(p, sizeof(p), "/proc/self/task/%s/status", e->d_name);
		/* Not this thread: CRIU's, whose mask is the one the workers leave alone. */
		if (e->d_name[0] == '.' || strtol(e->d_name, NULL, 10) == gettid() ||
		    !(f = fopen(p, "r")))
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "SigBlk:", 7))
				n += (int)((strtoull(line + 7, NULL, 16) >> (SIGUSR2 - 1)) & 1);
		fclose(f);
	}
	closedir(d);
	return n;
}

/* A checkpoint that fails while another task's is still running says which
 * are still pending (the driver may hold one behind a peer, as in an NCCL
 * job); the other's work goes on and ends well. One at a time
 * (RTID_PLUGIN_PARALLEL=1), each checkpoint 1 s: the second still runs when
 * the first's failure is said; a third, checkpointed before the dump, has no
 * work, and a fourth's work ended before the failure: neither is listed. */
static void test_failure_says_pending(void **state)
{
	static struct daemon d;
	char text[1400], sock[200], want[64];
	struct rtid__svc_ans a;
	pid_t child, done, first;
	int pids[5] = { me, 0, 0, 0, 0 }, blocking;
	sigset_t mask0, mask1;
	static struct plug_job slow = { .ops = { RTID__OP_LOCK, RTID__OP_CHECKPOINT }, .nops = 2,
					.state = 1 };

	(void)state;
	for (int i = 1; i < 4; i++)
		if ((pids[i] = fork()) == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed assert leaves none */
			pause();
			_exit(0);
		}
	child = pids[1];
	done = pids[2]; /* checkpointed before the dump: no work, never pending */
	first = pids[3]; /* its work ends before ours fails: not pending either */
	snprintf(text, sizeof(text),
		 "title hooks\nproves hooks\ndriver 580.159.03\nbackend api\n"
		 "task %d %d python3\ntask %d %d cuda00001400006\nanswer %d tid %d\n"
		 "task %d %d cuda00001400006\nanswer %d tid %d\n"
		 "task %d %d cuda00001400006\nanswer %d tid %d\n"
		 "task %d %d cuda00001400006\nanswer %d tid %d\n"
		 "expect driver %d tid=%d\nexpect driver %d tid=%d\nexpect driver %d tid=%d\n"
		 "expect driver %d tid=%d\n",
		 me, me, me, thread_tid, me, thread_tid, child, child, child, child,
		 done, done, done, done, first, first, first, first, me, thread_tid, child, child,
		 done, done, first, first);
	hd_prepare(&d, text, pids);
	setenv("RTID_MOCK_SLOW_OPS", "checkpoint", 1);
	setenv("RTID_MOCK_SLOW_S", "1", 1);
	hd_start(&d, ((const char *const[]){ "--actions", NULL }));
	unsetenv("RTID_MOCK_SLOW_OPS");
	unsetenv("RTID_MOCK_SLOW_S");
	snprintf(sock, sizeof(sock), "%s", getenv("RTID_SOCKET"));
	setenv("RTID_SOCKET", d.sock, 1);
	setenv("RTID_PLUGIN_PARALLEL", "1", 1);
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(first), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(plug_pause(child), 0);
	assert_int_equal(hd_ask(&d, RTID__OP_LOCK, done, 0, &a), 0);
	assert_int_equal(hd_ask(&d, RTID__OP_CHECKPOINT, done, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DONE);
	assert_int_equal(plug_pause(done), 0);
	/* Ours unlocked behind the plugin's back: its checkpoint fails. */
	assert_int_equal(hd_ask(&d, RTID__OP_UNLOCK, me, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DONE);
	assert_int_equal(plug_checkpoint(me), -1);
	snprintf(want, sizeof(want), "still pending: %d\n", child);
	assert_non_null(strstr(logged, want));
	assert_int_equal(plug_checkpoint(first), 0);
	assert_int_equal(plug_checkpoint(child), 0);
	assert_int_equal(plug_checkpoint(done), 0);
	assert_int_equal(hd_ask(&d, RTID__OP_GET_STATE, child, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_STATE);
	assert_string_equal(rtid__svc_state_name(a.value), "checkpointed");
	plug_fini(PLUG_DUMP, -1);
	assert_int_equal(count_calls("--action"), 0); /* the tool never ran */
	/* One set at a time: a start waits for the set before (here a lock and
	 * a checkpoint of 1 s) to end. */
	slow.pid = child;
	blocking = threads_blocking_sigchld(); /* a checker's own threads may block it too */
	sigemptyset(&mask0); /* CRIU's thread blocks nothing, as after any earlier start */
	pthread_sigmask(SIG_SETMASK, &mask0, NULL);
	assert_int_equal(plug_run_start(&slow, 1, 1), 0);
	/* Its thread blocks every signal: CRIU's SIGCHLD and SIGALRM come to
	 * CRIU's thread, whose own mask is as it was. */
	assert_int_equal(threads_blocking_sigchld(), blocking + 1);
	pthread_sigmask(SIG_SETMASK, NULL, &mask1);
	for (int sig = 1; sig < SIGRTMAX; sig++)
		assert_int_equal(sigismember(&mask0, sig), sigismember(&mask1, sig));
	assert_int_equal(plug_run_start(NULL, 0, 1), 0);
	assert_int_equal(slow.state, 3);
	assert_int_equal(slow.end, ANS_VALUE);
	assert_int_equal(slow.done, 2);
	unsetenv("RTID_PLUGIN_PARALLEL");
	setenv("RTID_SOCKET", sock, 1);
	hd_cleanup(&d);
	for (int i = 1; i < 4; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
}

/* A kernel without pidfd_open (before 5.3), as seccomp makes one: the
 * call fails with ENOSYS in this process and every one it starts from now
 * on (the last test of the group). Under valgrind 3.19 it fails so anyway. */
static int without_pidfd_open(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (getenv("RTID_UNDER_VALGRIND"))
		return syscall(SYS_pidfd_open, getpid(), 0) < 0 && errno == ENOSYS ? 0 : -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) < 0)
		return -1;
	return syscall(SYS_pidfd_open, getpid(), 0) < 0 && errno == ENOSYS ? 0 : -1;
}

/* Without pidfd_open, an answer asked ahead is bound to its process by its
 * start time: used for the process asked about, and a pid whose process is
 * gone is asked again. */
static void test_without_pidfd(void **state)
{
	static struct daemon d;
	char text[600], sock[200];
	pid_t c1 = sleeper(), c2 = sleeper();
	int pids[] = { me, c1, c2, 0 };

	(void)state;
	assert_int_equal(without_pidfd_open(), 0);
	snprintf(text, sizeof(text),
		 "title old kernel\nproves hooks\ndriver 580.159.03\nbackend api\n"
		 "task %d %d python3\ntask %d %d cuda00001400006\nanswer %d tid %d\n"
		 "answer %d none\nanswer %d none\nexpect driver %d tid=%d\n",
		 me, me, me, thread_tid, me, thread_tid, c1, c2, me, thread_tid);
	serve_case(&d, text, pids, sock, sizeof(sock));
	assert_int_equal(plug_init(PLUG_DUMP), 0);
	assert_int_equal(plug_pause(me), 0);
	assert_int_equal(asked(&d, c1), 1);
	assert_int_equal(plug_pause(c1), 0);
	assert_int_equal(asked(&d, c1), 1); /* spared */
	kill(c2, SIGKILL);
	assert_int_equal(waitpid(c2, NULL, 0), c2);
	assert_int_equal(plug_pause(c2), 0);
	assert_int_equal(asked(&d, c2), 2); /* not the process answered for: asked */
	plug_fini(PLUG_DUMP, 0);
	assert_int_equal(count_calls("--get-restore-tid"), 0);
	setenv("RTID_SOCKET", sock, 1);
	kill(c1, SIGKILL);
	waitpid(c1, NULL, 0);
	hd_cleanup(&d);
}

/* RTID_PLUGIN_PARALLEL: 1..64, anything else the default; jobs not queued
 * (state 0) are passed over, a job the daemon cannot take ends "the tool's
 * turn" with why. */
static void test_runner(void **state)
{
	static const char *const bad[] = { "", "0", "65", "640", "12x", "-3", "99999999999" };
	struct plug_job jobs[2] = {
		{ .pid = me, .ops = { RTID__OP_CHECKPOINT, -1 }, .nops = 1, .state = 0 },
		{ .pid = me, .ops = { RTID__OP_CHECKPOINT, -1 }, .nops = 1, .state = 1 },
	};

	(void)state;
	unsetenv("RTID_PLUGIN_PARALLEL");
	assert_int_equal(plug_run_parallel(), PLUG_PARALLEL_DEFAULT);
	setenv("RTID_PLUGIN_PARALLEL", "3", 1);
	assert_int_equal(plug_run_parallel(), 3);
	setenv("RTID_PLUGIN_PARALLEL", "64", 1);
	assert_int_equal(plug_run_parallel(), 64);
	setenv("RTID_PLUGIN_PARALLEL", "10", 1);
	assert_int_equal(plug_run_parallel(), 10);
	setenv("RTID_PLUGIN_PARALLEL", "1", 1); /* one at a time: the least */
	assert_int_equal(plug_run_parallel(), 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("RTID_PLUGIN_PARALLEL", bad[i], 1);
		assert_int_equal(plug_run_parallel(), PLUG_PARALLEL_DEFAULT);
	}
	unsetenv("RTID_PLUGIN_PARALLEL");
	assert_int_equal(plug_run_start(jobs, 2, 1), 0);
	plug_run_wait(&jobs[1]);
	assert_int_equal(jobs[1].state, 3);
	assert_int_equal(jobs[1].end, ANS_TO_TOOL);
	assert_int_equal(jobs[1].done, 0);
	assert_non_null(strstr(jobs[1].msg, "cannot connect"));
	plug_run_settle();
	assert_int_equal(jobs[0].state, 0);
	assert_int_equal(plug_run_start(jobs, 0, 4), 0); /* nothing to run */
	plug_run_settle();
	/* No thread: the jobs ran here, before it returned. */
	jobs[1].state = 1;
	assert_int_equal(plug_run_start(jobs, 2, 0), 0);
	assert_int_equal(jobs[1].state, 3);
	assert_int_equal(jobs[1].end, ANS_TO_TOOL);
	assert_int_equal(jobs[0].state, 0);
	plug_run_settle();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_init_refused, setup),
		cmocka_unit_test_setup(test_disabled, setup),
		cmocka_unit_test_setup(test_dump, setup),
		cmocka_unit_test_setup(test_pause_failures, setup),
		cmocka_unit_test_setup(test_checkpoint_failures, setup),
		cmocka_unit_test_setup(test_roll_back, setup),
		cmocka_unit_test_setup(test_record_of_a_task_gone, setup),
		cmocka_unit_test_setup(test_no_word_fails_the_dump, setup),
		cmocka_unit_test_setup(test_failure_says_pending, setup),
		cmocka_unit_test_setup(test_restore, setup),
		cmocka_unit_test_setup(test_restore_device_map, setup),
		cmocka_unit_test_setup(test_side_by_side, setup),
		cmocka_unit_test_setup(test_queries_only_daemon, setup),
		cmocka_unit_test_setup(test_tree_asked_at_once, setup),
		cmocka_unit_test_setup(test_restore_map_to_daemon, setup),
		cmocka_unit_test_setup(test_daemon_without_batches, setup),
		cmocka_unit_test_setup(test_runner, setup),
		cmocka_unit_test_setup(test_without_pidfd, setup), /* the last: seccomp stays */
	};
	const char *t = getenv("TMPDIR");
	static char path_env[4096];
	char p[200], cmd[200];
	pthread_t th;
	FILE *f;
	int r;

	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root: a GPU under /proc/driver in a mount namespace\n");
		return 77;
	}
	if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("gpu", "/proc/driver", "tmpfs", 0, "mode=0755") < 0 ||
	    mkdir("/proc/driver/nvidia", 0755) < 0 || mkdir("/proc/driver/nvidia/gpus", 0755) < 0) {
		printf("1..0 # SKIP no GPU under /proc/driver in a mount namespace: %m\n");
		return 77;
	}
	snprintf(dir, sizeof(dir), "%s/rtid-hooks-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	snprintf(p, sizeof(p), "%s/cuda-checkpoint", dir);
	if (!(f = fopen(p, "w")))
		return 1;
	fputs(script, f);
	fclose(f);
	chmod(p, 0755);
	snprintf(calls, sizeof(calls), "%s/calls", dir);
	setenv("T_LOG", calls, 1);
	snprintf(path_env, sizeof(path_env), "%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	setenv("PATH", dir, 1);
	setenv("RTID_SOCKET", calls, 1); /* no daemon: no socket there */
	setenv("RTID_SHIM_CONF", "", 1);
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY);
	me = getpid();
	if (pipe(hold) < 0 || pipe(park) < 0 || pthread_create(&th, NULL, thread, NULL) != 0)
		return 1;
	{
		char c;

		if (read(hold[0], &c, 1) != 1)
			return 1;
	}
	r = cmocka_run_group_tests(tests, NULL, NULL);
	close(dir_fd);
	setenv("PATH", path_env, 1);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		r = 1;
	return r;
}
