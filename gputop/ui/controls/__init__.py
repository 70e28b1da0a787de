"""The parts of the app behind its keys: layout, sampling, settings, replay, title, which screen opens."""
