/* Starting and stopping the fake /proc (fuse-proc/fakeproc) from a harness:
 * the case runner, the simulator's check, the FUSE tests. */
#ifndef RTID_FAKEPROC_RUN_H
#define RTID_FAKEPROC_RUN_H

#include <sys/types.h>

/* Start fakeproc on mnt for casefile and wait, on its readiness pipe, until
 * the mount is up. Returns its pid, or -1 (then *status, when not NULL, holds
 * its wait status if it started and died). */
pid_t fakeproc_start(const char *fakeproc, const char *casefile, const char *mnt, int *status);

/* SIGTERM (fakeproc unmounts), reap, and detach the mount should anything
 * be left. Async-signal-safe. */
void fakeproc_stop(pid_t pid, const char *mnt);

#endif
