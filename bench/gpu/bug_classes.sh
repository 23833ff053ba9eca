#!/usr/bin/env bash
# The bug-class properties (docs/bug-classes.md) against the real upstream kernels, on the
# GPU machine from a cold start. Builds kprop (scripts/gpu.py build), then runs, one process
# each, beside each other on the one GPU, while nvcc compiles the Dao extension:
#   fla-a252c17d   flash-linear-attention at a252c17d, which reads dy without its last
#                  stride and the recomputed y with dy's strides in compute_dh0 (#1139),
#                  from an empty corpus: the properties must find it and shrink it
#   fla-6d80721f   the fix (#1139): must pass
#   fla-head, liger, liger_ascend, dao: every adapter at its upstream head
#   liger_<kernel>: Liger's kernel of the library at its head, for each of LIBRARY_KERNELS
#                  (default: rms_norm swiglu kl_div rope layer_norm cross_entropy), over
#                  LIBRARY_PROPERTIES (default: all of the kernel's)
#   fla_gated_norm: fla's gated norm at its head, over LIBRARY_PROPERTIES
# PROPERTIES (default "layout") picks the properties, CASES (200) the cases of each run, BOX
# (300 s) its time box (SIGINT at the end: kprop prints what it has; DAO_BOX for Dao's, which
# starts when nvcc is done, ~5 min), SHRINK_SECONDS (120), CASE_TIMEOUT (kprop's per-case
# limit in a worker, 20 s: Triton compiling for several processes at once can pass it).
# Logs and summary.txt go to $RESULTS (default build-gpu/bug-classes); findings to its
# corpus-* folders (the head runs start from a copy of corpus/upstream).
#
#   FLA_A=.upstream/fla-a252c17d FLA_B=.upstream/fla-6d80721f FLA_HEAD=.upstream/fla-head \
#     LIGER_SRC=.upstream/Liger-Kernel DAO_CAUSAL_CONV1D_SRC=.upstream/causal-conv1d \
#     bench/gpu/bug_classes.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
RESULTS=${RESULTS:-$root/build-gpu/bug-classes}
CASES=${CASES:-200}
BOX=${BOX:-300}
PROPERTIES=${PROPERTIES:-layout}
LIBRARY_KERNELS=${LIBRARY_KERNELS:-rms_norm swiglu kl_div rope layer_norm cross_entropy fused_linear_cross_entropy}
RUNS=" ${RUNS:-fla-a252c17d fla-6d80721f fla-head liger liger_ascend $(printf 'liger_%s ' $LIBRARY_KERNELS)fla_gated_norm dao} "
mkdir -p "$RESULTS"
PY=${PYTHON:-$(command -v python3)}
[ -x /opt/torch/.venv/bin/python3 ] && PY=${PYTHON:-/opt/torch/.venv/bin/python3}
export PYTHONPATH=$root/build-gpu/python:$root/examples/upstream
export KPROP_FLA_CONFIGS=${KPROP_FLA_CONFIGS-1} OMP_NUM_THREADS=1
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$root/build-gpu/triton-cache}
export DAO_CAUSAL_CONV1D_SRC=${DAO_CAUSAL_CONV1D_SRC:-$root/.upstream/causal-conv1d}
export DAO_BUILD=${DAO_BUILD:-$root/build-gpu/dao}
export LIGER_SRC=${LIGER_SRC:-$root/.upstream/Liger-Kernel}
export PATH=/usr/local/cuda/bin:$PATH TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
want() { [[ "$RUNS" == *" $1 "* ]]; }
mkdir -p "$DAO_BUILD" "$TRITON_CACHE_DIR"

t0=$(date +%s)
# kprop first, alone (83 s with 16 cores): beside the Dao extension's nvcc a cold build took
# over 10 min, twice, and ate a device call each time.
[ -x build-gpu/kprop ] ||
  RESULTS=$RESULTS/build KERNELS="fla liger" scripts/gpu.py build >"$RESULTS/build.txt" 2>&1
dao_pid=
if want dao; then
  ( "$PY" -c "import kprop_dao" >"$RESULTS/dao-build.log" 2>&1; echo "exit $?" >>"$RESULTS/dao-build.log" ) &
  dao_pid=$!
fi

properties=()
for p in $PROPERTIES; do properties+=(--property "$p"); done
run() {  # NAME ENV... -- kprop arguments (run_properties="..." run ...: its own properties)
  local name=$1; shift
  local envs=() own=("${properties[@]}")
  if [ -n "${run_properties+set}" ]; then
    own=(); for p in $run_properties; do own+=(--property "$p"); done
  fi
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  ( env "${envs[@]}" timeout -s INT -k 30 "${box:-$BOX}" "$PY" -m kprop "$@" "${own[@]}" \
      --cases "$CASES" --shrink-seconds "${SHRINK_SECONDS:-120}" \
      --case-timeout "${CASE_TIMEOUT:-20}" >"$RESULTS/$name.log" 2>&1
    echo "exit $?" >>"$RESULTS/$name.log" ) &
}
fla=(check causal_conv1d --import kprop_fla --impl fla::causal_conv1d --device cuda --seed 0)
mkdir -p "$RESULTS/corpus-head" && cp -rn corpus/upstream/. "$RESULTS/corpus-head/"
# From empty corpora: what each finds is its own.
want fla-a252c17d && run fla-a252c17d FLA_SRC="${FLA_A:-$root/.upstream/fla-a252c17d}" -- \
  "${fla[@]}" --corpus "$RESULTS/corpus-a252c17d"
want fla-6d80721f && run fla-6d80721f FLA_SRC="${FLA_B:-$root/.upstream/fla-6d80721f}" -- \
  "${fla[@]}" --corpus "$RESULTS/corpus-6d80721f"
want fla-head && run fla-head FLA_SRC="${FLA_HEAD:-$root/.upstream/fla-head}" -- \
  "${fla[@]}" --corpus "$RESULTS/corpus-head"
want liger && run liger -- check geglu --import kprop_liger --impl liger::geglu --device cuda \
  --corpus "$RESULTS/corpus-head"
want liger_ascend && run liger_ascend -- check geglu --import kprop_liger \
  --impl liger_ascend::geglu --device cuda --corpus "$RESULTS/corpus-head"
for kernel in $LIBRARY_KERNELS; do
  want liger_$kernel && run_properties=${LIBRARY_PROPERTIES-} run liger_$kernel -- check $kernel \
    --import kprop_liger --impl liger::$kernel --device cuda --corpus "$RESULTS/corpus-head"
done
want fla_gated_norm && run_properties=${LIBRARY_PROPERTIES-} run fla_gated_norm \
  FLA_SRC="${FLA_HEAD:-$root/.upstream/fla-head}" -- check gated_norm --import kprop_fla \
  --impl fla::gated_norm --device cuda --seed 0 --corpus "$RESULTS/corpus-head"
if want dao; then
  wait "$dao_pid"
  box=${DAO_BOX:-$BOX} run dao -- check causal_conv1d --import kprop_dao --impl dao::causal_conv1d --device cuda \
    --refusal "dao adapter: unsupported" --corpus "$RESULTS/corpus-head"
fi
wait
{
  echo "== bug_classes.sh $(date -u +%FT%TZ) on $(nvidia-smi -L 2>/dev/null | head -1), $(( $(date +%s) - t0 )) s"
  echo "properties: $PROPERTIES; cases $CASES; box $BOX s"
  tail -2 "$RESULTS/build.txt" 2>/dev/null
  [ -f "$RESULTS/dao-build.log" ] && echo "dao extension: $(tail -1 "$RESULTS/dao-build.log")"
  for log in "$RESULTS"/*.log; do
    case $log in *dao-build.log) continue ;; esac
    echo "-- $(basename "$log" .log)"
    grep -E "takes no float64|cases: |time: implementation|PASS|FAIL|defect:|not taken [0-9]+ x|rejected [0-9]+ x|known [0-9]+ x|kept|shrunk|^exit" \
      "$log" | head -20 | sed 's/^/   /'
  done
} | tee "$RESULTS/summary.txt"
