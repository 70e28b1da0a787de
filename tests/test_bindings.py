"""Which ``pynvml`` gputop runs on, as a user meets it: the real command and ``gputop doctor`` against the
fake driver, with a binding installed beside the project's in a folder on PYTHONPATH (a module and its
dist-info, as pip leaves them). The module is the real nvidia-ml-py's, changed as each case says; the
real older releases are run by ``tests/compat/run_bindings.py``."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fakenvml import NOT_AVAILABLE, GiB, Scenario
from fakenvml.fixture import FakeNvml
from test_doctor import checks, clean_env, doctor

from gputop.core.doctor import ERROR, OK, WARNING
from gputop.core.sources.binding import SUPPORTED

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
REAL_MODULE = Path(str(importlib.metadata.distribution("nvidia-ml-py").locate_file("pynvml.py")))
NEXT_STEP = " — run `gputop doctor` to see why, or `gputop --demo` to try gputop without a GPU\n"
# What the deprecated pynvml wrapper (13.x) warns on the first `import pynvml`, word for word.
WRAPPER_WARNING = (
    "The pynvml package is deprecated. Please install nvidia-ml-py instead. If you did not install pynvml"
    " directly, please report this to the maintainers of the package that installed pynvml for you."
)


def installed(site: Path, distribution: str, version: str, module: str, text: str) -> Path:
    """``site`` holding the module ``module`` and the dist-info pip would leave for it."""
    (site / module).parent.mkdir(parents=True, exist_ok=True)
    (site / module).write_text(text)
    info = site / f"{distribution.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n")
    (info / "RECORD").write_text(f"{module},,\n{info.name}/METADATA,,\n{info.name}/RECORD,,\n")
    return site


def real_module(*deleted: str) -> str:
    """nvidia-ml-py's own module, with these names taken out at its end (where it has them)."""
    return REAL_MODULE.read_text() + "".join(f"\nglobals().pop({name!r}, None)\n" for name in deleted)


def gputop(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gputop", *args], capture_output=True, text=True, env=env,
                          timeout=60)


def with_site(fake_nvml: FakeNvml, site: Path) -> dict[str, str]:
    return fake_nvml.env(base=clean_env(PYTHONPATH=f"{site}:{ROOT}"))


def both_refuse(env: dict[str, str], command: str, words: str, advice: str) -> None:
    """gputop's command says the binding's problem and its fix in one line; doctor says "cannot run" for it."""
    result = gputop(env, command)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"gputop: NVML is not available: {words}: {advice}{NEXT_STEP}"
    code, document = doctor(env)
    assert (code, document["runnable"], document["summary"]) == (1, False, f"gputop cannot run: {words}")
    assert checks(document)["pynvml"] == (ERROR, words, advice)
    assert checks(document)["driver"] == (ERROR, f"not reached: {words}", None)


def test_a_binding_without_the_v3_process_structure_lists_processes_as_12_535_does(
    fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    # nvidia-ml-py 12.535.x names neither c_nvmlProcessInfo_v3_t nor (12.535.77) c_nvmlProcessInfo_v2_t.
    site = installed(tmp_path, "nvidia-ml-py", "12.535.161", "pynvml.py",
                     real_module("c_nvmlProcessInfo_v3_t", "c_nvmlProcessInfo_v2_t"))
    fake_nvml.write(Scenario().gpu(memory_total=80 * GiB).process(gpu=0, pid=4242, used=3 * GiB, kind="C")
                    .process(gpu=0, pid=4343, used=NOT_AVAILABLE, kind="G"))
    env = with_site(fake_nvml, site)
    result = gputop(env, "--json")
    assert (result.returncode, result.stderr) == (0, "")
    listed = [(p["pid"], p["type"], p["gpu_memory"]) for p in json.loads(result.stdout)["gpus"][0]["processes"]]
    assert sorted(listed) == [(4242, "C", 3 * GiB), (4343, "G", None)]
    code, document = doctor(env)
    assert (code, checks(document)["pynvml"]) == (0, (OK, f"nvidia-ml-py 12.535.161 ({site / 'pynvml.py'})", None))


def test_the_old_standalone_pynvml_package_is_refused_by_gputop_and_doctor_alike(
    fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    # pynvml 11.x installs a package of its own, pynvml/, which hides nvidia-ml-py's pynvml.py.
    site = installed(tmp_path, "pynvml", "11.5.3", "pynvml/__init__.py", real_module())
    fake_nvml.write(Scenario().gpu())
    env = with_site(fake_nvml, site)
    words = (
        f"`import pynvml` finds the old standalone pynvml 11.5.3 package ({site / 'pynvml' / '__init__.py'}),"
        " not nvidia-ml-py"
    )
    advice = f"`pip uninstall pynvml`, then `pip install --force-reinstall '{SUPPORTED}'`"
    both_refuse(env, "--json", words, advice)


def test_an_nvidia_ml_py_that_lacks_a_name_gputop_needs_is_refused_by_both_with_the_upgrade(
    fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    site = installed(tmp_path, "nvidia-ml-py", "12.0.0", "pynvml.py", real_module("NVML_VALUE_NOT_AVAILABLE_ulonglong"))
    fake_nvml.write(Scenario().gpu())
    env = with_site(fake_nvml, site)
    words = (
        "nvidia-ml-py 12.0.0 lacks what gputop reads NVML with"
        " (module 'pynvml' has no attribute 'NVML_VALUE_NOT_AVAILABLE_ulonglong')"
    )
    advice = f"`pip install --upgrade '{SUPPORTED}'`"
    both_refuse(env, "--once", words, advice)


# The wrapper installs itself as a .pth file in site-packages that puts this finder first on
# sys.meta_path; sitecustomize (on PYTHONPATH) adds that folder as a site folder, so that every Python
# started here, the doctor's probe child too, has the finder as a wrapper-installed Python does.
REDIRECTOR = f"""
import importlib.abc, sys, warnings

class Finder(importlib.abc.MetaPathFinder):
    warned = False

    def find_spec(self, name, path, target=None):
        if name.startswith("pynvml") and not self.warned:
            warnings.warn({WRAPPER_WARNING!r}, FutureWarning, stacklevel=2)
            self.warned = True
        return None

sys.meta_path.insert(0, Finder())
"""


@pytest.mark.parametrize("args", [("--json",), ("--once",), ("doctor",)])
def test_the_deprecated_pynvml_wrappers_warning_never_reaches_the_terminal(
    fake_nvml: FakeNvml, tmp_path: Path, args: tuple[str, ...]
) -> None:
    wrapper = tmp_path / "site-packages"
    wrapper.mkdir()
    (wrapper / "_pynvml_redirector.py").write_text(REDIRECTOR)
    (wrapper / "_pynvml_redirector.pth").write_text("import _pynvml_redirector\n")
    (tmp_path / "sitecustomize.py").write_text(f"import site\nsite.addsitedir({str(wrapper)!r})\n")
    fake_nvml.write(Scenario().gpu())
    env = fake_nvml.env(base=clean_env(PYTHONPATH=f"{tmp_path}:{ROOT}"))
    shown = subprocess.run([sys.executable, "-c", "import pynvml"], capture_output=True, text=True, env=env)
    assert f"FutureWarning: {WRAPPER_WARNING}" in shown.stderr  # the wrapper's warning, as a plain import shows it
    result = gputop(env, *args)
    assert (result.returncode, result.stderr) == (0, "")


def test_the_admitted_nvidia_ml_py_versions_are_the_ones_the_refusals_name() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert [d for d in dependencies if d.startswith("nvidia-ml-py")] == [SUPPORTED]


def test_a_working_copy_of_the_module_outside_any_package_runs_and_doctor_warns(
    fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    (tmp_path / "pynvml.py").write_text(real_module())  # a copy someone put on PYTHONPATH, no dist-info
    fake_nvml.write(Scenario().gpu().process(gpu=0, pid=4242, used=GiB, kind="C"))
    env = with_site(fake_nvml, tmp_path)
    result = gputop(env, "--json")
    assert (result.returncode, result.stderr) == (0, "")
    assert [p["pid"] for p in json.loads(result.stdout)["gpus"][0]["processes"]] == [4242]
    code, document = doctor(env)
    assert (code, document["runnable"]) == (0, True)
    assert checks(document)["pynvml"] == (
        WARNING,
        f"`import pynvml` finds {tmp_path / 'pynvml.py'}, not nvidia-ml-py's {REAL_MODULE.resolve()}",
        "another package named pynvml shadows nvidia-ml-py: `pip uninstall pynvml`, remove that folder from"
        f" PYTHONPATH, then `pip install --force-reinstall '{SUPPORTED}'`",
    )


def test_a_binding_whose_value_union_lacks_the_unsigned_short_reads_the_field_batch_as_12_560_does(
    fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    # nvidia-ml-py before 12.570 has no usVal in c_nvmlValue_t: gputop decodes the batch by nvml.h's C types.
    older_union = (
        "\nclass c_nvmlValue_t(Union):\n"
        "    _fields_ = [(name, kind) for name, kind in c_nvmlValue_t._fields_ if name != 'usVal']\n"
    )
    site = installed(tmp_path, "nvidia-ml-py", "12.560.30", "pynvml.py", REAL_MODULE.read_text() + older_union)
    fake_nvml.write(Scenario().gpu(memory_total=80 * GiB, memory_temp=71, pcie_replay=3))
    result = gputop(with_site(fake_nvml, site), "--json")
    assert (result.returncode, result.stderr) == (0, "")
    gpu = json.loads(result.stdout)["gpus"][0]
    assert (gpu["temperature"]["memory"], gpu["pcie"]["replay_errors"]) == (71, 3)
