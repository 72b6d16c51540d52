"""How fast the local model answers: SmolLM2-135M under llama.cpp, through endstate's own adapter.

    python bench/local_model.py [--rounds N] [--max-tokens N] [--n-ctx N]

Starts a LocalModelServer (set ENDSTATE_LLAMA_PYTHON if llama_cpp lives in another
Python), sends a few fixed prompts, once as plain chat and once offering the agent's
tools, and prints completion tokens per wall second (tokens as the server's usage
reports them). The first request warms the server up and is not counted.
"""

from __future__ import annotations

import argparse
import time

from endstate.agent._tools import TOOLS
from endstate.models import Message, RunSettings, open_model
from endstate.models._local import MODEL_ALIAS, LocalModelServer

PROMPTS = (
    "Explain in a few sentences what a least-recently-used cache evicts, and when.",
    "Write a Python function that returns the n-th Fibonacci number iteratively.",
    "List the steps to find why a unit test fails in a Python project.",
    "The tests in tests/test_lru.py fail. Look at cachekit/lru.py and fix the bug.",
)
SYSTEM = "You are a software engineer working in a project checked out at /workspace."


def measure(model, prompts, *, tools, rounds: int) -> tuple[int, int, float]:
    """(prompt tokens, completion tokens, wall seconds) over every prompt, `rounds` times."""
    prompt_tokens = completion_tokens = 0
    seconds = 0.0
    for round_ in range(rounds):
        for i, prompt in enumerate(prompts):
            messages = [Message("system", SYSTEM), Message("user", prompt)]
            started = time.perf_counter()
            completion = model.complete(messages, tools, channel="agent", turn=round_ * len(prompts) + i)
            seconds += time.perf_counter() - started
            prompt_tokens += completion.usage.input_tokens
            completion_tokens += completion.usage.output_tokens
    return prompt_tokens, completion_tokens, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--n-ctx", type=int, default=None, help="the server's context (default: the model's)")
    args = parser.parse_args()

    options = {"n_ctx": args.n_ctx} if args.n_ctx else {}
    started = time.perf_counter()
    with LocalModelServer(**options) as server:
        ready = time.perf_counter() - started
        settings = RunSettings(max_output_tokens=args.max_tokens, timeout_s=600)
        model = open_model(f"openai-compatible/{MODEL_ALIAS}", settings=settings, base_url=server.base_url)
        try:
            model.complete([Message("user", "Hello.")], [], channel="agent", turn=10_000)  # warm-up
            print(f"server ready in {ready:.1f} s; n_ctx {server.n_ctx}, {args.rounds} round(s) of "
                  f"{len(PROMPTS)} prompts, max {args.max_tokens} tokens each")
            for label, tools in (("plain chat", []), ("with tools", list(TOOLS))):
                prompt, completion, seconds = measure(model, PROMPTS, tools=tools, rounds=args.rounds)
                print(f"{label:10s}  {completion / seconds:6.1f} completion tokens/s  "
                      f"({completion} tokens in {seconds:.1f} s; {prompt} prompt tokens)")
        finally:
            model.close()


if __name__ == "__main__":
    main()
