#!/usr/bin/env bash
# The GPU suite in one go, for the GPU machine (../shared/GPU.md): builds kprop and its
# Python entry against the torch that python3 imports (torch 2.x with CUDA), compiles the
# Dao-AILab CUDA extension meanwhile, then runs every property of kprop against each real
# upstream kernel (examples/upstream/) on the GPU, measures cases/s and where the time goes,
# and runs the GEGLU MLP precision report at the seed's shape. Results go to $RESULTS
# (default build-gpu/results/), one log per run plus summary.txt.
#
#   scripts/gpu.sh                      # everything (needs the three upstream checkouts)
#   scripts/gpu.sh build speed          # some parts: build suite speed scale mps launch
#                                       # precision (default: all but mps)
#   KERNELS="fla liger" scripts/gpu.sh  # some upstream kernels (default: fla liger dao)
#   CASES=300 RUN_SECONDS=60 scripts/gpu.sh   # cases per property, and a time box per run
#                                       # (SIGINT at the end of it: kprop prints what it has)
#   CASES_SMALL=2000 CASES_LARGE=200    # cases per speed run (gradient: an eighth), and
#   SPEED_BOX=480                       # a time box per kernel's speed process
#   SPEED_SIZES="small large isolated"  # the speed runs (isolated: small, in a worker)
#   SCALE_SIZES="small large" SCALE_PROCS="1 2 4 8"   # the several-process runs
#
# Each property runs in its own process (one intra-op thread each), all of them beside each
# other on the one GPU. Findings go to $RESULTS/corpus, which starts as a copy of
# corpus/upstream (what is known already is counted, not hunted again).
# fla's kernels are autotuned over 16 configs per new shape; KPROP_FLA_CONFIGS=1 (the
# default here) keeps the first only (examples/upstream/kprop_fla.py), and Triton's cache
# stays in build-gpu/triton-cache between runs.
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
parts=" ${*:-build suite speed scale launch precision} "
kernels=" ${KERNELS:-fla liger dao} "  # the upstream kernels the parts run on
want() { [[ "$parts" == *" $1 "* ]]; }
uses() { [[ "$kernels" == *" $1 "* ]]; }
JOBS=${JOBS:-$(nproc)}
export FLA_SRC=${FLA_SRC:-$root/.upstream/flash-linear-attention}
export LIGER_SRC=${LIGER_SRC:-$root/.upstream/Liger-Kernel}
export DAO_CAUSAL_CONV1D_SRC=${DAO_CAUSAL_CONV1D_SRC:-$root/.upstream/causal-conv1d}
export DAO_BUILD=${DAO_BUILD:-$root/build-gpu/dao}
export PATH=/usr/local/cuda/bin:$PATH TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$root/build-gpu/triton-cache}
export KPROP_FLA_CONFIGS=${KPROP_FLA_CONFIGS-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mkdir -p "$RESULTS/corpus" "$DAO_BUILD" "$TRITON_CACHE_DIR"
cp -rn corpus/upstream/. "$RESULTS/corpus/"
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
if want build && uses dao; then
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
want build && cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DKPROP_FUZZERS=OFF \
  -DCMAKE_PREFIX_PATH="$torch_prefix${pybind_dir:+;$pybind_dir};$prefix/usr" \
  -DPython3_EXECUTABLE="$PY" > "$RESULTS/configure.log" 2>&1 &&
  cmake --build build-gpu -j"$JOBS" --target kprop kprop_python kprop_unit_test_device \
    > "$RESULTS/build.log" 2>&1 &&
  note "kprop build: exit $? in $(since "$t1") s" &&
  build-gpu/tests/kprop_unit_test_device > "$RESULTS/unit-device.log" 2>&1
want build && note "build: $(tail -1 "$RESULTS/build.log"); device test: $(tail -1 "$RESULTS/unit-device.log")"
export PYTHONPATH=$root/build-gpu/python:$root/examples/upstream

# One kprop command, logged; its last lines go to the summary.
run() {
  local name=$1; shift
  local t=$(stamp)
  [ "$1" = kprop ] && set -- "$PY" -m kprop "${@:2}"  # timeout runs programs, not functions
  timeout -s INT -k 30 "$RUN_SECONDS" "$@" > "$RESULTS/$name.log" 2>&1
  local rc=$?
  note "-- $name: exit $rc in $(since "$t") s: $*"
  grep -E "cases: |time: implementation|isolation: |steady: |PASS|FAIL|defect:|rejected [0-9]+ x|known [0-9]+ x|kept|refused" \
    "$RESULTS/$name.log" | head -"${SUMMARY_LINES:-12}" | sed 's/^/     /' | tee -a "$summary"
}

# --- Every property against each upstream kernel, one process per property -------------
properties_causal_conv1d="gradient vs_reference chunked packed cores"
properties_geglu="gradient vs_reference policy invariance"
suite() {  # NAME KERNEL MODULE IMPL [extra kprop options]
  local name=$1 kernel=$2 module=$3 impl=$4; shift 4
  local list=properties_$kernel
  for property in ${!list}; do
    run "$name-$property" kprop check "$kernel" --import "$module" --impl "$impl" \
      --device cuda --property "$property" --cases "$CASES" --corpus "$RESULTS/corpus" \
      --shrink-seconds 240 "$@" &
  done
  wait
}
dao_ready() {  # waits for the Dao extension's compile (from any subshell); notes it once
  [ -z "$dao_pid" ] && return
  while kill -0 $dao_pid 2>/dev/null; do sleep 2; done
  mkdir "$RESULTS/.dao-noted" 2>/dev/null &&
    note "dao extension: $(tail -1 "$RESULTS/dao-build.log") after $(since "$t0") s"
  return 0
}
if want suite && uses fla; then
  suite fla causal_conv1d kprop_fla fla::causal_conv1d &
  # The smoke test's lead: dx with a final-state gradient.
  run fla-final-state-grad kprop check causal_conv1d --import kprop_fla --impl fla::causal_conv1d \
    --device cuda --property vs_reference --cases "$CASES" --corpus "$RESULTS/corpus" \
    --shrink-seconds 240 --set final_state_grad=true --dtype float32 &
fi
want suite && uses liger && suite liger geglu kprop_liger liger::geglu &
want suite && uses liger && suite liger_ascend geglu kprop_liger liger_ascend::geglu &
# Dao's suite starts when nvcc is done (~5 min on a fresh machine): DAO_SECONDS boxes it.
want suite && uses dao && ( dao_ready; RUN_SECONDS=${DAO_SECONDS:-$RUN_SECONDS}
  suite dao causal_conv1d kprop_dao dao::causal_conv1d --refusal "dao adapter: unsupported" ) &
wait

# --- Speed: cases/s per property and case size, one process at a time, in-process --------
# bench/gpu/steady.py runs every (property, size) of a kernel in one Python process (the
# imports, 5-20 s, paid once) and each twice with the same seed: the second run, measured,
# meets only kernels Triton compiled in the first. One kprop process at a time: processes
# sharing the GPU take turns on it (bench/gpu/RESULTS.md). Known findings ($RESULTS/corpus)
# are counted and the run goes on. fla's shapes are pinned further (one dtype, initial
# state, packed, no final-state gradient): each new constexpr combination compiles its
# kernels (seconds), and float64 does not compile at all, so `gradient` is left out for it.
small_geglu=""
large_geglu="--limit max_rows=256 --limit max_cols=1024"
conv_common="--set W=4 --set activation=silu --set bias=true"
small_causal_conv1d="--max-length 16 --max-segments 2 --set D=64 $conv_common"
large_causal_conv1d="--max-length 256 --max-segments 8 --set D=512 $conv_common"
fla_pins="--set initial_state=true --set final_state_grad=false --set layout=packed --dtype float32"
cases_small=${CASES_SMALL:-2000} cases_large=${CASES_LARGE:-200} speed_box=${SPEED_BOX:-480}
spec_line() {  # LABEL CASES KERNEL MODULE IMPL PROPERTY [options]: one line of steady.py's spec
  echo "$1 $2 $3 --import $4 --impl $5 --device cuda --property $6 --corpus $RESULTS/corpus ${*:7}"
}
speed_sizes=" ${SPEED_SIZES:-small large isolated} "
speed_spec() {  # KERNEL MODULE IMPL PROPERTIES [extra]: steady.py's spec, one line per run
  local kernel=$1 module=$2 impl=$3 properties=$4; shift 4
  for size in small large; do
    [[ "$speed_sizes" == *" $size "* ]] || continue
    local shape=${size}_$kernel cases=cases_$size
    for property in $properties; do
      local n=${!cases}; [ "$property" = gradient ] && n=$((n / 8))
      spec_line "$size-$property" "$n" "$kernel" "$module" "$impl" "$property" --no-isolation \
        ${!shape} "$@"
    done
  done
  local small=small_$kernel  # the same with each case in a worker process (the default)
  [[ "$speed_sizes" == *" isolated "* ]] && spec_line small-vs_reference-isolated \
    $((cases_small / 4)) "$kernel" "$module" "$impl" vs_reference ${!small} "$@"
}
steady_run() {  # NAME SECONDS KERNEL MODULE IMPL PROPERTIES [extra]
  local name=$1 box=$2; shift 2
  speed_spec "$@" > "$RESULTS/$name.spec"
  RUN_SECONDS=$box SUMMARY_LINES=80 run "$name" "$PY" bench/gpu/steady.py "$RESULTS/$name.spec"
}
if want speed; then
  uses liger && steady_run speed-liger "$speed_box" geglu kprop_liger liger::geglu \
    "$properties_geglu"
  uses fla && steady_run speed-fla "$speed_box" causal_conv1d kprop_fla fla::causal_conv1d \
    "vs_reference chunked packed cores" $fla_pins
  uses dao && dao_ready && steady_run speed-dao "$speed_box" causal_conv1d kprop_dao \
    dao::causal_conv1d "$properties_causal_conv1d" --refusal "dao adapter: unsupported"
fi

# --- Several processes on the one GPU: vs_reference, 1..8 processes ----------------------
# Small cases spend their time in launches and copies, large ones in the CPU oracle: both
# sizes (SCALE_SIZES), and with MPS (one shared CUDA context) when the part `mps` is asked for.
# The processes measure together (steady.py --together: each waits for all to be warm).
scale() {  # LABEL NAME KERNEL MODULE IMPL [extra]
  local label=$1 name=$2 kernel=$3 module=$4 impl=$5; shift 5
  for size in ${SCALE_SIZES:-small large}; do
    local shape=${size}_$kernel cases=cases_$size
    spec_line "$size-vs_reference" "${!cases}" "$kernel" "$module" "$impl" vs_reference \
      --no-isolation ${!shape} "$@" > "$RESULTS/$label-$name-$size.spec"
    for procs in ${SCALE_PROCS:-1 2 4 8}; do
      local barrier=$RESULTS/.together-$label-$name-$size-$procs
      rm -rf "$barrier"
      for i in $(seq 1 $procs); do
        RUN_SECONDS=${SCALE_BOX:-240} run "$label-$name-$size-$procs-$i" "$PY" \
          bench/gpu/steady.py --seed "$i" --together "$barrier:$procs" \
          "$RESULTS/$label-$name-$size.spec" &
      done
      wait
      # Together: the cases of all processes over the span from the first measured run's
      # start to the last one's end, and each process's own rate.
      note "   $(together_line "$label: $name, $size, $procs processes" \
        "$RESULTS"/$label-$name-$size-$procs-*.log)"
    done
  done
}
together_line() {  # WHAT LOG...: the processes' measured runs, added up over their shared span
  local what=$1; shift
  grep -h '^steady: .* measured ' "$@" | awk -v what="$what" '
    { for (i = 1; i <= NF; i++) {
        if ($i == "cases" && $(i + 1) == "in") n = $(i - 1)
        if ($i == "measured") { split($(i + 1), span, "-") }
        if ($i == "=") rate = $(i + 1) }
      cases += n; rates = rates sep rate; sep = ", "
      if (first == "" || span[1] < first) first = span[1]
      if (span[2] > last) last = span[2]; runs++ }
    END { if (!runs) { print what ": no measured run"; exit }
      printf "%s: %d cases/s together (%d cases in %.2f s), each %s\n",
             what, cases / (last - first), cases, last - first, rates }'
}
scale_all() {  # LABEL
  uses liger && scale "$1" liger geglu kprop_liger liger::geglu
  uses fla && scale "$1" fla causal_conv1d kprop_fla fla::causal_conv1d $fla_pins
  uses dao && dao_ready && scale "$1" dao causal_conv1d kprop_dao dao::causal_conv1d \
    --refusal "dao adapter: unsupported"
}
want scale && scale_all scale
if want mps; then
  if command -v nvidia-cuda-mps-control >/dev/null && nvidia-cuda-mps-control -d; then
    note "MPS daemon started"
    scale_all scale-mps
    echo quit | nvidia-cuda-mps-control
  else
    note "MPS: nvidia-cuda-mps-control missing or would not start"
  fi
fi

# --- Where a small case's time goes, outside kprop (upload, host, device, download) -------
want launch && { ! uses dao || dao_ready; } && run launch "$PY" bench/gpu/launch.py $kernels --iters 500

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
