/* The settings file of the shim, of every rtid command and of rtid's CRIU
 * plugin: one lookup, one set of refusals, one syntax, one list of names.
 * Engines run CRIU with an environment of their own (Podman passes the
 * runtime PATH and XDG_RUNTIME_DIR only, CRI-O its monitor_env, containerd
 * its own), so a setting a user exports never reaches the shim or the
 * plugin; a file does. It holds the same names as the environment. */
#ifndef RTID_CONF_H
#define RTID_CONF_H

#include <stdbool.h>
#include <stddef.h>

#define RTID__CONF_MAX 16384 /* bytes of a settings file */

/* Whether name (len bytes) is a setting a file may hold. */
bool rtid__conf_known(const char *name, size_t len);
/* The i-th name a file may hold (NULL past the last). */
const char *rtid__conf_name(size_t i);

/* The file: RTID_SHIM_CONF when set ("" for none: NULL), else
 * PREFIX/etc/rtid/shim.conf when it exists, PREFIX being self (the running
 * program, or the plugin's own file) less its last up components, else the
 * system default compiled in (/etc/rtid/shim.conf). buf holds a path it may
 * return. */
const char *rtid__conf_path(const char *self, unsigned up, char *buf, size_t len);
/* The same for the running program, PREFIX/bin/rtid (/proc/self/exe). */
const char *rtid__conf_program_path(char *buf, size_t len);

/* Each line of a settings file: name and value of a setting; or, for a line
 * that is none (not NAME=VALUE with NAME a known one), name NULL and value
 * what stands before its '=' (the whole line without one), so that a
 * misspelt name is quoted. Blank lines and # comments are skipped; blanks
 * around a line are not part of it. */
typedef void (*rtid__conf_fn)(void *ctx, unsigned line, const char *name, const char *value);
/* Read the file at path, never through a symbolic link, trusted only when a
 * regular file owned by root or us and not writable by group or others, at
 * most RTID__CONF_MAX bytes; give fn each line. 0, or a negative errno and
 * *why (-ENOENT: no file; -EPERM: not trusted; -ELOOP: a link). */
int rtid__conf_read(const char *path, rtid__conf_fn fn, void *ctx, const char **why);

/* What is wrong with the file, in words naming it and the line, for whoever
 * loads it to say where it says things (the shim: its log; rtid: stderr;
 * the plugin: CRIU's log). */
typedef void (*rtid__conf_note_fn)(void *ctx, const char *what);
/* Fill the environment from the file at path (NULL: none): each setting the
 * environment lacks, so that the environment wins; only the names of only
 * (NULL-ended; NULL for every name). RTID_REAL_TOOL's old name
 * RTID_CUDA_CHECKPOINT is taken for it where RTID_REAL_TOOL is not set, the
 * environment's before the file's, and loses to RTID_REAL_TOOL set in the
 * same place. note gets a file that cannot be read or is not trusted (then
 * ignored whole) and each line that is no setting, wherever it stands; no
 * file is no fault. */
void rtid__conf_load(const char *path, const char *const *only, rtid__conf_note_fn note,
		     void *ctx);
/* The environment's RTID_CUDA_CHECKPOINT as RTID_REAL_TOOL where that is not
 * set (rtid__conf_load's first step, for doctor, which reads the file itself). */
void rtid__conf_alias(void);

#endif
