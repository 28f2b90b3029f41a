"""YAML from outside, loaded within limits: size, nesting depth, aliases and the size aliases expand to.

``yaml.safe_load`` shares aliased nodes, so a few hundred bytes of nested aliases ("billion laughs")
load quickly but stand for billions of nodes that every later walk over the data expands; deep nesting
overflows the recursive composer. :func:`load` first reads the event stream (iteratively) and refuses,
with :class:`YamlLimitError`, a document that is too big, nested too deep, uses too many aliases or whose
aliases expand past ``max_nodes``; only then is it loaded with the safe loader.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_BYTES = 2_000_000
MAX_DEPTH = 64
MAX_ALIASES = 1_000
MAX_NODES = 200_000

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlLimitError(ValueError):
    """The YAML is malformed or exceeds a limit (the message says which)."""


def _check_events(text: str, *, max_depth: int, max_aliases: int, max_nodes: int) -> None:
    sizes: dict[str, int] = {}  # anchor -> expanded node count of its (finished) node
    stack: list[list[Any]] = [[None, 0]]  # [anchor, expanded node count] per open collection
    aliases = total = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if event.anchor not in sizes:
                raise YamlLimitError(f"alias *{event.anchor} refers to an unfinished or unknown anchor")
            if aliases > max_aliases:
                raise YamlLimitError(f"more than {max_aliases} aliases")
            count = sizes[event.anchor]
        elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            stack.append([event.anchor, 1])
            if len(stack) - 1 > max_depth:
                raise YamlLimitError(f"nested deeper than {max_depth} levels")
            continue
        elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            anchor, count = stack.pop()
            if anchor:
                sizes[anchor] = count
        elif isinstance(event, yaml.ScalarEvent):
            count = 1
            if event.anchor:
                sizes[event.anchor] = 1
        else:
            continue
        stack[-1][1] += count
        total += count
        if total > max_nodes:
            raise YamlLimitError(f"the document expands to more than {max_nodes} nodes")


def load(
    text: str,
    *,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    max_aliases: int = MAX_ALIASES,
    max_nodes: int = MAX_NODES,
) -> Any:
    """The document in ``text`` (safe types only) after the limit checks; :class:`YamlLimitError` otherwise."""
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise YamlLimitError(f"the document is larger than {max_bytes} bytes")
    try:
        _check_events(text, max_depth=max_depth, max_aliases=max_aliases, max_nodes=max_nodes)
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        hint = " (quote a text that holds ': ')" if "mapping values are not allowed" in str(err) else ""
        raise YamlLimitError(f"not valid YAML{where}: {str(err).splitlines()[0]}{hint}") from err
    except RecursionError as err:
        raise YamlLimitError(f"nested deeper than {max_depth} levels") from err
