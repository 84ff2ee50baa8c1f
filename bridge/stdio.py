"""Old import path of `bridge.vscodelm.stdio` (the headless vscodelm endpoint on stdin/stdout)."""

from bridge.vscodelm.stdio import keep_heap, run, serve_stdio, widen_pipe

__all__ = ["keep_heap", "run", "serve_stdio", "widen_pipe"]
