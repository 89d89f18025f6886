/* rtid serve status, shared between its command (cli-serve-status.c: the
 * options, the question, words and JSON) and its Prometheus text
 * (cli-serve-prom.c, which also reads the daemon's words for both: the
 * calls go one way). Private to the command. */
#ifndef RTID_CLI_SERVE_STATUS_H
#define RTID_CLI_SERVE_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The most words a stat message has that is read word by word: a histogram's
 * counts after its name and operation (the daemon sends 15). */
#define SSTAT_WORDS 40

/* How the daemon was found: it answered, it could not be asked, or this
 * user may not connect to its socket (which says nothing of the daemon). */
enum sstat_up { SSTAT_UP, SSTAT_DOWN, SSTAT_NO_PERMISSION };

/* A number of the daemon's, checked whole: true and *out, else false
 * (*out then unspecified). */
bool sstat_number(const char *s, double *out);
/* Split s in place at spaces into at most max words in w; how many. */
size_t sstat_split(char *s, char **w, size_t max);
/* The Prometheus text of the daemon's stat messages (n of them; none when
 * it was not asked) into f: every family with its HELP and TYPE, in one
 * block, base units, the known series at 0, the latency a histogram. */
void sstat_prom(FILE *f, char *const *stat, size_t n, enum sstat_up up);

#endif
