"""Keys typed before the main screen listens: none lost, none read as another key, all in order.

The first frame is on the terminal most of a second before the main screen is built, and people type
at what they see. Those keys wait in the terminal's queue (``before_screen.holding_keys``); Textual's
driver reads them as soon as it starts, before the main screen is mounted and its process panel
focused. Dispatched then, ``/`` would find no panel to open the filter box and be lost, and the digits
typed after it would reach the panel as GPU keys. So the app holds every key that comes before the
main screen is ready (``EarlyKeys.hold``), and dispatches them, in order, once it is
(``EarlyKeys.release``), before any key that came after them.

``keys_given_back`` makes the terminal driver give the terminal's modes back as they were before the
keys were held, just before it saves and changes them: Textual restores what it saved at exit and
around Ctrl+Z, so the shell gets its terminal back as it left it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.events import Key, Paste

Typed = Key | Paste  # what the keyboard sends: a key, or text pasted at once


class EarlyKeys:
    """The keys (and pasted text) that came before the main screen was ready, until it is."""

    def __init__(self) -> None:
        self._held: list[Typed] | None = []  # None once released: keys go their way as they come

    def hold(self, key: Typed) -> bool:
        """Keep ``key`` if the main screen is not ready yet; False when it goes its way now."""
        if self._held is None or key.is_forwarded:
            return False
        self._held.append(key)
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
