"""Named rows of a question (router.detail.entities): a common word is no row's name for a writer who
capitalises names."""

from __future__ import annotations

from types import SimpleNamespace

from router.detail.entities import EntityDirectory, EntityMatch, from_row_hits

NUMBERS = EntityMatch("track", "track_id", 7, "Numbers", "track", "directory")
JANE = EntityMatch("employee", "employee_id", 3, "Jane Peacock", "employee", "directory")


def test_a_lower_case_word_is_not_a_capitalised_name_when_the_writer_capitalises_names() -> None:
    directory = EntityDirectory({"numbers": NUMBERS, "jane peacock": JANE})
    assert directory.match("customers that Jane Peacock looks after, with phone numbers") == [JANE]
    assert directory.match("which playlists hold Numbers") == [NUMBERS]  # written as the name
    assert directory.match("tracks on numbers") == [NUMBERS]  # an all lower-case writer: names in lower case


def test_sag_rows_follow_the_same_rule() -> None:
    hit = SimpleNamespace(
        table="track", key_column="track_id", key_value=7, label="Numbers", entity_type="track", score=1.0
    )
    assert from_row_hits([hit], "customers that Jane Peacock looks after, with phone numbers") == []
    assert [m.label for m in from_row_hits([hit], "who bought Numbers")] == ["Numbers"]
