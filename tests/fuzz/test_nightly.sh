#!/usr/bin/env bash
# kprop nightly: a short run writes its summary; killed with SIGKILL it leaves no partial
# file and no fuzzer behind, and a second run resumes; SIGINT stops it with the summary.
#   test_nightly.sh KPROP FUZZ_DIR CORPUS
set -u
kprop=$1 fuzz_dir=$2 corpus=$3
tmp=$(mktemp -d)
trap 'pkill -KILL -f "$tmp/" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"
cp -r "$corpus" "$tmp/corpus"
nightly() { "$kprop" nightly --kernel causal_conv1d --corpus "$tmp/corpus" --fuzzers "$fuzz_dir" "$@"; }
# No partial file: every JSON file under a folder parses, and no temporary file is left.
whole_files() {
  local bad
  bad=$(find "$1" -name '*.json' -print0 | python3 -c '
import json, sys
for path in filter(None, sys.stdin.read().split("\0")):
    try:
        json.load(open(path))
    except Exception as e:
        print(path, e)' 2>&1 | head -3)
  [ -z "$bad" ] || fail "a JSON file under $1 does not parse: $bad"
  [ -z "$(find "$1" -name '*.tmp.*')" ] || fail "temporary files left under $1: $(find "$1" -name '*.tmp.*' | head -3)"
}

# A short run over a correct and a historical implementation: exit 0 (no default one
# failed), the summary in both forms, executions and cases counted.
expect 0 "summary: .*/summary.md, .*/summary.json" \
  nightly --impl tiled --impl tiled@fixed --budget 20s --jobs 3 --out "$tmp/run"
also "No default implementation failed."
also "\| fuzz_causal_conv1d-tiled \| [0-9]+ \| [1-9][0-9]* \| .*"
also "\| fuzz_causal_conv1d-tiled_fixed \| [0-9]+ \| [1-9][0-9]* \| .*"
also "\| causal_conv1d \| tiled@fixed \| vs_reference \| [1-9][0-9]* \| .*"
python3 - "$tmp/run/summary.json" <<'PY' || fail "summary.json lacks what it should hold"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["schema"] == "kprop-nightly/1" and not s["default_implementation_failed"], s
assert {t["name"] for t in s["targets"]} == {"fuzz_causal_conv1d-tiled", "fuzz_causal_conv1d-tiled_fixed"}
assert all(t["executions"] > 0 and t["coverage"] > 0 for t in s["targets"]), s["targets"]
assert sum(x["cases"] for x in s["searches"]) > 0
# tiled@fixed's defect is in the corpus: seen again, not new.
assert any("tiled@fixed" in k for k in s["known_sightings"]), s["known_sightings"]
PY
[ -s "$tmp/run/summary.md" ] || fail "no summary.md"
[ -n "$(ls "$tmp/run/work/fuzz_causal_conv1d-tiled")" ] || fail "no working corpus"
whole_files "$tmp/run"
whole_files "$tmp/corpus"

# SIGKILL in the middle: nothing partial, no orphan fuzzer; the next run resumes from the
# working corpus and the state (search positions only grow).
# (kprop itself in the background, not a shell function's subshell: the signal is for it)
"$kprop" nightly --kernel causal_conv1d --corpus "$tmp/corpus" --fuzzers "$fuzz_dir" \
  --impl tiled@clamped --budget 120s --jobs 2 --out "$tmp/killed" >"$tmp/killed.log" 2>&1 &
pid=$!
sleep 15
kill -KILL $pid
wait $pid 2>/dev/null
sleep 1
# The fuzzer dies with kprop; the jobs it forked last a few seconds more at most, and
# the next run stops any that are left.
if pgrep -f "^$fuzz_dir/fuzz_causal_conv1d -fork=.*-artifact_prefix=$tmp/killed/" >/dev/null; then
  fail "the fuzzer outlived the killed run"; else echo "ok: the fuzzer died with kprop"; fi
whole_files "$tmp/killed"
whole_files "$tmp/corpus"
cp "$tmp/killed/state.json" "$tmp/state-before.json"
seeds_before=$(ls "$tmp/killed/work/fuzz_causal_conv1d-tiled_clamped" | wc -l)
expect 0 "summary: .*/summary.md, .*/summary.json" \
  nightly --impl tiled@clamped --budget 10s --jobs 2 --out "$tmp/killed"
seeds_after=$(ls "$tmp/killed/work/fuzz_causal_conv1d-tiled_clamped" | wc -l)
# Each search went on from where the killed run had got to: its position now is the old
# one plus the cases this run drew.
python3 - "$tmp/state-before.json" "$tmp/killed/state.json" "$tmp/killed/summary.json" <<'PY' || fail "searches did not resume where they stopped"
import json, sys
before, after, summary = (json.load(open(p)) for p in sys.argv[1:])
assert sum(before["positions"].values()) > 0, before
for s in summary["searches"]:
    key = f'{s["kernel"]}/{s["impl"]}/{s["property"]}'
    # A search the budget never reached (a loaded machine: one gradient slice can take
    # longer than the whole 10 s run) has no position yet: 0.
    assert after["positions"].get(key, 0) == before["positions"].get(key, 0) + s["cases"], (key, before, after, s)
PY
[ "$seeds_after" -ge "$seeds_before" ] || fail "working corpus shrank: $seeds_before -> $seeds_after"
if pgrep -f "$tmp/killed/" >/dev/null; then fail "processes of the killed run remain"; fi
echo "ok: resumed (working corpus $seeds_before -> $seeds_after inputs)"

# SIGINT: a clean stop with the summary so far, exit 130.
"$kprop" nightly --kernel causal_conv1d --corpus "$tmp/corpus" --fuzzers "$fuzz_dir" \
  --impl tiled --budget 120s --jobs 2 --out "$tmp/int" >"$tmp/out" 2>&1 &
pid=$!
sleep 12
kill -INT $pid
wait $pid
code=$?
[ "$code" -eq 130 ] || fail "SIGINT: exit $code, want 130"
also "[0-9]+ s of a 120 s budget on 2 jobs \(interrupted\); corpus .*"
[ -s "$tmp/int/summary.json" ] || fail "SIGINT: no summary.json"
whole_files "$tmp/int"

# Without --fuzzers: fuzz-fast/ beside kprop, and for a kernel whose target it lacks, fuzz/.
mkdir -p "$tmp/bin/fuzz-fast" "$tmp/bin/fuzz"
cp "$kprop" "$tmp/bin/kprop"
printf '#!/bin/sh\nexit 1\n' > "$tmp/bin/fuzz-fast/fuzz_geglu" && chmod +x "$tmp/bin/fuzz-fast/fuzz_geglu"
ln -s "$(cd "$fuzz_dir" && pwd)/fuzz_causal_conv1d" "$tmp/bin/fuzz/fuzz_causal_conv1d"
# Its row says the target in fuzz/ was found and run (fuzz-fast/ has none: without the
# fallback the run stops, exit 2). Its numbers may all be 0: under ASan on a loaded machine
# the fork-mode fuzzer can spend the 6 s on its seed corpus (seen in CI).
expect 0 "\| fuzz_causal_conv1d-tiled \| [0-9]+ \| [0-9]+ \| .*" \
  "$tmp/bin/kprop" nightly --kernel causal_conv1d --impl tiled --corpus "$tmp/corpus" \
  --budget 6s --jobs 2 --out "$tmp/fallback"

# Bad usage: exit 2, before anything runs.
expect 2 "kprop: --budget 'soon': expected a duration such as 90s, 30m or 8h" \
  nightly --budget soon --out "$tmp/bad"
expect 2 "kprop: no fuzz target in /nonexistent \(fuzz_<kernel>: built by the clang build under build/fuzz\)" \
  "$kprop" nightly --corpus "$tmp/corpus" --fuzzers /nonexistent --budget 5s --out "$tmp/bad"

finish
