"""Tests for the fallbacks when the middleware fills less message info (analysis/message_info.py).

Only Fast DDS runs here, and it fills everything; the streams below are what Cyclone DDS,
Zenoh or a bridge may hand over instead: zero or missing timestamps, sequence numbers that
are 0, missing or rmw's "unsupported" UINT64_MAX.
"""

from __future__ import annotations

import pytest

from ros2_deadline_monitor.analysis.message_info import (
    InfoFallback,
    RECEIVED,
    sequence_known,
    SEQUENCE_UNSUPPORTED,
    SOURCE,
    TAKEN,
    timestamp_known,
)

MS = 1_000_000
T0 = 1_700_000_000_000_000_000


def feed(fallback: InfoFallback,
         events: list[tuple[int | None, int | None, int, int | None]]) -> tuple[list, list]:
    """Run ``(source, received, taken, sequence)`` events; return arrivals and sequences."""
    arrivals, sequences = [], []
    for source, received, taken, sequence in events:
        arrivals.append(fallback.arrival_ns(source, received, taken))
        sequences.append(fallback.sequence(sequence))
    return arrivals, sequences


def fast_dds(n: int, first_seq: int = 1) -> list[tuple[int, int, int, int]]:
    """Return what Fast DDS gives: every field, received 100 µs after the source."""
    return [(T0 + k * 10 * MS, T0 + k * 10 * MS + 100_000, T0 + k * 10 * MS + 5 * MS,
             first_seq + k) for k in range(n)]


def test_known_values() -> None:
    assert not timestamp_known(None) and not timestamp_known(0)
    assert not timestamp_known(-1) and timestamp_known(1)
    assert not sequence_known(None) and not sequence_known(0)
    assert not sequence_known(SEQUENCE_UNSUPPORTED) and not sequence_known(2**64)
    assert sequence_known(1) and sequence_known(SEQUENCE_UNSUPPORTED - 1)


def test_fast_dds_uses_everything_and_says_nothing() -> None:
    fallback = InfoFallback()
    events = fast_dds(5)
    arrivals, sequences = feed(fallback, events)
    assert arrivals == [e[0] for e in events]
    assert sequences == [1, 2, 3, 4, 5]
    status = fallback.status()
    assert (status.timestamp, status.timestamp_since, status.loss_known) == (SOURCE, 1, True)
    assert status.notes == ()


def test_status_before_any_message() -> None:
    status = InfoFallback(RECEIVED).status()
    assert (status.timestamp, status.timestamp_since, status.loss_known,
            status.loss_unknown_since, status.notes) == (RECEIVED, 0, True, 0, ())


@pytest.mark.parametrize('missing', [0, None])
def test_no_source_timestamps_fall_back_to_received_from_the_first_message(missing) -> None:
    fallback = InfoFallback(SOURCE)
    events = [(missing, r, t, s) for _, r, t, s in fast_dds(4)]
    arrivals, _ = feed(fallback, events)
    assert arrivals == [e[1] for e in events]  # never a 0 arrival: intervals stay true
    status = fallback.status()
    assert (status.timestamp, status.timestamp_since) == (RECEIVED, 1)
    assert status.notes == ('received timestamps since message 1: the middleware left the '
                            'source (writer-side) timestamps empty',)


def test_a_later_gap_switches_for_good_and_never_back() -> None:
    fallback = InfoFallback(SOURCE)
    events = fast_dds(6)
    events[3] = (0, *events[3][1:])
    arrivals, _ = feed(fallback, events)
    # Sources for messages 1-3, received from message 4 on, even when sources come back.
    assert arrivals == [e[0] for e in events[:3]] + [e[1] for e in events[3:]]
    status = fallback.status()
    assert (status.timestamp, status.timestamp_since) == (RECEIVED, 4)
    assert len(status.notes) == 1 and 'since message 4' in status.notes[0]


def test_nothing_from_the_middleware_falls_back_to_the_take_time() -> None:
    fallback = InfoFallback(SOURCE)
    events = [(0, 0, t, 0) for _, _, t, _ in fast_dds(3)]
    arrivals, sequences = feed(fallback, events)
    assert arrivals == [e[2] for e in events]
    assert sequences == [None, None, None]
    status = fallback.status()
    assert (status.timestamp, status.timestamp_since) == (TAKEN, 1)
    assert status.notes[0] == ("the monitor's take times since message 1: the middleware left "
                               'the source (writer-side) timestamps empty')


def test_received_preferred_ignores_the_source() -> None:
    fallback = InfoFallback(RECEIVED)
    events = [(0, r, t, s) for _, r, t, s in fast_dds(3)]
    arrivals, _ = feed(fallback, events)
    assert arrivals == [e[1] for e in events]
    assert fallback.status().notes == ()
    events = [(s, None, t, q) for s, _, t, q in fast_dds(2)]
    arrivals, _ = feed(fallback, events)
    assert arrivals == [e[2] for e in events]
    assert fallback.status().timestamp == TAKEN
    assert 'left the received timestamps empty' in fallback.status().notes[0]


@pytest.mark.parametrize(('number', 'word'), [
    (0, 'sequence number 0 (unset)'),
    (None, 'no sequence number'),
    (SEQUENCE_UNSUPPORTED, f'sequence number {SEQUENCE_UNSUPPORTED} (unsupported)'),
])
def test_missing_sequence_numbers_make_loss_unknown(number, word) -> None:
    fallback = InfoFallback()
    events = [(s, r, t, number) for s, r, t, _ in fast_dds(4)]
    _, sequences = feed(fallback, events)
    assert sequences == [None] * 4
    status = fallback.status()
    assert (status.loss_known, status.loss_unknown_since) == (False, 1)
    assert status.notes == (f'loss unknown since message 1: the middleware gave {word}',)
    assert status.timestamp == SOURCE  # the timestamps were fine


def test_loss_stays_unknown_once_numbers_went_missing() -> None:
    fallback = InfoFallback()
    events = fast_dds(6)
    events[2] = (*events[2][:3], 0)
    _, sequences = feed(fallback, events)
    # A partial numbering (1, 2, -, 4, 5, 6) would count a wrong loss: unknown from 3 on.
    assert sequences == [1, 2, None, None, None, None]
    status = fallback.status()
    assert (status.loss_known, status.loss_unknown_since) == (False, 3)
    assert len(status.notes) == 1


def test_both_fallbacks_are_reported_in_order() -> None:
    fallback = InfoFallback()
    events = [(0, r, t, None) for _, r, t, _ in fast_dds(2)]
    feed(fallback, events)
    notes = fallback.status().notes
    assert [n.split(' since')[0] for n in notes] == ['received timestamps', 'loss unknown']


def test_preferred_must_be_a_middleware_timestamp() -> None:
    with pytest.raises(ValueError, match='preferred'):
        InfoFallback(TAKEN)
