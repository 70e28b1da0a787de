"""The web server of ``gputop serve``: textual-serve's page and protocol, a token, a tab cap, no orphans.

textual-serve's ``Server`` builds its aiohttp application, index page and
websocket handler in one piece, with no place to check a request before it is
served or to cap the tabs; so this server is gputop's own aiohttp application,
serving textual-serve's page, script and styles. Each tab's process is driven
by a ``Tab`` (``textual_serve_private``: the one module that touches
textual-serve's private names).
"""

from __future__ import annotations

import asyncio
import hmac
import html
import ipaddress
import json
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp_jinja2
import jinja2
from aiohttp import WSMsgType, web
from textual_serve.download_manager import DownloadManager

from gputop.cli.serve.textual_serve_private import PAGE_TEMPLATE, TERM_GRACE_S, TEXTUAL_SERVE, Tab

# At the cap, a new tab waits this long for a tab that is closing (its websocket's close may still be
# on its way) before it is refused: closing one tab and opening another is not "all tabs in use".
SLOT_WAIT_S = 1.0
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def whole_number(text: str, default: int) -> int:
    try:
        return int(text)
    except ValueError:
        return default


def is_loopback(host: str) -> bool:
    """True for an address (or the name ``localhost``) that only this machine can reach."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def page(status: int, title: str, message: str) -> web.Response:
    """A small HTML page that says why, for the statuses a browser user may meet."""
    title, message = html.escape(title), html.escape(message)
    body = (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>gputop: {title}</title></head>"
        "<body style='background:#0c181f;color:#e0e0e0;font-family:monospace;padding:2em'>"
        f"<h1>gputop: {title}</h1><p>{message}</p></body></html>"
    )
    return web.Response(status=status, text=body, content_type="text/html")


class GputopServer:
    """Serves gputop to browsers: a token (when set), same-origin websockets, a tab cap and clean exits."""

    def __init__(self, argv: list[str], *, host: str, port: int, token: str | None, max_tabs: int) -> None:
        self.argv = argv
        self.host = host
        self.port = port
        self.token = token
        self.max_tabs = max_tabs
        self.cookie = "gputop_token"  # then named after the bound port: tabs on two servers keep their own
        self.tabs: dict[Tab, web.WebSocketResponse] = {}
        self.stopping = False
        self.downloads = DownloadManager()  # AppService wants one; gputop delivers no files

    def make_app(self) -> web.Application:
        @web.middleware
        async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
            refusal = self.refusal(request)
            if refusal is not None:
                return refusal
            response = await handler(request)
            if self.token is not None and "token" in request.query and not response.prepared:
                # The page's script, styles and websocket then carry the token without it in their URLs.
                response.set_cookie(self.cookie, self.token, httponly=True, samesite="Strict")
            return response

        app = web.Application(middlewares=[guard])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(TEXTUAL_SERVE / "templates"))
        app.add_routes(
            [
                web.get("/", self.handle_index),
                web.get("/ws", self.handle_websocket),
                web.static("/static", TEXTUAL_SERVE / "static"),
            ]
        )
        return app

    def refusal(self, request: web.Request) -> web.Response | None:
        """The 403 page for a request that may not be served, before anything else happens; None if it may."""
        if self.token is not None:
            given = request.query.get("token") or request.cookies.get(self.cookie) or ""
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return page(
                    403, "token needed",
                    "This server needs its token: open the full URL that `gputop serve` printed when it started "
                    "(it ends in ?token=...).",
                )
        elif not is_loopback(request.url.host or ""):
            # Without a token only this machine may connect; a page whose name was made to point
            # here (DNS rebinding) still says its own name in the Host header.
            return page(403, "not this name", "Open this server as localhost, 127.0.0.1 or [::1].")
        origin = request.headers.get("Origin")
        if request.path == "/ws" and origin is not None and origin != f"{request.scheme}://{request.host}":
            # Browsers let any page open a websocket anywhere; only gputop's own page may.
            return page(403, "other site", "Only gputop's own page may connect here.")
        return None

    async def unavailable(self) -> web.Response | None:
        """The 503 page when no tab can start now (the cap, or the server stopping); None if one can.

        Returns None without awaiting after its last look, so the caller counts its tab before any
        other request is looked at.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SLOT_WAIT_S
        while True:
            if self.stopping:
                return page(503, "stopping", "This gputop server is stopping.")
            open_tabs = sum(1 for tab in self.tabs if not tab.ending)
            if open_tabs < self.max_tabs:
                return None
            if loop.time() >= deadline:
                return page(
                    503, "all tabs in use",
                    f"This server already runs {open_tabs} gputop tab(s), its limit ([serve] max_tabs in the "
                    "settings file). Close one of them and reload this page.",
                )
            await asyncio.sleep(0.05)

    async def handle_index(self, request: web.Request) -> web.Response:
        refusal = await self.unavailable()
        if refusal is not None:
            return refusal
        websocket_scheme = "wss" if request.secure else "ws"
        context = {
            "font_size": whole_number(request.query.get("fontsize", "16"), 16),
            # Built from the address the browser used, so a tunnel or another name works.
            "app_websocket_url": f"{websocket_scheme}://{request.host}/ws",
            "config": {"static": {"url": f"{request.scheme}://{request.host}/static/"}},
            "application": {"name": "gputop"},
        }
        response = aiohttp_jinja2.render_template(PAGE_TEMPLATE, request, context)
        # Not kept in the back/forward cache either, where a page left open would hold its tab's gputop.
        response.headers["Cache-Control"] = "no-store"
        return response

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        refusal = await self.unavailable()
        if refusal is not None:
            return refusal
        websocket = web.WebSocketResponse(heartbeat=15)
        tab = Tab(
            self.argv,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.downloads,
        )
        self.tabs[tab] = websocket  # counted before the first await, so the cap holds under a rush
        try:
            await websocket.prepare(request)
            width = whole_number(request.query.get("width", "80"), 80)
            await tab.start(width, whole_number(request.query.get("height", "24"), 24))
            await self.relay(websocket, tab)
        except ConnectionError:
            pass  # the browser went away
        except Exception as error:
            # Something not textual-serve's protocol, or a gputop that could not start: this tab only.
            print(f"gputop: a browser tab ended: {error or type(error).__name__}", file=sys.stderr)
        finally:
            await tab.stop()
            del self.tabs[tab]
        return websocket

    @staticmethod
    async def relay(websocket: web.WebSocketResponse, tab: Tab) -> None:
        """From the page to its gputop: typed keys and the mouse, the size, focus; pings are answered."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            kind, *rest = json.loads(message.data)
            if kind == "stdin":
                await tab.send_bytes(str(rest[0]).encode("utf-8"))
            elif kind == "resize":
                await tab.set_terminal_size(int(rest[0]["width"]), int(rest[0]["height"]))
            elif kind == "ping":
                await websocket.send_json(["pong", rest[0]])
            elif kind == "focus":
                await tab.focus()
            elif kind == "blur":
                await tab.blur()

    async def run(self, started: Callable[[list[Any]], None]) -> None:
        """Serve until SIGINT or SIGTERM, then end every tab; raises OSError when it cannot listen."""
        runner = web.AppRunner(self.make_app(), access_log=None, shutdown_timeout=TERM_GRACE_S)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port)
            await site.start()
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, stop.set)
            self.cookie = f"gputop_token_{runner.addresses[0][1]}"
            started(runner.addresses)
            await stop.wait()
            self.stopping = True
            await asyncio.gather(*(tab.stop() for tab in list(self.tabs)))
            await asyncio.gather(*(websocket.close() for websocket in list(self.tabs.values())))
        finally:
            await runner.cleanup()
