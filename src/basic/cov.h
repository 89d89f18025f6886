/* Coverage builds (-Db_coverage=true): a process image that ends without
 * exit() (execve, death by a signal) loses its counters unless they are
 * written first (RTID__COV_DUMP). When it goes on after all (an execve that
 * failed), RTID__COV_RESUME counts from zero again and lets exit() write
 * what follows, added to what was written. Elsewhere both are nothing. */
#ifndef RTID_COV_H
#define RTID_COV_H

#ifdef RTID_COVERAGE
void __gcov_dump(void);
void __gcov_reset(void);
#define RTID__COV_DUMP() __gcov_dump()
#define RTID__COV_RESUME() __gcov_reset()
#else
#define RTID__COV_DUMP() ((void)0)
#define RTID__COV_RESUME() ((void)0)
#endif

#endif
