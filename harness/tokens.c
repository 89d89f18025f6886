#include "tokens.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One escape after a backslash at *p; writes the byte to *out. */
static int unescape(const char **p, char *out)
{
	const char *s = *p;
	int hi, lo;

	switch (*s) {
	case 'n': *out = '\n'; break;
	case 't': *out = '\t'; break;
	case 'r': *out = '\r'; break;
	case '\\': *out = '\\'; break;
	case '"': *out = '"'; break;
	case 'x':
		hi = hexval(s[1]);
		lo = hi < 0 ? -1 : hexval(s[2]);
		if (lo < 0)
			return -EINVAL;
		*out = (char)(hi * 16 + lo);
		s += 2;
		break;
	default:
		return -EINVAL;
	}
	*p = s + 1;
	return 0;
}

static int quoted(const char **p, char **o, const char *end, char *err, size_t errlen)
{
	const char *s = *p + 1;

	while (*s && *s != '"') {
		if (*o >= end)
			goto toolong;
		if (*s == '\\') {
			s++;
			if (unescape(&s, *o) < 0) {
				snprintf(err, errlen, "bad escape '\\%c' (use \\n \\t \\r \\\\ \\\" \\xHH)",
					 *s ? *s : ' ');
				return -EINVAL;
			}
			(*o)++;
		} else {
			*(*o)++ = *s++;
		}
	}
	if (*s != '"') {
		snprintf(err, errlen, "unterminated quote");
		return -EINVAL;
	}
	*p = s + 1;
	return 0;
toolong:
	snprintf(err, errlen, "line too long");
	return -EINVAL;
}

int tok_split(const char *line, struct toks *t, char *err, size_t errlen)
{
	char *o = t->buf, *end = t->buf + sizeof(t->buf) - 1;
	const char *p = line;

	t->n = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			return 0;
		if (t->n == TOK_MAX) {
			snprintf(err, errlen, "more than %d words", TOK_MAX);
			return -EINVAL;
		}
		t->v[t->n].s = o;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r') {
			if (o >= end) {
				snprintf(err, errlen, "line too long");
				return -EINVAL;
			}
			if (*p == '"') {
				if (quoted(&p, &o, end, err, errlen) < 0)
					return -EINVAL;
			} else {
				*o++ = *p++;
			}
		}
		t->v[t->n].len = (size_t)(o - t->v[t->n].s);
		*o++ = '\0';
		t->n++;
	}
}
