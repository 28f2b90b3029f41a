"""The built-in compiler's phases (``cube_models.compiler``): joins, filters, aggregation, ordering, and the
SQL pieces they share."""
