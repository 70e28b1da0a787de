"""The grid of GPU cards: one card per GPU, laid out as the layout plan says.

The grid, not each card, takes the focus (Tab): one stop however many GPUs there are. While it
has the focus, the arrows choose a card (marked), Enter opens its GPU's detail, Esc goes back
to the process panel.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.binding import Binding
from textual.containers import Grid
from textual.dom import NoScreen
from textual.errors import NoWidget
from textual.geometry import Offset, Region
from textual.screen import Screen
from textual.widget import Widget

from gputop.ui.layout import CardLayout
from gputop.ui.widgets.card_lines import CardContent
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.still_frame import StillFrame


class GpuGrid(Grid, StillFrame, can_focus=True):
    """Cards for the GPUs of the last snapshot: new GPUs get a card, gone ones lose theirs."""

    BINDINGS = [
        Binding("left", "choose(-1)", "Card", key_display="←→↑↓", show=False),
        Binding("right", "choose(1)", "Card", show=False),
        Binding("up", "choose_row(-1)", "Card above", show=False),
        Binding("down", "choose_row(1)", "Card below", show=False),
        Binding("home", "choose(-1000)", "First card", show=False),
        Binding("end", "choose(1000)", "Last card", show=False),
        Binding("enter", "open_detail", "GPU detail", key_display="Enter"),
        Binding("escape", "leave", "Processes", key_display="Esc"),
    ]

    def __init__(self, id: str) -> None:
        super().__init__(id=id)
        self._columns = 1
        self.chosen: int | None = None  # the GPU index of the chosen card
        self.filtered: int | None = None  # the GPU the process panel is filtered to
        self._heights: tuple[int, ...] | None = None  # the row heights set last
        self._cards: dict[int, GpuCard] = {}  # the cards shown, by GPU index: a query each tick costs more

    def mark_filtered(self, index: int | None) -> None:
        """Mark the card of the GPU the process panel shows alone (None: no GPU filter)."""
        self.filtered = index
        for card in self.cards:
            card.set_filtered(card.index == index)

    @property
    def cards(self) -> list[GpuCard]:
        """The cards, in order."""
        return list(self.query(GpuCard))

    def _mark(self) -> None:
        focused = self.screen.focused is self  # has_focus lags behind the Focus and Blur events
        for card in self.cards:
            card.set_class(focused and card.index == self.chosen, "-chosen")

    def on_focus(self) -> None:
        cards = self.cards
        if cards and self.chosen not in {card.index for card in cards}:
            self.chosen = cards[0].index
        self._mark()

    def on_blur(self) -> None:
        self._mark()

    def action_choose(self, step: int) -> None:
        cards = self.cards
        if not cards:
            return
        indices = [card.index for card in cards]
        position = indices.index(self.chosen) if self.chosen in indices else 0
        self.chosen = indices[max(0, min(len(indices) - 1, position + step))]
        self._mark()
        chosen = next(card for card in cards if card.index == self.chosen)
        chosen.scroll_visible(animate=False)

    def action_choose_row(self, step: int) -> None:
        self.action_choose(step * self._columns)

    def action_open_detail(self) -> None:
        if self.chosen is not None:
            self.post_message(GpuCard.Selected(self.chosen))

    def action_leave(self) -> None:
        self.screen.focus_next()

    def _repaint(self, repaints: list[tuple[GpuCard, list[Region]]]) -> None:
        """The cards' changed lines (regions of each card's content) repainted: one refresh of the grid's
        regions under them, where a refresh of each card costs the card a message and the screen one more."""
        # Each widget's region looked up on the screen found once: ``Widget.content_region`` walks up to the
        # screen for every card.
        try:
            screen = self.screen
            origin = self._content_offset(screen, self)
        except (NoScreen, NoWidget):
            return
        regions = []
        for card, changed in repaints:
            try:
                offset = self._content_offset(screen, card) - origin
            except NoWidget:  # not laid out yet: drawn whole when it is
                continue
            regions += [line.translate(offset) for line in changed]
        if regions:
            self.refresh_over(*regions)

    @staticmethod
    def _content_offset(screen: Screen[object], widget: Widget) -> Offset:
        """Where ``widget``'s content starts on ``screen`` (``content_region.offset``, the screen given)."""
        region = screen.find_widget(widget).region
        if not region:
            raise NoWidget("not laid out")
        return region.shrink(widget.styles.gutter).offset

    def show(self, contents: Sequence[CardContent], layout: CardLayout) -> None:
        """Show each GPU's content (built once a tick by the screen) on its card, laid out as planned."""
        if layout.columns != self._columns:
            self._columns = layout.columns
            self.styles.grid_size_columns = layout.columns
        cards = self._cards
        wanted = {content.gpu.index for content in contents}
        for index in [index for index in cards if index not in wanted]:
            cards.pop(index).remove()
        new_cards = [GpuCard(content.gpu.index) for content in contents if content.gpu.index not in cards]
        cards.update((card.index, card) for card in new_cards)
        repaints: list[tuple[GpuCard, list[Region]]] = []
        for position, content in enumerate(contents):
            # Cards side by side share their row's height, so borders line up.
            card = cards[content.gpu.index]
            card.repaint_by = lambda card, changed: repaints.append((card, changed))
            try:
                card.show(content, layout.compact, layout.height_of(position))
            finally:
                card.repaint_by = None
        if repaints:
            self._repaint(repaints)
        for card in new_cards:
            card.filtered = card.index == self.filtered
            card.set_class(card.filtered, "-filtered")
        if new_cards:
            self.mount_all(new_cards)
            self.call_after_refresh(self._mark)
        heights = tuple(layout.heights)
        if heights != self._heights:  # parsing the rows again each tick costs more than comparing
            self._heights = heights
            self.styles.grid_rows = " ".join(str(h) for h in heights) or "1"
            self.styles.height = sum(heights)
