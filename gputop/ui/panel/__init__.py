"""The process panel: its rows and columns (rows.py), and the sort, filter and kill keys that act on it."""
