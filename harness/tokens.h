/* Splitting a case-file line into words: whitespace separates, double quotes
 * group, and inside quotes \n \t \\ \" and \xHH stand for bytes. */
#ifndef RTID_TOKENS_H
#define RTID_TOKENS_H

#include <stddef.h>

#define TOK_MAX 24

struct tok {
	char *s;     /* NUL-terminated; may hold NULs from \x00 (see len) */
	size_t len;
};

struct toks {
	struct tok v[TOK_MAX];
	size_t n;
	char buf[1024];
};

/* Split line (without its newline); '#' outside quotes starts a comment.
 * Returns 0, or -EINVAL with err naming the problem. */
int tok_split(const char *line, struct toks *t, char *err, size_t errlen);

#endif
