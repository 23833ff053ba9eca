#!/usr/bin/env bash
# Where the oracle runs, A against B in one process (issue 25): Liger's GEGLU through
# `kprop check --property vs_reference` in one bench/gpu/steady.py process, small cases with
# the oracle on the CPU and under auto, large ones under auto and on the GPU, each pair twice
# and interleaved, so that a difference between two runs is not the machine's drift (a cold
# H200 machine's rates differ by ~20 % from one start to the next).
#
#   bench/gpu/oracle_ab.sh        (on the GPU machine; RESULTS: the logs' folder)
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
RESULTS=${RESULTS:-$root/build-gpu/oracle-ab}
mkdir -p "$RESULTS"
PY=${PYTHON:-$(command -v python3)}
[ -x /opt/torch/.venv/bin/python3 ] && PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x build-gpu/kprop ] || RESULTS=$RESULTS/build KERNELS=liger scripts/gpu.py build >"$RESULTS/build.txt" 2>&1
export PYTHONPATH=$root/build-gpu/python:$root/examples/upstream OMP_NUM_THREADS=1
export LIGER_SRC=${LIGER_SRC:-$root/.upstream/Liger-Kernel}
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$root/build-gpu/triton-cache}
rm -rf "$RESULTS/corpus" && cp -r corpus "$RESULTS/corpus"
g="geglu --import kprop_liger --impl liger::geglu --device cuda --property vs_reference --no-isolation --corpus $RESULTS/corpus"
large="--limit max_rows=256 --limit max_cols=1024"
{
  echo "warm 2000 $g"
  echo "warm-large 200 $g $large"
  for i in 1 2; do for o in cpu auto; do echo "small-$o-$i 2000 $g --oracle-device $o"; done; done
  for i in 1 2; do for o in auto cuda; do echo "large-$o-$i 200 $g $large --oracle-device $o"; done; done
} >"$RESULTS/specs"
"$PY" bench/gpu/steady.py "$RESULTS/specs" >"$RESULTS/steady.log" 2>&1
grep -h "steady:\|time:\|memory:" "$RESULTS/steady.log"
