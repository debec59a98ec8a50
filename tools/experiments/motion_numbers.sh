#!/usr/bin/env bash
# Reproduces docs/motion.md's numbers on a CPU machine, one job at a time (about 4.5 h on 2 cores, plus the
# humanoid-flat policy's training when HUMANOID_FLAT is not given).
#
#   bash tools/experiments/motion_numbers.sh OUT [quad|track|hamp|all]
#
# quad:  quadruped-flat with the default command; eight clips of its trot (play.py --record-motion); AMP from those
#        clips without feet_air_time (600 iterations), and the same run without AMP (300, the default);
#        play.py (100 episodes) for each, and the gait of four 10 s walks at 0.6 m/s (seeds 1-4, pooled) against
#        the reference clip's (tools/experiments/gait_match.py).
# track: humanoid-track on the keyframe clip (its default) and on a 10 s walk with a turn recorded from
#        humanoid-flat's policy (HUMANOID_FLAT=run folder or checkpoint; trained with the default command if unset);
#        play.py (100 episodes from random start times), a video with the reference as a ghost, the ONNX export and
#        sim2sim from the file alone, for the last checkpoint saved within 60 minutes of each command.
# hamp:  humanoid-flat with AMP from nine 10 s clips of humanoid-flat's policy (HUMANOID_FLAT as for track): the
#        walk with a turn and eight more commands across humanoid-flat's ranges, and from the walk with a turn
#        alone; play.py (100 episodes), the ONNX export and sim2sim of each; the gait of four walks with a turn
#        (seeds 1-4) of each and of the source policy against the walk_turn clip's.
set -euo pipefail
OUT=$(realpath -m "${1:?usage: motion_numbers.sh OUT [quad|track|hamp|all]}")
cd "$(dirname "$0")/../.."  # the repository root
WHAT=${2:-all}
PY=${PYTHON:-python}
mkdir -p "$OUT/clips"

train() {  # train RUN ARGS...: the default command plus ARGS, its wall time in RUN/wall_s
    local run=$1; shift
    local t0; t0=$(date +%s)
    $PY train.py "$@" --run-dir "$OUT/$run" > "$OUT/$run.log" 2>&1
    echo $(( $(date +%s) - t0 )) > "$OUT/$run/wall_s"
}

record() {  # record RUN VX VY YAW CLIP: a 10 s clip of RUN's policy holding one command
    $PY play.py --checkpoint "$1" --episodes 1 --num-envs 1 --seed "${SEED:-12345}" --command "$2" "$3" "$4" \
        --video-seconds 10 --record-motion "$5" > /dev/null
}

within_60_min() {  # the newest checkpoint of RUN written within 3600 s of its config.yaml (the command's start)
    [ -f "$OUT/$1" ] && { echo "$OUT/$1"; return; }  # a checkpoint named as it is
    local run=$1 start last=""; start=$(stat -c %Y "$OUT/$run/config.yaml")
    for f in $(ls "$OUT/$run"/checkpoints/model_*.pt | sort -V); do
        [ $(( $(stat -c %Y "$f") - start )) -le 3600 ] && last=$f
    done
    echo "$last"
}

if [ "$WHAT" = quad ] || [ "$WHAT" = all ]; then
    train qf-default --task quadruped-flat
    c=$OUT/clips
    clips=""
    for take in "0.6 0 0 trot_fwd" "0.4 0 0.8 trot_left" "0.4 0 -0.8 trot_right" "-0.4 0 0 trot_back" \
                "0 0.4 0 trot_side_left" "0 -0.4 0 trot_side_right" "0.9 0 0 trot_fast" "-0.8 0 0 trot_fast_back"; do
        set -- $take
        record "$OUT/qf-default" "$1" "$2" "$3" "$c/$4.npz"
        clips=${clips:+$clips,}$c/$4.npz
    done
    train qf-amp --task quadruped-flat algorithm.name=amp env.rewards.feet_air_time=0.0 --max-iterations 600 \
        "env.amp_clips=[$clips]"
    train qf-noair --task quadruped-flat env.rewards.feet_air_time=0.0
    for ckpt in qf-default qf-amp qf-amp/checkpoints/model_300.pt qf-noair; do
        tag=$(echo "$ckpt" | tr / _)
        $PY play.py --checkpoint "$OUT/$ckpt" --episodes 100 --json "$OUT/eval_$tag.json" > "$OUT/eval_$tag.log"
        for seed in 1 2 3 4; do SEED=$seed record "$OUT/$ckpt" 0.6 0 0 "$OUT/fwd_${tag}_s$seed.npz"; done
        $PY -m tools.experiments.gait_match --reference "$c/trot_fwd.npz" --clip "$OUT/fwd_${tag}"_s[1-4].npz \
            --json "$OUT/gait_$tag.json" > /dev/null
    done
fi

humanoid_flat() {  # the humanoid-flat policy the clips are recorded from: HUMANOID_FLAT, else trained once here
    if [ -n "${HUMANOID_FLAT:-}" ]; then echo "$HUMANOID_FLAT"; return; fi
    [ -d "$OUT/humanoid-flat/checkpoints" ] || train humanoid-flat --task humanoid-flat
    echo "$OUT/humanoid-flat"
}

if [ "$WHAT" = track ] || [ "$WHAT" = all ]; then
    flat=$(humanoid_flat)
    record "$flat" 0.6 0 0.3 "$OUT/clips/walk_turn.npz"
    train track-squat --task humanoid-track
    train track-walk --task humanoid-track "env.clips=[$OUT/clips/walk_turn.npz]"
    for run in track-squat track-walk track-squat/checkpoints/model_300.pt; do
        ckpt=$(within_60_min "$run")
        tag=$(echo "$run" | tr / _)
        $PY play.py --checkpoint "$ckpt" --episodes 100 --json "$OUT/eval_$tag.json" --video "$OUT/ghost_$tag.mp4" \
            --export-onnx "$OUT/policy_$tag.onnx" --sim2sim "$OUT/policy_$tag.onnx" > "$OUT/eval_$tag.log"
    done
fi
if [ "$WHAT" = hamp ] || [ "$WHAT" = all ]; then
    flat=$(humanoid_flat)
    clips=""
    for take in "0.6 0 0.3 walk_turn" "0.6 0 -0.3 walk_turn_right" "1.0 0 0 walk_fast" "-0.4 0 0 walk_back" \
                "0 0.3 0 walk_side_left" "0 -0.3 0 walk_side_right" "0.2 0 0.8 turn_left" "0.2 0 -0.8 turn_right" \
                "0 0 0 stand"; do
        set -- $take
        [ -f "$OUT/clips/$4.npz" ] || record "$flat" "$1" "$2" "$3" "$OUT/clips/$4.npz"
        clips=${clips:+$clips,}$OUT/clips/$4.npz
    done
    train hf-amp --task humanoid-flat algorithm.name=amp "env.amp_clips=[$clips]"
    train hf-amp1 --task humanoid-flat algorithm.name=amp "env.amp_clips=[$OUT/clips/walk_turn.npz]"
    for run in hf-amp hf-amp1; do
        $PY play.py --checkpoint "$OUT/$run" --episodes 100 --json "$OUT/eval_$run.json" \
            --export-onnx "$OUT/policy_$run.onnx" --sim2sim "$OUT/policy_$run.onnx" > "$OUT/eval_$run.log"
    done
    for run in hf-amp hf-amp1 humanoid-flat; do  # the gait at the walk-with-a-turn command against that clip's
        ckpt=$OUT/$run; [ "$run" = humanoid-flat ] && ckpt=$flat
        for seed in 1 2 3 4; do SEED=$seed record "$ckpt" 0.6 0 0.3 "$OUT/wt_${run}_s$seed.npz"; done
        $PY -m tools.experiments.gait_match --robot humanoid --reference "$OUT/clips/walk_turn.npz" \
            --clip "$OUT/wt_${run}"_s[1-4].npz --json "$OUT/gait_$run.json" > /dev/null
    done
fi
echo "done: $OUT"
