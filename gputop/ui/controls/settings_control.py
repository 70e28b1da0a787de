"""The settings file seen from the app: apply it at start, and save the view the user has now."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gputop.core.settings import Settings, default_settings_path, save_settings
from gputop.ui.controls.layout_control import LayoutControl
from gputop.ui.panel.process_panel import ProcessPanel
from gputop.ui.widgets.rows import COLUMN_BY_NAME, SortOrder

if TYPE_CHECKING:
    from textual.app import App


class SettingsControl:
    """Applies the settings to the view (sort, columns, toggles, theme) and saves the view (``S``).

    Given what the settings set: the ``panel`` (sort, columns), the ``layout`` (compact cards, the
    panel and the host strip shown), ``interval`` (the sampling interval now) and ``app`` for its theme
    and to tell where the file went.
    """

    def __init__(
        self,
        settings: Settings,
        path: Path | None,
        warnings: list[str],
        *,
        panel: ProcessPanel,
        layout: LayoutControl,
        interval: Callable[[], float],
        app: App[Any],
    ) -> None:
        self.settings = settings
        self.path = path
        self.warnings = warnings
        self.panel, self.layout, self.interval, self.app = panel, layout, interval, app

    def apply(self) -> None:
        """Sort, columns, toggles and theme from the settings; what cannot be used joins the warnings."""
        app, settings, panel = self.app, self.settings, self.panel
        if settings.sort_column in COLUMN_BY_NAME:
            panel.sort = SortOrder(settings.sort_column, settings.sort_descending)
        else:
            self.warnings.append(f"unknown sort column '{settings.sort_column}'; sorting by GPU memory")
        unknown = [name for name in settings.columns or () if name not in COLUMN_BY_NAME]
        if unknown:
            plural = "s" if len(unknown) > 1 else ""
            self.warnings.append(f"unknown column{plural} ignored: {', '.join(unknown)}")
        panel.show_columns(settings.columns)
        self.layout.compact_choice = True if settings.compact else None
        self.layout.panel.display = settings.show_processes
        self.layout.host.display = settings.show_host
        if settings.theme in app.available_themes:
            if settings.theme != app.theme:  # setting a theme restyles everything: only when it changes
                app.theme = settings.theme
        else:
            self.warnings.append(f"unknown theme '{settings.theme}'; using {app.theme}")

    def current(self) -> Settings:
        """The settings file that would bring back this view."""
        return replace(
            self.settings,
            interval_s=self.interval(),
            theme=self.app.theme,
            sort_column=self.panel.sort.column,
            sort_descending=self.panel.sort.descending,
            compact=self.layout.compact_choice is True,
            show_processes=bool(self.layout.panel.display),
            show_host=bool(self.layout.host.display),
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
