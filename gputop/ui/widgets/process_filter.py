"""What the process panel shows: the filter (text, ``re:`` regex, ``is:idle``, an owner; one user;
one GPU). Plain logic, no widgets."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gputop.core.analysis.owners import owner_name
from gputop.core.format import safe_text
from gputop.core.model import ProcessSample
from gputop.ui.widgets.rows import ProcessRow

# The filter text that shows only idle processes (see core.analysis.diagnosis).
IDLE_FILTER = "is:idle"
# Filter text that shows one owner's processes: ``job:1234`` (or ``job:1234.0``, one step),
# ``pod:namespace/name``, ``container:name`` (see core.analysis.owners for the names).
OWNER_FILTERS = ("job", "pod", "container")


def owner_filter(text: str) -> tuple[str, str] | None:
    """(kind, name) of owner filter text (``job:1234``); None for other text."""
    kind, separator, name = text.partition(":")
    kind = kind.lower()
    return (kind, name) if separator and name and kind in OWNER_FILTERS else None


def _owner_matches(process: ProcessSample, kind: str, name: str) -> bool:
    if kind == "job" and process.job is not None and process.job.label == name:
        return True
    return owner_name(process, kind) == name


class FilterError(ValueError):
    """The filter text is not usable; the message says why."""


@dataclass(frozen=True, slots=True)
class ProcessFilter:
    """What the process panel shows: text or regex, one user, one GPU."""

    text: str = ""
    user: str | None = None
    gpu: int | None = None
    pattern: re.Pattern[str] | None = None

    @staticmethod
    def compile(text: str) -> re.Pattern[str] | None:
        """The pattern for filter text; raises FilterError for an invalid ``re:`` expression."""
        if not text or text.lower() == IDLE_FILTER or owner_filter(text) is not None:
            return None
        if text.startswith("re:"):
            try:
                return re.compile(text[3:], re.IGNORECASE)
            except re.error as error:
                raise FilterError(f"invalid regular expression: {error}") from None
        return re.compile(re.escape(text), re.IGNORECASE)

    def with_text(self, text: str) -> ProcessFilter:
        return ProcessFilter(text, self.user, self.gpu, self.compile(text))

    def with_user(self, user: str | None) -> ProcessFilter:
        return ProcessFilter(self.text, user, self.gpu, self.pattern)

    def with_gpu(self, gpu: int | None) -> ProcessFilter:
        return ProcessFilter(self.text, self.user, gpu, self.pattern)

    @property
    def active(self) -> bool:
        return bool(self.text) or self.user is not None or self.gpu is not None

    def matches(self, row: ProcessRow) -> bool:
        p = row.process
        if self.gpu is not None and p.gpu_index != self.gpu:
            return False
        if row.unattributed:
            # Not a process: it shows unless the filter asks for processes by what they are.
            return not self.text and self.user is None
        if self.user is not None and p.user != self.user:
            return False
        if self.text.lower() == IDLE_FILTER:
            return row.idle
        owner = owner_filter(self.text)
        if owner is not None:
            return _owner_matches(p, *owner)
        if self.pattern is None:
            return True
        fields = (p.command, p.name, p.user, str(p.pid), p.container, p.container_name)
        return any(self.pattern.search(field) for field in fields if field)

    def describe(self) -> str:
        parts = []
        if self.text:
            parts.append(f"/{safe_text(self.text)}")
        if self.user is not None:
            parts.append(f"user {safe_text(self.user)}")
        if self.gpu is not None:
            parts.append(f"GPU {self.gpu}")
        return " · ".join(parts)
