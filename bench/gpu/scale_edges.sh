#!/usr/bin/env bash
# The search over sizes reaches the scale edges within its first minute (issue 25): `kprop
# check` through the planted kernels of tests/python/planted_scale.py on the GPU, each with
# a defect that only a case past an edge shows (rms_norm: rows > 2^15; cross_entropy: more
# than 2^16 classes). The kernels' own generators draw those edges (rows_at_scale,
# V_at_scale); nothing is set here but the implementation. Prints, per kernel, the case and
# the seconds at which the first failure was found, and the case it shrank to.
#
#   bench/gpu/scale_edges.sh          (after scripts/gpu.py build; RESULTS: the logs' folder)
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
RESULTS=${RESULTS:-$root/build-gpu/scale-edges}
mkdir -p "$RESULTS"
PY=${PYTHON:-$(command -v python3)}
[ -x /opt/torch/.venv/bin/python3 ] && PY=${PYTHON:-/opt/torch/.venv/bin/python3}
export PYTHONPATH=$root/build-gpu/python:$root/tests/python
export OMP_NUM_THREADS=1
: >"$RESULTS/summary.txt"
for kernel in rms_norm cross_entropy; do
  t0=$(date +%s.%N)
  timeout -s INT 150 "$PY" -m kprop check "$kernel" --import planted_scale --impl "planted::$kernel" \
    --device cuda --property vs_reference --seed 7 --cases 5000 --shrink-seconds 30 --no-corpus \
    --json >"$RESULTS/$kernel.json" 2>"$RESULTS/$kernel.log"
  code=$?
  wall=$(python3 -c "import time; print(f'{time.time() - $t0:.1f}')")
  "$PY" - "$RESULTS/$kernel.json" "$kernel" "$code" "$wall" >>"$RESULTS/summary.txt" <<'PY'
import json, sys
path, kernel, code, wall = sys.argv[1:]
try:
    r = json.load(open(path))
except ValueError:
    print(f"{kernel}: exit {code}, no result after {wall} s"); sys.exit()
f = r.get("failure")
if not f:
    print(f"{kernel}: exit {code}, no failure in {r['tally']} ({wall} s)"); sys.exit()
size = lambda c: {k: c[k] for k in ("rows", "cols", "V") if k in c}
print(f"{kernel}: exit {code}; found at case {f['case_number']} after {f['seconds_to_find']:.1f} s "
      f"({size(f['found'])}, {f['found']['dtype']}); shrunk in {f['shrink_steps']} steps to "
      f"{size(f['minimal'])}; {f['identity']}; whole run {wall} s")
PY
done
cat "$RESULTS/summary.txt"
