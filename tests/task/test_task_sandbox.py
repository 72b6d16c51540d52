"""`[sandbox]` in task.toml: one image and one set of limits for tasks check, eval and tasks new."""

from __future__ import annotations

from pathlib import Path

import pytest

from endstate.errors import ManifestError, SandboxUnavailable
from endstate.run import task_pack_hash
from endstate.sandbox import DEFAULT_IMAGE, open_sandbox
from endstate.sandbox._image import CONTEXT_LABEL, build_task_image, context_sha256
from endstate.task import load_task
from endstate.task._task_sandbox import own_image_ids, task_sandbox

GRADERS = '[[graders]]\nname = "endstate.grading:no_new_skips"\n'


def make_task(root: Path, sandbox: str = "", budget: str = "") -> Path:
    folder = root / "demo"
    (folder / "fixture").mkdir(parents=True)
    (folder / "prompt.md").write_text("do it\n")
    (folder / "task.toml").write_text(f'id = "demo"\ncategory = "bugfix"\n{budget}\n{sandbox}\n{GRADERS}')
    return folder


def test_limits_come_from_the_sandbox_table_else_the_budget(tmp_path):
    plain = load_task(make_task(tmp_path / "a", budget="[budget]\ncommand_timeout = 45\n"))
    where = task_sandbox(plain, "local", DEFAULT_IMAGE)
    assert where.image == DEFAULT_IMAGE
    assert (where.limits.command_timeout_s, where.limits.cpus, where.limits.memory_mb) == (45, 1.0, 1024)
    own = load_task(make_task(tmp_path / "b", "[sandbox]\ncpus = 2\nmemory_mb = 2048\ncommand_timeout = 300\n"))
    where = task_sandbox(own, "local", DEFAULT_IMAGE)
    assert (where.limits.command_timeout_s, where.limits.cpus, where.limits.memory_mb) == (300, 2, 2048)


@pytest.mark.parametrize("table, message", [
    ('[sandbox]\ncpu = 2\n', "unknown field `cpu`"),
    ('[sandbox]\nmemory_mb = 0\n', "`sandbox.memory_mb` must be positive"),
    ('[sandbox]\ndockerfile = "image/Dockerfile"\n', "names 'image/Dockerfile', which does not exist"),
    ('[sandbox]\ndockerfile = "../Dockerfile"\n', "inside the task folder"),
    ('[sandbox]\nimage = "x"\ndockerfile = "Dockerfile"\n', "both set"),
])
def test_bad_sandbox_tables_name_the_field(tmp_path, table, message):
    folder = make_task(tmp_path, table)
    (folder / "Dockerfile").write_text("FROM scratch\n")
    with pytest.raises(ManifestError, match=message):
        load_task(folder)


def test_an_own_image_needs_docker(tmp_path):
    task = load_task(make_task(tmp_path, '[sandbox]\nimage = "python:3.13"\n'))
    with pytest.raises(SandboxUnavailable, match="--sandbox docker"):
        task_sandbox(task, "local", DEFAULT_IMAGE)


def test_the_pack_hash_covers_the_image_id(tmp_path):
    task = load_task(make_task(tmp_path))
    assert task_pack_hash([task]) == task_pack_hash([task], {})
    assert task_pack_hash([task], {"demo": "sha256:aaa"}) != task_pack_hash([task], {"demo": "sha256:bbb"})


@pytest.mark.docker
def test_a_task_image_is_built_once_and_used_with_the_tasks_limits(tmp_path):
    folder = make_task(tmp_path, '[sandbox]\ndockerfile = "image/Dockerfile"\nmemory_mb = 300\ncommand_timeout = 7\n')
    (folder / "image").mkdir()
    (folder / "image/Dockerfile").write_text(f"FROM {DEFAULT_IMAGE}\nRUN echo task-image > /opt/marker\n")
    task = load_task(folder)
    where = task_sandbox(task, "docker", DEFAULT_IMAGE)
    try:
        _check_image(folder, where)
        # What the run card and the pack hash record for it.
        import docker

        client = docker.from_env()
        assert own_image_ids([task], "docker", DEFAULT_IMAGE) == {"demo": client.images.get(where.image).id}
        client.close()
    finally:
        import docker

        client = docker.from_env()
        client.images.remove(where.image, force=True)
        client.close()


def _check_image(folder, where):
    digest = context_sha256(folder / "image")
    assert where.image == f"endstate-task-demo:{digest[:12]}"
    # Built and labelled by content: asking again builds nothing and gives the same tag.
    import docker

    client = docker.from_env()
    try:
        image = client.images.get(where.image)
        assert image.labels[CONTEXT_LABEL] == digest
        assert build_task_image(folder / "image/Dockerfile", "demo") == where.image
        assert client.images.get(where.image).id == image.id
    finally:
        client.close()
    with open_sandbox("docker", image=where.image, limits=where.limits, name_hint="task-image") as box:
        assert box.exec("cat /opt/marker").stdout == "task-image\n"
        limit = box.exec("cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes")
        assert limit.stdout.strip() == str(300 * 1024 * 1024)
        assert box.exec("sleep 30").timed_out  # the task's command timeout, not the default 120 s
