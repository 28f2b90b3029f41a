"""Request bodies: JSON only (415 otherwise), and of a sane shape (bounded nesting, no NUL characters).

Litestar would decode any body as JSON whatever its content type, so a cross-site ``text/plain``
form post would reach a handler; and deep nesting or NUL characters would fail deep inside the
pipeline or the database. Both are refused here, before a handler runs, with a 4xx naming why.
"""

from __future__ import annotations

import msgspec
from litestar import Request

from answer.api.errors import BadRequest, UnsupportedMediaType

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def shape_problem(value: object, max_depth: int) -> str | None:
    """Why a decoded JSON value is refused (nested deeper than ``max_depth``, a NUL in a string), or None."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return "the body contains a NUL character"
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > max_depth:
            return f"the body is nested deeper than {max_depth} levels"
        children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)
    return None


async def check_body(request: Request, *, expects_data: bool, max_depth: int) -> None:
    """415 for a body that is not declared JSON, 400 for malformed JSON or a refused shape."""
    if request.method not in BODY_METHODS:
        return
    body = await request.body()
    if not body and not expects_data:
        return
    content_type = request.headers.get("content-type", "")
    if not is_json(content_type):
        raise UnsupportedMediaType(
            "the request body must be JSON, sent with 'Content-Type: application/json' "
            f"(got {content_type.split(';', 1)[0].strip() or 'no content type'})"
        )
    if not body:
        raise BadRequest("the request needs a JSON body")
    try:
        value = msgspec.json.decode(body)
    except RecursionError as err:
        raise BadRequest(f"the body is nested deeper than {max_depth} levels") from err
    except msgspec.DecodeError as err:
        raise BadRequest(f"the body is not valid JSON: {err}") from err
    problem = shape_problem(value, max_depth)
    if problem:
        raise BadRequest(problem)
