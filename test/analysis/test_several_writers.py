"""Several writers at once: interleaved runs, and the messages no producer's grid times."""

from types import SimpleNamespace

import numpy as np

from ros2_deadline_monitor.analysis.several_writers import interleaved, SeveralWriters


def runs(*serials: int) -> np.ndarray:
    return np.array(serials, np.int64)


def test_runs_taking_turns_are_one_producer_at_a_time():
    assert interleaved(runs(1, 1, 1, 2, 2, 2)) == 0  # a restart
    assert interleaved(runs(2, 2), last_serial=1) == 0
    assert interleaved(runs(1)) == 0


def test_runs_that_alternate_are_several_at_once():
    assert interleaved(runs(1, 2, 1, 2)) == 2
    assert interleaved(runs(1, 2, 3, 1)) == 3
    assert interleaved(runs(2, 1), last_serial=1) == 2  # across the batch before


def test_a_batch_that_leaves_no_message_changes_nothing():
    totals = SimpleNamespace(unattributed=0)
    several = SeveralWriters(totals)
    several.count(np.empty(0, np.int64), 'guessed')  # every event of the batch unplaced
    assert totals.unattributed == 0 and several.at is None and several.window_note(0) == ''
    several.count(np.array([5, 9], np.int64), 'numbers alike')
    assert totals.unattributed == 2 and several.at == 9
    assert several.window_note(9) == 'per-cycle figures need one producer: numbers alike'
    assert several.window_note(10) == ''
    assert several.run_note() == '2 messages not timed as cycles: numbers alike'
    assert several.interleaving(runs(1, 2, 1)) == 2
    assert several.interleaving(np.empty(0, np.int64)) == 0  # no batch, no change
