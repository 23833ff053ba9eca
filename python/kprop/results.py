"""What kprop returns to Python: typed results.

``kprop.check``, ``replay`` and ``hunt`` call the engine itself (harness/api/) and return
dataclasses built from its reports. ``shrink`` and ``nightly`` still hand their result over
as the JSON their ``--json`` prints (harness/cli/entry.h); their classes give that JSON names.
``exit_code`` is always the command line's: 0 pass, 1 a failure, 2 bad usage, 128 + the
signal when interrupted with nothing found.
"""
import dataclasses
from dataclasses import dataclass, field
from typing import Dict, List, Optional


class _Outcome:
    """What every result has beside its ``exit_code`` and ``findings``."""

    @property
    def passed(self):
        return self.exit_code == 0

    @property
    def finding(self):
        """The first new defect, or None."""
        return self.findings[0] if self.findings else None


@dataclass
class Finding:
    """One defect: its identity, the 1-minimal case (a dict, as a case file holds it),
    the verdict of that case (a dict: status, message, the per-tensor error table) and
    where it was kept (None when nothing was kept)."""
    identity: str
    minimal: dict
    verdict: Optional[dict] = None
    path: Optional[str] = None


@dataclass
class Tally:
    """A search's counts: cases drawn, and how they ended. ``by_property`` holds the same
    counts per property."""
    cases: int = 0
    passed: int = 0
    failed: int = 0
    known: int = 0
    rejected: int = 0
    skipped: int = 0
    seconds: float = 0.0
    by_property: Dict[str, "Tally"] = field(default_factory=dict)

    @classmethod
    def of(cls, json):
        names = {f.name for f in dataclasses.fields(cls)} - {"by_property"}
        t = cls(**{k: v for k, v in json.items() if k in names})
        t.by_property = {p: cls.of(v) for p, v in json.get("by_property", {}).items()}
        return t


@dataclass
class CheckResult(_Outcome):
    """What ``kprop.check`` returns: ``passed``, ``exit_code``, the counts (``tally``), what
    was not checked and why (``not_taken``: outside what the implementation declares it takes;
    ``rejections``: refused or impossible cases; reason -> count), the ``known`` defects the
    search saw again (identity -> count), each new defect (``findings``, the first as
    ``finding``), ``interrupted`` ("SIGINT", "SIGTERM" or "") and ``mostly_refused`` (the
    commonest refusal and its count, when most cases were refused). ``json`` is the report as
    ``kprop check --json`` prints it."""
    exit_code: int
    tally: Tally
    not_taken: Dict[str, int]
    rejections: Dict[str, int]
    known: Dict[str, int]
    findings: List[Finding]
    interrupted: str = ""
    mostly_refused: Optional[dict] = None
    json: dict = field(default_factory=dict, repr=False)

    @property
    def checked(self):
        """Cases a property ran on (the implementation was asked: not skipped)."""
        return self.tally.cases - self.tally.skipped  # tally.cases counts the known ones

    @classmethod
    def of(cls, exit_code, json):
        findings = []
        failure = json.get("failure")
        if failure:
            findings.append(Finding(failure["identity"], failure["minimal"], failure.get("verdict"),
                                    _kept_path(json.get("corpus"))))
            for other in json.get("also", []):
                findings.append(Finding(other["identity"], other["minimal"], None,
                                        other.get("corpus") or None))
        return cls(exit_code, Tally.of(json.get("tally", {})), json.get("not_taken", {}),
                   json.get("rejections", {}), json.get("known_sightings", {}), findings,
                   json.get("interrupted", ""), json.get("mostly_refused"), json)

    def summary(self):
        """One paragraph: what ran and what it found."""
        t = self.tally
        lines = [f"{t.cases} cases: {t.passed} passed, {t.failed} failed, {t.known} known, "
                 f"{t.rejected} rejected, {t.skipped} skipped"]
        for f in self.findings:
            lines.append(f"defect: {f.identity}" + (f" (kept: {f.path})" if f.path else ""))
        if self.mostly_refused:
            lines.append(f"mostly refused: {self.mostly_refused['count']} x "
                         f"{self.mostly_refused['reason']}")
        if self.interrupted:
            lines.append(f"interrupted by {self.interrupted}")
        return "\n".join(lines)


class Failure(Exception):
    """Raised by ``kprop.check(..., raise_on_failure=True)`` when the check does not pass;
    ``result`` is its ``CheckResult``, and the message its summary."""

    def __init__(self, result):
        super().__init__(result.summary())
        self.result = result


class Result(_Outcome):
    """What every command's result has: ``exit_code`` (0 pass, 1 a failure, 2 bad usage or
    a bad file, as the CLI's), ``passed``, the command's JSON as ``json``, and ``findings``
    (the first one as ``finding``)."""

    def __init__(self, exit_code, json):
        self.exit_code = exit_code
        self.json = json
        self.findings = []

    def __repr__(self):
        what = self.finding.identity if self.findings else "no new counterexample"
        return f"{type(self).__name__}(exit_code={self.exit_code}, {what})"


def _kept_path(corpus):
    """The path a command kept a case file at, or None when it kept nothing."""
    return (corpus or {}).get("path") or None


@dataclass
class Replayed:
    """One replayed case file: ``path``, ``case``, ``as_recorded`` (every verdict as
    expected, the fingerprint and signature unchanged), ``fingerprint_matches`` and
    ``verdicts`` (impl -> verdict)."""
    path: str
    case: dict
    as_recorded: bool
    fingerprint_matches: bool
    verdicts: Dict[str, dict]

    @classmethod
    def of(cls, json):
        return cls(json["path"], json["case"], json["as_recorded"], json["fingerprint_matches"],
                   {run["impl"]: run["verdict"] for run in json["runs"]})


@dataclass
class ReplayResult(_Outcome):
    """What ``kprop.replay`` returns: ``passed``, ``exit_code`` (2 when a path could not be
    replayed, 1 when a file changed), one ``Replayed`` per replayed file in ``files``, and
    each path that could not be replayed with kprop's message in ``errors``. ``json`` holds
    the replayed files as ``kprop replay --json`` prints them."""
    exit_code: int
    files: List[Replayed]
    errors: Dict[str, str]
    json: list = field(default_factory=list, repr=False)
    findings: List[Finding] = field(default_factory=list)  # none: replay finds nothing new


class ShrinkResult(Result):
    """The result of ``kprop.shrink``: a finding per symptom of every failing file, with
    the path it was kept at (None with no corpus)."""

    def __init__(self, exit_code, json):
        super().__init__(exit_code, json)
        self.files = json
        for row in json:
            for k in row.get("shrunk", []):
                self.findings.append(Finding(k["identity"], k["minimal"], None,
                                             _kept_path(k.get("corpus"))))


@dataclass
class Hunt:
    """One hunt of ``kprop.hunt``: the known ``defect`` on ``impl``, ``found`` after
    ``cases`` cases, and what it shrank to (``finding``, None when missed)."""
    defect: str
    impl: str
    found: bool
    cases: int
    finding: Optional[Finding] = None

    @classmethod
    def of(cls, json):
        finding = (Finding(json["identity"], json["minimal"], None, _kept_path(json.get("corpus")))
                   if json["found"] else None)
        return cls(json["defect"], json["impl"], json["found"], json["cases"], finding)


@dataclass
class HuntResult(_Outcome):
    """What ``kprop.hunt`` returns: every hunt in ``hunts`` and each found defect in
    ``findings``; ``passed`` when every known defect was found. ``json`` holds the hunts as
    ``kprop hunt --json`` prints them."""
    exit_code: int
    hunts: List[Hunt]
    findings: List[Finding]
    json: list = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, exit_code, json):
        hunts = [Hunt.of(h) for h in json]
        return cls(exit_code, hunts, [h.finding for h in hunts if h.finding], json)


class NightlyResult(Result):
    """The result of ``kprop.nightly``: its summary.json as ``json``, every new defect as a
    finding (``path``: its corpus file), ``known`` sightings and ``interrupted``."""

    def __init__(self, exit_code, json):
        super().__init__(exit_code, json)
        self.known = json.get("known_sightings", {})
        self.interrupted = json.get("interrupted", False)
        for f in json.get("findings", []):
            self.findings.append(Finding(f["identity"], f["minimal"], None, f.get("file") or None))
