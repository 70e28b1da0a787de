"""The settings file seen from the app: apply it at start, and save the view the user has now."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from gputop.core.settings import Settings, default_settings_path, save_settings
from gputop.ui.panel.rows import COLUMN_BY_NAME, SortOrder
from gputop.ui.widgets.host_strip import HostStrip

if TYPE_CHECKING:
    from gputop.ui.app import GpuTopApp


class SettingsControl:
    """Applies the settings to the view (sort, columns, toggles, theme) and saves the view (``S``)."""

    def __init__(self, app: GpuTopApp, settings: Settings, path: Path | None, warnings: list[str]) -> None:
        self.app = app
        self.settings = settings
        self.path = path
        self.warnings = warnings

    def apply(self) -> None:
        """Sort, columns, toggles and theme from the settings; what cannot be used joins the warnings."""
        app, settings = self.app, self.settings
        if settings.sort_column in COLUMN_BY_NAME:
            app.view.sort = SortOrder(settings.sort_column, settings.sort_descending)
        else:
            self.warnings.append(f"unknown sort column '{settings.sort_column}'; sorting by GPU memory")
        unknown = [name for name in settings.columns or () if name not in COLUMN_BY_NAME]
        if unknown:
            plural = "s" if len(unknown) > 1 else ""
            self.warnings.append(f"unknown column{plural} ignored: {', '.join(unknown)}")
        app.processes.show_columns(settings.columns)
        app.layout_control.compact_choice = True if settings.compact else None
        app.processes.display = settings.show_processes
        app.query_one(HostStrip).display = settings.show_host
        if settings.theme in app.available_themes:
            if settings.theme != app.theme:  # setting a theme restyles everything: only when it changes
                app.theme = settings.theme
        else:
            self.warnings.append(f"unknown theme '{settings.theme}'; using {app.theme}")

    def current(self) -> Settings:
        """The settings file that would bring back this view."""
        app = self.app
        return replace(
            self.settings,
            interval_s=app.interval_s,
            theme=app.theme,
            sort_column=app.view.sort.column,
            sort_descending=app.view.sort.descending,
            compact=app.layout_control.compact_choice is True,
            show_processes=bool(app.processes.display),
            show_host=bool(app.query_one(HostStrip).display),
        )

    def save(self) -> None:
        """Write the current view to the settings file, and say where (or why not)."""
        path = self.path or default_settings_path()
        settings = self.current()
        try:
            save_settings(settings, path)
        except OSError as error:
            reason = error.strerror or str(error)
            self.app.notify(f"cannot save settings to {path}: {reason}", title="Settings not saved",
                            severity="error", markup=False)
            return
        self.settings = settings
        self.app.notify(f"settings saved to {path}", title="Settings", markup=False)
