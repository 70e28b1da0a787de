"""The Prometheus HTTP client: what it sends, and how it tells unreachable, refused and slow apart."""

from __future__ import annotations

import contextlib
import gzip
import json
import re
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from gputop.core.cluster.client import PrometheusClient, PrometheusError, promql_string
from gputop.core.cluster.counts import COUNTS
from gputop.core.cluster.model import ClusterOptions, ClusterState, ConfigError
from gputop.core.cluster.queries import Fixed, detail_query, fixed_query, refresh_queries
from gputop.core.cluster.reader import ClusterReader
from gputop.core.output.metric_names import HOST_FLAGS

NOW = 1_700_000_100.0


class CannedPrometheus:
    """A tiny HTTP server answering /api/v1/query and /api/v1/query_range from dicts; it logs every request.

    It gzips its answers when asked to, as Prometheus does, and can take ``delay_s`` to answer.
    """

    def __init__(self, answers: dict[str, list[dict[str, Any]]], history: list[dict[str, Any]]) -> None:
        self.answers = answers
        self.history = history
        self.queries: list[str] = []
        self.forms: list[dict[str, str]] = []
        self.status = 200
        self.body: bytes | None = None
        self.delay_s = 0.0
        # Queries holding this text are answered once the event is set (or after 10 s).
        self.held: tuple[str, threading.Event] | None = None
        self.sent = 0
        self.names: list[str] = []
        self.lookups: list[str] = []
        canned = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name: the label values API
                canned.lookups.append(self.path)
                body = json.dumps({"status": "success", "data": canned.names}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers["Content-Length"])
                form = {k: v[0] for k, v in urllib.parse.parse_qs(self.rfile.read(length).decode()).items()}
                canned.queries.append(form["query"])
                canned.forms.append(form)
                time.sleep(canned.delay_s)
                if canned.held is not None and canned.held[0] in form["query"]:
                    canned.held[1].wait(10)
                if self.path.endswith("/query_range"):
                    data = {"resultType": "matrix", "result": canned.history}
                else:
                    data = {"resultType": "vector", "result": canned.answers.get(form["query"], [])}
                body = canned.body or json.dumps({"status": "success", "data": data}).encode()
                zipped = "gzip" in self.headers.get("Accept-Encoding", "")
                if zipped:
                    body = gzip.compress(body)
                canned.sent += len(body)
                self.send_response(canned.status)
                self.send_header("Content-Type", "application/json")
                if zipped:
                    self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError):  # a client that gave up waiting
                    self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def canned() -> Iterator[CannedPrometheus]:
    server = CannedPrometheus({}, [])
    yield server
    server.close()


UP = [{"metric": {"__name__": "up", "instance": "a:9400"}, "value": [NOW, "1"]}]


def test_answers_come_gzipped_and_the_query_timeout_follows_the_interval(canned: CannedPrometheus) -> None:
    canned.answers = {"up": UP * 200}
    options = ClusterOptions.create(canned.url, interval_s=3)
    client = PrometheusClient(canned.url, options.timeout_s)
    samples = client.query("up", NOW)
    assert len(samples) == 200 and samples[0].labels == {"__name__": "up", "instance": "a:9400"}
    assert canned.forms[-1] == {"query": "up", "time": "1700000100.000", "timeout": "3"}
    assert client.traffic.requests == 1 and client.traffic.bytes_received == canned.sent < 2000
    assert ClusterOptions.create(canned.url, interval_s=0.5).timeout_s == 2.0


def test_a_prometheus_that_answers_too_late_is_slow_not_unreachable(canned: CannedPrometheus) -> None:
    canned.delay_s = 1.5
    with pytest.raises(PrometheusError) as raised:
        PrometheusClient(canned.url, timeout_s=0.5).query("up", NOW)
    assert (raised.value.kind, str(raised.value)) == ("slow", "no answer within 0.5s")


def test_prometheus_own_query_timeout_is_slow(canned: CannedPrometheus) -> None:
    canned.status = 503
    canned.body = json.dumps(
        {"status": "error", "errorType": "timeout", "error": "query timed out in expression evaluation"}
    ).encode()
    with pytest.raises(PrometheusError) as raised:
        PrometheusClient(canned.url).query("up", NOW)
    assert (raised.value.kind, str(raised.value)) == ("slow", "timeout: query timed out in expression evaluation")


def test_a_refresh_asks_for_every_host_at_once_history_only_on_screen_processes_only_for_the_open_host(
    canned: CannedPrometheus,
) -> None:
    reader = ClusterReader(ClusterOptions.create(canned.url, hosts='dgx-"1"\\d'), clock=lambda: NOW)
    reader.fetch()
    # The fleet's summaries in six instant queries sent side by side (the hosts, memory, load, heat,
    # problems, the counts), what the hosts' GPUs are (a seventh, the first time), and nothing else.
    assert len(canned.queries) == 7 and all(q.startswith("label_replace(") for q in canned.queries)
    fleet = " or ".join(canned.queries)
    assert sum("count_values by (hostname) (\"total\"" in q for q in canned.queries) == 1
    # Which count metrics exist is asked of the index, not by reading their series.
    assert len(canned.lookups) == 1 and canned.lookups[0].startswith("/api/v1/label/__name__/values?match")
    # --hosts reaches Prometheus as an escaped label matcher, for gputop's label and DCGM's.
    assert 'gputop_host_gpus{hostname=~"dgx-\\"1\\"\\\\d"}' in fleet
    # DCGM's hosts by whichever label names them: Hostname (4.x), hostname (main), else instance.
    assert 'DCGM_FI_DEV_FB_USED{GPU_I_ID="",exporter!="gputop",Hostname=~"dgx-\\"1\\"\\\\d",Hostname!=""}' in fleet
    assert ('DCGM_FI_DEV_FB_USED{GPU_I_ID="",exporter!="gputop",hostname=~"dgx-\\"1\\"\\\\d",Hostname="",'
            'hostname!=""}') in fleet
    assert ('DCGM_FI_DEV_FB_USED{GPU_I_ID="",exporter!="gputop",instance=~"dgx-\\"1\\"\\\\d",Hostname="",'
            'hostname="",instance!=""}') in fleet
    assert "gputop_process_gpu_memory_bytes" not in fleet and "[15m:" not in fleet
    canned.queries.clear()
    reader.fetch(history_for=["a-1", "b.2"], detail_for='we"ird')
    assert not any("count_values by (hostname) (\"total\"" in q for q in canned.queries)  # asked once a minute
    others = [q for q in canned.queries if not q.startswith("label_replace(")]
    history = [q for q in others if "gputop_gpu_memory_used_bytes" in q]
    gpus_of_weird = '{__name__=~"gputop_.+",__name__!~"gputop_host_.+",hostname="we\\"ird"}'
    detail = [q for q in others if q.startswith(gpus_of_weird)]
    kept = [q for q in others if q.startswith("last_over_time(")]
    assert len(history) == 1 and 'gputop_gpu_memory_used_bytes{hostname=~"a\\\\-1|b\\\\.2"}' in history[0]
    # No GPU in the detail's answer: it asks once more for what Prometheus kept, and that is all.
    assert len(detail) == 1 and len(kept) == 1 and len(others) == 3


def test_a_first_refresh_that_finds_hosts_without_host_series_asks_their_gpus_before_it_is_done(
    canned: CannedPrometheus,
) -> None:
    """Every gputop host is taken to serve what its GPUs add up to until the answer about them says otherwise."""
    canned.answers[fixed_query(None).promql] = [sample("gputop:sizes", 8.0, hostname="b", total=repr(80 * 2.0**30))]
    reader = ClusterReader(ClusterOptions.create(canned.url), clock=lambda: NOW)
    reader.fetch()
    first, again = canned.queries[:7], canned.queries[7:]
    assert fixed_query(None).promql in first
    assert not any("gputop_gpu_" in q for q in first if q != fixed_query(None).promql)
    # All six groups again, each now reading "b" GPU by GPU and every other host by its host series.
    assert len(again) == 6 and all('gputop_gpu_' in q and 'hostname=~"b"' in q for q in again)
    assert all('hostname!~"b"' in q for q in again)
    canned.queries.clear()
    reader.fetch()
    assert sorted(canned.queries) == sorted(again)  # and so from then on (sent side by side: any order)


def test_what_the_hosts_gpus_are_is_asked_again_after_a_minute_once_a_refresh_is_over(
    canned: CannedPrometheus,
) -> None:
    """A refresh never waits for (nor shares Prometheus with) the costliest query; the next one uses its answer."""
    clock = [NOW]
    reader = ClusterReader(ClusterOptions.create(canned.url), clock=lambda: clock[0])
    fixed = fixed_query(None).promql
    reader.fetch()
    assert canned.queries.count(fixed) == 1
    clock[0] += 30
    reader.fetch()
    assert canned.queries.count(fixed) == 1
    # A minute on: the refresh's own queries first; then, with the refresh already returned, this one.
    canned.answers[fixed] = [sample("gputop:sizes", 8.0, hostname="a", total=repr(80 * 2.0**30))]
    clock[0] += 31
    canned.queries.clear()
    answered = threading.Event()
    canned.held = (fixed, answered)
    state = reader.fetch()
    refresh = list(canned.queries)
    assert state.at == clock[0] and len(refresh) == 6 and fixed not in refresh
    deadline = time.monotonic() + 5
    while fixed not in canned.queries and time.monotonic() < deadline:
        time.sleep(0.01)
    assert canned.queries == [*refresh, fixed]
    answered.set()
    while reader.read_gpu_by_gpu() != ["a"] and time.monotonic() < deadline:
        canned.queries.clear()
        reader.fetch()  # the answer asked after the last refresh is taken once it is in
        assert fixed not in canned.queries  # and not asked again meanwhile
    # "a" serves no host series (only its GPUs' sizes came): it is read GPU by GPU from now on.
    assert reader.read_gpu_by_gpu() == ["a"]


def sample(figure: str, value: float, **labels: str) -> dict[str, Any]:
    return {"metric": {"figure": figure, **labels}, "value": [NOW, repr(value)]}


def test_the_hosts_are_handed_over_as_soon_as_they_answer_while_a_slow_query_is_still_out(
    canned: CannedPrometheus,
) -> None:
    hosts = [
        sample("gputop:gpus", 8.0, hostname="a", name="H100", lost="0"),
        sample("gputop:sampled", NOW - 1, hostname="a", instance="a:9400"),
    ]
    memory = [sample("gputop:memory_used", 4 * 2.0**30, hostname="a")]
    # What "a"'s GPUs are, asked with the rest the first time: it serves what they add up to, as
    # every gputop host is taken to until then, so nothing is asked again.
    fixed = [
        sample("gputop:sizes", 8.0, hostname="a", total=repr(80 * 2.0**30)),
        sample("gputop:rollup", 8.0, hostname="a"),
    ]
    reader = ClusterReader(ClusterOptions.create(canned.url), clock=lambda: NOW)
    first = {q.group: q.promql for q in refresh_queries(None, reader.options.lookback_s, {})}
    canned.answers = {first["hosts"]: hosts, fixed_query(None).promql: fixed, first["memory"]: memory}
    memory_answers = threading.Event()
    canned.held = ("gputop_host_memory_used_bytes", memory_answers)  # memory answers once a part is out
    parts: list[tuple[bool, ClusterState]] = []

    def part(state: ClusterState) -> None:
        parts.append((memory_answers.is_set(), state))
        memory_answers.set()

    state = reader.fetch(partial=part)
    assert parts, "no part was handed over"
    memory_was_in, first = parts[0]
    assert not memory_was_in
    assert [(h.hostname, h.state, h.gpus, h.memory_used) for h in first.hosts] == [("a", "live", 8, None)]
    assert {"memory_used", "memory_percent", "memory_total"} <= first.pending
    assert "gpus" not in first.pending and "count:f" in first.pending
    # The whole refresh: nothing pending, and the slow figure is in.
    assert not state.pending and state.hosts[0].memory_used == 4 * 2.0**30


def _selectors(promql: str, prefix: str) -> list[str]:
    return re.findall(rf"\b{prefix}\w*{{[^}}]*}}", promql)


def test_hosts_that_serve_what_their_gpus_add_up_to_are_read_from_those_series_alone() -> None:
    """One series a host, not one a GPU; a host without them (an older exporter) GPU by GPU, and only it."""
    rollup = Fixed("gputop", 8 * 80 * 2.0**30, 80 * 2.0**30, 87.0, rollup=True)
    fixed = {"a": rollup, "c": rollup}
    fleet = " or ".join(q.promql for q in refresh_queries(None, 900, fixed))
    assert _selectors(fleet, "gputop_gpu_") == []
    assert len(_selectors(fleet, "gputop_host_")) == 12  # 7 figures, 4 counts, the GPUs' models
    # "b" serves no host series: its GPUs are read (and only its), and its host series never are.
    fixed["b"] = replace(rollup, rollup=False)
    fleet = " or ".join(q.promql for q in refresh_queries(None, 900, fixed))
    per_gpu, per_host = _selectors(fleet, "gputop_gpu_"), _selectors(fleet, "gputop_host_")
    assert per_gpu and all('hostname=~"b"' in selector for selector in per_gpu)
    assert len(per_host) == 12 and all('hostname!~"b"' in selector for selector in per_host)
    # The host's screen reads its GPUs, not what they add up to.
    assert "gputop_host_" in detail_query("a") and '__name__!~"gputop_host_.+"' in detail_query("a")


def test_every_count_but_lost_is_a_flag_the_exporter_serves_per_host() -> None:
    assert [c.label for c in COUNTS if not c.from_hosts] == list(HOST_FLAGS)


def test_promql_strings_escape_quotes_backslashes_and_newlines() -> None:
    assert promql_string('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'


def test_an_unreachable_prometheus_says_why() -> None:
    closed = CannedPrometheus({}, [])
    url = closed.url
    closed.close()
    with pytest.raises(PrometheusError) as raised:
        PrometheusClient(url).query("up", NOW)
    assert raised.value.kind == "unreachable"
    assert str(raised.value) == "connection refused"


def test_a_refused_query_reports_prometheus_own_error(canned: CannedPrometheus) -> None:
    canned.status = 400
    canned.body = json.dumps(
        {"status": "error", "errorType": "bad_data", "error": "invalid parameter \"query\": parse error"}
    ).encode()
    with pytest.raises(PrometheusError) as raised:
        PrometheusClient(canned.url).query("up{", NOW)
    assert raised.value.kind == "refused"
    assert str(raised.value) == 'bad_data: invalid parameter "query": parse error'


def test_something_that_is_not_prometheus_is_unreachable(canned: CannedPrometheus) -> None:
    canned.status = 404
    canned.body = b"<html>not here</html>"
    with pytest.raises(PrometheusError) as raised:
        PrometheusClient(canned.url).query("up", NOW)
    assert raised.value.kind == "unreachable" and str(raised.value) == "HTTP 404 Not Found"
    canned.status = 200
    with pytest.raises(PrometheusError) as raised:
        PrometheusClient(canned.url).query("up", NOW)
    assert str(raised.value) == "the answer is not from a Prometheus query API"


@pytest.mark.parametrize(
    ("url", "hosts", "message"),
    [
        ("prometheus:9090", None, "--prometheus wants an http:// or https:// URL, not 'prometheus:9090'"),
        ("ftp://prometheus", None, "--prometheus wants an http:// or https:// URL, not 'ftp://prometheus'"),
        (
            "http://prometheus:9090",
            "(",
            "--hosts: not a regular expression: missing ), unterminated subpattern at position 0",
        ),
    ],
)
def test_options_that_cannot_work_are_refused_in_one_line(url: str, hosts: str | None, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        ClusterOptions.create(url, hosts=hosts)
    assert str(raised.value) == message


def test_staleness_defaults_to_three_scrape_intervals_of_at_least_15_s() -> None:
    assert ClusterOptions.create("http://p:9090/", interval_s=2).stale_after_s == 45.0
    assert ClusterOptions.create("http://p:9090/", interval_s=30).stale_after_s == 90.0
    assert ClusterOptions.create("http://p:9090/").url == "http://p:9090"


def test_gputop_cluster_with_a_bad_url_exits_2_with_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "cluster", "--prometheus", "prometheus:9090"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert result.stderr == "gputop: --prometheus wants an http:// or https:// URL, not 'prometheus:9090'\n"
