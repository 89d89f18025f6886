/* Looking up a process or a task of the model: below everything else of the
 * model, so that the faults, the listing and the access all reach it. */
#include "model-int.h"

struct task *fp__task_of(struct fp_model *m, int pid, int tid)
{
	for (size_t i = 0; i < m->ntasks; i++)
		if (m->tasks[i].pid == pid && m->tasks[i].tid == tid)
			return &m->tasks[i];
	return NULL;
}

struct proc *fp__proc_of(struct fp_model *m, int pid)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}
