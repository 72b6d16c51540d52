"""An Inspect `.eval` log of a run, written with inspect_ai's own API (the `export` extra).

One sample per task attempt: the sample id is the task id and its epoch the attempt + 1,
as Inspect numbers repeated runs of a sample. The score is CORRECT for a pass and
INCORRECT for any other scored outcome, its explanation naming the failing graders; an
infra_error attempt (the machinery failed under it) carries no score, as endstate leaves
it out of every rate, and its reason as the sample's error. The log's accuracy is over
the scored samples.

Every id is given (Inspect would draw random ones) and the only times are the run's own:
results.json's last write for the log and each attempt's wall time for its sample. The
`.eval` file is a zip whose entries Inspect stamps with the clock; they are restamped with
the run's finishing time, so two exports of one folder are equal byte for byte.
"""

from __future__ import annotations

import json
import os
import zipfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from endstate.errors import UserError, cannot_write
from endstate.report._export_input import ExportedAttempt, RunExport, explanation, reward, verdict_record
from endstate.run import RunOutcome, make_folder

__all__ = ["SCORER", "OLDEST_READER", "write_inspect_log", "eval_log"]

#: The name the verdict is scored under in the log.
SCORER = "endstate"
#: The oldest inspect_ai that reads the log and shows it in its viewer, checked by the peers tests (`make
#: peers` installs it in a venv of its own); the log is written with the one the `export` extra pins.
OLDEST_READER = "0.3.100"


def write_inspect_log(source: RunExport, out: Path) -> None:
    log = eval_log(source)
    from inspect_ai.log import write_eval_log

    make_folder(out.parent)
    draft = out.with_name(out.name + ".partial")
    try:
        write_eval_log(log, str(draft), format="eval")
        _restamp(draft, out, datetime.fromisoformat(source.finished_at))
    except OSError as exc:
        raise cannot_write(out.parent, exc) from None
    finally:
        draft.unlink(missing_ok=True)


def _restamp(draft: Path, out: Path, when: datetime) -> None:
    """Copy the zip `draft` to `out` with every entry dated `when` (UTC) instead of the clock, and
    deflated: inspect_ai now writes zstd entries (its zstd support is installed by importing it),
    which inspect_ai 0.3.150 cannot read (0.3.180 can), nor can `unzip`; deflated, the log opens in
    inspect_ai from OLDEST_READER on, and a run's JSON takes no more room (123 KB for 129)."""
    stamp = max(when.timetuple()[:6], (1980, 1, 1, 0, 0, 0))  # a zip cannot date before 1980
    partial = out.with_name(out.name + ".stamping")
    try:
        with zipfile.ZipFile(draft) as source, zipfile.ZipFile(partial, "w") as target:
            for entry in source.infolist():
                copy = zipfile.ZipInfo(entry.filename, date_time=stamp)
                copy.compress_type, copy.external_attr = zipfile.ZIP_DEFLATED, entry.external_attr
                target.writestr(copy, source.read(entry))
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)


def _require_inspect() -> None:
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise UserError("the inspect format is written with inspect_ai, which is not installed: "
                        "pip install 'endstate[export]'") from None


def eval_log(source: RunExport) -> Any:
    """The run as an `inspect_ai.log.EvalLog`."""
    _require_inspect()
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalMetric, EvalResults, EvalScore, EvalSpec, EvalStats
    from inspect_ai.model import GenerateConfig, ModelUsage

    card = source.run.card
    samples = [_sample(source, a) for a in source.attempts]
    scored = [a for a in source.attempts if reward(a.result) is not None]
    passed = sum(a.result.outcome == RunOutcome.PASS for a in scored)
    task_ids = sorted({a.result.task_id for a in source.attempts})
    spec = EvalSpec(
        eval_id=source.run_id, run_id=source.run_id, task_id=f"{source.run_id}/tasks",
        created=source.finished_at, task=source.folder.name, task_version=card.task_pack_hash[:12],
        task_attribs={"task_pack_hash": card.task_pack_hash},
        dataset=EvalDataset(name=f"endstate task pack {card.task_pack_hash[:12]}", samples=len(task_ids),
                            sample_ids=task_ids, shuffled=False),
        solver=card.agent, model=card.model,
        model_generate_config=GenerateConfig(temperature=card.temperature, seed=card.seed),
        config=EvalConfig(epochs=card.attempts), packages={"endstate": card.endstate_version},
        metadata={"endstate_card": msgspec.to_builtins(card)},
    )
    score = EvalScore(name=SCORER, scorer=SCORER, scored_samples=len(scored),
                      unscored_samples=len(source.attempts) - len(scored),
                      metrics={"accuracy": EvalMetric(name="accuracy", value=passed / len(scored) if scored else 0.0)})
    usage = _usage([a.result for a in source.attempts])
    return EvalLog(
        status="success", eval=spec,
        results=EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=[score]),
        stats=EvalStats(started_at=_started(source), completed_at=source.finished_at,
                        model_usage={card.model: ModelUsage(**usage)} if samples else {}),
        samples=samples,
        metadata={"missing": source.missing} if source.missing else {},
    )


def _started(source: RunExport) -> str:
    """When the run started, as far as its results say: its finishing time less the attempts'
    wall time summed (a run with -j N took less). Inspect's viewer shows the run's duration from
    started_at and completed_at, and `NaN` for an empty one."""
    wall = sum(a.result.wall_s for a in source.attempts)
    return (datetime.fromisoformat(source.finished_at) - timedelta(seconds=round(wall, 3))).isoformat()


def _usage(results: list) -> dict[str, int]:
    tokens_in = sum(r.counters.input_tokens for r in results)
    tokens_out = sum(r.counters.output_tokens for r in results)
    return {"input_tokens": tokens_in, "output_tokens": tokens_out, "total_tokens": tokens_in + tokens_out}


def _sample(source: RunExport, attempt: ExportedAttempt) -> Any:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.scorer import CORRECT, INCORRECT, Score

    result, model = attempt.result, source.run.card.model
    messages = _messages(attempt, model)
    value = reward(result)
    # Unscored (an infra_error): no score, and the machinery's failure as Inspect's sample error, which
    # its viewer shows as a sample that "had errors and was not scored". An empty score table, not
    # none: the viewer of OLDEST_READER fails to draw a log with a sample whose scores are null.
    scores = {} if value is None else {SCORER: Score(
        value=CORRECT if value else INCORRECT, answer=result.outcome, explanation=explanation(result),
        metadata={"verdicts": [msgspec.to_builtins(v) for v in result.verdicts]})}
    prompt = next((m.get("content") or "" for m in attempt.messages if m.get("role") == "user"), "")
    last = next((m.get("content") or "" for m in reversed(attempt.messages) if m.get("role") == "assistant"), "")
    usage = ModelUsage(**_usage([result]))
    graders = source.run.card.graders.get(result.task_id) or tuple(v.grader for v in result.verdicts)
    return EvalSample(
        id=result.task_id, epoch=result.attempt + 1, uuid=attempt.session_id,
        input=prompt, target=f"every grader passes: {', '.join(graders)}",
        messages=messages, output=ModelOutput(model=model, completion=last, usage=usage),
        scores=scores, metadata=verdict_record(result),
        model_usage={model: usage}, total_time=result.wall_s,
        error=EvalError(message=result.reason, traceback="", traceback_ansi="") if value is None else None,
    )


def _messages(attempt: ExportedAttempt, model: str) -> list:
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
        ContentReasoning,
        ContentText,
    )
    from inspect_ai.tool import ToolCall

    functions: dict[str, str] = {}
    converted = []
    for n, message in enumerate(attempt.messages):
        ident, role, content = f"{attempt.stem}-{n}", message.get("role"), message.get("content") or ""
        if role == "system":
            converted.append(ChatMessageSystem(id=ident, content=content))
        elif role == "user":
            converted.append(ChatMessageUser(id=ident, content=content))
        elif role == "assistant":
            calls = []
            for call in message.get("tool_calls") or []:
                functions[call.get("id", "")] = call.get("name", "")
                arguments, error = _arguments(call.get("arguments", ""))
                calls.append(ToolCall(id=call.get("id", ""), function=call.get("name", ""), arguments=arguments,
                                      parse_error=error))
            # Thinking blocks first, as the model gave them: Inspect's reasoning content, redacted or not.
            reasoning = [ContentReasoning(reasoning=b.get("text", ""), signature=b.get("signature") or None)
                         if b.get("kind") == "thinking"
                         else ContentReasoning(reasoning=b.get("data", ""), redacted=True)
                         for b in message.get("thinking") or []]
            body = [*reasoning, *([ContentText(text=content)] if content else [])] if reasoning else content
            converted.append(ChatMessageAssistant(id=ident, content=body, tool_calls=calls or None, model=model,
                                                  source="generate"))
        elif role == "tool":
            call_id = message.get("tool_call_id") or None
            converted.append(ChatMessageTool(id=ident, content=content, tool_call_id=call_id,
                                             function=functions.get(call_id or "")))
    return converted


def _arguments(text: str) -> tuple[dict, str | None]:
    """Inspect's arguments object, and the parse error Inspect records for text that is no JSON object."""
    try:
        value = json.loads(text) if text else {}
    except ValueError as exc:
        return {}, f"arguments are not JSON ({exc}): {text}"
    if not isinstance(value, dict):
        return {}, f"arguments are not a JSON object: {text}"
    return value, None
