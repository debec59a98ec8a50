#!/usr/bin/env bash
# The GPU measurements of bench/RESULTS.md "MuJoCo Warp backend", in one run on an NVIDIA machine:
#   CUDA-graph tests, env vs raw physics (warp), end-to-end training samples/s (warp and mjx at 4096 / 8192 /
#   16384 envs, warp also without CUDA graphs), and the time from the command to the tracking targets.
#
#   bash bench/gpu_warp.sh OUT_DIR          (with warp-lang, mujoco-warp, mujoco-mjx and JAX importable)
#
# Each stage has its own time limit and appends to OUT_DIR/log.txt; a failing stage does not stop the others.
set -uo pipefail
out=${1:?usage: gpu_warp.sh OUT_DIR}
mkdir -p "$out/res"
export PYTHONUNBUFFERED=1 PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD"
export WARP_CACHE_PATH=${WARP_CACHE_PATH:-$PWD/.warpcache} LEGGED_MJX_JAX_CACHE=${LEGGED_MJX_JAX_CACHE:-$PWD/.jaxcache}
log="$out/log.txt"
stage() {  # stage NAME SECONDS CMD...
  local name=$1 limit=$2; shift 2
  echo "=== $name ($(date +%T)): $*" | tee -a "$log"
  local t0=$SECONDS
  timeout -s INT "$limit" "$@" 2>&1 | tee -a "$log"
  echo "=== $name: exit ${PIPESTATUS[0]} after $((SECONDS - t0)) s" | tee -a "$log"
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$log"
python3 -c "import torch, warp, mujoco, mujoco_warp, jax; print('torch', torch.__version__, 'warp', warp.__version__,
'mujoco', mujoco.__version__, 'mujoco_warp', mujoco_warp.__version__, 'jax', jax.__version__)" 2>&1 | tail -1 | tee -a "$log"

stage tests 150 python3 -m pytest -q -p no:cacheprovider tests/rl_core/test_cuda_graphs.py
stage env-warp 120 python3 -m bench.env_throughput --backend warp --device cuda --num-envs 4096 8192 16384 --steps 100 \
  --json "$out/res/env_warp.json"
for n in 4096 8192 16384; do
  stage "e2e-warp-$n" 60 python3 -m bench.end_to_end --device cuda --num-envs $n --iterations 8 --json "$out/res/e2e_warp_$n.json" env.backend=warp
done
stage e2e-warp-4096-nographs 60 python3 -m bench.end_to_end --device cuda --num-envs 4096 --iterations 8 \
  --json "$out/res/e2e_warp_4096_nographs.json" env.backend=warp env.cuda_graph=false algorithm.cuda_graph=false
# Time to the targets: the default command (auto picks warp on a GPU), stopped 60 s after it started; SIGINT saves.
t0=$(date +%s.%N)
stage train-60s 60 python3 train.py --task quadruped-flat --device cuda --run-dir /tmp/run60 runner.save_interval=20
echo "train command to exit: $(python3 -c "import time; print(round(time.time() - $t0, 1))") s" | tee -a "$log"
last=$(ls /tmp/run60/checkpoints/model_*.pt | sort -V | tail -1)
cp "$last" "$out/model_last.pt"; cp /tmp/run60/summary.json "$out/res/summary60.json"
tar cf "$out/run60_tb.tar" -C /tmp/run60 --exclude=checkpoints .
for n in 4096 8192 16384; do
  stage "e2e-mjx-$n" 90 python3 -m bench.end_to_end --device cuda --num-envs $n --iterations 8 --json "$out/res/e2e_mjx_$n.json" env.backend=mjx
done
tar cf "$out/results.tar" -C "$out" res
