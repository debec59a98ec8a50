#!/usr/bin/env bash
# A fresh GPU machine's start-up with kernels built ahead (issue 28), in one run on an NVIDIA machine:
#   1. if AOT_CACHE names a kernel cache built without a GPU (`python -m tools.warmup --device cpu --arch 90,...`, as
#      the Docker image does), `train.py --task quadruped-flat` on a copy of it, Warp's per-module log on: how many
#      modules it still compiled (what ahead-of-time on a CPU does not cover);
#   2. `python -m tools.warmup` on an empty cache for quadruped-flat, humanoid-flat and quadruped-rough (timed);
#   3. `python train.py --task quadruped-flat` on that warm cache, stopped with SIGINT after TARGET_S seconds
#      (first iteration; checkpoints every 10 iterations, evaluated in native MuJoCo on the CPU cores);
#   4. the first iterations of humanoid-flat and quadruped-rough on the warm cache (FIRST_S seconds each).
# OUT_DIR receives log.txt and results.tar.
#
#   bash bench/gpu_coldstart.sh OUT_DIR          (with warp-lang and mujoco-warp importable)
set -uo pipefail
final=${1:?usage: gpu_coldstart.sh OUT_DIR}
TARGET_S=${TARGET_S:-40} FIRST_S=${FIRST_S:-45} EVAL_EVERY=${EVAL_EVERY:-10}
out=/tmp/gpu_coldstart
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/log.txt" "$final/"; tar cf "$final/results.tar" -C "$out" .' EXIT
export PYTHONUNBUFFERED=1 PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD"
log="$out/log.txt"
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/bench/gpu_stage.sh"
versions

if [ -n "${AOT_CACHE:-}" ]; then
  rm -rf /tmp/aot_cache && cp -r "$AOT_CACHE" /tmp/aot_cache
  LEGGED_MJX_WARP_CACHE=/tmp/aot_cache LEGGED_MJX_WARP_VERBOSE=1 train_stage quad_aot 60 --task quadruped-flat \
    --max-iterations 3
  echo "=== quad_aot: $(grep -c '(cached)' "$out/quad_aot.log") modules cached, $(grep -c '(compiled)' \
    "$out/quad_aot.log") compiled" | tee -a "$log"
fi

export LEGGED_MJX_WARP_CACHE=/tmp/warm_cache
rm -rf "$LEGGED_MJX_WARP_CACHE"
echo "=== warmup on an empty cache ($(date +%T))" | tee -a "$log"
t0=$(date +%s.%N)
timeout 400 python3 -m tools.warmup --task quadruped-flat --task humanoid-flat --task quadruped-rough \
  --json "$out/warmup.json" 2>&1 | tee -a "$log"
echo "=== warmup: $(python3 -c "import time; print(round(time.time() - $t0, 1))") s" | tee -a "$log"

train_stage quad_warm "$TARGET_S" --task quadruped-flat runner.save_interval=10
train_stage humanoid_first "$FIRST_S" --task humanoid-flat
train_stage rough_first "$FIRST_S" --task quadruped-rough

echo "=== native evaluation ($(date +%T))" | tee -a "$log"
evaluate_runs "$EVAL_EVERY" /tmp/quad_warm
echo "=== done ($(date +%T))" | tee -a "$log"
