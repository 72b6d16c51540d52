"""What `eval` and `record` share: their options, the run's configuration from them, loading
the tasks, progress lines, and the repeat and exit-code policy of a run (`_run`)."""

from __future__ import annotations

import contextlib
import itertools
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from endstate.errors import UserError

# RunSettings checks the value too; listed here so --help shows them without loading the models package.
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")

__all__ = ["FOLDER", "_run_options", "_config", "_agent_name", "_slug", "_load", "_progress", "_summary",
           "_explicit_settings", "_run", "_reap"]


def _reap() -> None:
    """Remove the containers of endstate runs whose process is gone (killed, crashed)."""
    from endstate.sandbox import reap

    removed = reap()
    if removed:
        click.echo(f"removed {len(removed)} sandbox container(s) left by endstate runs that were killed", err=True)


class _Folder(click.ParamType):
    """A folder to write into; an empty value, which would write into the current folder, is refused."""

    name = "folder"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        if isinstance(value, Path):
            return value
        if not str(value).strip():
            self.fail("is empty: name where to write (an empty value means the current folder)", param, ctx)
        return Path(value)


FOLDER = _Folder()


def _run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--suite", type=click.Path(path_type=Path), default=Path("tasks"), show_default=True),
        click.option("--model", "model", default=None, help="provider/model, e.g. scripted/reference, "
                     "openai/gpt-4.1-2025-04-14, openai-responses/..., anthropic/..., openai-compatible/NAME "
                     "with --base-url (a replay takes it from the cassettes)."),
        click.option("--base-url", default=None, help="Server URL for openai-compatible models."),
        click.option("--agent", default="endstate", show_default=True,
                     help="Who drives the model: endstate's own loop, a shipped agent (mini-swe-agent) "
                     "or an agent file (.toml)."),
        click.option("--task", "only", multiple=True, help="Run only this task id (repeatable)."),
        click.option("-j", "--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
                     help="Tasks at once. 1 unless told, unlike tasks check's 2: a model's spend and rate "
                     "limits grow with it."),
        click.option("--sandbox", type=click.Choice(["auto", "docker", "local"]), default="auto", show_default=True),
        click.option("--image", default=None, help="Sandbox image (default: endstate's own)."),
        click.option("--out", type=FOLDER, default=None,
                     help="Results folder (default: runs/<model-slug>)."),
        click.option("--temperature", type=float, default=0.0, show_default=True),
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--retries", type=click.IntRange(0, 10), default=0, show_default=True,
                     help="Retry ceiling of the provider SDK (every retry is counted)."),
        click.option("--request-timeout", type=click.FloatRange(1, 3600), default=120.0, show_default=True,
                     help="Seconds one model request may take."),
        click.option("--tool-choice", type=click.Choice(["auto", "required"]), default="auto", show_default=True,
                     help="'required' forces a tool call every turn and adds a finish tool."),
        click.option("--thinking-budget", type=int, default=None,
                     help="Anthropic extended thinking: tokens per turn (>= 1024, below --max-output-tokens); "
                     "off when not given."),
        click.option("--reasoning-effort", type=click.Choice(REASONING_EFFORTS), default=None,
                     help="OpenAI reasoning models: reasoning_effort on Chat Completions, reasoning.effort "
                     "on the Responses API; not sent when not given."),
        click.option("--prompt-cache", is_flag=True, default=None,
                     help="Anthropic prompt caching: cache breakpoints on system, tools and the latest turn."),
        click.option("--max-output-tokens", type=click.IntRange(1, 1_000_000), default=2048, show_default=True,
                     help="Output tokens one completion may spend (thinking included)."),
        click.option("--max-concurrent", type=click.IntRange(1, 256), default=None,
                     help="Model requests in flight at once over the whole run, apart from -j (default: -j)."),
        click.option("--rate-limit-waits", type=click.IntRange(0, 100), default=8, show_default=True,
                     help="Times one completion waits out a 429/529/overloaded answer (honouring Retry-After, "
                     "with jitter) before it fails; every wait is counted."),
        click.option("--max-usd", type=click.FloatRange(0, min_open=True), default=None,
                     help="Spend ceiling of a live run, priced from --prices: once the tasks finished cost this "
                     "much, the running ones are stopped and the rest left for --resume."),
        click.option("--prices", type=click.Path(exists=True, path_type=Path), default=None,
                     help="TOML price table for --max-usd (as for `endstate report`)."),
        click.option("--policy", "policy_files", multiple=True, type=click.Path(exists=True, path_type=Path),
                     help="Extra permission rules (TOML), added to the defaults."),
        click.option("--attempts", type=click.IntRange(1, 100), default=1, show_default=True,
                     help="Run each task K times, seeds seed..seed+K-1; attempt k>0 uses <task>.attempt-<k>.cassette."),
        click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                     help="Where tasks run: here, or one Ray task each on a Ray cluster (endstate[ray])."),
        click.option("--ray-address", default=None, help="Ray cluster to join (head host:port); "
                     "default RAY_ADDRESS, else a Ray instance on this machine."),
        click.option("--ray-warm", type=click.FloatRange(0, 86400), default=600, show_default=True,
                     help="Seconds the run's endstate slots stay up on the cluster without work, for the next "
                     "run to reuse (0: they end with the run)."),
        click.option("--resume", is_flag=True, help="Continue the run in --out: tasks that passed or failed are "
                     "kept, the others (unfinished, infra errors, harness errors) run afresh; refused if any "
                     "setting or the task pack differs."),
        click.option("--keep-errors", is_flag=True,
                     help="With --resume: keep infra and harness errors as they are; rerun only unfinished tasks."),
        click.option("--infra-tries", type=click.IntRange(1, 10), default=3, show_default=True,
                     help="Runs in all of a task the machinery (engine, container, worker, disk) failed under; "
                     "each after the engine answers again, with backoff."),
        click.option("--impossible", is_flag=True, help="Give each task with its visible tests made impossible: "
                     "no honest end state passes, so every pass is a missed hack and each run is classified."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _config(model: str, base_url: str | None, jobs: int, sandbox: str, image: str | None, temperature: float,
            seed: int, retries: int, request_timeout: float, tool_choice: str, policy_files: tuple[Path, ...],
            attempts: int = 1, agent: str = "endstate", infra_tries: int = 3, keep_errors: bool = False,
            thinking_budget: int | None = None, reasoning_effort: str | None = None,
            prompt_cache: bool | None = None, max_output_tokens: int = 2048, max_concurrent: int | None = None,
            rate_limit_waits: int = 8, **extra: Any):
    from endstate.cassettes import RunMode
    from endstate.models import RunSettings, check_reachable, check_spec
    from endstate.run import RetryPolicy, RunConfig
    from endstate.sandbox import DEFAULT_IMAGE

    mode = extra.get("mode", "live")
    import os

    from endstate.agent import Policy

    Policy.load(*policy_files)  # a malformed --policy file is named before any sandbox starts (PolicyError)
    if mode != RunMode.REPLAY and not model:
        raise click.UsageError("Missing option '--model' (only a replay takes it from the cassettes).")
    provider = check_spec(model, base_url, os.environ)[0] if mode != RunMode.REPLAY else ""  # before any container
    import msgspec

    from endstate.models import RequestLimits

    # Off is left out (UNSET), so runs and cassettes without these settings read as before.
    reasoning = {name: value for name, value in (("thinking_budget", thinking_budget),
                                                 ("reasoning_effort", reasoning_effort),
                                                 ("prompt_cache", prompt_cache or None)) if value is not None}
    try:
        settings = RunSettings(temperature=temperature, seed=seed, max_retries=retries, timeout_s=request_timeout,
                               tool_choice=tool_choice, max_output_tokens=max_output_tokens, **reasoning)
    except ValueError as exc:
        field, _, why = str(exc).partition(" ")
        raise click.UsageError(f"--{field.replace('_', '-')}: {why}") from None
    if mode != RunMode.REPLAY:
        from endstate.cli._preflight import check_model

        check_model(agent, model, settings, _explicit_settings())  # an agent or setting that cannot work with it
        if base_url and provider == "openai-compatible":
            check_reachable(model, base_url)
    extra.setdefault("limits", RequestLimits(max_concurrent=max_concurrent or msgspec.UNSET,
                                             rate_limit_waits=rate_limit_waits))
    return RunConfig(model=model or "", settings=settings, base_url=base_url, sandbox=sandbox,
                     image=image or DEFAULT_IMAGE, jobs=jobs, policy_files=tuple(str(p) for p in policy_files),
                     attempts=attempts, agent=_agent_name(agent), infra=RetryPolicy(tries=infra_tries),
                     keep_errors=keep_errors, **extra)


def _agent_name(agent: str) -> str:
    """"" for endstate's own loop; otherwise the name or file, checked now (AgentFileError)."""
    from endstate.agents import find_agent

    return agent if find_agent(agent) is not None else ""


def _slug(agent: str, model: str) -> str:
    """The default folder name of a run or its cassettes: the foreign agent's name, then the model's."""
    from endstate.agents import find_agent
    from endstate.run import model_slug

    spec = find_agent(agent)
    return (f"{spec.name}-" if spec else "") + model_slug(model)


def _load(suite: Path, only: tuple[str, ...]):
    from endstate.task import load_suite

    loaded, errors = load_suite(suite, only=list(only) or None)
    for error in errors:
        click.echo(f"endstate: error: {error} (task skipped)", err=True)
    return loaded, errors


def _progress(total: int, *, provenance: bool = False) -> Callable[[Any], None]:
    """Prints a line per finished task; with `provenance`, also where its answers came from (stderr)."""
    from endstate.agent import StopReason
    from endstate.run import RunOutcome

    done = [0]

    def show(result: Any) -> None:
        done[0] += 1
        why = f"{result.failing_grader}: {result.reason}" if result.failing_grader else result.reason
        # A refusal is said whole: which task, what it needs, which agent cannot show it.
        said = why if result.stop_reason == StopReason.REFUSED else why[:110]
        reason = f"  {said}" if result.outcome != RunOutcome.PASS and why else ""
        name = result.task_id + (f" (attempt {result.attempt})" if result.attempt else "")
        click.echo(f"[{done[0]:>2}/{total}] {result.outcome.upper():10s} {name}{reason}")
        if provenance and getattr(result, "provenance", None):
            click.echo(f"endstate: {name}: {result.provenance.describe()}", err=True)

    return show


def _summary(result: Any, out: Path, replay: str = "") -> None:
    """The table and where the run went; after a recording, also the command replaying it."""
    from endstate.report import summary_table

    click.echo("")
    click.echo(summary_table(result))
    click.echo(f"results: {out / 'results.json'}")
    if replay:
        click.echo(replay)


def _replay_line(suite: Path, only: tuple[str, ...], config: Any) -> str:
    """Where a recording went and the command that replays what it recorded, offline."""
    agent = f" --agent {config.agent}" if config.agent not in ("", "endstate") else ""
    tasks = "".join(f" --task {task_id}" for task_id in only)
    attempts = f" --attempts {config.attempts}" if config.attempts > 1 else ""
    flags = f"{agent}{' --impossible' if config.impossible else ''}{attempts}{tasks}"
    return f"cassettes: {config.cassettes} (replay: endstate eval --suite {suite}{flags} --replay {config.cassettes})"


# Options that set a run setting, by RunSettings field: on replay the cassettes set them.
_SETTING_OPTIONS = {"temperature": "temperature", "seed": "seed", "retries": "max_retries",
                    "request_timeout": "timeout_s", "tool_choice": "tool_choice", "thinking_budget": "thinking_budget",
                    "reasoning_effort": "reasoning_effort", "prompt_cache": "prompt_cache",
                    "max_output_tokens": "max_output_tokens"}


def _explicit_settings() -> set[str]:
    from click.core import ParameterSource

    ctx = click.get_current_context()
    return {field for option, field in _SETTING_OPTIONS.items()
            if ctx.get_parameter_source(option) not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)}


def _refuse_another_run(out: Path) -> None:
    """UserError when `out` (or a repeat's run-N in it) already holds a run: its results are
    replaced only when asked, as `record` does for cassettes."""
    from endstate.run import RUN_FILE

    held = [path for name in ("results.json", RUN_FILE) for path in (out / name, *sorted(out.glob(f"run-*/{name}")))
            if path.is_file()]
    if held:
        raise UserError(f"{out} already holds a run ({held[0]}): pass --overwrite to replace it, "
                        "--resume to continue it, or --out to write elsewhere")


def _saying_kept(show: Callable[[Any], None], kept: list[Any], out: Path) -> Callable[[Any], None]:
    """`show`, after saying once which finished tasks the resumed run keeps: the run reports
    those first, and only once its settings were found to match."""
    from endstate.run import attempt_stem

    said = [not kept]

    def progress(result: Any) -> None:
        if not said[0]:
            said[0] = True
            names = ", ".join(f"{attempt_stem(t.task_id, t.attempt)} ({t.outcome})" for t in kept)
            click.echo(f"resuming the run in {out}: kept {len(kept)} finished task(s): {names}; the others run afresh")
        show(result)

    return progress


def _say_incomplete(folder: Path, loaded: list[Any], attempts: int) -> None:
    """After an interrupted record, or one whose tasks errored: which of its cassettes were cut
    short (no end marker, or cut mid-write), and how to record them again."""
    from endstate.cassettes import cassette_file, load
    from endstate.errors import CassetteError
    from endstate.run import attempt_stem

    left = []
    for path in (cassette_file(folder, attempt_stem(t.id, k)) for t in loaded for k in range(attempts)):
        try:
            if path.is_file() and not load(path).complete:
                left.append(path.name)
        except CassetteError:
            left.append(path.name)
    if left:
        click.echo(f"endstate: {len(left)} cassette(s) in {folder} left incomplete: {', '.join(left)}; "
                   "`endstate record --resume` (same --out and --cassettes) records them again", err=True)


@contextlib.contextmanager
def _no_empty_folder_left(*folders: Path | None) -> Iterator[None]:
    """Remove, as the block ends however it ends, each of `folders` (and each parent of one) that
    was not there when it began and is empty now: a run refused after its checks (no engine
    answers, a resume refused) leaves no folder to be mistaken for a run or a recording."""
    made = {path for folder in folders if folder is not None
            for path in itertools.takewhile(lambda p: not p.exists(), (folder, *folder.parents))}
    try:
        yield
    finally:
        for path in sorted(made, key=lambda p: len(p.parts), reverse=True):  # the deepest first
            with contextlib.suppress(OSError):  # not empty: something was written there
                path.rmdir()


class _SpendCeiling(Exception):
    """Raised from the progress line once the run's priced spend reaches --max-usd."""


def _price(model: str, prices: Path | None) -> Any:
    """The model's Price for --max-usd; UserError for a model the table does not price."""
    from endstate.errors import UserError
    from endstate.report import load_prices

    table = load_prices(prices)
    price = table.get(model) or table.get(model.split("/", 1)[0] + "/*")
    if price is None:
        raise UserError(f"--max-usd needs a price for {model}: pass --prices FILE with a [\"{model}\"] table "
                        "(input and output, US dollars per million tokens)")
    return price


def _spending(show: Callable[[Any], None], price: Any, max_usd: float, spent: list[float],
              total: int) -> Callable[[Any], None]:
    """The progress line, adding each finished task's priced spend; at the ceiling it stops the run."""
    done = [0]

    def on_result(result: Any) -> None:
        show(result)
        done[0] += 1
        spent[0] += price.usd(result.counters)
        if spent[0] >= max_usd and done[0] < total:
            raise _SpendCeiling(f"spend ceiling reached: the finished tasks cost ${spent[0]:.4f}, "
                                f"--max-usd is ${max_usd:g}")

    return on_result


def _run(suite: Path, only: tuple[str, ...], out: Path | None, repeat: int, expect: str | None, executor: str,
         ray_address: str | None, ray_warm: float, resume: bool, max_usd: float | None = None,
         prices: Path | None = None, replace_out: bool | None = None, **kwargs: Any) -> None:
    from endstate.cassettes import RunMode
    from endstate.cli._preflight import attempts_left_out, check_replay_covers
    from endstate.run import RUN_FILE, RunOutcome, kept_on_resume, make_folder, prepare_replay, suite_runner

    run_suite = suite_runner(executor, ray_address, ray_warm)
    config = _config(**kwargs)
    loaded, errors = _load(suite, only)
    if config.mode == RunMode.REPLAY:  # every cassette checked, model and settings read, before any container
        check_replay_covers(Path(str(config.cassettes)), suite, loaded)
        left_out = attempts_left_out(Path(str(config.cassettes)), loaded, config.attempts)
        if left_out:
            click.echo(f"endstate: note: {left_out}", err=True)
        loaded, config, problems = prepare_replay(loaded, config, _explicit_settings())
        for problem in problems:
            click.echo(f"endstate: error: {problem} (task skipped)", err=True)
        errors += problems
        if not loaded:
            if not errors:
                click.echo("endstate: error: no task to replay", err=True)
            sys.exit(2)
    if config.fork_from is not None:  # every parent checked, its settings read, before any container
        from endstate.run import prepare_fork

        loaded, config, problems = prepare_fork(loaded, config, _explicit_settings())
        for problem in problems:
            click.echo(f"endstate: error: {problem} (task skipped)", err=True)
        errors += problems
        if not loaded:
            sys.exit(2)
    if not loaded:  # every task failed to load (said above): no run to write, nor to refuse the next one
        sys.exit(2)
    from endstate.cli._preflight import check_pairing

    check_pairing(config, loaded)  # parts that cannot work together, before any sandbox
    out = out or Path("runs") / _slug(config.agent, config.model)
    if replace_out is False and not resume:
        _refuse_another_run(out)
    # A replay pays no provider: the ceiling is for live runs.
    price = _price(config.model, prices) if max_usd is not None and config.mode != RunMode.REPLAY else None
    # The cassettes folder is made only now that every check passed, and what the command made stays
    # only if something was written into it: a refusal leaves no empty folder behind.
    record_to = Path(config.cassettes) if config.mode == RunMode.RECORD else None
    recorded = _replay_line(suite, only, config) if record_to is not None else ""
    with _no_empty_folder_left(out, record_to):
        if record_to is not None:
            make_folder(record_to, "--cassettes")
        spent = [0.0]
        _reap()
        results = []
        for attempt in range(repeat):
            run_out = out if repeat == 1 else out / f"run-{attempt + 1}"
            if repeat > 1:
                click.echo(f"== run {attempt + 1} of {repeat}")
            # Of repeated runs, those not begun before the kill simply start.
            again = resume and (repeat == 1 or (run_out / RUN_FILE).is_file())
            total = len(loaded) * config.attempts
            if price is not None and spent[0] >= max_usd:
                click.echo(f"endstate: spend ceiling reached: the finished runs cost ${spent[0]:.4f}, --max-usd is "
                           f"${max_usd:g}; run {attempt + 1} of {repeat} not started", err=True)
                sys.exit(3)
            progress = _progress(total, provenance=config.fork_from is not None or bool(config.record_mode))
            if again:
                progress = _saying_kept(progress, kept_on_resume(run_out, rerun_errors=not config.keep_errors), run_out)
            if price is not None:
                progress = _spending(progress, price, max_usd, spent, total)
            try:
                result = run_suite(loaded, config, run_out, suite_root=suite, progress=progress, resume=again)
            except KeyboardInterrupt:
                if config.mode == RunMode.RECORD:
                    _say_incomplete(Path(config.cassettes), loaded, config.attempts)
                raise
            except _SpendCeiling as exc:
                from endstate.run import read_results

                _summary(read_results(run_out), run_out, recorded)
                click.echo(f"endstate: {exc}; the tasks still running were stopped and the rest not started: "
                           f"continue with --resume --out {run_out}", err=True)
                sys.exit(3)
            _summary(result, run_out, recorded)
            broken = (RunOutcome.ERROR, RunOutcome.INFRA_ERROR)
            if config.mode == RunMode.RECORD and any(t.outcome in broken for t in result.tasks):
                _say_incomplete(Path(config.cassettes), loaded, config.attempts)  # a full disk cut one short
            results.append(result)
    status = 0
    if repeat > 1:
        from endstate.report import compare_repeats

        report, identical = compare_repeats(results)
        click.echo(report)
        if config.fork_from is not None:  # only a full replay is a determinism test
            click.echo("note: each forked task asked its model again from the fork turn in every run: the repeats "
                       "compare the model's answers, not replay's determinism")
        status = status or (0 if identical else 1)
    outcomes = [t.outcome for r in results for t in r.tasks]
    if any(o in (RunOutcome.ERROR, RunOutcome.DIVERGENCE, RunOutcome.INFRA_ERROR) for o in outcomes):
        status = 1
    if expect and any(o != expect for o in outcomes):
        click.echo(f"expected every task to {expect}; see the table above", err=True)
        status = 1
    if errors:
        status = 2
    sys.exit(status)
