/* Coverage builds (-Db_coverage=true): a process image that ends without
 * exit() (execve, death by a signal) loses its counters unless they are
 * written first. Elsewhere this is nothing. */
#ifndef RTID_COV_H
#define RTID_COV_H

#ifdef RTID_COVERAGE
void __gcov_dump(void);
#define RTID__COV_DUMP() __gcov_dump()
#else
#define RTID__COV_DUMP() ((void)0)
#endif

#endif
