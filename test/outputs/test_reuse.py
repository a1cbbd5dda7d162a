"""Outputs reused by input identity: made once, found again in place or moved."""

from __future__ import annotations

from ros2_deadline_monitor.outputs.reuse import Reuse


class Part:
    """An input compared by identity only (like a snapshot or a message)."""

    def __init__(self, name: str) -> None:
        self.name = name


def _maker(made: list[str]):
    def make(part: Part) -> str:
        made.append(part.name)
        return f'out {part.name}'
    return make


def test_the_same_objects_in_place_are_not_made_again() -> None:
    parts = [Part(name) for name in 'abcd']
    made: list[str] = []
    reuse: Reuse[Part, str] = Reuse()
    first = reuse(parts, _maker(made))
    assert first == ['out a', 'out b', 'out c', 'out d'] and made == list('abcd')
    replaced = [parts[0], Part('b'), parts[2], parts[3]]  # an equal but new object
    made.clear()
    second = reuse(replaced, _maker(made))
    assert made == ['b'] and reuse.reused == 3
    assert [x is y for x, y in zip(first, second, strict=True)] == [True, False, True, True]


def test_parts_that_moved_are_found_by_identity() -> None:
    a, b, c = Part('a'), Part('b'), Part('c')
    made: list[str] = []
    reuse: Reuse[Part, str] = Reuse()
    reuse([a, b, c], _maker(made))
    made.clear()
    assert reuse([c, Part('d'), a, b], _maker(made)) == ['out c', 'out d', 'out a', 'out b']
    assert made == ['d'] and reuse.reused == 3
    made.clear()
    assert reuse([b], _maker(made)) == ['out b'] and made == [] and reuse.reused == 1


def test_a_changed_key_makes_the_output_again() -> None:
    a, b = Part('a'), Part('b')
    made: list[str] = []
    reuse: Reuse[Part, str] = Reuse()
    reuse([a, b], _maker(made), keys=[(), ()])
    made.clear()
    reuse([a, b], _maker(made), keys=[(), ('expected',)])
    assert made == ['b']
    made.clear()
    reuse([a, b], _maker(made))  # no keys now: different from the keys before
    assert made == ['a', 'b']
    made.clear()
    reuse([a, b], _maker(made))
    assert made == []


def test_the_result_is_the_callers_and_the_previous_call_stays_readable() -> None:
    a = Part('a')
    reuse: Reuse[Part, str] = Reuse()
    result = reuse([a], _maker([]))
    result.append('the caller adds its own')
    seen: list[list[tuple[Part, str]]] = []

    def make(part: Part) -> str:
        seen.append(reuse.previous())
        return 'new'
    assert reuse([a, Part('b')], make) == ['out a', 'new']
    assert seen == [[(a, 'out a')]]
    reuse.clear()
    assert reuse([a], make) == ['new'] and reuse.reused == 0
