#!/usr/bin/env bash
# Before/after of two kprop builds as whole processes, in turn (A B A B ...), so that a
# machine whose speed drifts hurts both alike: the main job's wall time, the in-process
# throughput of the two kernels the project exists for, and detection (cases to find each
# known defect of causal_conv1d and geglu). Prints Markdown; quote medians.
#
#   bench/ab_whole_process.sh BUILD_A BUILD_B [ROUNDS]     (default: 3 rounds)
set -euo pipefail
a=$1 b=$2 rounds=${3:-3}
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
seconds() { local s; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN {printf "%.2f", e - s}'; }
# The aggregate row: every property equally often, the small population.
best_rate() { "$@" 2>/dev/null | awk -F'|' '$2 ~ /^ all / {gsub(/ /, "", $6); print $6}'; }
declare -A wall rate_conv rate_geglu
for ((i = 0; i < rounds; i++)); do
  for side in a b; do
    dir=${!side}
    wall[$side]+="$(seconds "$dir/kprop" check causal_conv1d --no-corpus --cases 3000) "
    rate_conv[$side]+="$(best_rate "$dir/bench/bench_throughput" 300 1) "
    rate_geglu[$side]+="$(best_rate "$dir/bench/bench_throughput" 300 1 default all geglu) "
  done
done
m() { tr ' ' '\n' <<<"$1" | grep . | median; }
echo "| figure | A: $a | B: $b | B / A |"
echo "|---|---|---|---|"
for fig in wall rate_conv rate_geglu; do
  declare -n f=$fig
  ma=$(m "${f[a]}") mb=$(m "${f[b]}")
  label=$([ $fig = wall ] && echo "kprop check causal_conv1d --cases 3000, s (median of $rounds)" ||
          echo "${fig#rate_} evaluations/s, every property (bench_throughput 300 1; median of $rounds)")
  echo "| $label | $ma | $mb | $(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.3f", b / a}') |"
done
echo
echo "Detection (kprop hunt, cases to find each known defect; the same on both sides is the goal):"
echo
echo '```'
for k in causal_conv1d geglu; do
  for side in a b; do
    echo "$side: $("${!side}/kprop" hunt $k --no-corpus 2>&1 | grep -E '^(FOUND|MISSED)' | sed -E 's/ \([0-9.]+ s\)//' | cut -c1-90 | tr '\n' ';')"
  done
done
echo '```'
