/* Meeting rtid as CRIU does: a call of the tool (or of the shim in its place)
 * made the way CRIU's CUDA plugin makes it, and an rtid serve daemon started
 * and ready. Shared by the shim and serve tests, the CRIU suite and the
 * benchmark, so that all of them call the same way. */
#ifndef RTID_PLUGIN_CALL_H
#define RTID_PLUGIN_CALL_H

#include <stddef.h>
#include <sys/types.h>

/* Run file (looked up on PATH unless it holds a slash, as execvp) with argv
 * as the plugin runs cuda-checkpoint: stdout and stderr into one pipe, the
 * first outlen - 1 bytes kept in out and NUL-terminated, the rest drained,
 * then waitpid. env: NULL, or NULL-terminated "NAME=value" strings put in
 * the child's environment only. Returns the exit status (128 + the signal
 * for a killed child), or a negative errno when no child could be started
 * (out is then "") or its status could not be had. */
int plugin_call(const char *file, char *const argv[], const char *const env[], char *out,
		size_t outlen);

/* Start rtid serve: argv is the rtid binary, "serve" and its options (at most
 * 40), NULL-terminated; "--ready-fd N" is appended. The daemon's stderr goes
 * to err_fd (>= 0), else /dev/null. Waits up to timeout_s for "ready\n" and
 * then for EOF, which proves that neither the daemon nor its worker kept the
 * pipe. Returns the daemon's pid; or a negative errno, with the child killed
 * and reaped: -ETIMEDOUT, -EPROTO when anything but "ready\n" then EOF came. */
pid_t serve_spawn(const char *const argv[], int err_fd, double timeout_s);

#endif
