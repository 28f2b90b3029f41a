"""Every example question of the README answers on a fresh demo, with the demo's calendar: relative dates
("this month", "last quarter") resolve against the demo data's last day, as `cubesage demo` resolves them."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import SecretStr

from cubesage_core import db
from cubesage_core.settings import REPO_ROOT, Settings, get_settings
from warehouses.packs import get_pack

pytestmark = pytest.mark.integration
QUOTED = re.compile(r'"([^"]+)"')


def readme_examples() -> tuple[list[str], list[str]]:
    """(questions, follow-ups) quoted in the README's opening paragraph and its "What you can ask" list."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    intro = text.split("\n\n", 2)[1]
    section = text.split("## What you can ask", 1)[1].split("\n## ", 1)[0]
    questions = list(QUOTED.findall(intro))
    follow_ups: list[str] = []
    for bullet in section.split("\n- "):
        if bullet.startswith("**Refusals"):
            continue  # the questions a refusal answers
        (follow_ups if bullet.startswith("**Follow-ups") else questions).extend(QUOTED.findall(bullet))
    commands = text.split("## Everyday commands", 1)[1].split("\n## ", 1)[0]
    questions += re.findall(r'cubesage ask "([^"]+)"', commands)
    clean = [" ".join(q.split()) for q in questions]
    return list(dict.fromkeys(clean)), [" ".join(q.split()) for q in follow_ups]


def answered(answer: dict[str, Any]) -> bool:
    return (
        bool(answer["table"]["rows"])
        and not answer["provenance"].get("error")
        and answer["intent"] not in ("unsupported", "clarify")
    )


def test_the_demo_today_is_the_last_day_of_the_demo_data(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from demo.cli import use_demo_settings

    with db.connection(pg_url) as conn:
        last = conn.execute("SELECT max(order_ts)::date FROM warehouse.fact_order").fetchone()[0]
    assert get_pack("demo").today == last
    monkeypatch.delenv("CUBESAGE_TODAY", raising=False)
    use_demo_settings()
    try:
        assert get_settings().today == last
    finally:
        monkeypatch.delenv("CUBESAGE_TODAY", raising=False)
        get_settings.cache_clear()


def test_every_readme_example_answers_on_the_demo(demo_ready: Any, pg_url: str) -> None:
    from answer.service import Cubesage

    questions, follow_ups = readme_examples()
    assert len(questions) >= 15 and "华东地区本月GMV" in questions and len(follow_ups) >= 4
    today = get_pack("demo").today
    with Cubesage(Settings(database_url=SecretStr(pg_url), today=today), url=pg_url) as service:
        failed = {q: a["text"] for q in questions if not answered(a := service.ask(q).to_dict())}
        base = service.ask("GMV by region last quarter")
        for q in follow_ups:
            answer = service.ask(q, previous=base).to_dict()
            if not answered(answer) or answer["provenance"].get("follow_up_of") != "GMV by region last quarter":
                failed[f"(follow-up) {q}"] = answer["text"]
    assert not failed, failed


def test_every_suggested_question_answers_with_a_chart(demo_ready: Any, pg_url: str) -> None:
    from answer.service import Cubesage

    today = get_pack("demo").today
    with Cubesage(Settings(database_url=SecretStr(pg_url), today=today), url=pg_url) as service:
        suggested = {lang: service.suggestions(lang) for lang in ("en", "zh")}
        assert all(s["today"] == today.isoformat() for s in suggested.values())
        questions = [q for s in suggested.values() for q in s["questions"]]
        assert len(questions) >= 10
        failed = {q: a["text"] for q in questions if not answered(a := service.ask(q).to_dict()) or a["chart"] is None}
    assert not failed, failed
