"""The option list of gputop's dialogs: Enter shows in their footer, beside Esc."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import OptionList


class ChoiceList(OptionList):
    """An OptionList whose Enter (choose the highlighted option) is listed in the footer."""

    BINDINGS = [Binding("enter", "select", "Choose", key_display="Enter")]
