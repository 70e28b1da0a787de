"""#: pick the GPU whose processes the panel shows ("all" first), for machines with GPUs 10 and up."""

from __future__ import annotations

from rich.text import Text
from textual.widgets.option_list import Option

from gputop.core.format import fmt_bytes, safe_text
from gputop.core.model import GpuSample
from gputop.ui.screens.pick import PickScreen


class GpuPickScreen(PickScreen):
    """Returns a GPU's index (as text), ALL for every GPU, or None when cancelled."""

    ALL = "all"

    def __init__(self, gpus: tuple[GpuSample, ...], current: int | None) -> None:
        options = [Option(Text("all", style="bold"), id=self.ALL)]
        for gpu in gpus:
            count = sum(1 for _ in gpu.all_processes())
            label = Text.assemble(
                (f"{gpu.index:>2} ", "bold"),
                f"{safe_text(gpu.name, 24):<24} ",
                (f"{fmt_bytes(gpu.memory_used):>8}", "cyan"),
                f"  {count} process{'es' if count != 1 else ''}",
            )
            options.append(Option(label, id=str(gpu.index)))
        indices = [gpu.index for gpu in gpus]
        highlighted = 1 + indices.index(current) if current in indices else 0
        super().__init__("Show processes of GPU", options, highlighted, id="gpu-screen")
