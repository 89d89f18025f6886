/* The fake /proc's model. The rules mirror the kernel where the resolver
 * looks: a listed task may be gone by the time it is opened, names change
 * between reads, a whole process may disappear mid-walk. */
#include "model-int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/parse.h"
#include "rtid.h"

/* Back to the case's first state; armed faults are re-armed unfired. */
void fp__reset(struct fp_model *m)
{
	m->rng = 0x9e3779b97f4a7c15ULL ^ m->c->seed;
	for (size_t i = 0; i < m->c->ntasks; i++) {
		const struct cf_task *t = &m->c->tasks[i];

		m->tasks[i] = (struct task){ .pid = t->pid, .tid = t->tid,
					     .comm_len = t->comm_len, .no_newline = t->no_newline };
		memcpy(m->tasks[i].comm, t->comm, t->comm_len);
	}
	for (size_t i = m->c->ntasks; i < m->ntasks; i++) {
		m->tasks[i].hidden = true; /* appearing tasks wait for their trigger */
		m->tasks[i].reads = 0;
	}
	for (size_t i = 0; i < m->nprocs; i++)
		m->procs[i] = (struct proc){ .pid = m->c->pids[i] };
	for (size_t i = 0; i < m->nfaults; i++)
		m->faults[i].fired = false;
	/* An untriggered exit: the process is gone before anyone looks. */
	fp__fire(m, &(struct fp_access){ .at = FP_AT_START }, &(struct fp_effect){ 0 });
}

/* An "appear" fault adds a task that the case does not list. */
int fp__add_appearing(struct fp_model *m, const struct cf_fault *f)
{
	struct task *t = realloc(m->tasks, (m->ntasks + 1) * sizeof(*t));

	if (!t)
		return -ENOMEM;
	m->tasks = t;
	t = &m->tasks[m->ntasks++];
	*t = (struct task){ .pid = f->pid, .tid = f->tid, .comm_len = f->name_len, .hidden = true };
	memcpy(t->comm, f->name, f->name_len);
	return 0;
}

int fp_model_new(const struct casefile *c, struct fp_model **out)
{
	struct fp_model *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	m->c = c;
	m->ntasks = c->ntasks;
	m->nprocs = c->nprocs;
	m->tasks = calloc(c->ntasks + 1, sizeof(*m->tasks));
	m->procs = calloc(c->nprocs + 1, sizeof(*m->procs));
	if (!m->tasks || !m->procs) {
		fp_model_free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->nfaults; i++)
		fp__arm(m, &c->faults[i]);
	fp__reset(m);
	for (size_t i = 0; i < m->nfaults; i++)
		if (m->faults[i].f.kind == CF_F_APPEAR && fp__add_appearing(m, &m->faults[i].f) < 0) {
			fp_model_free(m);
			return -ENOMEM;
		}
	*out = m;
	return 0;
}

void fp_model_free(struct fp_model *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m->tasks);
	free(m->procs);
	free(m->control_text);
	free(m);
}

int fp_path_parse(const char *path, struct fp_path *out)
{
	char buf[256], *parts[6];
	size_t n = 0;
	struct fp_path p = { FP_ROOT, 0, 0 };

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENOENT;
	/* The components between slashes; empty ones ("//", a trailing '/') are skipped. */
	for (char *w = buf, *end; *w; w = end) {
		end = w + strcspn(w, "/");
		if (*end)
			*end++ = '\0';
		if (!*w)
			continue;
		if (n == 5)
			return -ENOENT;
		parts[n++] = w;
	}
	if (n >= 1 && !strcmp(parts[0], "rtid-control"))
		p.node = n == 1 ? FP_CONTROL : -1;
	else if (n >= 1 && !strcmp(parts[0], "driver"))
		p.node = n == 1 ? FP_DRIVER
		       : n == 2 && !strcmp(parts[1], "nvidia") ? FP_DRIVER_NVIDIA
		       : n == 3 && !strcmp(parts[1], "nvidia") && !strcmp(parts[2], "version")
			       ? FP_VERSION : -1;
	else if (n >= 1 && rtid__parse_pid(parts[0], &p.pid) == 0)
		p.node = n == 1 ? FP_PID
		       : n == 2 && !strcmp(parts[1], "comm") ? FP_PID_COMM
		       : n == 2 && !strcmp(parts[1], "status") ? FP_PID_STATUS
		       : n >= 2 && strcmp(parts[1], "task") ? -1
		       : n == 2 ? FP_TASKDIR
		       : rtid__parse_pid(parts[2], &p.tid) ? -1
		       : n == 3 ? FP_TASK
		       : n == 4 && !strcmp(parts[3], "comm") ? FP_TASK_COMM : -1;
	else if (n != 0)
		return -ENOENT;
	if ((int)p.node < 0)
		return -ENOENT;
	*out = p;
	return 0;
}

