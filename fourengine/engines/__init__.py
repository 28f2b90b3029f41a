"""The four engines: R (relational term match), V (vector), D (dynamic few-shot), G (join graph)."""
