#!/usr/bin/env bash
# The Python float64 references (python/kprop/references.py), which `kprop repro` writes
# into its scripts, are held to the C++ oracles by kprop itself: each is registered as
# pyref::<kernel> and checked in float64 against the C++ reference, every option the
# kernel's schema draws, within float64's derived bounds.
#   test_references.sh PYTHON PYTHON_DIR SOURCE_DIR
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"
. "$(dirname "$0")/python_entry.sh" "$1" "$2" "$3"

kernels=$("$1" -c "from kprop.references import REFERENCES; print(' '.join(REFERENCES))")
[ -n "$kernels" ] || fail "no references listed"
for kernel in $kernels; do
  expect 0 "PASS: no new counterexample in 60 cases" "${py[@]}" check "$kernel" --impl "pyref::$kernel" \
    --import pyref_ops --dtype float64 --property vs_reference --cases 60 --seed 1 --no-corpus
done
# The sequence properties on packed rows through the Python entry: a result the case
# leaves out (zt without normalize) comes back from Python as an empty tensor, which the
# cut must not hand on as a state.
for kernel in linear_attn delta_rule; do
  for property in chunked packed; do
    expect 0 "PASS: no new counterexample in 40 cases" "${py[@]}" check "$kernel" --impl "pyref::$kernel" \
      --import pyref_ops --dtype float64 --property $property --set layout=packed --cases 40 --seed 1 --no-corpus
  done
done
finish
