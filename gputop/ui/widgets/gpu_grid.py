"""The grid of GPU cards: one card per GPU, laid out as the layout plan says."""

from __future__ import annotations

from collections.abc import Callable

from textual.containers import Grid

from gputop.core.diagnosis import Diagnoses
from gputop.core.forecast import Forecasts
from gputop.core.history import History
from gputop.core.model import Snapshot
from gputop.ui.layout import CardLayout
from gputop.ui.widgets.gpu_card import GpuCard


class GpuGrid(Grid):
    """Cards for the GPUs of the last snapshot: new GPUs get a card, gone ones lose theirs."""

    def __init__(self, id: str) -> None:
        super().__init__(id=id)
        self._columns = 1

    def show(
        self,
        snapshot: Snapshot,
        layout: CardLayout,
        history: History,
        forecasts: Forecasts | None,
        alert_kinds: Callable[[int], tuple[str, ...]],
        diagnoses: Diagnoses | None = None,
    ) -> None:
        """Show each GPU of ``snapshot`` on its card, with its history, forecasts, alerts and diagnosis."""
        if layout.columns != self._columns:
            self._columns = layout.columns
            self.styles.grid_size_columns = layout.columns
        cards = {card.index: card for card in self.query(GpuCard)}
        wanted = {gpu.index for gpu in snapshot.gpus}
        for index, card in cards.items():
            if index not in wanted:
                card.remove()
        new_cards = [GpuCard(gpu.index) for gpu in snapshot.gpus if gpu.index not in cards]
        cards.update((card.index, card) for card in new_cards)
        for position, gpu in enumerate(snapshot.gpus):
            # Cards side by side share their row's height, so borders line up.
            cards[gpu.index].show(
                gpu,
                history.gpus.get(gpu.index),
                layout.compact,
                layout.height_of(position),
                forecast=None if forecasts is None else forecasts.gpus.get(gpu.index),
                mig_forecasts=None
                if forecasts is None
                else {mig: f for (index, mig), f in forecasts.migs.items() if index == gpu.index},
                alert_kinds=alert_kinds(gpu.index),
                now=snapshot.timestamp,
                diagnosis=None if diagnoses is None else diagnoses.gpus.get(gpu.index),
            )
        if new_cards:
            self.mount_all(new_cards)
        self.styles.grid_rows = " ".join(str(h) for h in layout.heights) or "1"
        self.styles.height = sum(layout.heights)
