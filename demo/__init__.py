"""The demo warehouse "shop": a warehouse pack (``pack.yaml``, ``load.py``, model, glossary, wiki) used by
``cubesage demo ...`` and ``cubesage warehouse load demo``."""
