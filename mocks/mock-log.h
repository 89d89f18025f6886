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

#endif
