/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Whether the plugin works in this CRIU run, decided once at init: the
 * CRIU it runs in, the stage, the image, a GPU, and a daemon or a tool to
 * ask. Apart from the hooks so that the unit tests of the pieces below need
 * no CRIU stand-in for it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugin/plugin.h"
#include "proto/devmap.h"

/* The device map of this restore: RTID_DEVICE_MAP in CRIU's environment,
 * else the file an operator put beside the images (engines give CRIU none of
 * their environment), bound to this image by its dump's run id. Never the
 * node's settings: a map belongs to one restore. 0 (a map taken, or none),
 * or -1 when there is one that cannot be used, said: restoring onto the
 * GPUs of the dump instead would put the process where it was not meant to
 * go. */
static int take_map(void)
{
	const char *env = getenv("RTID_DEVICE_MAP");
	char text[RTID__MAP_TEXT + 2], run[PLUG_RUN_MAX], why[200], from[96];
	struct rtid__devmap m;
	unsigned line;
	int e;

	plug_serve_map(&(struct rtid__devmap){ .n = 0 });
	if (env && *env) {
		snprintf(from, sizeof(from), "RTID_DEVICE_MAP");
		if (strlen(env) >= sizeof(text))
			return plug_log(PLUG_ERR, "RTID_DEVICE_MAP: longer than any map\n"), -1;
		strcpy(text, env);
	} else if ((e = plug_map_read(plug_criu_image_dir(), text, sizeof(text), run, &line)) ==
		   -ENOENT) {
		return 0;
	} else if (e < 0) {
		plug_log(PLUG_ERR, "%s beside the images: %s\n", PLUG_MAP_FILE,
			 e == -EPERM ? "someone but root or this user may write it, or it is no file"
			 : e == -ELOOP ? "a symbolic link" : e == -EIO ? "cannot be opened"
			 : line ? "malformed" : "no run line or no map line");
		if (e == -EINVAL && line)
			plug_log(PLUG_ERR, "%s: line %u is malformed\n", PLUG_MAP_FILE, line);
		return -1;
	} else if (strcmp(run, plug_criu_dump_run_id()) != 0) {
		plug_log(PLUG_ERR, "%s beside the images is for the dump of run %s, not this image's "
			 "(%s): not used\n", PLUG_MAP_FILE, run,
			 plug_criu_dump_run_id()[0] ? plug_criu_dump_run_id() : "none");
		return -1;
	} else {
		snprintf(from, sizeof(from), "%s beside the images", PLUG_MAP_FILE);
	}
	if (rtid__devmap_parse(text, &m, why, sizeof(why)) < 0)
		return plug_log(PLUG_ERR, "%s: %s\n", from, why), -1;
	plug_serve_map(&m);
	plug_log(PLUG_INFO, "restoring onto other GPUs: %s (%s)\n", text, from);
	return 0;
}

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
	if (s == PLUG_RESTORE && take_map() < 0)
		return -1;
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
