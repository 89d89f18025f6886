/* The call log of the mocks: one JSON object per line, appended with a single
 * write so that parallel callers never interleave. */
#ifndef RTID_MOCK_LOG_H
#define RTID_MOCK_LOG_H

/* Append {"mock":who,"event":event,"pid":pid,"argv":[...],"t":now,"note":note}
 * to $RTID_MOCK_LOG when set. argv may be NULL. */
void mock_log(const char *who, const char *event, int pid, int argc, char **argv,
	      const char *note);

/* Wall-clock seconds, for log timestamps comparable across processes. */
double mock_now(void);

/* Whether op is in the comma list in environment variable var; when the
 * list is unset or empty: all. */
int mock_listed(const char *var, const char *op, int all);

/* The stand-in for a long driver call: an op named in $RTID_MOCK_SLOW_OPS
 * takes $RTID_MOCK_SLOW_S seconds (scaled by RTID_TIME_SCALE), in the mock
 * tool and the mock libcuda alike. */
void mock_slow_op(const char *op);

#endif
