/* Fail exactly the Nth call that reaches any of a set of libfiu failure
 * points: what both failure enumerations (resolver, attestation) step through. */
#ifndef RTID_TESTS_FIU_NTH_H
#define RTID_TESTS_FIU_NTH_H

#include <stddef.h>

/* The errno the Nth call fails with, chosen from the point's name. */
typedef int (*fiu_nth_errno)(const char *point);

/* From now on, the nth call through points[0..n) fails with why(name);
 * calls are counted from zero again. */
void fiu_nth_arm(const char *const *points, size_t n, unsigned long nth, fiu_nth_errno why);

/* Disable points[0..n) again. */
void fiu_nth_disarm(const char *const *points, size_t n);

/* Calls counted since the last arm. */
unsigned long fiu_nth_calls(void);

#endif
