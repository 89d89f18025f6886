/* A daemon under test: rtid serve in a temporary directory with a fake proc
 * tree, the mock libcuda driven by a case file, and its call log. */
#ifndef RTID_SERVE_HARNESS_H
#define RTID_SERVE_HARNESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "proto/service-client.h"

struct daemon {
	pid_t pid;
	char dir[256], sock[320], log[320], casefile[320], proc[320], stderr_path[320];
};

/* A fresh directory: proc/driver/nvidia/version (580.159.03), proc/PID for
 * the pids given (0-terminated), and the case text as its case file
 * ("@NAME": the file cases/NAME.case). */
void hd_prepare(struct daemon *d, const char *case_text, const int *pids);
/* Start rtid serve with extra options (NULL-terminated, may be NULL) and wait
 * for --ready-fd. */
void hd_start(struct daemon *d, const char *const *extra);
/* The same under an fd limit of nofile (soft and hard; soft_only: the hard
 * limit left as it is). */
void hd_start_limited(struct daemon *d, unsigned nofile, bool soft_only, const char *const *extra);
/* SIGTERM, reap; returns its exit status (or 128 + signal). */
int hd_stop(struct daemon *d);
/* Stop it (it must exit 0) and remove the directory. */
void hd_cleanup(struct daemon *d);

/* One request on a fresh connection. Returns rtid__svc_call's result. */
int hd_ask(const struct daemon *d, int op, int pid, unsigned ms, struct rtid__svc_ans *a);

/* The shim as CRIU runs it: fork + exec, stdout and stderr in one pipe. */
struct shim_run {
	int status; /* exit status, or 128 + signal */
	char out[512];
};
struct shim_run hd_shim(const struct daemon *d, const char *sock, const char *const *args);

/* The shim started in the background, as concurrent CRIU runs start it. */
struct shim_bg {
	pid_t pid;
	int out; /* its stdout and stderr */
};
void hd_shim_start(const struct daemon *d, const char *const *args, struct shim_bg *b);
/* Wait for it: its status and output. */
struct shim_run hd_shim_wait(struct shim_bg *b);

/* The wall-clock time of the n-th (from 0) mock log line with that event for
 * that pid, or -1 when there is none (yet). */
double hd_log_time(const struct daemon *d, const char *event, int pid, int n);
/* Wait (up to 20 s, times time_factor) until that line exists; its time. */
double hd_log_wait(const struct daemon *d, const char *event, int pid, int n);

/* Lines of the mock log holding needle. */
int hd_log_count(const struct daemon *d, const char *needle);
/* The pid ("self") of the latest log line holding needle, or -1. */
int hd_log_self(const struct daemon *d, const char *needle);
/* Whether the daemon's stderr holds needle. */
bool hd_said(const struct daemon *d, const char *needle);
/* The daemon's counter NAME of its status ("stat NAME N"); -1 when absent. */
long hd_stat(const struct daemon *d, const char *name);
/* A raw connection to the socket (no greeting sent), or -1. */
int hd_connect_raw(const char *sock);
/* A listener of another user's on sock (a process run as uid, which binds it
 * and listens, never accepting): its pid, once it listens; it ends when
 * *release is closed (hd_listener_end). Root only. */
pid_t hd_listener_as(uid_t uid, const char *sock, int *release);
void hd_listener_end(pid_t pid, int release);
/* Read one message with a timeout; its length, 0 at EOF, -1 on timeout. */
int hd_recv(int fd, char *buf, size_t cap, double seconds);
long hd_rss_kb(pid_t pid);
int hd_fd_count(pid_t pid);

#endif
