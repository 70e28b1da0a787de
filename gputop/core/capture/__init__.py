"""NVML captures: what one machine's driver answered gputop, recorded (``gputop doctor --capture``)
and replayed (``gputop --nvml-capture``) through the same gateway. docs/capture.md is the format."""
