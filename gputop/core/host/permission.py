"""Who owns a process gputop may not touch, and who could: the words of every "permission denied"."""

from __future__ import annotations

import os


def me() -> str:
    """Who gputop acts as (the effective user)."""
    import pwd  # POSIX only, as /proc and signals are: imported where it is used

    uid = os.geteuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def owner_of(pid: int) -> str:
    """The user a process runs as, by name where the system knows one ("uid N" else)."""
    # Here, not at the top: `gputop doctor` imports this module for me() where psutil may be missing.
    import psutil

    try:
        return str(psutil.Process(pid).username())
    except (psutil.Error, KeyError):
        try:
            return f"uid {psutil.Process(pid).uids().real}"
        except psutil.Error:
            return "another user"


def denied(pid: int, verb: str) -> str:
    """Why gputop may not ``verb`` process ``pid``: its owner, who may, and who gputop is.

    ``owned by bob: only bob or root may signal it; gputop runs as alice``.
    """
    owner = owner_of(pid)
    allowed = "root" if owner == "root" else f"{owner} or root"
    return f"owned by {owner}: only {allowed} may {verb} it; gputop runs as {me()}"
