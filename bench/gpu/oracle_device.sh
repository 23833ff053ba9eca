#!/usr/bin/env bash
# The float64 oracle on the device (docs/oracle_device.md), on the GPU machine from a cold
# start: builds kprop (scripts/gpu.py build, which runs the device test), then
#   1. cases/s of vs_reference through Liger's RMSNorm (liger::rms_norm) with the oracle on
#      the CPU (--oracle-device cpu: the path before) and on the GPU (cuda), small and
#      large cases, in one steady.py process (each run twice, the second measured), same seed;
#   2. large cases of Liger's SwiGLU and LayerNorm, before and after; small and large cases
#      of Liger's GEGLU and fla's causal_conv1d, before and after, and under auto (the
#      default: a small problem's oracle stays on the CPU);
#   3. the corpora of every kernel whose oracle moves (kprop's own and upstream cases)
#      replayed with each oracle: both must behave as recorded.
# SMALL_CASES (2000), LARGE_CASES (200), LARGE ("--limit max_rows=2048 --limit max_cols=4096");
# MEASURE (default "rms_norm library geglu conv") picks the groups of step 1-2, ORACLES (default
# "cpu cuda auto") the oracles of geglu's and conv's runs, PARTS
# (default "steady replay") the steps: one device call of 10 minutes holds about one of them.
# Logs go to $RESULTS (default build-gpu/oracle-device).
#
#   LIGER_SRC=.upstream/Liger-Kernel FLA_SRC=.upstream/fla-head bench/gpu/oracle_device.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
RESULTS=${RESULTS:-$root/build-gpu/oracle-device}
SMALL_CASES=${SMALL_CASES:-2000}
LARGE_CASES=${LARGE_CASES:-200}
LARGE=${LARGE:---limit max_rows=2048 --limit max_cols=4096}
MEASURE=${MEASURE:-rms_norm library geglu conv}
PARTS=${PARTS:-steady replay}
ORACLES=${ORACLES:-cpu cuda auto}
measuring() { [[ " $MEASURE " == *" $1 "* ]]; }
mkdir -p "$RESULTS"
PY=${PYTHON:-$(command -v python3)}
[ -x /opt/torch/.venv/bin/python3 ] && PY=${PYTHON:-/opt/torch/.venv/bin/python3}
export PYTHONPATH=$root/build-gpu/python:$root/examples/upstream
export OMP_NUM_THREADS=1
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$root/build-gpu/triton-cache}
export LIGER_SRC=${LIGER_SRC:-$root/.upstream/Liger-Kernel}
export FLA_SRC=${FLA_SRC:-$root/.upstream/fla-head}
export KPROP_FLA_CONFIGS=${KPROP_FLA_CONFIGS-1}
mkdir -p "$TRITON_CACHE_DIR"

t0=$(date +%s)
[ -x build-gpu/kprop ] ||
  RESULTS=$RESULTS/build KERNELS=liger scripts/gpu.py build >"$RESULTS/build.txt" 2>&1
echo "build: exit $? after $(( $(date +%s) - t0 )) s" >"$RESULTS/summary.txt"
grep -h "PASSED\|FAILED\|SKIPPED" "$RESULTS"/build/*unit-device* 2>/dev/null >>"$RESULTS/summary.txt"

# Findings go to a copy of the corpus. A first, unmeasured pass over each size compiles
# every shape Triton specializes on and keeps any failure (a search stops at its first new
# one): the measured runs then meet the same compiled kernels and the same known failures.
rm -rf "$RESULTS/corpus" && cp -r corpus "$RESULTS/corpus"
liger="rms_norm --import kprop_liger --impl liger::rms_norm --device cuda --property vs_reference --no-isolation --corpus $RESULTS/corpus"
if [[ " $PARTS " == *" steady "* ]]; then
{
  if measuring rms_norm; then
  echo "warm-small $SMALL_CASES $liger --oracle-device cuda"
  echo "warm-large $LARGE_CASES $liger $LARGE --oracle-device cuda"
  for oracle in cpu cuda; do
    echo "small-$oracle $SMALL_CASES $liger --oracle-device $oracle"
    echo "large-$oracle $LARGE_CASES $liger $LARGE --oracle-device $oracle"
  done
  fi
  # The library's other kernels whose oracle moves: large cases, before and after.
  measuring library && for k in swiglu layer_norm; do
    for oracle in cpu cuda; do
      echo "$k-large-$oracle $LARGE_CASES $k --import kprop_liger --impl liger::$k --device cuda --property vs_reference --no-isolation --corpus $RESULTS/corpus $LARGE --oracle-device $oracle"
    done
  done
  # scripts/gpu.py's speed sizes and fla's pins.
  geglu="geglu --import kprop_liger --impl liger::geglu --device cuda --property vs_reference --no-isolation --corpus $RESULTS/corpus"
  conv="causal_conv1d --import kprop_fla --impl fla::causal_conv1d --device cuda --property vs_reference --no-isolation --corpus $RESULTS/corpus --set W=4 --set activation=silu --set bias=true --set initial_state=true --set final_state_grad=false --set layout=packed --dtype float32"
  if measuring geglu; then
    echo "warm-geglu $LARGE_CASES $geglu --limit max_rows=256 --limit max_cols=1024"
    for oracle in $ORACLES; do
      echo "geglu-small-$oracle $SMALL_CASES $geglu --oracle-device $oracle"
      echo "geglu-large-$oracle $LARGE_CASES $geglu --limit max_rows=256 --limit max_cols=1024 --oracle-device $oracle"
    done
  fi
  if measuring conv; then
    echo "warm-conv $LARGE_CASES $conv --max-length 256 --max-segments 8 --set D=512"
    for oracle in $ORACLES; do
      echo "conv-small-$oracle $SMALL_CASES $conv --max-length 16 --max-segments 2 --set D=64 --oracle-device $oracle"
      echo "conv-large-$oracle $LARGE_CASES $conv --max-length 256 --max-segments 8 --set D=512 --oracle-device $oracle"
    done
  fi
} >"$RESULTS/specs"
"$PY" bench/gpu/steady.py --json "$RESULTS/steady.jsonl" "$RESULTS/specs" >"$RESULTS/steady.log" 2>&1
echo "steady: exit $?" >>"$RESULTS/summary.txt"
grep -h "steady:\|time:\|memory:" "$RESULTS/steady.log" >>"$RESULTS/summary.txt"
# What the first passes found and kept (new corpus files).
( cd "$RESULTS/corpus" && find . -newer "$RESULTS/specs" -name '*.json' ) | sed 's/^/new finding: /' >>"$RESULTS/summary.txt"
fi

[[ " $PARTS " == *" replay "* ]] || { cat "$RESULTS/summary.txt"; exit 0; }
replayed=()
for k in rms_norm swiglu layer_norm geglu causal_conv1d; do
  replayed+=(corpus/$k/*.json corpus/upstream/$k/*.json)
done
for oracle in cpu cuda; do
  "$PY" -m kprop replay --import kprop_liger --import kprop_fla --device cuda \
    --oracle-device "$oracle" "${replayed[@]}" >"$RESULTS/replay-$oracle.log" 2>&1
  echo "replay of ${#replayed[@]} cases with the oracle on $oracle: exit $?," \
    "$(grep -c ' ok$' "$RESULTS/replay-$oracle.log") ok" >>"$RESULTS/summary.txt"
done
echo "total $(( $(date +%s) - t0 )) s" >>"$RESULTS/summary.txt"
cat "$RESULTS/summary.txt"
