"""The run tests' fast layer: the `memory_suite` fixture (memory_runner.py)."""

from memory_runner import memory_suite  # noqa: F401 - a fixture, offered to every module here
