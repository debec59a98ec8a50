# Shared by bench/gpu_targets.sh and bench/gpu_coldstart.sh (sourced): needs $out, $log and $root set.
train_stage() {  # train_stage NAME SECONDS ARGS...: train.py in /tmp/NAME, stopped by SIGINT after SECONDS
  local name=$1 limit=$2; shift 2
  local run=/tmp/$name t0
  echo "=== $name ($(date +%T)): train.py $* (SIGINT after $limit s)" | tee -a "$log"
  rm -rf "$run"; t0=$(date +%s.%N)
  timeout -s INT "$limit" python3 train.py --run-dir "$run" "$@" 2>&1 | python3 "$root/bench/stamp.py" "$t0" \
    | tee -a "$log" > "$out/$name.log"
  echo "=== $name: command to exit $(python3 -c "import time; print(round(time.time() - $t0, 1))") s" | tee -a "$log"
  python3 "$root/bench/stamp.py" --checkpoints "$run" "$t0" "$out/$name" | tee -a "$log"
}

evaluate_runs() {  # evaluate_runs EVERY RUN...: every EVERY-th checkpoint and the last, native MuJoCo on the CPU cores
  local every=$1; shift
  for run in "$@"; do
    ls "$run"/checkpoints/model_*.pt 2>/dev/null | sort -V \
      | awk -F'[_.]' -v e="$every" '{n = $(NF-1); last = $0} n % e == 0 {print} END {if (n % e) print last}'
  done > "$out/to_eval.txt"
  mkdir -p "$out/eval"
  xargs -P 8 -I{} sh -c 'f={}; n=$(basename "$(dirname "$(dirname "$f")")")_$(basename "$f" .pt)
    CUDA_VISIBLE_DEVICES= OMP_NUM_THREADS=2 timeout 120 python3 play.py --checkpoint "$f" --episodes 100 \
      --backend native --json "$0/$n.json" > "$0/$n.txt" 2>&1' "$out/eval" < "$out/to_eval.txt"
  python3 "$root/bench/stamp.py" --evaluations "$out/eval" | tee -a "$log"
}

versions() {  # the card, the driver and the packages, into the log
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$log"
  python3 -c "import torch, warp, mujoco, mujoco_warp; print('torch', torch.__version__, 'warp', warp.__version__,
'mujoco', mujoco.__version__, 'mujoco_warp', mujoco_warp.__version__)" 2>&1 | tail -1 | tee -a "$log"
}
