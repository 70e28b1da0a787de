"""The data side of gputop: sources, snapshots, reports. Never imports Textual."""
