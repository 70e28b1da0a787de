"""A host's power in the cluster view is the sum of what its GPUs draw, time-shared GPUs counted once, and the
host screen's GPU rows add up to it: a Kubernetes node read from dcgm-exporter through a real Prometheus."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prom import PROMETHEUS, SKIP_REASON, PrometheusServer, wait_for
from prom.dcgm_fleet import scrape_configs, serve_pages
from prom.dcgm_pages import DcgmGpu, render
from test_cluster_dcgm import fields, gpu_rows, open_host, pod_labels, until

from gputop.core.cluster.model import ClusterOptions
from gputop.core.cluster.reader import ClusterReader
from gputop.ui.cluster.host_screen import GPU_COLUMNS
from gputop.ui.cluster.view import ClusterApp

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason=SKIP_REASON)

# Three GPUs drawing 899.74 W together; GPU 0 time-shared by two pods, GPU 2 by three
# (--kubernetes-virtual-gpus: a series per pod beside the device's own, repeating its figures).
WATTS = (299.44, 299.44, 300.86)
PODS = {0: ("train-0", "train-1"), 2: ("infer-0", "infer-1", "infer-2")}
PAGE = render("k8s-node", [DcgmGpu(i, fields(10, 50, 60, w)) for i, w in enumerate(WATTS)] + [
    DcgmGpu(i, fields(10, 50, 60, WATTS[i]), pod=pod_labels(pod, "ml", "worker"))
    for i, pods in PODS.items() for pod in pods
], host_label="Hostname")


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusServer]:
    pages = serve_pages({"k8s-node": PAGE})
    server = PrometheusServer(
        tmp_path_factory.mktemp("power"), static_configs=scrape_configs(pages.server_address[1], ["k8s-node"], [], [])
    )
    try:
        wait_for("the node scraped", lambda: server.query("count(up == 1) == 1") or None, 30)
        yield server
    finally:
        pages.shutdown()
        server.stop()


def test_a_time_shared_nodes_power_is_its_gpus_draw_each_counted_once(prometheus: PrometheusServer) -> None:
    (host,) = ClusterReader(ClusterOptions.create(prometheus.url, interval_s=5)).fetch().hosts
    assert (host.hostname, host.gpus) == ("k8s-node", 3)
    assert host.power_draw == pytest.approx(sum(WATTS), abs=1e-6)  # 899.74, not 5 pods' copies more


async def test_the_host_screens_gpu_rows_add_up_to_the_nodes_power(prometheus: PrometheusServer) -> None:
    app = ClusterApp(ClusterOptions.create(prometheus.url, interval_s=60))
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, "the whole first refresh", lambda: app.state is not None and not app.state.pending)
        await pilot.pause()
        assert "900W" in app.fleet.host_list.line(0).plain.split()
        screen = await open_host(pilot, app, "k8s-node")
        power = [row[GPU_COLUMNS.index("Power")] for row in gpu_rows(screen)]
        # Each to a tenth of a watt: 299.4 + 299.4 + 300.9 is 899.7, the node's 900 W; rounded to
        # whole watts they read 299 + 299 + 301 = 899 beside it.
        assert power == ["299.4W", "299.4W", "300.9W"]
