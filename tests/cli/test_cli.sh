#!/usr/bin/env bash
# kprop as a user meets it: exit codes (0 pass, 1 failure, 2 bad usage or bad case file),
# error messages that name the file and the field, and files left untouched on error.
#   test_cli.sh KPROP CORPUS_FILE
# Patterns are extended regular expressions matched against whole lines of the command's
# output (stdout and stderr together), so that "pass" never matches "passed" or a path.
set -u
kprop=$1
good=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"

# A variant of the good case file with one textual substitution.
variant() {
  sed -e "$2" "$good" >"$tmp/$1.json"
  echo "$tmp/$1.json"
}

T=$(re "$tmp")

expect 0 "$(re "$good") as recorded" "$kprop" replay "$good"
expect 2 "kprop: $T/zero\.json: case\.lengths\[0\]: 0 is outside 1\.\.1048576" \
  "$kprop" replay "$(variant zero 's/"lengths": \[/"lengths": [0, /')"
expect 2 "kprop: $T/unknown\.json: case\.lenghts: unknown field" \
  "$kprop" replay "$(variant unknown 's/"lengths"/"lenghts"/')"
expect 2 "kprop: $T/type\.json: case\.W: must be an integer, got \"[0-9]+\"" \
  "$kprop" replay "$(variant type 's/"W": \([0-9]*\)/"W": "\1"/')"
expect 2 "kprop: $T/width\.json: case\.W: 0 is outside 1\.\.256" \
  "$kprop" replay "$(variant width 's/"W": [0-9]*/"W": 0/')"
expect 2 "kprop: $T/json\.json: not valid JSON: .+" "$kprop" replay "$(variant json 's/}/]/')"
expect 2 "kprop: $T/nothere\.json: no such file or folder" "$kprop" replay "$tmp/nothere.json"

# A bad file in a folder: exit 2, the good ones still replay, nothing is written.
mkdir -p "$tmp/folder" && cp "$good" "$tmp/folder/" && cp "$tmp/zero.json" "$tmp/folder/"
before=$(ls -l --time-style=+%s.%N "$tmp/folder" | md5sum)
expect 2 "kprop: $T/folder/zero\.json: case\.lengths\[0\]: 0 is outside 1\.\.1048576" \
  "$kprop" replay "$tmp/folder"
also "$T/folder/$(re "$(basename "$good")") as recorded"
[ "$before" = "$(ls -l --time-style=+%s.%N "$tmp/folder" | md5sum)" ] ||
  fail "replay touched the folder"

# Unknown names list the known ones.
expect 2 "kprop: unknown implementation 'nope' of causal_conv1d; known: reference, tiled, tiled@original, tiled@clamped, tiled@fixed .*" \
  "$kprop" check causal_conv1d --impl nope --no-corpus
# Every kernel, sorted: the first and the last named, the library's in between (a new
# kernel does not change this line).
expect 2 "kprop: unknown kernel 'nokernel'; known kernels: causal_conv1d, ([a-z0-9_]+, )+swiglu" \
  "$kprop" check nokernel --no-corpus
expect 2 "kprop: unknown property 'nope'; known properties: algorithms, chunked, composition, cores, determinism, gradient, guard, invariance, layout, neutral, packed, policy, vs_reference" \
  "$kprop" check causal_conv1d --property nope --no-corpus
expect 2 "kprop: unknown dtype 'float8'" "$kprop" check causal_conv1d --dtype float8 --no-corpus
expect 2 "--cases: Value -3 not in range .*" "$kprop" check causal_conv1d --cases -3
expect 2 "kprop: --device 'tpu': expected cpu, cuda or cuda:N" \
  "$kprop" check causal_conv1d --device tpu --no-corpus
expect 2 "kprop: --device 'tpu': expected cpu, cuda or cuda:N" \
  env KPROP_DEVICE=tpu "$kprop" replay "$good"
# A CPU build cannot reach a GPU: it says so before drawing a case (a CUDA build would run).
if ! "$kprop" check causal_conv1d --device cuda --cases 1 --no-corpus >/dev/null 2>&1; then
  expect 2 "kprop: --device cuda: this kprop's libtorch has no CUDA .*" \
    "$kprop" check causal_conv1d --device cuda --no-corpus
fi

# check: 0 on a pass, 1 on a failure, which is kept once in the corpus. Corpus files are
# named <impl>-<property>-<tensor>-<hash of the identity>.json; the property is the one
# the minimal case is checked with, which need not be the one that found it.
expect 0 "PASS: no new counterexample in 40 cases" "$kprop" check causal_conv1d --cases 40 --no-corpus
also "40 cases: [0-9]+ passed, 0 failed, .*"
expect 1 "kept in the corpus: $T/corpus/causal_conv1d/tiled_clamped-[a-z_]+-dw-[0-9a-f]{8}\.json" \
  "$kprop" check causal_conv1d --impl tiled@clamped --property packed --seed 3 --corpus "$tmp/corpus"
also "FAIL after [0-9]+ cases \([0-9.]+ s\): causal_conv1d/tiled@clamped/packed/.+"
also "minimal case:"
also "the same case also shows: causal_conv1d/tiled@clamped/dh0 \[sequence shorter than W\] \{.+\}"
# One file per new defect of the failing case: the dw leak and a dh0 defect.
kept=$(ls "$tmp"/corpus/causal_conv1d/*-dw-*.json)
[ "$(ls "$tmp"/corpus/causal_conv1d/*.json | wc -l)" -eq 2 ] ||
  fail "check did not keep one file per defect: $(ls "$tmp"/corpus/causal_conv1d/)"
expect 0 "$(re "$kept") as recorded" "$kprop" replay "$kept"
expect 1 "  tiled@clamped +fail +expected fail +ok" "$kprop" replay "$kept" --impl tiled@clamped
expect 0 "  tiled@fixed +pass +expected pass +ok" "$kprop" replay "$kept" --impl tiled@fixed
# The same search again skips the known defects: nothing new is written for them.
kept_sums=$(md5sum "$tmp"/corpus/causal_conv1d/*.json)
"$kprop" check causal_conv1d --impl tiled@clamped --property packed --seed 3 --cases 50 \
  --corpus "$tmp/corpus" --json >"$tmp/again.json" 2>/dev/null
grep -qE '^ *"known": [1-9][0-9]*,?$' "$tmp/again.json" ||
  fail "the second run did not count the known failure"
# (it may keep further defects it meets, each under an identity of its own)
[ "$kept_sums" = "$(md5sum $(echo "$kept_sums" | awk '{print $2}'))" ] ||
  fail "the second run rewrote a kept file"
dupes=$(grep -h '"identity":' "$tmp"/corpus/causal_conv1d/*.json | sort | uniq -d)
[ -z "$dupes" ] || fail "one identity kept twice: $dupes"

# Machine-readable output parses as JSON.
expect 0 ' +"as_recorded": true,?' "$kprop" replay "$good" --json

# A case whose inputs no longer rebuild as recorded (its fingerprint differs) is CHANGED,
# exit 1, naming both fingerprints, even where every verdict is still as expected: a
# recorded fingerprint that does not match, then another seed (other inputs).
recorded=$(sed -n 's/^ *"inputs_fingerprint": "\(fnv1a64:[0-9a-f]*\)",\{0,1\}$/\1/p' "$good")
[ -n "$recorded" ] || fail "no inputs_fingerprint in $good"
expect 1 "  ! inputs rebuilt from the seed differ: $(re "$recorded") \(recorded fnv1a64:0123456789abcdef\)" \
  "$kprop" replay "$(variant fingerprint 's/"inputs_fingerprint": "[^"]*"/"inputs_fingerprint": "fnv1a64:0123456789abcdef"/')"
also "$T/fingerprint\.json CHANGED"
also "  tiled@clamped +fail +expected fail +ok"
never ".*MISMATCH"
never "$T/fingerprint\.json as recorded"
expect 1 ' +"fingerprint_matches": false,?' "$kprop" replay "$tmp/fingerprint.json" --json
also ' +"as_recorded": false,?'
expect 1 "  ! inputs rebuilt from the seed differ: fnv1a64:[0-9a-f]{16} \(recorded $(re "$recorded")\)" \
  "$kprop" replay "$(variant reseeded '0,/"seed": [0-9]*/s//"seed": 1/')"
also "$T/reseeded\.json CHANGED"
never ".*MISMATCH"

# --set pins a parameter in every case, never shrunk; an unknown one is named.
expect 0 "PASS: no new counterexample in 50 cases" "$kprop" check --set W=3 --cases 50 --no-corpus
also "kprop check causal_conv1d --impl tiled --seed 0: 50 cases over .+"
expect 1 "  W +5" "$kprop" check --set W=5 --impl tiled@clamped --property packed --seed 3 --no-corpus
also "  lengths +1,1"
expect 2 "kprop: --set nosuch: not a parameter of causal_conv1d; parameters: W, layout, lengths, splits, initial_state, D, num_cores, activation, bias, final_state_grad" \
  "$kprop" check --set nosuch=1 --no-corpus
expect 2 "kprop: --set parameter W: 'x' is not an integer" "$kprop" check --set W=x --no-corpus
# A pinned value is validated like a case file's, not clamped into range.
expect 2 "kprop: .*W: 0 is outside 1\.\.256.*" "$kprop" check --set W=0 --cases 5 --no-corpus

# shrink: a hand-written case (only its schema and case) that fails is shrunk to a
# minimal case per symptom, each kept in the corpus; the file itself is left alone.
cat >"$tmp/hand.json" <<'EOF'
{
  "schema": "kprop-case/2",
  "case": {
    "kernel": "causal_conv1d", "impl": "tiled@clamped", "property": "packed",
    "layout": "packed", "lengths": [3, 29], "W": 5, "D": 32, "num_cores": 48,
    "dtype": "float32", "activation": "none", "bias": false, "initial_state": true,
    "final_state_grad": false, "splits": [], "seed": 1, "distribution": "normal"
  }
}
EOF
hand_sum=$(md5sum <"$tmp/hand.json")
expect 1 "$T/hand\.json fails: causal_conv1d/tiled@clamped/packed/dw \[taps that read h0\], dh0 \[sequence shorter than W\]; out-of-bounds load" \
  "$kprop" shrink "$tmp/hand.json" --corpus "$tmp/shrunk"
also "  dw \[taps that read h0\] -> causal_conv1d/tiled@clamped/dw \[taps that read h0\] \{2 lengths, initial_state\} in [0-9]+ steps \([0-9.]+ s\)"
also "    causal_conv1d W=3 layout=packed lengths=1,1 splits= initial_state=true D=32 num_cores=1 activation=none bias=false final_state_grad=false float32 seed=1 normal"
also "    kept: $T/shrunk/causal_conv1d/tiled_clamped-[a-z_]+-dw-[0-9a-f]{8}\.json"
shrunk=$(ls "$tmp"/shrunk/causal_conv1d/*.json 2>/dev/null | wc -l)
[ "$shrunk" -ge 1 ] || fail "shrink kept nothing under $tmp/shrunk"
[ "$hand_sum" = "$(md5sum <"$tmp/hand.json")" ] || fail "shrink changed the file it read"
expect 0 "$T/shrunk/causal_conv1d/tiled_clamped-[a-z_]+-dw-[0-9a-f]{8}\.json as recorded" \
  "$kprop" replay "$tmp/shrunk"
# Again: every identity is already there, nothing is written.
shrunk_sums=$(md5sum "$tmp"/shrunk/causal_conv1d/*.json)
expect 1 "    already in the corpus: $T/shrunk/causal_conv1d/tiled_clamped-[a-z_]+-dw-[0-9a-f]{8}\.json" \
  "$kprop" shrink "$tmp/hand.json" --corpus "$tmp/shrunk"
[ "$shrunk_sums" = "$(md5sum "$tmp"/shrunk/causal_conv1d/*.json)" ] ||
  fail "a second shrink changed the corpus"

# A file without expectations cannot be replayed: it is a case to shrink.
expect 2 "kprop: $T/hand\.json: no expectations to replay \(run \`kprop shrink $T/hand\.json\` first\)" \
  "$kprop" replay "$tmp/hand.json"

# Hostile input: exit 2 with the file (and field) named, never a crash or a pass that
# checked nothing; a folder replay still replays the good files.
expect 2 "kprop: $T/overflow\.json: not valid JSON: .*number overflow.*" \
  "$kprop" replay "$(variant overflow 's/"D": [0-9]*/"D": 1e999/')"
{ printf '{"schema": "kprop-case/2", "notes": '; printf '%*s' 100000 '' | tr ' ' '['
  printf '%*s' 100000 '' | tr ' ' ']'; printf '}\n'; } >"$tmp/deep.json"
expect 2 "kprop: $T/deep\.json: nested deeper than 64 levels of arrays and objects" \
  "$kprop" replay "$tmp/deep.json"
expect 2 "kprop: $T/dupkey\.json: key \"W\" appears twice in one object" \
  "$kprop" replay "$(variant dupkey 's/"W": \([0-9]*\)/"W": \1, "W": 2/')"
expect 2 "kprop: $T/huge\.json: case\.lengths: x would hold 17179901952 elements, more than the limit 16777216 \(KPROP_MAX_ELEMENTS raises it\)" \
  "$kprop" replay "$(variant huge 's/"D": [0-9]*/"D": 16384/; s/"lengths": \[/"lengths": [1048576, /')"
expect 2 "kprop: $T/bogus\.json: case\.impl: unknown implementation 'bogus' .*" \
  "$kprop" replay "$(variant bogus 's/"impl": "[^"]*"/"impl": "bogus"/')"
expect 2 "kprop: $T/nosig\.json: signature: empty, .*" \
  "$kprop" replay "$(variant nosig 's/"signature": "[^"]*"/"signature": ""/')"
mkdir -p "$tmp/empty" "$tmp/dir.json"
expect 2 "kprop: $T/empty: no case files \(\*\.json\) in this folder" "$kprop" replay "$tmp/empty"
expect 2 "kprop: $T/dir\.json: no case files \(\*\.json\) in this folder" "$kprop" replay "$tmp/dir.json"
ln -s "$tmp/loop-b.json" "$tmp/loop-a.json" && ln -s "$tmp/loop-a.json" "$tmp/loop-b.json"
expect 2 "kprop: $T/loop-a\.json: cannot be read: .*" "$kprop" replay "$tmp/loop-a.json"
mkdir -p "$tmp/mixed" && cp "$good" "$tmp/mixed/" && cp "$tmp/bogus.json" "$tmp/nosig.json" "$tmp/mixed/"
ln -s "$tmp/mixed/loop2.json" "$tmp/mixed/loop1.json" && ln -s "$tmp/mixed/loop1.json" "$tmp/mixed/loop2.json"
sed -e 's/"kernel": "causal_conv1d"/"kernel": "nokernel"/' "$good" >"$tmp/mixed/a-nokernel.json"
expect 2 "kprop: $T/mixed/a-nokernel\.json: case\.kernel: unknown kernel 'nokernel'.*" \
  "$kprop" replay "$tmp/mixed"
also "kprop: $T/mixed/bogus\.json: case\.impl: .*"
also "kprop: $T/mixed/nosig\.json: signature: empty, .*"
also "kprop: $T/mixed/loop1\.json: cannot be read: .*"
also "$T/mixed/$(re "$(basename "$good")") as recorded"
expect 2 "--max-length: Value 1e12 not in range .*" "$kprop" check --max-length 1e12 --no-corpus
expect 2 "--cases: Value 1e20 not in range .*" "$kprop" check --cases 1e20 --no-corpus
expect 2 "--shrink-seconds: 'nan' is not a number in 0\.\.1000000" \
  "$kprop" check --shrink-seconds nan --no-corpus
expect 2 "--shrink-seconds: '-1' is not a number in 0\.\.1000000" \
  "$kprop" shrink "$good" --shrink-seconds -1 --no-corpus
expect 2 "--seed: '-1' is negative" "$kprop" check --seed -1 --no-corpus

# hunt: each state's known defect is found, shrunk and kept under its name; exit 0 when
# every one was found; an unknown defect is named.
expect 0 "FOUND out-of-bounds dy load on tiled@original after [0-9]+ cases \([0-9.]+ s\): causal_conv1d/tiled@original/out-of-bounds load \{initial_state\}" \
  "$kprop" hunt --defect 'out-of-bounds dy load' --seed 1 --corpus "$tmp/hunt"
also "FOUND out-of-bounds dy load on tiled@clamped after [0-9]+ cases \([0-9.]+ s\): causal_conv1d/tiled@clamped/out-of-bounds load \{initial_state\}"
also "  kept: $T/hunt/causal_conv1d/out-of-bounds-dy-load--tiled-clamped\.json"
expect 2 "kprop: unknown defect 'nosuch'" "$kprop" hunt --defect nosuch --corpus "$tmp/hunt"

# report tolerance: exit 1 when an error exceeds its bound (the merged fix drops dht's
# share of dh0), 0 when every error is within it (kprop's tiling on the same case).
dht_fixed="$(dirname "$good")/dht-pass-through-dropped--tiled-fixed.json"
expect 1 "\| dh0 \| 2\.4 \| 95\.4 \| 2\.4 \| 2\.4 \| 2\.39 \| \*\*1\.27e\+15\*\* \(1 of 1 case > 1\) \| .*" \
  "$kprop" report tolerance "$dht_fixed"
also "\| y \| 0 \| 0 \| 0 \| 0 \| 0 \| 0 \| exact \|"
expect 0 "\| dh0 \| [0-9.e+-]+ \| .* \| [0-9.e+-]+ \| [^*]*\|" "$kprop" report tolerance "$dht_fixed" --impl tiled

# sweep: the verdict grid of the vendored backward, cell by cell.
expect 0 "\| 1 \| pass \| fail \(1\) \|" "$kprop" sweep --impl tiled@original --property gradient \
  --x W=2,4 --y length=1,3 --set num_cores=48 --set dtype=float64
also "\| 3 \| fail \(2\) \| fail \(3\) \|"

# replay --impl is judged like check: a skipped verdict checked nothing, so it is no pass.
sed -e 's/"property": "gradient"/"property": "packed"/' "$dht_fixed" >"$tmp/skipped.json"
expect 1 "  tiled +skipped +expected pass +MISMATCH" "$kprop" replay "$tmp/skipped.json" --impl tiled

finish
