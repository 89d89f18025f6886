/* Case files: one fault scenario each, read by the fake /proc, the mocks of
 * cuda-checkpoint and libcuda, and the case runner. Format: cases/README.md. */
#ifndef RTID_CASEFILE_H
#define RTID_CASEFILE_H

#include <stdbool.h>
#include <stddef.h>

#define CF_COMM_MAX 15 /* the kernel's TASK_COMM_LEN - 1 */

struct cf_task {
	int pid, tid;
	char comm[CF_COMM_MAX + 1];
	size_t comm_len;
	bool no_newline;
};

enum cf_answer_kind {
	CF_ANS_TID,     /* print the tid, exit 0 */
	CF_ANS_NONE,    /* exit 1, "invalid argument" */
	CF_ANS_NOTINIT, /* exit 3, "initialization error" */
	CF_ANS_EXIT,    /* exit with value and a message */
	CF_ANS_HANG,    /* never answer */
	CF_ANS_CRASH,   /* die by signal value */
	CF_ANS_STDOUT,  /* print text exactly, exit 0 */
};

struct cf_answer {
	int pid;
	enum cf_answer_kind kind;
	int value;
	char *text;       /* CF_ANS_STDOUT */
	char *noise;      /* extra stderr, or NULL */
};

enum cf_fault_kind {
	CF_F_RENAME, CF_F_VANISH, CF_F_APPEAR, CF_F_EACCES, CF_F_EIO, CF_F_DELAY,
	CF_F_SHORT_READ, CF_F_EXIT, CF_F_ENOENT,
	CF_F_EXIT_THREAD, /* one thread exits: unlisted, ENOENT, ESRCH on an open comm */
	CF_F_CHUNK,       /* readdir of the task directory returns n entries per call */
};
enum cf_trigger { CF_T_ALWAYS, CF_T_AT_READ, CF_T_AFTER_WALK, CF_T_AFTER_READDIR };
enum cf_op { CF_OP_OPEN, CF_OP_READ };

struct cf_fault {
	enum cf_fault_kind kind;
	int pid, tid;
	char name[CF_COMM_MAX + 1]; /* rename, appear */
	size_t name_len;
	enum cf_trigger trigger;
	int n;       /* at-read N */
	enum cf_op op;
	int ms;      /* delay */
	double probability; /* each time it could apply, it does with this (1: always) */
	int line;
};

/* Fields an expectation can name; NULL string: not checked. "-" means null. */
struct cf_expect {
	int line;
	unsigned modes; /* bit (1 << enum rtid_mode) */
	int pid;        /* 0: every pid of the case */
	const char *tid, *source, *fallback, *crosscheck, *error;
	int calls;      /* driver queries for this pid; -1: not checked */
	char *owned;    /* storage for the strings above */
};

enum cf_attest { CF_ATTEST_NONE, CF_ATTEST_CLEAN, CF_ATTEST_REVOKED, CF_ATTEST_UNSAFE };

struct casefile {
	char *path;
	char *title, *proves;
	char *version_file; /* content of driver/nvidia/version, NULL: no file */
	char *given_version; /* passed as --driver-version (and attested), NULL: none */
	enum cf_attest attest;
	double timeout_s, deadline_s, attach_delay_s;
	double none_delay_s; /* tool delay for pids whose answer is none (< 0: attach) */
	unsigned jobs;
	unsigned long seed; /* for faults with a probability (default 1) */
	unsigned groups;    /* supplementary groups in every status (Groups:), 0: none */
	char *pattern;
	unsigned backends; /* bit 0: tool, bit 1: api (default: tool) */
	int api_version;   /* what the mock's cuDriverGetVersion says (0: 13000) */
	bool old_libcuda;  /* use the mock libcuda without the checkpoint API */
	struct cf_answer init; /* what the mock's cuInit does: CF_ANS_NONE = succeed */
	int attaches[4];   /* per mode: expected cuInit calls per api run; -1: unchecked */
	struct cf_task *tasks;
	size_t ntasks;
	struct cf_answer *answers;
	size_t nanswers;
	struct cf_fault *faults;
	size_t nfaults;
	struct cf_expect *expects;
	size_t nexpects;
	int *pids; /* pids resolved: processes in order of first appearance, */
	size_t npids;
	size_t nprocs; /* the first nprocs of them; the rest only expected */
};

/* Parse a case file. Returns 0 and *out, or a negative errno with err holding
 * "file:line: reason". Free with cf_free(). */
int cf_load(const char *path, struct casefile **out, char *err, size_t errlen);
void cf_free(struct casefile *c);

/* Parse one "fault ..." line (without the keyword) into f. Returns 0 or
 * -EINVAL with err holding the reason. Used by the fake /proc's control file. */
int cf_parse_fault(const char *args, struct cf_fault *f, char *err, size_t errlen);

/* Format a fault back into case syntax. */
void cf_format_fault(const struct cf_fault *f, char *out, size_t outlen);

/* The answer for pid, or NULL. */
const struct cf_answer *cf_answer_for(const struct casefile *c, int pid);

/* Seconds scaled by RTID_TIME_SCALE (default 1). */
double cf_scaled(double seconds);

#endif
