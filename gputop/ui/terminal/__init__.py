"""The terminal before and around Textual: the first frame before it loads, the keys typed meanwhile, the
streams it draws on, NO_COLOR and ASCII, and how it is imported."""
