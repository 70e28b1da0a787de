"""Key names' characters come from keymap's table, as Textual would give them, without Textual's
look-ups in the Unicode database (0.8 MiB of memory for the pages they touch)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
import textual.screen
from textual.app import App
from textual.binding import Binding, BindingType
from textual.containers import ScrollableContainer
from textual.keys import key_to_character
from textual.screen import Screen
from textual.scroll_view import ScrollView

import gputop.ui
from gputop.ui import keymap

from .factory import make_app


def _keys(bindings: list[BindingType]) -> set[str]:
    keys = (binding.key if isinstance(binding, Binding) else binding[0] for binding in bindings)
    return {key.strip() for joined in keys for key in joined.split(",")}


def _bound_keys() -> set[str]:
    """Every key bound by a class of gputop's UI, and by the Textual classes its screens are built on."""
    keys = _keys(keymap.BINDINGS)
    for module_info in pkgutil.walk_packages(gputop.ui.__path__, "gputop.ui."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__:
                keys |= _keys(list(getattr(value, "BINDINGS", [])))
    for textual_class in (App, Screen, ScrollableContainer, ScrollView):
        keys |= _keys(list(textual_class.BINDINGS))
    return keys


@pytest.mark.parametrize("key", sorted(keymap.KEY_CHARACTERS))
def test_the_table_answers_as_textual_does(key: str) -> None:
    assert keymap.key_character(key) == key_to_character(key)


def test_every_key_name_gputop_binds_is_in_the_table() -> None:
    # One letter or a modifier: Textual answers those without a look-up, and so does key_character.
    named = {key for key in _bound_keys() if len(key) > 1 and "+" not in key}
    assert "less_than_sign" in named and "f10" in named and "pagedown" in named
    assert sorted(named - set(keymap.KEY_CHARACTERS)) == []


@pytest.mark.parametrize("key", ["ctrl+c", "shift+tab", "a", "<", "M"])
def test_a_key_with_a_modifier_or_of_one_letter_is_answered_as_textual_does(key: str) -> None:
    assert keymap.key_character(key) == key_to_character(key)


def test_a_key_outside_the_table_is_still_answered_by_textual() -> None:
    assert "circumflex_accent" not in keymap.KEY_CHARACTERS
    assert keymap.key_character("circumflex_accent") == "^"
    assert keymap.key_name("circumflex_accent") == "^"


async def test_the_running_app_asks_textual_for_no_key_character(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def textual_lookup(key: str) -> str | None:
        asked.append(key)
        return key_to_character(key)

    monkeypatch.setattr(keymap, "key_to_character", textual_lookup)
    monkeypatch.setattr(textual.screen, "key_to_character", textual_lookup)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        # The binding chain is asked again as the focus moves and a screen opens and closes.
        await pilot.press("tab", "tab", "f1")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert textual.screen.key_to_character is keymap.key_character
    assert asked == []
