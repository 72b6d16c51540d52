"""USD per task from per-turn usage and a price table with cache and reasoning rates,
the arithmetic written out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from endstate.agent import Counters
from endstate.errors import UserError
from endstate.models import Message, RunSettings, ScriptedServer, ToolSchema, open_model
from endstate.report import benchmark
from endstate.report._benchmark import Price, load_prices
from tests.report.report_helpers import run, write

TASKS = Path(__file__).resolve().parents[2] / "tasks"
BASH = ToolSchema("bash", "Run a command.", {"type": "object", "properties": {"command": {"type": "string"}}})
PRICES = """
["anthropic/claude-test"]
input = 3.00
output = 15.00
cache_read = 0.30
cache_write = 3.75
"""


def _two_cached_turns() -> list:
    """The usage of two agent turns of scripted/reference through the Messages API, cache on."""
    settings = RunSettings(thinking_budget=1024, max_output_tokens=4096, prompt_cache=True, timeout_s=10)
    with ScriptedServer(TASKS) as server:
        model = open_model("scripted-anthropic/reference", settings=settings,
                           base_url=server.base_url_for("reference", "bugfix-booking-overlap", wire="messages"))
        messages = [Message("system", "You fix bugs."), Message("user", "Fix the overlap check.")]
        usages = []
        try:
            for turn in range(2):
                completion = model.complete(messages, [BASH], channel="agent", turn=turn)
                usages.append(completion.usage)
                messages.append(completion.message)
                messages += [Message("tool", "ok", tool_call_id=c.id) for c in completion.message.tool_calls]
        finally:
            model.close()
    return usages


def test_usd_per_task_is_the_hand_computed_figure(tmp_path):
    first, second = _two_cached_turns()
    # What the scripted server's prompt cache reported, turn by turn:
    assert (first.input_tokens, first.cached_input_tokens, first.cache_write_tokens, first.output_tokens) == (89, 0, 89, 63)
    assert (second.input_tokens, second.cached_input_tokens, second.cache_write_tokens, second.output_tokens) == (183, 151, 32, 89)
    counters = Counters(input_tokens=89 + 183, cached_input_tokens=0 + 151, cache_write_tokens=89 + 32,
                        output_tokens=63 + 89)
    result = run({"bugfix-x": "pass"}, model="anthropic/claude-test")
    result.tasks[0].counters = counters
    (tmp_path / "prices.toml").write_text(PRICES)
    (row,) = benchmark([write(tmp_path / "run", result)], load_prices(tmp_path / "prices.toml")).rows
    # turn 0: 89 written x 3.75 + 63 out x 15            = 333.75 + 945         = 1278.75
    # turn 1: 151 read x 0.30 + 32 written x 3.75 + 89 x 15 = 45.30 + 120 + 1335 = 1500.30
    # per million tokens: (1278.75 + 1500.30) / 1e6       = 0.00277905 USD
    assert row.usd_per_task == pytest.approx(0.00277905, abs=1e-12)
    # Billed as plain input, the same tokens would cost (272 x 3 + 152 x 15) / 1e6 = 0.003096.
    assert Price(3.0, 15.0).usd(counters) == pytest.approx(0.003096, abs=1e-12)
    assert row.card["cache_hit_share"] == pytest.approx(151 / 272)


def test_reasoning_tokens_are_billed_at_their_own_rate():
    counters = Counters(input_tokens=1000, cached_input_tokens=512, output_tokens=300, reasoning_tokens=128)
    price = Price(input=2.0, output=8.0, cache_read=0.5, reasoning=10.0)
    # 488 uncached x 2 + 512 cached x 0.5 + 172 plain out x 8 + 128 reasoning x 10
    #  = 976 + 256 + 1376 + 1280 = 3888 per million
    assert price.usd(counters) == pytest.approx(0.003888, abs=1e-12)


@pytest.mark.parametrize("model", ["anthropic/claude-unpriced", "openai-compatible/smollm2-135m"])
def test_an_unpriced_model_is_n_a_never_zero(tmp_path, model):
    from endstate.report import render_text

    result = run({"bugfix-x": "pass"}, model=model)
    result.tasks[0].counters = Counters(input_tokens=1000, output_tokens=10)
    report = benchmark([write(tmp_path / "run", result)], load_prices(None))
    assert report.rows[0].usd_per_task is None
    assert "n/a" in render_text(report).splitlines()[1]


def test_a_bad_price_table_names_the_field(tmp_path):
    (tmp_path / "prices.toml").write_text('["openai/x"]\ninput = 1.0\noutput = 2.0\ncache_reed = 0.1\n')
    with pytest.raises(UserError, match="cache_reed") as info:
        load_prices(tmp_path / "prices.toml")
    assert "cache_read, cache_write, reasoning" in str(info.value)
