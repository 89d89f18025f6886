/* What each access to the fake /proc sees; the faults it sets off are decided in model-faults.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model-int.h"

static bool proc_alive(struct fp_model *m, int pid)
{
	struct proc *p = fp__proc_of(m, pid);

	return p && !p->exited;
}

bool fp__task_visible(struct fp_model *m, int pid, int tid)
{
	struct task *t = fp__task_of(m, pid, tid);
	struct fp_effect e;

	if (!proc_alive(m, pid) || !t || t->hidden)
		return false;
	fp__fire(m, &(struct fp_access){ .at = FP_AT_LOOKUP, .pid = pid, .tid = tid }, &e);
	return !e.vanished;
}

/* The kernel serves every thread as <proc>/<tid> too, hidden from the
 * root's listing: such a path is its process's, seen from that thread (its
 * comm, Pid: the tid). *shown is the number in the path. */
struct fp_path fp__canon(struct fp_model *m, const struct fp_path *p, int *shown)
{
	struct fp_path q = *p;

	*shown = p->pid;
	if (p->node < FP_PID || fp__proc_of(m, p->pid))
		return q;
	for (size_t i = 0; i < m->ntasks; i++)
		if (m->tasks[i].tid == p->pid && fp__task_visible(m, m->tasks[i].pid, p->pid)) {
			q.pid = m->tasks[i].pid;
			break;
		}
	return q;
}

int fp__exists_locked(struct fp_model *m, const struct fp_path *path)
{
	int shown;
	struct fp_path c = fp__canon(m, path, &shown);
	const struct fp_path *p = &c;

	switch (p->node) {
	case FP_ROOT:
	case FP_CONTROL:
		return 0;
	case FP_DRIVER:
	case FP_DRIVER_NVIDIA:
	case FP_VERSION:
		return m->c->version_file ? 0 : -ENOENT;
	case FP_PID:
	case FP_PID_COMM:
	case FP_PID_STATUS:
	case FP_TASKDIR:
		return proc_alive(m, p->pid) ? 0 : -ENOENT;
	case FP_TASK:
	case FP_TASK_COMM:
		return fp__task_visible(m, p->pid, p->tid) ? 0 : -ENOENT;
	}
	return -ENOENT;
}

int fp_exists(struct fp_model *m, const struct fp_path *p)
{
	int r;

	pthread_mutex_lock(&m->lock);
	r = fp__exists_locked(m, p);
	pthread_mutex_unlock(&m->lock);
	return r;
}

static int text(char **buf, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int text(char **buf, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	*len = (size_t)n;
	return 0;
}

static struct task *main_task(struct fp_model *m, int pid)
{
	struct task *t = fp__task_of(m, pid, pid);

	for (size_t i = 0; !t && i < m->ntasks; i++)
		if (m->tasks[i].pid == pid)
			t = &m->tasks[i];
	return t;
}

static int count_tasks(struct fp_model *m, int pid)
{
	int n = 0;

	for (size_t i = 0; i < m->ntasks; i++)
		n += m->tasks[i].pid == pid && !m->tasks[i].hidden;
	return n;
}

static int control_text(struct fp_model *m, char **buf, size_t *len)
{
	size_t cap = 128 + m->nfaults * 128, o = 0;
	char *s = malloc(cap);

	if (!s)
		return -ENOMEM;
	o += (size_t)snprintf(s + o, cap - o, "# armed faults (%zu)\n", m->nfaults);
	for (size_t i = 0; i < m->nfaults; i++) {
		char line[112];

		cf_format_fault(&m->faults[i].f, line, sizeof(line));
		o += (size_t)snprintf(s + o, cap - o, "%s%s\n", line,
				      m->faults[i].fired ? "  # fired" : "");
	}
	*buf = s;
	*len = o;
	return 0;
}

/* A status as the kernel orders it where the resolver looks: Tgid: first,
 * Groups: (the case's supplementary groups, each after a space but the
 * first, and a space at the end, as 6.x writes it; thousands make the file
 * larger than any buffer a reader would pick) before Threads:. */
static int status_text(struct fp_model *m, char **buf, size_t *len, const struct task *t, int pid,
		       int shown)
{
	char *groups = malloc((size_t)m->c->groups * 12 + 2);
	size_t n = 0;
	int r;

	if (!groups)
		return -ENOMEM;
	for (unsigned g = 0; g < m->c->groups; g++)
		n += (size_t)sprintf(groups + n, "%s%u", g ? " " : "", 100000 + g);
	strcpy(groups + n, " "); /* the kernel ends the line with a space, also with no group */
	r = text(buf, len, "Name:\t%.*s\nTgid:\t%d\nPid:\t%d\nGroups:\t%s\nThreads:\t%d\n",
		 (int)t->comm_len, t->comm, pid, shown, groups, count_tasks(m, pid));
	free(groups);
	return r;
}

static int open_locked(struct fp_model *m, const struct fp_path *path, char **buf, size_t *len)
{
	int shown;
	struct fp_path c = fp__canon(m, path, &shown);
	const struct fp_path *p = &c;
	struct task *t;
	struct fp_effect e;
	int r = fp__exists_locked(m, p);

	if (r < 0)
		return r;
	switch (p->node) {
	case FP_CONTROL:
		return control_text(m, buf, len);
	case FP_VERSION:
		return text(buf, len, "%s", m->c->version_file);
	case FP_PID_COMM:
		t = shown != p->pid ? fp__task_of(m, p->pid, shown) : main_task(m, p->pid);
		return text(buf, len, "%.*s\n", (int)t->comm_len, t->comm);
	case FP_PID_STATUS:
		t = shown != p->pid ? fp__task_of(m, p->pid, shown) : main_task(m, p->pid);
		return status_text(m, buf, len, t, p->pid, shown);
	case FP_TASK_COMM:
		fp__fire(m, &(struct fp_access){ .at = FP_AT_OPEN, .pid = p->pid, .tid = p->tid }, &e);
		if (e.err < 0)
			return e.err;
		t = fp__task_of(m, p->pid, p->tid);
		return text(buf, len, "%.*s%s", (int)t->comm_len, t->comm, t->no_newline ? "" : "\n");
	default:
		return -EISDIR;
	}
}

/* One more comm of the last listing opened (found or not). */
static void walk_step(struct fp_model *m, const struct fp_path *p)
{
	struct proc *pr = fp__proc_of(m, p->pid);

	struct fp_effect e;

	if (p->node == FP_TASK_COMM && pr && pr->pending > 0 && --pr->pending == 0)
		fp__fire(m, &(struct fp_access){ .at = FP_AT_WALK, .pid = p->pid,
						 .when = CF_T_AFTER_WALK }, &e);
}

int fp_open(struct fp_model *m, const struct fp_path *p, char **buf, size_t *len)
{
	int r;

	pthread_mutex_lock(&m->lock);
	r = open_locked(m, p, buf, len);
	walk_step(m, p);
	pthread_mutex_unlock(&m->lock);
	return r;
}

int fp_read_faults(struct fp_model *m, const struct fp_path *p, int *delay_ms, size_t *max)
{
	struct fp_effect e = { .max = (size_t)-1 };
	struct task *t;
	int gone = 0;

	if (p->node == FP_TASK_COMM) {
		pthread_mutex_lock(&m->lock);
		/* A comm opened before its thread exited reads ESRCH, as on the kernel. */
		t = fp__task_of(m, p->pid, p->tid);
		if (!t || t->hidden || !proc_alive(m, p->pid))
			gone = -ESRCH;
		fp__fire(m, &(struct fp_access){ .at = FP_AT_READ, .pid = p->pid, .tid = p->tid }, &e);
		pthread_mutex_unlock(&m->lock);
	}
	*delay_ms = e.delay_ms;
	*max = e.max;
	return e.err < 0 ? e.err : gone;
}

static int control_line(struct fp_model *m, const char *line)
{
	struct cf_fault f;
	char err[256];
	int r;

	if (!strcmp(line, "reset")) {
		fp__reset(m);
		return 0;
	}
	if (!strcmp(line, "clear")) {
		m->nfaults = 0;
		return 0;
	}
	if (strncmp(line, "fault ", 6) || cf_parse_fault(line + 6, &f, err, sizeof(err)) < 0)
		return -EINVAL;
	if (f.kind == CF_F_APPEAR && (r = fp__add_appearing(m, &f)) < 0)
		return r;
	return fp__arm(m, &f);
}

int fp_control(struct fp_model *m, const char *buf, size_t len)
{
	char line[512];
	size_t b = 0;
	int r = 0;

	pthread_mutex_lock(&m->lock);
	while (r == 0 && b < len) {
		size_t e = b;

		while (e < len && buf[e] != '\n')
			e++;
		if (e - b >= sizeof(line))
			r = -EINVAL;
		else if (e > b) {
			memcpy(line, buf + b, e - b);
			line[e - b] = '\0';
			r = control_line(m, line);
		}
		b = e + 1;
	}
	pthread_mutex_unlock(&m->lock);
	return r;
}
