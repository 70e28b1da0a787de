"""Where GPU samples come from: NVML, the demo simulation, recordings."""
