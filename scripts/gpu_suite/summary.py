"""summary.json and summary.md, built from the results folder alone (runs.jsonl and each
run's own output files), so that `scripts/gpu.py summary` can build them again.
"""
from __future__ import annotations

import json
import os

from .matrix import PARTS
from .outputs import json_lines, json_of_output, last_line, read_json, tail


def check_result(doc):
    """The numbers of one `kprop check --json` document."""
    tally = doc.get("tally", {})
    out = {k: tally.get(k) for k in ("cases", "passed", "failed", "known", "rejected", "skipped")}
    out["seconds"] = round(tally.get("seconds", 0.0), 2)
    if doc.get("interrupted"):
        out["interrupted"] = doc["interrupted"]
    if doc.get("mostly_refused"):
        out["mostly_refused"] = doc["mostly_refused"]
    failure = doc.get("failure")
    if failure:
        out["failure"] = {"identity": failure.get("identity"),
                          "case_number": failure.get("case_number"),
                          "shrink_steps": failure.get("shrink_steps"),
                          "kept": (doc.get("corpus") or {}).get("path")}
        out["also"] = [a.get("identity") for a in doc.get("also", [])]
    if doc.get("known_sightings"):
        out["known_sightings"] = doc["known_sightings"]
    if failure:
        out["verdict"] = "FAIL"
    elif doc.get("mostly_refused"):
        out["verdict"] = "refused"
    elif doc.get("interrupted"):
        out["verdict"] = "no new counterexample (box)"
    else:
        out["verdict"] = "PASS"
    return out


def report_result(doc):
    return {"impl": doc.get("impl"), "passed": doc.get("passed"),
            "first_deviation": doc.get("first_deviation"),
            "verdicts": {t.get("tensor"): t.get("verdict") for t in doc.get("tensors", [])},
            "seconds": round(doc.get("total_seconds", 0.0), 1)}


def together(records):
    """Several processes' measured runs, added up over the span they shared."""
    measured = [r for r in records if "measured_from" in r]
    if not measured:
        return None
    first = min(r["measured_from"] for r in measured)
    last = max(r["measured_to"] for r in measured)
    cases = sum(r["cases"] for r in measured)
    span = last - first
    return {"cases": cases, "span": round(span, 2),
            "rate": round(cases / span) if span > 0 else None,
            "each": [r["rate"] for r in measured]}


def together_line(results, names, group):
    records = [rec for n in names for rec in json_lines(os.path.join(results, n + ".jsonl"))]
    what = f"{group['label']}: {group['target']}, {group['size']}, {group['procs']} processes"
    t = together(records)
    if t is None:
        return f"{what}: no measured run"
    return (f"{what}: {t['rate']} cases/s together ({t['cases']} cases in {t['span']:.2f} s), "
            f"each {', '.join(str(r) for r in t['each'])}")


# A run's kind -> how its output is read, what is kept of it, and why none when unreadable.
RESULT_READERS = {
    "check": (json_of_output, check_result, "no JSON result"),
    "report": (read_json, report_result, "no JSON report"),
}


def summarize(results):
    """summary.json's content, from runs.jsonl and each run's own output files."""
    invocations, runs, notes, ends = [], {}, [], []
    for rec in json_lines(os.path.join(results, "runs.jsonl")):
        kind = rec.get("record")
        if kind == "invocation":
            invocations.append(rec)
        elif kind == "run":
            runs.pop(rec["name"], None)  # a later run of the same name replaces it, in order
            runs[rec["name"]] = rec
        elif kind == "note":
            notes.append(rec["text"])
        elif kind == "end":
            ends.append(rec)
    problems = []
    for end in ends:
        if end.get("error"):
            problems.append(f"the driver ended with exit {end.get('exit')}: "
                            f"{end['error'].splitlines()[0]}")
    out_runs, groups = [], {}
    for name, rec in runs.items():
        run = {k: rec.get(k) for k in ("name", "part", "kind", "command", "box", "exit",
                                       "seconds", "timed_out", "killed", "log", "output",
                                       "spec", "skipped")}
        run.update({k: v for k, v in (rec.get("meta") or {}).items() if k != "group"})
        output = os.path.join(results, rec["output"]) if rec.get("output") else None
        why_none = None
        if rec.get("skipped"):
            why_none = f"skipped: {rec['skipped']}"
        elif rec["kind"] in RESULT_READERS:
            read, judge, missing = RESULT_READERS[rec["kind"]]
            doc = read(output)
            if doc is None:
                why_none = missing
            else:
                run["result"] = judge(doc)
        elif rec["kind"] == "steady":
            records = json_lines(output)
            run["result"] = {"runs": records}
            if not any("measured_from" in r for r in records):
                why_none = "no measured run"
        elif rec["kind"] == "launch":
            lines = [line for line in tail(os.path.join(results, rec["log"]), 200).splitlines()
                     if "fwd+bwd/s" in line or " torch " in line or "Error" in line]
            run["result"] = {"lines": lines}
            if rec.get("exit") != 0:
                why_none = f"exit {rec.get('exit')}"
        elif rec["kind"] == "command":
            run["last_line"] = last_line(os.path.join(results, rec["log"]))
            if rec.get("exit") != 0:
                why_none = "failed"
        if why_none:
            run["problem"] = why_none
            run["log_tail"] = tail(os.path.join(results, rec["log"]), 5)
            problems.append(f"{name}: {why_none} (exit {rec.get('exit')}"
                            f"{', killed after its box' if rec.get('killed') else ''}; {rec['log']})")
        out_runs.append(run)
    where = {part: i for i, part in enumerate(PARTS)}
    out_runs.sort(key=lambda r: (where.get(r["part"], len(PARTS)), runs[r["name"]].get("order", 0)))
    for run in out_runs:
        group = (runs[run["name"]].get("meta") or {}).get("group")
        if group:
            key = (group["label"], group["target"], group["size"], group["procs"])
            groups.setdefault(key, []).extend((run.get("result") or {}).get("runs", []))
    scale = []
    for (label, target, size, procs), records in groups.items():
        entry = {"label": label, "target": target, "size": size, "procs": procs}
        entry.update(together(records) or {"problem": "no measured run"})
        scale.append(entry)
    return {"schema": "kprop-gpu-summary/1", "results": results, "invocations": invocations,
            "notes": notes, "exit": ends[-1].get("exit") if ends else None,
            "problems": problems, "runs": out_runs, "scale": scale}


def cell(x):
    return "-" if x is None or x == "" else str(x).replace("|", "\\|")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def exit_cell(run):
    code = cell(run.get("exit"))
    if run.get("killed"):
        return code + " (killed)"
    return code + " (box)" if run.get("timed_out") else code


def markdown(summary):
    out = ["# GPU suite: " + os.path.basename(summary["results"].rstrip("/")), ""]
    for inv in summary["invocations"]:
        st = inv.get("settings", {})
        out.append(f"- {inv.get('started')}: `scripts/gpu.py {' '.join(inv.get('parts', []))}` on "
                   f"{inv.get('machine') or 'no GPU named'}, torch {inv.get('torch')}; kernels "
                   f"{' '.join(st.get('kernels', []))}, {st.get('cases')} cases per suite run, "
                   f"box {st.get('run_seconds', 0):g} s")
    if summary["exit"] is not None:
        out.append(f"- exit {summary['exit']}")
    out.append("")
    if summary["problems"]:
        out += ["## Problems", ""] + [f"- {p}" for p in summary["problems"]] + [""]
    runs = summary["runs"]
    by_part = lambda *parts: [r for r in runs if r["part"] in parts]
    if by_part("build"):
        out += ["## Build", ""]
        out += table(["step", "exit", "seconds", "last line of its log"],
                     [[r["name"], exit_cell(r), r.get("seconds"), r.get("last_line")]
                      for r in by_part("build")])
        out.append("")
    if by_part("suite"):
        out += ["## Suite: every property against each upstream kernel", ""]
        rows = []
        for r in by_part("suite"):
            res = r.get("result") or {}
            what = res.get("verdict") or r.get("problem")
            if res.get("failure"):
                what = f"FAIL `{res['failure']['identity']}` (case {res['failure']['case_number']})"
                if res.get("also"):
                    what += f", and {len(res['also'])} more"
            elif res.get("mostly_refused"):
                what = f"refused: {res['mostly_refused'].get('reason')}"
            rows.append([r["name"], r.get("impl"), r.get("property"), exit_cell(r), r.get("seconds"),
                         res.get("cases"), res.get("passed"), res.get("failed"), res.get("known"),
                         res.get("rejected"), res.get("skipped"), what])
        out += table(["run", "impl", "property", "exit", "s", "cases", "passed", "failed",
                      "known", "rejected", "skipped", "result"], rows)
        out.append("")
    if by_part("speed"):
        out += ["## Speed: cases/s of the measured run after a warm-up (bench/gpu/steady.py)", ""]
        rows = []
        for r in by_part("speed"):
            records = (r.get("result") or {}).get("runs", [])
            if not records:
                rows.append([r["name"], "-", "-", "-", "-", "-", r.get("problem")])
            for rec in records:
                rows.append([r["name"], rec.get("label"), rec.get("cases"), rec.get("seconds"),
                             rec.get("rate"), rec.get("warm_seconds"),
                             rec.get("error") or ("stopped at a new failure" if rec.get("stopped")
                                                  else f"exit {rec.get('exit')}")])
        out += table(["run", "label", "cases", "s", "cases/s", "warm-up s", ""], rows)
        out.append("")
    if summary["scale"]:
        out += ["## Several processes on the one GPU (measured together)", ""]
        out += table(["label", "kernel", "size", "processes", "cases/s together", "cases",
                      "span s", "each"],
                     [[g["label"], g["target"], g["size"], g["procs"], g.get("rate") or g.get("problem"),
                       g.get("cases"), g.get("span"), ", ".join(str(x) for x in g.get("each", []))]
                      for g in summary["scale"]])
        out.append("")
    if by_part("launch"):
        out += ["## Where a small case's time goes (bench/gpu/launch.py)", "", "```"]
        for r in by_part("launch"):
            out += (r.get("result") or {}).get("lines", []) or [r.get("problem") or "-"]
        out += ["```", ""]
    if by_part("precision"):
        out += ["## The GEGLU MLP at the seed's shape (kprop report precision)", ""]
        rows = []
        for r in by_part("precision"):
            res = r.get("result") or {}
            verdicts = {}
            for v in (res.get("verdicts") or {}).values():
                verdicts[v] = verdicts.get(v, 0) + 1
            rows.append([r["name"], r.get("impl"), exit_cell(r), res.get("passed", r.get("problem")),
                         res.get("first_deviation") if res else None,
                         ", ".join(f"{n} {v}" for v, n in verdicts.items()), res.get("seconds")])
        out += table(["run", "impl", "exit", "passed", "first deviation", "tensors", "s"], rows)
        out.append("")
    if summary["notes"]:
        out += ["## Notes", ""] + [f"- {n}" for n in summary["notes"]] + [""]
    out += ["Each run's command, log and output: summary.json (`runs`), runs.jsonl.", ""]
    return "\n".join(out)


def write_summary(results):
    summary = summarize(results)
    for name, text in (("summary.json", json.dumps(summary, indent=1) + "\n"),
                       ("summary.md", markdown(summary))):
        partial = os.path.join(results, name + ".partial")
        with open(partial, "w") as f:
            f.write(text)
        os.replace(partial, os.path.join(results, name))
    return summary
