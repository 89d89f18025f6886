/* Strict parsers for foreign text (tool output, /proc files, command lines,
 * version strings). Internal to rtid: shared by the library, the command,
 * the driver-API worker, fakeproc and the mocks, not exported from librtid.
 * Each returns 0 or -EINVAL and writes its out-parameter only on success. */
#ifndef RTID_PARSE_H
#define RTID_PARSE_H

#include <stdbool.h>
#include <stddef.h>

/* Tool stdout: exactly one positive decimal that fits an int, optional
 * surrounding ASCII whitespace. */
int rtid__parse_tid(const char *buf, size_t len, int *tid);

/* Seconds, as every option and setting takes them ("2", "0.5"): a whole
 * decimal number, finite, > 0 and at most 1e6. 0 (*out) or -EINVAL. */
int rtid__parse_seconds(const char *s, double *out);
/* The environment's name in seconds (rtid__parse_seconds), else def: unset,
 * empty or not seconds. */
double rtid__env_seconds(const char *name, double def);

/* A whole decimal pid/tid string ("1234"): no sign, no spaces, > 0. */
int rtid__parse_pid(const char *s, int *pid);

/* First line of /proc/driver/nvidia/version: copies the version ("580.65.06")
 * into out. -EINVAL when no version is found, -ENOSPC if outlen is too small. */
int rtid__parse_driver_version(const char *buf, size_t len, char *out, size_t outlen);

/* A version string of the form N(.N){1,3}. */
bool rtid__version_valid(const char *v);

/* Field 22 (starttime) of a /proc/PID/stat line of len bytes: -EINVAL unless
 * the line has the shape the kernel writes. */
int rtid__parse_stat_start(const char *buf, size_t len, unsigned long long *out);

/* The value of the "Key:" line of a /proc status text, a decimal >= 0.
 * -EINVAL when the line is missing or its value is not a number. */
int rtid__status_field(const char *buf, size_t len, const char *key, int *out);

/* Whether s occurs in buf (len bytes) as a string of its own: a NUL right
 * before it (never at buf's first byte) and right after it inside buf. How
 * rtid's CRIU plugin finds the CRIU version string in the running binary:
 * "4.2" is not "4.2.1" nor "14.2". */
bool rtid__has_cstring(const char *buf, size_t len, const char *s);

#endif
