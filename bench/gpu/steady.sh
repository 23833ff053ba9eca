#!/usr/bin/env bash
# Steady-state cases/s of one `python3 -m kprop check` run: the run is time-boxed (SIGINT
# after SECONDS), its progress lines (every ~2 s) are time-stamped, and the rate is taken
# over the second half of the run only, so Python's imports and Triton's first compiles,
# paid once per process, are left out. Prints the whole log, then one line:
#   steady: N cases in T s = R cases/s (second half), whole run: M cases/s
#
#   bench/gpu/steady.sh 40 check causal_conv1d --import kprop_fla --impl fla::causal_conv1d \
#     --device cuda --property vs_reference --no-isolation --set W=4 ...
set -uo pipefail
seconds=$1; shift
PY=${PYTHON:-python3}
timeout -s INT -k 10 "$seconds" "$PY" -m kprop "$@" --cases 100000000 2>&1 |
  "$PY" -u -c '
import re, sys, time
t0, marks, whole_rate = time.time(), [], "?"
for line in sys.stdin:
    now = time.time() - t0
    print(f"{now:7.2f} {line}", end="")
    m = re.match(r"(\d+)/\d+ cases", line) or re.match(r"(\d+) cases: ", line)
    if m:
        marks.append((now, int(m.group(1))))
    whole = re.search(r"\((\d+) cases/s\)", line)
    if whole:
        whole_rate = whole.group(1)
if len(marks) >= 3:
    end_t, end_n = marks[-1]
    mid_t, mid_n = min(marks, key=lambda m: abs(m[0] - end_t / 2))
    rate = (end_n - mid_n) / max(end_t - mid_t, 1e-9)
    print(f"steady: {end_n - mid_n} cases in {end_t - mid_t:.1f} s = {rate:.0f} cases/s "
          f"(second half), whole run: {whole_rate} cases/s")
else:
    print("steady: too few progress lines to tell")
'
