"""The gated benchmark card: a row is verified only by clean control arms on the same footing.

The failing cases write their own results (a new image or task pack must not break
them); one test checks the committed control arms, which the lead refreshes with
the commands in bench/results/controls/README.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runner import run_endstate
from report_helpers import IMAGE_ID, ROOT, run, write

from endstate.report import benchmark, load_prices

TASKS = ["bugfix-a", "bugfix-b", "feature-c"]
MODEL = {"bugfix-a": "pass", "bugfix-b": "fail", "feature-c": "pass"}


def _controls(tmp: Path, *, null: dict | None = None, ref: dict | None = None, **card) -> tuple[Path, Path]:
    null_run = run(null or {t: "fail" for t in TASKS}, "scripted/null", **card)
    ref_run = run(ref or {t: "pass" for t in TASKS}, "scripted/reference", **card)
    return write(tmp / "null", null_run), write(tmp / "ref", ref_run)


def _row(tmp: Path, **card) -> Path:
    return write(tmp / "model", run(MODEL, "openai/some-model", **card))


def _reasons(tmp: Path, controls: tuple[Path, Path] | None, **card) -> list[str]:
    report = benchmark([_row(tmp, **card)], load_prices(None), controls)
    (row,) = report.rows
    assert row.verified == (not row.not_verified) == report.verified
    return row.not_verified


def test_clean_controls_on_the_same_footing_verify_the_row(tmp_path: Path) -> None:
    assert _reasons(tmp_path, _controls(tmp_path)) == []


def test_control_arms_run_with_attempts_are_counted_and_named_by_attempt(tmp_path: Path) -> None:
    """A reference arm of 3 tasks at --attempts 2 passed 6 of 6 attempts (it once read "6/3 passed"),
    and the attempt it failed is named as its transcript is, not as the task twice over."""
    null, ref = _controls(tmp_path, ref={t: ["pass", "pass"] for t in TASKS})
    report = benchmark([_row(tmp_path)], load_prices(None), (null, ref))
    arms = {arm.role: arm for arm in report.controls}
    assert (arms["reference"].passes, arms["reference"].tasks, arms["reference"].ok) == (6, 6, True)
    assert (arms["null"].passes, arms["null"].tasks) == (0, 3)
    null, ref = _controls(tmp_path, ref={"bugfix-a": ["pass", "pass"], "bugfix-b": ["pass", "fail"],
                                         "feature-c": ["pass", "pass"]})
    assert "reference arm failed 1 task(s) (bugfix-b.attempt-1)" in _reasons(tmp_path, (null, ref))[0]


def test_missing_controls_leave_the_row_unverified(tmp_path: Path) -> None:
    assert _reasons(tmp_path, None) == ["no control arms given (pass --controls NULL_RUN REF_RUN)"]


def test_a_null_arm_that_passes_a_task_fails_the_gate(tmp_path: Path) -> None:
    controls = _controls(tmp_path, null={"bugfix-a": "fail", "bugfix-b": "pass", "feature-c": "fail"})
    (reason,) = _reasons(tmp_path, controls)
    assert "null arm passed 1 task(s) (bugfix-b)" in reason


def test_a_reference_arm_that_fails_or_diverges_fails_the_gate(tmp_path: Path) -> None:
    controls = _controls(tmp_path, ref={"bugfix-a": "pass", "bugfix-b": "fail", "feature-c": "pass"})
    assert "reference arm failed 1 task(s) (bugfix-b)" in _reasons(tmp_path, controls)[0]
    controls = _controls(tmp_path, ref={"bugfix-a": "pass", "bugfix-b": "divergence", "feature-c": "pass"})
    assert "reference arm errored or diverged on 1 task(s) (bugfix-b)" in _reasons(tmp_path, controls)[0]


def test_swapped_controls_are_named_in_one_line_not_as_broken_graders(tmp_path: Path) -> None:
    null, ref = _controls(tmp_path)
    report = benchmark([_row(tmp_path)], load_prices(None), (ref, null))
    (row,) = report.rows
    assert row.not_verified == [f"the control arms look swapped: {ref} (scripted/reference) passed every task and "
                                f"{null} (scripted/null) failed every one; give them as --controls NULL_RUN REF_RUN"]
    ran = run_endstate("report", str(_row(tmp_path)), "--controls", str(ref), str(null), "--strict",
                       "--out", str(tmp_path / "r"))
    assert ran.returncode == 1 and "look swapped" in ran.stdout and "a grader accepts" not in ran.stdout


def test_controls_on_another_pack_image_version_or_graders_fail_the_gate(tmp_path: Path) -> None:
    reasons = _reasons(tmp_path, _controls(tmp_path, pack="c" * 64))
    fix = ": run the arm where this row ran, on its suite (`endstate eval --model scripted/{} --suite SUITE --out DIR`)"
    assert reasons == ["the null arm ran another task pack (cccccccccccc, this row aaaaaaaaaaaa)"
                       + fix.format("null") + ", and pass that folder",
                       "the reference arm ran another task pack (cccccccccccc, this row aaaaaaaaaaaa)"
                       + fix.format("reference") + ", and pass that folder"]
    both = _reasons(tmp_path, _controls(tmp_path, pack="c" * 64, image_id="sha256:" + "d" * 64))
    assert [r.endswith("and pass that folder") for r in both] == [False, True, False, True]  # said once per arm
    assert "another image" in _reasons(tmp_path, _controls(tmp_path, image_id="sha256:" + "d" * 64))[0]
    assert "another harness version (0.0.9, this row 0.1.0)" in _reasons(tmp_path, _controls(tmp_path, version="0.0.9"))[0]
    graders = {t: ("tests_pass", "holdout") for t in TASKS} | {"feature-c": ("tests_pass",)}
    assert "graded differently: task feature-c" in _reasons(tmp_path, _controls(tmp_path, graders=graders))[0]


def test_controls_must_cover_the_rows_tasks(tmp_path: Path) -> None:
    controls = _controls(tmp_path, null={"bugfix-a": "fail", "bugfix-b": "fail"},
                         ref={"bugfix-a": "pass", "bugfix-b": "pass"})
    reasons = _reasons(tmp_path, controls)
    assert reasons[0] == "the null arm did not run 1 of this row's task(s) (feature-c)"


def test_card_records_controls_attempts_and_flake_rate(tmp_path: Path) -> None:
    controls = _controls(tmp_path)
    folder = write(tmp_path / "model", run({"bugfix-a": ["pass", "fail"], "bugfix-b": ["fail", "fail"],
                                            "feature-c": ["pass", "pass"]}, "openai/some-model"))
    (row,) = benchmark([folder], load_prices(None), controls).rows
    assert (row.k, row.attempts) == (2, 2)
    assert row.pass_rate == pytest.approx(0.5)
    assert row.pass_at_k == pytest.approx(2 / 3) and row.pass_hat_k == pytest.approx(1 / 3)
    card = row.card
    assert card["flake_rate"] == pytest.approx(1 / 3)
    assert [c["role"] for c in card["controls"]] == ["null", "reference"]
    assert card["task_pack_hash"] == "a" * 64 and card["image_id"] == IMAGE_ID and card["verified"]
    assert card["excluded_tasks"] == []


def test_strict_exits_1_on_a_failed_gate_and_2_on_a_missing_control(tmp_path: Path) -> None:
    null, ref = _controls(tmp_path, pack="c" * 64)
    row = _row(tmp_path)
    ran = run_endstate("report", str(row), "--controls", str(null), str(ref), "--strict", "--out", str(tmp_path / "r"))
    assert ran.returncode == 1, ran.stderr
    assert "NOT VERIFIED" in ran.stdout and "another task pack" in ran.stdout
    ran = run_endstate("report", str(row), "--strict", "--out", str(tmp_path / "r"), "--overwrite")
    assert ran.returncode == 1 and "no control arms given" in ran.stdout
    (tmp_path / "empty").mkdir()
    ran = run_endstate("report", str(row), "--controls", str(tmp_path / "empty"), str(ref), "--strict",
                       "--out", str(tmp_path / "r"))
    assert ran.returncode == 2 and "no results.json there" in ran.stderr and "Traceback" not in ran.stderr
    ran = run_endstate("report", str(row), "--controls", *_controls(tmp_path / "ok"), "--strict",
                       "--out", str(tmp_path / "r"), "--overwrite")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["rows"][0]["verified"] and report["rows"][0]["card"]["controls"][1]["passes"] == 3


def test_strict_passes_on_the_committed_control_arms(tmp_path: Path) -> None:
    controls = ROOT / "bench" / "results" / "controls"
    null, ref = str(controls / "scripted-null"), str(controls / "scripted-reference")
    ran = run_endstate("report", ref, null, "--controls", null, ref, "--strict", "--out", str(tmp_path / "r"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"control null: scripted/null 0/\d+ passed", ran.stdout)
    assert re.search(r"control reference: scripted/reference (\d+)/\1 passed", ran.stdout)


def test_a_foreign_agent_is_a_row_of_its_own_with_an_agent_column(tmp_path: Path) -> None:
    import msgspec

    from endstate.report import render_text

    own = write(tmp_path / "own", run(MODEL, "openai/some-model"))
    foreign = run(MODEL, "openai/some-model")
    foreign = msgspec.structs.replace(foreign, card=msgspec.structs.replace(foreign.card, agent="mini-swe-agent@0123"))
    report = benchmark([own, write(tmp_path / "foreign", foreign)], load_prices(None))
    assert [(r.agent, r.model) for r in report.rows] == [("endstate", "openai/some-model"),
                                                         ("mini-swe-agent@0123", "openai/some-model")]
    header, first, second = (line.split() for line in render_text(report).splitlines()[:3])
    assert header[:3] == ["provider", "agent", "model"]
    assert first[1] == "endstate" and second[1] == "mini-swe-agent@0123"
    # compactions and refusals happen inside a foreign agent, where the harness cannot count them
    assert second[-2:] == ["n/a", "n/a"] and first[-2:] == ["0.00", "0.00"]
    assert "agent" not in render_text(benchmark([own], load_prices(None))).splitlines()[0].split()


def test_report_writes_beside_its_run_and_never_over_an_old_report(tmp_path: Path) -> None:
    row = _row(tmp_path)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    ran = run_endstate("report", str(row), cwd=elsewhere)
    assert ran.returncode == 0, ran.stderr
    assert (row / "report" / "report.json").is_file() and not (elsewhere / "runs").exists()
    before = (row / "report" / "report.json").read_bytes()
    ran = run_endstate("report", str(row), str(_controls(tmp_path)[0]), cwd=elsewhere)
    assert ran.returncode == 0, ran.stderr  # two runs: their shared folder
    assert (tmp_path / "report" / "report.json").is_file()
    ran = run_endstate("report", str(row), cwd=elsewhere)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert f"{row / 'report' / 'report.json'} already holds a report: pass --overwrite" in ran.stderr
    assert (row / "report" / "report.json").read_bytes() == before
    assert run_endstate("report", str(row), "--overwrite", cwd=elsewhere).returncode == 0
