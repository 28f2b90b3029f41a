"""The root CLI mounts the programs above ``answer`` from their entry points, and hands the packages below
it what they cannot import (``ctx.obj``)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from answer.cli import COMMAND_GROUP, CliContext, app
from cubesage_core.settings import REPO_ROOT
from fourengine.cli import app as fourengine_app


def test_bench_and_demo_are_mounted_from_entry_points() -> None:
    from importlib.metadata import entry_points

    declared = {e.name for e in entry_points(group=COMMAND_GROUP)}
    assert {"bench", "demo"} <= declared
    listed = CliRunner().invoke(app, ["--help"])
    assert listed.exit_code == 0 and all(name in listed.output for name in declared)
    result = CliRunner().invoke(app, ["bench", "--help"])
    assert result.exit_code == 0 and "multihop" in result.output
    assert CliRunner().invoke(app, ["nosuchgroup"]).exit_code == 2


def test_calibration_samples_come_from_the_root_context() -> None:
    samples = CliContext().calibration_samples(REPO_ROOT / "demo" / "regress" / "suite.yaml")
    assert samples and any(not s.in_domain for s in samples) and any(s.in_domain for s in samples)


def test_calibrate_with_a_suite_outside_the_root_app_is_a_clear_error(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text("cases: []\n", encoding="utf-8")
    result = CliRunner().invoke(fourengine_app, ["calibrate", "--suite", str(suite), "--url", "postgresql://x/y"])
    assert result.exit_code == 2 and "cubesage fourengine calibrate" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
