/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Whether the plugin works in this CRIU run, decided once at init: the
 * CRIU it runs in, the stage, the image, a GPU, and a daemon or a tool to
 * ask. Apart from the hooks so that the unit tests of the pieces below need
 * no CRIU stand-in for it. */
#include <stdio.h>
#include <sys/stat.h>

#include "plugin/plugin.h"

int plug_enabled(enum plug_stage s)
{
	char why[256];
	struct stat st;

	if (plug_criu_check(why, sizeof(why)) != 0) {
		plug_log(PLUG_ERR, "refusing to run: %s; load CRIU's own cuda_plugin or a build of "
			 "rtid's against this CRIU's source\n", why);
		return -1;
	}
	if (s == PLUG_PRE_DUMP || (s == PLUG_RESTORE && !plug_criu_inventory_take()))
		return 0;
	plug_serve_settings(plug_conf_note);
	if (stat("/proc/driver/nvidia/gpus/", &st) < 0 || !S_ISDIR(st.st_mode)) {
		plug_log(PLUG_INFO, "no GPU device found: disabled\n");
		return 0;
	}
	if (!plug_serve_present() && !plug_tool_usable()) {
		plug_log(PLUG_WARN, "neither rtid serve nor a cuda-checkpoint that knows --action "
			 "on PATH: disabled\n");
		return 0;
	}
	plug_log(PLUG_INFO, "initialized: stage %d, built for CRIU " RTID_CRIU_VERSION ", %s\n", s,
		 plug_serve_present() ? "rtid serve present" : "cuda-checkpoint only");
	return 1;
}
