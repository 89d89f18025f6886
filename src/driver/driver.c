/* The driver's answers for a batch, from the backend the settings name: one
 * table, so that adding a backend is a file and a row (see CONTRIBUTING.md). */
#include "driver/driver.h"

static const struct rtid__backend *const backends[] = {
	[RTID_BACKEND_TOOL] = &rtid__tool_backend,
	[RTID_BACKEND_API] = &rtid__api_backend,
	[RTID_BACKEND_SERVICE] = &rtid__service_backend,
};
_Static_assert(sizeof(backends) / sizeof(backends[0]) == RTID__BACKEND_MAX,
	       "every backend has a row");

void rtid__driver_batch(struct rtid__driver *d, const int *pids, const bool *need, size_t n,
			struct rtid__answer *out, double deadline)
{
	/* rtid_ctx_new refuses a backend out of range. */
	backends[d->backend]->batch(d, pids, need, n, out, deadline);
}

void rtid__driver_end(struct rtid__driver *d)
{
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (backends[i]->end)
			backends[i]->end(d);
}
