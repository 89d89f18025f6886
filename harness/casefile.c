/* The case-file parser. Every error names the file and line. */
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

/* An expectation for a number that is no process of the case (a tid, a pid
 * that is not there) adds it to the pids resolved: checked, never vacuous. */
static int check_whole(struct casefile *c, char *err, size_t len)
{
	if (!c->title || !c->proves)
		return cf__fail(err, len, "a case needs 'title' and 'proves'");
	if (c->npids == 0)
		return cf__fail(err, len, "a case needs at least one 'task'");
	if (c->nexpects == 0)
		return cf__fail(err, len, "a case needs at least one 'expect'");
	c->nprocs = c->npids;
	for (size_t i = 0; i < c->nexpects; i++)
		if (c->expects[i].pid && cf__note_pid(c, c->expects[i].pid) < 0)
			return -ENOMEM;
	return 0;
}

static int parse_stream(struct casefile *c, FILE *f, char *err, size_t errlen)
{
	char line[1024], why[256];
	int lineno = 0, r = 0;
	struct toks t = { .n = 0 };

	while (r == 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%d: line longer than %zu bytes", c->path, lineno,
				 sizeof(line) - 2);
			return -EINVAL;
		}
		line[strcspn(line, "\n")] = '\0';
		why[0] = '\0';
		r = cf__line(c, line, &t, why, sizeof(why));
		if (r == -EINVAL)
			snprintf(err, errlen, "%s:%d: %s", c->path, lineno, why);
		else if (r < 0)
			snprintf(err, errlen, "%s:%d: %s", c->path, lineno, strerror(-r));
		if (r == 0 && c->nexpects && c->expects[c->nexpects - 1].line == 0)
			c->expects[c->nexpects - 1].line = lineno;
	}
	if (r == 0 && (r = check_whole(c, why, sizeof(why))) < 0)
		snprintf(err, errlen, "%s: %s", c->path, why);
	return r;
}

int cf_load(const char *path, struct casefile **out, char *err, size_t errlen)
{
	struct casefile *c = calloc(1, sizeof(*c));
	FILE *f;
	int r;

	if (!c)
		return -ENOMEM;
	c->path = strdup(path);
	c->backends = 1;
	c->seed = 1;
	c->none_delay_s = -1;
	c->init.kind = CF_ANS_NONE;
	for (int i = 0; i < 4; i++)
		c->attaches[i] = -1;
	f = fopen(path, "re");
	if (!f || !c->path) {
		r = f ? -ENOMEM : -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		if (f)
			fclose(f);
		cf_free(c);
		return r;
	}
	r = parse_stream(c, f, err, errlen);
	fclose(f);
	if (r < 0) {
		cf_free(c);
		return r;
	}
	*out = c;
	return 0;
}

void cf_free(struct casefile *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nanswers; i++) {
		free(c->answers[i].text);
		free(c->answers[i].noise);
	}
	for (size_t i = 0; i < c->nexpects; i++)
		free(c->expects[i].owned);
	free(c->answers);
	free(c->expects);
	free(c->faults);
	free(c->tasks);
	free(c->pids);
	free(c->path);
	free(c->title);
	free(c->proves);
	free(c->version_file);
	free(c->given_version);
	free(c->pattern);
	free(c);
}
