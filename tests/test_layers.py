"""The Python package is layered: each module imports only from its own layer or the
ones below, the import graph has no cycle, and no function body imports a pagelab
module (a local import is how a cycle hides). From the bottom:

    0 foundation   _core, version, files, progress, configs, fault_stats, suite_cache, suite_inputs
    1 figures      figures/*          (draw plain data; never run anything)
    2 API          api, system, gang, timed, numa, fault_analysis, capture, suite, kernel/*
    3 sweeps       sweeps/*           (spec, points, store, executor)
    4 experiments  experiments/*      (protocol, claims, runner, one module each)
    5 outputs      outputs/*          (report, readme: built from stored results)
    6 console      arguments, console, cli, kernel_cli, demo, bench, __main__

``pagelab/__init__.py`` re-exports the API (layers 0-3)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "pagelab"

LAYERS = {
    0: ["_core", "version", "files", "progress", "configs", "fault_stats", "suite_cache", "suite_inputs"],
    1: ["figures"],
    2: ["api", "system", "gang", "timed", "numa", "fault_analysis", "capture", "suite", "kernel"],
    3: ["sweeps"],
    4: ["experiments"],
    5: ["outputs"],
    6: ["arguments", "console", "cli", "kernel_cli", "demo", "bench", "__main__"],
}


def layer_of(module: str) -> int:
    top = module.split(".")[1] if module.startswith("pagelab.") else module
    for layer, names in LAYERS.items():
        if top in names:
            return layer
    raise AssertionError(f"{module}: not in any layer of tests/test_layers.py (add it)")


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def resolve(module: str, is_package: bool, node: ast.ImportFrom) -> list:
    """The pagelab modules an ``import from`` names (relative imports resolved)."""
    if node.level == 0:
        base = node.module or ""
    else:
        parts = module.split(".")
        if not is_package:
            parts = parts[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    if not base.startswith("pagelab"):
        return []
    out = []
    for alias in node.names:
        candidate = f"{base}.{alias.name}"
        path = PACKAGE.parent / Path(*candidate.split("."))
        if path.is_dir() or list(path.parent.glob(path.name + ".*")):  # a module (.py, or the engine's .so)
            out.append(candidate)
        else:
            out.append(base)
    return out


def func_name(node) -> str:
    return getattr(node, "name", "")


def graph():
    edges, local = {}, []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        targets = set()
        for node in ast.walk(tree):
            found = []
            if isinstance(node, ast.ImportFrom):
                found = resolve(module, path.name == "__init__.py", node)
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names if a.name.startswith("pagelab")]
            targets.update(t for t in found if t != module)
        for func in ast.walk(tree):
            lazy_ok = ((module != "pagelab" and layer_of(module) == 6)
                       or (func_name(func) == "__getattr__" and func in tree.body))
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and not lazy_ok:
                for node in ast.walk(func):
                    if isinstance(node, ast.ImportFrom) and resolve(module, path.name == "__init__.py", node):
                        local.append(f"{module}:{node.lineno} (in {func.name}): from {'.' * node.level}{node.module or ''}")
        edges[module] = targets
    return edges, local


def test_no_function_local_imports_below_the_console():
    _, local = graph()
    assert not local, "imports inside functions:\n" + "\n".join(local)


def test_every_import_goes_down_or_sideways():
    edges, _ = graph()
    bad = []
    for module, targets in edges.items():
        if module == "pagelab":
            assert all(layer_of(t) <= 3 for t in targets), targets
            continue
        for t in targets:
            if t == "pagelab":
                bad.append(f"{module} -> pagelab (import the module itself, not the package)")
            elif layer_of(t) > layer_of(module):
                bad.append(f"{module} (layer {layer_of(module)}) -> {t} (layer {layer_of(t)})")
    assert not bad, "\n".join(bad)


def test_no_import_cycle():
    edges, _ = graph()

    def parent_packages(m):
        parts = m.split(".")
        return {".".join(parts[:i]) for i in range(2, len(parts))}

    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in sorted(edges.get(m, ())):
            if t in parent_packages(m) or t == "pagelab":
                continue  # a submodule's own package runs first by Python's rules
            if state.get(t) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m)


def test_the_check_catches_a_violation(tmp_path, monkeypatch):
    """The layer check can fail: a figure module importing the API is caught."""
    fake = tmp_path / "pagelab"
    (fake / "figures").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "api.py").write_text("")
    (fake / "figures" / "__init__.py").write_text("")
    (fake / "figures" / "bad.py").write_text("from .. import api\n\ndef f():\n    from ..api import x\n")
    # the console's command-local import is allowed, and still an edge of the graph
    (fake / "cli.py").write_text("def cmd():\n    from .api import x\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    edges, local = graph()
    assert "pagelab.api" in edges["pagelab.figures.bad"]
    assert len(local) == 1 and "in f" in local[0]
    assert "pagelab.api" in edges["pagelab.cli"]
