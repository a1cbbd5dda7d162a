"""A topic whose type changes between runs of its publisher.

Two publishers with different types at once are covered by
``test/live/test_monitor_discovery.py::test_a_topic_with_two_types_is_an_error_and_the_others_keep_running``.
Here the publisher process of ``/changing`` stops and a new one starts with another type, as
after a rebuild or with a second launch file that reuses the name: the figures of two types
must not be mixed, so the topic stays ERROR, naming both types, until the original type is
back; the other topic keeps being monitored throughout.
"""

from __future__ import annotations

from own_names import ns  # test/plugins: the test's own names

OK, WARN, ERROR = 0, 1, 2
DISCOVERY_TIMEOUT_S = 60.0
"""Bound on a publisher process appearing in or leaving the graph.

A Python process with rclpy starts and is discovered in about 1 s on an idle 2-core machine;
with both cores busy several times over it took more than 10 s. 60 s is a bound, not a wait.
"""


def _types(node, topic: str) -> list[str]:
    return sorted(info.topic_type for info in node.get_publishers_info_by_topic(topic))


def test_type_change_between_runs_is_a_lasting_error_and_others_keep_running(
        publisher_process, observer, start_monitor, wait_for, capfd):
    stop = publisher_process.stop
    monitor = start_monitor(topics=['changing', 'good'], topic__changing__name=ns('/changing'),
                  topic__good__name=ns('/good'), stats_period_s=0.2)
    publisher_process(ns('/good'), 'std_msgs.msg.Header', 'good_producer')
    first = publisher_process(ns('/changing'), 'std_msgs.msg.Header', 'changing_producer')
    before = wait_for(lambda: (t := observer.topic_stats('changing')) and t.messages_total > 10
                      and t, what='the first run monitored')
    # Discovered on its own: on a loaded machine seconds after /changing.
    wait_for(lambda: (t := observer.topic_stats('good')) and t.messages_total > 0,
             what='/good monitored')
    assert before.type == 'std_msgs/msg/Header'
    stop(first)

    second = publisher_process(ns('/changing'), 'std_msgs.msg.Float64', 'changing_producer')
    wait_for(lambda: 'std_msgs/msg/Float64' in _types(monitor, ns('/changing')),
             timeout=DISCOVERY_TIMEOUT_S, what='the Float64 writer in the graph')
    changed = wait_for(lambda: (t := observer.topic_stats('changing')) and t.level == ERROR
                       and 'changed' in t.status and t, what='the type change reported ERROR')
    assert 'std_msgs/msg/Header' in changed.status and 'std_msgs/msg/Float64' in changed.status
    total = changed.messages_total
    # Still ERROR many reports later: the new type is not silently adopted, nothing counted.
    count = len(observer.stats)
    wait_for(lambda: len(observer.stats) >= count + 8, what='eight more reports')
    later = observer.topic_stats('changing')
    assert later.level == ERROR, later.status
    assert later.messages_total == total and later.type == 'std_msgs/msg/Header'
    # /good counts on after the change, whatever the load did to its figures.
    good_so_far = observer.topic_stats('good').messages_total
    good = wait_for(lambda: (t := observer.topic_stats('good'))
                    and t.messages_total >= good_so_far + 10 and t, what='/good counting on')
    assert 'type' not in good.status, good.status
    log = capfd.readouterr().err
    assert log.count('changed from std_msgs/msg/Header to std_msgs/msg/Float64') == 1, log

    # The original type comes back: monitoring resumes, counting from where it was.
    assert stop(second) == 0  # a clean exit: its writer left the graph, no lease to expire
    publisher_process(ns('/changing'), 'std_msgs.msg.Header', 'changing_producer')
    wait_for(lambda: _types(monitor, ns('/changing')) == ['std_msgs/msg/Header'],
             timeout=DISCOVERY_TIMEOUT_S, what='the Float64 writer gone, the Header one there')
    # Monitoring back means the type error is gone and messages count again; the level itself
    # may be WARN or ERROR for misses, since a loaded machine makes the producer's timer late.
    back = wait_for(lambda: (t := observer.topic_stats('changing'))
                    and 'monitoring resumes when' not in t.status
                    and t.messages_total > total + 10 and t,
                    what='monitoring back with the original type')
    assert back.type == 'std_msgs/msg/Header'
    # The refusal was a gap of the monitor's own, named (never an outage of the producer's).
    assert (f'after start (refused: type of {ns("/changing")} changed from std_msgs/msg/Header to '
            "std_msgs/msg/Float64): 1 gap(s) of the monitor's own") in back.status, back.status
