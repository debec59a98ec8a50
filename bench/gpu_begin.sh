# Sourced first by bench/gpu_check.sh and bench/gpu_robots.sh: needs $final (their OUT_DIR), $out (a work folder
# under /tmp, emptied here) and $imports (modules that must import, else the wheelhouse in $WHEELS is installed by
# gpu_wheels.sh). Sets $log and $root, copies the log and a tar of $out into $final on exit, sources gpu_stage.sh.
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/log.txt" "$final/"; tar cf "$final/results.tar" -C "$out" .' EXIT
export PYTHONUNBUFFERED=1 PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD" OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
log="$out/log.txt"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python3 -c "import $imports" 2>/dev/null || source "$root/bench/gpu_wheels.sh"
source "$root/bench/gpu_stage.sh"
