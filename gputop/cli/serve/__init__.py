"""``gputop serve``: the same TUI in a browser tab, through textual-serve.

``command`` reads the command line and checks what is to be served (no web
libraries imported); ``server`` is the web server, imported only when serving.
"""
