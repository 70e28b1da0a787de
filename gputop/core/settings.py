"""User settings: a small TOML file, read forgivingly and written atomically.

The file lives at ``$XDG_CONFIG_HOME/gputop/settings.toml`` (by default
``~/.config/gputop/settings.toml``) and looks like this::

    interval_s = 1.0
    theme = "textual-dark"
    driver_deadline_s = 2.0
    ascii = false

    [thresholds]
    memory_percent = 90.0
    thermal_margin_c = 5.0
    forecast_seconds = 300.0
    horizon_s = 1800.0
    idle_min_memory_gib = 1.0
    idle_after_s = 600.0
    unattributed_min_gib = 1.0
    unattributed_percent = 5.0
    stall_utilization_percent = 95.0
    stall_power_percent = 30.0
    stall_after_s = 120.0
    busy_idle_after_s = 120.0

    [processes]
    columns = ["gpu", "pid", "user", "gpu_memory", "cpu", "command"]  # default: every column
    sort_column = "gpu_memory"
    sort_descending = true

    [layout]
    compact = false
    show_processes = true
    show_host = true

    [serve]
    max_tabs = 4

    [host]
    net_interfaces = ["eth0", "ens*"]  # default: every interface with a device behind it

Every key is optional. Reading never fails: a file that is not valid TOML,
cannot be read, or holds a value of the wrong type or range yields the
defaults for what could not be used, and a warning that says why (with the
line number for a syntax error). Unknown keys are reported and ignored.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When alerts fire and how far ahead the forecast looks."""

    memory_percent: float = 90.0  # memory alert at or above this share of total
    thermal_margin_c: float = 5.0  # thermal alert within this of the slowdown temperature
    forecast_seconds: float = 300.0  # forecast alert when full within this
    horizon_s: float = 1800.0  # no forecast further ahead than this
    idle_min_memory_gib: float = 1.0  # a process holding at least this much GPU memory ...
    idle_after_s: float = 600.0  # ... and using no SM time for this long is idle
    unattributed_min_gib: float = 1.0  # memory no process accounts for is shown above the
    unattributed_percent: float = 5.0  # larger of these two (the second, of the GPU's total)
    stall_utilization_percent: float = 95.0  # utilization at or above this ...
    stall_power_percent: float = 30.0  # ... with power at or below this share of the limit ...
    stall_after_s: float = 120.0  # ... and memory flat for this long: STALLED?
    # GPU-Util >= 90 % with SM active (GPM) <= 25 % for this long, a process holding memory: BUSY, FEW SMs.
    busy_idle_after_s: float = 120.0


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the user can set; the defaults are what a fresh install uses."""

    interval_s: float = 1.0
    theme: str = "textual-dark"
    # How long a GPU's driver calls may take before it is shown as not answering.
    driver_deadline_s: float = 2.0
    ascii: bool = False  # draw with ASCII only, whatever the terminal and locale
    thresholds: Thresholds = field(default_factory=Thresholds)
    # The panel's columns to show (None: every column; the panel's column table has their names).
    columns: tuple[str, ...] | None = None
    sort_column: str = "gpu_memory"
    sort_descending: bool = True
    compact: bool = False
    show_processes: bool = True
    show_host: bool = True
    serve_max_tabs: int = 4  # `gputop serve`: browser tabs (each its own gputop process) at once
    # The network interfaces the host strip's NET counts (names or shell patterns such as "eth*");
    # None: those with a device behind them (/sys/class/net/NAME/device), so no loopback, bridge or veth.
    net_interfaces: tuple[str, ...] | None = None


def default_settings_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/gputop/settings.toml``, or under ``~/.config`` when unset."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    # The XDG spec says a relative path there is invalid and must be ignored.
    config = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return config / "gputop" / "settings.toml"


# --- reading -----------------------------------------------------------------

_Check = Callable[[Any], "tuple[Any, str | None]"]


def _number(minimum: float, maximum: float) -> _Check:
    def check(value: Any) -> tuple[Any, str | None]:
        # bool is an int in Python but not a number in TOML.
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, "a number"
        if not (math.isfinite(value) and minimum <= value <= maximum):
            return None, f"a number from {minimum:g} to {maximum:g}"
        return float(value), None

    return check


def _integer(minimum: int, maximum: int) -> _Check:
    def check(value: Any) -> tuple[Any, str | None]:
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            return None, f"a whole number from {minimum} to {maximum}"
        return value, None

    return check


def _string(value: Any) -> tuple[Any, str | None]:
    if not isinstance(value, str) or not value:
        return None, "a non-empty string"
    return value, None


def _boolean(value: Any) -> tuple[Any, str | None]:
    if not isinstance(value, bool):
        return None, "true or false"
    return value, None


def _string_list(value: Any) -> tuple[Any, str | None]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        return None, "a list of non-empty strings"
    return tuple(dict.fromkeys(value)), None  # duplicates dropped, order kept


# table name ("" for the top level) -> key -> (Settings/Thresholds field, check)
_SCHEMA: dict[str, dict[str, tuple[str, _Check]]] = {
    "": {
        "interval_s": ("interval_s", _number(0.05, 3600.0)),
        "theme": ("theme", _string),
        "driver_deadline_s": ("driver_deadline_s", _number(0.05, 600.0)),
        "ascii": ("ascii", _boolean),
    },
    "thresholds": {
        "memory_percent": ("memory_percent", _number(1.0, 100.0)),
        "thermal_margin_c": ("thermal_margin_c", _number(0.0, 100.0)),
        "forecast_seconds": ("forecast_seconds", _number(1.0, 86400.0)),
        "horizon_s": ("horizon_s", _number(1.0, 7 * 86400.0)),
        "idle_min_memory_gib": ("idle_min_memory_gib", _number(0.0, 1024.0)),
        "idle_after_s": ("idle_after_s", _number(1.0, 7 * 86400.0)),
        "unattributed_min_gib": ("unattributed_min_gib", _number(0.0, 1024.0)),
        "unattributed_percent": ("unattributed_percent", _number(0.0, 100.0)),
        "stall_utilization_percent": ("stall_utilization_percent", _number(1.0, 100.0)),
        "stall_power_percent": ("stall_power_percent", _number(1.0, 100.0)),
        "stall_after_s": ("stall_after_s", _number(1.0, 86400.0)),
        "busy_idle_after_s": ("busy_idle_after_s", _number(1.0, 86400.0)),
    },
    "processes": {
        "columns": ("columns", _string_list),
        "sort_column": ("sort_column", _string),
        "sort_descending": ("sort_descending", _boolean),
    },
    "layout": {
        "compact": ("compact", _boolean),
        "show_processes": ("show_processes", _boolean),
        "show_host": ("show_host", _boolean),
    },
    "serve": {
        "max_tabs": ("serve_max_tabs", _integer(1, 64)),
    },
    "host": {
        "net_interfaces": ("net_interfaces", _string_list),
    },
}


def _type_name(value: Any) -> str:
    names = {bool: "a boolean", str: "a string", int: "a number", float: "a number"}
    names.update({list: "a list", dict: "a table"})
    return names.get(type(value), type(value).__name__)


def settings_from_mapping(data: Mapping[str, Any], origin: str) -> tuple[Settings, list[str]]:
    """Settings from parsed TOML; every key not usable is defaulted and named in a warning."""
    warnings: list[str] = []
    top: dict[str, Any] = {}
    thresholds: dict[str, Any] = {}
    for table, keys in _SCHEMA.items():
        if table:
            section = data.get(table, {})
            if not isinstance(section, dict):
                warnings.append(f"{origin}: [{table}] should be a table; using its defaults")
                continue
        else:
            section = data
        for key, value in section.items():
            if not table and key in _SCHEMA and key:
                continue  # a table, handled in its own turn
            where = f"{table}.{key}" if table else key
            if key not in keys:
                warnings.append(f"{origin}: unknown setting '{where}' ignored")
                continue
            name, check = keys[key]
            checked, expected = check(value)
            if expected is not None:
                warnings.append(
                    f"{origin}: '{where}' should be {expected}, not {_type_name(value)}"
                    f" ({_toml_value(value) if _is_writable(value) else '...'}); using the default"
                )
                continue
            (thresholds if table == "thresholds" else top)[name] = checked
    settings = replace(Settings(), thresholds=Thresholds(**thresholds), **top)
    return settings, warnings


def load_settings(path: Path | None = None) -> tuple[Settings, list[str]]:
    """The settings in ``path`` (default location when None), with warnings; never raises.

    A missing file is not an error: it gives the defaults and no warning.
    """
    path = default_settings_path() if path is None else path
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings(), []
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return Settings(), [f"{path}: cannot read settings ({reason}); using defaults"]
    # Here, not at the top: only a settings file needs the TOML reader (4 ms and four modules).
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        # The message ends with "(at line N, column M)".
        return Settings(), [f"{path}: not valid TOML: {error}; using defaults"]
    return settings_from_mapping(data, str(path))


# --- writing -----------------------------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f"}
_ESCAPES["\r"] = "\\r"


def _toml_string(text: str) -> str:
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _is_writable(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_is_writable(item) for item in value)
    return isinstance(value, (bool, int, float, str))


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)  # shortest text that reads back as the same float
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def settings_to_toml(settings: Settings) -> str:
    """The settings file text for ``settings``, in the layout of the module docstring."""
    values = {f.name: getattr(settings, f.name) for f in fields(settings)}
    threshold_values = {f.name: getattr(settings.thresholds, f.name) for f in fields(Thresholds)}
    lines = ["# gputop settings; see the README for what each key does."]
    for table, keys in _SCHEMA.items():
        if table:
            lines += ["", f"[{table}]"]
        source = threshold_values if table == "thresholds" else values
        for key, (name, _check) in keys.items():
            if source[name] is not None:  # None is the default that TOML cannot write: left out
                lines.append(f"{key} = {_toml_value(source[name])}")
    return "\n".join(lines) + "\n"


def save_settings(settings: Settings, path: Path | None = None) -> None:
    """Write ``settings`` to ``path`` atomically, creating its folder; raises OSError."""
    path = default_settings_path() if path is None else path
    path.parent.mkdir(parents=True, exist_ok=True)
    text = settings_to_toml(settings)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
    )
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
