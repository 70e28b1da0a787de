"""Regenerate the README screenshots: ``python screenshots/make.py``.

Renders seven views of the deterministic demo machine (fixed seed, fixed clock,
fixed host name, 130 ticks so the sparklines and charts have shape and the stall verdict shows) at 120x40
and 80x24, to SVG with Textual's own exporter, then to PNG with headless
Chromium. The same input always gives the same SVG.

    python screenshots/make.py             # SVG + PNG into screenshots/
    python screenshots/make.py --svg-only  # no browser needed
    python screenshots/make.py --out DIR

PNG needs Chromium and a monospace font with box-drawing glyphs; on Debian:
``apt-get install -y chromium fonts-dejavu-core``. Without them the SVGs are
still written and the script says what is missing (exit status 3).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

from gputop.core.model import HostSample, Snapshot
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources.demo import DemoSource
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.detail import DetailScreen

HERE = Path(__file__).resolve().parent
SIZES = ((120, 40), (80, 24))
TICKS = 130  # past two minutes, so the demo's stalled GPU says STALLED?
START = 1_750_000_000.0  # a fixed clock: the demo's run times and the charts' time axis
HOSTNAME = "gpu-node-07"
# Chromium's pixel size per terminal cell, matching Textual's SVG geometry.
FONT = "DejaVu Sans Mono"

View = Callable[[GpuTopApp, Pilot[int]], Awaitable[None]]


def demo_snapshots(count: int) -> list[Snapshot]:
    """``count`` successive ticks of the demo machine, one simulated second apart."""
    now = [START]
    source = DemoSource(gpu_count=4, seed=7, clock=lambda: now[0])
    source.open()
    snapshots = []
    for _ in range(count):
        now[0] += 1.0
        snapshots.append(
            Snapshot(
                timestamp=now[0],
                hostname=HOSTNAME,
                host=source.sample_host() or _never(),
                gpus=source.sample(),
                driver_version=source.driver_version,
                cuda_driver_version=source.cuda_driver_version,
                source=source.name,
            )
        )
    return snapshots


def _never() -> HostSample:
    raise AssertionError("the demo source always gives host figures")


async def _main(app: GpuTopApp, pilot: Pilot[int]) -> None:
    await pilot.pause()


async def _detail(app: GpuTopApp, pilot: Pilot[int]) -> None:
    # GPU 3: memory no process accounts for and an idle notebook, so the explanations show.
    app.navigation.detail(3)
    await pilot.pause()
    # The charts are laid out now: draw them again at their size, as the next tick would.
    screen = app.screen
    if isinstance(screen, DetailScreen) and app.tick is not None:
        screen.show(app.tick)
    await pilot.pause()


async def _kill(app: GpuTopApp, pilot: Pilot[int]) -> None:
    # Two tagged processes: the dialog lists every target.
    await pilot.press("space", "space", "k")
    await pilot.pause()


async def _help(app: GpuTopApp, pilot: Pilot[int]) -> None:
    await pilot.press("f1")
    await pilot.pause()


async def _process(app: GpuTopApp, pilot: Pilot[int]) -> None:
    # The selected process (the largest) in full: its facts are read on a worker, then charted.
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()
    if app.tick is not None:
        app.show_tick(app.tick)  # the charts are laid out now: draw them at their size
    await pilot.pause()


async def _tree(app: GpuTopApp, pilot: Pilot[int]) -> None:
    await pilot.press("t")
    await pilot.pause()


async def _owners(app: GpuTopApp, pilot: Pilot[int]) -> None:
    # Who holds the GPUs, by user: memory, SM and power shares, the idle memory, the longest run.
    await pilot.press("o")
    await pilot.pause()


VIEWS: dict[str, View] = {
    "main": _main,
    "detail": _detail,
    "kill": _kill,
    "help": _help,
    "process": _process,
    "tree": _tree,
    "owners": _owners,
}


async def render_svg(view: View, size: tuple[int, int], snapshots: list[Snapshot]) -> str:
    """One view at one terminal size, as Textual's SVG."""
    source = DemoSource(gpu_count=4, seed=7, clock=lambda: START)
    source.open()  # the processes the snapshots show, for the process screen to read
    app = GpuTopApp(Sampler(source), RunConfig(interval_s=1.0), start_sampler=False)
    async with app.run_test(size=size) as pilot:
        for snapshot in snapshots:
            app.apply_snapshot(snapshot)
        await pilot.pause()
        await view(app, pilot)
        # Any notification toast would make the picture depend on timing.
        app.clear_notifications()
        await pilot.pause()
        return app.export_screenshot(title="gputop")


def stable_svg(svg: str) -> str:
    """Textual names its CSS classes after a hash of the process; make them the same every run."""
    prefixes = sorted(set(re.findall(r"terminal-(\d+)-", svg)))
    for number, prefix in enumerate(prefixes):
        svg = svg.replace(f"terminal-{prefix}-", f"terminal-{number}-")
    return svg


def offline_svg(svg: str) -> str:
    """The SVG with a local monospace font instead of Textual's web font (no network here)."""
    svg = re.sub(r"@font-face\s*\{[^}]*\}", "", svg)
    # At 21px DejaVu's block and box glyphs fill the 24.4px line, so borders and bars have no seams;
    # each run of text keeps its cell width through textLength.
    svg = svg.replace("font-size: 20px;", "font-size: 21px;", 1)
    return svg.replace("font-family: Fira Code, monospace", f'font-family: "{FONT}", monospace')


def svg_pixels(svg: str) -> tuple[int, int]:
    match = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
    if match is None:
        raise ValueError("the SVG has no viewBox")
    return int(float(match.group(1)) + 0.999), int(float(match.group(2)) + 0.999)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def missing_for_png() -> list[str]:
    """What PNG rendering lacks here, in words ([] when everything is there)."""
    missing = []
    if find_chromium() is None:
        missing.append("a Chromium browser (Debian: apt-get install -y chromium)")
    fc_list = shutil.which("fc-list")
    if fc_list is not None:
        fonts = subprocess.run([fc_list, ":spacing=mono", "family"], capture_output=True, text=True).stdout
        if FONT not in fonts:
            missing.append(f"the {FONT} font (Debian: apt-get install -y fonts-dejavu-core)")
    return missing


def svg_to_png(svg: str, png: Path, chromium: str) -> None:
    """Screenshot the SVG in headless Chromium, at its own pixel size."""
    width, height = svg_pixels(svg)
    with tempfile.TemporaryDirectory(prefix="gputop-shots-") as scratch:
        page = Path(scratch) / "page.svg"
        page.write_text(offline_svg(svg), encoding="utf-8")
        command = [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--disable-background-networking", "--disable-component-update", "--no-first-run",
            "--disable-sync", "--force-device-scale-factor=1", f"--user-data-dir={scratch}/profile",
            f"--window-size={width},{height}", f"--screenshot={png}", page.as_uri(),
        ]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if result.returncode != 0 or not png.exists():
            raise RuntimeError(f"chromium failed on {png.name}: {result.stderr.strip()[-500:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=HERE, help="where to write (default: screenshots/)")
    parser.add_argument("--svg-only", action="store_true", help="skip the PNGs")
    args = parser.parse_args(argv)
    # The detail charts label their time axis in local time: make it the same everywhere.
    os.environ["TZ"] = "UTC"
    time.tzset()
    args.out.mkdir(parents=True, exist_ok=True)
    snapshots = demo_snapshots(TICKS)
    svgs: dict[str, str] = {}
    for width, height in SIZES:
        for name, view in VIEWS.items():
            stem = f"{name}-{width}x{height}"
            svg = stable_svg(asyncio.run(render_svg(view, (width, height), snapshots)))
            (args.out / f"{stem}.svg").write_text(svg, encoding="utf-8")
            svgs[stem] = svg
            print(f"wrote {args.out / stem}.svg")
    if args.svg_only:
        return 0
    missing = missing_for_png()
    if missing:
        print("no PNGs: this machine lacks " + " and ".join(missing), file=sys.stderr)
        return 3
    chromium = find_chromium()
    assert chromium is not None
    for stem, svg in svgs.items():
        svg_to_png(svg, args.out / f"{stem}.png", chromium)
        print(f"wrote {args.out / stem}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
