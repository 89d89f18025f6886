/* Formatting and strict parsing of the rtid serve protocol (doc/serve.md).
 * Every message is foreign text to the side that reads it: words are split
 * by single spaces, numbers are checked whole, nothing is trusted. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "rtid.h"
#include "proto/serve-proto.h"

#define MAX_WORDS (RTID__SVC_BATCH_MAX + 2) /* a batch's */

static const char *const op_names[RTID__OP_COUNT] = {
	"get-restore-tid", "get-state", "lock", "checkpoint", "restore", "unlock",
};
static const char *const state_names[] = { "running", "locked", "checkpointed", "failed" };
static const char *const kind_names[RTID__SVC_KINDS] = {
	"tid", "state", "done", "cuerr", "error", "denied", "started", "unknown",
};
/* Words in a message of each kind, its text counted as one. */
static const size_t kind_words[RTID__SVC_KINDS] = { 4, 4, 3, 6, 5, 4, 4, 5 };

const char *rtid__svc_op_name(int op)
{
	return op >= 0 && op < RTID__OP_COUNT ? op_names[op] : NULL;
}

enum rtid__req_kind rtid__svc_op_kind(int op)
{
	if (op == RTID__OP_RESTORE_TID)
		return RTID__REQ_QUERY;
	return op == RTID__OP_GET_STATE ? RTID__REQ_STATE : RTID__REQ_ACTION;
}

const char *rtid__svc_state_name(int state)
{
	return state >= 0 && state < 4 ? state_names[state] : NULL;
}

/* A message's words; the last may be "the rest of the line" (text). */
struct words {
	const char *w[MAX_WORDS];
	size_t len[MAX_WORDS];
	size_t n;
};

static int split(const char *buf, size_t len, size_t max, struct words *out)
{
	size_t i = 0;

	if (len == 0 || len >= RTID__SVC_MSG_MAX)
		return -EINVAL;
	for (size_t k = 0; k < len; k++)
		if ((unsigned char)buf[k] < 0x20 || (unsigned char)buf[k] > 0x7e)
			return -EINVAL;
	out->n = 0;
	while (i < len && out->n < max) {
		size_t j = i;

		while (j < len && (buf[j] != ' ' || out->n == max - 1))
			j++;
		if (j == i)
			return -EINVAL; /* two spaces, or a leading or trailing one */
		out->w[out->n] = buf + i;
		out->len[out->n++] = j - i;
		if (j < len && j + 1 == len)
			return -EINVAL;
		i = j + 1;
	}
	return i >= len ? 0 : -EINVAL;
}

static bool is(const struct words *w, size_t i, const char *s)
{
	return w->len[i] == strlen(s) && memcmp(w->w[i], s, w->len[i]) == 0;
}

static int index_of(const struct words *w, size_t i, const char *const *names, int n)
{
	for (int k = 0; k < n; k++)
		if (is(w, i, names[k]))
			return k;
	return -1;
}

/* A whole decimal in [0, INT_MAX], no sign, no leading zero but "0". */
static int number(const struct words *w, size_t i, int *out)
{
	long long v = 0;

	if (w->len[i] == 0 || w->len[i] > 10 || (w->w[i][0] == '0' && w->len[i] > 1))
		return -EINVAL;
	for (size_t k = 0; k < w->len[i]; k++) {
		if (w->w[i][k] < '0' || w->w[i][k] > '9')
			return -EINVAL;
		v = v * 10 + (w->w[i][k] - '0');
	}
	if (v > INT_MAX)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int positive(const struct words *w, size_t i, int *out)
{
	int v;

	if (number(w, i, &v) < 0 || v == 0)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A word into its field; one longer than the field is refused, not cut, so
 * that what parses is exactly what was sent. */
static int copy_word(const struct words *w, size_t i, char *dst, size_t cap)
{
	if (w->len[i] >= cap)
		return -EINVAL;
	memcpy(dst, w->w[i], w->len[i]);
	dst[w->len[i]] = '\0';
	return 0;
}

/* Copy src into dst as printable ASCII; NULL or "" becomes "-". */
static void clean(char *dst, size_t cap, const char *src, bool spaces)
{
	size_t i = 0;

	for (; src && src[i] && i < cap - 1; i++)
		dst[i] = (src[i] < 0x20 || src[i] > 0x7e || (!spaces && src[i] == ' ')) ? '?' : src[i];
	if (i == 0)
		dst[i++] = '-';
	dst[i] = '\0';
}

static size_t fmt(char *buf, int n)
{
	return n < 0 ? 0 : (size_t)n < RTID__SVC_MSG_MAX ? (size_t)n : RTID__SVC_MSG_MAX - 1;
}

size_t rtid__svc_hello_format(char *buf, int version)
{
	return fmt(buf, snprintf(buf, RTID__SVC_MSG_MAX, "hello %d", version));
}

size_t rtid__svc_req_format(const struct rtid__svc_req *q, char *buf)
{
	const char *op = rtid__svc_op_name(q->op);

	if (q->op == RTID__OP_LOCK)
		return fmt(buf, snprintf(buf, RTID__SVC_MSG_MAX, "%s %d %u", op, q->pid,
					 q->timeout_ms));
	if (q->op == RTID__OP_RESTORE && q->map.n) {
		char map[RTID__MAP_TEXT + 1];

		rtid__devmap_format(&q->map, map, sizeof(map));
		return fmt(buf, snprintf(buf, RTID__SVC_MSG_MAX, "%s %d map %s", op, q->pid, map));
	}
	return fmt(buf, snprintf(buf, RTID__SVC_MSG_MAX, "%s %d", op ? op : "-", q->pid));
}

size_t rtid__svc_ans_format(const struct rtid__svc_ans *a, char *buf)
{
	const char *op = rtid__svc_op_name(a->op);
	char name[sizeof(a->name)], text[sizeof(a->text)];
	int n = snprintf(buf, RTID__SVC_MSG_MAX, "%s %s %d", kind_names[a->kind], op ? op : "-",
			 a->pid);

	clean(name, sizeof(name), a->name, false);
	clean(text, sizeof(text), a->text, true);
	if (a->kind == RTID__SVC_TID)
		n += snprintf(buf + n, RTID__SVC_MSG_MAX - (size_t)n, " %d", a->value);
	else if (a->kind == RTID__SVC_STATE)
		n += snprintf(buf + n, RTID__SVC_MSG_MAX - (size_t)n, " %s",
			      rtid__svc_state_name(a->value) ? rtid__svc_state_name(a->value) : "-");
	else if (a->kind == RTID__SVC_CUERR)
		n += snprintf(buf + n, RTID__SVC_MSG_MAX - (size_t)n, " %d %s %s", a->value, name,
			      text);
	else if (a->kind == RTID__SVC_STARTED)
		n += snprintf(buf + n, RTID__SVC_MSG_MAX - (size_t)n, " %d", a->value);
	else if (a->kind == RTID__SVC_ERROR || a->kind == RTID__SVC_UNKNOWN)
		n += snprintf(buf + n, RTID__SVC_MSG_MAX - (size_t)n, " %s %s", name, text);
	else if (a->kind == RTID__SVC_DENIED)
		n += snprintf(buf + n, RTID__SVC_MSG_MAX - (size_t)n, " %s", text);
	return fmt(buf, n);
}

int rtid__svc_hello_parse(const char *buf, size_t len, int *version)
{
	struct words w;
	int v;

	if (split(buf, len, 3, &w) < 0 || w.n != 2 || !is(&w, 0, "hello") ||
	    positive(&w, 1, &v) < 0)
		return -EINVAL;
	*version = v;
	return 0;
}

int rtid__svc_welcome_parse(const char *buf, size_t len, int version, bool *actions)
{
	struct words w;
	int v;

	if (split(buf, len, 4, &w) < 0 || w.n != 3 || positive(&w, 1, &v) < 0)
		return -EINVAL;
	if (is(&w, 0, "refused"))
		return -EPROTO;
	if (!is(&w, 0, "hello") || v != version ||
	    (!is(&w, 2, "actions") && !is(&w, 2, "queries")))
		return -EINVAL;
	*actions = is(&w, 2, "actions");
	return 0;
}

int rtid__svc_req_parse(const char *buf, size_t len, struct rtid__svc_req *out)
{
	struct rtid__svc_req q = { 0 };
	struct words w;
	int ms = 0;

	if (split(buf, len, 4, &w) < 0 || w.n < 2)
		return -EINVAL;
	q.op = index_of(&w, 0, op_names, RTID__OP_COUNT);
	if (q.op < 0 || positive(&w, 1, &q.pid) < 0)
		return -EINVAL;
	if (q.op == RTID__OP_RESTORE && w.n == 4) {
		char text[RTID__MAP_TEXT + 1], why[8];

		/* The map as its one reader takes it (devmap.c). */
		if (!is(&w, 2, "map") || copy_word(&w, 3, text, sizeof(text)) < 0 ||
		    rtid__devmap_parse(text, &q.map, why, sizeof(why)) < 0)
			return -EINVAL;
		*out = q;
		return 0;
	}
	if (w.n != (q.op == RTID__OP_LOCK ? 3u : 2u) || (w.n == 3 && number(&w, 2, &ms) < 0))
		return -EINVAL;
	q.timeout_ms = (unsigned)ms;
	*out = q;
	return 0;
}

size_t rtid__svc_batch_format(int op, const int *pids, size_t n, char *buf)
{
	int len;

	if (n == 0 || n > RTID__SVC_BATCH_MAX || (op != RTID__OP_RESTORE_TID &&
						  op != RTID__OP_GET_STATE))
		return 0;
	len = snprintf(buf, RTID__SVC_MSG_MAX, "batch %s", rtid__svc_op_name(op));
	for (size_t i = 0; i < n && len < RTID__SVC_MSG_MAX; i++)
		len += snprintf(buf + len, RTID__SVC_MSG_MAX - (size_t)len, " %d", pids[i]);
	return len < RTID__SVC_MSG_MAX ? (size_t)len : 0;
}

int rtid__svc_batch_parse(const char *buf, size_t len, int *op, int *pids, size_t *n)
{
	int got[RTID__SVC_BATCH_MAX], o;
	struct words w;

	if (split(buf, len, MAX_WORDS, &w) < 0 || w.n < 3 || !is(&w, 0, "batch"))
		return -EINVAL;
	o = index_of(&w, 1, op_names, RTID__OP_COUNT);
	if (o != RTID__OP_RESTORE_TID && o != RTID__OP_GET_STATE)
		return -EINVAL;
	/* All words taken: a last one that held the rest (past the most) is no pid. */
	for (size_t i = 2; i < w.n; i++)
		if (positive(&w, i, &got[i - 2]) < 0)
			return -EINVAL;
	*op = o;
	*n = w.n - 2;
	memcpy(pids, got, *n * sizeof(int));
	return 0;
}

static int ans_tail(const struct words *w, struct rtid__svc_ans *a)
{
	if (w->n != kind_words[a->kind])
		return -EINVAL;
	switch (a->kind) {
	case RTID__SVC_TID:
		return positive(w, 3, &a->value);
	case RTID__SVC_STATE:
		return (a->value = index_of(w, 3, state_names, 4)) < 0 ? -EINVAL : 0;
	case RTID__SVC_DONE:
		return 0;
	case RTID__SVC_CUERR:
		if (positive(w, 3, &a->value) < 0)
			return -EINVAL;
		return copy_word(w, 4, a->name, sizeof(a->name)) < 0 ? -EINVAL
		       : copy_word(w, 5, a->text, sizeof(a->text));
	case RTID__SVC_STARTED:
		return number(w, 3, &a->value);
	case RTID__SVC_ERROR:
	case RTID__SVC_UNKNOWN:
		return copy_word(w, 3, a->name, sizeof(a->name)) < 0 ? -EINVAL
		       : copy_word(w, 4, a->text, sizeof(a->text));
	case RTID__SVC_DENIED:
		return copy_word(w, 3, a->text, sizeof(a->text));
	case RTID__SVC_KINDS:
		break;
	}
	return -EINVAL;
}

int rtid__svc_ans_parse(const char *buf, size_t len, struct rtid__svc_ans *out)
{
	struct rtid__svc_ans a = { 0 };
	struct words w;
	int kind;
	size_t max;

	if (split(buf, len, 3, &w) < 0 || w.n < 3)
		return -EINVAL;
	kind = index_of(&w, 0, kind_names, RTID__SVC_KINDS);
	if (kind < 0)
		return -EINVAL;
	a.kind = (enum rtid__svc_kind)kind;
	max = kind_words[kind];
	/* Split again knowing how many words this kind has: the last is text. */
	if (split(buf, len, max, &w) < 0 || (a.op = index_of(&w, 1, op_names, RTID__OP_COUNT)) < 0 ||
	    positive(&w, 2, &a.pid) < 0 || ans_tail(&w, &a) < 0)
		return -EINVAL;
	*out = a;
	return 0;
}
