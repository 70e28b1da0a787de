"""The terminal side: the first frame before Textual loads, the changed-cell writer, Textual's private names."""
