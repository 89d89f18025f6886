/* The resolver's context: the caller's configuration, what was learnt of the
 * driver version and its attestation, the matcher, and the driver settings
 * handed to the backends. core/ is the only layer that sees it. */
#ifndef RTID_CORE_H
#define RTID_CORE_H

#include <stdbool.h>

#include "driver/driver.h"
#include "proc/proc.h"
#include "rtid.h"

struct rtid_ctx {
	struct rtid_config cfg;
	char *proc_root;
	char driver_version[32];
	bool have_version, attested, revoked;
	bool version_mismatch; /* the given version is not the running one */
	struct rtid__matcher matcher;
	struct rtid__driver drv; /* the backends' settings; owns the tool, libcuda and socket strings */
};

#endif
