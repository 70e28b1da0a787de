"""`gputop serve` in a real headless Chromium: the page shows gputop, takes keys, and keeps its promises.

One browser for the module; each test starts the real `gputop --demo serve` on a free port.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e.webserve import Browser, ServedGputop, chromium_paths, wait_until

PATHS = chromium_paths()
pytestmark = pytest.mark.skipif(isinstance(PATHS, str), reason=str(PATHS))

PID_CELL = re.compile(r"^│\s+\S+\s+(\d+)\s", re.MULTILINE)
PANEL = re.compile(r"Processes \d+")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert not isinstance(PATHS, str)
    shared = Browser(PATHS)
    yield shared
    shared.close()


def shows_gputop(screen: str) -> bool:
    """A GPU card, the process panel and the footer are drawn."""
    rows = screen.splitlines()
    return "NVIDIA H100 80GB HBM3" in screen and PANEL.search(screen) is not None and "F1 Help" in rows[-1]


def test_the_page_is_gputop_read_only_and_takes_keys(browser: Browser) -> None:
    served = ServedGputop("--demo", "serve", "--listen", "127.0.0.1:0")
    try:
        browser.open(served.url)
        screen = browser.wait_screen(shows_gputop, "a GPU card and the process panel")
        footer = screen.splitlines()[-1]
        assert "F1 Help" in footer and "/ Filter" in footer and "Kill" not in footer
        assert "read-only" in screen.splitlines()[0]

        browser.press("N")  # sort by PID: the panel's header and its rows follow
        screen = browser.wait_screen(lambda s: "PID▲" in s or "PID▼" in s, "the panel sorted by PID")
        pids = [int(pid) for pid in PID_CELL.findall(screen)]
        assert len(pids) >= 8  # the demo's processes come and go
        assert pids == sorted(pids, reverse="PID▼" in screen)

        browser.press("k")  # the kill key only says why, on the main screen's message line
        refusal = "read-only (--readonly): gputop sends no signals"
        browser.wait_screen(lambda s: refusal in s.splitlines()[-1], "the refusal")
        browser.press("?")  # the help (a dialog over the main screen and its message)
        screen = browser.wait_screen(lambda s: "gputop keys" in s, "the help")
        assert "Send a signal" not in screen
        assert "Kill" not in screen and "Sort by PID" in screen
    finally:
        assert served.stop() == 0
    assert served.orphans() == []


def test_allow_signals_lets_the_kill_dialog_open(browser: Browser) -> None:
    from selenium.webdriver.common.keys import Keys

    served = ServedGputop("--demo", "serve", "--listen", "127.0.0.1:0", "--allow-signals")
    try:
        browser.open(served.url)
        screen = browser.wait_screen(shows_gputop, "gputop")
        assert "k Kill" in screen.splitlines()[-1] and "read-only" not in screen
        browser.press("k")
        screen = browser.wait_screen(lambda s: "Send a signal to 1 process?" in s, "the kill dialog")
        assert "SIGTERM" in screen and "SIGKILL" in screen
        browser.press(Keys.ESCAPE)
        browser.wait_screen(lambda s: "Send a signal" not in s, "the dialog to close")
        browser.press("q")  # gputop quits: its process ends and the page says the session ended
        served.wait_tabs(0)
        wait_until(lambda: "Session ended." in browser.page_text(), what="the page to say so")
    finally:
        assert served.stop() == 0
    assert served.orphans() == []


def test_beyond_loopback_the_token_is_needed_and_the_tab_cap_answers_with_a_page(
    browser: Browser, tmp_path: Path
) -> None:
    settings = tmp_path / "settings.toml"
    settings.write_text("[serve]\nmax_tabs = 1\n")
    served = ServedGputop("--demo", "--config", str(settings), "serve", "--listen", "0.0.0.0:0")
    try:
        assert served.query.startswith("?token=")
        browser.open(f"{served.base}/")
        assert "gputop: token needed" in browser.page_text()
        browser.open(f"{served.base}/?token=not-{served.query[7:]}")
        assert "gputop: token needed" in browser.page_text()
        assert served.tabs() == []

        browser.open(served.url)
        browser.wait_screen(shows_gputop, "gputop with the token")
        assert len(served.tabs()) == 1
        first = browser.new_tab()
        browser.open(served.url)
        assert "gputop: all tabs in use" in browser.page_text()
        assert "max_tabs" in browser.page_text()
        browser.close_tab(then=first)
        browser.open("about:blank")  # the first tab's page goes: its gputop ends
        served.wait_tabs(0)

        browser.open(f"{served.base}/")  # the cookie from the first visit carries the token
        browser.wait_screen(shows_gputop, "gputop again")
        assert len(served.tabs()) == 1
    finally:
        assert served.stop() == 0
    assert served.orphans() == []
