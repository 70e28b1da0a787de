"""A real ``gputop serve`` process for the tests, and a headless Chromium that drives its page.

The browser is Debian's ``chromium`` through its ``chromedriver`` (Selenium),
so nothing is downloaded. xterm.js draws on a canvas, so the page's text is
read from the terminal's own buffer: a script added before the page loads
keeps the xterm ``Terminal`` that textual-serve's script creates.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import psutil

URL = re.compile(r"http://(\S+?):(\d+)/(\S*)")


def wait_until(condition: Callable[[], Any], timeout_s: float = 30.0, what: str = "condition") -> Any:
    """Poll ``condition`` until it is truthy and return it; fail saying ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g}s waiting for {what}")
        time.sleep(0.05)


class ServedGputop:
    """``python -m gputop ARGS`` (which includes ``serve``), up and listening, with the URL it printed."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.argv = [sys.executable, "-m", "gputop", *args]
        self.process = subprocess.Popen(
            self.argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,  # its own process group, as in a terminal
        )
        self.banner = self.next_line(60)
        match = URL.search(self.banner)
        if match is None:
            self.process.kill()
            raise AssertionError(f"gputop serve did not start: {self.banner!r}")
        self.port = int(match.group(2))
        self.query = match.group(3)  # "?token=..." or ""
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/{self.query}"
        self.seen: set[int] = set()  # every tab process ever seen

    def next_line(self, timeout_s: float = 30.0) -> str:
        """The next line the server writes on stderr."""
        assert self.process.stderr is not None
        ready, _, _ = select.select([self.process.stderr], [], [], timeout_s)
        return self.process.stderr.readline() if ready else ""

    def tabs(self) -> list[psutil.Process]:
        """The gputop processes the server runs now (children that have started and not ended)."""
        try:
            children = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        alive = [child for child in children if _alive(child) and _command(child) != self.argv]
        self.seen.update(child.pid for child in alive)
        return alive

    def wait_tabs(self, count: int, timeout_s: float = 30.0) -> list[psutil.Process]:
        wait_until(lambda: len(self.tabs()) == count, timeout_s, f"{count} tab process(es)")
        return self.tabs()

    def stop(self) -> int:
        """Ctrl+C, as a terminal sends it (to the whole foreground process group); returns the exit status."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
        try:
            return self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            assert self.process.stderr is not None
            self.process.stderr.close()

    def orphans(self) -> list[int]:
        """Tab processes seen at any time that still run."""
        return [pid for pid in self.seen if _alive_pid(pid)]


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _command(process: psutil.Process) -> list[str]:
    """Its command line; the server's own for a child forked but not yet running gputop."""
    try:
        return list(process.cmdline())
    except psutil.Error:
        return []


def _alive_pid(pid: int) -> bool:
    try:
        return _alive(psutil.Process(pid))
    except psutil.NoSuchProcess:
        return False


def chromium_paths() -> tuple[str, str] | str:
    """(chromium, chromedriver), or why the browser tests cannot run."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "Selenium is not installed (pip install -e '.[test]')"
    browser = next((shutil.which(name) for name in ("chromium", "chromium-browser") if shutil.which(name)), None)
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        return "Chromium and its driver are not installed (Debian: apt-get install -y chromium chromium-driver)"
    return browser, driver


# Keeps the xterm Terminal that textual-serve's script assigns to `this.terminal`.
_KEEP_TERMINAL = """
Object.defineProperty(Object.prototype, 'terminal', {configurable: true, set(value) {
  if (value && value.buffer) { window.gputopTerminal = value; }
  Object.defineProperty(this, 'terminal', {value, writable: true, configurable: true, enumerable: true});
}});
"""
_SCREEN = """
const terminal = window.gputopTerminal;
if (!terminal) { return null; }
const buffer = terminal.buffer.active, rows = [];
for (let i = 0; i < terminal.rows; i++) {
  const line = buffer.getLine(buffer.viewportY + i);
  rows.push(line ? line.translateToString(true) : '');
}
return rows.join('\\n');
"""


class Browser:
    """One headless Chromium window (1280x800) that the tests share."""

    def __init__(self, paths: tuple[str, str], window: Sequence[int] = (1280, 800)) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = paths[0]
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         f"--window-size={window[0]},{window[1]}"):
            options.add_argument(argument)
        self.driver = webdriver.Chrome(options=options, service=Service(paths[1], log_output=os.devnull))
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _KEEP_TERMINAL})

    def new_tab(self) -> str:
        """Open a tab and switch to it; returns the handle of the tab left."""
        left = str(self.driver.current_window_handle)
        self.driver.switch_to.new_window("tab")
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _KEEP_TERMINAL})
        return left

    def close_tab(self, then: str) -> None:
        """Close this tab, as a user does, and switch to the tab ``then``."""
        self.driver.close()
        self.driver.switch_to.window(then)

    def open(self, url: str) -> None:
        self.driver.get(url)

    def page_text(self) -> str:
        """The text of a plain page (a refusal), not of the terminal."""
        return str(self.driver.execute_script("return document.body ? document.body.innerText : ''"))

    def screen(self) -> str:
        """What the terminal in the page shows, row by row."""
        return str(self.driver.execute_script(_SCREEN) or "")

    def wait_screen(self, check: Callable[[str], bool], what: str, timeout_s: float = 30.0) -> str:
        return str(wait_until(lambda: (lambda text: text if check(text) else "")(self.screen()), timeout_s, what))

    def press(self, *keys: str) -> None:
        """Type into the terminal, as a user would after clicking it."""
        self.driver.find_element("css selector", ".xterm-helper-textarea").send_keys(*keys)

    def screenshot(self, path: Path) -> None:
        self.driver.save_screenshot(str(path))

    def close(self) -> None:
        self.driver.quit()
