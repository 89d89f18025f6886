/* CRIU's log as the plugin's unit tests see it: plug_log appends each line
 * to logged (16 KiB, then cut), which a test reads and clears. */
#ifndef RTID_TEST_PLUG_LOG_H
#define RTID_TEST_PLUG_LOG_H

extern char logged[16384];

#endif
