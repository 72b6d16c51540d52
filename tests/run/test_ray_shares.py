"""How the Ray driver hands out work (no cluster needed): shares shrink as the run nears
its end, and a task whose slot was lost is charged one try per loss, rerun first, and
ends as infra_error once its tries are spent, while the rest of its share goes back
uncharged; a share a slot turns down (it is ending itself) goes back uncharged too."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from endstate.run import RetryPolicy, RunConfig
from endstate.run._ray import _Driver, _Queue
from endstate.run._ray_events import AttemptLost


def _tasks(n: int) -> list[SimpleNamespace]:
    return [SimpleNamespace(id=f"task-{i:02}") for i in range(n)]


def test_shares_shrink_towards_the_end_of_the_run():
    work = _Queue([(task, 0) for task in _tasks(22)], slots=2)
    sizes = []
    while (share := work.take()) is not None:
        sizes.append(len(share))
        work.done([])
    assert sizes == [11, 6, 3, 1, 1]


def test_each_share_is_picked_evenly_over_the_queue_not_from_its_head():
    """A category's tasks sort together, and the heaviest often do: the first slot's half of
    the run is every other task, not the first eleven, and every task is handed out once."""
    tasks = _tasks(22)
    work = _Queue([(task, 0) for task in tasks], slots=2)
    shares = []
    while (share := work.take()) is not None:
        shares.append([int(task.id[-2:]) for task, _ in share])
        work.done([])
    assert shares[0] == list(range(0, 22, 2))
    assert shares[1] == [1, 3, 7, 11, 15, 19]
    assert sorted(i for share in shares for i in share) == list(range(22))


def test_the_queue_waits_for_shares_still_out_before_it_is_empty_for_good():
    tasks = _tasks(2)
    work = _Queue([(task, 0) for task in tasks], slots=2)
    first = work.take()
    assert work.take() == [(tasks[1], 0)]
    assert work.take() == []  # empty for now: a share still out may come back
    work.done([])
    assert work.take() == []
    work.done(first)  # its slot was lost: the share goes back, first in line
    assert work.take() == first
    work.done([])
    assert work.take() is None


def test_a_lost_slot_charges_the_task_it_was_running_until_its_tries_are_spent():
    config = RunConfig(model="scripted/reference", infra=RetryPolicy(tries=2, backoff_s=0.0))
    driver = _Driver(None, None, config, {})
    running, waiting = _tasks(2)
    work = _Queue([], slots=1)
    assert driver._lost([(running, 0), (waiting, 0)], "lost", work) == [(running, 0), (waiting, 0)]
    assert driver.events.empty()
    assert driver._lost([(running, 0), (waiting, 0)], "lost again", work) == [(waiting, 0)]
    assert driver.events.get_nowait() == AttemptLost(running, 0, "lost again", infra=True)
    assert work.lost == {(running.id, 0): 2}  # the task waiting behind it was never charged


def test_a_task_rerun_after_a_lost_slot_goes_alone_with_the_tries_it_has_left():
    config = RunConfig(model="scripted/reference", infra=RetryPolicy(tries=3, backoff_s=0.0))
    tasks = _tasks(4)
    work = _Queue([(task, 0) for task in tasks], slots=1)
    work.lost[(tasks[0].id, 0)] = 1
    share = work.take()
    assert share == [(tasks[0], 0)]
    driver = _Driver(None, None, config, {task.id: b"" for task in tasks})
    assert driver.batch(share, lost=1).config.infra.tries == 2  # its first run counts
    assert driver.batch(share).config.infra.tries == 3


def test_a_share_a_slot_turns_down_goes_back_uncharged():
    """A warm slot that has just decided to end (idle) yields nothing for the share sent to it."""
    config = RunConfig(model="scripted/reference")
    tasks = _tasks(3)
    slot = SimpleNamespace(run=SimpleNamespace(remote=lambda batch: iter(())))
    driver = _Driver(SimpleNamespace(), SimpleNamespace(handles=[slot]), config, {task.id: b"" for task in tasks})
    work = _Queue([(task, 0) for task in tasks], slots=1)
    share = work.take()
    assert driver._run_batch(0, share, work) is False
    assert driver.events.empty() and not work.lost
    assert work.take() == share  # first in line again, for the slot made in its place


def test_a_slot_ending_itself_turns_down_what_comes_after_and_a_new_run_keeps_it_warm():
    pytest.importorskip("ray")
    from endstate.run._ray_node import NodeBatch, Slot

    slot = Slot(0)
    slot.idle_s, slot.last_used = 5, time.monotonic() - 10
    assert slot._idle()
    slot.keep_warm(600)  # a run that finds it warm gives it its own warm time, from now
    assert not slot._idle()
    slot.ending = True
    assert list(slot.run(NodeBatch(RunConfig(model="scripted/reference"), ()))) == []


def test_a_slot_unpacks_a_task_folder_once_and_a_changed_one_again(tmp_path):
    """A warm slot keeps each task folder it unpacked, by the archive's hash: the next share
    links to it; a task whose files changed is unpacked anew."""
    import shutil
    from pathlib import Path

    from endstate.run._ray_node import NodeTask, Slot, pack
    from endstate.task import load_task

    source = Path(__file__).resolve().parents[2] / "tasks" / "bugfix-lru-eviction"
    edited = shutil.copytree(source, tmp_path / "edited" / source.name)
    (edited / "prompt.md").write_text((edited / "prompt.md").read_text() + "\nAnd be quick.\n")
    slot = Slot(0)
    shares = [tmp_path / name for name in ("one", "two", "three")]
    for share in shares:
        share.mkdir()
    one = slot._folder(NodeTask(source.name, pack(source)), shares[0])
    two = slot._folder(NodeTask(source.name, pack(source)), shares[1])
    three = slot._folder(NodeTask(source.name, pack(edited)), shares[2])
    assert one == shares[0] / source.name and one.resolve() == two.resolve() != three.resolve()
    assert load_task(one).content_hash() == load_task(source).content_hash()
    assert load_task(three).content_hash() == load_task(edited).content_hash() != load_task(one).content_hash()
