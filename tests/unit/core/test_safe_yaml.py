"""YAML from outside is loaded within limits (cubesage_core.safe_yaml)."""

from __future__ import annotations

import pytest

from cubesage_core import safe_yaml

LAUGHS = "\n".join(
    [f"a: &a [{', '.join(['lol'] * 9)}]"]
    + [f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
)


def test_billion_laughs_is_refused_quickly() -> None:
    assert len(LAUGHS) < 600
    with pytest.raises(safe_yaml.YamlLimitError, match="expands"):
        safe_yaml.load(LAUGHS)


def test_limits_and_errors() -> None:
    with pytest.raises(safe_yaml.YamlLimitError, match="nested"):
        safe_yaml.load("a:\n" + "".join("  " * i + "- \n" for i in range(1, 80)))
    with pytest.raises(safe_yaml.YamlLimitError):
        safe_yaml.load("[" * 5000 + "]" * 5000)
    with pytest.raises(safe_yaml.YamlLimitError, match="larger"):
        safe_yaml.load("a: " + "x" * 100, max_bytes=50)
    with pytest.raises(safe_yaml.YamlLimitError, match="aliases"):
        safe_yaml.load("a: &a 1\nb: [" + ", ".join(["*a"] * 20) + "]", max_aliases=10)
    with pytest.raises(safe_yaml.YamlLimitError, match="unfinished"):
        safe_yaml.load("a: &r [*r]")
    with pytest.raises(safe_yaml.YamlLimitError, match="not valid YAML"):
        safe_yaml.load("a: [b")
    with pytest.raises(safe_yaml.YamlLimitError, match=r"line 2, column 18\).*quote a text"):
        safe_yaml.load("a: 1\ndescription: Name: the thing")
    with pytest.raises(safe_yaml.YamlLimitError):
        safe_yaml.load("!!python/object/apply:os.system ['true']")


def test_ordinary_documents_load_with_their_aliases() -> None:
    assert safe_yaml.load("base: &b {x: 1}\nother: *b\nlist: [1, 2]") == {
        "base": {"x": 1},
        "other": {"x": 1},
        "list": [1, 2],
    }
    assert safe_yaml.load("") is None
