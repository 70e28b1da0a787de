"""``gputop cluster``'s entry: the first refresh is asked before Textual is even imported, then the view starts."""

from __future__ import annotations

from gputop.core.cluster.first import FirstRefresh
from gputop.core.cluster.model import ClusterOptions
from gputop.core.cluster.pacing import Pacer
from gputop.core.cluster.reader import ClusterReader


def run_cluster(options: ClusterOptions) -> int:
    """Run the cluster view until the user quits; the exit status."""
    reader = ClusterReader(options)
    # Prometheus answers while Textual loads and builds the screen (most of a second): the
    # first rows can be on the first frame.
    first = FirstRefresh(reader, Pacer(options.interval_s, options.timeout_s).timeout_s)
    from gputop.ui.cluster.view import ClusterApp

    ClusterApp(options, reader, first=first).run()
    return 0
