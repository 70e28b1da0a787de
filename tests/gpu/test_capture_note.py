"""The real-GPU tier's capture note, checked without a GPU."""

from __future__ import annotations

from pathlib import Path

from .capture_note import MOST_BYTES, capture_name, note, results_dir


def test_the_capture_goes_to_the_results_folder_named_by_the_gpu_and_driver(tmp_path: Path) -> None:
    assert results_dir(tmp_path / "fallback", {}) == tmp_path / "fallback"
    assert results_dir(tmp_path / "fallback", {"OUT": str(tmp_path / "out")}) == tmp_path / "out"
    assert (tmp_path / "out").is_dir()
    chosen = {"GPUTOP_GPU_RESULTS": str(tmp_path / "mine"), "OUT": str(tmp_path / "out")}
    assert results_dir(tmp_path, chosen) == tmp_path / "mine"
    document = {"driver_version": "570.86.15", "ticks": [{"json": {"gpus": [{"name": "NVIDIA H200"}]}}]}
    assert capture_name(document) == "nvidia-h200-570.86.15.json.gz"
    assert capture_name({"ticks": [{"json": None}]}) == "no-gpu-no-driver.json.gz"


def test_the_note_says_to_add_a_small_capture_and_to_shorten_a_big_one() -> None:
    small = note(Path("/results/nvidia-h200-570.86.15.json.gz"), 20_000)
    assert small.endswith(
        "(20,000 bytes). Add it to tests/captures/ (cp /results/nvidia-h200-570.86.15.json.gz tests/captures/)"
        " and every default test run replays this driver's answers."
    )
    big = note(Path("/results/big.json.gz"), MOST_BYTES + 1)
    assert "over the 262,144 a kept capture may weigh: take a shorter one" in big
