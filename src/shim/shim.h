/* rtid shim: the drop-in cuda-checkpoint. It asks rtid serve first, then
 * answers --get-restore-tid through the resolver, and hands every other call
 * (and any failure of its own) to the real tool, so that CRIU never sees an
 * exit status of rtid's. Uses the command's options and hygiene (cli/). */
#ifndef RTID_SHIM_H
#define RTID_SHIM_H

#include <stdbool.h>
#include <stddef.h>

/* rtid shim ARGS..., and rtid run as cuda-checkpoint. Returns the exit status,
 * or does not return (the real tool was exec'd). */
int cmd_shim(int argc, char **argv);
/* The shim asks rtid serve first: true when it answered (its output printed,
 * *rc the exit status); false leaves the call to the shim's usual path. */
bool shim_try_service(int argc, char **argv, int *rc);
/* --- shim-conf.c: settings from a file, for engines that pass no environment --- */
/* The file: RTID_SHIM_CONF when set ("" for none), else PREFIX/etc/rtid/shim.conf
 * beside the rtid that runs (PREFIX/bin/rtid) when it exists, else
 * /etc/rtid/shim.conf. NULL for none; buf holds the path it may return. */
const char *shim_conf_path(char *buf, size_t len);
/* Apply the file's NAME=VALUE lines, each only where the environment lacks
 * NAME (the environment wins), from a file nobody but root and us can
 * change. What is wrong (a line by its number, an untrusted file) goes to
 * RTID_SHIM_LOG and is skipped, never to stderr. 0, or a negative errno
 * when the file was there but not read. */
int shim_conf_load(void);

/* Append one line (the pid, then fmt) to RTID_SHIM_LOG when it is set: why the
 * shim did not answer itself. Never on stderr, which CRIU reads. */
void shim_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
