"""Settings: S saves the view, a new app comes back the same; a bad file is reported and defaults used."""

from __future__ import annotations

import re
from pathlib import Path

from gputop.cli.args import build_parser
from gputop.cli.main import tui_config
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.settings import Settings, load_settings
from gputop.ui.app import GpuTopApp
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.host_strip import HostStrip
from gputop.ui.widgets.rows import COLUMNS, SortOrder

from .factory import RecordingSource, notices, two_gpu_snapshot

SIZE = (120, 40)


def app_with(path: Path) -> GpuTopApp:
    """What `gputop --config PATH` builds."""
    settings, warnings = load_settings(path)
    config = tui_config(build_parser().parse_args(["--config", str(path)]), settings)
    return GpuTopApp(
        Sampler(RecordingSource()),
        config,
        start_sampler=False,
        settings=settings,
        settings_path=path,
        settings_warnings=warnings,
    )


async def test_S_saves_the_view_and_a_new_app_starts_the_same(tmp_path: Path) -> None:
    path = tmp_path / "gputop" / "settings.toml"
    app = app_with(path)
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("P", "I", "p", "s", "c", "left_square_bracket", "S")
        assert notices(app) == [f"settings saved to {path}"]
    saved, warnings = load_settings(path)
    assert warnings == []
    assert saved == Settings(
        interval_s=2.0, sort_column="cpu", sort_descending=False, compact=True, show_processes=False, show_host=False
    )

    again = app_with(path)
    async with again.run_test(size=SIZE) as pilot:
        again.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        assert again.sampling.interval_s == 2.0
        assert again.main.panel.sort == SortOrder("cpu", False)
        assert again.processes.display is False
        assert again.query_one(HostStrip).display is False
        assert [card.compact for card in again.query(GpuCard)] == [True, True]
        assert again.processes.pids() == [203, 204, 101, 102, 305]
        assert notices(again) == []


def test_interval_on_the_command_line_wins_over_the_settings(tmp_path: Path) -> None:
    settings = Settings(interval_s=5.0)
    assert tui_config(build_parser().parse_args([]), settings).interval_s == 5.0
    assert tui_config(build_parser().parse_args(["-i", "0.5"]), settings).interval_s == 0.5
    assert tui_config(build_parser().parse_args(["--bell"]), settings) == RunConfig(interval_s=5.0, bell=True)


async def test_a_malformed_file_is_reported_with_its_line_and_defaults_are_used(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('theme = "textual-light"\ninterval_s = \n')
    app = app_with(path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert notices(app) == [f"{path}: not valid TOML: Invalid value (at line 2, column 14); using defaults"]
        assert app.theme == "textual-dark" and app.sampling.interval_s == 1.0 and app.main.panel.sort == SortOrder()


async def test_unknown_keys_theme_and_columns_are_reported_the_rest_applied(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(
        'colour = "red"\ntheme = "no-such-theme"\ninterval_s = 3.0\n'
        '[processes]\ncolumns = ["pid", "gpu_memory", "growth", "flops"]\n'
        'sort_column = "pid"\nsort_descending = false\n'
    )
    app = app_with(path)
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        assert notices(app) == [
            f"{path}: unknown setting 'colour' ignored",
            "unknown column ignored: flops",
            "unknown theme 'no-such-theme'; using textual-dark",
        ]
        assert app.sampling.interval_s == 3.0 and app.main.panel.sort == SortOrder("pid", False)
        header = "".join(segment.text for segment in app.processes.render_line(0)).split()
        # GROWTH is chosen: it shows though no process grows (a column never comes with the data).
        assert header == ["PID▲", "GPU-MEM", "GROWTH", "COMMAND"]


async def test_a_settings_write_error_is_notified_not_a_crash(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    path = blocker / "settings.toml"
    app = app_with(path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("S")
        assert notices(app) == [
            f"{path}: cannot read settings (Not a directory); using defaults",
            f"cannot save settings to {path}: File exists",
        ]
        assert app.is_running



def test_the_settings_document_names_every_column_of_the_panel_in_its_order() -> None:
    document = (Path(__file__).resolve().parents[2] / "docs" / "settings.md").read_text()
    found = re.search(r"The names: ([\w,\s#]+)\.", document)
    assert found is not None
    assert [name.strip("# \n") for name in found.group(1).split(",")] == [column.name for column in COLUMNS]
