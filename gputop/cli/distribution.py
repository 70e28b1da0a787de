"""Whether the ``gputop`` package imported is this project's, and a plain message when it is not.

The distribution is ``gputop-monitor``; another project on PyPI is called ``gputop`` and installs a
``gputop`` package and a ``gputop`` command of its own. Installed beside this one, its files replace
``gputop/__init__.py`` and its command imports this project's ``gputop.cli``: without this check the
user got ``TypeError: 'module' object is not callable``.
"""

from __future__ import annotations

import importlib.metadata
import sys

OURS = "gputop-monitor"


def shadowed_by() -> str | None:
    """What shadows this project's ``gputop`` package ("the distribution 'gputop' 0.3.0"), or None."""
    import gputop

    if getattr(gputop, "DISTRIBUTION", None) == OURS:
        return None
    try:
        return f"the distribution 'gputop' {importlib.metadata.version('gputop')}, another project,"
    except importlib.metadata.PackageNotFoundError:
        return f"another package ({getattr(gputop, '__file__', None) or 'of unknown origin'})"


def refuse_if_shadowed() -> None:
    """Exit with a one-line message (status 2) when another project's ``gputop`` shadows this one's."""
    other = shadowed_by()
    if other is None:
        return
    sys.stderr.write(
        f"gputop: {other} is installed over gputop-monitor's files, so the `gputop` package is no longer"
        " this one: run `pip uninstall -y gputop gputop-monitor`, then `pip install gputop-monitor`"
        " (or `pip install .` in its checkout)\n"
    )
    raise SystemExit(2)
