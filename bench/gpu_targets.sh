#!/usr/bin/env bash
# Time from the command to the tracking targets on an NVIDIA GPU (issues 19 and 16), in one run:
#   1. `python train.py --task quadruped-flat` on an empty Warp kernel cache (cold: every kernel compiled), stopped
#      with SIGINT after COLD_S seconds; 2. the same command again (the cache now warm), stopped after TARGET_S;
#   3. `python train.py --task humanoid-flat`, stopped after HUMANOID_S seconds; 4. a profile of the warm start-up;
#   5. end-to-end samples/s at 4096 / 8192 / 16384 envs and env vs raw physics (warp), as in bench/gpu_warp.sh;
#   6. every EVAL_EVERY-th checkpoint (and the last) evaluated in native MuJoCo on the machine's CPU cores
#      (play.py, 100 episodes), as any other machine would evaluate it.
# Checkpoints stay under /tmp/NAME; the log gives each one's time since its command started. OUT_DIR receives two
# files, log.txt and results.tar (logs, JSON, TensorBoard events, the profile): device machines return few files.
#
#   bash bench/gpu_targets.sh OUT_DIR          (with warp-lang and mujoco-warp importable)
set -uo pipefail
final=${1:?usage: gpu_targets.sh OUT_DIR}
COLD_S=${COLD_S:-100} TARGET_S=${TARGET_S:-60} HUMANOID_S=${HUMANOID_S:-210} EVAL_EVERY=${EVAL_EVERY:-50}
out=/tmp/gpu_targets
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/log.txt" "$final/"; tar cf "$final/results.tar" -C "$out" .' EXIT
export PYTHONUNBUFFERED=1 PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD"
export LEGGED_MJX_WARP_CACHE=${LEGGED_MJX_WARP_CACHE:-$PWD/.warpcache}
log="$out/log.txt"
root=$(cd "$(dirname "$0")/.." && pwd)

source "$root/bench/gpu_stage.sh"

versions
echo "kernel cache: $LEGGED_MJX_WARP_CACHE ($(find "$LEGGED_MJX_WARP_CACHE" -type f 2>/dev/null | wc -l) files)" | tee -a "$log"

LEGGED_MJX_WARP_VERBOSE=1 train_stage quad_cold "$COLD_S" --task quadruped-flat runner.save_interval=10
train_stage quad60 "$TARGET_S" --task quadruped-flat runner.save_interval=10
LEGGED_MJX_WARP_VERBOSE=1 train_stage humanoid "$HUMANOID_S" --task humanoid-flat runner.save_interval=25

echo "=== profile of a warm start-up ($(date +%T))" | tee -a "$log"
rm -rf /tmp/prof
timeout 60 python3 -m cProfile -o "$out/startup.prof" train.py --task quadruped-flat --max-iterations 3 \
  --run-dir /tmp/prof 2>&1 | tail -3 | tee -a "$log"
for n in 4096 8192 16384; do
  echo "=== e2e-warp-$n ($(date +%T))" | tee -a "$log"
  timeout 45 python3 -m bench.end_to_end --device cuda --num-envs $n --iterations 8 --json "$out/e2e_warp_$n.json" \
    env.backend=warp 2>&1 | tail -4 | tee -a "$log"
done
echo "=== env-warp ($(date +%T))" | tee -a "$log"
timeout 90 python3 -m bench.env_throughput --backend warp --device cuda --num-envs 4096 8192 16384 --steps 100 \
  --json "$out/env_warp.json" 2>&1 | tail -8 | tee -a "$log"

echo "=== native evaluation: every ${EVAL_EVERY}th checkpoint and the last ($(date +%T))" | tee -a "$log"
evaluate_runs "$EVAL_EVERY" /tmp/quad_cold /tmp/quad60 /tmp/humanoid
echo "=== done ($(date +%T))" | tee -a "$log"
