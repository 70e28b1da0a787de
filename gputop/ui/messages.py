"""Messages from the sampler thread to the app: one per tick, posted thread-safely."""

from __future__ import annotations

from textual.message import Message

from gputop.core.model import Snapshot


class SnapshotReady(Message):
    """A new sample from the sampler thread; a newer one replaces one not yet handled."""

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotReady)


class SamplerFailed(Message):
    """The sampler thread hit an error; it keeps going."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error
