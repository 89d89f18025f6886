/* The case-file parser. Every error names the file and line. */
#include "casefile.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casefile-int.h"
#include "parse.h"
#include "rtid.h"

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

static int note_pid(struct casefile *c, int pid)
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

static int add_task(struct casefile *c, int pid, int tid, const char *comm, size_t len, bool nonl)
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
	return note_pid(c, pid);
}

static int add_answer(struct casefile *c, const struct cf_answer *a)
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


static char *dup_tok(const struct tok *t)
{
	char *s = malloc(t->len + 1);

	if (s) {
		memcpy(s, t->s, t->len);
		s[t->len] = '\0';
	}
	return s;
}

static int set_str(char **dst, const struct tok *t)
{
	free(*dst);
	*dst = dup_tok(t);
	return *dst ? 0 : -ENOMEM;
}

/* "title" and "proves" take the rest of the line as it is. Returns 1 when
 * the line was one of them. */
static int prose(struct casefile *c, const char *line, char *err, size_t len)
{
	static const char *const keys[] = { "title", "proves" };

	while (*line == ' ' || *line == '\t')
		line++;
	for (int i = 0; i < 2; i++) {
		size_t k = strlen(keys[i]);
		char **dst = i == 0 ? &c->title : &c->proves;
		const char *v = line + k;
		size_t n;

		if (strncmp(line, keys[i], k) || (*v && *v != ' ' && *v != '\t'))
			continue;
		while (*v == ' ' || *v == '\t')
			v++;
		n = strlen(v);
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
			n--;
		if (n == 0)
			return cf__fail(err, len, "'%s' needs text", keys[i]);
		free(*dst);
		*dst = strndup(v, n);
		return *dst ? 1 : -ENOMEM;
	}
	return 0;
}

static int p_driver(struct casefile *c, const struct toks *t, char *err, size_t len)
{
	char buf[256];

	free(c->version_file);
	c->version_file = NULL;
	if (t->n != 2)
		return cf__fail(err, len, "usage: driver VERSION|none");
	if (strcmp(t->v[1].s, "none") == 0)
		return 0;
	if (!rtid__version_valid(t->v[1].s))
		return cf__fail(err, len, "bad driver version '%s' (want N.N[.N])", t->v[1].s);
	snprintf(buf, sizeof(buf), "NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  "
		 "Release Build  (rtid@fakeproc)  Thu Jan  1 00:00:00 UTC 2026\n"
		 "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n", t->v[1].s);
	c->version_file = strdup(buf);
	return c->version_file ? 0 : -ENOMEM;
}

static int p_attest(struct casefile *c, const struct toks *t, char *err, size_t len)
{
	static const char *const names[] = { "none", "clean", "revoked", "unsafe" };

	for (int i = 0; t->n == 2 && i < 4; i++)
		if (strcmp(t->v[1].s, names[i]) == 0) {
			c->attest = (enum cf_attest)i;
			return 0;
		}
	return cf__fail(err, len, "usage: attest none|clean|revoked|unsafe");
}

static int p_task(struct casefile *c, const struct toks *t, char *err, size_t len)
{
	char comm[CF_COMM_MAX + 1];
	size_t clen;
	int pid, tid;
	bool nonl = t->n == 5 && strcmp(t->v[4].s, "no-newline") == 0;

	if ((t->n != 4 && !nonl) || cf__num(t->v[1].s, &pid) || cf__num(t->v[2].s, &tid))
		return cf__fail(err, len, "usage: task PID TID COMM [no-newline]");
	if (cf__comm_of(&t->v[3], comm, &clen))
		return cf__fail(err, len, "comm longer than %d bytes or holding a NUL", CF_COMM_MAX);
	/* A tid is one thread: the kernel never lists it twice. */
	for (size_t i = 0; i < c->ntasks; i++)
		if (c->tasks[i].tid == tid)
			return cf__fail(err, len, "tid %d given twice (first as a thread of %d)", tid,
					c->tasks[i].pid);
	return add_task(c, pid, tid, comm, clen, nonl);
}

/* "workload COUNT FIRSTPID [cpu]": COUNT processes 10 pids apart, each with a
 * main thread, cuda-EvtHandlr and a restore thread the driver names; "cpu"
 * makes CPU-only processes (one thread, the driver says none). */
static int p_workload(struct casefile *c, const struct toks *t, char *err, size_t len)
{
	bool cpu = t->n == 4 && strcmp(t->v[3].s, "cpu") == 0;
	int count, first, r = 0;

	if ((t->n != 3 && !cpu) || cf__num(t->v[1].s, &count) || cf__num(t->v[2].s, &first) ||
	    count > 10000)
		return cf__fail(err, len, "usage: workload COUNT FIRSTPID [cpu]");
	/* Its last tid is first + 10 * (count - 1) + 2: no wrap into negative pids. */
	if (first > INT_MAX - 10 * (count - 1) - 2)
		return cf__fail(err, len, "workload %d %d: its pids would pass %d", count, first,
				INT_MAX);
	for (int i = 0; i < count && r == 0; i++) {
		int p = first + 10 * i;
		char name[16];
		struct cf_answer a = { .pid = p, .kind = cpu ? CF_ANS_NONE : CF_ANS_TID,
				       .value = p + 2 };

		snprintf(name, sizeof(name), "cuda%011x", 0x1400006 + i);
		r = add_task(c, p, p, "python3", 7, false);
		if (!cpu && r == 0)
			r = add_task(c, p, p + 1, "cuda-EvtHandlr", 14, false);
		if (!cpu && r == 0)
			r = add_task(c, p, p + 2, name, 15, false);
		if (r == 0)
			r = add_answer(c, &a);
	}
	return r;
}

static int p_answer(struct casefile *c, const struct toks *t, char *err, size_t len)
{
	static const char *const kinds[] = { "tid", "none", "not-initialized", "exit", "hang",
					     "crash", "stdout" };
	static const bool has_arg[] = { true, false, false, true, false, true, true };
	struct cf_answer a = { 0 };
	size_t k, next;
	int i;

	if (t->n < 3 || cf__num(t->v[1].s, &a.pid))
		return cf__fail(err, len, "usage: answer PID tid N|none|not-initialized|exit N|"
				"hang|crash SIG|stdout TEXT [noise TEXT]");
	for (i = 0; i < 7 && strcmp(t->v[2].s, kinds[i]); i++)
		;
	if (i == 7)
		return cf__fail(err, len, "unknown answer '%s'", t->v[2].s);
	a.kind = (enum cf_answer_kind)i;
	next = 3 + has_arg[i];
	if (t->n < next || (t->n != next && t->n != next + 2) ||
	    (t->n == next + 2 && strcmp(t->v[next].s, "noise")))
		return cf__fail(err, len, "answer %s: wrong arguments", kinds[i]);
	if (has_arg[i] && a.kind == CF_ANS_STDOUT)
		a.text = dup_tok(&t->v[3]);
	else if (a.kind == CF_ANS_TID && !strcmp(t->v[3].s, "0"))
		a.value = 0; /* a driver that names no thread but says success */
	else if (has_arg[i] && cf__num(t->v[3].s, &a.value))
		return cf__fail(err, len, "answer %s: '%s' is not a positive number", kinds[i],
				t->v[3].s);
	k = next + 1;
	if (t->n == next + 2)
		a.noise = dup_tok(&t->v[k]);
	return add_answer(c, &a);
}

/* "libcuda-init hang|crash SIG|fail N": what the mock's cuInit does. */
static int p_init(struct casefile *c, const struct toks *t, char *err, size_t len)
{
	if (t->n == 2 && !strcmp(t->v[1].s, "hang")) {
		c->init.kind = CF_ANS_HANG;
		return 0;
	}
	if (t->n == 3 && !strcmp(t->v[1].s, "crash") && !cf__num(t->v[2].s, &c->init.value)) {
		c->init.kind = CF_ANS_CRASH;
		return 0;
	}
	if (t->n == 3 && !strcmp(t->v[1].s, "fail") && !cf__num(t->v[2].s, &c->init.value)) {
		c->init.kind = CF_ANS_EXIT;
		return 0;
	}
	return cf__fail(err, len, "usage: libcuda-init hang|crash SIG|fail CURESULT");
}

static int p_backend(struct casefile *c, const struct toks *t, char *err, size_t len)
{
	static const char *const names[] = { "tool", "api", "both" };

	for (unsigned i = 0; t->n == 2 && i < 3; i++)
		if (strcmp(t->v[1].s, names[i]) == 0) {
			c->backends = i + 1;
			return 0;
		}
	return cf__fail(err, len, "usage: backend tool|api|both");
}

static int p_number(struct casefile *c, const struct toks *t, char *err, size_t len)
{
	const char *k = t->v[0].s;
	int jobs;

	if (t->n != 2)
		return cf__fail(err, len, "'%s' takes one value", k);
	if (strcmp(k, "jobs") == 0) {
		if (cf__num(t->v[1].s, &jobs) || jobs > 64)
			return cf__fail(err, len, "jobs: want 1..64");
		c->jobs = (unsigned)jobs;
		return 0;
	}
	if (cf__seconds(t->v[1].s, strcmp(k, "timeout") == 0      ? &c->timeout_s
				   : strcmp(k, "deadline") == 0   ? &c->deadline_s
				   : strcmp(k, "none-delay") == 0 ? &c->none_delay_s
								  : &c->attach_delay_s))
		return cf__fail(err, len, "%s: '%s' is not a number of seconds", k, t->v[1].s);
	return 0;
}

static int p_line(struct casefile *c, const struct toks *t, char *err, size_t len)
{
	const char *k = t->v[0].s;

	if (!strcmp(k, "driver"))
		return p_driver(c, t, err, len);
	if (!strcmp(k, "given-version")) {
		if (t->n != 2 || !rtid__version_valid(t->v[1].s))
			return cf__fail(err, len, "usage: given-version N.N[.N]");
		return set_str(&c->given_version, &t->v[1]);
	}
	if (!strcmp(k, "driver-file"))
		return t->n == 2 ? set_str(&c->version_file, &t->v[1])
				 : cf__fail(err, len, "usage: driver-file TEXT");
	if (!strcmp(k, "pattern"))
		return t->n == 2 ? set_str(&c->pattern, &t->v[1])
				 : cf__fail(err, len, "usage: pattern ERE");
	if (!strcmp(k, "backend"))
		return p_backend(c, t, err, len);
	if (!strcmp(k, "libcuda"))
		return t->n == 2 && !strcmp(t->v[1].s, "old") ? (c->old_libcuda = true, 0)
			: cf__fail(err, len, "usage: libcuda old");
	if (!strcmp(k, "seed")) {
		int seed;

		if (t->n != 2 || cf__num(t->v[1].s, &seed))
			return cf__fail(err, len, "usage: seed N (N > 0)");
		c->seed = (unsigned long)seed;
		return 0;
	}
	if (!strcmp(k, "libcuda-init"))
		return p_init(c, t, err, len);
	if (!strcmp(k, "api-version"))
		return t->n == 2 && !cf__num(t->v[1].s, &c->api_version) ? 0
			: cf__fail(err, len, "usage: api-version N (e.g. 13000)");
	if (!strcmp(k, "expect-attaches"))
		return cf__add_attaches(c, t, err, len);
	if (!strcmp(k, "attest"))
		return p_attest(c, t, err, len);
	if (!strcmp(k, "task"))
		return p_task(c, t, err, len);
	if (!strcmp(k, "workload"))
		return p_workload(c, t, err, len);
	if (!strcmp(k, "answer"))
		return p_answer(c, t, err, len);
	if (!strcmp(k, "fault"))
		return cf__add_fault(c, t, err, len);
	if (!strcmp(k, "expect"))
		return cf__add_expect(c, t, err, len);
	if (!strcmp(k, "timeout") || !strcmp(k, "deadline") || !strcmp(k, "attach-delay") ||
	    !strcmp(k, "none-delay") || !strcmp(k, "jobs"))
		return p_number(c, t, err, len);
	return cf__fail(err, len, "unknown keyword '%s'", k);
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
		if (c->expects[i].pid && note_pid(c, c->expects[i].pid) < 0)
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
		r = prose(c, line, why, sizeof(why));
		if (r == 1) {
			r = 0;
			continue;
		}
		if (r == 0)
			r = tok_split(line, &t, why, sizeof(why));
		if (r == 0 && t.n > 0)
			r = p_line(c, &t, why, sizeof(why));
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
