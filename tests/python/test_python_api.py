"""kprop's Python API (python/kprop): a kernel declared with kprop.Kernel, implementations
registered with kprop.implementation and tested through autograd, the result objects of
kprop.check, replay, shrink, hunt and nightly, what an implementation takes, and bad
declarations.

    KPROP_FUZZ_DIR=<build>/fuzz PYTHONPATH=<build>/python:tests/python \
        python3 tests/python/test_python_api.py

Each check prints its name; the first that fails raises. Exact identities and minimal
cases: they are what a user reads.
"""
import json
import os
import subprocess
import sys
import tempfile

import torch

import kprop
import py_api_ops  # noqa: F401  (registers the kernel and the implementations)

checks = []


def check(f):
    checks.append(f)
    return f


@check
def a_correct_python_implementation_of_a_python_kernel_passes():
    r = kprop.check("py_scaled_tanh", impl="py_good::py_scaled_tanh", cases=200)
    assert r.passed, r.json
    assert r.tally.passed > 150, r.tally
    assert r.finding is None


@check
def check_results_are_typed():
    import dataclasses
    r = kprop.check("py_scaled_tanh", impl="py_good::py_scaled_tanh", cases=30,
                    properties=["vs_reference", "gradient"])
    assert dataclasses.is_dataclass(r) and isinstance(r, kprop.CheckResult), type(r)
    assert isinstance(r.tally, kprop.Tally) and r.tally.cases == 30, r.tally
    assert set(r.tally.by_property) == {"vs_reference", "gradient"}, r.tally.by_property
    assert sum(t.cases for t in r.tally.by_property.values()) == 30, r.tally.by_property
    assert r.checked == 30 - r.tally.skipped, r
    assert isinstance(r.not_taken, dict) and isinstance(r.rejections, dict), r
    planted = kprop.check("py_scaled_tanh", impl="py_planted::py_scaled_tanh", cases=500)
    f = planted.finding
    assert isinstance(f, kprop.Finding) and f.verdict["status"] == "fail", f
    assert f.path is None  # no corpus: nothing kept


@check
def a_usage_error_raises_kprop_usage_error_with_kprops_message():
    for call, words in [
            (lambda: kprop.check("no_such_kernel"), "unknown kernel 'no_such_kernel'"),
            (lambda: kprop.check("py_scaled_tanh", impl="nope"), "nope"),
            (lambda: kprop.check("py_scaled_tanh", properties=["nope"]), "unknown property 'nope'"),
            (lambda: kprop.check("py_scaled_tanh", set={"nope": 1}), "--set nope: not a parameter"),
            (lambda: kprop.check("py_scaled_tanh", dtypes=["float7"]), "unknown dtype 'float7'"),
            (lambda: kprop.check("py_scaled_tanh", cases=0), "--cases 0"),
            (lambda: kprop.check("py_scaled_tanh", device="tpu"), "--device 'tpu'")]:
        try:
            call()
        except kprop.UsageError as e:
            assert words in str(e), (words, str(e))
            assert isinstance(e, ValueError)
        else:
            raise AssertionError(f"accepted: {words}")


@check
def raise_on_failure_raises_kprop_failure_carrying_the_result():
    try:
        kprop.check("py_scaled_tanh", impl="py_planted::py_scaled_tanh", cases=500,
                    raise_on_failure=True)
    except kprop.Failure as e:
        assert not e.result.passed and e.result.exit_code == 1, e.result
        assert "defect: py_scaled_tanh/py_planted::py_scaled_tanh/y [last column]" in str(e), str(e)
    else:
        raise AssertionError("a failing check raised nothing")
    # A passing check raises nothing and returns its result.
    r = kprop.check("py_scaled_tanh", impl="py_good::py_scaled_tanh", cases=20,
                    raise_on_failure=True)
    assert r.passed, r


@check
def a_planted_defect_is_found_shrunk_kept_and_replayed():
    corpus = tempfile.mkdtemp()
    r = kprop.check("py_scaled_tanh", impl="py_planted::py_scaled_tanh", cases=500, corpus=corpus)
    assert not r.passed and r.exit_code == 1, r
    f = r.finding
    assert f.identity == "py_scaled_tanh/py_planted::py_scaled_tanh/y [last column]", f.identity
    assert (f.minimal["rows"], f.minimal["cols"], f.minimal["bias"]) == (1, 7, False), f.minimal
    assert f.path and os.path.isfile(f.path), f.path
    assert f.path.startswith(os.path.join(corpus, "py_scaled_tanh")), f.path
    # Replayed through the API and through the command line, it behaves as recorded.
    assert kprop.main(["replay", f.path, "--import", "py_api_ops"]) == 0
    cli = subprocess.run([sys.executable, "-m", "kprop", "replay", f.path, "--import", "py_api_ops"],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert f"{f.path} as recorded" in cli.stdout, cli.stdout
    # Found from the command line too (the module registers the kernel there).
    found = subprocess.run([sys.executable, "-m", "kprop", "check", "py_scaled_tanh", "--import",
                            "py_api_ops", "--impl", "py_planted::py_scaled_tanh", "--cases", "500",
                            "--no-corpus"], capture_output=True, text=True)
    assert found.returncode == 1, found.stdout + found.stderr
    assert f"defect: {f.identity}" in found.stdout, found.stdout
    # Known now: the same search looks past it.
    again = kprop.check("py_scaled_tanh", impl="py_planted::py_scaled_tanh", cases=100, corpus=corpus)
    assert again.known.get(f.identity, 0) > 0, again.json


PLANTED = "py_planted::py_scaled_tanh"
PLANTED_IDENTITY = "py_scaled_tanh/py_planted::py_scaled_tanh/y [last column]"


def hand_written_case(folder, rows, cols, bias, impl=PLANTED):
    """A case file with only its case, as a person writes one."""
    path = os.path.join(folder, f"hand-{rows}x{cols}.json")
    with open(path, "w") as f:
        json.dump({"schema": "kprop-case/2",
                   "case": {"kernel": "py_scaled_tanh", "impl": impl, "property": "vs_reference",
                            "rows": rows, "cols": cols, "bias": bias, "dtype": "float32",
                            "seed": 11, "distribution": "normal"}}, f)
    return path


@check
def shrink_returns_the_minimal_case_and_replay_each_files_verdicts():
    folder, corpus = tempfile.mkdtemp(), tempfile.mkdtemp()
    path = hand_written_case(folder, 5, 23, True)
    s = kprop.shrink(path)  # no corpus: nothing kept
    assert s.exit_code == 1 and not s.passed, s
    # Each symptom shrunk on its own: y, and the gradients autograd derived from that forward.
    by_identity = {f.identity: f for f in s.findings}
    assert PLANTED_IDENTITY in by_identity and len(by_identity) == len(s.findings) >= 2, by_identity
    y = by_identity[PLANTED_IDENTITY]
    assert (y.minimal["rows"], y.minimal["cols"], y.minimal["bias"]) == (1, 7, False), y.minimal
    assert all(f.path is None for f in s.findings) and not os.listdir(corpus)
    kept_all = [f.path for f in kprop.shrink(path, corpus=corpus).findings]
    assert all(p.startswith(os.path.join(corpus, "py_scaled_tanh")) for p in kept_all), kept_all
    kept = kept_all[0]
    r = kprop.replay([kept, corpus])
    assert r.passed and [f.path for f in r.files][0] == kept, r.json
    assert sorted(f.path for f in r.files[1:]) == sorted(set(kept_all)), r.json
    assert r.files[0].as_recorded and r.files[0].fingerprint_matches
    assert r.files[0].verdicts[PLANTED]["status"] == "fail", r.files[0].verdicts
    assert r.files[0].verdicts["reference"]["status"] == "pass", r.files[0].verdicts
    # One implementation alone is judged as check does: the planted one fails.
    assert kprop.replay(kept, impl=PLANTED).exit_code == 1
    # A bad file is named, the others still replay, and the exit code is the worst.
    bad = kprop.replay([os.path.join(folder, "missing.json"), kept])
    assert bad.exit_code == 2 and [f.path for f in bad.files] == [kept], bad.json
    # A passing case has nothing to shrink.
    fine = kprop.shrink(hand_written_case(folder, 2, 8, False))
    assert fine.passed and fine.findings == [], fine.json


@check
def hunt_returns_each_known_defect_with_what_it_shrank_to():
    h = kprop.hunt("causal_conv1d", defects=["dh0 over-count"], cases=3000)
    assert h.passed and len(h.hunts) >= 1, h.json
    assert all(x.found and x.defect == "dh0 over-count" for x in h.hunts), h.hunts
    f = h.hunts[0].finding
    assert f.identity.startswith("causal_conv1d/tiled@original/dh0"), f.identity
    assert f.path is None and f.minimal["W"] >= 2, f.minimal
    assert [x.identity for x in h.findings] == [x.finding.identity for x in h.hunts]
    assert isinstance(h, kprop.HuntResult) and isinstance(h.hunts[0], kprop.results.Hunt), h
    try:
        kprop.hunt("causal_conv1d", defects=["no such defect"])
    except kprop.UsageError as e:
        assert str(e) == "unknown defect 'no such defect'", str(e)
    else:
        raise AssertionError("an unknown defect was accepted")


@check
def nightly_returns_its_summary():
    fuzzers = os.environ.get("KPROP_FUZZ_DIR")
    out = tempfile.mkdtemp()
    if not fuzzers:  # a build without clang: no targets, which nightly refuses up front
        try:
            kprop.nightly(out, kernels=["causal_conv1d"], budget="4s", fuzzers=out)
        except ValueError as e:
            assert "kprop nightly" in str(e), str(e)
            return
        raise AssertionError("nightly ran without its fuzz targets")
    n = kprop.nightly(out, kernels=["causal_conv1d"], impls=["tiled"], budget="4s", jobs=2,
                      fuzzers=fuzzers)
    assert n.passed and n.json["schema"] == "kprop-nightly/1", n.json
    assert n.json == json.load(open(os.path.join(out, "summary.json")))
    assert sum(s["cases"] for s in n.json["searches"]) > 0, n.json["searches"]
    assert [t["name"] for t in n.json["targets"]] == ["fuzz_causal_conv1d-tiled"], n.json["targets"]
    assert n.findings == [] and not n.interrupted
    # A shard, with a Python implementation: searched, never handed to a fuzz target (a C++
    # program, which could not call it), so no fuzz build is needed (a folder without one).
    n = kprop.nightly(out, kernels=["geglu"], impls=["py_geglu::geglu"], budget="4s", jobs=2,
                      fuzzers=tempfile.mkdtemp(), shard="1/2")
    assert n.json["shard"] == {"index": 1, "count": 2, "source": "--shard 1/2"}, n.json["shard"]
    assert os.path.exists(os.path.join(out, "shard-2-of-2", "summary.json"))
    assert n.json["targets"] == [], n.json["targets"]
    assert sum(s["cases"] for s in n.json["searches"]) > 0, n.json["searches"]


@check
def an_implementation_with_one_gradient_hands_back_that_tensor():
    # kl_div's only gradient is dy_pred: its backward operator returns one Tensor, not a
    # tuple of one (which failed every call of Liger's kl_div and cross entropy).
    def kl(y_pred, y_true, reduction, target):
        if target == "log_probs":
            loss = y_true.exp() * (y_true - y_pred)
        else:
            loss = y_true * (y_true.clamp_min(1e-10).log() - y_pred)
        if reduction == "none":
            return {"loss": loss}
        n = {"batchmean": loss.shape[0], "mean": loss.numel(), "sum": 1}[reduction]
        return {"total": loss.sum() / n}
    kprop.implementation("kl_div", "py_kl", kl, dtypes=[torch.float32])
    r = kprop.check("kl_div", impl="py_kl::kl_div", cases=40, properties=["vs_reference"])
    assert r.passed, r.json


@check
def neutral_leaves_alone_an_input_the_implementation_always_takes():
    # An implementation that needs w and b (Liger's LayerNorm) declares it: `neutral` has no
    # other path of it to compare, and never calls it without them.
    def layer_norm(x, w, b):
        if w is None or b is None:
            raise RuntimeError("w and b are required")
        return torch.nn.functional.layer_norm(x, x.shape[-1:], w, b, 1e-6)
    kprop.implementation("layer_norm", "py_ln", layer_norm, dtypes=[torch.float32],
                         flags={"weight": True, "bias": True})
    r = kprop.check("layer_norm", impl="py_ln::layer_norm", cases=30, properties=["neutral"])
    assert r.passed, r.json


@check
def an_implementation_that_writes_over_its_input_is_found_unless_it_declares_it():
    r = kprop.check("py_scaled_tanh", impl="py_overwrites_x::py_scaled_tanh", cases=50,
                    properties=["vs_reference"])
    assert not r.passed, r
    assert "/x overwritten by the forward [" in r.finding.identity, r.finding.identity
    single_calls = ["gradient", "vs_reference", "layout", "determinism", "guard", "neutral"]
    r = kprop.check("py_scaled_tanh", impl="py_overwrites_x_declared::py_scaled_tanh", cases=100,
                    properties=single_calls)
    assert r.passed, r.json
    # Declared or not, the op that saved x for its own backward reads what the kernel left.
    r = kprop.check("py_scaled_tanh", impl="py_overwrites_x_declared::py_scaled_tanh", cases=20,
                    properties=["composition"])
    assert not r.passed, r
    assert r.finding.identity.startswith(
        "py_scaled_tanh/py_overwrites_x_declared::py_scaled_tanh/dx"), r.finding.identity
    assert kprop.check("py_scaled_tanh", impl="py_good::py_scaled_tanh", cases=40,
                       properties=["composition"]).passed
    try:
        kprop.implementation("py_scaled_tanh", "bad_overwrite", py_api_ops.good, overwrites=["z"])
    except ValueError as e:
        assert "takes overwrites: 'z' is no input or cotangent of py_scaled_tanh" in str(e), str(e)
    else:
        raise AssertionError("overwrites=['z'] was accepted")


@check
def a_backward_that_reads_grad_output_without_its_strides_is_found_by_layout():
    for impl in ("py_good", "py_contiguous_dy"):  # right on every contiguous dy
        r = kprop.check("py_scaled_tanh", impl=f"{impl}::py_scaled_tanh", cases=30,
                        properties=["vs_reference", "gradient"])
        assert r.passed, (impl, r.json)
    assert kprop.check("py_scaled_tanh", impl="py_good::py_scaled_tanh", cases=30,
                       properties=["layout"]).passed
    r = kprop.check("py_scaled_tanh", impl="py_contiguous_dy::py_scaled_tanh", cases=30,
                    properties=["layout"])
    assert not r.passed, r
    assert " varies with dy " in r.finding.identity, r.finding.identity
    try:
        kprop.implementation("py_scaled_tanh", "bad_layout", py_api_ops.good, layouts=["diagonal"])
    except ValueError as e:
        assert "takes layouts: 'diagonal' is no layout of py_scaled_tanh" in str(e), str(e)
    else:
        raise AssertionError("layouts=['diagonal'] was accepted")


@check
def a_backward_that_reads_past_the_end_of_grad_output_is_found_by_guard():
    # Past dy's end lie zeros, as in a fresh allocation. (`layout` may see it too: a
    # one-row slice with padded rows is contiguous, and its padding lies past its end.)
    r = kprop.check("py_scaled_tanh", impl="py_reads_past_end::py_scaled_tanh", cases=40,
                    properties=["vs_reference", "gradient", "determinism"])
    assert r.passed, r.json
    assert kprop.check("py_scaled_tanh", impl="py_good::py_scaled_tanh", cases=40,
                       properties=["guard"]).passed
    r = kprop.check("py_scaled_tanh", impl="py_reads_past_end::py_scaled_tanh", cases=40,
                    properties=["guard"])
    assert not r.passed, r
    assert r.finding.identity.startswith(
        "py_scaled_tanh/py_reads_past_end::py_scaled_tanh/db varies with what lies past dy's end"), \
        r.finding.identity


@check
def a_backward_that_takes_a_scalar_grad_output_for_one_is_found_by_a_mean_cotangent():
    r = kprop.check("py_scaled_tanh", impl="py_unit_scalar_dy::py_scaled_tanh", cases=300,
                    properties=["vs_reference"])
    assert not r.passed, r
    assert r.finding.identity.startswith("py_scaled_tanh/py_unit_scalar_dy::py_scaled_tanh/d"), \
        r.finding.identity
    # Shrunk, the case keeps cotangents of one value other than 1 (a mean's 1/N, one row's
    # weight, or zero).
    assert r.finding.minimal.get("cotangents") in ("scalar", "per_row", "zero_first"), \
        r.finding.minimal


@check
def no_bias_equals_a_zero_bias_declared_neutral():
    r = kprop.check("py_scaled_tanh", impl="py_good::py_scaled_tanh", cases=40,
                    properties=["neutral"])
    assert r.passed and r.tally.passed == 40, r.tally  # compared, not skipped


@check
def a_sum_in_a_new_order_on_every_call_is_found_by_determinism_unless_declared():
    r = kprop.check("py_scaled_tanh", impl="py_random_order::py_scaled_tanh", cases=60,
                    properties=["vs_reference", "gradient", "layout"])
    assert r.passed, r.json
    r = kprop.check("py_scaled_tanh", impl="py_random_order::py_scaled_tanh", cases=300,
                    properties=["determinism"])
    assert not r.passed, r
    assert r.finding.identity.startswith(
        "py_scaled_tanh/py_random_order::py_scaled_tanh/db differs between calls"), r.finding.identity
    kprop.takes("py_scaled_tanh", "py_random_order::py_scaled_tanh", nondeterministic=True)
    r = kprop.check("py_scaled_tanh", impl="py_random_order::py_scaled_tanh", cases=60,
                    properties=["determinism"])
    kprop.takes("py_scaled_tanh", "py_random_order::py_scaled_tanh")
    assert r.passed, r.json


@check
def a_backward_that_reads_grad_output_as_a_scalar_is_found():
    r = kprop.check("geglu", impl="py_scalar_grad::geglu", cases=300, properties=["vs_reference"])
    assert not r.passed, r
    f = r.finding
    assert f.identity.startswith("geglu/py_scalar_grad::geglu/d"), f.identity
    # One element hides it (the mean of one cotangent is itself): two are the least.
    elements = f.minimal["batch"] * f.minimal["rows"] * f.minimal["cols"]
    assert elements == 2, f.minimal


@check
def what_an_implementation_takes_is_not_run_and_gradient_adapts():
    r = kprop.check("geglu", impl="py_geglu::geglu", cases=200,
                    properties=["gradient", "vs_reference"])
    assert r.passed, r.json
    # vs_reference draws bf16, fp16 and float64 too: those are not taken, never failures.
    assert any("is not among its dtypes (float32)" in why for why in r.not_taken), r.not_taken
    assert r.tally.failed == 0 and r.tally.passed > 50, r.tally
    # gradient's float64 cases ran, in float32 against the reference's gradient.
    assert not any(why.startswith("float64") and "gradient" in why for why in r.not_taken)


@check
def the_gradient_check_in_its_own_dtype_still_fails_a_wrong_backward():
    r = kprop.check("geglu", impl="py_scalar_grad::geglu", cases=100, properties=["gradient"])
    assert not r.passed, r
    assert "takes no float64: its backward in float32" in r.finding.verdict["message"], r.finding.verdict


@check
def bad_declarations_name_the_kernel_the_implementation_and_the_field():
    for kwargs, words in [({"accepts": {"nope": (1, 2)}}, "kernel geglu, implementation bad::geglu: takes ranges: 'nope' is no parameter of geglu"),
                          ({"accepts": {"rows": (4, 2)}}, "takes ranges: 'rows': 4..2 is empty"),
                          ({"choices": {"layout": ["diagonal"]}}, "takes choices: 'layout' has no choice 'diagonal'"),
                          ({"dtypes": ["float8"]}, "takes dtypes: unknown dtype 'float8'")]:
        try:
            kprop.implementation("geglu", "bad", py_api_ops.geglu, **kwargs)
        except ValueError as e:
            assert words in str(e), (str(e), words)
        else:
            raise AssertionError(f"{kwargs} was accepted")
    try:
        kprop.Kernel("py_broken", params=[kprop.integer("n", 1, 4)], inputs=[kprop.tensor("x", "n")],
                     outputs=[kprop.tensor("y", "n")], reference=lambda x: x, bounds={"y": kprop.elementwise(1)})
    except ValueError as e:
        assert "kernel py_broken: bounds: 'dx' has no bound" in str(e), str(e)
    else:
        raise AssertionError("a kernel without dx's bound was accepted")


@check
def schemas_come_from_the_spec():
    fwd, bwd = kprop.schemas("py_scaled_tanh")
    assert fwd == "py_scaled_tanh_fwd(Tensor x, Tensor s, Tensor? b) -> (Tensor y)", fwd
    assert bwd == ("py_scaled_tanh_bwd(Tensor x, Tensor s, Tensor? b, Tensor dy) -> "
                   "(Tensor dx, Tensor ds, Tensor db)"), bwd
    assert kprop.schemas("geglu")[0].startswith("geglu_fwd(Tensor a, Tensor b, int num_cores")


@check
def one_implementation_name_holds_several_kernels():
    # As a library's adapter registers liger::geglu, liger::rms_norm and liger::swiglu.
    kprop.implementation("swiglu", "py_library", lambda a, b: torch.nn.functional.silu(a) * b,
                         dtypes=[torch.float32])
    kprop.implementation("rms_norm", "py_library", lambda x, w, offset, casting: torch.nn.functional.rms_norm(
        x, x.shape[-1:], None if w is None else w + offset, 1e-6)
        if hasattr(torch.nn.functional, "rms_norm") else _rms_norm(x, w, offset), dtypes=[torch.float32])
    for kernel in ("swiglu", "rms_norm"):
        # (ATen's silu rounds by one ulp otherwise on a strided row: layout is not asked)
        r = kprop.check(kernel, impl=f"py_library::{kernel}", cases=100,
                        properties=["vs_reference", "gradient"])
        assert r.passed, (kernel, r.json)


def _rms_norm(x, w, offset):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    return y if w is None else y * (w + offset)


failed = 0
for f in checks:
    try:
        f()
        print(f"ok    {f.__name__}")
    except Exception as e:  # noqa: BLE001  (every check runs; the summary counts them)
        failed += 1
        print(f"FAIL  {f.__name__}: {type(e).__name__}: {e}")
print(f"{len(checks) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
