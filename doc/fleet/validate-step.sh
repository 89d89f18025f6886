#!/bin/sh
# One validation on this node, run as a step of the workload's own job, where
# its GPU processes live. The report gets a name no other step or node uses.
set -eu
reports=${RTID_REPORTS:-/shared/rtid/reports}
out="$reports/${SLURM_JOB_ID:-nojob}.${SLURM_STEP_ID:-0}-$(hostname).json"
exec rtid validate --all --backend api --no-attest --report "$out"
