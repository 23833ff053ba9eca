#!/usr/bin/env bash
# How a nightly run's rate grows with its shards (docs/sharding.md): for each count N in
# SHARDS, the single-host recipe (examples/sharding/one_host.sh: N shards side by side for
# BUDGET, then `kprop corpus merge`); prints per N the search cases/s and fuzz exec/s per
# shard and in total, and the findings merged. Every run starts from the same corpus
# (empty, or SEED_CORPUS), so each finds the same defects afresh.
#
#   KPROP=build/kprop SHARDS="1 2" BUDGET=60s JOBS=2 bench/nightly_shards.sh OUT [NIGHTLY ARGS...]
#
# KPROP may be a command ("python3 -m kprop" for Python adapters); NIGHTLY ARGS go to every
# shard (default: causal_conv1d, its default and two historical implementations, on the
# CPU); DEVICE=cuda gives each shard its GPU (cuda:I mod the GPUs); SEED_CORPUS (default:
# none) is copied into each run's corpus first, so that its findings are sightings.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/nightly_shards.sh OUT [NIGHTLY ARGS...]}
shift
export KPROP=${KPROP:-build/kprop} BUDGET=${BUDGET:-60s} JOBS=${JOBS:-2} DEVICE=${DEVICE:-cpu}
counts=${SHARDS:-1 2}
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--kernel causal_conv1d --impl tiled --impl tiled@clamped --impl tiled@fixed)
mkdir -p "$out"
echo "# $(date -u +%FT%TZ) $(nproc) CPUs; $KPROP nightly ${args[*]} --budget $BUDGET --jobs $JOBS --device $DEVICE"
printf '| shards | cases/s per shard | cases/s total | exec/s total | findings merged | sightings |\n|---:|---|---:|---:|---:|---:|\n'
for n in $counts; do
  run="$out/$n-shards"
  rm -rf "$run"
  mkdir -p "$run/corpus"
  [ -z "${SEED_CORPUS:-}" ] || cp -r "$SEED_CORPUS/." "$run/corpus/"
  SHARDS=$n CORPUS="$run/corpus" examples/sharding/one_host.sh "$run" "${args[@]}" >"$run/recipe.log" 2>&1
  python3 - "$run/summary.json" "$n" <<'PY' || echo "| $n | no merged summary: $(tail -2 "$run/recipe.log") |"
import json, sys
m, n = json.load(open(sys.argv[1])), int(sys.argv[2])
rates = [s["cases"] / s["seconds"] if s["seconds"] else 0 for s in m["shards"]]
print(f'| {n} | {", ".join(f"{r:.1f}" for r in rates)} | {sum(rates):.1f} | '
      f'{sum(s["exec_per_second"] for s in m["shards"])} | {len(m["findings"])} | '
      f'{sum(m["known_sightings"].values())} |')
PY
done
