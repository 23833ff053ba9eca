#!/usr/bin/env bash
# kprop as a user meets it: exit codes (0 pass, 1 failure, 2 bad usage or bad case file),
# error messages that name the file and the field, and files left untouched on error.
#   test_cli.sh KPROP CORPUS_FILE
set -u
kprop=$1
good=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect CODE PATTERN CMD...: CMD exits with CODE and its output matches PATTERN.
expect() {
  local code=$1 pattern=$2
  shift 2
  "$@" >"$tmp/out" 2>&1
  local got=$?
  if [ "$got" -ne "$code" ] || ! grep -qE -- "$pattern" "$tmp/out"; then
    echo "FAIL: '$*' exited $got (want $code), output:"
    sed 's/^/    /' "$tmp/out" | head -20
    echo "    (wanted /$pattern/)"
    failures=$((failures + 1))
  else
    echo "ok: $*"
  fi
}

# A variant of the good case file with one textual substitution.
variant() {
  sed -e "$2" "$good" >"$tmp/$1.json"
  echo "$tmp/$1.json"
}

expect 0 "as recorded" "$kprop" replay "$good"
expect 2 'zero\.json: case\.lengths\[0\]: zero-length segment' \
  "$kprop" replay "$(variant zero 's/"lengths": \[/"lengths": [0, /')"
expect 2 'unknown\.json: case\.lenghts: unknown field' \
  "$kprop" replay "$(variant unknown 's/"lengths"/"lenghts"/')"
expect 2 'type\.json: case\.W: must be an integer' \
  "$kprop" replay "$(variant type 's/"W": \([0-9]*\)/"W": "\1"/')"
expect 2 'width\.json: case\.W: must be >= 1' \
  "$kprop" replay "$(variant width 's/"W": [0-9]*/"W": 0/')"
expect 2 'json\.json: not valid JSON' "$kprop" replay "$(variant json 's/}/]/')"
expect 2 'nothere\.json: no such file' "$kprop" replay "$tmp/nothere.json"

# A bad file in a folder: exit 2, the good ones still replay, nothing is written.
mkdir -p "$tmp/folder" && cp "$good" "$tmp/folder/" && cp "$tmp/zero.json" "$tmp/folder/"
before=$(ls -l --time-style=+%s.%N "$tmp/folder" | md5sum)
expect 2 'zero\.json: case\.lengths\[0\]' "$kprop" replay "$tmp/folder"
[ "$before" = "$(ls -l --time-style=+%s.%N "$tmp/folder" | md5sum)" ] || {
  echo "FAIL: replay touched the folder"; failures=$((failures + 1)); }

# Unknown names list the known ones.
expect 2 'known: reference, tiled, tiled@original' "$kprop" check causal_conv1d --impl nope --no-corpus
expect 2 'known kernels: causal_conv1d' "$kprop" check nokernel --no-corpus
expect 2 'known properties: ' "$kprop" check causal_conv1d --property nope --no-corpus
expect 2 'dtype' "$kprop" check causal_conv1d --dtype float8 --no-corpus
expect 2 '' "$kprop" check causal_conv1d --cases -3

# check: 0 on a pass, 1 on a failure, which is kept once in the corpus.
expect 0 'PASS' "$kprop" check causal_conv1d --cases 40 --no-corpus
expect 1 'kept in the corpus' "$kprop" check causal_conv1d --impl tiled@clamped \
  --property packed --seed 3 --corpus "$tmp/corpus"
kept=$(ls "$tmp"/corpus/causal_conv1d/*.json)
expect 0 'as recorded' "$kprop" replay "$kept"
expect 1 'fail' "$kprop" replay "$kept" --impl tiled@clamped
expect 0 'pass' "$kprop" replay "$kept" --impl tiled@fixed
# The same search again skips the known signature: nothing new is written for it.
"$kprop" check causal_conv1d --impl tiled@clamped --property packed --seed 3 --cases 50 \
  --corpus "$tmp/corpus" --json >"$tmp/again.json" 2>/dev/null
grep -q '"known": [1-9]' "$tmp/again.json" || {
  echo "FAIL: the second run did not count the known failure"; failures=$((failures + 1)); }

# Machine-readable output parses as JSON.
expect 0 '"as_recorded": true' "$kprop" replay "$good" --json

echo "$failures failed"
[ "$failures" -eq 0 ]
