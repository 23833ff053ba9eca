#!/usr/bin/env bash
# The upstream adapters through autograd (kprop.implementation) from a cold start, on the
# GPU machine: what a new user's first runs report. Builds kprop (scripts/gpu.py build),
# then, one process each, beside each other on the one GPU:
#   fla-head-seed{0,1}  flash-linear-attention at its head, every property, seeds 0 and 1:
#                       real findings only (no float64 refusal reported as a defect)
#   fla-1141            fla at 4bd2a5cf, the parent of fix a252c17d (#1141), every property
#   liger               Liger-Kernel's GEGLU (LigerGELUMulFunction) at its head
# RUNS="fla-1141 liger" picks some; SHRINK_SECONDS (120) bounds each shrink.
# Logs and summary.txt go to $RESULTS (default build-gpu/adapters); findings to its corpus,
# which starts as a copy of corpus/upstream (known findings are counted, not hunted).
#
#   FLA_HEAD=.upstream/fla-head FLA_1141=.upstream/fla-4bd2a5cf \
#     LIGER_SRC=.upstream/Liger-Kernel bench/gpu/adapters.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
RESULTS=${RESULTS:-$root/build-gpu/adapters}
CASES=${CASES:-300}
BOX=${BOX:-300}
. bench/gpu/adapters_env.sh  # builds kprop if needed; $PY and the environment
mkdir -p "$RESULTS/corpus" && cp -rn corpus/upstream/. "$RESULTS/corpus/"

run() {  # NAME ENV... -- kprop arguments
  local name=$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  ( env "${envs[@]}" timeout -s INT -k 30 "$BOX" "$PY" -m kprop "$@" >"$RESULTS/$name.log" 2>&1
    echo "exit $?" >>"$RESULTS/$name.log" ) &
}
RUNS=" ${RUNS:-fla-head-seed0 fla-head-seed1 fla-1141 liger} "
fla=(check causal_conv1d --import kprop_fla --impl fla::causal_conv1d --device cuda
     --cases "$CASES" --shrink-seconds "${SHRINK_SECONDS:-120}")
want() { [[ "$RUNS" == *" $1 "* ]]; }
head=FLA_SRC="${FLA_HEAD:-$root/.upstream/fla-head}"
want fla-head-seed0 && run fla-head-seed0 "$head" -- "${fla[@]}" --corpus "$RESULTS/corpus" --seed 0
want fla-head-seed1 && run fla-head-seed1 "$head" -- "${fla[@]}" --corpus "$RESULTS/corpus" --seed 1
# From an empty corpus: the bug of #1141's fix must be what it finds first.
want fla-1141 && run fla-1141 FLA_SRC="${FLA_1141:-$root/.upstream/fla-4bd2a5cf}" -- "${fla[@]}" \
  --seed 0 --corpus "$RESULTS/corpus-1141"
want liger && run liger LIGER_SRC="${LIGER_SRC:-$root/.upstream/Liger-Kernel}" -- check geglu \
  --import kprop_liger --impl liger::geglu --device cuda --cases "$CASES" \
  --corpus "$RESULTS/corpus"
wait
{
  echo "== adapters.sh $(date -u +%FT%TZ) on $(nvidia-smi -L 2>/dev/null | head -1)"
  tail -3 "$RESULTS/build.txt"
  for log in "$RESULTS"/*.log; do
    echo "-- $(basename "$log" .log)"
    grep -E "takes no float64|cases: |PASS|FAIL|defect:|not taken [0-9]+ x|rejected [0-9]+ x|known [0-9]+ x|kept|^exit" \
      "$log" | head -20 | sed 's/^/   /'
  done
} | tee "$RESULTS/summary.txt"
