"""Recordings: writing ticks to JSONL, reading them back, and replaying them."""
