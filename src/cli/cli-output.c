/* How the rtid command shows results: JSON lines or a table. */
#include <jansson.h>

#include "cli/cli.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

void cli_print_json(FILE *f, const struct rtid_result *r)
{
	json_t *o = json_pack("{s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:f}",
			      "pid", r->pid,
			      "tid", r->tid > 0 ? json_integer(r->tid) : json_null(),
			      "source", str_or_null(rtid_source_name(r->source)),
			      "fallback", str_or_null(rtid_fallback_name(r->fallback)),
			      "crosscheck", str_or_null(rtid_xcheck_name(r->crosscheck)),
			      "error", str_or_null(rtid_error_name(r->error)),
			      "detail", r->error ? json_string(r->detail) : json_null(),
			      "scan_candidates", r->scan_candidates >= 0
						 ? json_integer(r->scan_candidates) : json_null(),
			      "ms", (double)(long long)(r->ms * 1000.0) / 1000.0);

	if (!o)
		return;
	json_dumpf(o, f, JSON_COMPACT | JSON_REAL_PRECISION(9));
	fputc('\n', f);
	json_decref(o);
}

void cli_print_table_head(FILE *f)
{
	fprintf(f, "%-8s %-8s %-6s %-16s %-10s %9s  %s\n", "PID", "TID", "SOURCE", "FALLBACK",
		"CROSSCHECK", "MS", "ERROR");
}

static const char *dash(const char *s) { return s ? s : "-"; }

void cli_print_row(FILE *f, const struct rtid_result *r)
{
	char tid[16];

	if (r->tid > 0)
		snprintf(tid, sizeof(tid), "%d", r->tid);
	else
		snprintf(tid, sizeof(tid), "%s", r->error ? "-" : "none");
	fprintf(f, "%-8d %-8s %-6s %-16s %-10s %9.1f  %s%s%s\n", r->pid, tid,
		dash(rtid_source_name(r->source)), dash(rtid_fallback_name(r->fallback)),
		dash(rtid_xcheck_name(r->crosscheck)), r->ms, dash(rtid_error_name(r->error)),
		r->error ? ": " : "", r->error ? r->detail : "");
}
