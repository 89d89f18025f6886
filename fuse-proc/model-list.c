/* Listing the fake /proc's directories, with the kernel's rules for task
 * directories: entries in thread-list order, and a walk that takes several
 * calls resumes as proc_task_readdir does. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model-int.h"
#include "basic/parse.h"
#include "rtid.h"

/* Directory entries in a fixed order; returns how many, writing names. */
static size_t entries(struct fp_model *m, const struct fp_path *d, char (*names)[16], size_t max)
{
	static const char *const pidents[] = { "comm", "status", "task" };
	size_t n = 0;

	strcpy(names[n++], ".");
	strcpy(names[n++], "..");
	if (d->node == FP_ROOT) {
		for (size_t i = 0; i < m->nprocs && n < max; i++)
			if (!m->procs[i].exited)
				snprintf(names[n++], 16, "%d", m->procs[i].pid);
		if (m->c->version_file && n < max)
			strcpy(names[n++], "driver");
		if (n < max)
			strcpy(names[n++], "rtid-control");
	} else if (d->node == FP_PID) {
		for (size_t i = 0; i < 3; i++)
			strcpy(names[n++], pidents[i]);
	} else if (d->node == FP_TASKDIR) {
		/* Vanishing tasks are listed: they go between readdir and open. */
		for (size_t i = 0; i < m->ntasks && n < max; i++)
			if (m->tasks[i].pid == d->pid && !m->tasks[i].hidden)
				snprintf(names[n++], 16, "%d", m->tasks[i].tid);
	} else if (d->node == FP_DRIVER) {
		strcpy(names[n++], "nvidia");
	} else if (d->node == FP_DRIVER_NVIDIA) {
		strcpy(names[n++], "version");
	}
	return n;
}

/* Offsets of a task directory carry what the kernel keeps between two
 * getdents calls: the position of the next entry (high half) and its tid
 * (low half). */
static off_t task_offset(char (*names)[16], size_t n, size_t next)
{
	int tid = 0;

	if (next < n && rtid__parse_pid(names[next], &tid) < 0)
		tid = 0;
	return (off_t)(((uint64_t)next << 32) | (uint32_t)tid);
}

/* The kernel's resume rule (proc_task_readdir, first_tid): from the saved
 * tid if that thread is still there, else by position from the start of the
 * list as it is now, which skips threads when earlier ones have exited. */
static size_t resume_index(char (*names)[16], size_t n, off_t off)
{
	size_t pos = (size_t)((uint64_t)off >> 32);
	int tid = (int)(uint32_t)off, t;

	for (size_t i = 2; tid && i < n; i++)
		if (rtid__parse_pid(names[i], &t) == 0 && t == tid)
			return i;
	return pos;
}

/* Fire the faults of pid that wait for this point of the walk. */
static void walk_point(struct fp_model *m, int pid, enum cf_trigger when)
{
	struct fp_effect e;

	fp__fire(m, &(struct fp_access){ .at = FP_AT_WALK, .pid = pid, .when = when }, &e);
}

/* Task entries one readdir call may return (a readdir-chunk fault), 0: all. */
static size_t chunk_of(struct fp_model *m, int pid)
{
	struct fp_effect e;

	fp__fire(m, &(struct fp_access){ .at = FP_AT_LIST, .pid = pid }, &e);
	return e.chunk;
}

static int list_locked(struct fp_model *m, const struct fp_path *dir, off_t offset,
		       int (*fill)(void *ctx, const char *name, off_t next), void *ctx,
		       char (*names)[16], size_t max)
{
	bool tasks = dir->node == FP_TASKDIR;
	size_t n, i, sent = 0, chunk = tasks ? chunk_of(m, dir->pid) : 0;
	int r = fp__exists_locked(m, dir);

	if (r < 0)
		return r;
	n = entries(m, dir, names, max);
	i = tasks ? resume_index(names, n, offset) : (size_t)offset;
	for (; i < n; i++) {
		if (chunk && i >= 2 && sent == chunk)
			break;
		if (fill(ctx, names[i], tasks ? task_offset(names, n, i + 1) : (off_t)i + 1))
			break;
		sent += i >= 2;
	}
	if (!tasks)
		return 0;
	if (offset == 0)
		walk_point(m, dir->pid, CF_T_AFTER_READDIR);
	/* A walk lists, then opens each listed comm: it is over once the last
	 * of those opens is done (walk_step), or when a walk that interleaves
	 * the two asks past the end. */
	if (i >= n && sent > 0)
		fp__proc_of(m, dir->pid)->pending = (int)(n - 2);
	else if (i >= n)
		walk_point(m, dir->pid, CF_T_AFTER_WALK);
	return 0;
}

int fp_list(struct fp_model *m, const struct fp_path *path, off_t offset,
	    int (*fill)(void *ctx, const char *name, off_t next), void *ctx)
{
	size_t max = m->ntasks + m->nprocs + 8;
	char (*names)[16] = calloc(max, sizeof(*names));
	struct fp_path dir;
	int r, shown;

	if (!names)
		return -ENOMEM;
	pthread_mutex_lock(&m->lock);
	dir = fp__canon(m, path, &shown);
	r = list_locked(m, &dir, offset, fill, ctx, names, max);
	pthread_mutex_unlock(&m->lock);
	free(names);
	return r;
}
