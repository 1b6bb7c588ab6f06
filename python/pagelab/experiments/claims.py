"""The claim ledger: each claim of a paper, stated in the experiment file before the
run, with the quantity it is about (a *measure* the experiment's analysis computes) and
a refutation rule fixed in the file. After the run each claim gets a verdict:

- ``reproduced``: the rule holds;
- ``partly``: the rule fails, but the claim's weaker ``partly`` rule holds;
- ``not reproduced``: neither holds;
- ``not measured``: the run did not produce the measure (no value, or not a number).

A rule that could not fail on any input is a defect: every rule kind knows a
counterexample, a measure that must fail it, and a rule whose parameters leave none
(a band from -inf to +inf, a share of 0, a correlation bound of -1) is refused when the
file is read. The tests evaluate every shipped claim's rule on its counterexample.

Measures are numbers, lists of numbers, or tables (dicts) of either, e.g.
``{"LU": [36.1, 38.0, 41.2], "SOR": [5.0, 8.1, 13.3]}``. Rules see the numbers in
order (``values``), or per table entry (``series``) where they are about trends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .._core import PagelabError

VERDICTS = ("reproduced", "partly", "not reproduced", "not measured")


# ---------------------------------------------------------------- measures

def flatten(measure: Any) -> List[float]:
    """The numbers of a measure, in order (tables by key order, then list order)."""
    if isinstance(measure, bool):
        raise TypeError("a boolean is not a number")
    if isinstance(measure, (int, float)):
        return [float(measure)]
    if isinstance(measure, dict):
        return [x for v in measure.values() for x in flatten(v)]
    if isinstance(measure, (list, tuple)):
        return [x for v in measure for x in flatten(v)]
    raise TypeError(f"not a number: {measure!r}")


def series(measure: Any) -> List[Tuple[str, List[float]]]:
    """The measure as labelled series: a list is one series, a table one per entry."""
    if isinstance(measure, dict):
        return [(str(k), flatten(v)) for k, v in measure.items()]
    return [("", flatten(measure))]


def labelled(measure: Any) -> List[Tuple[str, float]]:
    """(label, number) pairs: table keys for a table of numbers, positions otherwise."""
    if isinstance(measure, dict) and all(not isinstance(v, (list, dict)) for v in measure.values()):
        return [(str(k), float(v)) for k, v in measure.items()]
    return [(str(i), v) for i, v in enumerate(flatten(measure))]


def lookup(measures: Dict[str, Any], name: str) -> Any:
    """A measure by name; ``a.b`` looks into table ``a``. None when absent."""
    value: Any = measures
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def usable(measure: Any) -> bool:
    try:
        values = flatten(measure)
    except TypeError:
        return False
    return bool(values) and all(math.isfinite(v) for v in values)


def fmt(x: float) -> str:
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.4g}" if abs(x) < 10 else f"{x:.1f}"
    return f"{x:.3g}"


def describe_measure(measure: Any, limit: int = 160) -> str:
    """A measure as the ledger's "ours" column shows it."""
    if measure is None:
        return "not measured"
    if isinstance(measure, dict):
        text = "; ".join(f"{k}: {describe_measure(v, limit)}" for k, v in measure.items())
    elif isinstance(measure, (list, tuple)):
        text = ", ".join(describe_measure(v, limit) for v in measure)
    elif isinstance(measure, (int, float)) and not isinstance(measure, bool):
        text = fmt(float(measure)) if math.isfinite(measure) else str(measure)
    else:
        text = str(measure)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------- rules

@dataclass
class Rule:
    """A refutation rule: ``holds(measure, paper)`` -> (holds, detail)."""
    kind: str
    params: dict

    # -- subclasses implement these
    def check(self, where: str) -> None:
        """Raises PagelabError when the rule cannot fail (or is malformed)."""

    def holds(self, measure: Any, paper: Optional[Any]) -> Tuple[bool, str]:
        raise NotImplementedError

    def counterexample(self, paper: Optional[Any]) -> Any:
        """A measure that must fail this rule."""
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    # -- shared
    def share(self) -> float:
        return float(self.params.get("share", 1.0))

    def share_text(self) -> str:
        s = self.share()
        return "every value" if s >= 1 else f"at least {s:.0%} of the values"


def _need_finite(params: dict, key: str, where: str, required: bool = True) -> Optional[float]:
    v = params.get(key)
    if v is None:
        if required:
            raise PagelabError(f"{where}.{key}: missing; expected a finite number")
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise PagelabError(f"{where}.{key}: expected a finite number (a rule that cannot fail is a defect), got {v!r}")
    return float(v)


def _check_share(params: dict, where: str) -> None:
    s = params.get("share", 1.0)
    if isinstance(s, bool) or not isinstance(s, (int, float)) or not 0 < s <= 1:
        raise PagelabError(f"{where}.share: expected a share in (0, 1] (0 would let the rule never fail), got {s!r}")


def _shared(values: List[float], test) -> Tuple[int, int]:
    return sum(1 for v in values if test(v)), len(values)


class Above(Rule):
    """Every value (or ``share`` of them) greater than ``threshold``."""

    def check(self, where):
        _need_finite(self.params, "threshold", where)
        _check_share(self.params, where)

    def holds(self, measure, paper):
        t = float(self.params["threshold"])
        k, n = _shared(flatten(measure), lambda v: v > t)
        return k >= self.share() * n, f"{k} of {n} above {fmt(t)}"

    def counterexample(self, paper):
        return [float(self.params["threshold"]) - 1.0]

    def text(self):
        return f"{self.share_text()} > {fmt(float(self.params['threshold']))}"


class Below(Rule):
    """Every value (or ``share`` of them) less than ``threshold``."""

    def check(self, where):
        _need_finite(self.params, "threshold", where)
        _check_share(self.params, where)

    def holds(self, measure, paper):
        t = float(self.params["threshold"])
        k, n = _shared(flatten(measure), lambda v: v < t)
        return k >= self.share() * n, f"{k} of {n} below {fmt(t)}"

    def counterexample(self, paper):
        return [float(self.params["threshold"]) + 1.0]

    def text(self):
        return f"{self.share_text()} < {fmt(float(self.params['threshold']))}"


class Between(Rule):
    """Every value (or ``share`` of them) in [min, max]; at least one bound finite."""

    def check(self, where):
        lo = _need_finite(self.params, "min", where, required=False)
        hi = _need_finite(self.params, "max", where, required=False)
        if lo is None and hi is None:
            raise PagelabError(f"{where}: a band needs min or max (without both it cannot fail)")
        if lo is not None and hi is not None and lo > hi:
            raise PagelabError(f"{where}: expected min <= max, got {lo} > {hi}")
        _check_share(self.params, where)

    def _bounds(self):
        lo = self.params.get("min")
        hi = self.params.get("max")
        return (-math.inf if lo is None else float(lo)), (math.inf if hi is None else float(hi))

    def holds(self, measure, paper):
        lo, hi = self._bounds()
        k, n = _shared(flatten(measure), lambda v: lo <= v <= hi)
        return k >= self.share() * n, f"{k} of {n} in [{fmt(lo) if lo > -math.inf else '-inf'}, " \
                                      f"{fmt(hi) if hi < math.inf else 'inf'}]"

    def counterexample(self, paper):
        lo, hi = self._bounds()
        return [hi + 1.0 + (hi - lo if lo > -math.inf else 0.0)] if hi < math.inf else [lo - 1.0]

    def text(self):
        lo, hi = self._bounds()
        if lo == -math.inf:
            return f"{self.share_text()} <= {fmt(hi)}"
        if hi == math.inf:
            return f"{self.share_text()} >= {fmt(lo)}"
        return f"{self.share_text()} in [{fmt(lo)}, {fmt(hi)}]"


class Near(Rule):
    """Each value within ``tolerance`` (absolute) or ``relative`` (a fraction of the
    paper's value) of the paper's number at the same position (``paper_value``)."""

    def check(self, where):
        tol = _need_finite(self.params, "tolerance", where, required=False)
        rel = _need_finite(self.params, "relative", where, required=False)
        if tol is None and rel is None:
            raise PagelabError(f"{where}: 'near' needs tolerance or relative")
        if (tol is not None and tol < 0) or (rel is not None and rel < 0):
            raise PagelabError(f"{where}: tolerances must be >= 0")
        _check_share(self.params, where)

    def _allowed(self, p: float) -> float:
        tol = float(self.params.get("tolerance", 0.0))
        rel = float(self.params.get("relative", 0.0))
        return max(tol, rel * abs(p))

    def holds(self, measure, paper):
        ours = flatten(measure)
        theirs = flatten(paper)
        if len(ours) != len(theirs):
            return False, f"{len(ours)} values against the paper's {len(theirs)}"
        k = sum(1 for o, p in zip(ours, theirs) if abs(o - p) <= self._allowed(p))
        return k >= self.share() * len(ours), f"{k} of {len(ours)} within the tolerance of the paper's"

    def counterexample(self, paper):
        return [p + 2.0 * self._allowed(p) + 1.0 for p in flatten(paper)]

    def text(self):
        parts = []
        if "tolerance" in self.params:
            parts.append(f"±{fmt(float(self.params['tolerance']))}")
        if "relative" in self.params:
            parts.append(f"±{float(self.params['relative']):.0%}")
        return f"{self.share_text()} within {' or '.join(parts)} of the paper's"


def _slope(ys: Sequence[float]) -> float:
    n = len(ys)
    xs = range(n)
    mx, my = (n - 1) / 2, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


class Trend(Rule):
    """Each series (a list, or each entry of a table) rises (``increasing``) or falls
    (``decreasing``) from one position to the next by more than ``min_step`` on
    average (least-squares slope), in ``share`` of the series."""

    def check(self, where):
        _need_finite(self.params, "min_step", where, required=False)
        _check_share(self.params, where)
        if not isinstance(self.params.get("every_step", False), bool):
            raise PagelabError(f"{where}.every_step: expected true or false")

    def _sign(self) -> float:
        return 1.0 if self.kind == "increasing" else -1.0

    def _moves(self, ys: List[float], step: float) -> bool:
        if len(ys) < 2:
            return False
        if self.params.get("every_step", False):  # monotone: no step may go the other way
            return all(self._sign() * (b - a) > step for a, b in zip(ys, ys[1:]))
        return self._sign() * _slope(ys) > step

    def holds(self, measure, paper):
        step = float(self.params.get("min_step", 0.0))
        ss = series(measure)
        good = [label for label, ys in ss if self._moves(ys, step)]
        return len(good) >= self.share() * len(ss), f"{len(good)} of {len(ss)} series {self.kind}"

    def counterexample(self, paper):
        step = float(self.params.get("min_step", 0.0))
        return [0.0, -self._sign() * (abs(step) + 1.0), -self._sign() * 2 * (abs(step) + 1.0)]

    def text(self):
        step = float(self.params.get("min_step", 0.0))
        what = "rises" if self.kind == "increasing" else "falls"
        by = f" by more than {fmt(step)} a step" if step else ""
        how = "at every step" if self.params.get("every_step", False) else "(least-squares slope)"
        return f"each series {what}{by} {how}" if self.share() >= 1 else \
            f"{self.share():.0%} of the series {what}{by} {how}"


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (average ranks for ties)."""
    def ranks(xs):
        order = sorted(range(len(xs)), key=lambda i: xs[i])
        r = [0.0] * len(xs)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r

    ra, rb = ranks(list(a)), ranks(list(b))
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return num / den if den else 0.0


class Spearman(Rule):
    """Our values rank the items as the paper's do: Spearman's rho >= ``min``."""

    def check(self, where):
        m = _need_finite(self.params, "min", where)
        if not -1 < m <= 1:
            raise PagelabError(f"{where}.min: expected a correlation in (-1, 1] (-1 would let the rule never fail), "
                               f"got {m}")

    def holds(self, measure, paper):
        ours, theirs = flatten(measure), flatten(paper)
        if len(ours) != len(theirs) or len(ours) < 3:
            return False, f"{len(ours)} values against the paper's {len(theirs)} (at least 3 needed)"
        rho = spearman(ours, theirs)
        return rho >= float(self.params["min"]), f"Spearman rho {rho:.2f}"

    def counterexample(self, paper):
        theirs = flatten(paper)
        return [-v for v in theirs]

    def text(self):
        return f"ranks as the paper's: Spearman rho >= {float(self.params['min']):.2f}"


class Order(Rule):
    """Named entries of a table in strictly increasing order: ``order = ["a", "b"]``
    means a < b (each later entry larger than the one before)."""

    def check(self, where):
        order = self.params.get("order")
        if not isinstance(order, list) or len(order) < 2 or not all(isinstance(x, str) for x in order):
            raise PagelabError(f"{where}.order: expected a list of at least two entry names")

    def holds(self, measure, paper):
        if not isinstance(measure, dict):
            return False, "not a table"
        names = self.params["order"]
        missing = [n for n in names if n not in measure]
        if missing:
            return False, f"no entry {', '.join(missing)}"
        vals = [float(flatten(measure[n])[0]) for n in names]
        bad = [f"{a} >= {b}" for (a, x), (b, y) in zip(zip(names, vals), zip(names[1:], vals[1:])) if not x < y]
        return not bad, "; ".join(bad) if bad else "in order"

    def counterexample(self, paper):
        names = self.params["order"]
        return {n: float(len(names) - i) for i, n in enumerate(names)}

    def text(self):
        return " < ".join(self.params["order"])


RULES = {"above": Above, "below": Below, "between": Between, "near": Near, "increasing": Trend,
         "decreasing": Trend, "spearman": Spearman, "order": Order}
RULE_KEYS = {"above": ("threshold", "share"), "below": ("threshold", "share"), "between": ("min", "max", "share"),
             "near": ("tolerance", "relative", "share"), "increasing": ("min_step", "share", "every_step"),
             "decreasing": ("min_step", "share", "every_step"), "spearman": ("min",), "order": ("order",)}
#: rules compared with the paper's numbers (paper_value must be given)
NEEDS_PAPER = ("near", "spearman")


def parse_rule(table: Any, where: str) -> Rule:
    if not isinstance(table, dict) or not isinstance(table.get("kind"), str):
        raise PagelabError(f"{where}: expected a table with a kind ({', '.join(RULES)})")
    kind = table["kind"]
    if kind not in RULES:
        raise PagelabError(f"{where}.kind: unknown rule '{kind}' (expected {', '.join(RULES)})")
    params = {k: v for k, v in table.items() if k != "kind"}
    for k in params:
        if k not in RULE_KEYS[kind]:
            raise PagelabError(f"{where}.{k}: unknown key for a '{kind}' rule (expected {', '.join(RULE_KEYS[kind])})")
    rule = RULES[kind](kind, params)
    rule.check(where)
    return rule


# ---------------------------------------------------------------- claims

@dataclass
class Claim:
    id: str
    source: str          # the paper's section, table or figure
    statement: str       # the claim, in words
    paper: str           # the paper's numbers, in words
    measure: str         # the analysis' measure it is tested on
    rule: Rule
    partly: Optional[Rule] = None
    paper_value: Any = None
    note: str = ""
    #: the entries of a table measure the claim is about (all when empty)
    entries: List[str] = field(default_factory=list)

    def rule_text(self) -> str:
        text = self.rule.text()
        if self.partly is not None:
            text += f"; partly: {self.partly.text()}"
        return text


@dataclass
class ClaimResult:
    claim: Claim
    verdict: str
    ours: str
    detail: str
    measure: Any = None
    #: sensitivity: (variant label, verdict) for each variant run
    variants: List[Tuple[str, str]] = field(default_factory=list)

    def robustness(self) -> Optional[str]:
        """'k of n variants' where the claim is reproduced (None without a sensitivity run)."""
        if not self.variants:
            return None
        k = sum(1 for _, v in self.variants if v == "reproduced")
        return f"{k} of {len(self.variants)}"

    def record(self) -> dict:
        c = self.claim
        out = {"id": c.id, "source": c.source, "statement": c.statement, "paper": c.paper, "measure": c.measure,
               "ours": self.ours, "rule": c.rule_text(), "verdict": self.verdict, "detail": self.detail,
               "note": c.note}
        if self.variants:
            out["robustness"] = self.robustness()
            out["variants"] = [{"variant": label, "verdict": v} for label, v in self.variants]
        return out


def parse_claims(entries: List[dict], file: str, measures: Optional[Sequence[str]] = None) -> List[Claim]:
    """The [[claim]] entries (already checked for their keys' types by the schema)."""
    claims, seen = [], set()
    for i, e in enumerate(entries):
        where = f"{file}: claim[{i}]"
        if e["id"] in seen:
            raise PagelabError(f"{where}.id: '{e['id']}' is used twice")
        seen.add(e["id"])
        rule = parse_rule(e["rule"], f"{where}.rule")
        partly = parse_rule(e["partly"], f"{where}.partly") if e.get("partly") is not None else None
        for r, key in ((rule, "rule"), (partly, "partly")):
            if r is not None and r.kind in NEEDS_PAPER and e.get("paper_value") is None:
                raise PagelabError(f"{where}.{key}: a '{r.kind}' rule compares with the paper: give paper_value")
        if measures is not None and e["measure"].split(".")[0] not in measures:
            raise PagelabError(f"{where}.measure: unknown measure '{e['measure']}' "
                               f"(this experiment measures: {', '.join(measures)})")
        claims.append(Claim(e["id"], e["source"], e["statement"], e["paper"], e["measure"], rule, partly,
                            e.get("paper_value"), e.get("note", ""), list(e.get("entries") or [])))
    return claims


def verdict(claim: Claim, measures: Dict[str, Any]) -> ClaimResult:
    measure = lookup(measures, claim.measure)
    if claim.entries and measure is not None:
        if not isinstance(measure, dict) or any(e not in measure for e in claim.entries):
            missing = [e for e in claim.entries if not isinstance(measure, dict) or e not in measure]
            return ClaimResult(claim, "not measured", describe_measure(measure),
                               f"no entries {', '.join(missing)} in the measure", None)
        measure = {e: measure[e] for e in claim.entries}
    if measure is None or not usable(measure):
        return ClaimResult(claim, "not measured", describe_measure(measure), "the run gave no number", measure)
    ok, detail = claim.rule.holds(measure, claim.paper_value)
    if ok:
        v = "reproduced"
    elif claim.partly is not None:
        ok2, detail2 = claim.partly.holds(measure, claim.paper_value)
        v = "partly" if ok2 else "not reproduced"
        detail = f"{detail}; partly: {detail2}"
    else:
        v = "not reproduced"
    return ClaimResult(claim, v, describe_measure(measure), detail, measure)


def evaluate(claims: List[Claim], measures: Dict[str, Any]) -> List[ClaimResult]:
    return [verdict(c, measures) for c in claims]


def tally(results: List[ClaimResult]) -> Dict[str, int]:
    out = {v: 0 for v in VERDICTS}
    for r in results:
        out[r.verdict] += 1
    return out
