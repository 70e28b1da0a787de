"""Host facts read beside NVML: /proc, psutil, containers, pods, Slurm jobs, and the signals sent to processes."""
