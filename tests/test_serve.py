"""`gputop serve` without a browser: what each tab runs, refusals, the token, the tab cap, no orphans, Ctrl+C.

The server is the real command; the tabs are websocket clients speaking textual-serve's protocol.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest
from e2e.webserve import ServedGputop

from gputop.cli.args import build_parser
from gputop.cli.main import main
from gputop.cli.serve import textual_serve_private
from gputop.cli.serve.command import parse_command_line, tab_arguments
from gputop.cli.serve.server import GputopServer
from gputop.core.recording.record import Recorder
from gputop.core.sampler import Sampler
from gputop.core.settings import Settings
from gputop.core.sources.demo import DemoSource

GPUTOP = [sys.executable, "-m", "gputop"]


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("serve") / "demo.jsonl"
    sampler = Sampler(DemoSource(gpu_count=2))
    sampler.open()
    recorder = Recorder(str(path))
    for _ in range(3):
        recorder.write(sampler.sample())
    recorder.close()
    return str(path)


def tab_words(*argv: str) -> list[str]:
    parser = build_parser()
    return tab_arguments(parser, parse_command_line(parser, argv), Settings())


def test_it_listens_on_loopback_port_8000_unless_told_otherwise() -> None:
    parser = build_parser()
    assert parse_command_line(parser, ["serve"]).listen == "127.0.0.1:8000"
    assert parse_command_line(parser, ["serve", "--listen", ":80"]).listen == ":80"


def test_each_tab_runs_gputop_read_only_with_the_options_given_before_or_after_serve(recording: str) -> None:
    assert tab_words("--demo", "--demo-gpus", "2", "serve", "--listen", ":0", "-i", "0.5") == [
        "--readonly", "--demo", "--demo-gpus", "2", "-i", "0.5",
    ]
    assert tab_words("serve", "--allow-signals", "--demo") == ["--demo"]
    assert tab_words("serve", "replay", recording) == ["--readonly", "replay", recording]
    assert tab_words("serve", "--token", "t", "cluster", "--prometheus", "http://127.0.0.1:9") == [
        "--readonly", "cluster", "--prometheus", "http://127.0.0.1:9",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--listen", "nonsense", "--demo"], "--listen wants HOST:PORT, not 'nonsense'"),
        (["--readonly", "serve", "--allow-signals", "--demo"], "--readonly and --allow-signals contradict each other"),
        (["--once", "serve", "--demo"], "--once and --json print once and exit: there is nothing to serve"),
        (["serve", "--demo", "record", "x.jsonl"], "serve shows the TUI, `replay FILE` or `cluster ...` in a browser"),
        (["--demo", "--record", "x.jsonl", "serve"], "--record: every tab would write the same file"),
        (["serve", "replay", "/nonexistent/rec.jsonl"], "/nonexistent/rec.jsonl"),
        (["serve", "cluster", "--prometheus", "ftp://x"], "--prometheus wants an http:// or https:// URL"),
        (["--demo", "serve", "--token", ""], "--token must not be empty"),
    ],
)
def test_what_cannot_be_served_is_one_line_and_status_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gputop: ") and message in err
    assert list(tmp_path.iterdir()) == []


def test_a_textual_serve_whose_insides_changed_is_refused_in_one_line_before_listening(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def never(*_args: object) -> None:
        raise AssertionError("gputop serve listened on a textual-serve it cannot drive")

    monkeypatch.setattr(textual_serve_private, "check_internals", lambda: "AppService has no _task")
    monkeypatch.setattr(GputopServer, "run", never)
    assert main(["--demo", "serve", "--listen", "127.0.0.1:0"]) == 2
    assert capsys.readouterr().err == (
        "gputop: serve cannot drive this textual-serve (AppService has no _task):"
        " pip install 'gputop-monitor[serve]'\n"
    )


@pytest.fixture(scope="module")
def public(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedGputop]:
    """Listening beyond loopback: a token was made up and printed."""
    home = {"XDG_CONFIG_HOME": str(tmp_path_factory.mktemp("config-home"))}
    served = ServedGputop("--demo", "serve", "--listen", "0.0.0.0:0", env={**os.environ, **home})
    yield served
    assert served.stop() == 0
    assert served.orphans() == []


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
        yield client


async def status(session: aiohttp.ClientSession, url: str, **headers: str) -> int:
    async with session.get(url, headers=headers, allow_redirects=False) as response:
        await response.read()
        return response.status


async def websocket_status(session: aiohttp.ClientSession, url: str, **headers: str) -> int:
    try:
        websocket = await session.ws_connect(url, headers=headers)
    except aiohttp.WSServerHandshakeError as error:
        return error.status
    await websocket.close()
    return 101


async def test_without_the_token_every_request_gets_403_and_starts_nothing(
    public: ServedGputop, session: aiohttp.ClientSession
) -> None:
    token = public.query.removeprefix("?token=")
    assert len(token) >= 20 and "serving on http://" in public.banner and "(read-only; Ctrl+C stops)" in public.banner
    cookie = f"gputop_token_{public.port}"
    for path in ("/", "/static/js/textual.js", "/ws", "/download/x", "/nothing"):
        assert await status(session, public.base + path) == 403
        assert await status(session, f"{public.base}{path}?token=x{token}") == 403
        assert await status(session, public.base + path, Cookie=f"{cookie}=x{token}") == 403
    for query in ("", "?token=", f"?token={token[:-1]}"):
        assert await websocket_status(session, f"{public.base}/ws{query}") == 403
    async with session.get(public.base + "/") as response:
        assert "token needed" in await response.text()
    assert public.tabs() == [] and public.seen == set()


async def test_with_the_token_the_page_sets_a_cookie_that_carries_it(
    public: ServedGputop, session: aiohttp.ClientSession
) -> None:
    async with session.get(public.url) as response:
        assert response.status == 200
        assert response.headers["Cache-Control"] == "no-store"
        assert f"ws://127.0.0.1:{public.port}/ws" in await response.text()
        morsel = response.cookies[f"gputop_token_{public.port}"]
    assert morsel["httponly"] and morsel["samesite"] == "Strict"
    cookie = f"{morsel.key}={morsel.value}"
    assert await status(session, public.base + "/static/js/textual.js", Cookie=cookie) == 200
    origin = {"Cookie": cookie, "Origin": "http://evil.example"}
    assert await websocket_status(session, f"{public.base}/ws", **origin) == 403
    assert public.tabs() == []
    websocket = await session.ws_connect(f"{public.base}/ws?width=100&height=30", headers={"Cookie": cookie})
    tab = public.wait_tabs(1)[0]
    assert tab.cmdline() == [*GPUTOP, "--readonly", "--demo"]
    await websocket.close()
    public.wait_tabs(0)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedGputop]:
    """Listening on loopback, no token, two tabs at most."""
    settings = tmp_path_factory.mktemp("serve-settings") / "settings.toml"
    settings.write_text("[serve]\nmax_tabs = 2\n")
    served = ServedGputop("--demo", "--config", str(settings), "serve", "--listen", "127.0.0.1:0")
    yield served
    assert served.stop() == 0
    assert served.orphans() == []


async def test_on_loopback_only_local_names_are_answered(local: ServedGputop, session: aiohttp.ClientSession) -> None:
    assert local.query == ""
    assert await status(session, local.base + "/", Host=f"evil.example:{local.port}") == 403
    assert await websocket_status(session, local.base + "/ws", Host=f"evil.example:{local.port}") == 403
    assert await status(session, local.base + "/", Host=f"localhost:{local.port}") == 200
    assert await status(session, local.base + "/") == 200
    assert local.tabs() == []


def test_a_listen_address_in_use_is_one_line_and_status_2(
    local: ServedGputop, capsys: pytest.CaptureFixture[str]
) -> None:
    where = f"127.0.0.1:{local.port}"
    assert main(["--demo", "serve", "--listen", where]) == 2
    assert capsys.readouterr().err == f"gputop: cannot listen on {where}: the address is already in use\n"


async def test_a_tab_that_breaks_the_protocol_ends_alone_with_one_line(
    local: ServedGputop, session: aiohttp.ClientSession
) -> None:
    websocket = await session.ws_connect(f"{local.base}/ws")
    local.wait_tabs(1)
    await websocket.send_str("not json")
    local.wait_tabs(0)
    assert local.next_line() == "gputop: a browser tab ended: Expecting value: line 1 column 1 (char 0)\n"
    await websocket.close()


async def drawn(websocket: aiohttp.ClientWebSocketResponse, text: bytes) -> None:
    """Wait until the tab's gputop has drawn ``text``: it is running."""
    received = b""
    while text not in received:
        message = await websocket.receive(timeout=60)
        if message.type == aiohttp.WSMsgType.BINARY:
            received += message.data
        else:
            assert message.type == aiohttp.WSMsgType.TEXT, message


async def test_the_cap_refuses_one_tab_too_many_and_twenty_open_close_cycles_leave_no_process(
    local: ServedGputop, session: aiohttp.ClientSession
) -> None:
    ws_url = f"{local.base}/ws?width=80&height=24"
    seen_before = len(local.seen)
    tabs = [await session.ws_connect(ws_url) for _ in range(2)]
    local.wait_tabs(2)
    assert await websocket_status(session, ws_url) == 503
    async with session.get(local.base + "/") as response:
        assert response.status == 503 and "all tabs in use" in await response.text()
    assert len(local.tabs()) == 2
    await drawn(tabs[0], b"Processes")  # running: it is asked to quit
    for websocket in tabs:
        await websocket.close()
    local.wait_tabs(0)
    for _ in range(20):  # a tab closed while its gputop starts
        websocket = await session.ws_connect(ws_url)
        local.wait_tabs(1)
        await websocket.close()
        local.wait_tabs(0)
    assert len(local.seen) - seen_before == 22
    assert local.orphans() == []


async def test_a_tab_closed_at_the_cap_makes_room_for_the_next_at_once(
    local: ServedGputop, session: aiohttp.ClientSession
) -> None:
    ws_url = f"{local.base}/ws?width=80&height=24"
    tabs = [await session.ws_connect(ws_url) for _ in range(2)]
    for websocket in tabs:
        await drawn(websocket, b"Processes")  # running: asked to quit, it takes a moment to end
    await tabs[0].close()
    # Reopened straight away, while the closed tab's gputop may still be ending: served, not 503.
    assert await status(session, local.base + "/") == 200
    replacement = await session.ws_connect(ws_url)
    await drawn(replacement, b"Processes")
    assert await websocket_status(session, ws_url) == 503  # the cap still holds: two tabs are open
    for websocket in (tabs[1], replacement):
        await websocket.close()
    local.wait_tabs(0)
    assert local.orphans() == []


async def test_replay_and_cluster_are_served_and_ctrl_c_ends_every_tab(
    recording: str, session: aiohttp.ClientSession
) -> None:
    replay = ServedGputop("serve", "--listen", "127.0.0.1:0", "replay", recording)
    cluster = ServedGputop("serve", "--listen", "127.0.0.1:0", "cluster", "--prometheus", "http://127.0.0.1:9")
    try:
        replay_tab = await session.ws_connect(f"{replay.base}/ws?width=100&height=30")
        cluster_tab = await session.ws_connect(f"{cluster.base}/ws?width=100&height=30")
        await drawn(replay_tab, b"Processes")
        await drawn(cluster_tab, b"unreachable")
        assert replay.wait_tabs(1)[0].cmdline() == [*GPUTOP, "--readonly", "replay", recording]
        assert cluster.wait_tabs(1)[0].cmdline() == [
            *GPUTOP, "--readonly", "cluster", "--prometheus", "http://127.0.0.1:9",
        ]
        await session.ws_connect(f"{replay.base}/ws")
        replay.wait_tabs(2)
    finally:
        assert replay.stop() == 0  # Ctrl+C with one tab running and one starting
        assert cluster.stop() == 0
    assert replay.orphans() == [] and cluster.orphans() == []
