/* rtid serve for the simulator's check: started on the fake /proc with the
 * mock libcuda, ready once its one driver attach is paid. */
#ifndef RTID_SIM_CHECK_SERVE_H
#define RTID_SIM_CHECK_SERVE_H

#include <sys/types.h>

/* Start `rtid serve` (rtid: its binary) on socket sock, proc root mnt,
 * libcuda lib; returns its pid once it has attached and is ready, or -1 (it
 * is reaped). stderr goes to /dev/null. */
pid_t check_serve_start(const char *rtid, const char *sock, const char *mnt, const char *lib);

/* Stop it (SIGTERM) and reap it; pid <= 0 does nothing. */
void check_serve_stop(pid_t pid);

#endif
