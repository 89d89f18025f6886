/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plugin as CRIU sees it: registered under CRIU's own plugin's name, so
 * that a dump made by either restores with the other (the inventory records
 * the plugin by name), with the hooks CRIU's CUDA plugin has. The descriptor
 * is the one symbol the module exports. */
#pragma GCC visibility push(default)
#include <criu/include/criu-plugin.h>
#pragma GCC visibility pop

#include "basic/basic.h"
#include "plugin/plugin.h"

/* The plugin's own time in each hook, from its entry to its return, for
 * tasks with CUDA state and without; said at exit (rtid-bench's hooks part
 * reads it). */
static struct plug_cost cost;

static int on_init(int stage)
{
	double t0 = rtid__now();
	int r;

	cost = (struct plug_cost){ 0 };
	r = plug_init(stage == CR_PLUGIN_STAGE__DUMP       ? PLUG_DUMP
		      : stage == CR_PLUGIN_STAGE__PRE_DUMP ? PLUG_PRE_DUMP
							   : PLUG_RESTORE);
	cost.init_s = rtid__now() - t0;
	return r;
}

static void on_exit(int stage, int ret)
{
	plug_fini(stage == CR_PLUGIN_STAGE__DUMP       ? PLUG_DUMP
		  : stage == CR_PLUGIN_STAGE__PRE_DUMP ? PLUG_PRE_DUMP
						       : PLUG_RESTORE,
		  ret);
	plug_cost_say(&cost);
}

#define TIMED(name, hook, fn)                                                       \
	static int name(int pid)                                                    \
	{                                                                           \
		double t0 = rtid__now(), b0 = plug_ahead_s();                     \
		int r = fn(pid);                                                    \
		double b = plug_ahead_s() - b0; /* the tree's batch: theirs */    \
									            \
		plug_cost_add(&cost, hook, plug_cuda_task(pid), rtid__now() - t0 - b); \
		cost.s[hook][0] += b;                                               \
		return r;                                                           \
	}
TIMED(pause_devices, PLUG_H_PAUSE, plug_pause)
TIMED(checkpoint_devices, PLUG_H_CHECKPOINT, plug_checkpoint)
TIMED(resume_devices_late, PLUG_H_RESUME, plug_resume_late)

#pragma GCC visibility push(default)
CR_PLUGIN_REGISTER(PLUG_NAME, on_init, on_exit)
#pragma GCC visibility pop

CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__PAUSE_DEVICES, pause_devices)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__CHECKPOINT_DEVICES, checkpoint_devices)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, resume_devices_late)
