"""The OpenAI-compatible HTTP front door (Chat Completions, Responses, models, tools).

    from bridge.openai import OpenAIServer
    server = OpenAIServer(bridge, "127.0.0.1:8080", api_key=None)
    await server.start(); …; await server.stop()

`create_app(bridge, **options)` gives the bare ASGI app. See `app.py` for the design.
"""

from bridge.openai.app import OpenAIFrontDoor, create_app
from bridge.openai.server import API_KEY_ENV, OpenAIServer, ServeError, parse_address

__all__ = [
    "API_KEY_ENV",
    "OpenAIFrontDoor",
    "OpenAIServer",
    "ServeError",
    "create_app",
    "parse_address",
]
