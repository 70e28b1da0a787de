"""The package someone installs: the sdist and wheel built from this tree, the wheel installed (not
editable) into a fresh venv, and the `gputop` command run from there; another project's `gputop`
installed over it is named, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, env={**environ, **env})


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("dist")
    done = _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)], cwd=out)
    assert done.returncode == 0, done.stdout + done.stderr
    yield out


@pytest.fixture(scope="module")
def installed(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the wheel installed; its dependencies come from the site-packages of the Python running
    the tests (named in a .pth file: a venv's `system_site_packages` would be its base Python's, which
    lacks them where the tests run in a venv themselves). The folders a .pth names are not searched for
    .pth files, so this checkout's editable install stays out."""
    home = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(home)
    site_packages = next((home / "lib").glob("python3*/site-packages"))
    paths = sysconfig.get_paths()
    (site_packages / "test-dependencies.pth").write_text(f"{paths['purelib']}\n{paths['platlib']}\n")
    wheel = next(built.glob("*.whl"))
    done = _run(
        [sys.executable, "-m", "pip", "--python", str(home / "bin" / "python"), "install", "--no-deps",
         "--ignore-installed", "--no-index", "-q", str(wheel)],
        cwd=home,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return home


def test_the_wheel_and_the_sdist_carry_the_license_and_the_metadata_a_registry_shows(built: Path) -> None:
    with zipfile.ZipFile(next(built.glob("*.whl"))) as wheel:
        names = wheel.namelist()
        metadata = wheel.read(next(name for name in names if name.endswith(".dist-info/METADATA"))).decode()
        license_text = wheel.read(next(name for name in names if name.endswith("licenses/LICENSE"))).decode()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert "Name: gputop-monitor" in metadata.splitlines()
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    classifiers = {line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Classifier: ")}
    assert {"Environment :: Console", "Topic :: System :: Monitoring", "Operating System :: POSIX :: Linux",
            "Programming Language :: Python :: 3.10"} <= classifiers
    assert "gputop/ui/gputop.tcss" in names and "gputop/py.typed" in names
    with tarfile.open(next(built.glob("*.tar.gz"))) as sdist:
        assert any(name.endswith("/LICENSE") for name in sdist.getnames())


def test_the_installed_wheel_runs_every_command_from_its_own_files(installed: Path, tmp_path: Path) -> None:
    gputop = str(installed / "bin" / "gputop")
    where = _run([str(installed / "bin" / "python"), "-c", "import gputop; print(gputop.__file__)"], cwd=tmp_path)
    assert where.stdout.strip().startswith(str(installed)), where.stdout + where.stderr
    version = _run([gputop, "--version"], cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.split() == ["gputop", "0.1.0"], version
    once = _run([gputop, "--demo", "--once"], cwd=tmp_path)
    assert once.returncode == 0 and "python train.py" in once.stdout, once.stderr
    dashboard = _run([gputop, "export", "--print-dashboard"], cwd=tmp_path)
    assert dashboard.returncode == 0 and '"panels"' in dashboard.stdout, dashboard.stderr
    doctor = _run([gputop, "doctor"], cwd=tmp_path, LD_LIBRARY_PATH=str(tmp_path))
    assert doctor.stdout.startswith("gputop doctor: "), doctor.stdout + doctor.stderr
    assert "Traceback" not in doctor.stderr


def _other_projects_wheel(directory: Path) -> Path:
    """A wheel as the `gputop` distribution on PyPI makes one: a `gputop` package with `cli.py`, and a
    `gputop` command that runs `gputop.cli:main`."""
    path = directory / "gputop-0.3.0-py3-none-any.whl"
    info = "gputop-0.3.0.dist-info"
    files = {
        "gputop/__init__.py": '__version__ = "0.3.0"\n',
        "gputop/cli.py": "def main():\n    print('the other gputop')\n",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: gputop\nVersion: 0.3.0\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": "[console_scripts]\ngputop = gputop.cli:main\n",
    }
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
        wheel.writestr(f"{info}/RECORD", "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"]))
    return path


def test_another_projects_gputop_installed_over_it_is_named_with_the_way_out(
    installed: Path, tmp_path: Path
) -> None:
    done = _run(
        [sys.executable, "-m", "pip", "--python", str(installed / "bin" / "python"), "install", "--no-deps",
         "--no-index", "-q", str(_other_projects_wheel(tmp_path))],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # Its command now stands where gputop's stood, and imports gputop-monitor's `gputop.cli` package.
    ran = _run([str(installed / "bin" / "gputop"), "--demo", "--once"], cwd=tmp_path)
    assert ran.returncode == 2
    assert "Traceback" not in ran.stderr
    assert ran.stderr.splitlines() == [
        "gputop: the distribution 'gputop' 0.3.0, another project, is installed over gputop-monitor's files, so"
        " the `gputop` package is no longer this one: run `pip uninstall -y gputop gputop-monitor`, then"
        " `pip install gputop-monitor` (or `pip install .` in its checkout)"
    ]
