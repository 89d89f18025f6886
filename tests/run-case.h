/* The case runner's pieces: running the resolver both ways, and checking. */
#ifndef RTID_RUN_CASE_H
#define RTID_RUN_CASE_H

#include "casefile.h"
#include "basic/parse.h"
#include "rtid.h"

struct runner {
	char log[512], attest[512], casefile[4096];
	const char *mnt;
	struct rtid_attestation *att;
	int unexpected; /* calls the mocks were not told about */
	int cli_status; /* exit status of the last rtid run */
	int attaches;   /* cuInit calls in the last run */
	int left_running; /* mock processes still alive after the run */
	enum rtid_backend backend; /* of the run under way */
};

/* What one pid got, either way, names as in JSON ("-" for null). */
struct got {
	int pid, tid, calls;
	bool present;
	char source[16], fallback[24], crosscheck[16], error[24];
};

void rc_prepare(const struct casefile *c, struct runner *rn, const char *dir, const char *mnt,
		const char *casefile);
void rc_release(struct runner *rn);
void rc_run_lib(const struct casefile *c, struct runner *rn, enum rtid_mode mode, struct got *g);
void rc_run_cli(const struct casefile *c, struct runner *rn, enum rtid_mode mode, struct got *g);
void rc_count_calls(const struct casefile *c, struct runner *rn, struct got *g);
/* Print each failed expectation; returns how many failed. */
int rc_check(const struct casefile *c, enum rtid_mode mode, const char *via, const struct got *g,
	     const struct runner *rn);

#endif
