#!/bin/bash
# The layers check (tests/layers/check_layers.py): kprop's own sources pass it, and a
# fixture with two includes that run back up (one out of core/) and one circle fails it, naming both.
set -u
here=$(cd "$(dirname "$0")" && pwd)
python=${1:-python3}
fail=0
out=$("$python" "$here/check_layers.py" "$here/../..") || { echo "$out"; echo "FAIL: kprop's sources"; fail=1; }
echo "$out" | tail -1
out=$("$python" "$here/check_layers.py" "$here/fixture"); rc=$?
[ $rc = 1 ] || { echo "FAIL: the fixture exits $rc, not 1"; fail=1; }
grep -q '^harness/model/verdict.h:3: includes harness/engine/runner.h: harness/engine lies above harness/model$' <<<"$out" ||
  { echo "$out"; echo "FAIL: the upward include is not named"; fail=1; }
grep -q '^core/errors.h:3: includes generators/case.h: generators lies above core$' <<<"$out" ||
  { echo "$out"; echo "FAIL: the upward include out of core/ is not named"; fail=1; }
grep -q '^circle of 2 files that include each other, in a ring: harness/engine/runner, harness/engine/triage$' <<<"$out" ||
  { echo "$out"; echo "FAIL: the circle is not named"; fail=1; }
[ $fail = 0 ] && echo "PASS: layers"
exit $fail
