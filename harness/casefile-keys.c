/* The case file's keywords: one table of what each line may say, how many
 * words follow the keyword, and the function that reads it. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casefile-int.h"
#include "basic/parse.h"

struct keyword {
	const char *name;
	/* Words after the keyword; outside [min, max] the line fails with usage. */
	size_t min, max;
	const char *usage;
	/* A string or seconds field of struct casefile (the handlers str, secs). */
	size_t field;
	int (*words)(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		     size_t len);
	/* Instead of words: the rest of the line as it is (title, proves). */
	int (*text)(struct casefile *c, const char *rest, const struct keyword *k, char *err,
		    size_t len);
};

/* The field of c that keyword k fills. */
#define FIELD(type) (*(type *)((char *)c + k->field))

static int usage(const struct keyword *k, char *err, size_t len)
{
	return cf__fail(err, len, "%s", k->usage);
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

/* "title" and "proves" take the rest of the line, without its outer blanks. */
static int p_prose(struct casefile *c, const char *v, const struct keyword *k, char *err,
		   size_t len)
{
	char **dst = &FIELD(char *);
	size_t n;

	while (*v == ' ' || *v == '\t')
		v++;
	n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
		n--;
	if (n == 0)
		return cf__fail(err, len, "'%s' needs text", k->name);
	free(*dst);
	*dst = strndup(v, n);
	return *dst ? 0 : -ENOMEM;
}

/* A string field, its one word as it is (driver-file, pattern). */
static int p_str(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		 size_t len)
{
	char **dst = &FIELD(char *);

	free(*dst);
	*dst = dup_tok(&t->v[1]);
	return *dst ? 0 : -ENOMEM;
}

static int p_given_version(struct casefile *c, const struct toks *t, const struct keyword *k,
			   char *err, size_t len)
{
	if (!rtid__version_valid(t->v[1].s))
		return usage(k, err, len);
	return p_str(c, t, k, err, len);
}

/* A number of seconds (timeout, deadline, attach-delay, none-delay). */
static int p_secs(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		  size_t len)
{
	if (cf__seconds(t->v[1].s, &FIELD(double)))
		return cf__fail(err, len, "%s: '%s' is not a number of seconds", k->name, t->v[1].s);
	return 0;
}

static int p_jobs(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		  size_t len)
{
	int jobs;

	if (cf__num(t->v[1].s, &jobs) || jobs > 64)
		return cf__fail(err, len, "jobs: want 1..64");
	c->jobs = (unsigned)jobs;
	return 0;
}

static int p_seed(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		  size_t len)
{
	int seed;

	if (cf__num(t->v[1].s, &seed))
		return usage(k, err, len);
	c->seed = (unsigned long)seed;
	return 0;
}

static int p_groups(struct casefile *c, const struct toks *t, const struct keyword *k,
		    char *err, size_t len)
{
	int n;

	if (cf__num(t->v[1].s, &n) || n > 65536)
		return usage(k, err, len);
	c->groups = (unsigned)n;
	return 0;
}

static int p_api_version(struct casefile *c, const struct toks *t, const struct keyword *k,
			 char *err, size_t len)
{
	return cf__num(t->v[1].s, &c->api_version) ? usage(k, err, len) : 0;
}

static int p_libcuda(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		     size_t len)
{
	if (strcmp(t->v[1].s, "old"))
		return usage(k, err, len);
	c->old_libcuda = true;
	return 0;
}

/* The index of word in names, or -1. */
static int one_of(const char *word, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(word, names[i]) == 0)
			return i;
	return -1;
}

static int p_backend(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		     size_t len)
{
	static const char *const names[] = { "tool", "api", "both" };
	int i = one_of(t->v[1].s, names, 3);

	if (i < 0)
		return usage(k, err, len);
	c->backends = (unsigned)i + 1;
	return 0;
}

static int p_attest(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		    size_t len)
{
	static const char *const names[] = { "none", "clean", "revoked", "unsafe" };
	int i = one_of(t->v[1].s, names, 4);

	if (i < 0)
		return usage(k, err, len);
	c->attest = (enum cf_attest)i;
	return 0;
}

static int p_driver(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		    size_t len)
{
	char buf[256];

	free(c->version_file);
	c->version_file = NULL;
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

static int p_task(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		  size_t len)
{
	char comm[CF_COMM_MAX + 1];
	size_t clen;
	int pid, tid;
	bool nonl = t->n == 5 && strcmp(t->v[4].s, "no-newline") == 0;

	if ((t->n != 4 && !nonl) || cf__num(t->v[1].s, &pid) || cf__num(t->v[2].s, &tid))
		return usage(k, err, len);
	if (cf__comm_of(&t->v[3], comm, &clen))
		return cf__fail(err, len, "comm longer than %d bytes or holding a NUL", CF_COMM_MAX);
	/* A tid is one thread: the kernel never lists it twice. */
	for (size_t i = 0; i < c->ntasks; i++)
		if (c->tasks[i].tid == tid)
			return cf__fail(err, len, "tid %d given twice (first as a thread of %d)", tid,
					c->tasks[i].pid);
	return cf__add_task(c, pid, tid, comm, clen, nonl);
}

/* "workload COUNT FIRSTPID [cpu]": COUNT processes 10 pids apart, each with a
 * main thread, cuda-EvtHandlr and a restore thread the driver names; "cpu"
 * makes CPU-only processes (one thread, the driver says none). */
static int p_workload(struct casefile *c, const struct toks *t, const struct keyword *k,
		      char *err, size_t len)
{
	bool cpu = t->n == 4 && strcmp(t->v[3].s, "cpu") == 0;
	int count, first, r = 0;

	if ((t->n != 3 && !cpu) || cf__num(t->v[1].s, &count) || cf__num(t->v[2].s, &first) ||
	    count > 10000)
		return usage(k, err, len);
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
		r = cf__add_task(c, p, p, "python3", 7, false);
		if (!cpu && r == 0)
			r = cf__add_task(c, p, p + 1, "cuda-EvtHandlr", 14, false);
		if (!cpu && r == 0)
			r = cf__add_task(c, p, p + 2, name, 15, false);
		if (r == 0)
			r = cf__add_answer(c, &a);
	}
	return r;
}

static int p_answer(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		    size_t len)
{
	static const char *const kinds[] = { "tid", "none", "not-initialized", "exit", "hang",
					     "crash", "stdout" };
	static const bool has_arg[] = { true, false, false, true, false, true, true };
	struct cf_answer a = { 0 };
	size_t next;
	int i;

	if (cf__num(t->v[1].s, &a.pid))
		return usage(k, err, len);
	i = one_of(t->v[2].s, kinds, 7);
	if (i < 0)
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
	if (t->n == next + 2)
		a.noise = dup_tok(&t->v[next + 1]);
	return cf__add_answer(c, &a);
}

/* "libcuda-init hang|crash SIG|fail N": what the mock's cuInit does. */
static int p_init(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		  size_t len)
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
	return usage(k, err, len);
}

/* The lines read in casefile-rules.c check their own words. */
static int p_fault(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		   size_t len)
{
	return cf__add_fault(c, t, err, len);
}

static int p_expect(struct casefile *c, const struct toks *t, const struct keyword *k, char *err,
		    size_t len)
{
	return cf__add_expect(c, t, err, len);
}

static int p_attaches(struct casefile *c, const struct toks *t, const struct keyword *k,
		      char *err, size_t len)
{
	return cf__add_attaches(c, t, err, len);
}

#define ANY TOK_MAX
/* A keyword of words, with the casefile field its handler fills (or 0). */
#define KW(n, lo, hi, use, f, fn) \
	{ .name = n, .min = lo, .max = hi, .usage = use, .field = f, .words = fn }
#define AT(f) offsetof(struct casefile, f)

static const struct keyword keywords[] = {
	{ .name = "title", .field = AT(title), .text = p_prose },
	{ .name = "proves", .field = AT(proves), .text = p_prose },
	KW("driver", 1, 1, "usage: driver VERSION|none", 0, p_driver),
	KW("given-version", 1, 1, "usage: given-version N.N[.N]", AT(given_version),
	   p_given_version),
	KW("driver-file", 1, 1, "usage: driver-file TEXT", AT(version_file), p_str),
	KW("pattern", 1, 1, "usage: pattern ERE", AT(pattern), p_str),
	KW("backend", 1, 1, "usage: backend tool|api|both", 0, p_backend),
	KW("libcuda", 1, 1, "usage: libcuda old", 0, p_libcuda),
	KW("seed", 1, 1, "usage: seed N (N > 0)", 0, p_seed),
	KW("groups", 1, 1, "usage: groups N (1..65536)", 0, p_groups),
	KW("libcuda-init", 1, 2, "usage: libcuda-init hang|crash SIG|fail CURESULT", 0, p_init),
	KW("api-version", 1, 1, "usage: api-version N (e.g. 13000)", 0, p_api_version),
	KW("expect-attaches", 0, ANY, NULL, 0, p_attaches),
	KW("attest", 1, 1, "usage: attest none|clean|revoked|unsafe", 0, p_attest),
	KW("task", 3, 4, "usage: task PID TID COMM [no-newline]", 0, p_task),
	KW("workload", 2, 3, "usage: workload COUNT FIRSTPID [cpu]", 0, p_workload),
	KW("answer", 2, ANY, "usage: answer PID tid N|none|not-initialized|exit N|hang|crash SIG|"
	   "stdout TEXT [noise TEXT]", 0, p_answer),
	KW("fault", 0, ANY, NULL, 0, p_fault),
	KW("expect", 0, ANY, NULL, 0, p_expect),
	KW("timeout", 1, 1, "'timeout' takes one value", AT(timeout_s), p_secs),
	KW("deadline", 1, 1, "'deadline' takes one value", AT(deadline_s), p_secs),
	KW("attach-delay", 1, 1, "'attach-delay' takes one value", AT(attach_delay_s), p_secs),
	KW("none-delay", 1, 1, "'none-delay' takes one value", AT(none_delay_s), p_secs),
	KW("jobs", 1, 1, "'jobs' takes one value", 0, p_jobs),
};

/* The keyword named by the n bytes at name, among the prose ones or the others. */
static const struct keyword *lookup(const char *name, size_t n, bool text)
{
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (!!keywords[i].text == text && strlen(keywords[i].name) == n &&
		    strncmp(keywords[i].name, name, n) == 0)
			return &keywords[i];
	return NULL;
}

int cf__line(struct casefile *c, const char *line, struct toks *t, char *err, size_t len)
{
	const struct keyword *k;
	size_t n;
	int r;

	/* A prose keyword is the line's first word, ended by a blank or the end. */
	while (*line == ' ' || *line == '\t')
		line++;
	n = strcspn(line, " \t");
	k = lookup(line, n, true);
	if (k)
		return k->text(c, line + n, k, err, len);
	r = tok_split(line, t, err, len);
	if (r < 0 || t->n == 0)
		return r;
	k = lookup(t->v[0].s, strlen(t->v[0].s), false);
	if (!k)
		return cf__fail(err, len, "unknown keyword '%s'", t->v[0].s);
	if (t->n - 1 < k->min || t->n - 1 > k->max)
		return usage(k, err, len);
	return k->words(c, t, k, err, len);
}
