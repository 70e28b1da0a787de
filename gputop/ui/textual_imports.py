"""How the TUI is imported: without two modules Textual imports and gputop's TUI never uses.

This module runs before Textual is imported, so it cannot live in ``textual_private`` (which
imports ``textual.app``); it is the one other module that may name a private Textual module
(``tests/test_textual_private.py`` allows it ``textual._types`` and nothing else).

- **ssl.** asyncio imports it for TLS, which the TUI never speaks; it loads OpenSSL, 4 MiB of the
  TUI's memory. While the TUI is imported it is blocked, and asyncio runs as on a Python built
  without ssl; an ``import ssl`` after that still works.
- **textual.types.** The command palette imports one alias from it, and it imports the widget
  modules of DirectoryTree, Tree, Select and Placeholder for aliases of their own (0.45 MiB and
  about 20 ms of start-up). A stand-in takes its place in ``sys.modules``, holding the names
  ``textual.types`` takes from ``textual._types`` (read from its source; the same objects). Any
  other name asked of the stand-in imports the real module, whose names it then holds too. If
  that source cannot be read, or holds no such import, the real module is imported as before.
"""

from __future__ import annotations

import ast
import gc
import importlib.util
import sys
from collections.abc import Callable
from importlib.machinery import ModuleSpec
from types import ModuleType

_TYPES = "textual.types"
_CHEAP = "textual._types"


class _TypesStandIn(ModuleType):
    """``textual.types`` until a name it does not hold is asked for; then the real module."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name != "__all__":
            # The import system asks every module for __path__ (is it a package?), and others
            # for their own dunder names: none of them is a name of textual.types.
            raise AttributeError(name)
        real = sys.modules.get(_TYPES)
        if real is None or real is self:
            real = self._import_real()
        return getattr(real, name)

    def _import_real(self) -> ModuleType:
        spec = self.__spec__
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {_TYPES}")
        real = importlib.util.module_from_spec(spec)
        sys.modules[_TYPES] = real
        try:
            spec.loader.exec_module(real)
        except BaseException:
            sys.modules[_TYPES] = self
            raise
        vars(self).update(vars(real))
        _bind(real)
        return real


def _bind(module: ModuleType) -> None:
    """Make ``module`` the package's ``types`` attribute, as an import of it would."""
    package = sys.modules.get(module.__name__.rpartition(".")[0])
    if package is not None:
        setattr(package, module.__name__.rpartition(".")[2], module)


def _cheap_names(spec: ModuleSpec) -> list[str] | None:
    """The names the module of ``spec`` imports from textual._types; None if its source cannot say."""
    try:
        source = spec.loader.get_source(spec.name) if spec.loader is not None else None  # type: ignore[attr-defined]
        tree = ast.parse(source or "")
    except (AttributeError, ImportError, OSError, SyntaxError, ValueError):
        return None
    names = [
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == _CHEAP and node.level == 0
        for alias in node.names
        if alias.asname is None and alias.name != "*"
    ]
    return names or None


def defer_textual_types() -> bool:
    """Put the stand-in for ``textual.types`` in ``sys.modules``; False (nothing done) if it cannot."""
    if _TYPES in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(_TYPES)
    except (ImportError, ValueError):
        return False
    names = None if spec is None else _cheap_names(spec)
    if spec is None or names is None:
        return False
    try:
        from textual import _types as cheap
    except ImportError:
        return False
    if not all(hasattr(cheap, name) for name in names):
        return False
    stand_in = _TypesStandIn(_TYPES)
    stand_in.__spec__, stand_in.__loader__, stand_in.__file__ = spec, spec.loader, spec.origin
    stand_in.__package__ = spec.parent
    setattr(stand_in, "__cached__", spec.cached)  # noqa: B010 - ModuleType does not declare it
    for name in names:
        setattr(stand_in, name, getattr(cheap, name))
    sys.modules[_TYPES] = stand_in
    _bind(stand_in)
    return True


def load_tui() -> Callable[..., int]:
    """Import the TUI without ssl and with the stand-in for ``textual.types``; its ``run_tui``."""
    blocked = "ssl" not in sys.modules
    if blocked:
        sys.modules["ssl"] = None  # type: ignore[assignment]
    # What is imported lives as long as the process: the collector need not look at it, during the
    # import (a tenth of its CPU) or after. Each full collection would otherwise walk every object
    # of Textual, Rich and gputop (40-60 ms here).
    collecting = gc.isenabled()
    gc.disable()
    try:
        defer_textual_types()
        from gputop.ui.app import run_tui
    finally:
        if blocked and "ssl" in sys.modules and sys.modules["ssl"] is None:
            del sys.modules["ssl"]
        gc.freeze()
        if collecting:
            gc.enable()
    return run_tui


__all__ = ["defer_textual_types", "load_tui"]
