"""Every key of the main screen, declared once: the footer, help (F1) and the palette (Ctrl+P) read it.

Each key lives where it acts, and Textual's focus chain decides which act now:

- ``APP_BINDINGS``: over every screen but a dialog (help, alerts, freeze, refresh, a replay's keys, quit);
  their actions are the app's;
- ``MAIN_SCREEN_BINDINGS``: the main screen's own (``main_screen.py``): cards, strip, panel shown, owners, settings;
- ``TABLE_BINDINGS``: any process table's (the main panel's and the detail screen's): sort, tag, kill, open,
  the commands scrolled sideways;
- ``PANEL_BINDINGS``: the main panel's (``panel/process_panel.py``): filter, tree, one GPU, one user.

To add a key: a ``Binding`` in ``BINDINGS`` below (its description is the footer's word, its tooltip the
longer help text; its place in the list is its place in the footer and help), its action's name in the set
of the place where it acts, and an ``action_*`` there. If the action signals processes, acts on the live
machine, or moves a replay, name it in the matching set below too so ``check_action`` hides it where it
does not apply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual.binding import ActiveBinding, Binding, BindingType
from textual.keys import key_to_character

# Actions that send signals: gone from keys, footer, help and palette in read-only mode.
SIGNAL_ACTIONS = frozenset({"kill", "tag", "untag_all"})
# Actions that act on the live machine or its sampler: gone in a replay too.
LIVE_ACTIONS = SIGNAL_ACTIONS | {"freeze", "interval"}
# Actions that move a replay: only there.
REPLAY_ACTIONS = frozenset({"replay_pause", "replay_step", "replay_speed", "replay_jump"})
# Says why a key does nothing here (k in read-only mode or a replay): never listed in help or the palette.
REFUSALS = frozenset({"kill_refused"})
# Where each action's key lives (the rest are the main screen's own).
APP_ACTIONS = (
    frozenset({"help", "alert_log", "quit", "freeze", "interval", "redraw", "suspend_process"}) | REPLAY_ACTIONS
)
TABLE_ACTIONS = frozenset(
    {"sort_move", "sort_invert", "sort_menu", "sort_by", "tag", "untag_all", "kill", "kill_refused", "open_process",
     "command_scroll", "command_home", "command_end"}
)
PANEL_ACTIONS = frozenset(
    {"filter", "next_match", "pick_user", "toggle_tree", "only_gpu", "all_gpus", "pick_gpu", "detail_selected",
     "fold", "unfold"}
)
# Keys that are not bindings of the app, listed in help all the same.
NAVIGATION_HELP: tuple[tuple[str, str], ...] = (
    ("Tab, Shift+Tab", "Move the focus between the process panel and the GPU cards"),
    ("↑ ↓, PgUp PgDn, Home End", "Move the process cursor (choose a card while the cards have the focus; ← → too)"),
    ("Enter (on the cards)", "The chosen card's GPU detail; Esc goes back to the panel"),
)

BINDINGS: list[BindingType] = [
    Binding("f1,question_mark,h", "help", "Help", key_display="F1"),
    # A priority binding runs as the key arrives, so the keys typed after it reach the box.
    Binding(
        "slash,f4",
        "filter",
        "Filter",
        key_display="/",
        priority=True,
        tooltip="Filter: text (command, user, PID, container), re:REGEX, or is:idle for idle processes",
    ),
    Binding("n,f3", "next_match", "Next match of the filter", show=False),
    Binding("less_than_sign", "sort_move(-1)", "Sort column left", show=False),
    Binding("greater_than_sign", "sort_move(1)", "Sort", key_display="<>", tooltip="Sort column right"),
    Binding("I", "sort_invert", "Invert sort order", show=False),
    Binding("f6", "sort_menu", "Sort by…", show=False),
    Binding("M", "sort_by('gpu_memory')", "Sort by GPU memory", show=False),
    Binding("P", "sort_by('cpu')", "Sort by CPU %", show=False),
    Binding("T", "sort_by('time')", "Sort by run time", show=False),
    Binding("N", "sort_by('pid')", "Sort by PID", show=False),
    # nvitop's and htop's keys for a command longer than its column, in every process table; in a replay , and .
    # step (← → too, except on the main screen's panel).
    Binding("left", "command_scroll(-1)", "Scroll the commands left", show=False),
    Binding("right", "command_scroll(1)", "Scroll the commands right", show=False),
    Binding("ctrl+a", "command_home", "The start of every command", show=False),
    Binding("ctrl+e", "command_end", "The end of every command", show=False),
    Binding("u", "pick_user", "User", show=False),  # in help and the palette: the footer must fit 80 columns
    Binding("t,f5", "toggle_tree", "Tree", show=False, tooltip="Tree: workers under their launcher, "
            "GPU memory summed on the parent"),
    *(Binding(str(n), f"only_gpu({n})", f"Only GPU {n}", show=False) for n in range(10)),
    Binding("a", "all_gpus", "All GPUs", show=False),
    Binding("number_sign", "pick_gpu", "Only one GPU's processes (a list: GPUs 10 and up too)", show=False),
    Binding("escape", "clear_filter", "Clear filter", key_display="Esc"),
    Binding("space", "tag", "Tag process", show=False),
    Binding("space", "replay_pause", "Pause/play", key_display="Space"),
    Binding("full_stop,right", "replay_step(1)", "Step forward", show=False),
    Binding("comma,left", "replay_step(-1)", "Step back", show=False),
    Binding("right_square_bracket", "replay_speed(1)", "Faster", key_display="[]"),
    Binding("left_square_bracket", "replay_speed(-1)", "Slower", show=False),
    # Live, the same keys set the refresh rate (a live run has no replay speed): ] faster, [ slower.
    Binding("right_square_bracket", "interval(-1)", "Faster refresh", show=False),
    Binding("left_square_bracket", "interval(1)", "Slower refresh", show=False),
    Binding("j", "replay_jump", "Jump to a time"),
    Binding("U", "untag_all", "Untag all", show=False),
    Binding("k,f9", "kill", "Kill", key_display="k"),
    Binding("k,f9", "kill_refused", "Kill", show=False),
    Binding("g", "detail_selected", "GPU detail", show=False),
    Binding("enter", "open_process", "Process", key_display="Enter", tooltip="The process in full: command, parents, "
            "environment, devices, charts"),
    Binding("c", "toggle_compact", "Compact", show=False),
    # gputop's own p and s (htop's p shows program paths and s straces, neither of which gputop does): help says so.
    Binding("p", "toggle_processes", "Show/hide processes", show=False,
            tooltip="Show/hide the process panel (gputop's p; not htop's program path)"),
    Binding("s", "toggle_host", "Show/hide host strip", show=False,
            tooltip="Show/hide the host strip (gputop's s; not htop's strace)"),
    Binding("f", "freeze", "Freeze", show=False),  # in help and the palette: the footer must fit 80 columns
    # htop's habit in the tree view: - folds the subtree under the selected line, + unfolds it.
    Binding("minus", "fold", "Fold the subtree under the line (tree view)", show=False),
    Binding("plus", "unfold", "Unfold the subtree under the line (tree view)", show=False),
    Binding("G", "sort_by('growth')", "Sort by memory growth", show=False),
    Binding("D", "sort_by('idle')", "Sort by idle time", show=False),
    Binding("exclamation_mark", "alert_log", "Alerts", key_display="!"),
    Binding("o", "owners", "Owners", show=False, tooltip="Who holds the GPUs: by user, job, pod or container"),
    Binding("S", "save_settings", "Save settings", show=False),
    Binding("ctrl+l", "redraw", "Redraw the screen", show=False),
    # As in a shell, htop or less: the terminal back to the shell, gputop stopped until `fg`.
    Binding("ctrl+z", "suspend_process", "Suspend to the shell (fg comes back)", show=False),
    # F10: the footer shows it in the filter box too, where q is typed, not obeyed.
    Binding("q,f10", "quit", "Quit", key_display="F10", show=False),
    Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
]




def _bindings_of(actions: Callable[[str], bool]) -> list[BindingType]:
    """The bindings of BINDINGS whose action (without its arguments) ``actions`` names."""
    return [b for b in BINDINGS if isinstance(b, Binding) and actions(b.action.split("(")[0])]


APP_BINDINGS = _bindings_of(APP_ACTIONS.__contains__)
TABLE_BINDINGS = _bindings_of(TABLE_ACTIONS.__contains__)
PANEL_BINDINGS = _bindings_of(PANEL_ACTIONS.__contains__)
MAIN_SCREEN_BINDINGS = _bindings_of(lambda action: action not in APP_ACTIONS | TABLE_ACTIONS | PANEL_ACTIONS)
# Each action's place in BINDINGS: the footer lists the keys of every place in this one order.
_FOOTER_RANK = {binding.action: rank for rank, binding in enumerate(BINDINGS) if isinstance(binding, Binding)}


def footer_rank(binding: Binding, own: bool) -> tuple[int, int]:
    """Where a key goes in a footer: a screen's ``own`` keys and those not declared here (Esc Back, the
    filter box's Enter) first, in their order, then the keys declared here in their order."""
    rank = _FOOTER_RANK.get(binding.action)
    return (0, 0) if own or rank is None else (1, rank)


def in_footer_order(active: dict[str, ActiveBinding], own: object = None) -> dict[str, ActiveBinding]:
    """A screen's active keys in the footer's order; ``own``: the screen whose keys come first."""
    return dict(sorted(active.items(), key=lambda item: footer_rank(item[1].binding, item[1].node is own)))


def mode_allows(action: str, *, readonly: bool, replaying: bool) -> bool:
    """Whether an action exists in this mode (read-only, replay or live)."""
    if action in REFUSALS:
        return readonly or replaying
    if readonly and action in SIGNAL_ACTIONS:
        return False
    if replaying:
        return action not in LIVE_ACTIONS
    return action not in REPLAY_ACTIONS


def action_name(binding: Binding) -> str:
    """The action a binding runs, without its arguments: "sort_by" for "sort_by('pid')"."""
    return binding.action.split("(")[0]


def key_bindings(bindings: Iterable[BindingType]) -> list[Binding]:
    """The ``Binding`` objects of a BINDINGS list."""
    return [binding for binding in bindings if isinstance(binding, Binding)]


def help_entries(bindings: Iterable[Binding], allowed: Callable[[str], bool]) -> list[tuple[str, str]]:
    """(keys, description) for every binding whose action is ``allowed`` now, one line per action."""
    by_action: dict[str, tuple[list[str], str]] = {}
    for binding in bindings:
        if not allowed(action_name(binding)) or action_name(binding) in REFUSALS:
            continue
        # The footer's short word, or the longer words help has room for.
        action, description = binding.action, binding.tooltip or binding.description
        keys = binding.key
        if action.startswith("only_gpu("):
            # Ten bindings, one line of help.
            by_action.setdefault("only_gpu", (["0-9"], "Only that GPU's processes"))
            continue
        names, _description = by_action.setdefault(action, ([], description))
        names.extend(key_name(key) for key in keys.split(","))
    return [(", ".join(names), description) for names, description in by_action.values()]


def palette_entries(bindings: Iterable[Binding], allowed: Callable[[str], bool]) -> list[tuple[str, str, str]]:
    """(description, keys, action) for the command palette: each allowed action once."""
    seen: set[str] = set()
    entries = []
    for binding in bindings:
        name = action_name(binding)
        if binding.action in seen or not allowed(name) or name == "clear_filter" or name in REFUSALS:
            continue
        seen.add(binding.action)
        keys = ", ".join(key_name(key) for key in binding.key.split(","))
        entries.append((binding.description, f"key: {keys}", binding.action))
    return entries


_KEY_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "less_than_sign": "<",
    "greater_than_sign": ">",
    "plus": "+",
    "minus": "-",
    "space": "Space",
    "escape": "Esc",
    "enter": "Enter",
    "ctrl+c": "Ctrl+C",
    "left": "←",
    "right": "→",
}


def key_name(key: str) -> str:
    """How help shows a key: "!" for exclamation_mark, "F1" for f1."""
    key = key.strip()
    if key in _KEY_NAMES:
        return _KEY_NAMES[key]
    if key.startswith("f") and key[1:].isdigit():
        return key.upper()
    if key.startswith(("ctrl+", "shift+")):
        modifier, _plus, rest = key.partition("+")
        return f"{modifier.capitalize()}+{key_name(rest).upper() if len(rest) == 1 else key_name(rest)}"
    character = key_to_character(key)
    return character if character and character.isprintable() and not character.isspace() else key
