"""Sending only the changed cells leaves the terminal showing exactly what Textual's full output would."""

from __future__ import annotations

import random
import unicodedata

import pyte
import pytest
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual._compositor import ChopsUpdate, LayoutUpdate
from textual.geometry import Region, Size
from textual.strip import Strip

from gputop.ui.terminal import terminal_diff
from gputop.ui.terminal.terminal_diff import TerminalDiff
from gputop.ui.terminal.textual_private import changed_cells

WIDTH, HEIGHT = 40, 8
SIZE = Size(WIDTH, HEIGHT)
CUTS = [0, 1, 12, 27, 39, 40]  # a border, three widgets, a scrollbar
STYLES = [
    Style(color="grey85", bgcolor="grey7"),
    Style(color="green", bgcolor="grey7"),
    Style(color="red", bgcolor="grey7", bold=True),
    Style(color="cyan", bgcolor="navy_blue"),
    Style(bold=True, reverse=True),
    Style(color="grey85", bgcolor="grey7", italic=True),
]
CHARACTERS = "ab0123 .─│▁▅█" + "世界"


def console() -> Console:
    return Console(color_system="256", force_terminal=True, width=WIDTH, height=HEIGHT)


def random_strip(rng: random.Random, width: int) -> Strip:
    segments = []
    used = 0
    while used < width:
        text = "".join(rng.choice(CHARACTERS) for _ in range(rng.randint(1, 6)))
        segments.append(Segment(text, rng.choice(STYLES)))
        used += Segment(text).cell_length
    return Strip(segments).crop_extend(0, width, STYLES[0])


def random_line(rng: random.Random) -> list[Strip]:
    return [random_strip(rng, end - start) for start, end in zip(CUTS, CUTS[1:], strict=False)]


def terminal() -> tuple[pyte.Screen, pyte.ByteStream]:
    screen = pyte.Screen(WIDTH, HEIGHT)
    return screen, pyte.ByteStream(screen)


def cells(screen: pyte.Screen) -> list[list[tuple[object, ...]]]:
    return [[tuple(screen.buffer[y][x]) for x in range(WIDTH)] for y in range(HEIGHT)]


def chops_update(frame: list[list[Strip]], spans: list[tuple[int, int, int]]) -> ChopsUpdate:
    rendered = {y for y, _, _ in spans}
    chops = [
        {start: (strip if y in rendered else None) for start, strip in zip(CUTS, line, strict=False)}
        for y, line in enumerate(frame)
    ]
    return ChopsUpdate(chops, spans, [CUTS[1:] for _ in frame])


def test_random_updates_leave_the_same_screen_as_textuals_own_output() -> None:
    random_updates_leave_textuals_screen(random.Random(1234), rounds=300)


def test_when_the_style_codes_run_out_the_writer_starts_afresh_and_the_screen_stays_true(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A code a distinct SGR sequence; a few here, where a real screen would need tens of thousands.
    monkeypatch.setattr(terminal_diff, "_MOST_CODES", 3)
    random_updates_leave_textuals_screen(random.Random(99), rounds=60)


def random_updates_leave_textuals_screen(rng: random.Random, rounds: int) -> None:
    """Random frames, each fed to Textual's own output and to the writer: after each, both screens
    hold the same cells."""
    out = console()
    plain_screen, plain = terminal()
    diffed_screen, diffed = terminal()
    diff = TerminalDiff()
    frame = [random_line(rng) for _ in range(HEIGHT)]
    full = LayoutUpdate(frame, Region(0, 0, WIDTH, HEIGHT))
    plain.feed(full.render_segments(out).encode())
    written = changed_cells(diff, full, out, SIZE)
    assert written is not None
    diffed.feed(written.encode())
    assert cells(diffed_screen) == cells(plain_screen)
    for _ in range(rounds):
        for _ in range(rng.randint(0, 4)):
            y = rng.randrange(HEIGHT)
            if rng.random() < 0.5:
                frame[y] = random_line(rng)
            else:  # a small change inside one widget: the common case
                chop = rng.randrange(len(CUTS) - 1)
                width = CUTS[chop + 1] - CUTS[chop]
                old = frame[y][chop]
                at = rng.randrange(width)
                patch = random_strip(rng, rng.randint(1, max(1, width - at)))
                frame[y][chop] = Strip.join([old.crop(0, at), patch, old.crop(at + patch.cell_length, width)])
        update: ChopsUpdate | LayoutUpdate
        if rng.random() < 0.1:  # a full repaint: a dialog closed
            update = LayoutUpdate([list(line) for line in frame], Region(0, 0, WIDTH, HEIGHT))
        else:
            spans = []
            for y in sorted(rng.sample(range(HEIGHT), rng.randint(1, HEIGHT))):
                x1 = rng.randrange(WIDTH)
                spans.append((y, x1, rng.randint(x1 + 1, WIDTH)))
            update = chops_update(frame, spans)
        plain.feed(update.render_segments(out).encode())
        written = changed_cells(diff, update, out, SIZE)
        assert written is not None
        diffed.feed(written.encode())
        assert cells(diffed_screen) == cells(plain_screen)


def test_an_unchanged_frame_writes_nothing() -> None:
    rng = random.Random(7)
    out = console()
    diff = TerminalDiff()
    frame = [random_line(rng) for _ in range(HEIGHT)]
    changed_cells(diff, LayoutUpdate(frame, Region(0, 0, WIDTH, HEIGHT)), out, SIZE)
    update = chops_update(frame, [(y, 0, WIDTH) for y in range(HEIGHT)])
    assert changed_cells(diff, update, out, SIZE) == ""


def test_a_ticking_clock_in_a_row_costs_a_few_bytes_not_the_row() -> None:
    out = console()
    diff = TerminalDiff()
    style = STYLES[0]

    def row(seconds: int) -> list[list[Strip]]:
        text = f" 4242 alice  python train.py   {seconds:>3}s   "
        return [[Strip([Segment(text, style)])] for _ in range(HEIGHT)]

    changed_cells(diff, LayoutUpdate(row(58), Region(0, 0, WIDTH, HEIGHT)), out, SIZE)
    plain = ChopsUpdate([{0: line[0]} for line in row(59)], [(3, 0, WIDTH)], [[WIDTH]] * HEIGHT)
    sequences = changed_cells(diff, plain, out, SIZE)
    assert sequences is not None
    assert len(sequences) < 40 < len(plain.render_segments(out))
    screen, stream = terminal()
    stream.feed(sequences.encode())
    assert screen.display[3][33] == "9"


def test_after_forget_the_next_update_is_written_in_full() -> None:
    out = console()
    diff = TerminalDiff()
    frame = [[random_strip(random.Random(y), WIDTH)] for y in range(HEIGHT)]
    changed_cells(diff, LayoutUpdate(frame, Region(0, 0, WIDTH, HEIGHT)), out, SIZE)
    diff.forget()  # the terminal was cleared behind our back (suspended and resumed)
    update = ChopsUpdate([{0: line[0]} for line in frame], [(2, 0, WIDTH)], [[WIDTH]] * HEIGHT)
    written = changed_cells(diff, update, out, SIZE)
    assert written is not None
    plain_screen, plain = terminal()
    plain.feed(update.render_segments(out).encode())
    screen, stream = terminal()
    stream.feed(written.encode())
    assert cells(screen) == cells(plain_screen)


def test_combining_marks_stay_on_their_character() -> None:
    out = console()
    plain_screen, plain = terminal()
    diffed_screen, diffed = terminal()
    diff = TerminalDiff()
    blank = [[Strip([Segment(" " * (end - start), STYLES[0])]) for start, end in zip(CUTS, CUTS[1:], strict=False)]
             for _ in range(HEIGHT)]
    full = LayoutUpdate(blank, Region(0, 0, WIDTH, HEIGHT))
    plain.feed(full.render_segments(out).encode())
    first = changed_cells(diff, full, out, SIZE)
    assert first is not None
    diffed.feed(first.encode())
    frame = [list(line) for line in blank]
    marked = Strip([Segment("ze\u0301\u0301ro 世\u0301界", STYLES[1])])
    frame[2][2] = marked.crop_extend(0, CUTS[3] - CUTS[2], STYLES[0])
    update = chops_update(frame, [(2, 0, WIDTH)])
    plain.feed(update.render_segments(out).encode())
    written = changed_cells(diff, update, out, SIZE)
    assert written is not None
    diffed.feed(written.encode())
    assert cells(diffed_screen) == cells(plain_screen)
    assert unicodedata.normalize("NFD", diffed_screen.buffer[2][CUTS[2] + 1].data) == "e\u0301\u0301"


# Row 3 of a dialog drawn over columns 5..25, in the middle of the chops at 1 and 12 below it.
DIALOG_ROW, DIALOG_FROM, DIALOG_TO = 3, 5, 25


def dialog(style: Style) -> ChopsUpdate:
    cuts = [0, DIALOG_FROM, DIALOG_TO, WIDTH]
    face = Strip([Segment(" Quit gputop? ", style)]).crop_extend(0, DIALOG_TO - DIALOG_FROM, style)
    chops: list[dict[int, Strip | None]] = [{} for _ in range(HEIGHT)]
    chops[DIALOG_ROW] = {0: None, DIALOG_FROM: face, DIALOG_TO: None}
    ends = [cuts[1:] if y == DIALOG_ROW else [] for y in range(HEIGHT)]
    return ChopsUpdate(chops, [(DIALOG_ROW, DIALOG_FROM, DIALOG_TO)], ends)


@pytest.mark.parametrize(
    "style",
    [STYLES[3], Style(color="cyan", bgcolor="navy_blue", link="https://example.com/help")],
    ids=["styled text", "a hyperlink (written as Textual renders it)"],
)
def test_a_line_handed_back_after_a_dialog_covered_it_is_drawn_again(style: Style) -> None:
    # Textual hands the line back as the same Strip objects as before the dialog opened, at the
    # same places: a writer that skipped them as the strips it last drew there (an idea measured
    # and left out: at 8x16 no piece came back so after start-up) would leave the dialog showing.
    rng = random.Random(5)
    out = console()
    plain_screen, plain = terminal()
    diffed_screen, diffed = terminal()
    diff = TerminalDiff()
    frame = [random_line(rng) for _ in range(HEIGHT)]
    row = chops_update(frame, [(DIALOG_ROW, 0, WIDTH)])
    shown = []
    for update in (LayoutUpdate(frame, Region(0, 0, WIDTH, HEIGHT)), row, dialog(style), row):
        plain.feed(update.render_segments(out).encode())
        written = changed_cells(diff, update, out, SIZE)
        assert written is not None
        diffed.feed(written.encode())
        assert cells(diffed_screen) == cells(plain_screen)
        shown.append("Quit gputop?" in diffed_screen.display[DIALOG_ROW])
    assert shown == [False, False, True, False]


def test_a_hyperlink_beyond_the_spans_end_costs_nothing() -> None:
    # Textual writes a chop only up to its span's end: what lies beyond (a link, which the writer
    # leaves to Textual's own output) is not written, and the cells before it are sent as any others.
    out = console()
    link = Style(color="cyan", link="https://example.com/help")
    frame = [random_line(random.Random(y)) for y in range(HEIGHT)]
    full = LayoutUpdate(frame, Region(0, 0, WIDTH, HEIGHT))
    chop, span_end = CUTS[2], 20  # the chop 12..27, its link at 22..26
    linked = Strip([Segment("x", STYLES[2]), Segment(" " * 9, STYLES[0]), Segment("help", link)])
    linked = linked.crop_extend(0, CUTS[3] - chop, STYLES[0])
    updates = []
    written = []
    for strip in (linked, linked.crop(0, span_end - chop)):  # as it comes, and as Textual writes it
        diff = TerminalDiff()
        changed_cells(diff, full, out, SIZE)
        changed = [list(line) for line in frame]
        changed[4][2] = strip
        updates.append(chops_update(changed, [(4, chop, span_end)]))
        written.append(changed_cells(diff, updates[-1], out, SIZE) or "")
    assert written[0] == written[1]
    assert "help" not in written[0] and "\x1b]8" not in written[0]
    plain_screen, plain = terminal()
    diffed_screen, diffed = terminal()
    for stream, sequences in ((plain, updates[0].render_segments(out)), (diffed, written[0])):
        stream.feed(full.render_segments(out).encode())
        stream.feed(sequences.encode())
    assert cells(diffed_screen) == cells(plain_screen)
