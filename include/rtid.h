/* rtid: find the CUDA driver's restore thread of a process, safely.
 *
 * All functions return 0 or a negative errno unless said otherwise, write their
 * out-parameters only on success, and never print.
 *
 * Threads: a context (rtid_ctx) is not thread-safe; use one per thread, or
 * serialise the calls on it. Distinct contexts may be used at once from
 * different threads, and an attestation may be shared by contexts as long as
 * no thread changes it meanwhile. The library starts no threads of its own.
 *
 * Children: the tool and api backends run cuda-checkpoint, or the driver-API
 * worker, as child processes of the calling process, and reap each one by its
 * own pid (waitpid(pid)) before the call returns. A caller that reaps with
 * waitpid(-1), or sets SIGCHLD to SIG_IGN, takes those children away: a tool
 * query whose exit status was taken ends in RTID_ERR_TOOL_CRASHED, never in an
 * answer. Signal dispositions are left as they are; the library's own sockets
 * are written with MSG_NOSIGNAL.
 *
 * Environment: RTID_WORKER (the driver-API worker's path, instead of the
 * installed one), PATH (to find cuda-checkpoint when rtid_config.tool is
 * NULL) and RTID_SOCKET (the service backend's socket when
 * rtid_config.service_socket is NULL) are read when a context is created or
 * used; nothing else. */
#ifndef RTID_H
#define RTID_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Only what this header declares is exported from librtid. */
#define RTID_EXPORT __attribute__((visibility("default")))

/* The driver's restore-thread name in every public sighting; NOT an API. */
#define RTID_PATTERN_DEFAULT "^cuda[0-9a-f]{11}$"
#define RTID_ATTESTATION_DEFAULT "/var/lib/rtid/attestation.json"
#define RTID_TIMEOUT_DEFAULT 60.0
#define RTID_JOBS_DEFAULT 8
/* Agreements a driver version needs, with no mismatch, before the scan is trusted. */
#define RTID_ATTEST_MIN_AGREE 10

enum rtid_mode {
	RTID_MODE_DRIVER,     /* the driver's answer only */
	RTID_MODE_SCAN,       /* scan when attested and unambiguous, else driver */
	RTID_MODE_CROSSCHECK, /* both; the driver's answer is returned */
	RTID_MODE_CANARY,     /* batch: cross-check the first pid, scan the rest */
	RTID__MODE_MAX,       /* the number of modes; not a mode */
};

enum rtid_backend {
	RTID_BACKEND_TOOL, /* spawn cuda-checkpoint per query */
	RTID_BACKEND_API,  /* one worker process that loads libcuda once */
	RTID_BACKEND_SERVICE, /* ask rtid serve, which holds one attach per node */
	RTID__BACKEND_MAX,    /* the number of backends; not a backend */
};

enum rtid_source {
	RTID_SRC_NONE,
	RTID_SRC_SCAN,
	RTID_SRC_TOOL,
	RTID_SRC_API,
	RTID_SRC_SERVICE,
	RTID__SRC_MAX, /* the number of sources; not a source */
};

enum rtid_fallback {
	RTID_FB_NONE,
	RTID_FB_ZERO_MATCHES,
	RTID_FB_MULTIPLE_MATCHES,
	RTID_FB_UNSTABLE,
	RTID_FB_SCAN_ERROR,
	RTID_FB_UNATTESTED,
	RTID_FB_CANARY_MISMATCH,
	RTID_FB_VERSION_MISMATCH, /* the given driver version is not the running one */
	RTID__FB_MAX,             /* the number of fallbacks; not a fallback */
};

enum rtid_xcheck {
	RTID_XC_NONE,
	RTID_XC_AGREE,
	RTID_XC_AGREE_NONE,
	RTID_XC_MISMATCH,
	RTID__XC_MAX, /* the number of verdicts; not a verdict */
};

enum rtid_error {
	RTID_OK,
	RTID_ERR_TIMEOUT,         /* the driver query ran past its timeout */
	RTID_ERR_TOOL_CRASHED,    /* the tool died by a signal */
	RTID_ERR_TOOL_FAILED,     /* the tool exited with a failure other than "none" */
	RTID_ERR_TOOL_NOT_FOUND,  /* no cuda-checkpoint to run */
	RTID_ERR_BAD_OUTPUT,      /* exit 0 but stdout is not one positive decimal */
	RTID_ERR_NO_SUCH_PROCESS, /* the pid is not in the proc tree */
	RTID_ERR_DEADLINE,        /* the batch deadline passed first */
	RTID_ERR_SPAWN_FAILED,    /* the tool could not be started */
	RTID_ERR_API_FAILED,      /* the driver API returned an error */
	RTID_ERR_WORKER_CRASHED,  /* the driver-API worker died */
	RTID_ERR_WORKER_FAILED,   /* the driver-API worker could not start */
	RTID_ERR_NOT_A_PROCESS,   /* the number is a thread of another process (Tgid != it) */
	RTID_ERR_NOT_A_THREAD,    /* the driver named a tid that is no live thread of the process */
	RTID_ERR_PROCESS_CHANGED, /* the pid named another process (a new start time) by the answer */
	RTID__ERR_MAX,            /* the number of errors; not an error */
};

struct rtid_result {
	int pid;
	int tid;                     /* > 0: the restore thread; 0: none or error */
	enum rtid_source source;     /* who gave the answer (also for "none") */
	enum rtid_fallback fallback; /* why the scan's answer was not used */
	enum rtid_xcheck crosscheck;
	enum rtid_error error;
	int scan_candidates; /* matching threads the scan saw; -1 when not scanned */
	int scan_tid;        /* the scan's single stable candidate, 0 if none */
	double ms;           /* wall time spent on this pid */
	int code;            /* the tool's exit status, or -signal; the CUresult (api) */
	char detail[160];    /* short human reason for an error, or "" */
};

struct rtid_attestation;

/* Begin every rtid_config with this: { RTID_CONFIG_INIT, .mode = ... }. It
 * records the sizes of the config and of the results as this caller was
 * built, so that a later library, whose structs have grown at their ends,
 * reads the older config and writes the older results whole and no further. */
#define RTID_CONFIG_INIT .size = sizeof(struct rtid_config), \
			 .result_size = sizeof(struct rtid_result)

struct rtid_config {
	size_t size;        /* sizeof(struct rtid_config): RTID_CONFIG_INIT */
	size_t result_size; /* sizeof(struct rtid_result), the stride of the results */
	enum rtid_mode mode;
	enum rtid_backend backend;
	const char *proc_root;      /* NULL: "/proc" */
	const char *tool;           /* NULL: "cuda-checkpoint" from PATH */
	const char *libcuda;        /* NULL: "libcuda.so.1" */
	const char *pattern;        /* NULL: RTID_PATTERN_DEFAULT (POSIX ERE) */
	const char *driver_version; /* NULL: read <proc>/driver/nvidia/version */
	const struct rtid_attestation *attestation; /* NULL: nothing attested */
	bool allow_unattested; /* permit the scan without attestation */
	double timeout_s;      /* per driver query; <= 0: RTID_TIMEOUT_DEFAULT */
	double deadline_s;     /* whole batch; <= 0: none */
	unsigned jobs;         /* parallel tool queries; 0: RTID_JOBS_DEFAULT, at most 64 */
	const char *service_socket; /* service backend; NULL: $RTID_SOCKET, else
				     * /run/rtid/rtid.sock */
};

struct rtid_ctx;

/* Create a resolver for cfg. Returns 0 and *out, or -EINVAL (bad pattern,
 * mode, or sizes not set by RTID_CONFIG_INIT), -E2BIG (a config from a newer
 * header that sets fields this library does not know), -ENOMEM. Strings in
 * cfg are copied; the attestation is borrowed and must outlive the context.
 * Free with rtid_ctx_free(). */
RTID_EXPORT int rtid_ctx_new(const struct rtid_config *cfg, struct rtid_ctx **out);

/* Free a context; NULL is allowed. */
RTID_EXPORT void rtid_ctx_free(struct rtid_ctx *ctx);

/* Whether the configured driver version differs from the running one (read
 * from <proc>/driver/nvidia/version); rtid_ctx_driver_version then gives the
 * running one, and nothing is scanned. */
RTID_EXPORT bool rtid_ctx_version_mismatch(const struct rtid_ctx *ctx);
/* The driver version the context uses (given, or read from proc), or NULL if
 * unknown. Owned by ctx. */
RTID_EXPORT const char *rtid_ctx_driver_version(const struct rtid_ctx *ctx);

/* True when the context's driver version holds a clean attestation. */
RTID_EXPORT bool rtid_ctx_attested(const struct rtid_ctx *ctx);

/* Resolve one pid into *out. Returns 0 when *out holds an answer or a per-pid
 * error (see out->error); -EINVAL for a pid <= 0. */
RTID_EXPORT int rtid_resolve(struct rtid_ctx *ctx, int pid, struct rtid_result *out);

/* Resolve n pids, results in input order. Driver queries run up to cfg.jobs at
 * once; cfg.deadline_s bounds the whole batch (outstanding pids get
 * RTID_ERR_DEADLINE and their children are killed and reaped). Returns 0 when
 * every slot of out was written, -EINVAL or -ENOMEM otherwise. The slots are
 * cfg.result_size bytes apart, each written whole. */
RTID_EXPORT int rtid_resolve_many(struct rtid_ctx *ctx, const int *pids, size_t n,
		      struct rtid_result *out);

/* Children. Each driver query (and the api worker) runs as a child in its
 * own process group, with PR_SET_PDEATHSIG SIGKILL so that it dies with the
 * thread that started it, even when that is killed by SIGKILL. When a child
 * ends, or times out, its whole group is killed and the child reaped; output
 * a descendant still holds open is awaited for a short grace only. A
 * descendant that left the group (setsid) is out of the library's reach: a
 * caller that must not leave any behind makes itself a child subreaper
 * (PR_SET_CHILD_SUBREAPER) and kills its remaining children, as the rtid
 * command does. */

/* Kill the process group of every child the library has running and reap
 * them. Async-signal-safe: for a SIGTERM/SIGINT/SIGHUP handler of a program
 * that then exits; the resolve calls in progress must not be resumed. */
RTID_EXPORT void rtid_kill_children(void);

/* Candidate CUDA processes under proc_root: those holding a /dev/nvidia*
 * file open, or with a thread whose name matches pattern (NULL: default).
 * Returns 0 and a malloc'd ascending array in *pids (*n entries), or a
 * negative errno. The calling process is never listed. */
RTID_EXPORT int rtid_find_candidates(const char *proc_root, const char *pattern, int **pids, size_t *n);

/* Attestation: the evidence behind the scan, as a set. It holds validation
 * reports (each with an identity, and per cross-checked process its identity
 * and verdict), format-1 legacy records and explicit lifts of revocations.
 * Every count is derived from that set, so merging is a set union:
 * commutative, associative, idempotent. */

/* What the set says of one driver version. Counts saturate, never wrap. */
struct rtid_attest_entry {
	char version[32];
	unsigned long agree;      /* distinct processes that agreed, + legacy_agree */
	unsigned long agree_none; /* distinct processes, + legacy_agree_none */
	unsigned long mismatch;   /* distinct processes, + legacy_mismatch */
	bool revoked;             /* a mismatch or revocation that no lift names */
	unsigned long reports, hosts; /* reports of this version, their machines */
	bool legacy;              /* a format-1 record is part of it */
	unsigned long legacy_agree, legacy_agree_none, legacy_mismatch;
	unsigned long lifts;      /* explicit lifts recorded */
	char why[224];            /* why revoked ("" when not), else the last lift */
};

/* One cross-checked process of a report: who it was and what was found.
 * start is field 22 of /proc/PID/stat; start_known false when it could not be
 * read, or changed during the check (such an agreement proves nothing). */
struct rtid_attest_proc {
	int pid;
	bool start_known;
	unsigned long long start;
	char boot_id[40];
	enum rtid_xcheck verdict; /* RTID_XC_NONE entries are ignored */
};

/* A report's identity and origin (strings are copied). */
struct rtid_attest_report {
	const char *id;      /* unique: machine, boot, time and a random part */
	const char *version; /* driver version, N.N[.N] */
	const char *host, *machine_id, *boot_id, *time;
};

/* Load an attestation file (format 2, or format 1 as legacy records). A
 * missing file gives an empty attestation. Returns 0 and *out, -EINVAL for
 * malformed content (err gets "file:line:col: reason" when not NULL), or
 * another negative errno. */
RTID_EXPORT int rtid_attest_load(const char *path, struct rtid_attestation **out,
		     char *err, size_t errlen);

/* rtid_attest_load, also accepting a 'rtid validate' report (as a set of one
 * report; a format-1 report as a legacy record). For merging. */
RTID_EXPORT int rtid_attest_load_evidence(const char *path, struct rtid_attestation **out,
			      char *err, size_t errlen);

/* rtid_attest_load for use by the resolver: when the file or a directory above
 * it fails rtid_attest_path_safe(), the attestation is still loaded (so that
 * its revocations count) but marked untrusted: nothing in it is clean, and
 * *trusted is false with the reason in err. A missing file is empty and
 * trusted. Returns as rtid_attest_load. */
RTID_EXPORT int rtid_attest_load_trusted(const char *path, struct rtid_attestation **out,
			     bool *trusted, char *err, size_t errlen);

/* Whether path may be trusted, as OpenSSH's StrictModes decides: the file (and
 * a symlink naming it) and every directory above it owned by root or the
 * invoking user and not writable by group or others, except a sticky
 * directory above an entry owned by root or that user. Returns 0, -EPERM with
 * the reason in why, -ENOENT when missing, or another negative errno. */
RTID_EXPORT int rtid_attest_path_safe(const char *path, char *why, size_t whylen);

/* An empty attestation. Returns 0 and *out or -ENOMEM. */
RTID_EXPORT int rtid_attest_new(struct rtid_attestation **out);

RTID_EXPORT void rtid_attest_free(struct rtid_attestation *a);

/* The entry for version, or NULL. Borrowed from a, valid until a changes. */
RTID_EXPORT const struct rtid_attest_entry *rtid_attest_find(const struct rtid_attestation *a,
						 const char *version);

/* Clean: at least RTID_ATTEST_MIN_AGREE agreements (distinct processes, plus
 * a legacy record's), not revoked, and the file was trusted. */
RTID_EXPORT bool rtid_attest_clean(const struct rtid_attestation *a, const char *version);

/* Add a legacy record of counts that the caller vouches for (format 1). Legacy
 * records of one version combine by field-wise maximum, never by adding, so
 * that adding one twice changes nothing; any mismatch or revoke revokes.
 * Counts saturate. Returns 0, -EINVAL for a bad version string, -ENOMEM. */
RTID_EXPORT int rtid_attest_add(struct rtid_attestation *a, const char *version,
		    unsigned long agree, unsigned long agree_none,
		    unsigned long mismatch, bool revoke);

/* Add a report with its n processes (a report of the same id is united with
 * it). Returns 0, -EINVAL for a bad id, version or process, -ENOMEM. */
RTID_EXPORT int rtid_attest_add_report(struct rtid_attestation *a,
			   const struct rtid_attest_report *r,
			   const struct rtid_attest_proc *p, size_t n);

/* Lift the revocation of version: record (id, reason, time) naming every
 * mismatch known for it now. A later mismatch revokes again. Returns 0,
 * -ENOENT when the version is not revoked, -EINVAL, -ENOMEM. */
RTID_EXPORT int rtid_attest_lift(struct rtid_attestation *a, const char *version,
		     const char *reason, const char *id, const char *time);

/* Merge src into dst: the union of both sets. Returns 0 or -ENOMEM. */
RTID_EXPORT int rtid_attest_merge(struct rtid_attestation *dst,
		      const struct rtid_attestation *src);

/* Number of versions, and entry i (0 <= i < count), sorted by version. */
RTID_EXPORT size_t rtid_attest_count(const struct rtid_attestation *a);
RTID_EXPORT const struct rtid_attest_entry *rtid_attest_entry_at(const struct rtid_attestation *a,
						     size_t i);

/* Write atomically, as format 2: a temp file of a random name created
 * O_EXCL|O_NOFOLLOW in the same directory, mode 0644, fsync, rename, fsync of
 * the directory; a symlink is written through to its target. No lock: see
 * rtid_attest_update. Returns 0 or a negative errno (-ENOSPC as such). */
RTID_EXPORT int rtid_attest_save(const struct rtid_attestation *a, const char *path);

/* Load-modify-save under an exclusive lock (flock on PATH.lock beside the
 * file, the file read again under it); stale temp files of earlier killed
 * saves are removed first. fn changes the attestation and returns 0, or a
 * negative errno to save nothing. Returns 0 or a negative errno with the
 * reason in err (a symlink to nowhere, a lock file that is a link, fn's errno). */
RTID_EXPORT int rtid_attest_update(const char *path,
		       int (*fn)(struct rtid_attestation *a, void *arg), void *arg,
		       char *err, size_t errlen);

/* Identity for reports: the unique id of a new report (machine id, boot id,
 * time and 64 random bits) into out; the boot id of proc_root (NULL: /proc);
 * a process's start time, field 22 of <proc_root>/<pid>/stat, parsed
 * strictly. Each returns 0 or a negative errno. */
RTID_EXPORT int rtid_report_id(const char *machine_id, const char *boot_id, char *out,
		   size_t outlen);
RTID_EXPORT int rtid_boot_id(const char *proc_root, char *out, size_t outlen);
RTID_EXPORT int rtid_machine_id(char *out, size_t outlen);
RTID_EXPORT int rtid_proc_start_time(const char *proc_root, int pid, unsigned long long *out);

/* Names used in JSON and tables: a static string; NULL for the "nothing"
 * value of an enum (RTID_SRC_NONE, RTID_FB_NONE, RTID_XC_NONE, RTID_OK), where
 * JSON writes null; "?" for a value outside the enum. */
RTID_EXPORT const char *rtid_mode_name(enum rtid_mode m);
RTID_EXPORT const char *rtid_source_name(enum rtid_source s);
RTID_EXPORT const char *rtid_fallback_name(enum rtid_fallback f);
RTID_EXPORT const char *rtid_xcheck_name(enum rtid_xcheck x);
RTID_EXPORT const char *rtid_error_name(enum rtid_error e);

/* Parse a mode name. Returns 0 and *out, or -EINVAL. */
RTID_EXPORT int rtid_mode_parse(const char *s, enum rtid_mode *out);

/* The library's version, "MAJOR.MINOR.PATCH": a static string. The soname
 * carries MAJOR, which changes only when this header breaks callers. */
RTID_EXPORT const char *rtid_version(void);

#ifdef __cplusplus
}
#endif
#endif
