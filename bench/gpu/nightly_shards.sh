#!/usr/bin/env bash
# Nightly shards on the GPU machine (issue 26; docs/sharding.md), through the upstream
# adapters (Liger's GEGLU and fla's causal_conv1d at their heads, searched: the fuzz targets
# are C++): bench/nightly_shards.sh for SHARDS (default "1 2 4") shards side by side, each
# BUDGET (90s) with JOBS (4), seeded with corpus/upstream (its findings are sightings).
# With one GPU the shards share it: MPS=1 (default) runs them under the CUDA MPS daemon,
# MPS=0 without, for the comparison. On a host with several GPUs each shard takes its own.
# Builds kprop first if needed (scripts/gpu.py build). Output: $RESULTS (build-gpu/shards).
#
#   LIGER_SRC=.upstream/Liger-Kernel FLA_SRC=.upstream/fla-head bench/gpu/nightly_shards.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
RESULTS=${RESULTS:-$root/build-gpu/shards}
. bench/gpu/adapters_env.sh  # builds kprop if needed; $PY and the environment
export LIGER_SRC=${LIGER_SRC:-$root/.upstream/Liger-Kernel} FLA_SRC=${FLA_SRC:-$root/.upstream/fla-head}
if [ "${MPS:-1}" = 1 ]; then
  export CUDA_MPS_PIPE_DIRECTORY=$RESULTS/mps-pipe CUDA_MPS_LOG_DIRECTORY=$RESULTS/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d && trap 'echo quit | nvidia-cuda-mps-control' EXIT
fi
{
  echo "== nightly_shards.sh on $(nvidia-smi -L 2>/dev/null | wc -l) GPU(s): $(nvidia-smi -L 2>/dev/null | head -1); MPS=${MPS:-1}"
  KPROP="$PY -m kprop" DEVICE=cuda SHARDS="${SHARDS:-1 2 4}" BUDGET=${BUDGET:-90s} JOBS=${JOBS:-4} \
    SEED_CORPUS=$root/corpus/upstream bench/nightly_shards.sh "$RESULTS/runs" \
    --import kprop_liger --import kprop_fla --kernel geglu --kernel causal_conv1d \
    --impl liger::geglu --impl fla::causal_conv1d
} 2>&1 | tee "$RESULTS/summary.txt"
