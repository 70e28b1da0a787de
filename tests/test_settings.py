"""The settings file: round trip, and forgiving reads that say what went wrong."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gputop.core.settings import (
    Settings,
    Thresholds,
    default_settings_path,
    load_settings,
    save_settings,
    settings_to_toml,
)


def test_the_default_path_follows_xdg_config_home(tmp_path: Path) -> None:
    assert default_settings_path({"XDG_CONFIG_HOME": str(tmp_path)}) == (
        tmp_path / "gputop" / "settings.toml"
    )
    home_default = Path.home() / ".config" / "gputop" / "settings.toml"
    assert default_settings_path({}) == home_default
    assert default_settings_path({"XDG_CONFIG_HOME": "relative/dir"}) == home_default


def test_save_then_load_gives_back_equal_settings(tmp_path: Path) -> None:
    settings = Settings(
        interval_s=0.5,
        theme='my "quoted" theme\\ with\ttab and é and \x01',
        thresholds=Thresholds(
            memory_percent=85.5, thermal_margin_c=3.0, forecast_seconds=120.0, horizon_s=3600.0
        ),
        columns=("pid", "gpu_memory", "command"),
        sort_column="pid",
        sort_descending=False,
        compact=True,
        show_processes=False,
        show_host=False,
    )
    path = tmp_path / "new" / "dir" / "settings.toml"
    save_settings(settings, path)
    assert load_settings(path) == (settings, [])
    assert os.listdir(path.parent) == ["settings.toml"]  # no temporary file left


def test_the_defaults_round_trip_and_the_file_reads_like_the_docs(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    save_settings(Settings(), path)
    assert load_settings(path) == (Settings(), [])
    text = path.read_text()
    assert "interval_s = 1.0\n" in text
    assert "[thresholds]\nmemory_percent = 90.0\n" in text
    assert "sort_descending = true\n" in text


def test_saving_replaces_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    save_settings(Settings(compact=True), path)
    save_settings(Settings(compact=False, interval_s=2.0), path)
    assert load_settings(path) == (Settings(interval_s=2.0), [])


def test_a_missing_file_gives_defaults_without_warning(tmp_path: Path) -> None:
    assert load_settings(tmp_path / "absent.toml") == (Settings(), [])


def test_a_malformed_file_gives_defaults_and_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("interval_s = 2.0\n\n[layout]\ncompact = yes please\n")
    settings, warnings = load_settings(path)
    assert settings == Settings()
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{path}: not valid TOML: ")
    assert "line 4" in warnings[0]
    assert warnings[0].endswith("; using defaults")


def test_an_unknown_key_is_a_warning_and_the_rest_still_applies(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("interval_s = 2\ncolour = 'red'\n[layout]\ncompact = true\nwide = 1\n")
    settings, warnings = load_settings(path)
    assert settings == Settings(interval_s=2.0, compact=True)
    assert warnings == [
        f"{path}: unknown setting 'colour' ignored",
        f"{path}: unknown setting 'layout.wide' ignored",
    ]


def test_a_wrong_type_defaults_that_key_only(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(
        'interval_s = "fast"\ntheme = "nord"\n'
        "[thresholds]\nmemory_percent = true\nthermal_margin_c = 7\n"
        '[processes]\ncolumns = ["pid", 3]\n'
    )
    settings, warnings = load_settings(path)
    assert settings == Settings(theme="nord", thresholds=Thresholds(thermal_margin_c=7.0))
    assert warnings == [
        f"{path}: 'interval_s' should be a number, not a string (\"fast\"); using the default",
        f"{path}: 'thresholds.memory_percent' should be a number, not a boolean (true);"
        " using the default",
        f"{path}: 'processes.columns' should be a list of non-empty strings, not a list"
        ' (["pid", 3]); using the default',
    ]


def test_an_out_of_range_value_is_defaulted(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("interval_s = 0\n[thresholds]\nmemory_percent = 150.0\n")
    settings, warnings = load_settings(path)
    assert settings == Settings()
    assert warnings == [
        f"{path}: 'interval_s' should be a number from 0.05 to 3600, not a number (0);"
        " using the default",
        f"{path}: 'thresholds.memory_percent' should be a number from 1 to 100, not a number"
        " (150.0); using the default",
    ]


def test_a_table_of_the_wrong_shape_is_defaulted(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("layout = 3\n")
    assert load_settings(path) == (
        Settings(),
        [f"{path}: [layout] should be a table; using its defaults"],
    )


def test_an_unreadable_file_gives_defaults_and_a_warning(tmp_path: Path) -> None:
    directory = tmp_path / "settings.toml"
    directory.mkdir()
    settings, warnings = load_settings(directory)
    assert settings == Settings()
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{directory}: cannot read settings (")


def test_a_file_that_is_not_utf8_gives_defaults_and_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_bytes(b'theme = "\xff"\n')
    settings, warnings = load_settings(path)
    assert settings == Settings()
    assert warnings[0].startswith(f"{path}: cannot read settings (")


def test_duplicate_columns_are_dropped_keeping_order(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('[processes]\ncolumns = ["pid", "command", "pid"]\n')
    assert load_settings(path)[0].columns == ("pid", "command")


@pytest.mark.parametrize("value", [float("inf"), 1e-05, 12345678.125])
def test_floats_are_written_so_they_read_back_exactly(value: float) -> None:
    text = settings_to_toml(Settings(thresholds=Thresholds(horizon_s=value)))
    assert f"horizon_s = {'inf' if value == float('inf') else repr(value)}\n" in text
