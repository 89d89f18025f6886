/* rtid shim: the drop-in cuda-checkpoint. It asks rtid serve first, then
 * answers --get-restore-tid through the resolver, and hands every other call
 * (and any failure of its own) to the real tool, so that CRIU never sees an
 * exit status of rtid's. Uses the command's options and hygiene (cli/). */
#ifndef RTID_SHIM_H
#define RTID_SHIM_H

#include <stdbool.h>

/* rtid shim ARGS..., and rtid run as cuda-checkpoint. Returns the exit status,
 * or does not return (the real tool was exec'd). */
int cmd_shim(int argc, char **argv);
/* The shim asks rtid serve first: true when it answered (its output printed,
 * *rc the exit status); false leaves the call to the shim's usual path, or,
 * with *to_tool set (when to_tool is not NULL), straight to the real tool:
 * the driver failed the query, and rtid's own resolver would only ask the
 * same tool or driver again. */
bool shim_try_service(int argc, char **argv, int *rc, bool *to_tool);
/* Append one line (the pid, then fmt) to RTID_SHIM_LOG when it is set: why the
 * shim did not answer itself. Never on stderr, which CRIU reads. */
void shim_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
