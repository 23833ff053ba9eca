"""scripts/gpu.py, the GPU suite's driver, on the CPU (no GPU, no torch, no upstream):

1. its matrix expands to the expected commands (--dry-run of a part, some kernels, the
   environment knobs);
2. summary.md/summary.json are built from a results folder of canned outputs (kprop's own
   --json documents when a kprop binary is given);
3. a failing build (a fake cmake) ends it with a non-zero exit and a message, and nothing
   after the build runs;
4. a suite run through a fake interpreter: one process per (kernel, property), each boxed
   (SIGINT, then SIGKILL), the corpus a copy of corpus/upstream, the summary from their JSON.

    python3 tests/bench/test_gpu_driver.py [KPROP]
"""
import json
import os
import shlex
import stat
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DRIVER = os.path.join(ROOT, "scripts", "gpu.py")
KPROP = sys.argv[1] if len(sys.argv) > 1 else None
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def driver(*args, env=None):
    base = {k: v for k, v in os.environ.items()
            if k not in ("RESULTS", "KERNELS", "CASES", "RUN_SECONDS", "DAO_SECONDS", "PYTHON",
                         "SPEED_SIZES", "SCALE_SIZES", "SCALE_PROCS", "BUILD_DIR", "DEBS")}
    return subprocess.run([sys.executable, DRIVER, *args], env=dict(base, **(env or {})),
                          capture_output=True, text=True, timeout=120)


def runs_of(text):
    """{run name: command} of a dry run's output."""
    out = {}
    for line in text.splitlines():
        if line.startswith("["):
            name, rest = line[1:].split("] ", 1)
            out[name] = rest
    return out


def dry_runs(tmp):
    results = os.path.join(tmp, "dry")
    py = "/venv/bin/python3"
    common = ["--dry-run", "--python", py, "--results", results]
    corpus = os.path.join(results, "corpus")

    # The suite on Liger: one run per (implementation, property), nothing else.
    p = driver(*common, "suite", "--kernels", "liger", "--cases", "7", "--run-seconds", "30")
    check(p.returncode == 0, f"dry run suite: exit {p.returncode}: {p.stderr}")
    want = {}
    for impl, prefix in (("liger::geglu", "liger"), ("liger_ascend::geglu", "liger_ascend")):
        for prop in ("gradient", "vs_reference", "policy", "invariance"):
            want[f"{prefix}-{prop}"] = "box 30 s: " + shlex.join(
                [py, "-m", "kprop", "check", "geglu", "--import", "kprop_liger", "--impl", impl,
                 "--device", "cuda", "--property", prop, "--cases", "7", "--corpus", corpus,
                 "--shrink-seconds", "240", "--json"])
    got = runs_of(p.stdout)
    check(got == want, "dry run suite --kernels liger: the runs differ:\n" +
          "\n".join(f"  got  {k}: {got.get(k)}\n  want {k}: {want.get(k)}"
                    for k in sorted(set(got) | set(want)) if got.get(k) != want.get(k)))
    check(not os.path.exists(results), "a dry run wrote its results folder")

    # Dao: its own box (DAO_SECONDS), its refusal, after the extension; fla's extra run.
    p = driver(*common, "suite", env={"KERNELS": "fla dao", "DAO_SECONDS": "45", "CASES": "9"})
    got = runs_of(p.stdout)
    check(sorted(got) == sorted([f"{k}-{prop}" for k in ("fla", "dao") for prop in
                                 ("gradient", "vs_reference", "chunked", "packed", "cores")] +
                                ["fla-final-state-grad"]), f"suite fla dao: runs {sorted(got)}")
    dao = got.get("dao-packed", "")
    check(dao.startswith("box 45 s, after the Dao extension's compile: ") and
          "--refusal 'dao adapter: unsupported' --json" in dao and "--cases 9" in dao,
          f"dao-packed: {dao}")
    check(got.get("fla-final-state-grad", "").endswith(
        "--property vs_reference --cases 9 --corpus " + corpus + " --shrink-seconds 240 "
        "--set final_state_grad=true --dtype float32 --json"), f"fla-final-state-grad: {got}")

    # Speed on fla: one steady.py process; its spec has no gradient and the pins.
    p = driver(*common, "speed", "--kernels", "fla")
    got = runs_of(p.stdout)
    spec = os.path.join(results, "speed-fla.spec")
    check(got == {"speed-fla": "box 480 s: " + shlex.join(
        [py, os.path.join(ROOT, "bench", "gpu", "steady.py"), "--json",
         os.path.join(results, "speed-fla.jsonl"), spec])}, f"speed fla: {got}")
    lines = [line.split(": ", 1)[1] for line in p.stdout.splitlines()
             if line.startswith("    spec speed-fla.spec: ")]
    pins = ("--set initial_state=true --set final_state_grad=false --set layout=packed "
            "--dtype float32")
    head = ("causal_conv1d --import kprop_fla --impl fla::causal_conv1d --device cuda --property "
            "{p} --corpus " + corpus)
    small = "--max-length 16 --max-segments 2 --set D=64 --set W=4 --set activation=silu --set bias=true"
    large = "--max-length 256 --max-segments 8 --set D=512 --set W=4 --set activation=silu --set bias=true"
    want = ([f"small-{p} 2000 {head.format(p=p)} --no-isolation {small} {pins}"
             for p in ("vs_reference", "chunked", "packed", "cores")] +
            [f"large-{p} 200 {head.format(p=p)} --no-isolation {large} {pins}"
             for p in ("vs_reference", "chunked", "packed", "cores")] +
            [f"small-vs_reference-isolated 500 {head.format(p='vs_reference')} {small} {pins}"])
    check(lines == want, "speed fla: the spec differs:\n" + "\n".join(
        f"  got  {g}\n  want {w}" for g, w in zip(lines + [""] * 9, want + [""] * 9) if g != w))

    # Speed on Liger: gradient runs an eighth of the cases (hundreds of calls per case).
    p = driver(*common, "speed", "--kernels", "liger", env={"CASES_SMALL": "800", "CASES_LARGE": "80"})
    labels = [line.split(": ", 1)[1].split(" ")[:2] for line in p.stdout.splitlines()
              if line.startswith("    spec speed-liger.spec: ")]
    check(labels == [["small-gradient", "100"], ["small-vs_reference", "800"], ["small-policy", "800"],
                     ["small-invariance", "800"], ["large-gradient", "10"], ["large-vs_reference", "80"],
                     ["large-policy", "80"], ["large-invariance", "80"],
                     ["small-vs_reference-isolated", "200"]], f"speed liger: labels and cases {labels}")

    # Scale: one step per process count, each process its own seed, all on one barrier.
    p = driver(*common, "scale", "--kernels", "liger",
               env={"SCALE_SIZES": "small", "SCALE_PROCS": "1 2", "CASES_SMALL": "100"})
    got = runs_of(p.stdout)
    check(sorted(got) == ["scale-liger-small-1-1", "scale-liger-small-2-1", "scale-liger-small-2-2"],
          f"scale liger: runs {sorted(got)}")
    barrier = os.path.join(results, ".together-scale-liger-small-2")
    check(got.get("scale-liger-small-2-2", "").endswith(shlex.join(
        ["--seed", "2", "--together", barrier + ":2", "--json",
         os.path.join(results, "scale-liger-small-2-2.jsonl"),
         os.path.join(results, "scale-liger-small.spec")])), f"scale-liger-small-2-2: {got}")
    check("    spec scale-liger-small.spec: small-vs_reference 100 geglu " in p.stdout,
          "scale liger: its spec line")

    # Unknown parts and kernels are refused.
    check(driver(*common, "fla").returncode == 2, "an unknown part was taken")
    check(driver(*common, "--kernels", "flash").returncode == 2, "an unknown kernel was taken")


def kprop_json(*args):
    """A real `kprop check ... --json` document (canned when no kprop binary is given)."""
    if KPROP:
        p = subprocess.run([KPROP, *args, "--json", "--no-corpus", "--shrink-seconds", "5"],
                           capture_output=True, text=True, timeout=120)
        return json.loads(p.stdout)
    failing = "--impl" in args
    tally = {"cases": 1 if failing else 5, "failed": int(failing), "known": 0,
             "passed": 0 if failing else 5, "rejected": 0, "seconds": 0.02, "skipped": 0}
    doc = {"known_sightings": {}, "not_taken": {}, "rejections": {}, "tally": tally}
    if failing:
        doc["failure"] = {"case_number": 1, "identity": "causal_conv1d/tiled@original/dh0 [x]",
                          "shrink_steps": 5}
        doc["also"] = [{"identity": "causal_conv1d/tiled@original/out-of-bounds load"}]
    return doc


def summary_from_canned(tmp):
    results = os.path.join(tmp, "canned")
    os.makedirs(results)
    records = [{"record": "invocation", "started": "2026-12-04T00:00:00Z", "parts": ["suite", "speed"],
                "machine": "GPU 0: NVIDIA H200", "torch": "2.11.0 triton 3.6.0",
                "settings": {"kernels": ["fla"], "cases": 50, "run_seconds": 60}}]

    def run(name, part, kind, output=None, meta=None, **fields):
        rec = {"record": "run", "name": name, "part": part, "kind": kind, "command": ["x"],
               "box": 60, "exit": 0, "seconds": 1.0, "timed_out": False, "killed": False,
               "log": name + ".log", "meta": meta or {}}
        if output:
            rec["output"] = output
        rec.update(fields)
        records.append(rec)
        with open(os.path.join(results, name + ".log"), "w") as f:
            f.write(f"the log of {name}\n")

    conv = {"target": "fla", "kernel": "causal_conv1d", "impl": "fla::causal_conv1d"}
    failing = kprop_json("check", "causal_conv1d", "--impl", "tiled@original", "--property",
                         "vs_reference", "--cases", "50")
    with open(os.path.join(results, "fla-vs_reference.json"), "w") as f:  # after an adapter's line
        f.write("adapter: autotuning over 1 config\n" + json.dumps(failing, indent=2) + "\n")
    run("fla-vs_reference", "suite", "check", "fla-vs_reference.json", dict(conv, property="vs_reference"),
        exit=1)
    passing = kprop_json("check", "causal_conv1d", "--property", "cores", "--cases", "5")
    passing["interrupted"] = "SIGINT"
    with open(os.path.join(results, "fla-cores.json"), "w") as f:
        json.dump(passing, f)
    run("fla-cores", "suite", "check", "fla-cores.json", dict(conv, property="cores"), exit=130,
        timed_out=True)
    run("fla-packed", "suite", "check", "fla-packed.json", dict(conv, property="packed"), exit=-9,
        timed_out=True, killed=True)  # no JSON: killed after its box
    with open(os.path.join(results, "speed-fla.jsonl"), "w") as f:
        for label, rate in (("small-vs_reference", 321), ("large-vs_reference", 39)):
            f.write(json.dumps({"label": label, "cases": 200, "seconds": 0.6, "rate": rate,
                                "stopped": False, "warm_seconds": 36.5, "warm_exit": 0, "exit": 0,
                                "measured_from": 100.0, "measured_to": 100.6}) + "\n")
    run("speed-fla", "speed", "steady", "speed-fla.jsonl", conv)
    # Two processes together: 150 + 50 cases over 10.0 .. 12.0 s = 100 cases/s.
    group = {"label": "scale", "target": "fla", "size": "small", "procs": 2, "barrier": "b"}
    for i, (cases, start, end, rate) in enumerate(((150, 10.0, 12.0, 75), (50, 10.5, 11.5, 50)), 1):
        name = f"scale-fla-small-2-{i}"
        with open(os.path.join(results, name + ".jsonl"), "w") as f:
            f.write(json.dumps({"label": "small-vs_reference", "cases": cases, "seconds": end - start,
                                "rate": rate, "measured_from": start, "measured_to": end}) + "\n")
        run(name, "scale", "steady", name + ".jsonl", dict(conv, group=group))
    report = {"impl": "liger::geglu", "passed": True, "first_deviation": "c", "total_seconds": 12.5,
              "tensors": [{"tensor": "c", "verdict": "rounding"}, {"tensor": "y", "verdict": "rounding"},
                          {"tensor": "dx", "verdict": "bit_exact"}]}
    with open(os.path.join(results, "precision-seed-liger.json"), "w") as f:
        json.dump(report, f)
    run("precision-seed-liger", "precision", "report", "precision-seed-liger.json",
        {"impl": "liger::geglu"})
    records.append({"record": "end", "finished": "2026-12-04T00:10:00Z", "exit": 0, "error": None})
    with open(os.path.join(results, "runs.jsonl"), "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in records))

    p = driver("summary", "--results", results)
    check(p.returncode == 1, f"summary with a run that gave nothing: exit {p.returncode}: {p.stderr}")
    with open(os.path.join(results, "summary.json")) as f:
        summary = json.load(f)
    runs = {r["name"]: r for r in summary["runs"]}
    res = runs["fla-vs_reference"].get("result", {})
    check(res.get("verdict") == "FAIL" and res["failure"]["identity"] == failing["failure"]["identity"]
          and res["cases"] == failing["tally"]["cases"] and len(res["also"]) == len(failing["also"]),
          f"fla-vs_reference: {res}")
    res = runs["fla-cores"].get("result", {})
    check(res.get("verdict") == "no new counterexample (box)" and res.get("passed") == 5 and
          res.get("interrupted") == "SIGINT", f"fla-cores: {res}")
    check(runs["fla-packed"].get("problem") == "no JSON result" and "result" not in runs["fla-packed"],
          f"fla-packed: {runs['fla-packed']}")
    check(summary["problems"] == ["fla-packed: no JSON result (exit -9, killed after its box; "
                                  "fla-packed.log)"], f"problems: {summary['problems']}")
    check([r["rate"] for r in runs["speed-fla"]["result"]["runs"]] == [321, 39], "speed-fla's rates")
    check(summary["scale"] == [{"label": "scale", "target": "fla", "size": "small", "procs": 2,
                                "cases": 200, "span": 2.0, "rate": 100, "each": [75, 50]}],
          f"scale: {summary['scale']}")
    check(runs["precision-seed-liger"]["result"]["verdicts"] == {"c": "rounding", "y": "rounding",
                                                                "dx": "bit_exact"}, "precision verdicts")
    with open(os.path.join(results, "summary.md")) as f:
        md = f.read()
    rows = {line.split(" | ")[0][2:]: line for line in md.splitlines() if line.startswith("| ")}
    identity = failing["failure"]["identity"]
    check(rows.get("fla-vs_reference", "").endswith(
        f"| FAIL `{identity}` (case {failing['failure']['case_number']}), and "
        f"{len(failing['also'])} more |"), f"summary.md fla-vs_reference: {rows.get('fla-vs_reference')}")
    check(rows.get("fla-cores", "").startswith("| fla-cores | fla::causal_conv1d | cores | 130 (box) |"),
          f"summary.md fla-cores: {rows.get('fla-cores')}")
    check(rows.get("scale", "").startswith("| scale | fla | small | 2 | 100 | 200 | 2.0 | 75, 50 |"),
          f"summary.md scale: {rows.get('scale')}")
    check(rows.get("precision-seed-liger", "").endswith("| c | 2 rounding, 1 bit_exact | 12.5 |"),
          f"summary.md precision: {rows.get('precision-seed-liger')}")
    check("## Problems\n\n- fla-packed: no JSON result" in md, "summary.md: its problems")


def executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


# The interpreter the driver runs: answers its probes, and plays `python3 -m kprop check`.
FAKE_PYTHON = """#!{python}
import json, signal, sys, time
args = sys.argv[1:]
if args[:1] == ["-c"]:
    print("/fake/torch/share/cmake" if "cmake_prefix_path" in args[1] else "2.11.0 triton 3.6.0")
    sys.exit(0)
prop = args[args.index("--property") + 1]
tally = {{"cases": 3, "passed": 3, "failed": 0, "known": 0, "rejected": 0, "skipped": 0, "seconds": 0.1}}
doc = {{"tally": tally, "rejections": {{}}, "not_taken": {{}}, "known_sightings": {{}}}}
def done(code, **more):
    doc.update(more)
    print(json.dumps(doc, indent=2), flush=True)
    sys.exit(code)
if prop == "gradient":
    done(0)
if prop == "vs_reference":
    print("adapter: autotuning over 1 config", flush=True)
    tally.update(passed=2, failed=1)
    done(1, failure={{"identity": "geglu/liger::geglu/c", "case_number": 3, "shrink_steps": 2}}, also=[])
if prop == "policy":  # what kprop does: SIGINT ends the search, the summary so far
    signal.signal(signal.SIGINT, lambda *_: done(130, interrupted="SIGINT"))
else:  # invariance: deaf to SIGINT, killed after its box
    signal.signal(signal.SIGINT, signal.SIG_IGN)
print("searching", file=sys.stderr, flush=True)
while True:
    time.sleep(0.05)
"""

FAKE_CMAKE = """#!/bin/sh
echo "cmake $*"
case "$*" in
  *--build*) echo "ninja: build stopped: subcommand failed."; exit ${{FAKE_BUILD_EXIT:-0}} ;;
  *) echo "CMake Error at CMakeLists.txt:1 (project): fake"; exit ${{FAKE_CONFIGURE_EXIT:-0}} ;;
esac
"""


def fakes(tmp):
    bin_dir = os.path.join(tmp, "bin")
    os.makedirs(bin_dir)
    python = os.path.join(bin_dir, "python3")
    executable(python, FAKE_PYTHON.format(python=sys.executable))
    executable(os.path.join(bin_dir, "cmake"), FAKE_CMAKE.format())
    return bin_dir, python


def failing_build(tmp):
    bin_dir, python = fakes(os.path.join(tmp, "b"))
    for step, env in (("configure", {"FAKE_CONFIGURE_EXIT": "1"}), ("build", {"FAKE_BUILD_EXIT": "2"})):
        results = os.path.join(tmp, "b", "results-" + step)
        p = driver("build", "suite", "--kernels", "liger", "--python", python, "--results", results,
                   "--build-dir", os.path.join(tmp, "b", "build"), "--debs", os.path.join(tmp, "b", "none"),
                   "--run-seconds", "5",
                   env=dict(env, PATH=bin_dir + os.pathsep + os.environ.get("PATH", "")))
        check(p.returncode != 0, f"a failing {step} ended with exit {p.returncode}")
        wanted_exit = env.get("FAKE_CONFIGURE_EXIT") or env.get("FAKE_BUILD_EXIT")
        check(f"build failed: {step} failed (exit {wanted_exit})" in p.stderr and
              os.path.join(results, step + ".log") in p.stderr,
              f"a failing {step}: its message names it and its log: {p.stderr!r}")
        ran = sorted(f for f in os.listdir(results) if f.endswith(".log"))
        want = ["build.log", "configure.log"] if step == "build" else ["configure.log"]
        check(ran == want, f"after a failing {step}, more ran: {ran}")
        with open(os.path.join(results, "summary.md")) as f:
            check(f"- {step}: failed (exit {wanted_exit}; {step}.log)" in f.read(),
                  f"summary.md: the failing {step}")


def suite_through_fakes(tmp):
    bin_dir, python = fakes(os.path.join(tmp, "s"))
    build = os.path.join(tmp, "s", "build")
    os.makedirs(os.path.join(build, "python", "kprop"))
    open(os.path.join(build, "python", "kprop", "_kprop.so"), "w").close()
    results = os.path.join(tmp, "s", "results")
    started = time.time()
    p = driver("suite", "--kernels", "liger", "--python", python, "--results", results,
               "--build-dir", build, "--run-seconds", "2", "--kill-after", "1", "--cases", "3")
    check(p.returncode == 1, f"suite through fakes: exit {p.returncode} (1: a run gave nothing)\n{p.stderr}")
    with open(os.path.join(results, "summary.json")) as f:
        runs = {r["name"]: r for r in json.load(f)["runs"]}
    check(sorted(runs) == sorted(f"{t}-{prop}" for t in ("liger", "liger_ascend")
                                 for prop in ("gradient", "vs_reference", "policy", "invariance")),
          f"suite through fakes: runs {sorted(runs)}")
    for t in ("liger", "liger_ascend"):
        r = runs.get(f"{t}-gradient", {})
        check(r.get("exit") == 0 and r.get("result", {}).get("verdict") == "PASS" and
              not r.get("timed_out") and r.get("command", [])[-1] == "--json", f"{t}-gradient: {r}")
        r = runs.get(f"{t}-vs_reference", {})
        check(r.get("exit") == 1 and r.get("result", {}).get("failure", {}).get("identity") ==
              "geglu/liger::geglu/c", f"{t}-vs_reference: {r}")
        r = runs.get(f"{t}-policy", {})  # its box's SIGINT: kprop's summary so far
        check(r.get("timed_out") and not r.get("killed") and r.get("exit") == 130 and
              r.get("result", {}).get("interrupted") == "SIGINT", f"{t}-policy: {r}")
        r = runs.get(f"{t}-invariance", {})  # deaf to SIGINT: killed
        check(r.get("killed") and r.get("problem") == "no JSON result", f"{t}-invariance: {r}")
        with open(os.path.join(results, f"{t}-invariance.log")) as f:
            check("searching" in f.read(), f"{t}-invariance.log: its stderr")
    # All at once: eight processes in one box (3 s with its kill), not one after the other
    # (over 11 s).
    took = time.time() - started
    check(took < 9, f"suite through fakes: {took:.1f} s: one run after the other?")
    upstream = sum(len(files) for _, _, files in os.walk(os.path.join(ROOT, "corpus", "upstream")))
    copied = sum(len(files) for _, _, files in os.walk(os.path.join(results, "corpus")))
    check(upstream > 0 and copied == upstream, f"corpus: {copied} files copied of {upstream}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        dry_runs(tmp)
        summary_from_canned(tmp)
        failing_build(tmp)
        suite_through_fakes(tmp)
    if failures:
        print(f"{len(failures)} checks failed", file=sys.stderr)
        return 1
    print("scripts/gpu.py: matrix, summary, failing build, boxed runs: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
