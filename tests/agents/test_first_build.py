"""A first --agent run says what it builds and how long that usually takes, before the minutes it
spends building; a run that finds the layer built says nothing."""

from __future__ import annotations

import pytest

import endstate.agents._image as image
from endstate.agents import find_agent


@pytest.fixture
def engine(monkeypatch, tmp_path):
    """The engine and the wheel download stood in for: what is asked, and the labels it holds."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "pip-24.0-py3-none-any.whl").write_bytes(b"pip")
    (wheels / ".complete").write_text("pip-24.0-py3-none-any.whl\n")
    labels: dict[str, str] = {}
    built: list[str] = []

    def build_context(root, tag, *, labels: dict, log):
        log("Step 1/4 : FROM base")  # the engine's own output goes to log only
        built.append(tag)
        held[tag] = labels[image.LAYER_LABEL]

    held = labels  # the engine's labels: the build puts the layer's digest there
    monkeypatch.setattr(image, "image_id", lambda base, hint="": "sha256:" + "b" * 64)
    monkeypatch.setattr(image, "image_python", lambda base: "3.11")
    monkeypatch.setattr(image, "wheelhouse", lambda spec, python, log: wheels)
    monkeypatch.setattr(image, "image_label", lambda tag, label: labels.get(tag))
    monkeypatch.setattr(image, "build_context", build_context)
    return built


def test_the_first_build_says_what_it_builds_and_how_long_it_takes_and_the_second_says_nothing(engine):
    spec = find_agent("mini-swe-agent")
    steps: list[str] = []
    tag = image.agent_image(spec, "endstate-sandbox:2", steps=steps.append)
    assert engine == [tag] and tag.startswith("endstate-agent-mini-swe-agent:")
    assert steps == [f"building {tag} (agent mini-swe-agent on endstate-sandbox:2, network off): built once and "
                     "reused by later runs; this first build takes several minutes"]
    again: list[str] = []
    assert image.agent_image(spec, "endstate-sandbox:2", steps=again.append) == tag
    assert again == [] and engine == [tag]  # found, not built again
