/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rtid's CUDA plugin for CRIU: the pieces and what they share. Only
 * plug-criu.c and plugin.c see CRIU's headers; everything else is rtid's
 * own code on basic/, rules/ and proto/. */
#ifndef RTID_PLUGIN_H
#define RTID_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rtid__devmap;

#define PLUG_NAME "cuda_plugin" /* CRIU's own plugin's: the inventory names it */
#define PLUG_PREFIX "rtid_cuda_plugin: "
#define PLUG_TASKS_MAX 4096
#define PLUG_PARALLEL_DEFAULT 8
#define PLUG_RECORD "rtid-cuda.txt" /* in the image directory */
#define PLUG_MAP_FILE "rtid-cuda-map.txt" /* an operator's device map, beside it */

enum plug_level { PLUG_ERR = 1, PLUG_WARN, PLUG_INFO, PLUG_DEBUG };
enum plug_stage { PLUG_DUMP, PLUG_PRE_DUMP, PLUG_RESTORE };
enum plug_state { ST_UNKNOWN = -1, ST_RUNNING, ST_LOCKED, ST_CHECKPOINTED };

/* --- plug-criu.c: CRIU's internals, for the version built against --- */
/* A line in CRIU's log at level, with the plugin's prefix, and "error: " or
 * "warning: " after it at those levels. */
void plug_log(enum plug_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* 0 when the running CRIU is the version the plugin was built for (its
 * version string and the size of its options agree), else -EPROTO with why. */
int plug_criu_check(char *why, size_t len);
unsigned plug_criu_timeout_s(void);     /* --timeout */
bool plug_criu_leave_running(void);     /* -R: the tree lives on after the dump */
bool plug_criu_alarm(void);             /* CRIU's --timeout alarm went off */
int plug_criu_inventory_add(void);      /* 0 or -1: the dump needs cuda_plugin */
bool plug_criu_inventory_take(void);    /* the dump needed cuda_plugin (restore) */
void plug_criu_interrupt_only(void);    /* the freezer must leave our thread alone */
void plug_criu_kill(int pid);           /* SIGKILL to a restored task */
int plug_criu_image_dir(void);          /* CRIU's descriptor of the image directory */
/* This CRIU run's id (a dump writes it into the image's inventory), and at a
 * restore the id the image's inventory holds ("" when it holds none). */
const char *plug_criu_run_id(void);
const char *plug_criu_dump_run_id(void);
/* The host pids of the tasks CRIU will call RESUME_DEVICES_LATE for, in its
 * order, from CRIU's task tree: the first max in pids, and how many there
 * are (more than max when they do not fit). */
size_t plug_criu_tasks(int *pids, size_t max);
struct plug_sigset {
	uint64_t w[2];
};
/* Let the restore thread run (all signals but SIGTRAP blocked, its mask in
 * *save), and stop it again with its mask back; on CRIU's thread, which
 * traces it. 0 or -1 (said in the log). */
int plug_thread_resume(int tid, struct plug_sigset *save);
int plug_thread_interrupt(int tid, const struct plug_sigset *save);

/* --- plug-ops.c: the real tool, spawned as CRIU's plugin spawns it --- */
/* Run cuda-checkpoint (found on PATH) with args (argv[1..], NULL-ended):
 * stdout and stderr into buf (NUL-terminated, the rest drained). Its exit
 * status, or -1 when it could not run or was killed. */
int plug_tool_run(const char *const *args, char *buf, size_t len);
/* Whether the tool is there and knows --action (CRIU's plugin's init test). */
bool plug_tool_usable(void);

/* --- plug-serve.c: rtid serve --- */
enum plug_ans {
	ANS_VALUE,   /* *value: the tid, the state, or 0 for a done action */
	ANS_NONE,    /* a query: no CUDA in this process */
	ANS_FAILED,  /* failed (msg): the driver's error, an outcome the daemon cannot
		      * tell, or a call that may be in the driver: never to the tool */
	ANS_TO_TOOL, /* the daemon is absent or refused for its own reasons, nothing
		      * started: the tool's turn */
	ANS_ALONE,   /* a batch's pid not answered in it: ask it in a request of its own */
};
/* The daemon's settings from the shim's settings file (RTID_SHIM_CONF, else
 * /etc/rtid/shim.conf, the default compiled in) where the environment lacks them: RTID_SOCKET,
 * RTID_SERVE_UID, RTID_SERVICE_TIMEOUT, RTID_SERVICE_ACTION_TIMEOUT, and the
 * plugin's own RTID_PLUGIN_NO_CUDA_ON_ERROR; each fault of the file to note
 * (plug_conf_note: CRIU's log). Engines run CRIU with an environment of
 * their own. */
void plug_serve_settings(void (*note)(void *ctx, const char *what));
/* Whether a daemon is set up (its socket exists). */
bool plug_serve_present(void);
/* Ask the daemon op (enum rtid__worker_op) for pid. Thread-safe; no spawn.
 * Queries go on a connection kept until plug_serve_close. */
enum plug_ans plug_serve_ask(int op, int pid, unsigned timeout_ms, int *value, char *msg,
			     size_t len);
/* Ask the daemon op (a query) for pids[0..n) in as few requests as fit
 * (batches, on the kept connection): ans[i] for pids[i] (values[i] with
 * ANS_VALUE; msgs[i] with ANS_FAILED or ANS_TO_TOOL), ANS_ALONE where the
 * daemon did not answer it in a batch (one that takes none included). */
void plug_serve_batch(int op, const int *pids, size_t n, enum plug_ans *ans, int *values,
		      char (*msgs)[160]);
/* The start of the CRIU run: the kept connection opened, its peer proven and
 * its greeting read (a failure left to the first question to meet). */
void plug_serve_open(void);
/* The end of the CRIU run: the kept connection closed. */
void plug_serve_close(void);
/* This restore's device map: every restore asked of the daemon carries it
 * (on a connection of protocol 3: a daemon without maps refuses it, and the
 * tool gets it), and the tool's restore gets it as --device-map. */
void plug_serve_map(const struct rtid__devmap *m);
/* The map in the tool's syntax into buf: its length, 0 for none. */
size_t plug_serve_map_text(char *buf, size_t len);

/* --- plug-ops.c: one call, the daemon first, else the tool (CRIU's thread) --- */
/* The restore tid: > 0, 0 for none (no CUDA), -1 on an error. The tid is a
 * live thread of pid. */
int plug_restore_tid(int pid);
/* Whether tid is a live thread of pid now. */
bool plug_thread_of(int pid, int tid);
/* The state of pid's CUDA by its restore thread tid, the daemon's answer or
 * the tool's: ST_UNKNOWN when neither gives one (said). */
enum plug_state plug_get_state(int pid, int tid);
/* An action: 0 or -1 (msg). tool: the daemon said "the tool's turn". */
int plug_act_tool(int op, int pid, unsigned timeout_ms, char *msg, size_t len);
int plug_act(int op, int pid, unsigned timeout_ms, char *msg, size_t len);

/* --- plug-ahead.c: answers asked ahead, each bound to its process --- */
/* Restore tids asked ahead: of pids[0..n), asked of the daemon in batches,
 * each bound to its process (frozen: by CRIU's freeze of the tree; else by a
 * pidfd taken first, for the first 512, or its start time), kept until
 * plug_ahead_clear or the next plug_ahead_ask. */
void plug_ahead_ask(const int *pids, size_t n, bool frozen);
void plug_ahead_clear(void);
/* plug_ahead_ask for every task of CRIU's tree but those skip names (none
 * when the tree has more than PLUG_TASKS_MAX). */
void plug_ahead_tree(bool (*skip)(int pid));
/* plug_ahead_ask for pid's descendants as /proc shows them now. */
void plug_ahead_below(int pid);
/* pid's restore tid as plug_restore_tid says it, from the answer asked
 * ahead when there is one for the process that has the pid now (and, with
 * none_only, only an answer of none; a tid is a live thread of pid); else
 * asked alone. */
int plug_ahead_tid(int pid, bool none_only);
/* Seconds spent so far on the whole tree's behalf: in plug_ahead_ask and
 * plug_record_match (the cost of the tasks they were for, whichever hook
 * call paid it), and adding to it. */
double plug_ahead_s(void);
void plug_tree_charge(double s);

/* plug-init.c: whether the plugin works at stage s (init): -1 refused (the running CRIU
 * is not the one built for, said), 0 disabled (a pre-dump, an image CRIU's
 * plugin did not need, no GPU, neither daemon nor tool), 1 enabled; the
 * settings read on the way. */
int plug_enabled(enum plug_stage s);
/* A fault of the settings file, said in CRIU's log (plug_serve_settings). */
void plug_conf_note(void *ctx, const char *what);

/* --- plug-run.c: actions side by side, K at a time, on threads that only
 * talk to the daemon --- */
struct plug_job {
	int pid;
	int ops[2], nops; /* run in order; the second only after the first is done */
	/* Filled by the run: how many ops are done, and how it ended. */
	int done;
	enum plug_ans end; /* ANS_VALUE: all done; ANS_FAILED; ANS_TO_TOOL from ops[done] */
	char msg[128];
	int state; /* 0 not to run, 1 queued, 2 running, 3 ended */
};
/* Start the jobs of v (n of them) whose state is 1 on at most k threads,
 * after the set before has ended (plug_run_settle). Where no thread starts
 * (k 0, or pthread_create fails), they run here, one by one, before it
 * returns: 0, or the negative errno of that failure. */
int plug_run_start(struct plug_job *jobs, size_t n, unsigned k);
/* Wait for job j (one of the started) to end. */
void plug_run_wait(struct plug_job *j);
/* Wait for every started job and the threads. */
void plug_run_settle(void);
/* The setting: RTID_PLUGIN_PARALLEL (1..64), else the default. */
unsigned plug_run_parallel(void);

/* --- plug-record.c: which tasks were CUDA tasks, in the image directory --- */
/* The last NSpid: entry of pid (its pid in the innermost namespace), or -1:
 * from /proc, or from the proc tree at proc_root. */
int plug_nspid(int pid);
int plug_nspid_at(const char *proc_root, int pid);
#define PLUG_RUN_MAX 64 /* a CRIU run id (a UUID) and its NUL */
/* Write the record of the dump of CRIU run run: the ns pids of the CUDA
 * tasks and the driver version, whole or not at all (a new file renamed over
 * the old). 0, or a negative errno and no record of an earlier dump left. */
int plug_record_write(int dirfd, const char *run, const int *nspids, size_t n);
/* The record of this dump: the CUDA tasks pids[0..n), by their ns pids,
 * bound to this CRIU run, in CRIU's image directory; whole or none (an
 * earlier dump's record left in a reused directory would name the wrong
 * tasks). A failure is said in CRIU's log. */
void plug_record_dump(const int *pids, size_t n);
/* pid and its descendants as /proc shows them now (each main thread's
 * children file: a child of another thread is left out), breadth first: the
 * first max into pids, and how many were found. */
size_t plug_descendants(int pid, int *pids, size_t max);
/* Which of pids[0..np) (CRIU's tree at a restore) the record's ns pids
 * ns[0..n) name: named[i] 1 named, 0 not, -1 no NSpid to tell (said in
 * CRIU's log: asked alone). */
void plug_record_match(const int *pids, size_t np, const int *ns, size_t n, signed char *named);
/* No record in the directory (any earlier one removed): 0 or -errno. */
int plug_record_remove(int dirfd);
/* Read it: 0, the ns pids (*n) and the run id of the dump that wrote it
 * (run, PLUG_RUN_MAX bytes; "" in a record without one); -ENOENT without a
 * record, or -EINVAL. Nothing written on failure. */
int plug_record_read(int dirfd, int *nspids, size_t max, size_t *n, char *run);
/* The device map beside the images (PLUG_MAP_FILE in dirfd): 0 with map
 * (cap bytes, not yet checked as a map) and run (PLUG_RUN_MAX bytes);
 * -ENOENT without one; -EPERM when someone but root or us could write it,
 * or it is no regular file; -ELOOP for a link; -EINVAL when malformed (*line:
 * the line at fault, from 1; 0: no run or no map line); -EIO when it cannot
 * be opened. */
int plug_map_read(int dirfd, char *map, size_t cap, char *run, unsigned *line);

/* --- plug-ops.c, too: a process whose GPU state cannot be had --- */
/* At a dump (hook: its name, for the log): -1, the dump fails, said; or 0,
 * dumped without GPU state, with a warning, under
 * RTID_PLUGIN_NO_CUDA_ON_ERROR=1. */
int plug_untold(const char *hook, int pid);
/* At a restore: why the task is killed, said at error level (the hook kills
 * it, plug_criu_kill). -1. */
int plug_lose(int pid, const char *why);

/* --- plug-hooks.c: the hooks --- */
int plug_init(enum plug_stage stage);
void plug_fini(enum plug_stage stage, int ret);
int plug_pause(int pid);
int plug_checkpoint(int pid);
int plug_resume_late(int pid);
/* Whether pid is a task of this run's with CUDA state (a restore tid). */
bool plug_cuda_task(int pid);

/* --- plug-init.c, too: the plugin's own cost per hook --- */
enum plug_hook { PLUG_H_PAUSE, PLUG_H_CHECKPOINT, PLUG_H_RESUME, PLUG_H_COUNT };
struct plug_cost {
	double init_s;
	double s[PLUG_H_COUNT][2]; /* [hook][with CUDA]: seconds in the hook */
	unsigned n[PLUG_H_COUNT][2];
};
void plug_cost_add(struct plug_cost *c, enum plug_hook h, bool cuda, double s);
/* One line in CRIU's log at debug level, when any hook was called:
 * "hook cost: init 12 us; PAUSE_DEVICES 17 without CUDA 850 us, 1 with 900
 * us; ..." (the sums, in microseconds). */
void plug_cost_say(const struct plug_cost *c);

#endif
