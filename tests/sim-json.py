#!/usr/bin/env python3
"""rtid-sim --json: valid JSON with the exact field names others read, and
hooks that add up (each hook's total is the sum of its call kinds; serially,
the restore hook's total is the restore's plugin time)."""
import json
import subprocess
import sys

HOOKS = ["pause_devices", "checkpoint_devices", "resume_devices_late"]
CALLS = ["get_restore_tid", "get_state", "lock", "checkpoint", "restore", "unlock", "toggle",
         "resume"]
FIELDS = ["workload", "strategy", "seed", "gpu_processes", "processes", "visible_gpus",
          "dump_s", "restore_s", "restore_tid_s", "dump_plugin_s", "restore_plugin_s", "hooks",
          "serve_attach_s", "spawns", "attaches", "dump_timed_out", "restore_timed_out",
          "wrong_tid_per_million"]


def run(sim, strategy):
    out = subprocess.run([sim, "--workload", "vllm-8b", "--strategy", strategy, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    sim = sys.argv[1]
    for strategy in ["upstream", "toggle", "serve"]:
        d = run(sim, strategy)
        assert list(d) == FIELDS, (strategy, list(d))
        assert list(d["hooks"]) == HOOKS, d["hooks"]
        for h in HOOKS:
            assert list(d["hooks"][h]) == CALLS + ["total"], d["hooks"][h]
            parts = sum(d["hooks"][h][c] for c in CALLS)
            assert abs(parts - d["hooks"][h]["total"]) < 0.01, (h, parts)
        assert abs(d["hooks"]["resume_devices_late"]["total"] - d["restore_plugin_s"]) < 0.01
        assert d["restore_plugin_s"] < d["restore_s"]
    assert run(sim, "toggle")["hooks"]["resume_devices_late"]["toggle"] > 0
    assert run(sim, "serve")["attaches"] == 0 and run(sim, "serve")["serve_attach_s"] > 0


main()
