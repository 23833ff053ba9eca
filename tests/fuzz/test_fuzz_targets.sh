#!/usr/bin/env bash
# The libFuzzer targets (harness/fuzz/): over their seed corpus (regression) and in short
# time-boxed runs from nothing: the default implementations never fail, each historical
# state does, with its identity in the abort message.
#   test_fuzz_targets.sh FUZZ_DIR SEEDS_TOOL CORPUS MODE
# MODE: seeds | clean | historical | parser
set -u
fuzz_dir=$1 seeds_tool=$2 corpus=$3 mode=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"
target=$fuzz_dir/fuzz_causal_conv1d
export ASAN_OPTIONS=detect_leaks=0

case $mode in
seeds)
  # Every corpus case encodes to a seed; replayed by the target, the corpus's defects are
  # known identities: counted, never an abort.
  expect 0 "[0-9]+ seeds for causal_conv1d in .*" "$seeds_tool" causal_conv1d "$tmp/seeds" "$corpus"
  n=$(ls "$tmp/seeds" | wc -l)
  [ "$n" -ge 8 ] || fail "only $n seeds from $corpus"
  for impl in reference tiled tiled@original tiled@clamped tiled@fixed; do
    expect 0 "kprop: [0-9]+ cases: [0-9]+ passed, [0-9]+ failed \(([0-9]+) known\), 0 rejected, 0 skipped, 0 too large" \
      env KPROP_IMPL=$impl KPROP_CORPUS="$corpus" "$target" "$tmp/seeds"/*
    never "ASSERTION FAILED: .*"
    case $impl in
      reference|tiled) never "kprop: known .*" ;;
      *) also "kprop: known [0-9]+ x causal_conv1d/$impl/.*" ;;
    esac
  done
  ;;
clean)
  # Nothing known, 20 s each: a correct implementation gives the fuzzer nothing.
  for impl in reference tiled; do
    mkdir -p "$tmp/w-$impl"
    expect 0 "kprop: [0-9]+ cases: [0-9]+ passed, 0 failed \(0 known\), .*" \
      env KPROP_IMPL=$impl KPROP_CORPUS= "$target" -seed=1 -max_total_time=20 \
      -artifact_prefix="$tmp/" "$tmp/w-$impl"
  done
  ;;
historical)
  # Nothing known: each state's first defect aborts the run, named in the abort message,
  # with its minimal case printed as a case file.
  for impl in tiled@original tiled@clamped tiled@fixed; do
    mkdir -p "$tmp/w-$impl"
    expect 77 "ASSERTION FAILED: kprop found causal_conv1d/$impl/.*" \
      env KPROP_IMPL=$impl KPROP_CORPUS= "$target" -seed=1 -max_total_time=300 \
      -artifact_prefix="$tmp/" "$tmp/w-$impl"
    also "== kprop: new defect =="
    also "  \"schema\": \"kprop-case/2\","
    also "kprop: found after [0-9]+ executions"
  done
  # A name that selects an implementation, as a fleet runs one copy per implementation.
  cp "$target" "$tmp/fuzz_causal_conv1d-tiled_clamped"
  expect 0 "kprop: fuzzing causal_conv1d / tiled@clamped, property from byte 0; [0-9]+ known identities from .*" \
    env KPROP_CORPUS="$corpus" "$tmp/fuzz_causal_conv1d-tiled_clamped" -runs=10 -artifact_prefix="$tmp/"
  expect 2 "kprop: fuzz_causal_conv1d-nonesuch: 'nonesuch' names no implementation of causal_conv1d" \
    bash -c "cp '$target' '$tmp/fuzz_causal_conv1d-nonesuch' && '$tmp/fuzz_causal_conv1d-nonesuch' -runs=1"
  expect 2 "kprop: KPROP_PROPERTY=nonesuch: not a property of causal_conv1d" \
    env KPROP_PROPERTY=nonesuch "$target" -runs=1
  ;;
parser)
  # Any bytes: a CaseError or a valid case, never a crash (the corpus files as seeds).
  mkdir -p "$tmp/w"
  cp "$corpus"/*/*.json "$tmp/w/"
  expect 0 "Done [0-9]+ runs in [0-9]+ second\(s\)" \
    "$fuzz_dir/fuzz_case_file" -seed=1 -runs=50000 -max_total_time=60 -artifact_prefix="$tmp/" "$tmp/w"
  ;;
esac
finish
