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
	/* A dump asks at once (PAUSE_DEVICES follows); a restore only once the
	 * tree is restored, by when an idle connection has been closed. */
	if (s == PLUG_DUMP && plug_serve_present())
		plug_serve_open();
	return 1;
}

void plug_cost_add(struct plug_cost *c, enum plug_hook h, bool cuda, double s)
{
	c->s[h][cuda] += s;
	c->n[h][cuda]++;
}

void plug_cost_say(const struct plug_cost *c)
{
	static const char *const name[PLUG_H_COUNT] = { "PAUSE_DEVICES", "CHECKPOINT_DEVICES",
							"RESUME_DEVICES_LATE" };
	char line[512];
	int n = snprintf(line, sizeof(line), "hook cost: init %.0f us", c->init_s * 1e6);
	bool any = false;

	for (int h = 0; h < PLUG_H_COUNT; h++) {
		if (!c->n[h][0] && !c->n[h][1])
			continue;
		any = true;
		n += snprintf(line + n, sizeof(line) - (size_t)n, "; %s %u without CUDA %.0f us, %u "
			      "with %.0f us", name[h], c->n[h][0], c->s[h][0] * 1e6, c->n[h][1],
			      c->s[h][1] * 1e6);
	}
	if (any)
		plug_log(PLUG_DEBUG, "%s\n", line);
}
