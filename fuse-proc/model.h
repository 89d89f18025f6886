/* The fake /proc's state: processes, threads and armed faults from a case,
 * and what each access does to them. All calls lock the model. */
#ifndef FAKEPROC_MODEL_H
#define FAKEPROC_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "casefile.h"

enum fp_node {
	FP_ROOT, FP_CONTROL, FP_DRIVER, FP_DRIVER_NVIDIA, FP_VERSION,
	FP_PID, FP_PID_COMM, FP_PID_STATUS, FP_TASKDIR, FP_TASK, FP_TASK_COMM,
};

struct fp_path {
	enum fp_node node;
	int pid, tid;
};

struct fp_model;

/* Build from a case; the case must outlive the model. 0 or -ENOMEM. */
int fp_model_new(const struct casefile *c, struct fp_model **out);
void fp_model_free(struct fp_model *m);

/* Map a path to a node; -ENOENT for shapes /proc never has. */
int fp_path_parse(const char *path, struct fp_path *out);

/* Whether the node exists now (0) or not (-ENOENT). */
int fp_exists(struct fp_model *m, const struct fp_path *p);

/* List a directory: fill(ctx, name, offset) for entries from offset on, in a
 * fixed order, stopping when fill returns non-zero. Fires walk triggers. */
int fp_list(struct fp_model *m, const struct fp_path *dir, off_t offset,
	    int (*fill)(void *ctx, const char *name, off_t next), void *ctx);

/* Open a file: a malloc'd snapshot of its content (one consistent version per
 * handle, as the kernel gives). Applies open faults. 0 or a negative errno. */
int fp_open(struct fp_model *m, const struct fp_path *p, char **buf, size_t *len);

/* Faults on read of an open comm: returns 0 or a negative errno, and sets a
 * delay and the most bytes this read may return. */
int fp_read_faults(struct fp_model *m, const struct fp_path *p, int *delay_ms, size_t *max);

/* The control file: apply "fault ...", "clear" or "reset" lines. 0 or -EINVAL. */
int fp_control(struct fp_model *m, const char *text, size_t len);

#endif
