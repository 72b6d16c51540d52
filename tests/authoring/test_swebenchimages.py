"""SWE-bench's own instance images: their names, the eval_script's test line, the layer, a pinned base.

The import against a real registry is tests/e2e/test_swebench_images.py."""

from __future__ import annotations

import pytest
from cli_runner import run_endstate

from endstate.authoring._swebenchimages import InstanceImage, eval_test_line, image_name, layer_dockerfile
from endstate.errors import SandboxUnavailable

# The published record's `image` for this id (SWE-bench Verified), and the harness's derivation of it.
DJANGO = ("django__django-10097", "swebench/sweb.eval.x86_64.django_1776_django-10097:latest")


def test_the_dataset_s_image_is_pulled_from_the_registry_asked_for():
    assert image_name(*DJANGO, "swebench") == DJANGO[1]
    assert image_name(*DJANGO, "127.0.0.1:5000/swebench/") == \
        "127.0.0.1:5000/swebench/sweb.eval.x86_64.django_1776_django-10097:latest"


def test_without_the_field_the_name_is_the_one_swebench_s_harness_derives():
    assert image_name(DJANGO[0], None, "swebench") == DJANGO[1]
    assert image_name("Foo__Bar-1", None, "h:1/ns") == "h:1/ns/sweb.eval.x86_64.foo_1776_bar-1:latest"


def test_the_test_line_is_what_the_eval_script_runs_between_its_markers():
    # The shape of sympy__sympy-11618's eval_script in SWE-bench Verified (its patch left out).
    script = ("#!/bin/bash\nset -uxo pipefail\nsource /opt/miniconda3/bin/activate\nconda activate testbed\n"
              "cd /testbed\ngit apply -v - <<'EOF_114329324912'\nEOF_114329324912\n: '>>>>> Start Test Output'\n"
              "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose "
              "sympy/geometry/tests/test_point.py\n: '>>>>> End Test Output'\ngit checkout 360290c4 "
              "sympy/geometry/tests/test_point.py\n")
    assert eval_test_line(script) == ("PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose "
                                 "sympy/geometry/tests/test_point.py")
    assert eval_test_line(None) == "" and eval_test_line("pytest -rA\n") == ""


def test_the_layer_builds_from_the_digest_and_makes_python_the_env_s():
    image = InstanceImage("r/x:latest", "r/x@sha256:" + "b" * 64, "c" * 40, "3.9", {})
    dockerfile = layer_dockerfile(image)
    assert dockerfile.splitlines()[[line.startswith("FROM ") for line in dockerfile.splitlines()].index(True)] == \
        f"FROM r/x@sha256:{'b' * 64}"
    assert "exec %s/bin/python" in dockerfile and "/opt/miniconda3/envs/testbed" in dockerfile
    assert "ENV PATH=/opt/miniconda3/envs/testbed/bin:" in dockerfile


def test_the_command_needs_clones_or_images(tmp_path):
    source = tmp_path / "instances.jsonl"
    source.write_text("")
    ran = run_endstate("tasks", "import", "swebench", str(source))
    assert ran.returncode == 2 and "give --repos (a folder of local clones) or --images swebench" in ran.stderr
    assert "Traceback" not in ran.stderr


@pytest.mark.docker
def test_a_task_image_whose_pinned_base_cannot_be_pulled_says_so_in_one_line(tmp_path):
    from endstate.sandbox import build_task_image

    base = "127.0.0.1:9/swebench/sweb.eval.x86_64.gone@sha256:" + "0" * 64  # port 9 (discard): nothing answers
    (tmp_path / "Dockerfile").write_text(f"FROM {base}\n")
    with pytest.raises(SandboxUnavailable) as raised:
        build_task_image(tmp_path / "Dockerfile", "gone")
    message = str(raised.value)
    assert message.startswith(f"cannot pull base image {base} (") and "\n" not in message
    assert message.endswith("the task pins it by digest; make its registry reachable, or load that image here")
