"""The console's widgets: approval cards and queue, the built-in chat, the session inspector and
the tool-call log."""
