"""The experiment protocol. An experiment is a TOML file and one module:

- the file (``pagelab/experiments/NAME.toml``, or any path): ``[experiment]`` (its
  paper, title, analysis module), the module's own tables (the programs, memory
  sizes, configurations to run), the paper's claims as ``[[claim]]`` entries, each
  with the measure it is about and a refutation rule fixed before the run
  (``claims.py``), and ``[[sensitivity]]`` ranges for the parameters the paper does
  not fix;
- the module (``pagelab/experiments/<module>.py``) declares ``TABLES`` (the schema of
  its tables: one-line errors come from it), ``MEASURES`` (what its claims may test),
  and three functions: ``points(spec)`` -> the engine runs it needs, ``analyse(spec,
  results)`` -> an :class:`Analysis` (its measures, tables and printed views), and
  ``figures(spec, analysis, results, out)`` -> the figure files it wrote.

Everything else (running the points in parallel through the sweep executor, storing
them as they finish, resuming, the ledger, sensitivity, outputs) is the runner's
(``runner.py``), the same for every experiment. docs/experiments.md walks through
adding one.
"""

from __future__ import annotations

import copy
import importlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List, Optional, Tuple

from .._core import PagelabError
from ..sweeps.store import Store
from ..system import read_toml
from .claims import Claim, parse_claims
from .schema import AnyTable, Anything, ArrayOf, Bool, Field, List_, Number, Str, Table, check_file, describe_schema

#: the experiment files and modules shipped with the package
EXPERIMENTS_DIR = Path(__file__).resolve().parent

EXPERIMENT_TABLE = Table({
    "name": Field(Str(), None, "the experiment's name (default: the file's name)"),
    "module": Field(Str(), None, "the analysis module in pagelab/experiments/ (default: the name, '-' as '_')"),
    "paper": Field(Str(), doc="the paper's short name, e.g. token-ordered-lru.txt (README, References)"),
    "title": Field(Str(), doc="what the experiment reproduces, e.g. 'Table 2 and figure 11'"),
    "description": Field(Str(nonempty=False), "", "the setup in a few sentences, for the report"),
    "quick_scale": Field(Number(above=0, max=1), 0.5, "problem sizes with --quick, as a fraction of the full ones"),
    "kernel": Field(Bool(), False, "it runs points on this machine's kernel (root): named on its own, not "
                                   "part of `reproduce all`"),
    "real_suite": Field(Bool(), False, "it replays members of the real-program suite (`pagelab suite build`, "
                                       "tens of minutes under Valgrind): named on its own, not part of "
                                       "`reproduce all`"),
})
CLAIM_TABLE = Table({
    "id": Field(Str(), doc="a short name, unique in the file"),
    "source": Field(Str(), doc="where the paper makes the claim: section, table or figure"),
    "statement": Field(Str(), doc="the claim, in words"),
    "paper": Field(Str(), doc="the paper's numbers, in words"),
    "measure": Field(Str(), doc="the measure (of the module's MEASURES) the rule tests"),
    "rule": Field(AnyTable("a rule table, e.g. { kind = \"above\", threshold = 0 }"),
                  doc="the refutation rule (claims.py)"),
    "partly": Field(AnyTable("a rule table"), None, "a weaker rule: 'partly' when the rule fails and this holds"),
    "paper_value": Field(List_(Number()), None, "the paper's numbers, for near and spearman rules, in the "
                                                 "order of the measure's values"),
    "note": Field(Str(nonempty=False), "", "why the rule is what it is (never a result)"),
    "entries": Field(List_(Str(), min_len=1), None, "only these entries of a table measure, in this order"),
})
SENSITIVITY_TABLE = Table({
    "key": Field(Str(), doc="a dotted key of this file; '*' stands for every entry of an array"),
    "values": Field(List_(Anything("a number, a string or true/false",
                                   lambda v: isinstance(v, (int, float, str, bool))), min_len=1), None,
                    "values to set (numbers, strings such as a policy's name, or true/false)"),
    "scale": Field(List_(Number(above=0), min_len=1), None, "factors to multiply the file's values by"),
    "why": Field(Str(), doc="why the paper leaves it open, and where the range comes from"),
})
GENERIC = {
    "experiment": Field(EXPERIMENT_TABLE),
    "claim": Field(ArrayOf(CLAIM_TABLE, min_len=1), doc="the paper's claims"),
    "sensitivity": Field(ArrayOf(SENSITIVITY_TABLE), [], "ranges of the parameters the paper does not fix"),
}


@dataclass
class Point:
    """One engine run an experiment needs: ``key`` names it within the experiment."""
    key: str
    mode: str          # "replay", "system", "gang", "numa", "fault-parameters" or "kernel"
    config: dict


@dataclass
class View:
    """A table the run prints (and the README shows when ``readme``)."""
    title: str
    columns: List[str]
    rows: List[list]
    readme: bool = False


@dataclass
class Analysis:
    measures: Dict[str, Any]
    #: written as CSV files: "table" is table.csv, others <name>.csv
    tables: Dict[str, Any] = field(default_factory=dict)
    views: List[View] = field(default_factory=list)
    #: lines printed after the views (findings computed from the run)
    lines: List[str] = field(default_factory=list)
    #: anything JSON-able the report or later tools want, in summary.json
    summary: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Spec:
    """An experiment file, checked, for one variant of it."""
    name: str
    path: Path
    data: dict
    module: ModuleType
    claims: List[Claim]
    quick: bool = False
    variant: str = "base"
    #: the backend its system runs go to: "simulator", or "kernel" (reproduce --on
    #: kernel: the module's KERNEL says what it measures there)
    on: str = "simulator"

    @property
    def experiment(self) -> dict:
        return self.data["experiment"]

    @property
    def scale(self) -> float:
        """Problem sizes relative to the full ones: 1, or quick_scale with --quick."""
        return float(self.experiment["quick_scale"]) if self.quick else 1.0

    def table(self, key: str) -> Any:
        return self.data[key]


class Results:
    """The stored results of an experiment's points, by point key, read lazily."""

    def __init__(self, store: Store, hashes: Dict[str, str], failures: Dict[str, str]):
        self.store = store
        self.hashes = hashes
        self.failures = failures
        self._full: Dict[str, Any] = {}
        self._rows: Dict[str, list] = {}

    def keys(self) -> List[str]:
        return list(self.hashes)

    def failed(self, key: str) -> Optional[str]:
        return self.failures.get(self.hashes[key])

    def _check(self, key: str) -> str:
        if key not in self.hashes:
            raise PagelabError(f"no point '{key}' in this experiment")
        error = self.failed(key)
        if error is not None:
            raise PagelabError(f"point '{key}' failed: {error}")
        return self.hashes[key]

    def full(self, key: str) -> Any:
        """The point's whole result (the engine's result dict, or a residency table)."""
        if key not in self._full:
            self._full[key] = self.store.read_full(self._check(key))
        return self._full[key]

    def rows(self, key: str) -> list:
        if key not in self._rows:
            stored = self.store.read_point(self._check(key))
            if stored is None:
                raise PagelabError(f"point '{key}': its result file is missing or damaged; run again to recompute it")
            self._rows[key] = stored["rows"]
        return self._rows[key]


# ---------------------------------------------------------------- reading a file

def module_for(data: dict, file: str) -> Tuple[str, ModuleType]:
    exp = data.get("experiment")
    if not isinstance(exp, dict):
        raise PagelabError(f"{file}: missing table [experiment]")
    name = exp.get("module") or (exp.get("name") or Path(file).stem).replace("-", "_")
    if not isinstance(name, str) or not name.isidentifier():
        raise PagelabError(f"{file}: experiment.module: expected a module name, got {name!r}")
    try:
        module = importlib.import_module(f"{__package__}.{name}")
    except ModuleNotFoundError as err:
        if err.name != f"{__package__}.{name}":
            raise
        known = sorted(p.stem for p in EXPERIMENTS_DIR.glob("*.py") if not p.stem.startswith("_")
                       and p.stem not in ("protocol", "claims", "schema", "runner", "sensitivity"))
        raise PagelabError(f"{file}: experiment.module: no analysis module '{name}' "
                           f"(the shipped ones: {', '.join(known)})") from None
    for attr in ("TABLES", "MEASURES", "points", "analyse", "figures"):
        if not hasattr(module, attr):
            raise PagelabError(f"{file}: experiment.module: '{name}' is not an experiment module (no {attr})")
    return name, module


def check_spec(data: dict, path: Path, module: ModuleType, quick: bool = False, variant: str = "base",
               on: str = "simulator") -> Spec:
    file = path.name
    schema = Table(dict(GENERIC, **module.TABLES))
    checked = check_file(data, schema, file)
    claims = parse_claims(checked["claim"], file, list(module.MEASURES))
    name = checked["experiment"].get("name") or path.stem
    if on == "kernel" and not getattr(module, "KERNEL", None):
        raise PagelabError(f"{file}: this experiment has no kernel version (reproduce --on kernel runs those whose "
                           "module declares KERNEL: token-lru, gang)")
    spec = Spec(name, path, checked, module, claims, quick, variant, on)
    check = getattr(module, "check", None)
    if check is not None:  # what a schema cannot say (a value that depends on another)
        check(spec)
    return spec


def load_spec(path: Path, quick: bool = False, on: str = "simulator") -> Spec:
    """Reads and checks an experiment file; errors are one line naming the file and key.
    ``on = "kernel"``: its system runs go to this machine's kernel."""
    data = read_toml(path)
    if not isinstance(data, dict):
        raise PagelabError(f"{path.name}: expected tables")
    _name, module = module_for(data, path.name)
    spec = check_spec(data, path, module, quick, on=on)
    spec_variants(spec)  # every sensitivity range applies to this file, and every variant checks
    return spec


# ---------------------------------------------------------------- sensitivity variants

def _paths(data: Any, parts: List[str], where: str, create: bool) -> List[Tuple[Any, Any]]:
    """(container, key) pairs that ``parts`` names in ``data``; '*' is every entry of an
    array. ``create``: missing tables on the way are made (to set a value)."""
    if not parts:
        return []
    head, rest = parts[0], parts[1:]
    if head == "*":
        if not isinstance(data, list):
            raise PagelabError(f"{where}: '*' needs an array there")
        if not rest:
            return [(data, i) for i in range(len(data))]
        return [p for item in data for p in _paths(item, rest, where, create)]
    if not isinstance(data, dict):
        raise PagelabError(f"{where}: '{head}' is not in a table")
    if not rest:
        return [(data, head)]
    if head not in data:
        if not create:
            raise PagelabError(f"{where}: no key '{head}' in the file")
        data[head] = {}
    return _paths(data[head], rest, where, create)


def variants_of(spec: Spec, index: int) -> List[Tuple[str, dict]]:
    """The (label, file data) variants of sensitivity range ``index``."""
    s = spec.data["sensitivity"][index]
    where = f"{spec.path.name}: sensitivity[{index}].key"
    if (s.get("values") is None) == (s.get("scale") is None):
        raise PagelabError(f"{spec.path.name}: sensitivity[{index}]: expected exactly one of values or scale")
    out = []
    parts = s["key"].split(".")
    if s.get("values") is not None:
        for v in s["values"]:
            data = copy.deepcopy(spec.data)
            places = _paths(data, parts, where, create=True)
            if not places:
                raise PagelabError(f"{where}: names nothing")
            for container, k in places:
                container[k] = v
            out.append((f"{s['key']} = {_label(v)}", data))
    else:
        for f in s["scale"]:
            data = copy.deepcopy(spec.data)
            places = _paths(data, parts, where, create=False)
            if not places:
                raise PagelabError(f"{where}: names nothing")
            for container, k in places:
                try:
                    old = container[k]
                except (KeyError, IndexError):
                    raise PagelabError(f"{where}: no value to scale at '{s['key']}' (give values instead)") from None
                if isinstance(old, bool) or not isinstance(old, (int, float)):
                    raise PagelabError(f"{where}: '{s['key']}' is not a number, cannot scale it")
                new = old * f
                container[k] = int(round(new)) if isinstance(old, int) else new
            out.append((f"{s['key']} x {f:g}", data))
    return out


def _label(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def spec_variants(spec: Spec) -> List[Spec]:
    """Every sensitivity variant of the spec, each checked like the file itself."""
    out = []
    for i in range(len(spec.data["sensitivity"])):
        for label, data in variants_of(spec, i):
            raw = {k: v for k, v in data.items()}
            v = check_spec(raw, spec.path, spec.module, spec.quick, label, spec.on)
            v.name = spec.name
            out.append(v)
    return out


def is_finite_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def reference(names: List[str]) -> str:
    """docs/experiments.md's appendix: the generic tables, then each experiment's own
    tables and its measures, from the declarations (a test keeps the doc equal to it)."""
    out = ["### Every file", "", "```"] + describe_schema(Table(GENERIC)) + ["```", ""]
    for name in names:
        data = read_toml(EXPERIMENTS_DIR / f"{name}.toml")
        _mod, module = module_for(data, f"{name}.toml")
        out += [f"### {name} (module `{module.__name__.rsplit('.', 1)[1]}`)", "", "```"]
        out += describe_schema(Table(module.TABLES)) + ["```", "", "Measures:", ""]
        out += [f"- `{k}`: {v}" for k, v in module.MEASURES.items()] + [""]
    return "\n".join(out)
