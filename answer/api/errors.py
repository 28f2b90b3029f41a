"""Typed API errors and the exception handlers that turn every failure into a JSON body without internals.

Errors raised by the answering pipeline are classified by type: cubesage's own typed errors
and ``ValueError`` -> 422 with their message, ``*Unavailable*``/``*Timeout*``/connection
errors -> 503; anything else is a bug, logged with its stack trace and answered with a
generic 500 that names nothing internal.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.datastructures import ResponseSpec

from answer.api.dto import ErrorBody

log = logging.getLogger("cubesage.api")


class ApiError(Exception):
    """Base of the errors the API raises on purpose; carries the HTTP status and a short code."""

    status_code = 400
    code = "bad_request"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BadRequest(ApiError):
    status_code = 400
    code = "bad_request"


class Unprocessable(ApiError):
    status_code = 422
    code = "unprocessable"


class NotFound(ApiError):
    status_code = 404
    code = "not_found"


class Unauthorized(ApiError):
    status_code = 401
    code = "unauthorized"


class Forbidden(ApiError):
    status_code = 403
    code = "forbidden"


class UnsupportedMediaType(ApiError):
    status_code = 415
    code = "unsupported_media_type"


class RateLimited(ApiError):
    status_code = 429
    code = "rate_limited"

    def __init__(self, detail: str, retry_after_s: int) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s


class ServiceUnavailable(ApiError):
    status_code = 503
    code = "unavailable"


_UNAVAILABLE_MARKERS = ("Unavailable", "ConnectError", "ConnectionError", "OperationalError", "Timeout")
OWN_PACKAGES = ("answer.", "router.", "cube_models.", "sag_index.", "fourengine.", "cubesage_core.")


def classify(err: Exception) -> ApiError | None:
    """Map an error raised by the answering pipeline to an ApiError, or None when it is a bug.

    Typed errors of cubesage's own packages and ``ValueError``s are refusals with a message (422),
    or 503 when their type says a backing service is unavailable or timed out. Anything else
    (AttributeError, KeyError, ...) is a bug: None, answered with a generic 500.
    """
    if isinstance(err, ApiError):
        return err
    classes = type(err).__mro__
    message = str(err) or type(err).__name__
    if any(marker in cls.__name__ for cls in classes for marker in _UNAVAILABLE_MARKERS):
        return ServiceUnavailable(f"a backing service is unavailable: {message}"[:500])
    if isinstance(err, ValueError) or type(err).__module__.startswith(OWN_PACKAGES):
        return Unprocessable(message[:1000])
    return None


def _body(status: int, code: str, detail: str) -> Response[ErrorBody]:
    return Response(
        ErrorBody(status_code=status, error=code, detail=detail), status_code=status, media_type=MediaType.JSON
    )


def api_error_handler(_: Request, exc: ApiError) -> Response[ErrorBody]:
    response = _body(exc.status_code, exc.code, exc.detail)
    if isinstance(exc, RateLimited):
        response.headers["Retry-After"] = str(exc.retry_after_s)
    return response


def http_exception_handler(_: Request, exc: HTTPException) -> Response[ErrorBody]:
    if exc.status_code >= 500:
        log.error("internal HTTP error: %s", exc.detail, exc_info=exc)
        return _body(500, "internal_error", "internal error; the incident was logged")
    detail = exc.detail
    if isinstance(exc, ValidationException) and exc.extra:
        problems = exc.extra if isinstance(exc.extra, list) else [exc.extra]
        detail = (
            "; ".join(
                f"{p.get('key', '')}: {p.get('message', '')}".strip(": ") if isinstance(p, dict) else str(p)
                for p in problems
            )
            or detail
        )
    code = {
        400: "bad_request",
        401: "unauthorized",
        403: "forbidden",
        404: "not_found",
        405: "method_not_allowed",
        413: "payload_too_large",
        415: "unsupported_media_type",
        429: "rate_limited",
    }.get(exc.status_code, "client_error")
    response = _body(exc.status_code, code, str(detail)[:1000])
    if exc.headers:
        response.headers.update(exc.headers)
    return response


def unexpected_handler(request: Request, exc: Exception) -> Response[ErrorBody]:
    mapped = classify(exc)
    if mapped is not None:
        return api_error_handler(request, mapped)
    log.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return _body(500, "internal_error", "internal error; the incident was logged")


_DESCRIPTIONS = {
    400: "Malformed request or question (message says why)",
    401: "Missing, invalid or revoked API key",
    403: "The key lacks the route's scope, or a cross-site / foreign-Host request in keyless mode",
    404: "Not found",
    413: "Request body too large",
    415: "The body is not sent as application/json",
    422: "Input understood but refused (message says why)",
    429: "Rate limit exceeded (see Retry-After)",
    503: "A backing service is unavailable",
}


def error_responses(*codes: int) -> dict[int, ResponseSpec]:
    """OpenAPI documentation of the error statuses a route can answer (all with an ErrorBody)."""
    wanted = codes or (400, 401, 403, 413, 415, 422, 429)
    return {code: ResponseSpec(data_container=ErrorBody, description=_DESCRIPTIONS[code]) for code in wanted}


EXCEPTION_HANDLERS: dict[int | type[Exception], Callable[[Request[Any, Any, Any], Any], Response[ErrorBody]]] = {
    ApiError: api_error_handler,
    HTTPException: http_exception_handler,
    Exception: unexpected_handler,
}
