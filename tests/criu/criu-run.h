/* Running the real CRIU with its real CUDA plugin on test processes: where
 * CRIU is, starting the stand-in GPU processes, dump and restore, and what
 * the plugin and the mock tool saw. */
#ifndef RTID_CRIU_RUN_H
#define RTID_CRIU_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define TREE_MAX 128 /* a bench's 103 processes and a root */
#define THREADS_MAX 8
#define CALLS_MAX 64

struct criu_env {
	char criu[PATH_MAX];   /* the criu binary */
	char libdir[PATH_MAX]; /* the folder holding cuda_plugin.so (-L) */
};

/* CRIU and its plugin: RTID_CRIU_DIR, else RTID_SOURCE_ROOT/../shared/tools/criu
 * when it exists, else a criu >= 4.1 on PATH with cuda_plugin.so beside it (or
 * in ../lib/criu). Returns 0, or -1 with the reason in why. */
int criu_find(struct criu_env *e, char *why, size_t len);

/* A stand-in process (tests/criu/task.c): its pid, the thread named like the
 * driver's restore thread (0: none, a process without CUDA), every thread. */
struct proc {
	int pid, restore_tid;
	int tids[THREADS_MAX];
	int ntids;
};
struct tree {
	struct proc p[TREE_MAX];
	int n;
};

/* Start the task (tree: with two children, the second without CUDA) and
 * wait for its report. Returns 0 or -1. Every process started is killed when
 * the test exits or is ended by a signal, while it is still a stand-in. */
int task_start(bool tree, struct tree *t);
/* The same with cuda_children more children like the parent (their lines
 * first), and the tree's two when tree. */
int task_start_n(bool tree, int cuda_children, struct tree *t);
/* A root like the task's (cuda: with its restore thread, else none), with
 * cuda_children children that have one and plain_children that have none. */
int task_start_mix(bool cuda, int cuda_children, int plain_children, struct tree *t);
/* A child of the test's (a daemon) killed as those processes are, while it
 * is not reaped. */
void criu_remember_child(pid_t pid);

/* Run criu with args under dir (stdout and stderr to dir/criu.out), PATH set
 * to path. Returns its exit status (0-255), or -1. */
int criu_run(const struct criu_env *e, const char *dir, const char *path, char *const args[]);

/* Reap the tree's processes after a dump killed them (root first, so that
 * its children have come to this subreaper), or kill and reap them. */
void tree_reap(const struct tree *t);
void tree_kill(const struct tree *t);

/* Every thread of p exists and keeps running (its voluntary context switches
 * grow within a few seconds): none was left stopped. */
bool proc_runs(const struct proc *p);

/* The comm of thread tid of pid into buf (no newline). Returns 0 or -1. */
int thread_comm(int pid, int tid, char *buf, size_t len);

/* The mock's calls, in order, as "ARGS" without argv[0] ("--action lock --pid
 * 12 --timeout 10000"); only those naming one of pids when pids is not NULL. */
int mock_calls(const char *log, const int *pids, size_t npids, char out[][96], int max);

/* Whether the file holds the text. */
bool file_has(const char *path, const char *text);

#endif
