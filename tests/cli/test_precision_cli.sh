#!/usr/bin/env bash
# `kprop report precision geglu_mlp` as a user meets it: on a tiny shape, the verdicts for
# an implementation bit-exact with the framework, one that rounds once where the framework
# rounds twice, and one that computes gelu in bf16 (exit 0, 0, 1); an implementation from
# outside (--load); the files it writes; and bad input (exit 2, nothing written).
#   test_precision_cli.sh KPROP PLUGIN
set -u
kprop=$1
plugin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"

tiny=(report precision geglu_mlp --shape batch=1,seq=8 --set hidden=32 --set intermediate=64 --threads 1)

run exact 0 "$kprop" "${tiny[@]}" --impl flat
line exact out "## Precision of geglu_mlp / flat in bfloat16"
# (On a CPU whose bf16 matmuls accumulate in bf16 the device says so: "cpu (its ...)".)
line_like exact out "Shape: batch=1,seq=8,hidden=32,intermediate=64,num_cores=48,buffer_bytes=196608; weights unscaled \\(randn\\); seed 0; framework ops on cpu( \\(its bfloat16 matmuls accumulate in bfloat16, not fp32; the bounds say so\\))?\\. Compared: flat \\(implementation\\) vs torch_policy \\(framework policy\\) vs reference \\(float64\\)\\."
line_like exact out '- \*\*y\*\* \(bit_exact\): bit-exact with the framework.s bfloat16 chain \(both within the derived bound of float64, error/bound [0-9.]+\)\.'
line exact out "The implementation's chain is bit-exact with the framework's in every tensor."
line exact out "**Bit-exact:** flat follows the framework's bfloat16 rounding policy exactly; a test of this module can compare it with the framework's chain at atol = rtol = 0."
line exact out "### Extrapolated to the default shape"
line_like exact out 'Time: [0-9.]+ s on cpu \(1 thread, [0-9.]+ s of CPU\): inputs [0-9.]+ s, bfloat16 chains [0-9.]+ s, float64 chain [0-9.]+ s, bounds [0-9.]+ s, collect [0-9.]+ s, report [0-9.]+ s\.'
only exact err ""

# One rounding where the framework rounds twice: c differs by one ulp, the matmuls carry
# it within the bound. The Markdown and JSON also go to files.
run once 0 "$kprop" "${tiny[@]}" --impl flat@fp32_product --markdown "$tmp/r.md" --json-out "$tmp/r.json"
# (numbers as patterns: another libtorch's matmuls may round a few elements differently)
N='[0-9.e+-]+'
line_like once out "- \*\*c\*\* \(rounding\): differs from the framework by 1 ulp at \|value\| $N \(2\^$N\) \(diff $N; $N of 512 elements differ, by at most 1 ulp at \|value\| $N; rounding point: product from the fp32 gelu\); both are within the derived bound of float64 \(error/bound $N and $N; on its own inputs: $N and $N\) and the implementation is no more than 2x as far from float64 as the framework: rounding, not a bug\."
line_like once out "First deviation from the framework in the chain: \*\*c\*\* \(GEGLU forward output, an output of the kernel under test itself\): $N of 512 elements differ, by at most 1 ulp \(at \|value\| $N \(2\^$N\)\); every difference is the rounding point \"product from the fp32 gelu\"\."
line_like once out "\*\*Rounding, not a bug:\*\* flat@fp32_product differs from the framework's bfloat16 policy first in c \(GEGLU forward output: product from the fp32 gelu\), by at most 1 ulp\. .*"
cmp -s "$tmp/r.md" "$tmp/once.out" || fail "--markdown did not write what was printed"
grep -qx '  "passed": true,' "$tmp/r.json" || fail "r.json: no \"passed\": true"
grep -qx '  "first_deviation": "c",' "$tmp/r.json" || fail "r.json: first_deviation is not c"
ls "$tmp" | grep -q '\.tmp\.' && fail "a temporary file was left: $(ls "$tmp")"

# --json: the same report for machines.
run json 0 "$kprop" "${tiny[@]}" --impl flat@fp32_product --json
line json out '  "report": "precision",'
line json out '  "impl": "flat@fp32_product",'

# gelu in bf16: the kernel's own outputs are outside the bound: exit 1.
run defect 1 "$kprop" "${tiny[@]}" --impl flat@gelu_in_dtype
line_like defect out "- \*\*c\*\* \(outside_bound\): outside the derived bound of (float64|the kernel in float64 on its own inputs) \(error/bound $N at \[$N, $N, $N\]; the framework's chain: $N; rounding point: gelu in the input dtype\): a defect — run \`kprop check geglu --impl flat@gelu_in_dtype\` for the minimal case\."
line_like defect out '\*\*Not rounding:\*\* c \(outside_bound\), .*da \(outside_bound\), db \(outside_bound\).*'

# Weights scaled by 1/sqrt(fan_in); an implementation from outside kprop.
run fan_in 0 "$kprop" "${tiny[@]}" --impl flat@bwd_no_roundtrip --scale fan_in --seed 3
line_like fan_in out "Shape: batch=1,seq=8,hidden=32,intermediate=64,num_cores=48,buffer_bytes=196608; weights scaled by 1/√fan_in; seed 3; framework ops on cpu( \\(its bfloat16 matmuls accumulate in bfloat16, not fp32; the bounds say so\\))?\\. Compared: flat@bwd_no_roundtrip \\(implementation\\) vs torch_policy \\(framework policy\\) vs reference \\(float64\\)\\."
run outside 0 "$kprop" "${tiny[@]}" --load "$plugin" --impl mine_geglu::geglu
line outside out "## Precision of geglu_mlp / mine_geglu::geglu in bfloat16"

# The help names the registered models (from their registry: the harness names none).
run help 0 "$kprop" report --help
line_like help out " +paths TEXT \.\.\. +tolerance: .*; precision: the model \(geglu_mlp\)"

# Bad input: exit 2, one line saying what is wrong, no file written.
bad() {  # bad NAME MESSAGE ARGS...
  local name=$1 message=$2
  shift 2
  run "$name" 2 "$kprop" "$@" --json-out "$tmp/bad.json"
  only "$name" err "$message"
  [ -e "$tmp/bad.json" ] && fail "$name wrote $tmp/bad.json"
}
bad no_model "kprop: report precision needs a model: geglu_mlp" report precision
bad unknown_model "kprop: unknown precision model 'mlp'; known models: geglu_mlp" report precision mlp
bad two_models "kprop: report precision takes one model, got geglu_mlp geglu_mlp" report precision geglu_mlp geglu_mlp
bad unknown_param "kprop: geglu_mlp has no parameter 'heads'; parameters: batch, seq, hidden, intermediate, num_cores, buffer_bytes" "${tiny[@]}" --shape heads=2
bad zero "kprop: seq=0: must be an integer in 1..1048576 (sequence length)" "${tiny[@]}" --shape seq=0
bad not_integer "kprop: hidden=2k: must be an integer in 1..65536 (hidden size (x, y))" "${tiny[@]}" --set hidden=2k
bad no_value "kprop: shape 'batch': expected NAME=VALUE" "${tiny[@]}" --shape batch
bad scale "kprop: --scale xavier: expected unscaled or fan_in" "${tiny[@]}" --scale xavier
bad dtype "kprop: geglu_mlp models the dtypes bfloat16, float16, not float32" "${tiny[@]}" --dtype float32
bad device "kprop: --device 'tpu': expected cpu, cuda or cuda:N" "${tiny[@]}" --device tpu
run impl 2 "$kprop" "${tiny[@]}" --impl nope
line_like impl err "kprop: unknown implementation 'nope' of geglu; known: reference, .*torch_policy.*"
bad cases "kprop: --cases and --kernel belong to \`report tolerance\`" "${tiny[@]}" --cases 3
bad too_large "kprop: x (batch*seq*hidden) would hold 8589934592 elements, more than the limit 16777216 (KPROP_MAX_ELEMENTS raises it)" report precision geglu_mlp --shape batch=1024,seq=4096
bad tolerance_only "kprop: --shape, --scale and --threads belong to \`report precision\`" report tolerance --cases 1 --shape batch=1
run threads 2 "$kprop" "${tiny[@]}" --threads 0
line_like threads err "--threads: Value 0 not in range .*"
run unwritable 2 "$kprop" "${tiny[@]}" --json-out /dev/null/r.json
line_like unwritable err "kprop: /dev/null/r.json: .*"

finish
