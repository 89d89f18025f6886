/* Pieces shared by the case-file parser's files. */
#ifndef RTID_CASEFILE_INT_H
#define RTID_CASEFILE_INT_H

#include "casefile.h"
#include "tokens.h"

/* Grow a power-of-two array before adding element n. */
#define GROW(arr, n) \
	(((n) & ((n) - 1)) == 0 ? realloc((arr), sizeof(*(arr)) * ((n) ? (n) * 2 : 1)) : (arr))

int cf__fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int cf__num(const char *s, int *out);  /* > 0 */
int cf__num0(const char *s, int *out); /* >= 0 */
int cf__seconds(const char *s, double *out);
int cf__comm_of(const struct tok *t, char *out, size_t *len);
int cf__note_pid(struct casefile *c, int pid); /* add pid to the pids resolved, once */
/* Add a task (its pid to the pids resolved) or an answer: 0 or -ENOMEM. */
int cf__add_task(struct casefile *c, int pid, int tid, const char *comm, size_t len, bool nonl);
int cf__add_answer(struct casefile *c, const struct cf_answer *a);
/* Read one line (without its newline) into c, t its words' storage: 0 (also
 * for a blank or comment line), or a negative errno, -EINVAL with err set. */
int cf__line(struct casefile *c, const char *line, struct toks *t, char *err, size_t len);
int cf__add_fault(struct casefile *c, const struct toks *t, char *err, size_t len);
int cf__add_attaches(struct casefile *c, const struct toks *t, char *err, size_t len);
int cf__add_expect(struct casefile *c, const struct toks *t, char *err, size_t len);

#endif
