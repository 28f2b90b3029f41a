"""Names that nest, asked of the real warehouse by ``router.parse.nesting``: a team season's name inside its
franchise's name, and a customer whose sales rep has another name."""

from __future__ import annotations

from pathlib import Path

import pytest

from cube_models.model import load_model
from cubesage_core.db import connection
from router.parse.nesting import Nesting

pytestmark = pytest.mark.integration
SCHEMA = "cs_nesting"
MODEL = f"""
cubes:
  - name: franchises
    sql_table: {SCHEMA}.franchises
    dimensions:
      - {{name: franch_id, sql: franch_id, type: string, primary_key: true}}
      - {{name: name, sql: name, type: string, title: Franchise name}}
  - name: teams
    sql_table: {SCHEMA}.teams
    joins:
      - {{name: franchises, relationship: many_to_one, sql: "{{CUBE}}.franch_id = {{franchises}}.franch_id"}}
    dimensions:
      - {{name: team_key, sql: "{{CUBE}}.team_id || {{CUBE}}.year_id", type: string, primary_key: true}}
      - {{name: name, sql: "{{CUBE}}.name", type: string, title: Team name}}
"""


@pytest.fixture()
def nesting(pg_url: str, tmp_path: Path) -> Nesting:
    with connection(pg_url) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        conn.execute(f"CREATE TABLE {SCHEMA}.franchises (franch_id text PRIMARY KEY, name text)")
        conn.execute(f"CREATE TABLE {SCHEMA}.teams (team_id text, year_id int, franch_id text, name text)")
        conn.execute(f"INSERT INTO {SCHEMA}.franchises VALUES ('CHC', 'Chicago Cubs'), ('LAD', 'Los Angeles Dodgers')")
        conn.cursor().executemany(
            f"INSERT INTO {SCHEMA}.teams VALUES (%s, %s, %s, %s)",
            [
                ("CHN", 1898, "CHC", "Chicago Orphans"),
                ("CHN", 2016, "CHC", "Chicago Cubs"),
                ("BRO", 1950, "LAD", "Brooklyn Dodgers"),
                ("LAN", 2016, "LAD", "Los Angeles Dodgers"),
                ("XXX", 2016, "LAD", "Chicago Cubs"),  # a namesake in another franchise: not nested
            ],
        )
    (tmp_path / "m.yml").write_text(MODEL, encoding="utf-8")
    yield Nesting(pg_url, load_model(tmp_path))
    with connection(pg_url) as conn:
        conn.execute(f"DROP SCHEMA {SCHEMA} CASCADE")


def test_rows_of_a_name_nest_in_the_parent_only_when_all_of_them_belong_to_it(nesting: Nesting) -> None:
    dodgers = ["Brooklyn Dodgers", "Los Angeles Dodgers"]
    assert nesting.within("teams.name", dodgers, "franchises.name", ["Los Angeles Dodgers"])
    # one team named Chicago Cubs belongs to the Dodgers' franchise: the two readings differ, so not nested
    assert not nesting.within("teams.name", ["Chicago Cubs"], "franchises.name", ["Chicago Cubs"])
    assert not nesting.within("teams.name", ["Nobody"], "franchises.name", ["Nobody"])  # no row at all
    assert not nesting.within("teams.no_such", ["x"], "franchises.name", ["x"])  # a bad member: not nested
