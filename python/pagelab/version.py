"""Which pagelab produced a result: the package version, the engine version and the git
commit the engine was built from (recorded by crates/python/build.rs). Every result file
and report carries this, so a number can be traced to the code that computed it."""

from __future__ import annotations

from . import _core


def package_version() -> str:
    """The installed distribution's version (pyproject.toml), else the engine's."""
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python < 3.8
        return _core.ENGINE_VERSION
    try:
        return version("pagelab")
    except PackageNotFoundError:
        return _core.ENGINE_VERSION


def build_info() -> dict:
    """{"pagelab": version, "engine": engine version, "commit": git commit or "unknown"}."""
    return {"pagelab": package_version(), "engine": _core.ENGINE_VERSION,
            "commit": getattr(_core, "GIT_COMMIT", "unknown")}


def version_line() -> str:
    """The line `pagelab --version` prints."""
    info = build_info()
    return f"pagelab {info['pagelab']} (engine {info['engine']}, commit {info['commit']})"
