"""The command as the lists show it: the program's base name, its script and its arguments
(core.output.command_text), on command lines as /proc gives them on real machines."""

from __future__ import annotations

import pytest

from gputop.core.output.command_text import command_text, fit_command

PYENV = "/home/alice/.pyenv/versions/3.11.7/bin/python3.11"
VENV = "/home/alice/proj/.venv/bin/python3"
CONDA = "/opt/conda/envs/torch/bin/python"


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        # pyenv, venv and conda interpreters: the base name, then the script and every argument.
        (f"{PYENV} train.py --local-rank 0 --config a.yaml", "python3.11 train.py --local-rank 0 --config a.yaml"),
        (f"{VENV} -u /home/alice/proj/train.py --local-rank 3", "python3 -u train.py --local-rank 3"),
        (f"{CONDA} -X dev /srv/jobs/eval.py", "python -X dev eval.py"),
        # torchrun as /proc reads it: a console script run by its interpreter.
        (f"{VENV} /home/alice/proj/.venv/bin/torchrun --nproc-per-node 4 train.py",
         "torchrun --nproc-per-node 4 train.py"),
        ("/usr/local/bin/torchrun --nproc-per-node 4 train.py", "torchrun --nproc-per-node 4 train.py"),
        # python -m: the module and its arguments say what runs; nothing after -m is shortened.
        (f"{CONDA} -m torch.distributed.run --nproc-per-node 2 /srv/train.py",
         "python -m torch.distributed.run --nproc-per-node 2 /srv/train.py"),
        # bash -c: the shell's base name and the command it was given.
        ("/bin/bash -c python train.py --local-rank 1", "bash -c python train.py --local-rank 1"),
        ("/usr/bin/bash /home/bob/run.sh 8", "bash run.sh 8"),
        # Not an interpreter: only the program is shortened, its path arguments kept.
        ("/usr/bin/ollama serve --models /data/models", "ollama serve --models /data/models"),
        ("./llama-server -m /models/q4.gguf", "llama-server -m /models/q4.gguf"),
        ("python3", "python3"),
        # Not a path, though it has slashes: markup in a hostile command line is left whole.
        ("[@click=app.quit]x[/] [b]y", "[@click=app.quit]x[/] [b]y"),
        ("/usr/bin/python3 [b]x[/b].py", "python3 [b]x[/b].py"),
    ],
)
def test_the_program_base_name_with_its_script_and_arguments(command: str, shown: str) -> None:
    assert command_text(command) == shown


def test_a_kernel_thread_or_an_empty_command_line_shows_the_name_whole() -> None:
    # procinfo gives a process with no arguments its name as the command: not a path to shorten.
    assert command_text("kworker/0:1", "kworker/0:1") == "kworker/0:1"
    assert command_text(None, "nvidia-persiste") == "nvidia-persiste"
    assert command_text("", "python3") == "python3"
    assert command_text("   ", None) == ""
    assert command_text(None) == ""


def test_a_command_too_long_for_its_column_keeps_its_start_and_its_end() -> None:
    assert fit_command("python3 train.py --local-rank 0", 28) == "python3 train.py …cal-rank 0"
    assert fit_command("python3 train.py --local-rank 0", 31) == "python3 train.py --local-rank 0"
    # In the tree the branches come first; the start kept is at most two thirds of the room.
    assert fit_command("├─ python3 train.py --local-rank 1", 28) == "├─ python3 train.p…al-rank 1"
    assert fit_command("│  └─ torchrun --nproc-per-node 4 train.py", 28) == "│  └─ torchrun --n… train.py"
    assert fit_command("python3 train.py --local-rank 0", 12) == "python3 tra…"
    # Deep in a tree the branches give way first: the command keeps two thirds of the room.
    deep = "      │  │  └─ python3 train.py --local-rank 1"
    assert fit_command(deep, 28) == "…└─ python3 train.…al-rank 1"
