"""The command as the lists show it: the program's base name, its script and its arguments
(core.output.command_text), on command lines as /proc gives them on real machines."""

from __future__ import annotations

import pytest

from gputop.core.format import safe_text
from gputop.core.output.command_text import command_text, fit_command, sibling_spans
from gputop.core.text_cut import cells, cut_end, fit_cells, last_start, wrap

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


RANKS = [f"python -u pretrain.py --local-rank {n} --config llama70b-fsdp-ac" for n in range(3)]


def test_siblings_keep_the_words_that_tell_them_apart_with_their_option() -> None:
    spans = sibling_spans([*RANKS, "python sweep.py --trial 17", "python sweep.py --trial 24 --resume", "nvtop"])
    texts = [*RANKS, "python sweep.py --trial 17", "python sweep.py --trial 24 --resume"]
    assert [text[start:end] for text, (start, end) in zip(texts, spans[:5], strict=True)] == [
        "--local-rank 0", "--local-rank 1", "--local-rank 2", "--trial 17", "--trial 24 --resume"]
    assert spans[5] is None  # no sibling
    assert sibling_spans(["python a.py", "python a.py"]) == [None, None]  # alike: nothing tells them apart
    # In the tree the branches before a command are not part of it.
    assert sibling_spans(["├─ python x.py --rank 1", "└─ python x.py --rank 2"]) == [(15, 23), (15, 23)]


def test_a_cut_keeps_the_span_asked_for_in_view() -> None:
    rank = RANKS[2]
    assert fit_command(rank, 30) == "python -u pretrain.…0b-fsdp-ac"  # nothing asked: the end
    assert fit_command(rank, 30, (22, 36)) == "python -u pret…--local-rank 2…"
    assert fit_command(rank, 16, (22, 36)) == "…--local-rank 2…"
    assert fit_command(rank, 10, (22, 36)) == "…--local-…"
    assert fit_command("python sweep.py --trial 17", 22, (16, 26)) == "python swee…--trial 17"


def test_a_scrolled_command_shows_from_its_start_on_and_stops_at_its_end() -> None:
    rank = RANKS[0]
    assert fit_command(rank, 20, start=8) == "…u pretrain.py --lo…"
    assert last_start(rank, 20) == len(rank) - 19
    assert fit_command(rank, 20, start=1000) == "…" + rank[-19:]


def test_cuts_count_cells_and_never_split_a_wide_character() -> None:
    name = "训练数据集"  # ten cells
    assert cells(name) == 10 and cut_end(name, 10) == name
    assert cut_end(name, 9) == "训练数据…"
    assert cut_end(name, 8) == "训练数…"  # 7 cells and "…": no half character, no space in its place
    assert fit_cells(name, 12) == name + "  " and fit_cells(name, 6, right=True) == " 训练…"
    # The start in two thirds of the room, the end in the rest: a wide character that does not fit is left out.
    assert fit_command(f"python {name}.py --名前 {name}1", 20) == "python 训练…数据集1"
    assert safe_text("山田太郎さん", 9) == "山田太郎…"


def test_wrap_breaks_after_a_space_in_the_second_half_of_a_line_and_loses_nothing() -> None:
    text = "python -m vllm.entrypoints.openai.api_server --model mistral-7b"
    lines = wrap(text, 30)
    assert lines == ["python -m vllm.entrypoints.ope", "nai.api_server --model ", "mistral-7b"]
    assert "".join(lines) == text
    assert wrap("short", 30) == ["short"]
