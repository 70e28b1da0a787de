"""The import direction ``cli → ui → core`` and no cycle between gputop's modules, read from the source with ast.

Every import counts for the direction (one made inside a function to start faster is still a dependency);
only what runs when a module is imported counts for cycles (not the bodies of functions, not
``if TYPE_CHECKING:``).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator
from pathlib import Path

import gputop

PACKAGE = Path(gputop.__file__).resolve().parent
# Lowest first: a module may import its own layer and those below it, never one above.
LAYERS = ("core", "ui", "cli")


def module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


MODULES = module_names()


def layer(module: str) -> str:
    """The layer of a gputop module: ``gputop`` itself (its version) counts as core, ``__main__`` as cli."""
    parts = module.split(".")
    if len(parts) == 1:
        return "core"
    return "cli" if parts[1] == "__main__" else parts[1]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(nodes: list[ast.stmt], at_import_time: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not at_import_time:
                yield from (n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))
            elif isinstance(node, ast.ClassDef):  # a class body runs at import time; its methods do not
                yield from _imports(node.body, at_import_time)
        elif isinstance(node, ast.If) and at_import_time and _is_type_checking(node):
            yield from _imports(node.orelse, at_import_time)
        else:  # if / try / with at module level: their bodies run when the module is imported
            for field in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, field, []):
                    yield from _imports(child.body if isinstance(child, ast.ExceptHandler) else [child], at_import_time)


@functools.cache
def parsed(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text(encoding="utf-8"))


def imported_modules(module: str, at_import_time: bool) -> set[str]:
    """The gputop modules that ``module`` imports (``from a import b`` names module ``a.b`` when there is one)."""
    tree = parsed(module)
    found = set()
    for node in _imports(tree.body, at_import_time):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            assert node.level == 0, f"{module}: relative import"
            base = node.module or ""
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        found |= {t for t in targets if t.split(".")[0] == "gputop"}
    return found


@functools.cache
def graph(at_import_time: bool) -> dict[str, set[str]]:
    return {module: imported_modules(module, at_import_time) - {module} for module in MODULES}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_module_is_in_a_layer_and_the_layers_are_the_packages() -> None:
    assert {layer(m) for m in MODULES} == set(LAYERS)
    assert {"gputop.cli.main", "gputop.ui.app", "gputop.core.sampler", "gputop.core.sources.factory"} <= set(MODULES)


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in graph(at_import_time=False).items()
        for target in targets
        if LAYERS.index(layer(target)) > LAYERS.index(layer(module))
    )
    assert upward == []


def test_no_cycle_between_modules_at_import_time() -> None:
    assert cycles(graph(at_import_time=True)) == []


def test_core_and_cli_have_no_cycle_even_through_imports_made_in_functions() -> None:
    # The command line once had two (cli <-> commands for open_source, cli_args <-> serve.command); the UI's
    # once ran through the app, which its parts imported (the next test holds that).
    edges = graph(at_import_time=False)
    outside_ui = {m: {t for t in targets if layer(t) != "ui"} for m, targets in edges.items() if layer(m) != "ui"}
    assert cycles(outside_ui) == []


def test_no_part_of_the_ui_reaches_back_to_the_app() -> None:
    # Issue 23 item 1: the app makes the parts and gives each what it uses (the screens over the main one
    # their LiveData); no UI module imports the app, not even for a type hint (the command line imports it
    # to start the TUI), so the UI has no cycle at all, even through imports made in functions.
    edges = graph(at_import_time=False)
    assert {m for m, targets in edges.items() if "gputop.ui.app" in targets and layer(m) == "ui"} == set()
    assert cycles(edges) == []


def app_names_reached(modules: Iterable[str]) -> list[str]:
    """Each ``self.app.NAME`` in ``modules`` whose NAME is not Textual's App's own (an attribute gputop's app adds)."""
    from textual.app import App

    textual_app = set(dir(App()))
    return sorted(
        f"{module}: self.app.{node.attr}"
        for module in modules
        for node in ast.walk(parsed(module))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "app"
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "self"
        and node.attr not in textual_app
    )


# The cluster view, bottom to top: the helpers (what a row draws, the messages, the refresh the app hands down),
# the widgets, the screens the first screen opens, the first screen, its app, its entry (``run_cluster``). A
# module imports its own rank and those below, never one above; a new module is given its rank here.
CLUSTER_TIERS = (  # "" is the package itself
    ("", "messages", "refresh", "render", "summary"),
    ("host_list", "filter_bar"),
    ("host_screen", "gpu_list", "owner_screen"),
    ("cluster_screen",),
    ("view",),
    ("app",),
)
CLUSTER_RANKS = {
    "gputop.ui.cluster" + (f".{name}" if name else ""): rank
    for rank, names in enumerate(CLUSTER_TIERS)
    for name in names
}


def test_the_cluster_view_imports_one_way_screens_above_widgets_above_helpers() -> None:
    # Issue 36: the cluster app is the composition root; no screen or widget imports it (the entry alone does).
    assert {m for m in MODULES if m.startswith("gputop.ui.cluster")} == set(CLUSTER_RANKS)
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in graph(at_import_time=False).items()
        if module in CLUSTER_RANKS
        for target in targets
        if target in CLUSTER_RANKS and CLUSTER_RANKS[target] > CLUSTER_RANKS[module]
    )
    assert upward == []


def test_the_cluster_view_s_screens_and_widgets_reach_their_app_only_through_textual_s_api() -> None:
    # Issue 36: a screen is handed what it shows (a refresh, a reader); it calls nothing the cluster app adds
    # (the GPU list once opened a host through ``self.app.open_host``).
    assert app_names_reached(module for module, rank in CLUSTER_RANKS.items() if 1 <= rank <= 3) == []


def test_the_checks_see_an_upward_import_and_a_cycle() -> None:
    # The reader and the cycle finder themselves, on what they must catch.
    edges = graph(at_import_time=False)
    assert "gputop.core.sources.factory" in edges["gputop.cli.main"]  # `from X import name`: the module X
    # `from gputop.core.output import monitoring`, inside a function: a dependency, not run at import time
    assert "gputop.core.output.monitoring" in edges["gputop.cli.commands"]
    assert "gputop.core.output.monitoring" not in graph(at_import_time=True)["gputop.cli.commands"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert layer("gputop.__main__") == "cli" and layer("gputop") == "core"


# The main TUI's packages, bottom to top: helpers that draw nothing (the layout's arithmetic, the key map, the
# messages, the alert feed, the terminal's plumbing), the widgets, the screens opened over the main one, the
# process panel and its parts, the controls the app wires, the main screen, and the composition root. A module
# imports its own rank and those below it, never one above (Harlequin's components never import the app).
UI_TIERS = (
    ("gputop.ui", "gputop.ui.layout", "gputop.ui.keymap", "gputop.ui.messages", "gputop.ui.feed", "gputop.ui.terminal"),
    ("gputop.ui.widgets",),
    ("gputop.ui.screens",),
    ("gputop.ui.panel",),
    ("gputop.ui.controls",),
    ("gputop.ui.main_screen", "gputop.ui.cluster"),
    ("gputop.ui.app",),
)


def ui_rank(module: str) -> int:
    """The rank of a module of the main TUI: that of its package (or of itself, for a module of ``gputop.ui``)."""
    parts = module.split(".")
    named = ".".join(parts[:3])
    for rank, names in enumerate(UI_TIERS):
        if named in names or (len(parts) == 2 and module in names):
            return rank
    raise AssertionError(f"{module} has no rank in UI_TIERS: give it one")


def test_the_ui_packages_import_one_way_screens_above_widgets_above_helpers() -> None:
    # Issue 36 item 3: no import between ui/ packages runs both ways.
    ui_modules = [m for m in MODULES if layer(m) == "ui"]
    upward = {
        f"{module} -> {target}"
        for module in ui_modules
        for target in graph(at_import_time=False)[module]
        if layer(target) == "ui" and ui_rank(target) > ui_rank(module)
    }
    assert upward == set()


def test_the_main_tui_s_screens_panel_and_widgets_reach_the_app_only_through_textual_s_api() -> None:
    # Issue 36 item 1: one tick, one way. The app hands the main screen each tick, and the screens over it
    # theirs; nothing below the app calls it for data (the main screen once asked the app for its cards'
    # contents, the detail table found its parts through ``getattr(self.app, "panel_keys")``).
    below_the_app = [m for m in MODULES if layer(m) == "ui" and ui_rank(m) < ui_rank("gputop.ui.app")]
    assert app_names_reached(m for m in below_the_app if not m.startswith("gputop.ui.cluster")) == []
    assert any(m.startswith("gputop.ui.widgets.") for m in below_the_app) and "gputop.ui.main_screen" in below_the_app


def test_every_module_reads_in_one_sitting() -> None:
    # Issue 36 item 3: no module over 400 lines; one that grows past it is split along its seams.
    long = sorted(
        f"{module}: {lines}"
        for module, path in MODULES.items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 400
    )
    assert long == []
