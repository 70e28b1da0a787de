"""The cluster view's data side: many hosts' GPUs read from Prometheus (not a GPU source)."""
