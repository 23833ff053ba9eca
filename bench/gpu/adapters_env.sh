# Sourced by the GPU scripts that run the upstream adapters through kprop's Python entry
# (adapters.sh, nightly_shards.sh), from the repository's root with $root and $RESULTS set:
# builds kprop with the fla and Liger kernels' support unless build-gpu/ has it, picks the
# GPU venv's python3 as $PY (or $PYTHON), and sets the adapters' environment.
mkdir -p "$RESULTS"
[ -x build-gpu/kprop ] ||
  RESULTS=$RESULTS/build KERNELS="fla liger" scripts/gpu.py build >"$RESULTS/build.txt" 2>&1
PY=${PYTHON:-$(command -v python3)}
[ -x /opt/torch/.venv/bin/python3 ] && PY=${PYTHON:-/opt/torch/.venv/bin/python3}
export PYTHONPATH=$root/build-gpu/python:$root/examples/upstream
export KPROP_FLA_CONFIGS=${KPROP_FLA_CONFIGS-1} OMP_NUM_THREADS=1
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$root/build-gpu/triton-cache}
