"""The fast parser on a small league model written in Cube's ``{CUBE}.column`` style, with facts that reach
the teams and players only through joins: which of several same-named measures and time dimensions a
question means, counts of named things, rows bounded by a measure, and verbs that say nothing more."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

import pytest

from cube_models.model import load_model
from router.parse import Knowledge, build_lexicon, parse
from router.parse.reading import Reading
from router.parse.verdict import judge
from router.understanding import understand

TODAY = date(2021, 1, 1)
MODEL = """
cubes:
  - name: people
    title: Players
    sql_table: league.people
    dimensions:
      - {name: player_id, sql: "{CUBE}.player_id", type: string, primary_key: true, public: true}
      - {name: full_name, sql: "{CUBE}.name_first || ' ' || {CUBE}.name_last", type: string, title: Player}
      - {name: debut, sql: "{CUBE}.debut", type: time, title: Debut}
      - {name: death_country, sql: "{CUBE}.death_country", type: string, title: Death country}
      - {name: birth_country, sql: "{CUBE}.birth_country", type: string, title: Birth country}
    measures:
      - {name: count, type: count, title: Players}
  - name: franchises
    title: Franchises
    sql_table: league.franchises
    dimensions:
      - {name: franch_id, sql: "{CUBE}.franch_id", type: string, primary_key: true}
      - {name: franch_name, sql: "{CUBE}.franch_name", type: string, title: Franchise}
  - name: teams
    title: Team seasons
    sql_table: league.teams
    joins:
      - {name: franchises, relationship: many_to_one, sql: "{CUBE}.franch_id = {franchises}.franch_id"}
    dimensions:
      - {name: team_key, sql: "{CUBE}.team_id || '-' || {CUBE}.year_id", type: string, primary_key: true}
      - {name: name, sql: "{CUBE}.name", type: string, title: Team name}
      - {name: season, sql: "make_date({CUBE}.year_id, 1, 1)", type: time, title: Season}
    measures:
      - {name: count, type: count, title: Team seasons}
      - {name: team_wins, type: sum, sql: "{CUBE}.w", title: Wins}
  - name: batting
    title: Batting lines
    sql_table: league.batting
    joins:
      - {name: people, relationship: many_to_one, sql: "{CUBE}.player_id = {people}.player_id"}
      - name: teams
        relationship: many_to_one
        sql: "{CUBE}.team_id = {teams}.team_id AND {CUBE}.year_id = {teams}.year_id"
    dimensions:
      - {name: line_key, sql: "{CUBE}.player_id || '-' || {CUBE}.year_id", type: string, primary_key: true}
      - {name: season, sql: "make_date({CUBE}.year_id, 1, 1)", type: time, title: Season}
    measures:
      - {name: players, type: count_distinct, sql: "{CUBE}.player_id", title: Players}
      - {name: home_runs, type: sum, sql: "{CUBE}.hr", title: Home runs}
      - {name: wins, type: sum, sql: "{CUBE}.w", title: Wins (batting)}
      - {name: strikeouts, type: sum, sql: "{CUBE}.so", title: Strikeouts}
  - name: pitching
    title: Pitchers
    sql_table: league.pitching
    joins:
      - {name: people, relationship: many_to_one, sql: "{CUBE}.player_id = {people}.player_id"}
    dimensions:
      - {name: line_key, sql: "{CUBE}.player_id || '-' || {CUBE}.year_id", type: string, primary_key: true}
      - {name: season, sql: "make_date({CUBE}.year_id, 1, 1)", type: time, title: Season}
    measures:
      - {name: strikeouts, type: sum, sql: "{CUBE}.so", title: Strikeouts}
  - name: awards
    title: Awards
    sql_table: league.awards
    joins:
      - {name: people, relationship: many_to_one, sql: "{CUBE}.player_id = {people}.player_id"}
    dimensions:
      - {name: award_key, sql: "{CUBE}.player_id || {CUBE}.award || {CUBE}.year_id", type: string, primary_key: true}
      - {name: award, sql: "{CUBE}.award", type: string, title: Award}
      - {name: season, sql: "make_date({CUBE}.year_id, 1, 1)", type: time, title: Season}
    measures:
      - {name: count, type: count, title: Awards won}
    segments:
      - {name: golden, sql: "{CUBE}.award = 'Golden Bat'", title: Golden Bat}
"""

# a cube under players and teams (one row per salary): "the Dodgers' highest-paid players" lists its rows
SALARIES = """
  - name: salaries
    title: Salaries
    sql_table: league.salaries
    joins:
      - {name: people, relationship: many_to_one, sql: "{CUBE}.player_id = {people}.player_id"}
      - {name: teams, relationship: many_to_one, sql: "{CUBE}.team_id = {teams}.team_id"}
    dimensions:
      - {name: salary_key, sql: "{CUBE}.player_id || {CUBE}.year_id", type: string, primary_key: true}
      - {name: salary, sql: "{CUBE}.salary", type: number, title: Salary, meta: {synonyms: [paid, pay]}}
      - {name: season, sql: "make_date({CUBE}.year_id, 1, 1)", type: time, title: Season}
    measures:
      - {name: total, type: sum, sql: "{CUBE}.salary", title: Total salary}
"""


@dataclass
class Values:
    surfaces: dict[str, list[tuple[str, str]]] = field(
        default_factory=lambda: {
            "red socks": [("teams.name", "Red Socks")],
            "golden bat": [("awards.award", "Golden Bat")],
            "japan": [("people.death_country", "Japan"), ("people.birth_country", "Japan")],
            "chicago bears": [("teams.name", "Chicago Bears"), ("franchises.franch_name", "Chicago Bears")],
            "decatur bears": [("teams.name", "Decatur Bears")],
            "new york blue caps": [("teams.name", "New York Blue Caps")],
        }
    )


def league(folder: Path, text: str, values: Values | None = None) -> Knowledge:
    """The knowledge of the league model ``text`` (written into ``folder``), with the warehouse's ``values``."""
    (folder / "league.yml").write_text(text, encoding="utf-8")
    model = load_model(folder)
    return Knowledge(model, build_lexicon(model, [], values))


@pytest.fixture(scope="module")
def knowledge(tmp_path_factory: pytest.TempPathFactory) -> Knowledge:
    folder: Path = tmp_path_factory.mktemp("league")
    return league(folder, MODEL, Values())


def read(knowledge: Knowledge, question: str) -> Reading:
    return parse(understand(question, TODAY), knowledge)


def test_of_measures_named_alike_the_one_whose_cube_reaches_the_values(knowledge: Knowledge) -> None:
    r = read(knowledge, "How many different players played for the Red Socks in 2018?")
    assert r.measures == ["batting.players"]  # not the players' own row count, which no team reaches
    assert [(f.member, f.values) for f in r.filters] == [("teams.name", ["Red Socks"])]


def test_grouped_by_a_time_dimension_many_cubes_name_alike(knowledge: Knowledge) -> None:
    r = read(knowledge, "home runs by season for the Red Socks")
    assert (r.time_dimension, r.granularity) == ("batting.season", "day")  # the measure's own, one group a date
    assert not r.unknown


def test_a_count_word_before_a_named_thing_counts_its_rows_not_a_later_verb(knowledge: Knowledge) -> None:
    r = read(knowledge, "How many Golden Bats were won in 2019?")
    assert r.measures == ["awards.count"] and not r.unknown  # "won" is no request for the wins


def test_phrasal_verbs_say_nothing_more(knowledge: Knowledge) -> None:
    r = read(knowledge, "which player racked up the most home runs in 2019?")
    assert "racked" not in r.unknown and r.measures == ["batting.home_runs"]


def test_a_cube_the_question_names_chooses_among_measures_named_alike(knowledge: Knowledge) -> None:
    assert read(knowledge, "which pitcher had the most strikeouts in 2019").measures == ["pitching.strikeouts"]


def test_a_bound_right_before_a_name_is_of_that_name_and_the_opening_rows_are_the_groups(
    knowledge: Knowledge,
) -> None:
    r = read(knowledge, "players with 30+ home runs in 2019")
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("batting.home_runs", "gte", ["30"])]
    assert r.dimensions == ["people.full_name"] and not r.refusal


def test_a_verb_whose_noun_titles_a_dimension_chooses_the_dimension_of_a_value(knowledge: Knowledge) -> None:
    r = read(knowledge, "how many players were born in Japan")
    assert [(f.member, f.values) for f in r.filters] == [("people.birth_country", ["Japan"])]


def test_the_last_word_of_a_value_names_it_and_a_value_two_cubes_hold_is_asked(knowledge: Knowledge) -> None:
    r = read(knowledge, "Bears wins in 2016 vs 2017?")
    assert any(n.startswith("'Bears' read as 'Chicago Bears'") for n in r.notes)
    # a team's name and its franchise's, or a self-titled album and its artist: which is meant is asked
    assert r.refusal and "Team name" in r.refusal and "Franchise" in r.refusal
    verdict = judge(r)  # the reader is asked to choose, not told that 'Bears' is unknown
    assert verdict.asks and verdict.refusal == r.refusal


def test_a_name_whose_rows_nest_in_the_other_cubes_is_the_rows_that_carry_it(knowledge: Knowledge) -> None:
    asked: list[tuple[str, list[str], str, list[str]]] = []

    def nests(child: str, values: list[str], parent: str, parents: list[str]) -> bool:
        asked.append((child, values, parent, parents))
        return True  # the warehouse says each team so named is of a franchise so named

    r = parse(understand("Bears wins in 2016", TODAY), replace(knowledge, nests=nests))
    # every team whose name ends so, one filter (no comparison of the two names); the franchise is not asked
    assert {(c, tuple(v), p, tuple(ps)) for c, v, p, ps in asked} == {
        ("teams.name", ("Chicago Bears", "Decatur Bears"), "franchises.franch_name", ("Chicago Bears",))
    }
    assert [(f.member, f.values) for f in r.filters] == [("teams.name", ["Chicago Bears", "Decatur Bears"])]
    assert not r.refusal and r.measures == ["teams.team_wins"] and r.dimensions == []


def test_capitalised_words_that_end_a_value_name_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "Blue Caps wins in 2016")
    assert [(f.member, f.values) for f in r.filters] == [("teams.name", ["New York Blue Caps"])]
    assert not r.unknown


def test_a_value_of_rows_the_listed_ones_do_not_refer_to_lists_the_rows_referring_to_both(tmp_path: Path) -> None:
    k = league(tmp_path, MODEL + SALARIES, Values())
    r = parse(understand("who were the Red Socks' five highest-paid players in 2016?", TODAY), k)
    # players belong to no team: the salaries, each naming its player, restricted to the team's
    assert r.listing == "salaries" and r.limit == 5 and r.order == [("salaries.salary", "desc")]
    assert [(f.member, f.values) for f in r.filters] == [("teams.name", ["Red Socks"])]
    assert "people.full_name" in r.columns and not r.refusal


def test_a_listed_column_only_a_measure_of_the_listed_rows_holds_is_shown_per_row(knowledge: Knowledge) -> None:
    from router.parse.cube import listing_query

    u = understand("batting lines of the Red Socks in 2019: season, team, home runs and strikeouts", TODAY)
    r = parse(u, knowledge)
    assert r.listing == "batting"
    # sums over one row are its own values: grouped by the rows' key
    assert r.row_measures == ["batting.home_runs", "batting.strikeouts"] and not r.unknown
    query = listing_query(r, u, knowledge.model)
    assert query["measures"] == r.row_measures and "batting.line_key" in query["dimensions"]


def test_a_subject_and_its_verb_are_no_name_and_the_verbs_object_no_measure(tmp_path: Path) -> None:
    k = league(
        tmp_path,
        MODEL.replace(
            '      - {name: team_wins, type: sum, sql: "{CUBE}.w", title: Wins}',
            '      - {name: team_wins, type: sum, sql: "{CUBE}.w", title: Team wins, meta: {synonyms: [won]}}\n'
            '      - {name: games, type: sum, sql: "{CUBE}.g", title: Games}',
        ).replace(
            '      - {name: name, sql: "{CUBE}.name", type: string, title: Team name}',
            '      - {name: name, sql: "{CUBE}.name", type: string, title: Team name}\n'
            '      - {name: last_year, sql: "{CUBE}.last_year", type: number, title: Last game year}',
        ),
    )
    r = parse(understand("which team won the most games in 2019?", TODAY), k)
    # "team won" is no "Team wins": the team is the group; the games are what the wins count; and the
    # year is the season's, not a bound on the year of a last game
    assert r.measures == ["teams.team_wins"] and r.dimensions == ["teams.name"] and r.limit == 1
    assert not r.filters and not r.refusal


def test_the_most_of_a_segment_counts_its_rows_and_who_is_the_one_they_belong_to(knowledge: Knowledge) -> None:
    r = read(knowledge, "who has won the most Golden Bats?")
    # the verb says how the awards came, not the team's wins; the awards belong to a player
    assert r.measures == ["awards.count"] and r.dimensions == ["people.full_name"] and r.limit == 1
    assert not r.refusal and not r.unknown and not r.unhonoured


def test_segments_said_of_each_in_chinese_are_compared_not_applied_together(tmp_path: Path) -> None:
    wins = '      - {name: team_wins, type: sum, sql: "{CUBE}.w", title: Wins}\n'
    leagues = (
        '      - {name: team_wins, type: sum, sql: "{CUBE}.w", title: Wins, meta: {synonyms: [胜场]}}\n'
        "    segments:\n"
        "      - {name: al, sql: \"{CUBE}.lg = 'AL'\", title: American League, meta: {synonyms: [美国联盟]}}\n"
        "      - {name: nl, sql: \"{CUBE}.lg = 'NL'\", title: National League, meta: {synonyms: [国家联盟]}}\n"
    )
    r = parse(
        understand("2019年美国联盟和国家联盟各自有多少胜场？", TODAY), league(tmp_path, MODEL.replace(wins, leagues))
    )
    # no team season is in both leagues: one number each, not one of the rows in both (none)
    assert r.compared_segments == ["teams.al", "teams.nl"] and r.segments == [] and not r.unknown
    # with a column the segments test, they group by it: the rows are labelled as the data has them (AL, NL)
    column = (
        '      - {name: league, sql: "{CUBE}.lg", type: string, title: League}\n    measures:\n      - {name: count'
    )
    k = league(
        tmp_path,
        MODEL.replace(wins, leagues).replace(
            "    measures:\n      - {name: count, type: count, title: Team", column + ", type: count, title: Team"
        ),
    )
    r = parse(understand("2019年美国联盟和国家联盟的整体胜场分别是多少？", TODAY), k)
    assert r.compared_segments == [] and r.segments == [] and r.dimensions == ["teams.league"] and not r.unknown
    assert [(f.member, f.values) for f in r.filters] == [("teams.league", ["AL", "NL"])]


def test_last_season_is_the_last_year_where_the_model_calls_its_season_a_year(tmp_path: Path) -> None:
    k = league(
        tmp_path,
        MODEL.replace(
            '      - {name: season, sql: "make_date({CUBE}.year_id, 1, 1)", type: time, title: Season}\n'
            "    measures:\n      - {name: players",
            '      - {name: season, sql: "make_date({CUBE}.year_id, 1, 1)", type: time, title: Season,'
            " meta: {synonyms: [year, 赛季]}}\n    measures:\n      - {name: players",
        ).replace(
            '      - {name: home_runs, type: sum, sql: "{CUBE}.hr", title: Home runs}',
            '      - {name: home_runs, type: sum, sql: "{CUBE}.hr", title: Home runs, meta: {synonyms: [本垒打]}}',
        ),
        Values(),
    )
    for question in ("most home runs last season", "上个赛季本垒打最多的是谁"):
        u = understand(question, TODAY)
        r = parse(u, k)
        assert [(t.start, t.end) for t in u.time_ranges] == [(date(2020, 1, 1), date(2020, 12, 31))], question
        assert r.measures == ["batting.home_runs"] and not r.unknown
    r = parse(understand("home runs each season 2015-2020", TODAY), k)  # within the years, one row a season
    assert (r.granularity, r.time_dimension) == ("year", "batting.season") and not r.unhonoured


def test_groups_by_names_told_apart_by_key_also_group_by_the_key(knowledge: Knowledge) -> None:
    keyed = replace(knowledge, keyed_labels=frozenset({"people.full_name"}))
    r = parse(understand("which player hit the most home runs in 2019", TODAY), keyed)
    assert r.dimensions == ["people.player_id", "people.full_name"]  # namesakes stay two rows
    r = parse(understand("home runs by birth country in 2019", TODAY), keyed)
    assert r.dimensions == ["people.birth_country"]  # a dimension naming another thing groups alone


def test_the_one_row_a_question_names_is_shown_by_its_key_and_name(knowledge: Knowledge) -> None:
    from router.parse.cube import aggregate_draft

    values = Values()
    values.surfaces["ted williams"] = [("people.full_name", "Ted Williams")]
    named = Knowledge(
        knowledge.model, build_lexicon(knowledge.model, [], values), keyed_labels=frozenset({"people.full_name"})
    )
    u = understand("Ted Williams home runs in 1941", TODAY)
    r = parse(u, named)
    assert r.shown == ["people.player_id", "people.full_name"]
    assert aggregate_draft(r, u, named.model).queries[0]["dimensions"] == r.shown
    u = understand("Ted Williams home runs in 1941 vs 1942", TODAY)  # compared periods: one number each
    r = parse(u, named)
    assert "dimensions" not in aggregate_draft(r, u, named.model).queries[0]


def test_every_column_of_a_join_on_several_is_a_foreign_key(knowledge: Knowledge) -> None:
    from router.parse import facts

    assert facts.fk_columns(knowledge.model, "batting", "teams") == ["team_id", "year_id"]
    assert facts.fk_column(knowledge.model, "batting", "people") == "player_id"
    assert facts.fk_columns(knowledge.model, "people", "teams") == []  # no join


def test_a_ratio_ranked_over_named_rows_with_a_bound_on_another_measure(tmp_path: Path) -> None:
    k = league(
        tmp_path,
        MODEL.replace(
            '      - {name: strikeouts, type: sum, sql: "{CUBE}.so", title: Strikeouts}\n  - name: awards',
            '      - {name: strikeouts, type: sum, sql: "{CUBE}.so", title: Strikeouts}\n'
            '      - {name: innings, type: sum, sql: "{CUBE}.ip_outs / 3.0", title: Innings pitched,'
            " meta: {synonyms: [innings]}}\n"
            '      - {name: era, type: number, sql: "27.0 * SUM({CUBE}.er) / SUM({CUBE}.ip_outs)", title: ERA}\n'
            "  - name: awards",
        ).replace(
            "    measures:\n      - {name: strikeouts",
            '      - {name: era_line, sql: "{CUBE}.era", type: number, title: ERA (line)}\n'
            "    measures:\n      - {name: strikeouts",
        ),
    )
    assert "pitching.era_line" in {d.path for d in k.model.cubes["pitching"].dimensions.values()}
    r = parse(
        understand("Among players who threw at least 162 innings in 2018, which five had the lowest ERA?", TODAY), k
    )
    # the players' groups are ranked by the ratio (not the line's own column), the innings only bound who is
    # ranked, and the past verb between "who" and the bound says how the innings came
    assert r.measures == ["pitching.era", "pitching.innings"] and r.dimensions == ["people.full_name"]
    assert r.order == [("pitching.era", "asc")] and r.limit == 5
    assert [(f.member, f.operator) for f in r.filters] == [("pitching.innings", "gte")]
    assert not r.unknown and not r.refusal


def test_a_career_is_all_of_ones_rows_and_a_classifier_is_no_name(tmp_path: Path) -> None:
    values = Values()
    values.surfaces["ted williams"] = [("people.full_name", "Ted Williams")]
    k = league(
        tmp_path,
        MODEL.replace(
            '      - {name: debut, sql: "{CUBE}.debut", type: time, title: Debut}',
            '      - {name: debut, sql: "{CUBE}.debut", type: time, title: Debut}\n'
            '      - {name: name_first, sql: "{CUBE}.name_first", type: string, title: First name,'
            " meta: {synonyms: [名]}}",
        ).replace(
            "      - {name: count, type: count, title: Players}",
            "      - {name: count, type: count, title: Players, meta: {synonyms: [球员]}}",
        ),
        values,
    )
    r = parse(understand("Ted Williams career home runs", TODAY), k)
    assert r.measures == ["batting.home_runs"] and not r.unknown and not r.refusal
    r = parse(understand("2019年有多少名球员？", TODAY), k)  # 名 counts the players, it is no first name
    assert r.measures == ["people.count"] and not any(m.text == "名" for m in r.mentions)


def test_a_verb_before_values_and_a_segment_says_how_its_rows_came(knowledge: Knowledge) -> None:
    r = read(knowledge, "Which players won the Golden Bat in 2019?")
    assert r.measures == [] and r.intent == "detail"  # no wins asked: the players' rows
    # the awards' rows under the players are not listed yet: the segment stays unapplied, so the reply refuses
    assert not r.refusal and {"Golden", "Bat"} <= set(r.unknown)


def test_a_literal_superlative_said_of_the_measure_orders_a_top_n(knowledge: Knowledge) -> None:
    r = read(knowledge, "Lowest home runs in 2019 by player - top 5")
    assert r.order == [("batting.home_runs", "asc")] and r.limit == 5
    r = read(knowledge, "top 5 players by home runs in 2019")
    assert r.order == [("batting.home_runs", "desc")] and r.limit == 5
