/* The case file's building blocks: numbers, names, adding tasks, answers
 * and pids. Every error names the file and line (the callers add them). */
#include "casefile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casefile-int.h"
#include "basic/parse.h"

int cf__fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

double cf_scaled(double seconds)
{
	const char *s = getenv("RTID_TIME_SCALE");
	double k = 1.0;
	char *end;

	if (s && *s) {
		k = strtod(s, &end);
		if (*end || !isfinite(k) || k < 0)
			k = 1.0;
	}
	return seconds * k;
}

int cf__num(const char *s, int *out)
{
	return rtid__parse_pid(s, out);
}

int cf__num0(const char *s, int *out)
{
	if (s && strcmp(s, "0") == 0) {
		*out = 0;
		return 0;
	}
	return cf__num(s, out);
}

int cf__seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	v = strtod(s, &end);
	if (*end || !isfinite(v) || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int cf__comm_of(const struct tok *t, char *out, size_t *len)
{
	if (t->len > CF_COMM_MAX || memchr(t->s, '\0', t->len))
		return -EINVAL;
	memcpy(out, t->s, t->len);
	out[t->len] = '\0';
	*len = t->len;
	return 0;
}

int cf__note_pid(struct casefile *c, int pid)
{
	int *v;

	for (size_t i = 0; i < c->npids; i++)
		if (c->pids[i] == pid)
			return 0;
	v = GROW(c->pids, c->npids);
	if (!v)
		return -ENOMEM;
	c->pids = v;
	c->pids[c->npids++] = pid;
	return 0;
}

int cf__add_task(struct casefile *c, int pid, int tid, const char *comm, size_t len, bool nonl)
{
	struct cf_task *v = GROW(c->tasks, c->ntasks);

	if (!v)
		return -ENOMEM;
	c->tasks = v;
	v = &c->tasks[c->ntasks++];
	memset(v, 0, sizeof(*v));
	v->pid = pid;
	v->tid = tid;
	memcpy(v->comm, comm, len);
	v->comm_len = len;
	v->no_newline = nonl;
	return cf__note_pid(c, pid);
}

int cf__add_answer(struct casefile *c, const struct cf_answer *a)
{
	struct cf_answer *v = GROW(c->answers, c->nanswers);

	if (!v)
		return -ENOMEM;
	c->answers = v;
	c->answers[c->nanswers++] = *a;
	return 0;
}

const struct cf_answer *cf_answer_for(const struct casefile *c, int pid)
{
	for (size_t i = c->nanswers; i-- > 0;)
		if (c->answers[i].pid == pid)
			return &c->answers[i];
	return NULL;
}
