"""The harness's guards: one switch each, all on in every real run.

The mutation check (`endstate mutate`) turns them off one at a time and demands the suite go
red. Every package reads its own switches from this one struct: the agent loop its policy,
budget and resume checks; the runner its sealing and VCS pruning; grading the fresh
container, snapshot, guard plugin, twins and probe. Run cards and job files keep these names.
"""

from __future__ import annotations

import msgspec

__all__ = ["Guards"]


class Guards(msgspec.Struct, frozen=True):
    """The harness guards the mutation check disables one at a time."""

    permission_policy: bool = True
    context_budget: bool = True
    resume_reconciliation: bool = True
    seal_before_holdout: bool = True
    vcs_pruning: bool = True
    grader_errors: bool = True
    #: Grade in a fresh sandbox holding only the sealed tree, not in the agent's own.
    fresh_grading_container: bool = True
    #: Seal links as links and keep caches out of the graded tree.
    full_snapshot: bool = True
    #: The guard plugin and canary test inside every graded test run.
    tamper_guard: bool = True
    #: A canary test in every run of a runner other than pytest (Django's, sympy's), named among its arguments,
    #: which the runner's output must report failed (off: its output is read as it comes).
    log_canary: bool = True
    #: The end-state checks every task gets (escaping links, compiled code, source tripwires).
    end_state_checks: bool = True
    #: Impossible twins in every held-out run (see grading/_twins.py).
    twins: bool = True
    #: A held-out test reported skipped fails its grader, beyond the task's `may_skip` (off: only the count of
    #: those that ran is held to min_tests, so code can raise a skip where a held-out test would fail).
    held_out_skips: bool = True
    #: Twins change an expected value wherever a test has one (off: they turn operators, which code can read).
    value_twins: bool = True
    #: Before each half of a held-out run, every place a test process can leave something is emptied
    #: (off: the second half can compare its tests with what the first, or the probe, left).
    half_isolation: bool = True
    #: Each process of the end state in a fresh grading container (the probe, each test run) starts in
    #: network, IPC, pid and mount namespaces of its own (off: all share the container's, where a
    #: loopback connection's TIME_WAIT entry outlives every wipe and carries what one process read).
    process_isolation: bool = True
    #: The probe runs on the sealed tree alone, before any held-out file is staged (off: after, as it once
    #: did, so it can read them). Only the half-isolation mutant turns it off, with half_isolation.
    probe_first: bool = True
    #: A grading container's harness finds what it runs on its runtime's PATH alone (off: the image's PATH
    #: first, where a root end state's own `mount` is found before the runtime's).
    runtime_path: bool = True
    #: A grading container's harness runs with every variable of the container's environment blanked (off:
    #: kept, so an image's `BASH_ENV` naming a file of the end state is read by every harness `bash`).
    environment_blanked: bool = True
    #: The runtime's loader and libc never read /etc/ld.so.preload or /etc/nsswitch.conf (off: a runtime
    #: built without that, whose every program loads a library a root end state's verifier listed there).
    runtime_config_blind: bool = True
    #: A root end state's grading container: what its verifier and services write to the container's own
    #: filesystem lands in one bounded tmpfs (off: on the host's disk, without bound).
    bounded_writes: bool = True
    #: The services a root end state left running start again behind a wall: the reward, the harness and
    #: the held-out files hidden, the rest read-only but where a daemon writes (off: they see all, as root).
    services_wall: bool = True
    #: A harness command that fails while the services run is decided by freezing them and looking: the end
    #: state's FAIL (off: raised, an error the runner retries and --resume runs anew).
    services_freeze: bool = True
    #: A verifier's held-out files are staged last, on a folder of their own mounted once the services run
    #: (off: in the graded tree, beside whatever the end state left in their folder).
    staged_apart: bool = True
    #: The task's probe: its end state run as a plain program, its output judged outside the sandbox.
    outside_check: bool = True
    #: Detector kinds turned off (see grading/_detect.py): the mutation check turns off one at a time.
    detectors_off: tuple[str, ...] = ()
    #: A foreign agent's model proxy forwards only POST to the agent file's declared endpoints.
    proxy_allowlist: bool = True
    #: Not a guard, a speed switch kept with them so one build can be timed both ways: pytest runs
    #: in a fresh grading sandbox fork from a warm entry point (see grading/_testrun.py). Off, each
    #: starts cold; grading is as strict either way, so the mutation check has no mutant for it.
    warm_start: bool = True
