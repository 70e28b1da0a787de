"""What the common XID error codes mean, in a few words (NVIDIA's XID catalogue)."""

from __future__ import annotations

XID_MEANINGS: dict[int, str] = {
    13: "graphics engine exception (often an application's bad access)",
    31: "GPU memory page fault (an application's illegal address)",
    43: "GPU stopped processing (an application fault)",
    45: "preemptive cleanup after an earlier error (a killed process)",
    48: "double-bit ECC error: memory it cannot correct",
    61: "internal micro-controller breakpoint",
    62: "internal micro-controller halt",
    63: "ECC page retirement or row remap recorded",
    64: "ECC page retirement or row remap failed",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    92: "high single-bit ECC error rate",
    94: "contained ECC error (application stopped)",
    95: "uncontained ECC error: the GPU needs a reset",
    119: "GSP firmware timed out",
    120: "GSP firmware error",
}


def xid_text(code: int) -> str:
    """``XID 79: GPU has fallen off the bus``, or just ``XID 7`` for an uncommon code."""
    meaning = XID_MEANINGS.get(code)
    return f"XID {code}" if meaning is None else f"XID {code}: {meaning}"
