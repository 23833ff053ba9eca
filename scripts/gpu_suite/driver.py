"""Running the plans: each run one process in its time box (SIGINT, then SIGKILL), a step's
runs at once, the build first (a failure ends it), the Dao extension's compile beside it,
MPS for its part; runs.jsonl and the summary rewritten after every run.
"""
from __future__ import annotations

import datetime
import glob
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

from .outputs import last_line, tail
from .plans import PLANS, build_runs, environment, extension_run, numbered, scale_runs
from .settings import PREFIX, ROOT
from .summary import summarize, together_line, write_summary


class BuildFailed(Exception):
    pass


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Driver:
    def __init__(self, s):
        self.s = s
        self.env = environment(s)
        self.lock = threading.Lock()
        self.extension = None      # the thread that waits for the Dao extension's compile
        self.extension_proc = None # its process (its own session: ended with its children)
        self.extension_ok = None   # its outcome, once known
        self.noted_extension = False

    def note(self, text):
        with self.lock:
            print(text, flush=True)

    def record(self, fields):
        with self.lock:
            with open(os.path.join(self.s.results, "runs.jsonl"), "a") as out:
                out.write(json.dumps(fields) + "\n")
            write_summary(self.s.results)

    def probe(self, code):
        """What the interpreter prints for `code`, or None (with why on stderr)."""
        try:
            p = subprocess.run([self.s.python, "-c", code], capture_output=True, text=True,
                               timeout=300, env=self.env, cwd=ROOT)
        except (OSError, subprocess.TimeoutExpired) as e:
            print(f"gpu.py: {self.s.python} -c {code!r}: {e}", file=sys.stderr)
            return None
        if p.returncode != 0:
            tail = (p.stderr.strip().splitlines() or [""])[-1]
            print(f"gpu.py: {self.s.python} -c {code!r}: exit {p.returncode}: {tail}", file=sys.stderr)
            return None
        return p.stdout.strip()

    # One process, in its time box: SIGINT at the end (kprop prints what it has), SIGKILL
    # kill_after seconds later.
    def execute(self, r, env=None, session=False):
        s = self.s
        fields = {"record": "run", "name": r.name, "part": r.part, "kind": r.kind,
                  "command": r.argv, "box": r.box, "log": r.name + ".log", "meta": r.meta,
                  "order": r.order}
        if r.needs_extension and not self.wait_for_extension():
            fields.update(skipped="the Dao extension did not compile (dao-build.log)",
                          exit=None, seconds=0)
            self.record(fields)
            self.note(f"-- {r.name}: skipped: the Dao extension did not compile")
            return fields
        log = os.path.join(s.results, r.name + ".log")
        outputs = {"check": ".json", "report": ".json", "steady": ".jsonl"}
        if r.kind in outputs:
            fields["output"] = r.name + outputs[r.kind]
            try:
                os.remove(os.path.join(s.results, fields["output"]))
            except FileNotFoundError:
                pass
        if r.spec is not None:
            with self.lock:
                with open(r.spec_file, "w") as f:
                    f.write("".join(line + "\n" for line in r.spec))
            fields["spec"] = os.path.basename(r.spec_file)
        start = time.time()
        timed_out = killed = False
        with open(log, "w") as err:
            out = open(os.path.join(s.results, fields["output"]), "w") if r.kind == "check" else err
            try:
                p = subprocess.Popen(r.argv, cwd=ROOT, env=env or self.env, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=err, start_new_session=session)
                if session:
                    self.extension_proc = p
            except OSError as e:
                err.write(f"gpu.py: cannot start {r.argv[0]}: {e}\n")
                p = None
            finally:
                if out is not err:
                    out.close()
            if p is None:
                code = None
            else:
                try:
                    code = p.wait(timeout=r.box)
                except subprocess.TimeoutExpired:
                    timed_out = True
                    p.send_signal(signal.SIGINT)
                    try:
                        code = p.wait(timeout=s.kill_after)
                    except subprocess.TimeoutExpired:
                        killed = True
                        p.kill()
                        code = p.wait()
        seconds = time.time() - start
        fields.update(exit=code, seconds=round(seconds, 1), timed_out=timed_out, killed=killed,
                      finished=now())
        self.record(fields)
        boxed = " (killed after its box)" if killed else " (its box ended it)" if timed_out else ""
        self.note(f"-- {r.name}: exit {code} in {seconds:.1f} s{boxed}: {shlex.join(r.argv)}")
        return fields

    def run_step(self, step):
        """The step's runs at once, each in its own thread; returns when all have ended."""
        if len(step) == 1:
            return [self.execute(step[0])]
        results = [None] * len(step)

        def one(i):
            results[i] = self.execute(step[i])
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(step))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results

    # --- the Dao extension compiles on its own (nvcc, ~5 min), beside kprop's build ---------
    def start_extension(self):
        r = extension_run(self.s)
        env = dict(self.env, PYTHONPATH=os.path.join(ROOT, "examples", "upstream"))
        self.extension_started = time.time()
        thread = threading.Thread(target=self._extension, args=(r, env))
        thread.start()
        self.extension = thread

    def _extension(self, r, env):
        fields = self.execute(r, env=env, session=True)
        with open(os.path.join(self.s.results, r.name + ".log"), "a") as log:
            log.write(f"exit {fields['exit']}\n")
        self.extension_ok = fields["exit"] == 0

    def wait_for_extension(self):
        if self.extension is None:
            return True  # not compiled by this call: the adapter compiles or finds it
        self.extension.join()
        with self.lock:
            if not self.noted_extension:
                self.noted_extension = True
                print(f"dao extension: exit {0 if self.extension_ok else 'non-zero'} after "
                      f"{time.time() - self.extension_started:.1f} s", flush=True)
        return self.extension_ok

    def stop_extension(self):
        """Ends the Dao extension's compile (nvcc and all) when the driver stops early."""
        p = self.extension_proc
        if p is not None and p.poll() is None:
            self.note("gpu.py: stopping the Dao extension's compile")
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    # --- kprop against this torch ----------------------------------------------------------
    def build(self):
        s = self.s
        if "dao" in s.kernels:
            self.start_extension()
        debs = sorted(glob.glob(os.path.join(s.debs, "*.deb")))
        if debs:
            os.makedirs(PREFIX, exist_ok=True)
            for deb in debs:
                if subprocess.run(["dpkg", "-x", deb, PREFIX]).returncode != 0:
                    raise BuildFailed(f"dpkg -x {deb} {PREFIX} failed")
        torch_prefix = self.probe("import torch; print(torch.utils.cmake_prefix_path)")
        if not torch_prefix:
            raise BuildFailed(f"{s.python} cannot import torch (PYTHON or --python: the "
                              "interpreter whose torch kprop builds against)")
        pybind_dir = self.probe("import pybind11; print(pybind11.get_cmake_dir())")
        for [r] in numbered([[r] for r in build_runs(s, torch_prefix, pybind_dir)]):
            fields = self.execute(r)
            if fields["exit"] != 0:
                log = os.path.join(s.results, fields["log"])
                raise BuildFailed(f"{r.name} failed (exit {fields['exit']}): "
                                  f"{shlex.join(r.argv)}\nthe end of {log}:\n" + tail(log, 15))
        self.note(f"kprop build: done; device test: {last_line(os.path.join(s.results, 'unit-device.log'))}")

    def check_entry(self):
        entry = os.path.join(self.s.build_dir, "python", "kprop")
        if not glob.glob(os.path.join(entry, "_kprop*.so")):
            raise BuildFailed(f"no kprop Python entry in {entry}: run `scripts/gpu.py build` "
                              "first (or --build-dir)")

    def mps(self):
        control = shutil.which("nvidia-cuda-mps-control", path=self.env["PATH"])
        if not control or subprocess.run([control, "-d"], env=self.env).returncode != 0:
            self.note("MPS: nvidia-cuda-mps-control missing or would not start")
            self.record({"record": "note", "part": "mps",
                         "text": "MPS: nvidia-cuda-mps-control missing or would not start"})
            return
        self.note("MPS daemon started")
        try:
            for step in numbered(scale_runs(self.s, "scale-mps")):
                self.scale_step(step)
        finally:
            subprocess.run([control], input="quit\n", text=True, env=self.env)

    def scale_step(self, step):
        group = step[0].meta["group"]
        shutil.rmtree(group["barrier"], ignore_errors=True)
        self.run_step(step)
        self.note("   " + together_line(self.s.results, [r.name for r in step], group))

    def main(self):
        s = self.s
        os.makedirs(os.path.join(s.results, "corpus"), exist_ok=True)
        for folder in (self.env["DAO_BUILD"], self.env["TRITON_CACHE_DIR"]):
            os.makedirs(folder, exist_ok=True)
        copy_missing(os.path.join(ROOT, "corpus", "upstream"), os.path.join(s.results, "corpus"))
        machine = ""
        if shutil.which("nvidia-smi"):
            p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
            machine = (p.stdout.splitlines() or [""])[0]
        versions = self.probe('import torch, triton; print(torch.__version__, "triton", triton.__version__)')
        self.note(f"== gpu.py {now()} on {machine or 'no nvidia-smi'}; torch: {versions}")
        settings = {k: v for k, v in vars(s).items() if k not in ("dry_run",)}
        self.record({"record": "invocation", "started": now(), "parts": s.parts, "machine": machine,
                     "torch": versions, "settings": settings})
        code, error = 0, None
        try:
            if "build" in s.parts:
                self.build()
            if any(p in s.parts for p in PLANS):
                self.check_entry()
            for part in s.parts:
                if part == "mps":
                    self.mps()
                elif part in PLANS:
                    for step in numbered(PLANS[part](s)):
                        (self.scale_step if part == "scale" else self.run_step)(step)
        except BuildFailed as e:
            code, error = 1, str(e)
            print(f"gpu.py: build failed: {e}", file=sys.stderr, flush=True)
            self.stop_extension()
        except KeyboardInterrupt:
            code, error = 130, "interrupted"
            self.stop_extension()
        if self.extension is not None and code == 0:
            self.wait_for_extension()
        problems = summarize(s.results)["problems"]
        if code == 0 and problems:
            code = 1
            print(f"gpu.py: {len(problems)} problems (summary.md lists them)", file=sys.stderr)
        self.record({"record": "end", "finished": now(), "exit": code, "error": error})
        self.note(f"== done {now()}: {os.path.join(s.results, 'summary.md')}")
        return code


def copy_missing(source, target):
    """cp -rn source/. target/: what target lacks."""
    for folder, _, files in os.walk(source):
        into = os.path.join(target, os.path.relpath(folder, source))
        os.makedirs(into, exist_ok=True)
        for f in files:
            if not os.path.exists(os.path.join(into, f)):
                shutil.copy2(os.path.join(folder, f), os.path.join(into, f))
