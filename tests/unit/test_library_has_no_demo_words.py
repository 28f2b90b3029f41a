"""Library code names nothing of the demo warehouse: its tables, columns, cubes, metrics and region names live
in demo/ (model, glossary, detail vocabulary), never in router/ fourengine/ sag_index/ answer/ cube_models/
cubesage_core/.

The words come from the demo's own files: every name in demo/model/*.yml (cubes and their singulars,
physical tables, joins, dimensions, measures, segments), the regions of demo/vocab.yaml, the customers and
products the docs name, and the Chinese metric and table names of the warehouse contract. They are looked
for in the code of the library's Python modules (identifiers and string literals) and in the chat page's
scripts. Words of the demo model that are also Cube, SQL, HTTP or plain-language vocabulary (``count``,
``order``, ``status``, ``amount``...) are left out.

Comments and docstrings (prose) are checked too, with one rule: an example there may use the everyday English
nouns every shop's warehouse has ("customers", "orders", "products", "payments", "refunds", "regions",
"revenue": ``PLAIN_ENGLISH``, the demo's cube names among them), but never the demo's own identifiers (any
name with an underscore or a digit: ``order_items``, ``region_code``, ``name_zh``, ``fact_refund``), its
abbreviations (``gmv``, ``aov``, ``vip``: every demo word not on that list), its region names, its named
customers and products, or its Chinese metric and table names (``CHINESE``, plain nouns such as 订单 included:
they are the glossary's words for the demo's tables). A new word in the demo model is forbidden in prose
unless it is added to ``PLAIN_ENGLISH``.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from functools import cache
from pathlib import Path

import pytest
import yaml

from cubesage_core.settings import REPO_ROOT

LIBRARY = ("router", "fourengine", "sag_index", "answer", "cube_models", "cubesage_core")
DEMO = REPO_ROOT / "demo"
# demo model names that are also Cube/SQL/HTTP/Python or plain-language words (a Cube query's "order", an
# HTTP status, a measure "count", the "segment" member type, an "amount" column, the "kind" of a thing ...)
GENERIC = frozenset(
    {
        "count",
        "order",
        "status",
        "amount",
        "method",
        "reason",
        "category",
        "segment",
        "city",
        "brand",
        "quantity",
        "discount",
        "kind",
        "ts",
        "online",
        "completed",
        "channel",
    }
)
# the warehouse contract's Chinese metric names and the demo glossary's Chinese nouns of its tables (its verbs
# 支付 "pay" and 下单 "place an order" are language)
CHINESE = (
    "成交总额",
    "交易额",
    "销售额",
    "订单量",
    "客单价",
    "退款率",
    "活跃客户",
    "新客",
    "订单",
    "退款",
    "客户",
    "商品",
)
# demo cube names (and singulars) that are everyday English nouns of any shop: allowed in prose examples only
PLAIN_ENGLISH = frozenset(
    {
        "customer",
        "customers",
        "product",
        "products",
        "payment",
        "payments",
        "refund",
        "refunds",
        "refunded",
        "region",
        "regions",
        "revenue",
        "orders",
    }
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_REGEX_ESCAPE = re.compile(r"\\[bBdDsSwWAZ]")  # r"\border" is "order" after a word boundary


def _singular(name: str) -> str:
    return name[:-1] if name.endswith("s") and not name.endswith("ss") else name


@cache
def demo_words() -> frozenset[str]:
    """Lower-case identifiers of the demo model (and their singulars), without the generic ones."""
    names: set[str] = set()
    for path in sorted((DEMO / "model").glob("*.yml")):
        for cube in yaml.safe_load(path.read_text(encoding="utf-8"))["cubes"]:
            names |= {cube["name"], _singular(cube["name"])}
            if cube.get("sql_table"):
                names.add(str(cube["sql_table"]).rsplit(".", 1)[-1])
            names |= set(re.findall(r"\bwarehouse\.(\w+)", str(cube.get("sql") or "")))
            for kind in ("joins", "dimensions", "measures", "segments"):
                names |= {str(member["name"]) for member in cube.get(kind) or []}
    return frozenset(n.lower() for n in names) - GENERIC


@cache
def demo_phrases() -> tuple[str, ...]:
    """Names written as they are (matched as substrings): region names, named customers and products."""
    vocab = yaml.safe_load((DEMO / "vocab.yaml").read_text(encoding="utf-8"))
    regions = [name for r in vocab["regions"] for name in (r["name_zh"], r["name_en"])]
    products = [p["product_name"] for p in vocab["reserved_products"]]
    return (*regions, *vocab["reserved_customers"], *products, *CHINESE)


@cache
def demo_prose_words() -> frozenset[str]:
    """The demo words an example in a comment or docstring must not use: all but the plain English ones."""
    return demo_words() - PLAIN_ENGLISH


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                lines.add(first.lineno)
    return lines


def python_code(source: str) -> list[tuple[int, str]]:
    """(line, text) of the identifiers and string literals of ``source``, docstrings and comments left out."""
    docstrings = _docstring_lines(ast.parse(source))
    kept = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME or (tok.type == tokenize.STRING and tok.start[0] not in docstrings):
            kept.append((tok.start[0], tok.string))
    return kept


def python_prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of the comments and docstrings of ``source``, one entry per physical line."""
    docstrings = _docstring_lines(ast.parse(source))
    kept = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and tok.start[0] in docstrings):
            kept += [(tok.start[0] + i, line) for i, line in enumerate(tok.string.splitlines())]
    return kept


def script_prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of the comments of a JavaScript/HTML file (block, line and HTML comments)."""
    kept = []
    for m in re.finditer(r"/\*.*?\*/|<!--.*?-->|(?<![:\\])//[^\n]*", source, flags=re.DOTALL):
        first = source.count("\n", 0, m.start()) + 1
        kept += [(first + i, line) for i, line in enumerate(m.group(0).splitlines())]
    return kept


def script_code(source: str) -> list[tuple[int, str]]:
    """(line, text) of a JavaScript/HTML file without its comments (block, line and HTML comments)."""
    blank = re.sub(r"/\*.*?\*/|<!--.*?-->", lambda m: "\n" * m.group(0).count("\n"), source, flags=re.DOTALL)
    return [(n, line) for n, line in enumerate(blank.splitlines(), 1) if not line.lstrip().startswith("//")]


def demo_words_in(text: str, words: frozenset[str] | None = None) -> list[str]:
    """The demo names in ``text``: words of ``words`` (the demo words by default) and the demo phrases."""
    vocabulary = demo_words() if words is None else words
    found = {w for w in _WORD.findall(_REGEX_ESCAPE.sub(" ", text)) if w.lower() in vocabulary}
    return sorted(found | {p for p in demo_phrases() if p in text})


def demo_words_in_prose(text: str) -> list[str]:
    return demo_words_in(text, demo_prose_words())


def library_files() -> list[Path]:
    files = []
    for package in LIBRARY:
        root = REPO_ROOT / package
        files += sorted(root.rglob("*.py"))
        files += sorted(
            p for p in root.rglob("*") if p.suffix in (".js", ".html") and not {"vendor", "node_modules"} & set(p.parts)
        )
    return files


def findings(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    code = python_code(source) if path.suffix == ".py" else script_code(source)
    return [
        f"{path.relative_to(REPO_ROOT)}:{line}: {', '.join(words)}"
        for line, text in code
        if (words := demo_words_in(text))
    ]


def prose_findings(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    prose = python_prose(source) if path.suffix == ".py" else script_prose(source)
    return [
        f"{path.relative_to(REPO_ROOT)}:{line}: {', '.join(words)}"
        for line, text in prose
        if (words := demo_words_in_prose(text))
    ]


def test_the_word_list_is_the_demos() -> None:
    words = demo_words()
    assert {
        "fact_order",
        "dim_customer",
        "gmv",
        "refund",
        "refunds",
        "refund_rate",
        "order_items",
        "customer_name",
        "name_zh",
    } <= words
    assert not GENERIC & words and "华东" in demo_phrases()


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ('ID = re.compile(r"\\b(order|refund|payment)\\s*(\\d+)")\n', ["payment", "refund"]),
        ('LABELS = {"gmv": "GMV", "name_zh": "地区"}\n', ["GMV", "gmv", "name_zh"]),
        ('def f():\n    """GMV by region in 华东"""\n    return 1  # refunds of fact_order\n', []),
        ('x = query["order"]; y = "ORDER BY 1"; z = "count"\n', []),
        ('SQL = "SELECT 1 FROM warehouse.fact_order"\n', ["fact_order"]),
    ],
)
def test_code_is_read_without_prose(source: str, found: list[str]) -> None:
    assert sorted({w for _, text in python_code(source) for w in demo_words_in(text)}) == found


def test_script_comments_are_prose() -> None:
    code = script_code('// GMV by region\nconst a = "refunds"; /* 华东\n */ const b = 1;\n<!-- gmv -->\n')
    assert [(n, demo_words_in(t)) for n, t in code if demo_words_in(t)] == [(2, ["refunds"])]


def test_prose_allows_only_plain_english_demo_words() -> None:
    """The allowed words are demo words (the list cannot go stale) and none is an identifier or abbreviation."""
    assert PLAIN_ENGLISH.issubset(demo_words())
    assert not any("_" in w or any(c.isdigit() for c in w) for w in PLAIN_ENGLISH)
    assert {w for w in demo_words() if "_" in w or any(c.isdigit() for c in w)} <= demo_prose_words()
    assert {"gmv", "aov", "vip", "order_items", "region_code", "name_zh", "fact_refund"} <= demo_prose_words()


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ('def f():\n    """``metric:order_items.gmv`` by region"""\n', ["gmv", "order_items"]),
        (
            'x = 1  # "GMV of Aurora X1 headphones" in 华东, for Li Wei\n',
            ["Aurora X1 headphones", "GMV", "Li Wei", "华东"],
        ),
        (
            '"""Module.\n\nCodes shown by name: regions.region_code -> name_zh, "客单价".\n"""\n',
            ["name_zh", "region_code", "客单价"],
        ),
        ('# "refunds over 1000", "top customers by revenue", "orders per region"\n', []),
        ('SQL = "SELECT 1 FROM warehouse.fact_order"  # an invoice table\n', []),
    ],
)
def test_prose_is_read_without_code(source: str, found: list[str]) -> None:
    assert sorted({w for _, text in python_prose(source) for w in demo_words_in_prose(text)}) == found


def test_script_prose_is_its_comments() -> None:
    source = 'const u = "https://x/gmv"; // GMV by region\n/* 华东\n */ const b = "refunds";\n<!-- aov -->\n'
    assert [(n, demo_words_in_prose(t)) for n, t in script_prose(source) if demo_words_in_prose(t)] == [
        (1, ["GMV"]),
        (2, ["华东"]),
        (4, ["aov"]),
    ]


def test_library_prose_names_no_demo_identifier_region_or_row() -> None:
    found = [line for path in library_files() for line in prose_findings(path)]
    assert not found, "demo names in library comments or docstrings (use a neutral example):\n" + "\n".join(found)


def test_library_code_names_no_demo_table_column_or_metric() -> None:
    found = [line for path in library_files() for line in findings(path)]
    assert not found, "demo words in library code (move them to demo/ or derive them from the model):\n" + "\n".join(
        found
    )


def test_the_library_does_not_import_the_demo() -> None:
    """Only `cubesage demo ...` loads demo/ code: the CLI, the API and the answering service do not."""
    code = (
        "import sys, answer.cli, answer.api, answer.service, answer.init; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'demo'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    assert out.stdout.strip() == "[]", out.stdout
