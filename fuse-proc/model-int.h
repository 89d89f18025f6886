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

/* True with probability p (1: always), from the case's seeded generator. */
bool fp__roll(struct fp_model *m, double p);
int fp__arm(struct fp_model *m, const struct cf_fault *f);
void fp__reset(struct fp_model *m);
int fp__add_appearing(struct fp_model *m, const struct cf_fault *f);
struct task *fp__task_of(struct fp_model *m, int pid, int tid);
bool fp__task_visible(struct fp_model *m, int pid, int tid);
/* The path as the process it names (a thread's /proc/TID is its process's);
 * *shown: the number in the path. */
struct fp_path fp__canon(struct fp_model *m, const struct fp_path *p, int *shown);
int fp__exists_locked(struct fp_model *m, const struct fp_path *p);
/* Fire the faults of pid that wait for a point of the walk. */
void fp__fire_walk(struct fp_model *m, int pid, enum cf_trigger when);
struct proc *fp__proc_of(struct fp_model *m, int pid);

#endif
