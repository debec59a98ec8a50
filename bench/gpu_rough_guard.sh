#!/usr/bin/env bash
# Issue 30 on an NVIDIA GPU, prepared without one: how many quadruped-rough worlds on MuJoCo Warp move at speeds no
# robot reaches (random actions, no training), with the model's solver settings and with more iterations, at 4096
# worlds; then the default `python train.py --task quadruped-rough` for TRAIN_S seconds with the divergence guard
# (the console line's `div` share, Train/diverged_share). Compare with the CPU census in docs/backends.md.
#
#   bash bench/gpu_rough_guard.sh OUT_DIR          (with warp-lang and mujoco-warp importable; about 8 minutes)
set -uo pipefail
final=${1:?usage: gpu_rough_guard.sh OUT_DIR}
TRAIN_S=${TRAIN_S:-240}
mkdir -p "$final"
export PYTHONUNBUFFERED=1 PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD"
export LEGGED_MJX_WARP_CACHE=${LEGGED_MJX_WARP_CACHE:-$PWD/.warpcache}
log="$final/log.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$log"
for it in "" "--solver-iterations 10 --ls-iterations 20"; do
  for push in 15 1; do
    echo "=== census warp cuda 4096 worlds, push every $push s $it ($(date +%T))" | tee -a "$log"
    timeout 300 python3 -m tools.experiments.speed_census --task quadruped-rough --backend warp --device cuda --num-envs 4096 \
      --steps 150 --push-s $push $it --json "$final/census_${push}s${it:+_it10}.json" 2>&1 | tail -30 | tee -a "$log"
  done
done
echo "=== train.py --task quadruped-rough, SIGINT after $TRAIN_S s ($(date +%T))" | tee -a "$log"
timeout -s INT "$TRAIN_S" python3 train.py --task quadruped-rough --run-dir /tmp/rough_guard 2>&1 | tail -40 | tee -a "$log"
