/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plugin as CRIU sees it: registered under CRIU's own plugin's name, so
 * that a dump made by either restores with the other (the inventory records
 * the plugin by name), with the hooks CRIU's CUDA plugin has. The descriptor
 * is the one symbol the module exports. */
#pragma GCC visibility push(default)
#include <criu/include/criu-plugin.h>
#pragma GCC visibility pop

#include "plugin/plugin.h"

static int on_init(int stage)
{
	return plug_init(stage == CR_PLUGIN_STAGE__DUMP       ? PLUG_DUMP
			 : stage == CR_PLUGIN_STAGE__PRE_DUMP ? PLUG_PRE_DUMP
							      : PLUG_RESTORE);
}

static void on_exit(int stage, int ret)
{
	plug_fini(stage == CR_PLUGIN_STAGE__DUMP       ? PLUG_DUMP
		  : stage == CR_PLUGIN_STAGE__PRE_DUMP ? PLUG_PRE_DUMP
						       : PLUG_RESTORE,
		  ret);
}

#pragma GCC visibility push(default)
CR_PLUGIN_REGISTER(PLUG_NAME, on_init, on_exit)
#pragma GCC visibility pop

CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__PAUSE_DEVICES, plug_pause)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__CHECKPOINT_DEVICES, plug_checkpoint)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, plug_resume_late)
