"""What leaves gputop: --json, --once tables, the Prometheus exporter (gputop and DCGM names), monitoring files."""
