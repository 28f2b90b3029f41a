"""Public warehouses beside the demo, each a *pack*: a folder that holds everything a team would write
for its warehouse, so cubesage can be measured on data it was not tuned on.

A pack folder ``warehouses/<name>/`` holds:

- ``pack.yaml``: ``name``, ``title``, ``schema`` (the PostgreSQL schema the data lives in), ``today``
  (the date relative questions resolve against), ``description``, optional ``questions`` (samples it answers);
- ``load.py``: ``load(url: str, schema: str) -> dict[str, int]``, which (re)creates the schema, loads the
  data and returns row counts per table (idempotent);
- ``model/*.yml``: Cube YAML models (titles, descriptions, measures, dimensions, joins, ``meta``);
- ``glossary.yaml``: business terms in English and Chinese with synonyms (the demo's format);
- ``wiki/*.md``: one page per table; front matter ``tables: [<table>, ...]`` names what a page describes;
- ``few_shots.yaml`` (optional): approved question -> Cube query pairs;
- ``suite.yaml``: the regression suite, written blind, with ``split: dev|test`` per case.
"""
