"""Reading the cluster from the Prometheus HTTP API: DCGM exporter's metrics from canned answers, errors."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from gputop.core.cluster.client import PrometheusClient, PrometheusError, promql_string
from gputop.core.cluster.model import ClusterOptions, ConfigError
from gputop.core.cluster.reader import ClusterReader

MIB = 1024 * 1024
NOW = 1_700_000_100.0


def dcgm_labels(host: str, gpu: int, **extra: str) -> dict[str, str]:
    return {
        "Hostname": host,
        "gpu": str(gpu),
        "UUID": f"GPU-{host}-{gpu}",
        "modelName": "NVIDIA A100-SXM4-80GB",
        "device": f"nvidia{gpu}",
        "instance": f"{host}:9400",
        "job": "dcgm",
    }| extra


def vector(*series: tuple[dict[str, str], float], at: float = NOW) -> list[dict[str, Any]]:
    return [{"metric": labels, "value": [at, repr(value)]} for labels, value in series]


DATED = "timestamp(DCGM_FI_DEV_FB_USED) or max_over_time(timestamp(DCGM_FI_DEV_FB_USED)[900s:5s])"
MIG = {"GPU_I_ID": "1", "GPU_I_PROFILE": "1g.10gb"}
DCGM_ANSWERS: dict[str, list[dict[str, Any]]] = {
    DATED: vector(
        (dcgm_labels("dgx-1", 0), NOW - 2),
        (dcgm_labels("dgx-1", 1), NOW - 3),
        (dcgm_labels("dgx-1", 1, **MIG), NOW - 3),
        (dcgm_labels("dgx-2", 0), NOW - 600),
    ),
    "last_over_time(DCGM_FI_DEV_FB_USED[900s])": vector(
        (dcgm_labels("dgx-1", 0), 40960),
        (dcgm_labels("dgx-1", 1), 1024),
        (dcgm_labels("dgx-1", 1, **MIG), 512),
        (dcgm_labels("dgx-2", 0), 0),
    ),
    "last_over_time(DCGM_FI_DEV_FB_FREE[900s])": vector(
        (dcgm_labels("dgx-1", 0), 40000),
        (dcgm_labels("dgx-1", 1), 79407),
        (dcgm_labels("dgx-2", 0), 81000),
    ),
    "last_over_time(DCGM_FI_DEV_FB_RESERVED[900s])": vector(
        (dcgm_labels("dgx-1", 0), 560),
        (dcgm_labels("dgx-1", 1), 1),
    ),
    "last_over_time(DCGM_FI_DEV_GPU_UTIL[900s])": vector((dcgm_labels("dgx-1", 0), 97), (dcgm_labels("dgx-1", 1), 0)),
    "last_over_time(DCGM_FI_DEV_GPU_TEMP[900s])": vector((dcgm_labels("dgx-1", 0), 71), (dcgm_labels("dgx-1", 1), 33)),
    "last_over_time(DCGM_FI_DEV_POWER_USAGE[900s])": vector((dcgm_labels("dgx-1", 0), 388.25)),
    "up": vector(
        ({"instance": "dgx-1:9400", "job": "dcgm"}, 1),
        ({"instance": "dgx-2:9400", "job": "dcgm"}, 1),
    ),
}
DCGM_HISTORY = [
    {
        "metric": dcgm_labels("dgx-1", 0),
        # Steps of 5 s ending at NOW (a multiple of 5): the last two points, then a gap, then one.
        "values": [[NOW - 10, str(20480 * MIB)], [NOW, str(40960 * MIB)]],
    }
]


class CannedPrometheus:
    """A tiny HTTP server answering /api/v1/query and /api/v1/query_range from dicts; it logs every query."""

    def __init__(self, answers: dict[str, list[dict[str, Any]]], history: list[dict[str, Any]]) -> None:
        self.answers = answers
        self.history = history
        self.queries: list[str] = []
        self.status = 200
        self.body: bytes | None = None
        canned = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers["Content-Length"])
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                query = form["query"][0]
                canned.queries.append(query)
                if self.path.endswith("/query_range"):
                    data = {"resultType": "matrix", "result": canned.history}
                else:
                    data = {"resultType": "vector", "result": canned.answers.get(query, [])}
                body = canned.body or json.dumps({"status": "success", "data": data}).encode()
                self.send_response(canned.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
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
def dcgm_prometheus() -> Iterator[CannedPrometheus]:
    server = CannedPrometheus(DCGM_ANSWERS, DCGM_HISTORY)
    yield server
    server.close()


def reader_for(url: str, **options: Any) -> ClusterReader:
    return ClusterReader(ClusterOptions.create(url, **options), clock=lambda: NOW)


def test_dcgm_exporter_metrics_become_hosts_and_gpus(dcgm_prometheus: CannedPrometheus) -> None:
    state = reader_for(dcgm_prometheus.url, interval_s=5, stale_after_s=45).fetch()
    assert [h.hostname for h in state.hosts] == ["dgx-1", "dgx-2"]
    first, second = state.hosts[0].gpus
    assert (first.flavour, first.index, first.uuid, first.name, first.instance) == (
        "dcgm", 0, "GPU-dgx-1-0", "NVIDIA A100-SXM4-80GB", "dgx-1:9400"
    )
    # MiB -> bytes; total = used + free + reserved; the MIG instance series is not a GPU of its own.
    assert first.memory_used == 40960 * MIB
    assert first.memory_total == (40960 + 40000 + 560) * MIB
    assert second.memory_used == 1024 * MIB and second.memory_total == 80432 * MIB
    assert (first.utilization_gpu, first.temperature, first.power_draw) == (97.0, 71.0, 388.25)
    # DCGM's fields that gputop has and DCGM lacks stay unknown, never 0.
    assert (first.power_limit, first.seconds_to_full, second.power_draw) == (None, None, None)
    assert first.last_sample == NOW - 2 and not first.stale
    assert state.hosts[0].age_s == 2.0 and not state.hosts[0].stale


def test_a_dcgm_host_whose_newest_sample_is_old_is_stale_with_its_age(dcgm_prometheus: CannedPrometheus) -> None:
    state = reader_for(dcgm_prometheus.url, interval_s=5, stale_after_s=45).fetch()
    old = state.hosts[1]
    assert old.hostname == "dgx-2" and old.stale and old.age_s == 600.0 and not old.down
    assert old.gpus[0].memory_used == 0.0  # a real 0 MiB in use, not a missing figure


def test_a_host_whose_scrape_is_down_is_stale_at_once(dcgm_prometheus: CannedPrometheus) -> None:
    dcgm_prometheus.answers = DCGM_ANSWERS | {
        "up": vector(({"instance": "dgx-1:9400", "job": "dcgm"}, 0), ({"instance": "dgx-2:9400", "job": "dcgm"}, 1))
    }
    host = reader_for(dcgm_prometheus.url, interval_s=5, stale_after_s=45).fetch().hosts[0]
    assert host.hostname == "dgx-1" and host.down and host.stale and host.age_s == 2.0


def test_memory_history_comes_from_a_range_query_with_gaps_kept(dcgm_prometheus: CannedPrometheus) -> None:
    gpu = reader_for(dcgm_prometheus.url).fetch().hosts[0].gpus[0]
    assert len(gpu.memory_history) == 61
    assert gpu.memory_history[-3:] == (20480.0 * MIB, None, 40960.0 * MIB)
    assert gpu.memory_history[0] is None
    assert "DCGM_FI_DEV_FB_USED * 1048576" in dcgm_prometheus.queries


def test_the_hosts_regex_goes_to_prometheus_as_an_escaped_label_matcher(dcgm_prometheus: CannedPrometheus) -> None:
    reader_for(dcgm_prometheus.url, hosts='dgx-"1"\\d').fetch()
    assert (
        'timestamp(gputop_gpu_lost{hostname=~"dgx-\\"1\\"\\\\d"}) or '
        'max_over_time(timestamp(gputop_gpu_lost{hostname=~"dgx-\\"1\\"\\\\d"})[900s:5s])'
    ) in dcgm_prometheus.queries
    assert 'timestamp(DCGM_FI_DEV_FB_USED{Hostname=~"dgx-\\"1\\"\\\\d"})' in dcgm_prometheus.queries[1]


def test_processes_are_asked_for_one_host_only(dcgm_prometheus: CannedPrometheus) -> None:
    state = reader_for(dcgm_prometheus.url).fetch(processes_for='we"ird')
    assert dcgm_prometheus.queries[-1] == 'gputop_process_gpu_memory_bytes{hostname="we\\"ird"}'
    assert state.processes_host == 'we"ird' and state.processes == ()


def test_promql_strings_escape_quotes_backslashes_and_newlines() -> None:
    assert promql_string('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'


def test_an_unreachable_prometheus_says_why() -> None:
    closed = CannedPrometheus({}, [])
    url = closed.url
    closed.close()
    with pytest.raises(PrometheusError) as raised:
        PrometheusClient(url).query("up", NOW)
    assert raised.value.unreachable
    assert str(raised.value) == "connection refused"


def test_a_refused_query_reports_prometheus_own_error(dcgm_prometheus: CannedPrometheus) -> None:
    dcgm_prometheus.status = 400
    dcgm_prometheus.body = json.dumps(
        {"status": "error", "errorType": "bad_data", "error": "invalid parameter \"query\": parse error"}
    ).encode()
    with pytest.raises(PrometheusError) as raised:
        PrometheusClient(dcgm_prometheus.url).query("up{", NOW)
    assert not raised.value.unreachable
    assert str(raised.value) == 'bad_data: invalid parameter "query": parse error'


def test_something_that_is_not_prometheus_is_unreachable(dcgm_prometheus: CannedPrometheus) -> None:
    dcgm_prometheus.status = 404
    dcgm_prometheus.body = b"<html>not here</html>"
    with pytest.raises(PrometheusError) as raised:
        PrometheusClient(dcgm_prometheus.url).query("up", NOW)
    assert raised.value.unreachable and str(raised.value) == "HTTP 404 Not Found"
    dcgm_prometheus.status = 200
    with pytest.raises(PrometheusError) as raised:
        PrometheusClient(dcgm_prometheus.url).query("up", NOW)
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
