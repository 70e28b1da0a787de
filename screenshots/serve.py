"""The README's browser screenshot: ``python screenshots/serve.py``.

Starts ``gputop --demo serve`` on a free loopback port, opens it in headless
Chromium (Debian: ``apt-get install -y chromium chromium-driver``; Selenium from
the ``test`` extra) and saves the page to ``screenshots/serve-browser.png``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from e2e.webserve import Browser, ServedGputop, chromium_paths, wait_until  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "serve-browser.png")
    args = parser.parse_args()
    paths = chromium_paths()
    if isinstance(paths, str):
        print(f"serve.py: {paths}", file=sys.stderr)
        return 3
    served = ServedGputop("--demo", "serve", "--listen", "127.0.0.1:0")
    browser = Browser(paths, window=(1280, 760))
    try:
        browser.open(served.url)
        browser.wait_screen(lambda screen: "Processes " in screen and "F1 Help" in screen, "gputop in the page")
        # Let the sparklines gather a few samples and the start-up alert toast time out.
        wait_until(lambda: "memory at" not in browser.screen(), 30, "the alert toast to go")
        browser.screenshot(args.out)
    finally:
        browser.close()
        served.stop()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
