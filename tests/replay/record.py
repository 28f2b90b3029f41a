"""Record the replay of a regression suite in LLM mode: ``python -m tests.replay.record``.

No LLM is reachable from the machines this project is built on, so the replies are scripted, not
generated: the service answers every case in LLM mode against the in-test OpenAI-compatible stub in
record mode, and each LLM step's reply is what a competent LLM would answer, written by ``Oracle``:

* intent: the suite's gold label of the case (a competent classifier gets these unambiguous questions
  right; the script reports where the fast classifier disagrees);
* CRAG grade: ``low`` (with the question's unbound words as missing) for the suite's unsupported and
  clarify cases, else ``high`` when the context has bound terms, ``medium`` without;
* every other step: the answer of its deterministic fast twin on the very same inputs (``observe_steps``
  hands the oracle the fast step before the LLM step runs), written in the LLM's output format: search
  terms, sub-queries, the Cube query (the first period's: the service expands compared periods itself; a
  share of the total or of a whole as the reply's ``share``; measure groups the rules split are not expressed;
  groups counted, a measure per row of another cube and a unit conversion cannot be said: no reply),
  the detail SQL with the named rows as their placeholders and the other values as literals (for a question
  whose rows fast mode lists through the semantic layer, detail or mixed, that listing's SQL, values as
  literals), the SAG entity names and selected candidate indices, and the answer text.

Where a step's fast twin cannot answer (it refuses the question), no reply is recorded for its request
(``reply: null``): the replayed step falls back to fast mode, as a question the script cannot answer.
The pairs (request key -> reply) are written to ``tests/replay/<name>.jsonl``; ``tests/llm_stub.Replay``
serves them. The replayed run therefore checks the LLM-mode wiring (prompts, DSPy parsing, typed
validation, placeholders, guard, fallbacks, budget), not an LLM's accuracy.
Needs the suite's warehouse loaded (``cubesage warehouse load demo``; set ``CUBESAGE_DATA_DIR``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from answer.regress import Case, load_suite
from cubesage_core.llm import observe_steps
from cubesage_core.settings import REPO_ROOT, get_settings
from tests.llm_stub import Recorder, openai_stub

HERE = Path(__file__).resolve().parent
SIGNATURE_STEPS = {
    "search_terms": "understand",
    "sub_queries+kinds": "decompose",
    "intent+confidence+reason": "intent",
    "grade+missing": "crag",
    "cube_query": "cube_query",
    "sql": "detail_sql",
    "entities": "sag_ner",
    "selected": "sag_select",
    "answer": "answer",
}
REASONS = {
    "aggregate": "It asks for numbers computed over many rows.",
    "detail": "It asks for specific rows of the warehouse.",
    "mixed": "It asks for numbers and for the rows behind them.",
    "unsupported": "The warehouse does not hold what it asks about.",
    "clarify": "It names no metric, row or subject to answer about.",
}
_ENTITY = re.compile(r"^%\((e\d+)\)s = (.+?) \(", re.MULTILINE)


class Oracle:
    """Answers each LLM request from the fast twin of its step (or the case's gold, see the module doc)."""

    def __init__(self, url: str) -> None:
        from cubesage_core.db import connect

        self.hints: dict[str, Any] = {}
        self.case: Case | None = None
        self.listing_sql: Callable[[str], str | None] = lambda tables: None  # the case's rows as fast mode lists
        # them, literal SQL, with the columns of the tables the prompt lists
        self.disagreements: list[str] = []
        self._lock = threading.Lock()
        self._conn = connect(url)
        self._names = {v: k for k, v in self._conn.execute("SELECT normalized, entity_id FROM sag.entity")}

    def observe(self, step: str, fast_step: Callable[[], Any]) -> None:
        try:
            hint = fast_step()
        except Exception:  # the rules cannot answer this step: no reply is recorded, the step falls back
            hint = None
        with self._lock:
            self.hints[step] = hint

    def __call__(self, signature: str, inputs: dict[str, str]) -> dict[str, Any] | None:
        step = SIGNATURE_STEPS.get(signature)
        with self._lock:
            hint = self.hints.get(step or "")
        writer = getattr(self, f"_{step}", None)
        return writer(hint, inputs) if writer is not None and (hint is not None or step == "crag") else None

    def _understand(self, terms: list[str], inputs: dict[str, str]) -> dict[str, Any]:
        return {"search_terms": list(terms)}

    def _decompose(self, subs: list[Any], inputs: dict[str, str]) -> dict[str, Any]:
        return {"sub_queries": [s.text for s in subs], "kinds": [s.kind for s in subs]}

    def _intent(self, fast: Any, inputs: dict[str, str]) -> dict[str, Any]:
        gold = self.case.intent if self.case else fast.intent
        if fast is not None and fast.intent != gold:
            self.disagreements.append(f"{self.case.id if self.case else '?'}: fast {fast.intent}, gold {gold}")
        return {"intent": gold, "confidence": 0.9, "reason": REASONS[gold]}

    def _crag(self, _: Any, inputs: dict[str, str]) -> dict[str, Any]:
        context = inputs.get("context", "")
        if self.case is not None and self.case.intent in ("unsupported", "clarify"):
            words = [w for w in re.findall(r"\w+", inputs.get("question", "")) if w.lower() not in context.lower()]
            return {"grade": "low", "missing": words[:3]}
        return {"grade": "high" if "MUST use" in context else "medium", "missing": []}

    def _cube_query(self, draft: Any, inputs: dict[str, str]) -> dict[str, Any] | None:
        if draft.counted or draft.per or draft.units:  # groups counted, a ratio, a unit: the reply cannot say them
            return None
        query = json.loads(json.dumps(draft.queries[0]))
        if isinstance(query.get("order"), dict):
            query["order"] = [[member, direction] for member, direction in query["order"].items()]
        for f in query.get("filters", []):
            f["values"] = [str(v) for v in f.get("values", [])]
        if "part" in draft.post:  # the part's restrictions are what the whole (second query) lacks
            whole = draft.queries[1]
            query["share"] = "of_whole"
            query["part"] = [
                *(m for m in query.get("segments", []) if m not in whole.get("segments", [])),
                *(f["member"] for f in draft.queries[0].get("filters", []) if f not in whole.get("filters", [])),
            ]
        elif "share" in draft.post:
            query["share"], query["keep"] = "of_total", dict(draft.keep)
        return {"cube_query": query}

    def _detail_sql(self, generated: tuple[str, dict[str, Any]], inputs: dict[str, str]) -> dict[str, Any]:
        listed = self.listing_sql(inputs.get("tables", ""))
        if listed and inputs.get("feedback") in (None, "none"):
            return {"sql": _named_rows(listed, inputs.get("entities", ""))}  # fast mode's listing
        sql, params = generated
        entities = {value: name for name, value in _ENTITY.findall(inputs.get("entities", ""))}
        for key in sorted(params, key=len, reverse=True):  # p10 before p1
            value = params[key]
            placeholder = entities.get(repr(value))
            sql = sql.replace(f"%({key})s", f"%({placeholder})s" if placeholder else _literal(value))
        return {"sql": sql}

    def _sag_ner(self, found: tuple[list[str], list[str]], inputs: dict[str, str]) -> dict[str, Any]:
        exact, free = found
        return {"entities": [self._names[e] for e in exact if e in self._names] + list(free)}

    def _sag_select(self, chosen: list[str], inputs: dict[str, str]) -> dict[str, Any]:
        lines = json.loads(inputs.get("candidates") or "[]")
        from sag_index.repository import event_details

        details = event_details(self._conn, chosen)
        index = {line.split("] ", 1)[1]: i for i, line in enumerate(lines) if "] " in line}
        picked = [
            index[f"{d['title']}: {d['content'][:300]}"]
            for e in chosen
            if (d := details.get(e)) and f"{d['title']}: {d['content'][:300]}" in index
        ]
        return {"selected": picked}

    def _answer(self, text: str, inputs: dict[str, str]) -> dict[str, Any]:
        return {"answer": text}


def listing_sql(answer: dict[str, Any], model: Any, today: Any, tables: str) -> str | None:
    """The literal SQL of a fast-mode listing, of a detail question or a mixed question's rows (the parser's
    or the drill-down's Cube query compiled, bind values written out), showing only columns of the tables the
    prompt lists (a referred row's label from another table is left out, as the LLM is told to)."""
    from cube_models.compiler import compile_query

    plan = (answer.get("provenance") or {}).get("detail_plan") or {}
    if plan.get("kind") not in ("listing", "drill-down") or answer.get("intent") not in ("detail", "mixed"):
        return None
    query = dict(plan["cube_query"])
    listed = [d for d in query["dimensions"] if (table := _table_of(model, d)) is None or table in tables]
    query["dimensions"] = listed or query["dimensions"]
    compiled = compile_query(query, model, today=today)
    sql = compiled.sql
    for n in range(len(compiled.params), 0, -1):  # $10 before $1
        sql = sql.replace(f"${n}", _literal(compiled.params[n - 1]))
    return sql


def _table_of(model: Any, member: str) -> str | None:
    """The bare table name of the cube a member belongs to ("warehouse.dim_customer" -> "dim_customer"); None
    for a cube defined by SQL."""
    table = model.cubes[member.split(".", 1)[0]].sql_table
    return str(table).rsplit(".", 1)[-1] if table else None


_ENTITY_ROW = re.compile(r"^%\((e\d+)\)s = .+? \([\w.]+\.(\w+); \w+ (.+)\)$", re.MULTILINE)


def _named_rows(sql: str, entities: str) -> str:
    """A listing's filter on a named row's label (``"customers".customer_name = 'X'``) written as the LLM is
    asked to: on the row's key, by its placeholder (``"customers".customer_id = %(e0)s``)."""
    for placeholder, key, label in _ENTITY_ROW.findall(entities):
        quoted = "'" + label.replace("'", "''") + "'"
        sql = re.sub(rf'("\w+")\.\w+ = {re.escape(quoted)}', rf"\1.{key} = %({placeholder})s", sql)
    return sql


def _literal(value: Any) -> str:
    from sqlglot import exp

    return exp.convert(value.isoformat() if hasattr(value, "isoformat") else value).sql(dialect="postgres")


def record(suite_path: Path, split: str, out: Path) -> dict[str, Any]:
    """Answer the split's cases in LLM mode against the recording stub; write the records."""
    from answer.service import Cubesage
    from cube_models.model import load_model
    from cubesage_core.cli import bootstrap_or_exit

    suite = load_suite(suite_path).select(split)
    url = bootstrap_or_exit()
    oracle = Oracle(url)
    recorder = Recorder(oracle)
    with openai_stub(recorder) as stub:
        settings = get_settings().model_copy(
            update={"llm_url": stub.url, "llm_model": "openai/replay", "llm_deadline_s": 120.0, "llm_max_calls": 40}
        )
        outcomes: dict[str, str] = {}
        model = load_model(settings.model_folder())
        with Cubesage(settings, url=url) as service:
            for case in suite.cases:
                fast = service.ask(case.question, today=suite.today, mode="fast").to_dict()
                oracle.case = case
                oracle.listing_sql = partial(listing_sql, fast, model, suite.today)
                with observe_steps(oracle.observe):
                    answer = service.ask(case.question, today=suite.today, mode="llm").to_dict()
                steps = (answer["provenance"].get("llm") or {}).get("steps", [])
                outcomes[case.id] = ", ".join(f"{s['step']}={s['mode']}" for s in steps)
    recorder.save(out)
    return {
        "records": len(recorder.records),
        "requests": len(stub.requests),
        "out": str(out),
        "intent_disagreements_fast_vs_gold": oracle.disagreements,
        "fallbacks": {cid: m for cid, m in outcomes.items() if "fast" in m},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, default=REPO_ROOT / "demo" / "regress" / "suite.yaml")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--out", type=Path, default=HERE / "demo_dev.jsonl")
    args = parser.parse_args(argv)
    json.dump(record(args.suite, args.split, args.out), sys.stdout, ensure_ascii=False, indent=2)
    print()


if __name__ == "__main__":
    main()
