#!/usr/bin/env bash
# Issue 38's GPU checks in one call on an NVIDIA machine, under 9 minutes (prepared and dry-run on a CPU-only one):
#   1. start-up from an empty kernel cache: `train.py --task quadruped-flat`, Warp's per-module log on, SIGINT after
#      COLD_S (first iteration's time from the command; modules compiled);
#   2. start-up from a cache built without a GPU, as the Docker image builds it: `tools.warmup --cuda-only --arch
#      <this GPU's sm>` with CUDA hidden, then `train.py --task quadruped-flat` on it, SIGINT after TARGET_S, a
#      checkpoint every 10 iterations (modules compiled on the GPU: Warp's log; first iteration; checkpoint times);
#   3. the same command again on the now-warm cache (first iteration), SIGINT after WARM_S;
#   4. samples/s of every registered MuJoCo task at 4096 and 16384 envs against its physics alone
#      (`bench.samples_rate`; the other tasks' kernels compile on the GPU here, in parallel threads);
#   5. stage 2's checkpoints evaluated in native MuJoCo on the CPU cores (play.py, 100 episodes: the time to the
#      tracking targets lin <= 0.15 m/s, yaw <= 0.25 rad/s, falls < 5%), in the background of
#   6. `pytest -m cuda` (tests/rl_core/test_cuda_graphs.py and every other GPU test);
#   7. the warm start-up's stages with serial and parallel module loading (`bench.warp_startup`, fresh processes).
# Each stage has a time limit, and a stage that would end past the DEADLINE_S (default 530 s) from the start is
# skipped; a failing stage does not stop the others. OUT_DIR receives log.txt and results.tar.
#
#   bash bench/gpu_check.sh OUT_DIR                 (with warp-lang, mujoco-warp and gymnasium importable)
#   WHEELS=DIR bash bench/gpu_check.sh OUT_DIR      (else: installs DIR/*.whl, or DIR/part-*/chunk.* as cut by
#                                                    shared/tools/gpu-wheelhouse.sh, into /tmp/site first)
set -uo pipefail
final=${1:?usage: gpu_check.sh OUT_DIR}
COLD_S=${COLD_S:-60} TARGET_S=${TARGET_S:-35} WARM_S=${WARM_S:-15} DEADLINE_S=${DEADLINE_S:-535}
EVAL_EVERY=${EVAL_EVERY:-20}
START=$SECONDS
out=/tmp/gpu_check
imports="warp, mujoco_warp, gymnasium"
source "$(dirname "$0")/gpu_begin.sh"
fits() {  # fits SECONDS: whether a stage of that limit ends before the deadline (else it is skipped, and said so)
  if (( SECONDS - START + $1 > DEADLINE_S )); then
    echo "=== skipped: $1 s would pass the ${DEADLINE_S} s deadline ($((SECONDS - START)) s used)" | tee -a "$log"
    return 1
  fi
}
kernels() {  # kernels NAME: what Warp's per-module log of stage NAME says
  echo "=== $1: $(grep -c '(cached)' "$out/$1.log") modules from the cache, $(grep -c '(compiled)' "$out/$1.log")" \
    "compiled; first iteration: $(grep -m1 -E '^ *[0-9.]+ it +1/' "$out/$1.log" | awk '{print $1}') s" | tee -a "$log"
  grep '(compiled)' "$out/$1.log" | sed 's/^/    /' | tee -a "$log"
}
versions
arch=$(python3 -c "import torch; c = torch.cuda.get_device_capability(); print(c[0] * 10 + c[1])")
echo "=== sm_$arch, $(nproc --all) CPU cores" | tee -a "$log"

export LEGGED_MJX_WARP_CACHE=/tmp/cold_cache
rm -rf "$LEGGED_MJX_WARP_CACHE"
fits "$COLD_S" && LEGGED_MJX_WARP_VERBOSE=1 train_stage quad_cold "$COLD_S" --task quadruped-flat \
  runner.save_interval=1000 && kernels quad_cold

export LEGGED_MJX_WARP_CACHE=/tmp/cpu_cache
rm -rf "$LEGGED_MJX_WARP_CACHE"
if fits 150; then
  echo "=== CPU-built cache: warmup --cuda-only --arch $arch, CUDA hidden ($(date +%T))" | tee -a "$log"
  t0=$SECONDS
  CUDA_VISIBLE_DEVICES= timeout 150 python3 -m tools.warmup --task quadruped-flat --cuda-only --arch "$arch" \
    --json "$out/warmup.json" 2>&1 | grep -v "^Warp CUDA" | tee -a "$log"
  echo "=== warmup: $((SECONDS - t0)) s" | tee -a "$log"
fi
fits "$TARGET_S" && LEGGED_MJX_WARP_VERBOSE=1 train_stage quad_cpu_cache "$TARGET_S" --task quadruped-flat \
  runner.save_interval=10 && kernels quad_cpu_cache
fits "$WARM_S" && LEGGED_MJX_WARP_VERBOSE=1 train_stage quad_warm "$WARM_S" --task quadruped-flat \
  runner.save_interval=1000 && kernels quad_warm

if fits 150; then
  echo "=== samples/s, 4096 and 16384 envs ($(date +%T))" | tee -a "$log"
  tasks=$(python3 -c "from bench.samples_rate import runnable_tasks as r; first = ['quadruped-flat', 'quadruped-rough',
'humanoid-flat']; print(' '.join(f'--task {t}' for t in first + [t for t in r() if t not in first]))")
  # shellcheck disable=SC2086  # one word per argument
  timeout 150 python3 -m bench.samples_rate --device cuda --num-envs 4096 16384 --iterations 4 $tasks \
    --json "$out/samples.json" 2>&1 | grep -v "^kernels" | tee -a "$log"
fi

echo "=== native evaluation of every ${EVAL_EVERY}th checkpoint in the background ($(date +%T))" | tee -a "$log"
(log="$out/eval.txt"; evaluate_runs "$EVAL_EVERY" /tmp/quad_cpu_cache > /dev/null 2>&1) &
evaluation=$!
if fits 120; then
  echo "=== pytest -m cuda ($(date +%T))" | tee -a "$log"
  # the files holding GPU tests (collecting every file would need every optional package there)
  timeout 120 python3 -m pytest -q -p no:cacheprovider -m cuda $(grep -rl "mark.cuda" tests --include="test_*.py") 2>&1 \
    | tail -15 | tee -a "$log"
fi
wait "$evaluation"
echo "=== native evaluation ($(date +%T)): checkpoint times above (quad_cpu_cache)" | tee -a "$log"
cat "$out/eval.txt" >> "$log" 2>/dev/null
if fits 60; then  # the warm start-up's stages, serial and parallel module loading (fresh processes)
  timeout 60 python3 -m bench.warp_startup --device cuda:0 2>&1 | grep -v "^Warp CUDA" | tee -a "$log"
fi

echo "=== done after $((SECONDS - START)) s ($(date +%T))" | tee -a "$log"
