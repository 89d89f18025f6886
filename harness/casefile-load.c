/* The case-file reader: a file read line by line (casefile-keys.c reads each
 * line), then checked whole. Every error names the file and line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casefile-int.h"

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
