"""Keys typed before the main screen listens: none lost, none read as another key, all in order.

The first frame is on the terminal most of a second before the main screen is built, and people type
at what they see. Those keys wait in the terminal's queue (``before_screen.holding_keys``); Textual's
driver reads them as soon as it starts, before the main screen is mounted and its process panel
focused. Dispatched then, ``/`` would find no panel to open the filter box and be lost, and the digits
typed after it would reach the panel as GPU keys. So the app holds every key that comes before the
main screen is ready (``EarlyKeys.hold``), and dispatches them, in order, once it is
(``EarlyKeys.release``), before any key that came after them.

Keys typed while gputop waited on the driver, before the first frame, were read by the thread that
watches for q (``before_screen.quit_keys``): ``typed_keys`` makes keys of what it read, held first.

``keys_given_back`` makes the terminal driver give the terminal's modes back as they were before the
keys were held, just before it saves and changes them: Textual restores what it saved at exit and
around Ctrl+Z, so the shell gets its terminal back as it left it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Awaitable, Callable, Iterable

from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.events import Key, Paste
from textual.keys import ASCII_KEY_NAMES, KEY_NAME_REPLACEMENTS

Typed = Key | Paste  # what the keyboard sends: a key, or text pasted at once

# What a terminal sends for the keys gputop has (xterm's, as Textual reads them), by Textual's key name.
_SEQUENCES = {
    "\x1b[A": "up", "\x1b[B": "down", "\x1b[C": "right", "\x1b[D": "left",
    "\x1bOA": "up", "\x1bOB": "down", "\x1bOC": "right", "\x1bOD": "left",
    "\x1b[H": "home", "\x1b[F": "end", "\x1b[1~": "home", "\x1b[4~": "end", "\x1bOH": "home", "\x1bOF": "end",
    "\x1b[2~": "insert", "\x1b[3~": "delete", "\x1b[5~": "pageup", "\x1b[6~": "pagedown", "\x1b[Z": "shift+tab",
    "\x1bOP": "f1", "\x1bOQ": "f2", "\x1bOR": "f3", "\x1bOS": "f4", "\x1b[15~": "f5", "\x1b[17~": "f6",
    "\x1b[18~": "f7", "\x1b[19~": "f8", "\x1b[20~": "f9", "\x1b[21~": "f10",
}
_CONTROLS = {"\r": "enter", "\t": "tab", "\x1b": "escape", "\x7f": "backspace"}
_TOKEN = re.compile(r"\x1b\[[0-9;]*[A-Za-z~]|\x1bO[A-Za-z]|.", re.DOTALL)


def _key_name(character: str) -> str:
    """Textual's name of the key that types ``character`` ("N", "slash", "ctrl+l")."""
    if character in _CONTROLS:
        return _CONTROLS[character]
    if ord(character) < 32:
        return f"ctrl+{chr(ord(character) + 96)}"
    if character.isalnum():
        return character
    try:
        name = unicodedata.name(character).lower().replace("-", "_").replace(" ", "_")
    except ValueError:
        name = ASCII_KEY_NAMES.get(character, character)
    return KEY_NAME_REPLACEMENTS.get(name, name)


def typed_keys(data: bytes) -> list[Key]:
    """The keys in what a terminal sent, in order; a sequence gputop has no key for is left out."""
    keys = []
    for token in _TOKEN.findall(data.decode(errors="ignore")):
        if len(token) == 1:
            keys.append(Key(_key_name(token), token))
        elif token in _SEQUENCES:
            keys.append(Key(_SEQUENCES[token], None))
    return keys


def _typed_early(key: Typed) -> Typed:
    """A key as it was typed before the main screen was ready: a line feed is Enter. Keys typed in gputop's
    first instants, before it took the terminal's modes, were read by the terminal in its line mode, which
    turns Enter's carriage return into a line feed (ctrl+j, which gputop has no use for)."""
    if isinstance(key, Key) and key.character == "\n":
        return Key("enter", "\r")
    return key


class EarlyKeys:
    """The keys (and pasted text) that came before the main screen was ready, until it is."""

    def __init__(self, typed_ahead: Iterable[Typed] = ()) -> None:
        """``typed_ahead``: keys typed before the terminal's queue was held, first of all."""
        # None once released: keys go their way as they come.
        self._held: list[Typed] | None = [_typed_early(key) for key in typed_ahead]

    def hold(self, key: Typed) -> bool:
        """Keep ``key`` if the main screen is not ready yet; False when it goes its way now."""
        if self._held is None or key.is_forwarded:
            return False
        self._held.append(_typed_early(key))
        return True

    async def release(self, dispatch: Callable[[Typed], Awaitable[None]]) -> None:
        """The main screen is ready: ``dispatch`` each key held, in order, each before the next is routed.

        Called from the app's queue, so keys read after the ones held wait behind this call.
        """
        held, self._held = self._held, None
        for key in held or ():
            await dispatch(key)


def keys_given_back(driver_class: type[Driver], give_back: Callable[[], None]) -> type[Driver]:
    """``driver_class``, made to call ``give_back`` as it takes the terminal; another driver (a browser
    tab's, the tests' headless one) as it is."""
    if not issubclass(driver_class, LinuxDriver):
        return driver_class

    class KeysGivenBackDriver(driver_class):  # type: ignore[valid-type,misc]
        """Textual's terminal driver, which finds the terminal's modes as the user had them."""

        def start_application_mode(self) -> None:
            give_back()
            super().start_application_mode()

    return KeysGivenBackDriver
