"""The live Textual TUI. It only reads Snapshots; it never calls NVML or psutil."""
