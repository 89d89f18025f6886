/* Which actions may run side by side for launch jobs (rules.h). */
#include "rules/rules.h"

bool rtid__jobs_apart(const struct rtid__job *a, const struct rtid__job *b)
{
	if (a->kind == RTID__JOB_NONE || b->kind == RTID__JOB_NONE)
		return true;
	if (a->kind == RTID__JOB_UNKNOWN || b->kind == RTID__JOB_UNKNOWN)
		return false; /* it may be the other's job */
	return a->dev != b->dev || a->ino != b->ino;
}
