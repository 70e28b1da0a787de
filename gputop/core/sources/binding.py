"""Which ``pynvml`` this Python imports, and whether gputop can read NVML through it.

The one check both the commands (``factory.open_source``) and ``gputop doctor`` (its probe child) make,
so that the doctor says "cannot run" exactly where the commands refuse. gputop reads NVML through
nvidia-ml-py's ``pynvml`` module; the old standalone ``pynvml`` package (11.x, a copy of NVIDIA's
bindings of its day) installs a module of the same name that hides it. The deprecated ``pynvml``
wrapper (12.x, 13.x) only depends on nvidia-ml-py, whose module is then the one imported: it works,
and the FutureWarning it raises on the first import is kept off the user's terminal.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

# The versions gputop admits (pyproject.toml's line, kept equal by tests/test_bindings.py): from the
# lowest to the newest 13.x, each passed the NVML tests (tests/compat/run_bindings.py, docs/trust.md).
SUPPORTED = "nvidia-ml-py>=12.535,<14"
_INSTALL = f"`pip install --force-reinstall '{SUPPORTED}'`"
# What the deprecated pynvml wrapper warns on the first `import pynvml`, and only that.
_WRAPPER_WARNING = r"The pynvml package is deprecated\. Please install nvidia-ml-py instead\."


@dataclass(frozen=True, slots=True)
class Binding:
    """The ``pynvml`` found: its file, nvidia-ml-py's version when the module is that package's, and
    what is wrong with it (``problem``, with what to do in ``fix``), or None."""

    file: str | None
    version: str | None
    problem: str | None = None
    fix: str | None = None
    warning_only: bool = False  # a module that is not nvidia-ml-py's, but that gputop can read NVML with

    @property
    def refused(self) -> bool:
        """gputop cannot read NVML with this module: every command refuses, and doctor says "cannot run"."""
        return self.problem is not None and not self.warning_only

    @property
    def refusal(self) -> str:
        """The problem and its fix in one line, as a command says it."""
        return f"{self.problem}: {self.fix}"


def quiet_wrapper() -> None:
    """Keep the deprecated pynvml wrapper's FutureWarning off the terminal, wherever this process imports
    pynvml from now on (every command: the capture player, the doctor's probe, the sources): that
    warning only, by its words and category."""
    warnings.filterwarnings("ignore", message=_WRAPPER_WARNING, category=FutureWarning)


def quiet_import() -> ModuleType:
    """``import pynvml`` without the deprecated wrapper's FutureWarning (it warns on the first import only)."""
    quiet_wrapper()
    return importlib.import_module("pynvml")


def inspect_binding() -> Binding:
    """Import ``pynvml`` and gputop's NVML source with it; say which module it is and what stops gputop."""
    try:
        pynvml = quiet_import()
    except ModuleNotFoundError as error:
        if error.name != "pynvml":
            return Binding(None, None, f"`import pynvml` fails: {error}", _INSTALL)
        return Binding(None, None, "no module named pynvml", f"`pip install '{SUPPORTED}'`")
    except Exception as error:  # noqa: BLE001 - a shadowing package may raise anything on import
        return Binding(None, None, f"`import pynvml` fails: {type(error).__name__}: {error}", _INSTALL)
    file = getattr(pynvml, "__file__", None)
    version = _owner_version("nvidia-ml-py", file)
    old = None if version is not None else _owner_version("pynvml", file)
    if old is not None:
        return Binding(
            file, None,
            f"`import pynvml` finds the old standalone pynvml {old} package ({file}), not nvidia-ml-py",
            f"`pip uninstall pynvml`, then {_INSTALL}",
        )
    try:
        importlib.import_module("gputop.core.sources.nvml")
    except (ImportError, AttributeError) as error:
        if version is not None:
            return Binding(
                file, version, f"nvidia-ml-py {version} lacks what gputop reads NVML with ({error})",
                f"`pip install --upgrade '{SUPPORTED}'`",
            )
        return _shadowed(file, f" and lacks what gputop reads NVML with ({error})", warning_only=False)
    return Binding(file, version) if version is not None else _shadowed(file, "", warning_only=True)


def _shadowed(file: str | None, lacking: str, warning_only: bool) -> Binding:
    """A module named pynvml that no installed nvidia-ml-py (or old pynvml package) put there."""
    expected = _module_file("nvidia-ml-py")
    owner = "nvidia-ml-py is not installed" if expected is None else f"not nvidia-ml-py's {expected}"
    return Binding(
        file, None,
        f"`import pynvml` finds {file}, {owner}{lacking}",
        f"another package named pynvml shadows nvidia-ml-py: `pip uninstall pynvml`, remove that folder from"
        f" PYTHONPATH, then {_INSTALL}",
        warning_only,
    )


def _module_file(name: str) -> Path | None:
    """Where the installed distribution ``name`` put its ``pynvml`` module (None: not installed, or none)."""
    import importlib.metadata  # only to word a problem: some 20 ms of imports

    try:
        files = importlib.metadata.distribution(name).files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for listed in files:
        if listed.parts[0] == "pynvml.py" or listed.parts[:2] == ("pynvml", "__init__.py"):
            return Path(str(listed.locate())).resolve()
    return None


def _owner_version(name: str, file: str | None) -> str | None:
    """The version of the distribution ``name`` when ``file`` is the ``pynvml`` module it installed: its
    dist-info beside the module lists the file (read directly, without importlib.metadata's imports)."""
    if file is None:
        return None
    module = Path(file)
    site = module.parent.parent if module.name == "__init__.py" else module.parent
    relative = module.relative_to(site).as_posix()
    prefix = name.replace("-", "_") + "-"
    for info in site.glob(f"{prefix}*.dist-info"):
        try:
            listed = (info / "RECORD").read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        if any(line.split(",", 1)[0] == relative for line in listed):
            return info.name[len(prefix):-len(".dist-info")]
    return None
