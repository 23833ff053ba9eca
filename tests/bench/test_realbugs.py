"""bench/realbugs/run.py judges each bug's two sides as its docstring says: from each
side's kprop JSON, by the manifest's `expect` pattern. Runs without a GPU or upstream code:
the sides' results are written here, and `report` judges them."""
import json
import os
import subprocess
import sys
import tempfile

RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../bench/realbugs/run.py")


def side(identities, cases=10):
    """A kprop check --json result whose failures have these identities."""
    found = [{"identity": i, "case_number": 3, "seconds_to_find": 1.5, "minimal": {}} for i in identities]
    return {"failure": found[0] if found else None, "also": found[1:],
            "tally": {"cases": cases, "passed": cases - len(found[:1]), "rejected": 0, "seconds": 2.0}}


def bug(name, **extra):
    return dict({"name": name, "project": "p", "buggy": "aaaa", "fixed": "bbbb", "kernel": "k",
                 "impl": "p::k", "properties": ["vs_reference"], "expect": "^k/p::k/dx"}, **extra)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        manifest = os.path.join(tmp, "bugs.json")
        results = os.path.join(tmp, "results")
        os.makedirs(results)
        with open(manifest, "w") as f:
            json.dump({"schema": "kprop-realbugs/1",
                       "projects": {"p": {"folders": ["src"], "source_env": "P_SRC", "adapter": "m"}},
                       "bugs": [bug("caught"), bug("missed"), bug("alarm"), bug("stopped"), bug("absent")]}, f)
        sides = {"caught": (["k/p::k/dx [tail]"], []), "missed": ([], []),
                 "alarm": (["k/p::k/dx"], ["k/p::k/dx"]), "stopped": (["k/p::k/dx"], ["k/p::k/y {softcap}"])}
        for name, (buggy, fixed) in sides.items():
            for s, ids in (("buggy", buggy), ("fixed", fixed)):
                with open(os.path.join(results, f"{name}-{s}.json"), "w") as f:
                    json.dump(side(ids), f)
        # The standalone scripts' runs (kprop repro): one as it must be, one that fails twice.
        repro = {"caught": (1, 0), "alarm": (1, 1)}
        for name, (b, f) in repro.items():
            with open(os.path.join(results, f"{name}-repro.json"), "w") as out:
                json.dump({"written": True, "buggy": {"exit": b}, "fixed": {"exit": f}}, out)
        subprocess.run([sys.executable, RUN, "--manifest", manifest, "report", "--results", results,
                        "--checkouts", tmp], check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(results, "summary.json")) as f:
            verdicts = {b["name"]: b["verdict"] for b in json.load(f)["bugs"]}
        want = {"caught": "caught", "missed": "missed", "alarm": "false alarm",
                "stopped": "found; the fixed commit stopped on another defect", "absent": "not run"}
        assert verdicts == want, verdicts
        with open(os.path.join(results, "summary.md")) as f:
            text = f.read()
        assert text.startswith("# Real bugs: 1 of 5 caught\n"), text
        rows = {line.split(" ")[1]: line for line in text.splitlines() if line.startswith("| ")}
        assert rows["caught"].endswith("| fails at the buggy, passes at the fixed |"), rows["caught"]
        assert rows["alarm"].endswith("| exit 1 at the buggy, 1 at the fixed |"), rows["alarm"]
        assert rows["missed"].endswith("| - |"), rows["missed"]

        # A bad manifest is refused with exit 2, naming the entry and the field.
        with open(manifest, "w") as f:
            json.dump({"schema": "kprop-realbugs/1", "projects": {}, "bugs": [{"name": "x"}]}, f)
        r = subprocess.run([sys.executable, RUN, "--manifest", manifest, "report", "--results", results],
                           capture_output=True, text=True)
        assert r.returncode == 2 and "bugs[0]: missing field 'project'" in r.stderr, (r.returncode, r.stderr)

        # The committed manifest reads, and names case files that exist.
        r = subprocess.run([sys.executable, RUN, "report", "--results", results, "--only"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    print("ok: realbugs judges caught, missed, false alarm, an inconclusive fixed side and a side "
          "not run, and the standalone scripts' runs")


if __name__ == "__main__":
    main()
