"""Answer synthesizer, Litestar API, chat page and CLI."""
