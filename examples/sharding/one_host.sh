#!/usr/bin/env bash
# One host, many GPUs (docs/sharding.md): one nightly shard per GPU, side by side, each on
# its own GPU (--device cuda is shard I's cuda:I), then one merge into the corpus.
#
#   examples/sharding/one_host.sh OUT [NIGHTLY ARGS...]
#
# SHARDS (default: the GPUs nvidia-smi lists, else 2 on the CPUs), BUDGET (8h), CORPUS
# (corpus), JOBS per shard (default: the CPUs over the shards, at least 2: one fuzzer beside
# the searches), DEVICE (cuda when there are GPUs, else cpu), KPROP (build/kprop; a command
# such as "python3 -m kprop" for Python adapters, with --import in NIGHTLY ARGS).
# Each shard's output goes to OUT/shard-<I+1>-of-<N>.log; the merged summary to OUT/summary.md.
set -uo pipefail
out=${1:?usage: examples/sharding/one_host.sh OUT [NIGHTLY ARGS...]}
shift
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
SHARDS=${SHARDS:-$([ "${gpus:-0}" -gt 0 ] && echo "$gpus" || echo 2)}
DEVICE=${DEVICE:-$([ "${gpus:-0}" -gt 0 ] && echo cuda || echo cpu)}
JOBS=${JOBS:-$(( $(nproc) / SHARDS > 2 ? $(nproc) / SHARDS : 2 ))}
BUDGET=${BUDGET:-8h}
CORPUS=${CORPUS:-corpus}
KPROP=${KPROP:-build/kprop}
mkdir -p "$out"
pids=()
for ((i = 0; i < SHARDS; i++)); do
  $KPROP nightly --shard "$i/$SHARDS" --device "$DEVICE" --jobs "$JOBS" --budget "$BUDGET" \
    --corpus "$CORPUS" --out "$out" "$@" >"$out/shard-$((i + 1))-of-$SHARDS.log" 2>&1 &
  pids+=($!)
done
echo "$SHARDS shards on $DEVICE, $JOBS jobs each, for $BUDGET: logs in $out/shard-*.log"
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done  # 1: a default implementation failed
$KPROP corpus merge "$out" --into "$CORPUS" || status=2
exit $status
