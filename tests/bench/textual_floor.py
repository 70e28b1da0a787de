"""The floor under any Textual monitor: a Textual app that shows one line and changes it each second.

Run by bench_overhead.py beside the monitors (``--only textual``): it reads no GPU and no process,
so what it costs is Textual's own (its input thread's ten wake-ups a second, a frame a second),
the part of gputop's running CPU that no change to gputop's drawing can take away.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static


class Floor(App[None]):
    BINDINGS = [("q", "quit", "Quit")]

    def compose(self) -> ComposeResult:
        yield Static("GPU 0  80.0 GiB", id="line")

    def on_mount(self) -> None:
        self.ticks = 0
        self.set_interval(1.0, self.tick)

    def tick(self) -> None:
        self.ticks += 1
        self.query_one("#line", Static).update(f"GPU 0  80.0 GiB  tick {self.ticks}")


if __name__ == "__main__":
    Floor().run()
