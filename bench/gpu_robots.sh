#!/usr/bin/env bash
# Robots by name on a GPU in one call (issues 45 and 46): `menagerie:unitree_go2:deploy` trained for GO2_S seconds
# with a checkpoint every 25 iterations, and mjlab's 29-joint G1 by name for G1_S seconds beside the evaluation of the
# Go2's checkpoints in native MuJoCo on the CPU cores (play.py, 100 episodes each). The robots are this repo's
# Menagerie-style test models (`python -m tests.menagerie_models`, served through MENAGERIE_ROOT). OUT_DIR receives
# log.txt and results.tar.
#
#   bash bench/gpu_robots.sh OUT_DIR              (warp-lang, mujoco-warp, gymnasium and mujoco-menagerie importable)
#   WHEELS=DIR bash bench/gpu_robots.sh OUT_DIR   (else: installs the wheelhouse first, as bench/gpu_check.sh does)
set -uo pipefail
final=${1:?usage: gpu_robots.sh OUT_DIR}
GO2_S=${GO2_S:-170} G1_S=${G1_S:-90} EVAL_EVERY=${EVAL_EVERY:-50}
out=/tmp/gpu_robots
imports="warp, mujoco_warp, gymnasium, mujoco_menagerie"
source "$(dirname "$0")/gpu_begin.sh"
versions
python3 -m tests.menagerie_models /tmp/menagerie_models > /dev/null || exit 1
export MENAGERIE_ROOT=/tmp/menagerie_models
train_stage go2_deploy "$GO2_S" --task menagerie:unitree_go2:deploy runner.save_interval=25
(log="$out/eval.txt"; evaluate_runs "$EVAL_EVERY" /tmp/go2_deploy > /dev/null 2>&1) &
evaluation=$!
train_stage g1 "$G1_S" --task menagerie:unitree_g1@g1_mjlab runner.save_interval=1000
wait "$evaluation"
echo "=== native evaluation of go2_deploy's checkpoints ($(date +%T))" | tee -a "$log"
tee -a "$log" < "$out/eval.txt"
