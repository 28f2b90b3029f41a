"""Typed errors of the SAG package: bad input, unreachable stores, failed extraction."""

from __future__ import annotations


class SagError(Exception):
    """Base class of every error raised by sag_index."""


class LoaderError(SagError):
    """A document cannot be read or split into chunks (unsupported format, bad JSON...)."""


class StoreUnavailable(SagError):
    """The configured vector/BM25 store cannot be reached and no fallback is allowed."""


class ExtractionError(SagError):
    """The LLM processor produced output that does not parse into one event plus entities."""


class NotIndexedError(SagError):
    """Retrieval was asked of a store or database that holds no SAG index."""
