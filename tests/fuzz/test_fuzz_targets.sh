#!/usr/bin/env bash
# The libFuzzer targets (harness/fuzz/), one per kernel: over their seed corpus
# (regression) and in short time-boxed runs from nothing: the correct implementations never
# fail, each historical state or variant does, with its identity in the abort message.
#   test_fuzz_targets.sh FUZZ_DIR SEEDS_TOOL CORPUS MODE
# MODE: seeds | clean | historical | parser | speed (FUZZ_DIR: the speed build)
set -u
fuzz_dir=$1 seeds_tool=$2 corpus=$3 mode=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"
target=$fuzz_dir/fuzz_causal_conv1d
export ASAN_OPTIONS=detect_leaks=0

# Per kernel: its default (correct) implementations, its historical states or variants,
# the fewest seeds its corpus gives and how long a clean run fuzzes.
kernels="causal_conv1d geglu"
correct_causal_conv1d="reference tiled"
defective_causal_conv1d="tiled@original tiled@clamped tiled@fixed"
min_seeds_causal_conv1d=8
skipped_causal_conv1d=0
clean_seconds_causal_conv1d=20
correct_geglu="reference torch_policy rows flat"
defective_geglu="flat@gelu_in_dtype flat@fp32_product flat@bwd_no_roundtrip flat@assumes_contiguous"
min_seeds_geglu=4
skipped_geglu="[0-9]+"  # policy skips the reference and torch_policy itself
clean_seconds_geglu=10
of() { eval "echo \$${1}_$2"; }

case $mode in
seeds)
  # Every case of the kernel's own corpus folder encodes to a seed; replayed by the target,
  # the corpus's defects are known identities: counted, never an abort. (corpus/upstream's
  # cases, found in other kernels, may be ones kprop's implementations refuse.)
  for kernel in $kernels; do
    expect 0 "[0-9]+ seeds for $kernel in .*" "$seeds_tool" $kernel "$tmp/seeds-$kernel" "$corpus/$kernel"
    n=$(ls "$tmp/seeds-$kernel" | wc -l)
    [ "$n" -ge "$(of min_seeds $kernel)" ] || fail "only $n seeds for $kernel from $corpus"
    for impl in $(of correct $kernel) $(of defective $kernel); do
      expect 0 "kprop: [0-9]+ cases: [0-9]+ passed, [0-9]+ failed \(([0-9]+) known\), 0 rejected, $(of skipped $kernel) skipped, 0 too large" \
        env KPROP_IMPL=$impl KPROP_CORPUS="$corpus" "$fuzz_dir/fuzz_$kernel" "$tmp/seeds-$kernel"/*
      never "ASSERTION FAILED: .*"
      case " $(of correct $kernel) " in
        *" $impl "*) never "kprop: known .*" ;;
        *) also "kprop: known [0-9]+ x $kernel/$impl/.*" ;;
      esac
    done
  done
  ;;
clean)
  # Nothing known: a correct implementation gives the fuzzer nothing.
  for kernel in $kernels; do
    for impl in $(of correct $kernel); do
      case $impl in torch_policy|rows) continue ;; esac  # flat and the reference stand for geglu's
      mkdir -p "$tmp/w-$kernel-$impl"
      expect 0 "kprop: [0-9]+ cases: [0-9]+ passed, 0 failed \(0 known\), .*" \
        env KPROP_IMPL=$impl KPROP_CORPUS= "$fuzz_dir/fuzz_$kernel" -seed=1 \
        -max_total_time=$(of clean_seconds $kernel) -artifact_prefix="$tmp/" "$tmp/w-$kernel-$impl"
    done
  done
  # Run by hand, without ASAN_OPTIONS (this mode runs the sanitizer build): LeakSanitizer's
  # check at exit (libtorch's caches and the kernels' registrations read as leaks) stays
  # off, so a clean run exits 0 and writes no crash file. Each structured strategy runs and says so at exit.
  mkdir -p "$tmp/by-hand" "$tmp/w-by-hand"
  expect 0 "kprop: [0-9]+ structured mutations fell back to bytes" \
    env -u ASAN_OPTIONS KPROP_IMPL=tiled KPROP_MUTATION=mixed "$target" -seed=1 -runs=300 \
    -artifact_prefix="$tmp/by-hand/" "$tmp/w-by-hand"
  also "kprop: mutation [0-9]+ x bytes"
  [ -z "$(ls "$tmp/by-hand")" ] || fail "a clean run by hand wrote $(ls "$tmp/by-hand")"
  ;;
historical)
  # Nothing known: each state's first defect aborts the run, named in the abort message,
  # with its minimal case printed as a case file.
  for kernel in $kernels; do
    for impl in $(of defective $kernel); do
      mkdir -p "$tmp/w-$impl"
      expect 77 "ASSERTION FAILED: kprop found $kernel/$impl/.*" \
        env KPROP_IMPL=$impl KPROP_CORPUS= "$fuzz_dir/fuzz_$kernel" -seed=1 -max_total_time=300 \
        -artifact_prefix="$tmp/" "$tmp/w-$impl"
      also "== kprop: new defect =="
      also "  \"schema\": \"kprop-case/2\","
      also "kprop: found after [0-9]+ executions"
    done
  done
  # A name that selects an implementation, as a fleet runs one copy per implementation.
  cp "$target" "$tmp/fuzz_causal_conv1d-tiled_clamped"
  expect 0 "kprop: fuzzing causal_conv1d / tiled@clamped, property from byte 0; [0-9]+ known identities from .*" \
    env KPROP_CORPUS="$corpus" "$tmp/fuzz_causal_conv1d-tiled_clamped" -runs=10 -artifact_prefix="$tmp/"
  cp "$fuzz_dir/fuzz_geglu" "$tmp/fuzz_geglu-flat_assumes_contiguous"
  expect 0 "kprop: fuzzing geglu / flat@assumes_contiguous, property from byte 0; [0-9]+ known identities from .*" \
    env KPROP_CORPUS="$corpus" "$tmp/fuzz_geglu-flat_assumes_contiguous" -runs=10 -artifact_prefix="$tmp/"
  expect 2 "kprop: fuzz_causal_conv1d-nonesuch: 'nonesuch' names no implementation of causal_conv1d" \
    bash -c "cp '$target' '$tmp/fuzz_causal_conv1d-nonesuch' && '$tmp/fuzz_causal_conv1d-nonesuch' -runs=1"
  expect 2 "kprop: KPROP_PROPERTY=nonesuch: not a property of causal_conv1d" \
    env KPROP_PROPERTY=nonesuch "$target" -runs=1
  expect 2 "kprop: KPROP_MUTATION=nonesuch: not a strategy; known: mixed, structured, bytes, edge_value, .*" \
    env KPROP_MUTATION=nonesuch "$target" -runs=1
  ;;
speed)
  # The speed build (harness/fuzz/instrumentation.cmake): its coverage counters are those
  # of the kernels alone. An allowlist that matched nothing left a target blind ("no
  # interesting inputs"); from an empty corpus each target must find inputs of new
  # coverage, and the simplest case of tiled must run, not be refused.
  for kernel in $kernels; do
    mkdir -p "$tmp/w-$kernel"
    expect 0 "Done [0-9]+ runs in [0-9]+ second\(s\)" env KPROP_CORPUS= \
      "$fuzz_dir/fuzz_$kernel" -seed=1 -runs=300 -artifact_prefix="$tmp/" "$tmp/w-$kernel"
    also "#[0-9]+[[:space:]]+INITED cov: [1-9][0-9]* .*"
    never ".*no interesting inputs were found.*"
  done
  mkdir -p "$tmp/w-tiled"
  expect 0 "kprop: [0-9]+ cases: [0-9]+ passed, 0 failed \(0 known\), 0 rejected, [0-9]+ skipped, [0-9]+ too large" \
    env KPROP_CORPUS= KPROP_IMPL=tiled "$target" -seed=1 -runs=300 "$tmp/w-tiled"
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
