/* The device map's reader and writer (devmap.h). The text is foreign: from
 * a command line, the environment, a file beside the images or a socket;
 * every byte is checked, nothing is cut to fit. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "proto/devmap.h"

static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int rtid__uuid_parse(const char *s, size_t n, unsigned char uuid[16])
{
	unsigned char u[16];
	size_t k = 0;

	if (n != RTID__UUID_TEXT || memcmp(s, "GPU-", 4) != 0)
		return -EINVAL;
	for (size_t i = 4; i < n; i++) {
		int hi, lo;

		/* Dashes after 8, 12, 16 and 20 hex digits, and nowhere else. */
		if (i == 12 || i == 17 || i == 22 || i == 27) {
			if (s[i] != '-')
				return -EINVAL;
			continue;
		}
		if ((hi = hex(s[i])) < 0 || (lo = hex(s[i + 1])) < 0)
			return -EINVAL;
		u[k++] = (unsigned char)(hi << 4 | lo);
		i++;
	}
	memcpy(uuid, u, sizeof(u));
	return 0;
}

void rtid__uuid_format(const unsigned char uuid[16], char out[RTID__UUID_TEXT + 1])
{
	static const char digits[] = "0123456789abcdef";
	size_t o = 4;

	memcpy(out, "GPU-", 4);
	for (size_t k = 0; k < 16; k++) {
		if (k == 4 || k == 6 || k == 8 || k == 10)
			out[o++] = '-';
		out[o++] = digits[uuid[k] >> 4];
		out[o++] = digits[uuid[k] & 15];
	}
	out[o] = '\0';
}

/* Whether uuid is already on side `to` (or `from`) of the first n pairs. */
static bool named(const struct rtid__devmap *m, size_t n, const unsigned char *uuid, bool to)
{
	for (size_t i = 0; i < n; i++)
		if (!memcmp(to ? m->pair[i].to : m->pair[i].from, uuid, 16))
			return true;
	return false;
}

/* The first len bytes of s, for a message: cut, with "..." when longer. */
static void quote(char *buf, size_t cap, const char *s, size_t len)
{
	snprintf(buf, cap, "%.*s%s", (int)(len > 48 ? 48 : len), s, len > 48 ? "..." : "");
}

static int fault(char *why, size_t len, const char *what, const char *s, size_t n)
{
	char q[64];

	quote(q, sizeof(q), s, n);
	snprintf(why, len, "device map: %s '%s'", what, q);
	return -EINVAL;
}

int rtid__devmap_parse(const char *text, struct rtid__devmap *out, char *why, size_t len)
{
	struct rtid__devmap m = { 0 };
	const char *p = text;

	if (!text || !*text) {
		snprintf(why, len, "device map: empty");
		return -EINVAL;
	}
	for (;;) {
		const char *end = strchr(p, ','), *eq;
		size_t n = end ? (size_t)(end - p) : strlen(p);
		struct rtid__gpu_pair g;

		if (n == 0)
			return fault(why, len, "an empty pair in", text, strlen(text));
		if (m.n == RTID__MAP_MAX) {
			snprintf(why, len, "device map: more than %d pairs", RTID__MAP_MAX);
			return -EINVAL;
		}
		eq = memchr(p, '=', n);
		if (!eq || memchr(eq + 1, '=', n - (size_t)(eq - p) - 1))
			return fault(why, len, "a pair not OLD=NEW:", p, n);
		if (rtid__uuid_parse(p, (size_t)(eq - p), g.from) < 0)
			return fault(why, len, "a malformed GPU UUID", p, (size_t)(eq - p));
		if (rtid__uuid_parse(eq + 1, n - (size_t)(eq - p) - 1, g.to) < 0)
			return fault(why, len, "a malformed GPU UUID", eq + 1, n - (size_t)(eq - p) - 1);
		if (named(&m, m.n, g.from, false))
			return fault(why, len, "a GPU mapped twice:", p, (size_t)(eq - p));
		if (named(&m, m.n, g.to, true))
			return fault(why, len, "a GPU the target twice:", eq + 1,
				     n - (size_t)(eq - p) - 1);
		m.pair[m.n++] = g;
		if (!end)
			break;
		p = end + 1;
	}
	*out = m;
	return 0;
}

size_t rtid__devmap_format(const struct rtid__devmap *m, char *buf, size_t len)
{
	size_t o = 0;

	if (len == 0)
		return 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < m->n && i < RTID__MAP_MAX; i++) {
		char a[RTID__UUID_TEXT + 1], b[RTID__UUID_TEXT + 1];
		int r;

		rtid__uuid_format(m->pair[i].from, a);
		rtid__uuid_format(m->pair[i].to, b);
		r = snprintf(buf + o, len - o, "%s%s=%s", i ? "," : "", a, b);
		if (r < 0 || (size_t)r >= len - o) {
			buf[o] = '\0'; /* only whole pairs */
			return o;
		}
		o += (size_t)r;
	}
	return o;
}
