"""Outputs reused by input identity: made once, found again wherever they stand."""

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
    assert made == ['b']
    assert [x is y for x, y in zip(first, second, strict=True)] == [True, False, True, True]


def test_parts_that_moved_are_found_by_identity() -> None:
    a, b, c = Part('a'), Part('b'), Part('c')
    made: list[str] = []
    reuse: Reuse[Part, str] = Reuse()
    reuse([a, b, c], _maker(made))
    made.clear()
    assert reuse([c, Part('d'), a, b], _maker(made)) == ['out c', 'out d', 'out a', 'out b']
    assert made == ['d']
    made.clear()
    assert reuse([b], _maker(made)) == ['out b'] and made == []


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


def test_the_result_is_the_callers_and_clear_forgets() -> None:
    a = Part('a')
    made: list[str] = []
    reuse: Reuse[Part, str] = Reuse()
    result = reuse([a], _maker(made))
    result.append('the caller adds its own')
    assert reuse([a, Part('b')], _maker(made)) == ['out a', 'out b'] and made == ['a', 'b']
    reuse.clear()
    made.clear()
    assert reuse([a], _maker(made)) == ['out a'] and made == ['a']
