"""kprop's pytest plugin (docs/pytest.md): kprop checks and kept case files as pytest tests.

- Every module-level ``kprop.pytest.Check`` (or list of them) in a collected test module,
  named as a test function is (``test_*``), is one test: kprop's search (``kprop.check``)
  with ``--kprop-cases N`` cases.
- Every kprop case file (JSON, ``"schema": "kprop-case/..."``) under a path named on the
  command line or under ``--kprop-corpus DIR`` is one test: ``kprop replay FILE``, which
  passes while every recorded verdict holds.

A failure prints the defect's identity, where its case was kept and the command that
replays it. Loaded by the package's ``pytest11`` entry point once kprop is installed, or
with ``-p kprop.pytest_plugin`` (or ``pytest_plugins = ["kprop.pytest_plugin"]`` in a
conftest.py) from a build (``PYTHONPATH=build/python``).
"""
import functools
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

from .pytest import Check

DEFAULT_CASES = 100
CASE_SCHEMA = "kprop-case/"


def pytest_addoption(parser):
    group = parser.getgroup("kprop", "kprop: kernel checks and case files (docs/pytest.md)")
    group.addoption("--kprop-cases", type=int, metavar="N",
                    help=f"cases per kprop check (default: the Check's cases, else "
                         f"{DEFAULT_CASES})")
    group.addoption("--kprop-seed", type=int, metavar="S",
                    help="the search's seed for every kprop check (default: the Check's, else 0)")
    group.addoption("--kprop-device", metavar="DEVICE",
                    help="where outside implementations run, for every check and replay "
                         "(cpu, cuda, cuda:N; default: the Check's, else cpu)")
    group.addoption("--kprop-corpus", action="append", default=[], metavar="DIR",
                    help="replay every kprop case file under DIR, one test each (repeatable)")
    group.addoption("--kprop-import", action="append", default=[], metavar="MODULE",
                    help="a module every replay imports (the ones a case file was found "
                         "with are imported anyway); repeatable")
    group.addoption("--kprop-isolate", action="store_true",
                    help="run outside implementations in worker processes: a crash fails "
                         "one test instead of ending pytest")


def pytest_configure(config):
    config.addinivalue_line("markers", "kprop: a kprop check or a replayed kprop case file")
    corpora = []
    for d in config.getoption("kprop_corpus"):
        path = Path(os.path.abspath(Path(config.invocation_params.dir, d)))
        if not path.is_dir():
            raise pytest.UsageError(f"--kprop-corpus {d}: no such folder")
        corpora.append(path)
    config._kprop_corpora = corpora
    # Collected as if named on the command line (pytest collects a file once). No args
    # under --help.
    if corpora and hasattr(config, "args"):
        config.args = list(config.args) + [str(p) for p in corpora]


# --- checks declared in test modules ------------------------------------------------------

def pytest_pycollect_makeitem(collector, name, obj):
    # Named as pytest's test functions are (python_functions: test_* by default).
    if not isinstance(obj, (Check, list, tuple)) or not collector.funcnamefilter(name):
        return None
    if isinstance(obj, Check):
        return CheckItem.from_parent(collector, name=name, check=obj)
    if isinstance(obj, (list, tuple)) and obj and all(isinstance(c, Check) for c in obj):
        return [CheckItem.from_parent(collector, name=f"{name}[{c.id}]", check=c) for c in obj]
    return None


class KpropFailed(Exception):
    """A kprop check or replay that failed; its text is what pytest prints."""


class CheckItem(pytest.Item):
    def __init__(self, *, check, **kwargs):
        super().__init__(**kwargs)
        self.check = check
        self.add_marker("kprop")
        for mark in check.marks:
            self.add_marker(mark)

    def runtest(self):
        import kprop
        c, option = self.check, self.config.getoption
        cases = option("kprop_cases") or c.cases or DEFAULT_CASES
        seed = option("kprop_seed") if option("kprop_seed") is not None else c.seed
        device = option("kprop_device") or c.device
        isolate = c.isolate or option("kprop_isolate")
        corpus = str(self.path.parent / c.corpus) if c.corpus else _scratch(self.config, self.name)
        words = _check_words(c, cases, seed, device)
        with _python_path(c.imports) as added:
            search = _command(words, added)
            try:
                result = kprop.check(c.kernel, c.impl, cases=cases, seed=seed,
                                     properties=c.properties, dtypes=c.dtypes, set=c.set,
                                     limits=c.limits, corpus=corpus, device=device,
                                     oracle_device=c.oracle_device, isolate=isolate,
                                     imports=c.imports, libraries=c.libraries,
                                     refusals=c.refusals, case_timeout=c.case_timeout,
                                     shrink=c.shrink)
            except kprop.UsageError as e:
                raise KpropFailed(f"{search}\nbad usage (exit 2): {e}") from None
            tally = result.tally
            self.user_properties.append(("kprop_cases", tally.cases))
            if not result.passed:
                raise KpropFailed(_check_failure(search, result, c.imports, device, added))
        if not tally.passed and not tally.known:
            not_taken = "; ".join(f"{n} x: {why}" for why, n in result.not_taken.items())
            pytest.skip(f"kprop ran none of {tally.cases} cases "
                        f"({not_taken or 'every case skipped or rejected'})")

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, KpropFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, self.check.line - 1, self.name


def _check_failure(search, result, imports, device, added):
    """What a failed check prints: the search, each defect's identity, the first one's
    minimal case, where each was kept and the commands that replay the first."""
    lines = [search, f"FAIL (exit {result.exit_code}) after {result.tally.cases} cases"]
    if not result.findings:
        lines.append("no new defect in its result: its report is in the captured output below")
    for i, f in enumerate(result.findings):
        if i > 0:
            lines.append(f"the same case also shows: {f.identity}")
            lines += [f"  kept: {f.path}"] if f.path else []
            continue
        lines.append(f"defect: {f.identity}")
        if f.verdict and f.verdict.get("message"):
            lines.append(f"  {f.verdict['message']}")
        lines.append(f"  minimal case: {_case_text(f.minimal)}")
        if f.path:
            lines.append(f"  kept: {f.path}")
            lines.append(f"  replay: {_command(_replay_words(f.path, imports, device), added)}")
            repro = ["repro", f.path] + _options("--import", imports)
            lines.append(f"  as a script without kprop: {_command(repro, added)}")
    return "\n".join(lines)


def _check_words(c, cases, seed, device):
    """The check as kprop's command line, to print (kprop.check builds its own; isolation
    aside, which changes no verdict)."""
    from .implementations import dtype_name
    words = ["check", c.kernel] + (["--impl", c.impl] if c.impl else [])
    words += ["--cases", str(cases)] + (["--seed", str(seed)] if seed is not None else [])
    words += _options("--property", c.properties)
    words += _options("--dtype", [dtype_name(d) for d in c.dtypes])
    words += _options("--set", [f"{k}={_word(v)}" for k, v in c.set.items()])
    words += _options("--limit", [f"{k}={v}" for k, v in c.limits.items()])
    words += (["--device", device] if device else [])
    words += (["--oracle-device", c.oracle_device] if c.oracle_device != "auto" else [])
    words += _options("--load", c.libraries) + _options("--refusal", c.refusals)
    return words + _options("--import", c.imports)


def _replay_words(path, imports, device):
    words = ["replay", str(path)] + _options("--import", imports)
    return words + (["--device", device] if device else [])


def _options(name, values):
    return [w for v in values for w in (name, str(v))]


def _word(v):
    """A parameter's value as kprop's command line and case text write it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(_word(x) for x in v)
    return str(v)


def _case_text(case):
    return " ".join(f"{k}={_word(v)}" for k, v in (case or {}).items()
                    if k not in ("kernel", "impl"))


def _scratch(config, name):
    """A fresh folder for the defects one check keeps, under pytest's temporary folder
    (--basetemp; pytest keeps the last three runs' folders)."""
    base = re.sub(r"[^\w.-]", "_", name)[:60]
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is not None:
        return str(factory.mktemp(f"kprop-{base}", numbered=True))
    return tempfile.mkdtemp(prefix=f"kprop-{base}-")


# --- where the modules are: workers and the printed commands must import them too -------

def _module_folder(name):
    """The folder that makes ``name`` importable, or None where it is not found."""
    try:
        spec = importlib.util.find_spec(name.split(".")[0])
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return os.path.dirname(os.path.abspath(list(spec.submodule_search_locations)[0]))
    if spec.origin and os.path.isabs(spec.origin):
        return os.path.dirname(spec.origin)
    return None


@contextmanager
def _python_path(imports):
    """PYTHONPATH with the folders of kprop and of ``imports`` that only this process knows
    (pytest's rootdir, a test's folder), for the worker processes of isolation; yields the
    folders added, which the printed commands name."""
    # Absolute: the printed commands run from anywhere.
    given = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    known = _fresh_sys_path(os.environ.get("PYTHONPATH", ""))
    # Only folders on sys.path: a module that an import hook finds is found by every
    # interpreter of this environment.
    on_path = {os.path.abspath(p) for p in sys.path if p}
    added = []
    for name in ["kprop"] + list(imports):
        folder = _module_folder(name)
        if folder in on_path and folder not in known and folder not in added:
            added.append(folder)
    old = os.environ.get("PYTHONPATH")
    if added:
        os.environ["PYTHONPATH"] = os.pathsep.join(added + given)
    try:
        yield added
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


@functools.lru_cache(maxsize=None)
def _fresh_sys_path(pythonpath):
    """The folders a new interpreter of this environment imports from (site-packages, .pth
    files such as an editable install's, PYTHONPATH), wherever it starts."""
    probe = "import json, sys; print(json.dumps([p for p in sys.path if p]))"
    try:
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             cwd=os.path.abspath(os.sep), check=True).stdout
        return frozenset(os.path.abspath(p) for p in json.loads(out))
    except (OSError, ValueError, subprocess.CalledProcessError):
        return frozenset(os.path.abspath(p) for p in pythonpath.split(os.pathsep) if p)


def _command(words, added):
    """A shell command that runs ``python -m kprop WORDS`` as this process would."""
    line = " ".join(shlex.quote(w) for w in [sys.executable, "-m", "kprop"] + list(words))
    if added:
        line = f"PYTHONPATH={shlex.quote(os.environ.get('PYTHONPATH', ''))} {line}"
    return line


# --- case files ----------------------------------------------------------------------------

def pytest_collect_file(file_path, parent):
    if file_path.suffix != ".json" or not _named(parent.config, file_path):
        return None
    if _read_case(file_path) is None:
        return None
    return CaseFile.from_parent(parent, path=file_path)


def _named(config, path):
    """Whether ``path`` lies under a path named on the command line or a --kprop-corpus
    folder: a pytest run over a project collects no case file it was not pointed at."""
    roots = list(getattr(config, "_kprop_corpora", []))
    for arg in config.option.file_or_dir or []:
        roots.append(Path(os.path.abspath(Path(config.invocation_params.dir, arg.split("::")[0]))))
    path = Path(os.path.abspath(path))
    return any(path == r or r in path.parents for r in roots)


def _read_case(path):
    try:
        with open(path) as f:
            case = json.load(f)
    except (OSError, ValueError):
        return None
    if isinstance(case, dict) and str(case.get("schema", "")).startswith(CASE_SCHEMA):
        return case
    return None


class CaseFile(pytest.File):
    def collect(self):
        yield CaseItem.from_parent(self, name="replay")


class CaseItem(pytest.Item):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_marker("kprop")

    def runtest(self):
        import kprop
        case = _read_case(self.path) or {}
        option = self.config.getoption
        imports = list(dict.fromkeys(_found_with(case) + option("kprop_import")))
        device, path = option("kprop_device"), str(self.path)
        with _python_path(imports) as added:
            replay = _command(_replay_words(path, imports, device), added)
            try:
                result = kprop.replay(path, isolate=option("kprop_isolate"), imports=imports,
                                      device=device or "cpu")
            except kprop.UsageError as e:
                raise KpropFailed(f"{path}: bad usage (exit 2): {e}\nreplay: {replay}") from None
        if not result.passed:
            raise KpropFailed(_replay_failure(path, case, result, replay))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, KpropFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"kprop replay {self.path.name}"


def _replay_failure(path, case, result, replay):
    """What a case file that no longer replays as recorded prints: its identity, each
    implementation whose verdict changed, and the command that replays it."""
    lines = [f"defect: {case.get('identity', '(no identity)')}"]
    if not result.files:
        for message in result.errors.values():
            lines.append(f"the case file could not be replayed (exit 2): {message}")
        lines.append("(an implementation from a module that the case's found_by does not "
                     "name: --kprop-import MODULE)")
    else:
        replayed = result.json[0]
        lines.insert(0, f"{path}: CHANGED (exit {result.exit_code})")
        for run in replayed.get("runs", []):
            if not run.get("as_expected", True):
                got = (run.get("verdict") or {}).get("status", "?")
                lines.append(f"  {run['impl']}: {got}, expected {run.get('expected')}")
        if not replayed.get("fingerprint_matches", True):
            lines.append("  the inputs' fingerprint changed: the case draws other inputs than "
                         "when it was kept")
        if not replayed.get("signature_matches", True):
            lines.append("  the failure's signature changed")
    lines.append(f"replay: {replay}")
    return "\n".join(lines)


def _found_with(case):
    """The modules the case was found with (its provenance's --import words)."""
    found_by = (case.get("provenance") or {}).get("found_by", "")
    try:
        words = shlex.split(found_by)
    except ValueError:
        return []
    modules = []
    for i, w in enumerate(words):
        if w == "--import" and i + 1 < len(words):
            modules.append(words[i + 1])
        elif w.startswith("--import="):
            modules.append(w.split("=", 1)[1])
    return modules
