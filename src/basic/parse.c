/* Strict parsers for foreign text: tool output, /proc names, the driver
 * version file. No atoi/sscanf: every byte is accounted for. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "basic/parse.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Decimal digits in [s, s+len) to a positive int. -EINVAL on any other byte,
 * on zero, or on overflow. */
static int parse_decimal(const char *s, size_t len, int *out)
{
	long v = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(s[i]))
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
		if (v > INT_MAX)
			return -EINVAL;
	}
	if (v == 0)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

int rtid__parse_tid(const char *buf, size_t len, int *tid)
{
	size_t b = 0, e = len;

	if (!buf)
		return -EINVAL;
	while (b < e && is_space(buf[b]))
		b++;
	while (e > b && is_space(buf[e - 1]))
		e--;
	return parse_decimal(buf + b, e - b, tid);
}

int rtid__parse_pid(const char *s, int *pid)
{
	if (!s)
		return -EINVAL;
	return parse_decimal(s, strlen(s), pid);
}

bool rtid__version_valid(const char *v)
{
	size_t n = 0, groups = 1, digits = 0;

	if (!v)
		return false;
	for (; v[n]; n++) {
		if (v[n] == '.') {
			if (digits == 0)
				return false;
			groups++;
			digits = 0;
		} else if (is_digit(v[n])) {
			digits++;
		} else {
			return false;
		}
		if (n >= 31)
			return false;
	}
	return digits > 0 && groups >= 2 && groups <= 4;
}

/* The version is the first whitespace-separated token of the first line that
 * has the N.N[.N] shape: the words before it vary between the proprietary and
 * the open kernel module ("x86_64" never has that shape). */
int rtid__parse_driver_version(const char *buf, size_t len, char *out, size_t outlen)
{
	static const char prefix[] = "NVRM version:";
	size_t line = 0, i;

	if (!buf || len < sizeof(prefix) - 1 || memcmp(buf, prefix, sizeof(prefix) - 1))
		return -EINVAL;
	while (line < len && buf[line] != '\n')
		line++;
	for (i = sizeof(prefix) - 1; i < line;) {
		char tok[33];
		size_t b;

		while (i < line && is_space(buf[i]))
			i++;
		b = i;
		while (i < line && !is_space(buf[i]))
			i++;
		if (i - b == 0 || i - b >= sizeof(tok))
			continue;
		memcpy(tok, buf + b, i - b);
		tok[i - b] = '\0';
		if (!rtid__version_valid(tok))
			continue;
		if (i - b + 1 > outlen)
			return -ENOSPC;
		memcpy(out, tok, i - b + 1);
		return 0;
	}
	return -EINVAL;
}

/* Lines of /proc/<pid>/status are "Key:\tvalue". Only the Name: line holds
 * text of the process's choosing, and the kernel escapes newlines in it, so
 * a line that starts with key is the kernel's own. */
int rtid__status_field(const char *buf, size_t len, const char *key, int *out)
{
	size_t klen = strlen(key), line = 0;

	while (line < len) {
		size_t end = line, b;

		while (end < len && buf[end] != '\n')
			end++;
		b = line + klen + 1;
		if (b <= end && !memcmp(buf + line, key, klen) && buf[line + klen] == ':') {
			size_t e = end;
			int v = 0;

			while (b < e && is_space(buf[b]))
				b++;
			while (e > b && is_space(buf[e - 1]))
				e--;
			if (e - b == 1 && buf[b] == '0') {
				*out = 0;
				return 0;
			}
			if (parse_decimal(buf + b, e - b, &v) < 0)
				return -EINVAL;
			*out = v;
			return 0;
		}
		line = end + 1;
	}
	return -EINVAL;
}

/* A decimal without sign or leading zero that fits unsigned long long;
 * moves *p past it. */
static int decimal(const char **p, const char *end, unsigned long long *out)
{
	unsigned long long v = 0;
	const char *s = *p;

	/* The kernel writes no leading zeros: "07" is not its shape. */
	if (s == end || *s < '0' || *s > '9' || (*s == '0' && s + 1 < end && s[1] >= '0' &&
						 s[1] <= '9'))
		return -EINVAL;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (~0ULL - (unsigned)(*s - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (unsigned)(*s - '0');
	}
	*p = s;
	*out = v;
	return 0;
}

int rtid__parse_stat_start(const char *buf, size_t len, unsigned long long *out)
{
	const char *end = buf + len, *p, *close = NULL;
	unsigned long long v = 0;

	if (!buf)
		return -EINVAL;
	if (len && end[-1] == '\n')
		end--;
	/* comm may hold spaces and parentheses: it ends at the last ')'. */
	for (p = buf; p < end; p++)
		if (*p == ')')
			close = p;
	p = buf;
	if (decimal(&p, end, &v) < 0 || v == 0 || p + 2 > end || memcmp(p, " (", 2) || !close ||
	    close < p + 1 || close + 2 >= end || close[1] != ' ')
		return -EINVAL;
	p = close + 2;
	if (!strchr("RSDZTtXxKWPI", *p) || p + 1 >= end || p[1] != ' ')
		return -EINVAL;
	p += 2; /* at field 4 */
	for (int field = 4; field <= 22; field++) {
		/* Fields 4..21 may be negative (ppid 0, priority, nice, ...). */
		if (field < 22 && p < end && *p == '-')
			p++;
		if (decimal(&p, end, &v) < 0 || (p < end && *p != ' ') || (field < 22 && p == end))
			return -EINVAL;
		if (field < 22)
			p++;
	}
	*out = v;
	return 0;
}

bool rtid__has_cstring(const char *buf, size_t len, const char *s)
{
	size_t n = strlen(s);

	for (const char *p = buf; (p = memmem(p, len - (size_t)(p - buf), s, n)); p++)
		if (p > buf && p[-1] == '\0' && (size_t)(p - buf) + n < len && p[n] == '\0')
			return true;
	return false;
}

int rtid__parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	/* Decimal only: strtod would also skip blanks, take a sign, hex, inf. */
	if (!s || !((*s >= '0' && *s <= '9') || *s == '.') || s[strspn(s, "0123456789.eE+-")])
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v <= 0 || v > 1e6) /* an overflow to inf sets ERANGE */
		return -EINVAL;
	*out = v;
	return 0;
}

double rtid__env_seconds(const char *name, double def)
{
	const char *v = getenv(name);
	double s;

	return v && rtid__parse_seconds(v, &s) == 0 ? s : def;
}
