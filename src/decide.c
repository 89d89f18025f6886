/* The fallback rules as pure functions of what the scan saw and what the
 * driver said: one place to read them, one table of tests to prove them. */
#include "internal.h"

enum rtid_fallback rtid__scan_fallback(const struct rtid__scan *s)
{
	switch (s->status) {
	case RTID__SCAN_FOUND:
		return RTID_FB_NONE;
	case RTID__SCAN_ZERO:
		return RTID_FB_ZERO_MATCHES;
	case RTID__SCAN_MULTIPLE:
		return RTID_FB_MULTIPLE_MATCHES;
	case RTID__SCAN_UNSTABLE:
		return RTID_FB_UNSTABLE;
	case RTID__SCAN_ERROR:
	case RTID__SCAN_NOPROC:
		break;
	}
	return RTID_FB_SCAN_ERROR;
}

/* driver_tid: > 0 the driver's tid, 0 the driver's "none". The scan has a
 * verdict only when it named one thread or none; several candidates, an
 * unstable name or an unreadable task leave nothing to compare. A zero-match
 * scan beside a driver tid is a mismatch: it is how a renamed thread shows. */
enum rtid_xcheck rtid__crosscheck(const struct rtid__scan *s, int driver_tid)
{
	switch (s->status) {
	case RTID__SCAN_FOUND:
		return s->tid == driver_tid ? RTID_XC_AGREE : RTID_XC_MISMATCH;
	case RTID__SCAN_ZERO:
		return driver_tid == 0 ? RTID_XC_AGREE_NONE : RTID_XC_MISMATCH;
	default:
		return RTID_XC_NONE;
	}
}
