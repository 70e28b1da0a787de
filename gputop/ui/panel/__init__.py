"""The process panel: the main screen's process table, which holds its sort, filter and tree; its title's words;
the signals its k asks for."""
