#!/usr/bin/env bash
# A kernel kprop was not built with: scaled_tanh (tests/kernels/) comes in as a plugin
# through --load, and check, replay and shrink treat it as they treat their own. Exact exit
# codes and exact output lines; only timings are matched by pattern.
#   test_elementwise_cli.sh KPROP PLUGIN
set -u
kprop=$1
plugin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"

common=(--load "$plugin")
corpus=$tmp/corpus
bias_identity='scaled_tanh/toy@bias/y [8-wide blocks] {bias}'

# Without the plugin kprop does not know the kernel.
run unknown 2 "$kprop" check scaled_tanh --no-corpus
line_like unknown err "kprop: unknown kernel 'scaled_tanh'; known kernels: [a-z0-9_, ]+"
grep -q 'scaled_tanh;.*scaled_tanh' "$tmp/unknown.err" && fail "scaled_tanh listed as known"
only unknown out ""

# check: the bias defect is found (by composition, through y), localized to the
# forward call that is wrong, shrunk and kept once; exit 1.
run bias 1 "$kprop" check scaled_tanh --impl toy@bias --corpus "$corpus" "${common[@]}"
line bias out "kprop check scaled_tanh --impl toy@bias --seed 0: 1000 cases over gradient, vs_reference, chunked, packed, cores, layout, determinism, guard, neutral, composition"
line_like bias out 'FAIL after 40 cases \([0-9]+\.[0-9]{2} s\): scaled_tanh/toy@bias/composition/y in a residual \[8-wide blocks\], y used twice \[8-wide blocks\]'
line bias out "defect: $bias_identity"
line bias out "  property           vs_reference"
line bias out "  rows               1"
line bias out "  cols               8"
line bias out "  bias               true"
line bias out "  dtype              float32"
line bias out "  data               seed 5809719395801615055 (normal)"
the_one_file "$corpus/scaled_tanh"
line bias out "kept in the corpus: $kept"
line bias out "replay: kprop replay $kept --load $plugin"

# replay: every implementation does what the file records; exit 0.
run replay 0 "$kprop" replay "$kept" "${common[@]}"
line replay out "$kept as recorded"
line replay out "  scaled_tanh rows=1 cols=8 bias=true float32 seed=5809719395801615055 normal"
line replay out "  reference        pass      expected pass      ok"
line replay out "  toy              pass      expected pass      ok"
line replay out "  toy@bias         fail      expected fail      ok"
line replay out "  toy@tail         pass      expected pass      ok"
line replay out "  toy@bias: scaled_tanh/toy@bias/vs_reference/y [8-wide blocks]"
only replay err ""
run replay_fixed 0 "$kprop" replay "$kept" --impl toy "${common[@]}"
line replay_fixed out "  toy              pass      expected pass      ok"
run replay_broken 1 "$kprop" replay "$kept" --impl toy@bias "${common[@]}"
line replay_broken out "  toy@bias         fail      expected fail      ok"

# shrink: a bigger failing case written by hand, for the gradient check, shrinks to the
# same identity, which the corpus already holds; exit 1.
cat >"$tmp/bigger.json" <<'EOF'
{
  "schema": "kprop-case/2",
  "case": {"kernel": "scaled_tanh", "impl": "toy@bias", "property": "gradient",
           "rows": 6, "cols": 29, "bias": true,
           "dtype": "float64", "seed": 12345, "distribution": "uniform"}
}
EOF
run shrink 1 "$kprop" shrink "$tmp/bigger.json" --corpus "$corpus" "${common[@]}"
line shrink out "$tmp/bigger.json fails: scaled_tanh/toy@bias/gradient/db [8-wide blocks]"
line_like shrink out "  y \[8-wide blocks\] -> scaled_tanh/toy@bias/y \[8-wide blocks\] \{bias\} in [0-9]+ steps \([0-9]+\.[0-9]{2} s\)"
line shrink out "    scaled_tanh rows=1 cols=8 bias=true float32 seed=12345 normal"
line shrink out "    already in the corpus: $kept"
[ "$(ls "$corpus"/scaled_tanh 2>/dev/null | wc -l)" -eq 1 ] || fail "shrink wrote a second file"

# The tail defect needs the reference to be seen, and shrinks to 7 columns.
run tail 1 "$kprop" check scaled_tanh --impl toy@tail --property vs_reference --no-corpus "${common[@]}"
line tail out "defect: scaled_tanh/toy@tail/y [last column]"
line tail out "  cols               7"

# The correct implementation with a pinned parameter passes: 140 cases checked (gradient,
# vs_reference, layout, determinism, guard, neutral, composition), 60 skipped (chunked,
# packed, cores); exit 0.
run pinned 0 "$kprop" check scaled_tanh --set cols=9 --cases 200 --no-corpus "${common[@]}"
line pinned out "kprop check scaled_tanh --impl toy --seed 0: 200 cases over gradient, vs_reference, chunked, packed, cores, layout, determinism, guard, neutral, composition"
line_like pinned out '200 cases: 140 passed, 0 failed, 0 known failures, 0 rejected, 60 skipped in [0-9]+\.[0-9]{2} s \([0-9]+ cases/s\)'
line pinned out "PASS: no new counterexample in 200 cases"

# A forward that stores tanh(x) over its input x returns the right y: the check that every
# tensor handed to a call comes back unchanged finds it at its first case, names x and the
# call, shrinks it to one element and keeps it; the replay sees it again.
over=kprop_variant_x_overwritten::scaled_tanh
run overwrite 1 "$kprop" check scaled_tanh --impl "$over" --corpus "$tmp/over" "${common[@]}"
line_like overwrite out "FAIL after 1 cases \([0-9]+\.[0-9]{2} s\): scaled_tanh/$over/gradient/x overwritten by the forward \[last column\]"
line overwrite out "defect: scaled_tanh/$over/x overwritten by the forward [last column]"
line overwrite out "  rows               1"
line overwrite out "  cols               1"
the_one_file "$tmp/over/scaled_tanh"
run overwrite_replay 1 "$kprop" replay "$kept" --impl "$over" "${common[@]}"
line_like overwrite_replay out "  $over +fail +expected fail +ok"

# Pinned cotangents: a mean's 1/N in every case finds a backward that takes a one-valued dy
# for ones, and the shrunk case keeps them; the kept file says so.
run scalar 1 "$kprop" check scaled_tanh --impl kprop_variant_unit_scalar_dy::scaled_tanh \
  --property vs_reference --set cotangents=scalar --no-corpus "${common[@]}"
line_like scalar out 'FAIL after 1 cases \([0-9]+\.[0-9]{2} s\): scaled_tanh/kprop_variant_unit_scalar_dy::scaled_tanh/vs_reference/dx .*'
line scalar out "  cotangents         scalar"
run badcot 2 "$kprop" check scaled_tanh --set cotangents=twos --no-corpus "${common[@]}"
only badcot err "kprop: --set cotangents: unknown value 'twos' (random, ones, zero_first, scalar, per_row)"

# Bad usage: exit 2, one line that names what is known.
run nosuch 2 "$kprop" check scaled_tanh --set nosuch=1 --no-corpus "${common[@]}"
only nosuch err "kprop: --set nosuch: not a parameter of scaled_tanh; parameters: rows, cols, bias"
only nosuch out ""
run noimpl 2 "$kprop" check scaled_tanh --impl nope --no-corpus "${common[@]}"
only noimpl err "kprop: unknown implementation 'nope' of scaled_tanh; known: reference, toy, toy@tail, toy@bias (or NS::scaled_tanh for operators registered by a library loaded with --load)"

finish
