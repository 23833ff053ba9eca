#!/usr/bin/env bash
# kprop nightly --shard and kprop corpus merge: two shards of one run split its fuzz
# targets, keep their findings in their own folders and leave the corpus they seed from as
# it was; the merge makes one corpus of them, one file per identity, with the sightings
# added up and one summary, and says the same when run again. It is safe while a shard
# still runs and after one was killed. The engines' variables choose the shard.
#   test_nightly_shards.sh KPROP FUZZ_DIR
set -u
kprop=$(realpath "$1") fuzz_dir=$(realpath "$2")
tmp=$(mktemp -d)
trap 'pkill -KILL -f "$tmp/" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"
mkdir -p "$tmp/seeds"  # an empty corpus: the historical states' defects are all new
nightly() {
  "$kprop" nightly --kernel causal_conv1d --impl tiled --impl tiled@clamped --impl tiled@fixed \
    --corpus "$tmp/seeds" --fuzzers "$fuzz_dir" --jobs 2 "$@"
}
# From a folder of its own: the merge writes nothing where it is run (libFuzzer's -merge=1
# would leave a crash-* file there for every input that fails).
mkdir -p "$tmp/cwd"
merge() { (cd "$tmp/cwd" && "$kprop" corpus merge --fuzzers "$fuzz_dir" "$@"); }

# Two shards side by side, as on a host with two GPUs.
nightly --shard 0/2 --budget 20s --out "$tmp/run" >"$tmp/shard0.log" 2>&1 &
a=$!
nightly --shard 1/2 --budget 20s --out "$tmp/run" >"$tmp/shard1.log" 2>&1 &
b=$!
wait $a; code_a=$?
wait $b; code_b=$?
# Exit 0: the findings are historical states', no default implementation failed.
[ "$code_a" -eq 0 ] && [ "$code_b" -eq 0 ] || fail "shards exited $code_a, $code_b: $(tail -5 "$tmp/shard0.log" "$tmp/shard1.log")"
grep -q "^shard 1 of 2 (--shard 0/2) on cpu, into $tmp/run/shard-1-of-2$" "$tmp/shard0.log" ||
  fail "shard 0 does not say which it is: $(head -3 "$tmp/shard0.log")"
[ -z "$(ls -A "$tmp/seeds")" ] || fail "a shard wrote into the corpus it seeds from: $(ls -R "$tmp/seeds" | head)"
python3 - "$tmp/run" <<'PY' || fail "the shards did not split the work as they should"
import json, os, sys
run = sys.argv[1]
s = [json.load(open(f"{run}/shard-{i}-of-2/summary.json")) for i in (1, 2)]
targets = [{t["name"] for t in x["targets"]} for x in s]
# Three targets over two shards: t % 2 == shard, so shard 1 runs two, shard 2 one.
assert targets[0] == {"fuzz_causal_conv1d-tiled", "fuzz_causal_conv1d-tiled_fixed"}, targets
assert targets[1] == {"fuzz_causal_conv1d-tiled_clamped"}, targets
assert all(x["shard"]["count"] == 2 for x in s) and [x["shard"]["index"] for x in s] == [0, 1]
for i, x in enumerate(s):
    assert x["kept_in"] == f"{run}/shard-{i + 1}-of-2/corpus", x["kept_in"]
    for f in x["findings"]:
        assert f["file"].startswith(x["kept_in"] + "/"), f["file"]
# Each searched its own blocks of every search's cases: no block in both.
owner = {}
for i, x in enumerate(s):
    for f in x["findings"]:
        if f["found_by"].startswith("search "):
            key, case = f["found_by"].split()[1], int(f["found_by"].split()[-1])
            assert owner.setdefault((key, case // 100), i) == i, (f, owner)
assert sum(len(x["findings"]) for x in s) > 0, "no findings over an empty corpus"
PY

# The merge: every identity once, sightings added up, one summary in the run's folder.
expect 0 "summary: $tmp/run/summary.md, $tmp/run/summary.json" merge "$tmp/run" --into "$tmp/corpus"
also "# kprop nightly: 2 shards merged into \`$tmp/corpus\`"
also "\| $tmp/run/shard-1-of-2 \| finished \| [0-9]+ \| [1-9][0-9]* \| [0-9]+ \| [1-9][0-9]* \| .*"
python3 - "$tmp/run" "$tmp/corpus" <<'PY' || fail "the merged corpus or summary is wrong"
import collections, json, glob, sys
run, corpus = sys.argv[1:]
shards = [f"{run}/shard-{i}-of-2" for i in (1, 2)]
ids = collections.Counter()
for sh in shards:
    for p in glob.glob(f"{sh}/corpus/**/*.json", recursive=True):
        ids[json.load(open(p))["identity"]] += 1
merged = [json.load(open(p))["identity"] for p in glob.glob(f"{corpus}/**/*.json", recursive=True)]
assert sorted(merged) == sorted(ids), (merged, ids)  # one file per identity, none lost
m = json.load(open(f"{run}/summary.json"))
assert m["schema"] == "kprop-nightly-merge/1" and m["added"] == len(ids), m["added"]
assert [f["identity"] for f in m["findings"]] == sorted(ids)
# Sightings: each shard's own (searches and fuzz targets), plus every second copy of a finding.
want = collections.Counter()
for sh in shards:
    want.update(json.load(open(f"{sh}/state.json"))["sightings"])
    for p in glob.glob(f"{sh}/sightings/*"):
        for line in open(p):
            n, identity = line.rstrip("\n").split("\t", 1)
            want[identity] += int(n)
for identity, n in ids.items():
    if n > 1:
        want[identity] += n - 1
assert m["known_sightings"] == dict(want), (m["known_sightings"], want)
assert sum(s["cases"] for s in m["shards"]) == sum(x["cases"] for x in m["searches"]) > 0
# libFuzzer -merge=1 made one working corpus per target from the shards' (a loaded machine
# can leave a target's empty: under ASan, fork mode may spend 20 s starting up).
import os
merged = 0
for t in m["targets"]:
    inputs = sum(len(os.listdir(d)) for d in glob.glob(f"{run}/shard-*/work/{t['name']}"))
    assert (t["inputs_after"] > 0) if inputs else (t["inputs_after"] == -1), (t, inputs)
    merged += inputs > 0
assert merged > 0, m["targets"]
json.dump(m, open(f"{run}/first-merge.json", "w"))
PY
[ -z "$(ls -A "$tmp/cwd")" ] || fail "the merge left files where it ran: $(ls "$tmp/cwd" | head -3)"
# Again: nothing new is copied, and the summary says the same of the findings.
expect 0 "# kprop nightly: 2 shards merged into \`$tmp/corpus\`" merge "$tmp/run" --into "$tmp/corpus"
python3 - "$tmp/run" <<'PY' || fail "a second merge is not idempotent"
import json, sys
first, again = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("first-merge", "summary"))
assert again["added"] == 0, again["added"]
assert [f["identity"] for f in again["findings"]] == [f["identity"] for f in first["findings"]]
assert again["known_sightings"] == first["known_sightings"]
assert all(f["outcome"] == "already in the corpus" for f in again["findings"]), again["findings"]
PY

# Inputs that show a defect stay in a merged working corpus: the shards' findings as fuzzer
# inputs, in the working corpus of tiled@clamped of a shard without findings, merged into a
# corpus that knows none of them (the target would abort on each, were it not a merge).
mkdir -p "$tmp/solo"
cp -r "$tmp/run/shard-2-of-2" "$tmp/solo/shard-1-of-1"
rm -rf "$tmp/solo/shard-1-of-1/corpus"
clamped=$tmp/solo/shard-1-of-1/work/fuzz_causal_conv1d-tiled_clamped
"$(dirname "$kprop")/kprop_fuzz_seeds" causal_conv1d "$tmp/failing" "$tmp/corpus" >/dev/null 2>&1
[ -n "$(ls -A "$tmp/failing" 2>/dev/null)" ] || fail "no fuzzer inputs from the shards' findings"
cp "$tmp/failing"/* "$clamped/"
expect 0 "fuzz_causal_conv1d-tiled_clamped: libFuzzer -merge=1 of 1 working corpora: 0 -> [1-9][0-9]* inputs in $tmp/again/work/fuzz_causal_conv1d-tiled_clamped" \
  merge "$tmp/solo" --into "$tmp/knows-none" --out "$tmp/again"
for f in "$tmp/failing"/*; do
  [ -e "$tmp/again/work/fuzz_causal_conv1d-tiled_clamped/$(sha1sum "$f" | cut -c1-40)" ] ||
    fail "a failing input left out of the merged corpus: $f"
done
[ -z "$(ls -A "$tmp/cwd")" ] || fail "the merge left files where it ran: $(ls "$tmp/cwd" | head -3)"

# While a shard runs, and after it was killed: the merge reads what is on disk, whole.
# (kprop itself in the background, not a shell function's subshell: the signal is for it)
"$kprop" nightly --kernel causal_conv1d --impl tiled --impl tiled@clamped --impl tiled@fixed \
  --corpus "$tmp/seeds" --fuzzers "$fuzz_dir" --jobs 2 --shard 0/3 --budget 120s \
  --out "$tmp/live" >"$tmp/live.log" 2>&1 &
pid=$!
sleep 12
expect 0 "\| $tmp/live/shard-1-of-3 \| running \| .*" merge "$tmp/live" --into "$tmp/corpus"
kill -KILL $pid
wait $pid 2>/dev/null
expect 0 "\| $tmp/live/shard-1-of-3 \| stopped early \| .*" merge "$tmp/live" --into "$tmp/corpus"
[ -z "$(find "$tmp/corpus" "$tmp/live" -name '*.tmp.*')" ] || fail "temporary files left"

# The engines' variables: Slurm's array --array=1-2, and Kubernetes' index with /N.
expect 0 "shard 2 of 2 \(SLURM_ARRAY_TASK_ID=2, SLURM_ARRAY_TASK_COUNT=2\) on cpu, into $tmp/env/shard-2-of-2" \
  env SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=2 \
  "$kprop" nightly --kernel causal_conv1d --impl tiled --corpus "$tmp/seeds" --fuzzers "$fuzz_dir" \
  --budget 2s --jobs 2 --out "$tmp/env"
expect 0 "shard 3 of 4 \(--shard /4 with JOB_COMPLETION_INDEX=2\) on cpu, into $tmp/env/shard-3-of-4" \
  env JOB_COMPLETION_INDEX=2 "$kprop" nightly --kernel causal_conv1d --impl tiled --corpus "$tmp/seeds" \
  --fuzzers "$fuzz_dir" --budget 2s --jobs 2 --shard /4 --out "$tmp/env"

# Bad usage: exit 2, naming the option or the variable.
expect 2 "kprop: --shard 2/2: shard index 2 is not below the count 2 \(indices run from 0\)" \
  nightly --shard 2/2 --budget 5s --out "$tmp/bad"
expect 2 "kprop: JOB_COMPLETION_INDEX=1 comes without a shard count: pass --shard /N" \
  env JOB_COMPLETION_INDEX=1 "$kprop" nightly --budget 5s --out "$tmp/bad"
expect 2 "kprop: $tmp/none: not a folder \(a nightly shard's, a sharded run's, or one of case files\)" \
  merge "$tmp/none" --into "$tmp/corpus"
expect 2 "kprop: corpus folder /proc/kprop: cannot be written: .*" merge "$tmp/run" --into /proc/kprop

finish
