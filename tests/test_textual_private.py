"""Textual's and Rich's private names are used in ``gputop/ui/terminal/textual_private.py`` only, textual-serve's in
``gputop/cli/serve/textual_serve_private.py`` only, pynvml's in ``gputop/core/sources/nvml_gateway.py`` only, and
each still exists there with the shape it is used in."""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import inspect
import re
import textwrap
from pathlib import Path

import pynvml
import pytest

from gputop.cli.serve import textual_serve_private
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources.demo import DemoSource
from gputop.core.sources.nvml_gateway import PRIVATE_LOOKUP, binding_notice
from gputop.ui.app import GpuTopApp
from gputop.ui.terminal import textual_private
from gputop.ui.terminal.textual_private import check_internals

PACKAGE = Path(__file__).resolve().parent.parent / "gputop"
# The one module of gputop that may use each library's private names.
ALLOWED = {
    "textual": PACKAGE / "ui" / "terminal" / "textual_private.py",
    "rich": PACKAGE / "ui" / "terminal" / "textual_private.py",
    "textual_serve": PACKAGE / "cli" / "serve" / "textual_serve_private.py",
    # pynvml's lookup of a library function (PRIVATE_LOOKUP), guarded by a fallback to its public calls.
    "pynvml": PACKAGE / "core" / "sources" / "nvml_gateway.py",
}
FOREIGN = tuple(ALLOWED)
SELF_ATTRIBUTE = re.compile(r"self\.(_\w+)")
# Public despite the underscore: a namedtuple's own API.
NAMEDTUPLE_API = frozenset({"_replace", "_asdict", "_fields", "_field_defaults", "_make"})
# ctypes' documented way to describe and read a structure or array (a capture's codec reads any of
# pynvml's structures by its fields): public, whatever the underscores say.
CTYPES_API = frozenset({"_fields_", "_length_", "_type_"})


def _private(name: str) -> bool:
    dunder = name.startswith("__") and name.endswith("__")
    return name.startswith("_") and not dunder and name not in NAMEDTUPLE_API and name not in CTYPES_API


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _forbidden(path: Path) -> tuple[str, ...]:
    """The libraries whose private names the module at ``path`` may not use."""
    return tuple(package for package, allowed in ALLOWED.items() if allowed != path)


@functools.cache
def _own_private_names() -> frozenset[str]:
    """Every private name gputop itself defines (functions, classes, attributes, variables) outside the
    modules that may use a library's: a name set there (``self._process``) may be the library's."""
    names: set[str] = set()
    for path in [path for path in _modules() if path not in ALLOWED.values()]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return frozenset(name for name in names if _private(name))


@functools.cache
def _library_private_names(packages: tuple[str, ...]) -> frozenset[str]:
    """Every private name the libraries' sources define or use as an attribute."""
    names: set[str] = set()
    for package in packages:
        source = Path(importlib.import_module(package).__file__ or "")
        # A package's folder; a single-module library (pynvml.py) is its one file.
        for path in source.parent.rglob("*.py") if source.name == "__init__.py" else [source]:
            names.update(re.findall(r"(?:\.|def |class |^\s*)(_[A-Za-z]\w*)", path.read_text(), re.M))
    return frozenset(name for name in names if _private(name))


def private_uses(source: str, packages: tuple[str, ...] = FOREIGN) -> list[str]:
    """Where ``source`` imports, reads or calls up to a private name of one of ``packages``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in packages:
            if any(map(_private, node.module.split("."))):
                found.append(f"{node.lineno}: {node.module}")
            found += [f"{node.lineno}: {node.module}.{alias.name}" for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: {alias.name}"
                for alias in node.names
                if alias.name.split(".")[0] in packages and any(map(_private, alias.name.split(".")))
            ]
        elif (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and not _is_own(node.value)
            and not _is_os(node.value)
            and node.attr not in _own_private_names()
            and node.attr in _library_private_names(packages)
        ):
            # x._name that gputop does not define but the library does: theirs.
            found.append(f"{node.lineno}: .{node.attr}")
    return found


def _is_os(node: ast.expr) -> bool:
    """The ``os`` module: its ``_exit`` is the standard library's, whatever Textual names ``_exit``."""
    return isinstance(node, ast.Name) and node.id == "os"


def _is_super(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _is_own(node: ast.expr) -> bool:
    """``self``, ``cls`` or ``super()``: judged with the class's real bases, in the override test."""
    return _is_super(node) or (isinstance(node, ast.Name) and node.id in ("self", "cls"))


def _names_set_by(class_source: str) -> set[str]:
    """The private methods, class attributes, ``self._x`` and ``super()._x`` a class's own source defines or uses."""
    (node,) = ast.parse(textwrap.dedent(class_source)).body
    assert isinstance(node, ast.ClassDef)
    names = set(SELF_ATTRIBUTE.findall(class_source))
    names.update(n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and _is_super(n.value))
    for statement in node.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(statement.name)
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            names.add(statement.target.id)
        elif isinstance(statement, ast.Assign):
            names.update(target.id for target in statement.targets if isinstance(target, ast.Name))
    return {name for name in names if _private(name)}


@functools.cache
def _private_names_of(base: type) -> frozenset[str]:
    """The private names a library's class defines or sets on itself."""
    names = {name for name in vars(base) if _private(name)}
    with contextlib.suppress(OSError, TypeError):  # no source to read: its class attributes must do
        names.update(SELF_ATTRIBUTE.findall(inspect.getsource(base)))
    return frozenset(names)


def test_the_check_finds_private_imports_reads_and_overrides() -> None:
    source = textwrap.dedent(
        """
        from textual._compositor import ChopsUpdate
        import rich._wrap
        from textual.app import _private_thing
        from textual_serve._binary_encode import load
        def sgr(style, console, service):
            return style._link or console._color_system or service._build_environment()
        class Box(Input):
            async def _on_key(self, event):
                await super()._on_key(event)
        """
    )
    assert private_uses(source) == [
        "2: textual._compositor",
        "3: rich._wrap",
        "4: textual.app._private_thing",
        "5: textual_serve._binary_encode",
        "7: ._link",
        "7: ._color_system",
        "7: ._build_environment",
    ]
    assert private_uses(source, ("textual_serve",)) == ["5: textual_serve._binary_encode", "7: ._build_environment"]
    assert _names_set_by(source.split("\n", 7)[-1]) == {"_on_key"}


def test_no_module_uses_a_private_name_of_textual_rich_or_textual_serve_but_the_one_allowed() -> None:
    found = [
        f"{path.name}:{use}"
        for path in _modules()
        for use in private_uses(path.read_text(), _forbidden(path))
    ]
    assert found == []


def test_no_class_overrides_a_private_name_of_textual_rich_or_textual_serve_but_in_the_one_allowed_module() -> None:
    found = []
    for path in _modules():
        if path.name == "__main__.py":  # importing it would run gputop
            continue
        module_name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = importlib.import_module(module_name)
        forbidden = _forbidden(path)
        for _name, cls in inspect.getmembers(module, inspect.isclass):
            bases = [base for base in cls.__mro__[1:] if base.__module__.split(".")[0] in forbidden]
            if cls.__module__ != module_name or not bases:
                continue
            theirs = set().union(*(_private_names_of(base) for base in bases))
            # A private name of our own that Textual or Rich also uses on the same object overrides theirs.
            found += [f"{path.name}: {cls.__name__}.{name}" for name in _names_set_by(inspect.getsource(cls)) & theirs]
    assert found == []


def test_the_private_names_the_writer_needs_exist_in_this_textual() -> None:
    assert check_internals() is None


def test_a_private_name_of_another_shape_turns_the_writer_off(monkeypatch: pytest.MonkeyPatch) -> None:
    class LayoutUpdate:  # as a Textual that renamed the parameters would have it
        def __init__(self, lines: object) -> None:
            self.lines = lines

    monkeypatch.setattr(textual_private, "LayoutUpdate", LayoutUpdate)
    assert check_internals() == "LayoutUpdate.__init__ takes (self, lines), expected (self, strips, region)"


NOTICE = "textual._compositor cannot be imported; Textual draws the screen itself"


@pytest.mark.parametrize(("debug", "said"), [(False, []), (True, [NOTICE])])
async def test_only_debug_says_at_start_that_textual_draws_the_screen(
    monkeypatch: pytest.MonkeyPatch, debug: bool, said: list[str]
) -> None:
    monkeypatch.setattr(textual_private, "check_internals", lambda: "textual._compositor cannot be imported")
    app = GpuTopApp(Sampler(DemoSource(gpu_count=1, seed=1)), RunConfig(debug=debug), start_sampler=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.changed_cells_off == "textual._compositor cannot be imported"
        assert [n.message for n in app.messages.shown() if n.title == "Full redraw"] == said


def test_the_private_names_serve_needs_exist_in_this_textual_serve() -> None:
    assert textual_serve_private.check_internals() is None


def test_a_textual_serve_whose_private_names_changed_is_named_by_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    class Renamed(textual_serve_private.AppService):  # as a textual-serve that renamed a parameter would have it
        def _build_environment(self, size: tuple[int, int] = (80, 24)) -> dict[str, str]:
            return {}

    monkeypatch.setattr(textual_serve_private, "AppService", Renamed)
    assert textual_serve_private.check_internals() == (
        "AppService._build_environment takes (self, size), expected (self, width, height)"
    )


def test_the_private_pynvml_lookup_exists_in_this_nvidia_ml_py() -> None:
    assert binding_notice() is None
    assert callable(getattr(pynvml, PRIVATE_LOOKUP))


def test_the_check_finds_a_private_pynvml_name_outside_the_gateway() -> None:
    source = "import pynvml\nfn = pynvml._nvmlGetFunctionPointer('nvmlDeviceGetName')\n"
    assert private_uses(source, ("pynvml",)) == ["2: ._nvmlGetFunctionPointer"]
