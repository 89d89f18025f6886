/* The fake /proc model's insides, shared by its files. */
#ifndef FAKEPROC_MODEL_INT_H
#define FAKEPROC_MODEL_INT_H

#include <pthread.h>

#include "model.h"

#define MAX_FAULTS 512

struct task {
	int pid, tid;
	char comm[CF_COMM_MAX + 1];
	size_t comm_len;
	bool no_newline, hidden; /* hidden: appears later, or has exited */
	int reads;               /* opens of its comm */
};

struct proc {
	int pid;
	bool exited;
	int reads;
	int pending; /* comm opens left in the walk that listed them all */
};

struct fault {
	struct cf_fault f;
	bool fired;
};

struct fp_model {
	pthread_mutex_t lock;
	const struct casefile *c;
	struct task *tasks;
	size_t ntasks;
	struct proc *procs;
	size_t nprocs;
	struct fault faults[MAX_FAULTS];
	size_t nfaults;
	char *control_text;
	unsigned long long rng; /* for faults with a probability; reset restarts it */
};

/* The accesses at which faults fire (model-faults.c). */
enum fp_at {
	FP_AT_START,  /* the model is (re)set: exits without a trigger */
	FP_AT_LOOKUP, /* a task is looked up: vanish */
	FP_AT_LIST,   /* a task directory is listed: readdir-chunk */
	FP_AT_WALK,   /* a point of the walk (when): exit, exit-thread, rename */
	FP_AT_OPEN,   /* a comm is opened: at-read faults, open errors */
	FP_AT_READ,   /* an open comm is read: delay, short-read, read errors */
};

struct fp_access {
	enum fp_at at;
	int pid, tid;          /* the process (canonical) and the task, where one is meant */
	enum cf_trigger when;  /* FP_AT_WALK */
};

/* What the access itself must do, after the faults changed the model. */
struct fp_effect {
	int err;        /* FP_AT_OPEN, FP_AT_READ: 0 or the negative errno to return */
	bool vanished;  /* FP_AT_LOOKUP: the task is not there */
	size_t chunk;   /* FP_AT_LIST: task entries per readdir call, 0: all */
	int delay_ms;   /* FP_AT_READ: pause before answering */
	size_t max;     /* FP_AT_READ: most bytes this read returns */
};

/* Fire the armed faults that apply at access a (rolling the probability of
 * each one that can), change the model as they say, and fill *e. An
 * FP_AT_OPEN counts the open of a's comm, whose task must exist. */
void fp__fire(struct fp_model *m, const struct fp_access *a, struct fp_effect *e);
/* True with probability p (1: always), from the case's seeded generator. */
bool fp__roll(struct fp_model *m, double p);
/* Add a fault, unfired; -ENOSPC past MAX_FAULTS. */
int fp__arm(struct fp_model *m, const struct cf_fault *f);
/* Back to the case's first state; armed faults are re-armed unfired. */
void fp__reset(struct fp_model *m);
/* Add the hidden task an "appear" fault shows later: 0 or -ENOMEM. */
int fp__add_appearing(struct fp_model *m, const struct cf_fault *f);
/* The task pid/tid, or NULL. */
struct task *fp__task_of(struct fp_model *m, int pid, int tid);
/* Whether the task is there now: its process alive, itself not hidden nor vanished
 * (which rolls the vanish faults' probability). */
bool fp__task_visible(struct fp_model *m, int pid, int tid);
/* The path as the process it names (a thread's /proc/TID is its process's);
 * *shown: the number in the path. */
struct fp_path fp__canon(struct fp_model *m, const struct fp_path *p, int *shown);
/* fp_exists with the lock held: 0 or -ENOENT. */
int fp__exists_locked(struct fp_model *m, const struct fp_path *p);
/* The process pid of the case, or NULL. */
struct proc *fp__proc_of(struct fp_model *m, int pid);

#endif
