"""A command line as the lists show it: the program's base name, its script and its arguments.

``/home/alice/.pyenv/versions/3.11.7/bin/python3 train.py --local-rank 0`` fills 80 columns with
the interpreter's path before the rank; every Python row would start alike. The lists (the panel,
the tree, the kill dialog, ``--once``) show ``python3 train.py --local-rank 0`` instead, and
a console script started through its interpreter (``…/bin/python3 …/bin/torchrun --nproc-per-node
4 train.py``, which is how ``torchrun`` reads in /proc) as ``torchrun --nproc-per-node 4
train.py``. Only the process screen shows the command line as it is.

The command line arrives as /proc gives it, its arguments joined by spaces, so a path with a space
in it cannot be told from two arguments: only the first word is ever shortened, and a script only
when it is a path.
"""

from __future__ import annotations

import posixpath
import re

# Interpreters and shells whose first non-option argument is the program that runs: python3.11, pypy3, ...
_INTERPRETER = re.compile(r"(python|pypy|perl|ruby|node|Rscript|julia|bash|sh|dash|zsh)[0-9.]*[mdu]?\Z")
# Options that take a value as the next word, so that word is not the script (python -X dev x.py).
_OPTION_WITH_VALUE = frozenset({"-X", "-W", "-Q"})


# A path: parts of letters, digits and ._+@~- between slashes. Anything else with a slash in it
# (markup such as "[b]x[/b]" in a hostile command line) is not shortened.
_PATH = re.compile(r"[\w.+@~-]*(/[\w.+@~-]*)+\Z")


def _base(word: str) -> str:
    """The last part of a path; a word that is not a path (or ends in "/") stays whole."""
    if not _PATH.match(word):
        return word
    base = posixpath.basename(word)
    return base or word


def _script_index(words: list[str]) -> int | None:
    """Where the script an interpreter runs is among ``words`` (after the interpreter); None: none."""
    index = 1
    while index < len(words):
        word = words[index]
        if word in ("-m", "-c", "-"):
            return None  # a module, inline code or stdin: the words after it say what runs
        if not word.startswith("-"):
            return index
        index += 2 if word in _OPTION_WITH_VALUE else 1
    return None


def command_text(command: str | None, name: str | None = None) -> str:
    """``command`` (arguments joined by spaces) as the lists show it; ``name`` when it is empty.

    A kernel thread has no command line: its name (``kworker/0:1``) is shown whole, not as a path.
    """
    if not command or not command.strip():
        return name or ""
    if command == name:
        return command  # /proc gave no arguments, only the name: it is not a path
    words = command.split(" ")
    program = _base(words[0])
    if _INTERPRETER.match(program):
        script = _script_index(words)
        if script is not None and _PATH.match(words[script]):
            runs = _base(words[script])
            if posixpath.basename(posixpath.dirname(words[script])) == "bin" and "." not in runs:
                # A console script (torchrun, accelerate, deepspeed): its name says what runs.
                return " ".join([runs, *words[script + 1 :]])
            words[script] = runs
    return " ".join([program, *words[1:]])


def fit_command(text: str, width: int) -> str:
    """``text`` in ``width`` characters, cut in the middle: its start up to the script, then "…",
    then its end, where the arguments that tell ranks apart are (``python3 train.py …l-rank 1``).

    Cut at the end, eight ranks of one job at 80 columns read alike.
    """
    if len(text) <= width:
        return text
    if width < 16:
        return text[: max(0, width - 1)] + "…"
    command = text.lstrip("├└│─ ")  # after the branches the tree draws before it
    guide = len(text) - len(command)
    if guide > width // 3:
        # A deep tree: the branches give way (all but the nearest), not the command.
        text = "…" + text[guide - 3 :]
        guide = 4
        if len(text) <= width:
            return text
    words = command.split(" ")
    # The program, its options and its script (its first word not an option), and a space.
    script = next((n for n, word in enumerate(words[1:], 1) if not word.startswith("-")), len(words) - 1)
    head = guide + len(" ".join(words[: script + 1])) + 1
    head = min(head, (width - 1) * 2 // 3)
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]
