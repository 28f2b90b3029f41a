"""The HTTP API (Litestar) and the chat page: ``create_app(settings, service=None)``."""

from answer.api.app import create_app

__all__ = ["create_app"]
