"""Typed schemas for experiment files: each table declares its keys, their types,
ranges and defaults, and checking a file against it fills in the defaults and turns the
first mistake into one line naming the file, the key and what was expected, e.g.
``gang.toml: workload[2].quantum_s: expected a number > 0, got -5``. The messages come
from the declarations, so a new key gets its error for free."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

from .._core import PagelabError
from ..configs import toml_kind

#: a field without a default must be given
REQUIRED = object()


class Type:
    """A value's type; ``check`` returns the (possibly completed) value or raises."""

    def describe(self) -> str:
        raise NotImplementedError

    def check(self, value: Any, where: str, file: str) -> Any:
        raise NotImplementedError

    def fail(self, value: Any, where: str, file: str) -> PagelabError:
        return PagelabError(f"{file}: {where}: expected {self.describe()}, got {_show(value)}")


def _show(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return toml_kind(value)
    if isinstance(value, str):
        return repr(value)
    return str(value)


@dataclass
class Number(Type):
    """A number (int or float), finite, within [min, max] (``above``: strictly)."""
    min: Optional[float] = None
    max: Optional[float] = None
    above: Optional[float] = None
    whole: bool = False

    def describe(self) -> str:
        what = "a whole number" if self.whole else "a number"
        parts = []
        if self.above is not None:
            parts.append(f"> {self.above:g}")
        if self.min is not None:
            parts.append(f">= {self.min:g}")
        if self.max is not None:
            parts.append(f"<= {self.max:g}")
        return what + (" " + " and ".join(parts) if parts else "")

    def check(self, value, where, file):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(value, where, file)
        if self.whole and not isinstance(value, int):
            raise self.fail(value, where, file)
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(value, where, file)
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max) or \
                (self.above is not None and value <= self.above):
            raise self.fail(value, where, file)
        return value


def Int(min: Optional[int] = None, max: Optional[int] = None) -> Number:  # noqa: N802 - a type's name
    return Number(min=min, max=max, whole=True)


@dataclass
class Str(Type):
    choices: Optional[Sequence[str]] = None
    nonempty: bool = True

    def describe(self) -> str:
        if self.choices:
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        return "a non-empty string" if self.nonempty else "a string"

    def check(self, value, where, file):
        if not isinstance(value, str) or (self.nonempty and not value.strip()) or \
                (self.choices and value not in self.choices):
            raise self.fail(value, where, file)
        return value


@dataclass
class Bool(Type):
    def describe(self) -> str:
        return "true or false"

    def check(self, value, where, file):
        if not isinstance(value, bool):
            raise self.fail(value, where, file)
        return value


@dataclass
class Anything(Type):
    """A value the engine (or a later check) validates: a configuration table, say."""
    kind: str = "a value"
    predicate: Optional[Callable[[Any], bool]] = None

    def describe(self) -> str:
        return self.kind

    def check(self, value, where, file):
        if self.predicate is not None and not self.predicate(value):
            raise self.fail(value, where, file)
        return copy.deepcopy(value)


def AnyTable(kind: str = "a table") -> Anything:  # noqa: N802
    return Anything(kind, lambda v: isinstance(v, dict))


@dataclass
class List_(Type):  # noqa: N801 - List is typing's
    item: Type
    min_len: int = 0
    max_len: Optional[int] = None

    def describe(self) -> str:
        size = ""
        if self.max_len is not None and self.max_len == self.min_len:
            size = f" of {self.min_len}"
        elif self.min_len:
            size = f" of at least {self.min_len}"
        return f"a list{size} of {self.item.describe()}"

    def check(self, value, where, file):
        if not isinstance(value, list) or len(value) < self.min_len or \
                (self.max_len is not None and len(value) > self.max_len):
            raise self.fail(value, where, file)
        return [self.item.check(v, f"{where}[{i}]", file) for i, v in enumerate(value)]


@dataclass
class Field:
    type: Type
    default: Any = REQUIRED
    doc: str = ""


@dataclass
class Table(Type):
    """A table of declared keys; an unknown key is an error naming the known ones."""
    fields: Dict[str, Field] = field(default_factory=dict)
    doc: str = ""

    def describe(self) -> str:
        return "a table"

    def check(self, value, where, file):
        if not isinstance(value, dict):
            raise self.fail(value, where, file)
        prefix = f"{where}." if where else ""
        for key in value:
            if key not in self.fields:
                raise PagelabError(f"{file}: {prefix}{key}: unknown key (expected {', '.join(self.fields) or 'none'})")
        out = {}
        for key, f in self.fields.items():
            if key in value:
                out[key] = f.type.check(value[key], f"{prefix}{key}", file)
            elif f.default is REQUIRED:
                raise PagelabError(f"{file}: {prefix}{key}: missing; expected {f.type.describe()}")
            elif f.default is not None:
                # through the type, so that a table's default gets its own keys' defaults
                out[key] = f.type.check(copy.deepcopy(f.default), f"{prefix}{key}", file)
        return out


def ArrayOf(table: Table, min_len: int = 0) -> List_:  # noqa: N802 - [[key]] entries
    return List_(table, min_len=min_len)


def merged(*tables: Table) -> Table:
    """One table with the fields of all (later ones win)."""
    out: Dict[str, Field] = {}
    for t in tables:
        out.update(t.fields)
    return Table(out)


def check_file(data: Any, schema: Table, file: str) -> dict:
    """The file's data checked against ``schema``: defaults in, a one-line error for the
    first mistake."""
    return schema.check(data, "", file)


def describe_schema(schema: Table, prefix: str = "") -> List[str]:
    """Lines ``key: type (default: ...) -- doc`` for docs/experiments.md."""
    lines = []
    for key, f in schema.fields.items():
        default = "" if f.default is REQUIRED else f" (default {f.default!r})" if f.default is not None else ""
        lines.append(f"{prefix}{key}: {f.type.describe()}{default}" + (f" -- {f.doc}" if f.doc else ""))
        inner = f.type.item if isinstance(f.type, List_) else f.type
        if isinstance(inner, Table):
            lines += describe_schema(inner, prefix + key + ("[]." if isinstance(f.type, List_) else "."))
    return lines
