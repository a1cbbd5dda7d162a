"""GraphGate: which topics a poll looks at, from the graph given as data."""

from ros2_deadline_monitor.live.graph_poll import GraphGate, NOT_SUBSCRIBED, ROTATION


def gate_with(counts: dict[str, int]) -> tuple[GraphGate, list[str]]:
    asked: list[str] = []

    def count(name: str) -> int:
        asked.append(name)
        return counts.get(name, 0)
    return GraphGate(count), asked


def test_every_topic_is_due_once_then_only_when_the_graph_changes() -> None:
    gate, asked = gate_with({})
    monitors = {f't{i}': (f'/t{i}', NOT_SUBSCRIBED, True) for i in range(1000)}
    assert gate.due(monitors, {}) == list(monitors)
    assert gate.due(monitors, {}) == []
    assert asked == []  # topics the graph does not hold cost no graph query
    assert gate.due(monitors, {'/t7': ['std_msgs/msg/Header']}) == ['t7']


def test_a_name_held_by_subscribers_only_is_due_when_its_first_publisher_appears() -> None:
    counts = {'/a': 0}
    gate, _ = gate_with(counts)
    graph = {'/a': ['std_msgs/msg/Header']}
    monitors = {'a': ('/a', NOT_SUBSCRIBED, True)}
    assert gate.due(monitors, graph) == ['a']
    assert gate.due(monitors, graph) == []
    counts['/a'] = 1
    assert gate.due(monitors, graph) == ['a']
    # The look may have found no publisher info yet (it raced the graph): looked at again
    # at every poll until it subscribes.
    assert gate.due(monitors, graph) == ['a']
    assert gate.due({'a': ('/a', 1, True)}, graph) == ['a']  # subscribed: a new key
    assert gate.due({'a': ('/a', 1, True)}, graph) == []


def test_a_subscribed_topic_is_due_when_its_matched_writers_or_types_change() -> None:
    gate, _ = gate_with({'/a': 1})
    graph = {'/a': ['std_msgs/msg/Header']}
    assert gate.due({'a': ('/a', 1, True)}, graph) == ['a']
    assert gate.due({'a': ('/a', 1, True)}, graph) == []
    assert gate.due({'a': ('/a', 2, True)}, graph) == ['a']
    assert gate.due({'a': ('/a', 2, True)}, {'/a': ['std_msgs/msg/Header', 'x/msg/Y']}) == ['a']


def test_unmatched_publishers_are_counted_in_turn() -> None:
    counts = {f'/t{i}': 1 for i in range(3 * ROTATION)}
    gate, asked = gate_with(counts)
    graph = {name: ['std_msgs/msg/Header'] for name in counts}
    monitors = {name[1:]: (name, 1, True) for name in counts}
    gate.due(monitors, graph)
    asked.clear()
    counts['/t5'] = 2  # a best effort publisher the reliable subscription cannot match
    due = []
    for _ in range(3):
        due += gate.due(monitors, graph)
    assert due == ['t5']
    assert len(asked) == 3 * ROTATION  # each topic counted once in three polls


def test_removed_topics_are_forgotten() -> None:
    gate, _ = gate_with({})
    both = {'a': ('/a', NOT_SUBSCRIBED, True), 'b': ('/b', NOT_SUBSCRIBED, True)}
    gate.due(both, {})
    gate.due({'a': ('/a', NOT_SUBSCRIBED, True)}, {})
    assert gate.due(both, {}) == ['b']


def test_a_look_that_could_not_name_every_writer_is_repeated() -> None:
    gate, _ = gate_with({'/a': 2})
    graph = {'/a': ['std_msgs/msg/Header']}
    assert gate.due({'a': ('/a', 2, False)}, graph) == ['a']
    assert gate.due({'a': ('/a', 2, False)}, graph) == ['a']  # still unnamed: again
    assert gate.due({'a': ('/a', 2, True)}, graph) == []  # that look named them all


def test_a_quiet_graph_of_many_topics_is_read_less_often_but_within_two_seconds() -> None:
    from ros2_deadline_monitor.live.graph_poll import MAX_READ_EVERY, read_every, TOPICS_PER_READ

    assert read_every(0) == read_every(TOPICS_PER_READ - 1) == 1  # every poll, as always
    assert read_every(TOPICS_PER_READ) == 2
    assert read_every(1000) == read_every(100_000) == MAX_READ_EVERY == 4  # 2 s at 0.5 s polls


def test_the_names_are_read_while_a_new_name_could_concern_a_topic() -> None:
    from ros2_deadline_monitor.live.graph_poll import names_needed

    subscribed = {'a': ('/a', 1, True), 'b': ('/b', 0, True)}
    assert not names_needed(False, subscribed, False)  # only their publishers can change
    assert names_needed(True, subscribed, False)  # --all: any new name may be a topic
    assert names_needed(False, subscribed, True)  # a topic was due: read everything again
    assert names_needed(False, {**subscribed, 'c': ('/c', NOT_SUBSCRIBED, True)}, False)
    assert names_needed(False, {'a': ('/a', 2, False)}, False)  # writers the look could not name
    assert not names_needed(False, {}, False)  # the clock alone: no topic to find
