"""Messages from the sampler thread to the app, posted thread-safely."""

from __future__ import annotations

from textual.message import Message


class TicksReady(Message):
    """Ticks wait in the app's hand-over (taken already: history, forecasts, alerts, recording).

    The message carries nothing: the app takes the newest tick and what the others raised from the
    hand-over, so one still queued can give way to a newer one and no tick's data is lost.
    """

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TicksReady)


class SamplerFailed(Message):
    """The sampler thread hit an error; it keeps going."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error
