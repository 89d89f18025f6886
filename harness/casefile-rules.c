/* The case-file lines that describe faults and expectations. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casefile-int.h"
#include "rtid.h"

static const char *const fault_names[] = { "rename", "vanish", "appear",     "eacces", "eio",
					   "delay",  "short-read", "exit", "enoent", "exit-thread",
					   "readdir-chunk" };
#define NFAULTS (sizeof(fault_names) / sizeof(fault_names[0]))

static int trigger(const struct toks *t, size_t i, struct cf_fault *f)
{
	if (i + 1 == t->n && strcmp(t->v[i].s, "after-walk") == 0)
		f->trigger = CF_T_AFTER_WALK;
	else if (i + 1 == t->n && strcmp(t->v[i].s, "after-readdir") == 0)
		f->trigger = CF_T_AFTER_READDIR;
	else if (i + 2 == t->n && strcmp(t->v[i].s, "at-read") == 0 && !cf__num(t->v[i + 1].s, &f->n))
		f->trigger = CF_T_AT_READ;
	else
		return -EINVAL;
	return 0;
}

static int op(const struct toks *t, size_t i, struct cf_fault *f)
{
	if (i + 1 != t->n)
		return -EINVAL;
	if (strcmp(t->v[i].s, "open") == 0)
		f->op = CF_OP_OPEN;
	else if (strcmp(t->v[i].s, "read") == 0)
		f->op = CF_OP_READ;
	else
		return -EINVAL;
	return 0;
}

/* A trailing "probability P" (0 < P <= 1) applies to any fault. */
static int probability(struct toks *t, struct cf_fault *f)
{
	double p;

	f->probability = 1.0;
	if (t->n < 2 || strcmp(t->v[t->n - 2].s, "probability"))
		return 0;
	if (cf__seconds(t->v[t->n - 1].s, &p) < 0 || !(p > 0 && p <= 1))
		return -EINVAL;
	f->probability = p;
	t->n -= 2;
	return 0;
}

/* t->v[0] is the word "fault". */
static int parse_fault(const struct toks *in, struct cf_fault *f, char *err, size_t len)
{
	struct toks copy = *in, *t = &copy;
	static const char *const usage[] = {
		"rename PID TID NAME at-read N|after-walk", "vanish PID TID",
		"appear PID TID NAME at-read N", "eacces PID TID open|read", "eio PID TID open|read",
		"delay PID TID MS", "short-read PID TID", "exit PID [after-readdir|at-read N]",
		"enoent PID TID open|read", "exit-thread PID TID at-read N|after-readdir|after-walk",
		"readdir-chunk PID N",
	};
	int k, r = -EINVAL;

	memset(f, 0, sizeof(*f));
	/* The copy's words point into the caller's buffer, which outlives it. */
	if (probability(t, f) < 0)
		return cf__fail(err, len, "probability wants a number in (0, 1]");
	for (k = 0; t->n > 1 && k < (int)NFAULTS && strcmp(t->v[1].s, fault_names[k]); k++)
		;
	if (t->n < 3 || k == (int)NFAULTS)
		return cf__fail(err, len, "usage: fault rename|vanish|appear|eacces|eio|enoent|delay|"
				"short-read|exit|exit-thread|readdir-chunk ...");
	f->kind = (enum cf_fault_kind)k;
	if (cf__num(t->v[2].s, &f->pid) == 0) {
		if (f->kind == CF_F_EXIT)
			r = t->n == 3 ? 0 : trigger(t, 3, f); /* no trigger: gone from the start */
		else if (f->kind == CF_F_CHUNK)
			r = t->n == 4 ? cf__num(t->v[3].s, &f->n) : -EINVAL;
		else if (t->n >= 4 && cf__num(t->v[3].s, &f->tid) == 0)
			switch (f->kind) {
			case CF_F_RENAME:
			case CF_F_APPEAR:
				r = t->n >= 6 && !cf__comm_of(&t->v[4], f->name, &f->name_len)
					    ? trigger(t, 5, f) : -EINVAL;
				if (f->kind == CF_F_APPEAR && f->trigger != CF_T_AT_READ)
					r = -EINVAL;
				break;
			case CF_F_EACCES:
			case CF_F_EIO:
			case CF_F_ENOENT:
				r = op(t, 4, f);
				break;
			case CF_F_DELAY:
				r = t->n == 5 ? cf__num0(t->v[4].s, &f->ms) : -EINVAL;
				break;
			case CF_F_EXIT_THREAD:
				r = t->n >= 5 ? trigger(t, 4, f) : -EINVAL;
				break;
			default:
				r = t->n == 4 ? 0 : -EINVAL;
			}
	}
	return r < 0 ? cf__fail(err, len, "usage: fault %s", usage[k]) : 0;
}

int cf__add_fault(struct casefile *c, const struct toks *t, char *err, size_t len)
{
	struct cf_fault f, *v;
	int r = parse_fault(t, &f, err, len);

	if (r < 0)
		return r;
	v = GROW(c->faults, c->nfaults);
	if (!v)
		return -ENOMEM;
	c->faults = v;
	c->faults[c->nfaults++] = f;
	return 0;
}

int cf_parse_fault(const char *args, struct cf_fault *f, char *err, size_t errlen)
{
	char line[1100];
	struct toks t;

	snprintf(line, sizeof(line), "fault %s", args);
	if (tok_split(line, &t, err, errlen) < 0)
		return -EINVAL;
	return parse_fault(&t, f, err, errlen);
}

static void format_fault(const struct cf_fault *f, char *out, size_t outlen);

void cf_format_fault(const struct cf_fault *f, char *out, size_t outlen)
{
	size_t n;

	format_fault(f, out, outlen);
	n = strlen(out);
	if (f->probability > 0 && f->probability < 1)
		snprintf(out + n, outlen - n, " probability %g", f->probability);
}

static void format_fault(const struct cf_fault *f, char *out, size_t outlen)
{
	static const char *const trig[] = { "", " after-walk", " after-readdir" };
	char name[80] = "", when[32] = "";
	size_t o = 0;

	if (f->kind == CF_F_RENAME || f->kind == CF_F_APPEAR) {
		name[o++] = ' ';
		name[o++] = '"';
		for (size_t i = 0; i < f->name_len; i++)
			o += (size_t)snprintf(name + o, sizeof(name) - o,
					      (unsigned char)f->name[i] < 0x20 ||
							      (unsigned char)f->name[i] > 0x7e ||
							      f->name[i] == '"' || f->name[i] == '\\'
						      ? "\\x%02x" : "%c",
					      (unsigned char)f->name[i]);
		snprintf(name + o, sizeof(name) - o, "\"");
	}
	if (f->trigger == CF_T_AT_READ)
		snprintf(when, sizeof(when), " at-read %d", f->n);
	else if (f->trigger == CF_T_AFTER_WALK)
		snprintf(when, sizeof(when), "%s", trig[1]);
	else if (f->trigger == CF_T_AFTER_READDIR)
		snprintf(when, sizeof(when), "%s", trig[2]);
	if (f->kind == CF_F_EXIT)
		snprintf(out, outlen, "fault exit %d%s", f->pid, when);
	else if (f->kind == CF_F_EACCES || f->kind == CF_F_EIO || f->kind == CF_F_ENOENT)
		snprintf(out, outlen, "fault %s %d %d %s", fault_names[f->kind], f->pid, f->tid,
			 f->op == CF_OP_OPEN ? "open" : "read");
	else if (f->kind == CF_F_DELAY)
		snprintf(out, outlen, "fault delay %d %d %d", f->pid, f->tid, f->ms);
	else if (f->kind == CF_F_CHUNK)
		snprintf(out, outlen, "fault readdir-chunk %d %d", f->pid, f->n);
	else
		snprintf(out, outlen, "fault %s %d %d%s%s", fault_names[f->kind], f->pid, f->tid,
			 name, when);
}

static int modes_of(const char *s, unsigned *out)
{
	char buf[128];
	unsigned m = 0;

	if (strcmp(s, "all") == 0) {
		*out = 0xf;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	/* Comma-separated names; empty ones (",," or a trailing comma) are skipped. */
	for (char *w = buf, *end; *w; w = end) {
		enum rtid_mode mode;

		end = w + strcspn(w, ",");
		if (*end)
			*end++ = '\0';
		if (!*w)
			continue;
		if (rtid_mode_parse(w, &mode) < 0)
			return -EINVAL;
		m |= 1u << mode;
	}
	if (!m)
		return -EINVAL;
	*out = m;
	return 0;
}

/* Is v one of the names of a field (by its name function over 0..max)? */
static bool known(const char *v, const char *(*name)(int), int max)
{
	if (strcmp(v, "-") == 0)
		return true;
	for (int i = 1; i <= max; i++)
		if (name(i) && strcmp(name(i), v) == 0)
			return true;
	return false;
}

static const char *src_name(int i) { return rtid_source_name((enum rtid_source)i); }
static const char *fb_name(int i) { return rtid_fallback_name((enum rtid_fallback)i); }
static const char *xc_name(int i) { return rtid_xcheck_name((enum rtid_xcheck)i); }
static const char *err_name(int i) { return rtid_error_name((enum rtid_error)i); }

static int field(struct cf_expect *e, char *kv, char *err, size_t len)
{
	char *v = strchr(kv, '=');
	int n;

	if (!v)
		return cf__fail(err, len, "expected KEY=VALUE, got '%s'", kv);
	*v++ = '\0';
	if (!strcmp(kv, "tid") && (!strcmp(v, "none") || !cf__num(v, &n)))
		e->tid = v;
	else if (!strcmp(kv, "source") && known(v, src_name, RTID_SRC_API))
		e->source = v;
	else if (!strcmp(kv, "fallback") && known(v, fb_name, RTID__FB_MAX - 1))
		e->fallback = v;
	else if (!strcmp(kv, "crosscheck") && known(v, xc_name, RTID__XC_MAX - 1))
		e->crosscheck = v;
	else if (!strcmp(kv, "error") && known(v, err_name, RTID__ERR_MAX - 1))
		e->error = v;
	else if (!strcmp(kv, "calls") && !cf__num0(v, &n))
		e->calls = n;
	else
		return cf__fail(err, len, "bad expectation %s=%s", kv, v);
	return 0;
}

static int parse_expect(struct cf_expect *e, const struct toks *t, char *err, size_t len)
{
	size_t total = 0, o = 0;

	if (t->n < 4 || modes_of(t->v[1].s, &e->modes) < 0 ||
	    (strcmp(t->v[2].s, "*") && cf__num(t->v[2].s, &e->pid)))
		return cf__fail(err, len, "usage: expect MODE[,MODE]|all PID|* KEY=VALUE...");
	for (size_t i = 3; i < t->n; i++)
		total += t->v[i].len + 1;
	e->owned = malloc(total);
	if (!e->owned)
		return -ENOMEM;
	for (size_t i = 3; i < t->n; i++) {
		char *kv = e->owned + o;
		int r;

		memcpy(kv, t->v[i].s, t->v[i].len + 1);
		o += t->v[i].len + 1;
		r = field(e, kv, err, len);
		if (r < 0)
			return r;
	}
	return 0;
}

int cf__add_expect(struct casefile *c, const struct toks *t, char *err, size_t len)
{
	struct cf_expect e = { .calls = -1 }, *v;
	int r = parse_expect(&e, t, err, len);

	if (r < 0) {
		free(e.owned);
		return r;
	}
	v = GROW(c->expects, c->nexpects);
	if (!v) {
		free(e.owned);
		return -ENOMEM;
	}
	c->expects = v;
	c->expects[c->nexpects++] = e;
	return 0;
}

/* "expect-attaches MODES N": cuInit calls the api backend may make per run. */
int cf__add_attaches(struct casefile *c, const struct toks *t, char *err, size_t len)
{
	unsigned modes;
	int n;

	if (t->n != 3 || modes_of(t->v[1].s, &modes) < 0 || cf__num0(t->v[2].s, &n))
		return cf__fail(err, len, "usage: expect-attaches MODE[,MODE]|all N");
	for (int i = 0; i < 4; i++)
		if (modes & (1u << i))
			c->attaches[i] = n;
	return 0;
}
