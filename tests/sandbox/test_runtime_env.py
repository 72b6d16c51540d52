"""The environment the harness's execs get in a grading container (no engine needed): the container's
own blanked and the runtime's set whole, unless the mutation check turned a guard off."""

from __future__ import annotations

import json

from endstate.sandbox import RuntimeGuards
from endstate.sandbox._runtime import HARNESS_ENV, RUNTIME_PATH, harness_env

IMAGE_ENV = ["PATH=/usr/local/sbin:/usr/bin", "BASH_ENV=/root/.bashrc", "LANG=de_DE.UTF-8"]


def test_every_variable_of_the_image_is_blanked_and_the_runtimes_set_whole():
    env = harness_env(IMAGE_ENV)
    assert env["BASH_ENV"] == ""
    assert {name: env[name] for name in HARNESS_ENV} == HARNESS_ENV
    assert env["PATH"] == RUNTIME_PATH
    assert json.loads(env["ENDSTATE_USER_ENV"]) == {"PATH": "/usr/local/sbin:/usr/bin", "BASH_ENV": "/root/.bashrc",
                                                    "LANG": "de_DE.UTF-8"}


def test_each_mutant_undoes_its_own_guard_alone():
    kept = harness_env(IMAGE_ENV, RuntimeGuards(blank_env=False))
    assert kept["BASH_ENV"] == "/root/.bashrc" and kept["PATH"] == RUNTIME_PATH and kept["LANG"] == "C.UTF-8"
    found = harness_env(IMAGE_ENV, RuntimeGuards(own_path=False))
    assert found["PATH"] == f"/usr/local/sbin:/usr/bin:{RUNTIME_PATH}" and found["BASH_ENV"] == ""
