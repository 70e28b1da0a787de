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
from collections.abc import Sequence

from gputop.core.text_cut import ELLIPSIS, cells, cut_end, head, keep_span, last_start, tail, window

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


# What the tree draws before a command: its branches.
_GUIDE = "├└│─ "


def fit_command(text: str, width: int, keep: tuple[int, int] | None = None, start: int = 0) -> str:
    """``text`` in ``width`` cells, cut in the middle: its start up to the script, then "…", then its end,
    where the arguments that tell ranks apart are (``python3 train.py …l-rank 1``). Cut at the end, eight
    ranks of one job at 80 columns read alike.

    ``keep`` (a span of ``text``: what tells it from its siblings, or what a filter matched) stays in
    view: ``python3 train.py …--local-rank 2 --config…`` when the end has no room for it. ``start`` > 0:
    the column scrolled sideways, ``text`` from that character on (no further than its end shows).
    """
    if start > 0:
        return window(text, min(start, last_start(text, width)), width)
    if cells(text) <= width:
        return text
    if width < 16:
        return cut_end(text, width) if keep is None else keep_span(text, width, 0, keep)
    command = text.lstrip(_GUIDE)
    guide = len(text) - len(command)
    if guide > width // 3:
        # A deep tree: the branches give way (all but the nearest), not the command.
        dropped = guide - 3
        text = ELLIPSIS + text[dropped:]
        keep = None if keep is None else (keep[0] - dropped + 1, keep[1] - dropped + 1)
        guide = 4
        if cells(text) <= width:
            return text
    words = command.split(" ")
    # The program, its options and its script (its first word not an option), and a space.
    script = next((n for n, word in enumerate(words[1:], 1) if not word.startswith("-")), len(words) - 1)
    lead = head(text[: guide + len(" ".join(words[: script + 1])) + 1], (width - 1) * 2 // 3)
    end = tail(text, width - 1 - cells(lead))
    if keep is None or keep[0] >= len(text) - len(end) or keep[1] <= len(lead):
        return lead + ELLIPSIS + end
    return keep_span(text, width, len(lead), keep)


def sibling_spans(texts: Sequence[str]) -> list[tuple[int, int] | None]:
    """For each command of a list, the span of it that differs from its siblings (the commands of the
    list with its program and script: ranks, trials, workers), from the option before the first word
    that differs to the last; None where it has no sibling or reads as they do."""
    parsed = []
    groups: dict[tuple[str, ...], list[int]] = {}
    for number, text in enumerate(texts):
        body = text.lstrip(_GUIDE)
        words = body.split(" ")
        parsed.append((len(text) - len(body), words))
        groups.setdefault(tuple(words[:2]), []).append(number)
    spans: list[tuple[int, int] | None] = [None] * len(texts)
    for members in groups.values():
        if len(members) < 2:
            continue
        by_count: dict[int, list[int]] = {}
        for number in members:
            by_count.setdefault(len(parsed[number][1]), []).append(number)
        for count, alike in by_count.items():
            # Where the siblings of one length differ, word by word; against the other lengths, the
            # words between what they start and end with alike.
            varying = [n for n in range(count) if len({parsed[m][1][n] for m in alike}) > 1]
            others = [same[0] for other, same in by_count.items() if other != count]
            for number in alike:
                words = parsed[number][1]
                first, last = (varying[0], varying[-1] + 1) if varying else (count, 0)
                for other in others:
                    prefix, suffix = _alike_ends(words, parsed[other][1])
                    first, last = min(first, prefix), max(last, count - suffix)
                if first < last:
                    spans[number] = _char_span(parsed[number][0], words, first, last)
    return spans


def _alike_ends(words: list[str], other: list[str]) -> tuple[int, int]:
    """How many words two commands start with alike, and end with alike (not overlapping)."""
    most = min(len(words), len(other))
    prefix = next((n for n in range(most) if words[n] != other[n]), most)
    suffix = next((n for n in range(most - prefix) if words[-1 - n] != other[-1 - n]), most - prefix)
    return prefix, suffix


def _char_span(offset: int, words: list[str], first: int, last: int) -> tuple[int, int]:
    """Where words ``first`` to ``last`` are in the text, with the option they are the value of."""
    if first > 0 and words[first - 1].startswith("-") and not words[first].startswith("-"):
        first -= 1
    start = offset + sum(len(word) + 1 for word in words[:first])
    return start, start + len(" ".join(words[first:last]))
