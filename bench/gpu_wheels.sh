# Sourced by bench/gpu_check.sh when warp-lang, mujoco-warp or gymnasium cannot be imported: installs the wheelhouse
# in $WHEELS (a folder of *.whl, or the part-*/chunk.* cut by shared/tools/gpu-wheelhouse.sh with its
# wheels.tar.sha256 in part-1) into /tmp/site and puts it on PYTHONPATH.
: "${WHEELS:?warp-lang, mujoco-warp or gymnasium missing: set WHEELS to a wheelhouse (shared/tools/gpu-wheelhouse.sh)}"
wheel_dir=$WHEELS
if ls "$WHEELS"/part-*/chunk.* > /dev/null 2>&1; then
  # chunks are numbered across the parts (chunk.00, chunk.01, ...): join them in that order
  find "$WHEELS" -path '*/part-*/chunk.*' -printf '%f %p\n' | sort | cut -d' ' -f2 | xargs cat > /tmp/wheels.tar
  cp "$WHEELS"/part-1/wheels.tar.sha256 /tmp/
  (cd /tmp && sha256sum -c wheels.tar.sha256 && rm -rf wheels && tar xf wheels.tar) || exit 1
  wheel_dir=/tmp/wheels
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  "$wheel_dir"/*.whl || exit 1
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
