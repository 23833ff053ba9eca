#!/usr/bin/env bash
# The GPU suite in one go, for the GPU machine (../shared/GPU.md): builds kprop and its
# Python entry against the torch that python3 imports (torch 2.x with CUDA), compiles the
# Dao-AILab CUDA extension meanwhile, then runs every property of kprop against each real
# upstream kernel (examples/upstream/) on the GPU, measures cases/s and where the time goes,
# and runs the GEGLU MLP precision report at the seed's shape. Results go to $RESULTS
# (default results-gpu/), one log per run plus summary.txt.
#
#   scripts/gpu.sh                      # everything (needs the three upstream checkouts)
#   scripts/gpu.sh build fla            # some parts: build fla liger dao speed precision
#   CASES=300 RUN_SECONDS=60 scripts/gpu.sh   # cases per property, and a time box per run
#                                       # (SIGINT at the end of it: kprop prints what it has)
#
# The upstream kernels come from your own checkouts (never committed here):
#   FLA_SRC                 flash-linear-attention (the folder holding fla/)
#   LIGER_SRC               Liger-Kernel (the folder holding src/)
#   DAO_CAUSAL_CONV1D_SRC   Dao-AILab/causal-conv1d (the folder holding csrc/)
# default: .upstream/<name> in this repository (git-ignored). The Debian packages kprop
# needs beyond torch (GPU.md) are unpacked from .debs/ (git-ignored) when present.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
PY=${PYTHON:-$(command -v python3)}
[ -x /opt/torch/.venv/bin/python3 ] && PY=${PYTHON:-/opt/torch/.venv/bin/python3}
RESULTS=${RESULTS:-$root/build-gpu/results}
CASES=${CASES:-1000}
RUN_SECONDS=${RUN_SECONDS:-600}
parts=" ${*:-build fla liger dao speed precision} "
want() { [[ "$parts" == *" $1 "* ]]; }
JOBS=${JOBS:-$(nproc)}
export FLA_SRC=${FLA_SRC:-$root/.upstream/flash-linear-attention}
export LIGER_SRC=${LIGER_SRC:-$root/.upstream/Liger-Kernel}
export DAO_CAUSAL_CONV1D_SRC=${DAO_CAUSAL_CONV1D_SRC:-$root/.upstream/causal-conv1d}
export DAO_BUILD=${DAO_BUILD:-$root/build-gpu/dao}
export PATH=/usr/local/cuda/bin:$PATH TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
mkdir -p "$RESULTS" "$DAO_BUILD"
summary=$RESULTS/summary.txt
touch "$summary"
note() { echo "$*" | tee -a "$summary"; }
stamp() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(stamp)" 'BEGIN { printf "%.1f", b - a }'; }

note "== gpu.sh $(date -u +%FT%TZ) on $(nvidia-smi -L 2>/dev/null | head -1)"
note "torch: $($PY -c 'import torch, triton; print(torch.__version__, "triton", triton.__version__)')"

# --- The Dao extension compiles on its own (nvcc, ~5 min), beside kprop's build ---------
export PYTHONPATH=$root/examples/upstream
t0=$(stamp)
dao_pid=
if want build || want dao; then
  ( $PY -c "import kprop_dao" > "$RESULTS/dao-build.log" 2>&1; echo "exit $?" >> "$RESULTS/dao-build.log" ) &
  dao_pid=$!
fi

# --- kprop against this torch ------------------------------------------------------------
prefix=/tmp/kprop-pfx
if compgen -G ".debs/*.deb" >/dev/null; then
  mkdir -p $prefix && for f in .debs/*.deb; do dpkg -x "$f" $prefix; done
fi
torch_prefix=$($PY -c 'import torch; print(torch.utils.cmake_prefix_path)')
pybind_dir=$($PY -c 'import pybind11; print(pybind11.get_cmake_dir())' 2>/dev/null || true)
t1=$(stamp)
want build && cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKPROP_FUZZERS=OFF \
  -DCMAKE_PREFIX_PATH="$torch_prefix${pybind_dir:+;$pybind_dir};$prefix/usr" \
  -DPython3_EXECUTABLE="$PY" > "$RESULTS/configure.log" 2>&1 &&
  cmake --build build-gpu -j"$JOBS" --target kprop kprop_python kprop_unit_test_device \
    > "$RESULTS/build.log" 2>&1 &&
  note "kprop build: exit $? in $(since "$t1") s" &&
  build-gpu/tests/kprop_unit_test_device > "$RESULTS/unit-device.log" 2>&1
want build && note "build: $(tail -1 "$RESULTS/build.log"); device test: $(tail -1 "$RESULTS/unit-device.log")"
export PYTHONPATH=$root/build-gpu/python:$root/examples/upstream
kprop() { $PY -m kprop "$@"; }

# One kprop command, logged; its last lines go to the summary.
run() {
  local name=$1; shift
  local t=$(stamp)
  [ "$1" = kprop ] && set -- "$PY" -m kprop "${@:2}"  # timeout runs programs, not functions
  timeout -s INT -k 30 "$RUN_SECONDS" "$@" > "$RESULTS/$name.log" 2>&1
  local rc=$?
  note "-- $name: exit $rc in $(since "$t") s: $*"
  grep -E "cases: |^time: |PASS|FAIL|defect:|rejected [0-9]+ x|known [0-9]+ x|kept|refused" \
    "$RESULTS/$name.log" | head -12 | sed 's/^/     /' | tee -a "$summary"
}

# --- Every property against each upstream kernel --------------------------------------
properties_causal_conv1d="gradient vs_reference chunked packed cores"
properties_geglu="gradient vs_reference policy invariance"
suite() {  # NAME KERNEL MODULE IMPL [extra kprop options]
  local name=$1 kernel=$2 module=$3 impl=$4; shift 4
  local list=properties_$kernel
  for property in ${!list}; do
    run "$name-$property" kprop check "$kernel" --import "$module" --impl "$impl" \
      --device cuda --property "$property" --cases "$CASES" --corpus "$RESULTS/corpus" "$@"
  done
}
# The kernels share the GPU (each run's CPU oracle is the limit): one process per suite.
want fla && suite fla causal_conv1d kprop_fla fla::causal_conv1d &
want liger && suite liger geglu kprop_liger liger::geglu &
want liger && suite liger_ascend geglu kprop_liger liger_ascend::geglu &
(
  if [ -n "$dao_pid" ]; then
    wait $dao_pid 2>/dev/null || while kill -0 $dao_pid 2>/dev/null; do sleep 2; done
    note "dao extension: $(tail -1 "$RESULTS/dao-build.log") after $(since "$t0") s"
  fi
  want dao && suite dao causal_conv1d kprop_dao dao::causal_conv1d --refusal "dao adapter: unsupported"
) &

# --- Speed: cases/s per property and case size, in-process, where the time goes --------
speed() {
  for size in "small --max-length 16 --max-segments 2" "large --max-length 256 --max-segments 8"; do
    set -- $size
    local label=$1; shift
    run "speed-fla-$label" kprop check causal_conv1d --import kprop_fla --impl fla::causal_conv1d \
      --device cuda --property vs_reference --cases 2000 --no-isolation --no-corpus \
      --dtype float32 "$@"
  done
  for size in "small" "large --limit max_rows=256 --limit max_cols=1024"; do
    set -- $size
    local label=$1; shift
    run "speed-liger-$label" kprop check geglu --import kprop_liger --impl liger::geglu \
      --device cuda --property vs_reference --cases 2000 --no-isolation --no-corpus "$@"
  done
}
want speed && speed &

# --- The GEGLU MLP at the seed's shape, matmuls on the GPU ------------------------------
precision() {
  run precision-seed-unscaled kprop report precision geglu_mlp --impl torch_policy --device cuda
  run precision-seed-fan-in kprop report precision geglu_mlp --impl torch_policy --device cuda \
    --scale fan_in
  run precision-seed-fp32-product kprop report precision geglu_mlp --impl flat@fp32_product \
    --device cuda
  run precision-seed-liger kprop report precision geglu_mlp --import kprop_liger \
    --impl liger::geglu --device cuda
}
want precision && precision &
wait

note "== done $(date -u +%FT%TZ)"
