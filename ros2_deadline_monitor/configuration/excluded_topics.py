"""Which topics "every topic" means: the live ``monitor --all`` and the offline ``analyze``.

Infrastructure topics carry no one's cycle (logs, parameter events, the clock the monitor
already analyzes, diagnostics, latched descriptions published once) and hidden topics belong
to the ROS 2 machinery (actions' ``_action/*``, any name component starting with ``_``); a
monitor of every topic that watched them would report them as timed out or STALE forever.
One definition, so the live monitor and the bag analyzer skip the same topics. No ROS import.
"""

from __future__ import annotations

__all__ = ['EXCLUDED_TOPICS', 'excluded_reason', 'is_hidden', 'PACKAGE_TYPE_PREFIX']

EXCLUDED_TOPICS = frozenset({
    '/clock', '/rosout', '/parameter_events', '/diagnostics', '/diagnostics_agg',
    '/diagnostics_toplevel_state', '/events/write_split', '/tf_static', '/robot_description',
})
"""Infrastructure topics that are not anyone's cycle; skipped unless named explicitly.

``/tf_static`` and ``/robot_description`` are latched: published once, they would only ever
time out. ``/events/write_split`` is rosbag2's own.
"""

PACKAGE_TYPE_PREFIX = 'ros2_deadline_monitor/'
"""Types of this package (another monitor's ``~/stats``): a monitor does not watch monitors."""


def is_hidden(topic: str) -> bool:
    """Tell whether a name is hidden: one of its components starts with ``_``.

    The rule of rclpy's ``topic_or_service_is_hidden`` (and ``ros2 topic list`` without
    ``--include-hidden-topics``); it covers actions' ``<action>/_action/feedback|status``.
    """
    return any(part.startswith('_') for part in topic.split('/'))


def excluded_reason(topic: str, types: tuple[str, ...] | list[str] = (), *,
                    clock_topic: str = '/clock', own_namespace: str = '') -> str | None:
    """Return why ``topic`` is not one of "every topic", or None when it is one.

    ``types``: the topic's types in the graph or the bag; ``clock_topic``: the clock the
    monitor analyzes anyway; ``own_namespace``: the monitor node's fully qualified name
    (``/deadline_monitor``), under which its ``~/stats`` lie.
    """
    if topic in EXCLUDED_TOPICS or topic == clock_topic:
        return 'infrastructure topic'
    if is_hidden(topic):
        return 'hidden topic'
    if own_namespace and topic.startswith(own_namespace.rstrip('/') + '/'):
        return "the monitor's own topic"
    if any(t.startswith(PACKAGE_TYPE_PREFIX) for t in types):
        return "a deadline monitor's output"
    return None
