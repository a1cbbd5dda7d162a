"""Diagnostic statuses from a snapshot, and their way onto ``/diagnostics``.

One status per monitored topic (``<node>: topic <id>``), one for the clock (``<node>:
clock``) and one for the host (``<node>: host``). No ``/`` appears in a status name:
``rqt_robot_monitor`` splits names on it to build its tree. The keys, their units and their
order come from the table of figures (``analysis/figures.py``): headline figures first, nothing
that has nothing to measure.

The statuses are built once, here, and published as one array at every report, assembled
from kept bytes (``serialized.Assembler``). With ``diagnostic_updater`` installed the updater
owns ``/diagnostics``: its publisher, its parameters and its status names (``use_fqn``). Its
tasks are not used: one task per status would rebuild every status and have rclpy convert
the whole array at every report (31 ms for a thousand topics, against 1.7 ms assembled), and
each new task would announce an OK "Node starting up" before the topic's real level. Its
own timer (on the node's clock: sim time under ``use_sim_time``) would publish an empty
array every period; it is destroyed right after construction.
"""

from __future__ import annotations

from collections.abc import Sequence
import re
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import QoSProfile

from ros2_deadline_monitor.analysis import figures
from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.analysis.snapshot import Snapshot, TopicSnapshot
from ros2_deadline_monitor.configuration.expectations import CLOCK_SUBJECT, Outcome, Verdict
from ros2_deadline_monitor.outputs.conversions import stamp
from ros2_deadline_monitor.outputs.format import figure_text
from ros2_deadline_monitor.outputs.optional import diagnostic_updater
from ros2_deadline_monitor.outputs.reuse import Reuse
from ros2_deadline_monitor.outputs.serialized import Assembler

DIAGNOSTICS_TOPIC = '/diagnostics'
DIAGNOSTICS_DEPTH = 10
CLOCK_STATUS = 'clock'
HOST_STATUS = 'host'
_NOT_IN_NAME = re.compile(r'\W')


def topic_status_name(topic_id: str) -> str:
    """Return the status name of a topic, without the node prefix and without any '/'.

    rqt_robot_monitor splits names on '/' to build its tree; an invalid identifier from the
    configuration may hold one.
    """
    return 'topic ' + _NOT_IN_NAME.sub('_', topic_id)


def level_byte(level: Level | int) -> bytes:
    """Return a level as the ``byte`` the DiagnosticStatus message field holds."""
    return bytes([int(level)])


def make_status(name: str, level: Level, message: str, hardware_id: str,
                values: Sequence[tuple[str, str]]) -> DiagnosticStatus:
    """Build one status (name without the node prefix; the output adds it)."""
    return DiagnosticStatus(level=level_byte(level), name=name, message=message,
                            hardware_id=hardware_id,
                            values=[KeyValue(key=k, value=v) for k, v in values])


TRANSFORMS_IN_STATUS = 100
"""Transforms listed in a /tf-like topic's status (one key each); the rest are counted."""
TRANSFORM_KEY = 'transform '
EXPECTATIONS_KEY = 'expectations'
EXPECTATION_FAILED_KEY = 'expectation failed: '


LEAD = 5
"""The table's first topic figures stay first: misses, skipped, max intervals, RTF."""
JUDGED_BY = ('rule', 'timer clock', 'period', 'period source', 'deadline', 'start source')
"""Figures that say how a topic is judged, next among its keys: rqt_robot_monitor's inspector
shows them near the level. Two monitors on different clocks judge by different rules and read
other counts; the reason was the 60th of 71 keys."""
TOPIC_KEYS = (*figures.TOPIC[:LEAD], *sorted(figures.TOPIC[LEAD:], key=lambda figure: (
    JUDGED_BY.index(figure.name) if figure.name in JUDGED_BY else len(JUDGED_BY))))
"""The topic figures in the order of a status: the lead, ``JUDGED_BY``, the table's order."""


def key_values(table: Sequence[figures.Figure], snapshot: Snapshot,
               part: object) -> list[tuple[str, str]]:
    """Key/value pairs of ``part`` in table order, leaving out what has nothing to measure."""
    pairs = []
    for figure in table:
        text = figure_text(figure, snapshot, part)
        if text is not None:
            pairs.append((figure.key, text))
    return pairs


def transform_values(snapshot: Snapshot, topic: TopicSnapshot) -> list[tuple[str, str]]:
    """Keys of a /tf-like topic's transforms: ``transform <parent>-><child>`` each, one value.

    The value lists the figures of ``figures.TRANSFORM_STATUS`` (rate, max interval, silence,
    age, messages) with their units, so rqt_robot_monitor shows a transform per line; at most
    ``TRANSFORMS_IN_STATUS`` of them, sorted by parent then child, the rest counted.
    """
    transforms = topic.transforms
    if transforms is None:
        return []
    listed = transforms.transforms[:TRANSFORMS_IN_STATUS]
    kind = 'static' if transforms.static else 'tracked'
    values = [('transforms', f'{len(transforms.transforms)} {kind}')]
    if transforms.writer_note:
        values.append(('transforms writer', f'unknown: {transforms.writer_note}'))
    for tf in listed:
        parts = []
        for figure in figures.TRANSFORM_STATUS:
            text = figure_text(figure, snapshot, tf)
            if text is not None:
                parts.append(f'{figure.key} {text}')
        if tf.writer is not None:
            parts.append(f'writer {tf.writer}')
        values.append((TRANSFORM_KEY + tf.name, ', '.join(parts)))
    if len(transforms.transforms) > len(listed):
        values.append(('transforms not listed', str(len(transforms.transforms) - len(listed))))
    return values


def expectation_values(outcomes: Sequence[Outcome]) -> list[tuple[str, str]]:
    """Keys of one subject's expectations over the run so far; none without expectations.

    ``expectations``: how many hold and fail; then ``expectation failed: <key>`` per failed
    one, with the measured value and the limit. They do not change the level: the level is
    about the current window, the expectations about the whole run (the exit code gates).
    """
    if not outcomes:
        return []
    failed = [o for o in outcomes if not o.passed]
    values = [(EXPECTATIONS_KEY, f'{len(outcomes) - len(failed)} held, {len(failed)} failed')]
    for outcome in failed:
        text = (f'{outcome.figure} {outcome.measured_text}, expected {outcome.limit_text}')
        values.append((EXPECTATION_FAILED_KEY + outcome.key,
                       f'{text}: {outcome.reason}' if outcome.reason else text))
    return values


def statuses(snapshot: Snapshot, hardware_id: str = '',
             verdict: Verdict | None = None,
             cache: Reuse[TopicSnapshot, DiagnosticStatus] | None = None
             ) -> list[DiagnosticStatus]:
    """One status per topic, one for the clock, one for the host, keys from the figure table.

    A topic without a report (invalid configuration) has only its reason as message.
    ``verdict`` (the expectations over the run so far) adds its keys to each topic's and the
    clock's status (``expectation_values``). ``cache``: the statuses of the previous call,
    by topic snapshot: a standing topic's (the same snapshot object, ``outputs/reporter.py``)
    with the same expectation keys is reused.
    """
    outcomes = verdict.outcomes if verdict is not None else ()

    def about(subject: str) -> list[tuple[str, str]]:
        if not outcomes:
            return []
        return expectation_values([o for o in outcomes if o.topic_id == subject])

    def make(topic: TopicSnapshot) -> DiagnosticStatus:
        values = ([] if topic.report is None
                  else key_values(TOPIC_KEYS, snapshot, topic)
                  + transform_values(snapshot, topic))
        return make_status(topic_status_name(topic.topic_id), topic.level, topic.reason,
                           hardware_id, values + about(topic.topic_id))

    topics = snapshot.topics
    if cache is None:
        result = [make(topic) for topic in topics]
    else:
        expected = [tuple(about(topic.topic_id)) for topic in topics] if outcomes else None
        result = cache(topics, make, expected)
    clock, host = snapshot.clock, snapshot.host
    result.append(make_status(CLOCK_STATUS, clock.level, clock.reason, hardware_id,
                              key_values(figures.CLOCK, snapshot, clock)
                              + about(CLOCK_SUBJECT)))
    result.append(make_status(HOST_STATUS, host.level, host.reason, hardware_id,
                              key_values(figures.HOST, snapshot, host)))
    return result


class DiagnosticsOutput:
    """Publishes the statuses on ``/diagnostics``, on the updater's publisher if installed."""

    def __init__(self, node: Node, hardware_id: str, use_updater: bool = True,
                 assembler: Assembler | None = None, reuse: bool = True) -> None:
        """Create the publisher, or the updater (its own timer destroyed) and take its publisher.

        ``assembler``: publish the array as bytes assembled from kept statuses. ``reuse``
        False: every status is made and copied afresh at every report (``reuse_reports``).
        """
        self._node = node
        self._assembler = assembler
        self._hardware_id = hardware_id
        self._published: Reuse[DiagnosticStatus, DiagnosticStatus] | None = (
            Reuse() if reuse else None)
        """The prefixed copies of the previous array's statuses."""
        self._status_cache: Reuse[TopicSnapshot, DiagnosticStatus] | None = (
            Reuse() if reuse else None)
        """The topic statuses of the previous report, by snapshot (``statuses``)."""
        self._updater = None
        if use_updater and diagnostic_updater is not None:
            updater = diagnostic_updater.Updater(node)
            # Its timer follows the node clock (sim time): never let it fire.
            node.destroy_timer(updater.timer)
            self._updater = updater
            self._publisher = updater.publisher
            self._prefix = updater.node_name + ': '
        else:
            self._publisher = node.create_publisher(
                DiagnosticArray, DIAGNOSTICS_TOPIC, QoSProfile(depth=DIAGNOSTICS_DEPTH))
            self._prefix = node.get_name() + ': '

    @property
    def uses_updater(self) -> bool:
        """Tell whether diagnostic_updater owns /diagnostics (else the monitor itself does)."""
        return self._updater is not None

    def set_hardware_id(self, hardware_id: str) -> None:
        """Change the hardware_id of every following status."""
        self._hardware_id = hardware_id
        if self._published is not None:
            self._published.clear()

    def publish_report(self, snapshot: Snapshot, verdict: Verdict | None) -> None:
        """Publish a report's statuses (``statuses``), an unchanged topic's kept from before."""
        self.publish(statuses(snapshot, verdict=verdict, cache=self._status_cache),
                     snapshot.wall_ns)

    def publish(self, statuses: Sequence[DiagnosticStatus], wall_ns: int | None = None) -> None:
        """Publish one array holding exactly ``statuses`` (names without the node prefix).

        A status object passed again (a standing topic's, ``statuses``) reuses its published
        copy. The array is stamped with the report's wall time (``wall_ns``, the system
        clock; now when None), as ``~/stats`` is: one clock for every output, under sim time
        too (a paused simulator does not stop the reports, and a sim stamp would not say when
        they were made).
        """
        hardware_id, prefix = self._hardware_id, self._prefix

        def published(status: DiagnosticStatus) -> DiagnosticStatus:
            return DiagnosticStatus(level=status.level, name=prefix + status.name,
                                    message=status.message, hardware_id=hardware_id,
                                    values=status.values)

        array = DiagnosticArray(status=[published(status) for status in statuses]
                                if self._published is None
                                else self._published(statuses, published))
        array.header.stamp = stamp(time.time_ns() if wall_ns is None else wall_ns)
        self._publisher.publish(array if self._assembler is None
                                else self._assembler.payload(array))

    def flush(self, timeout: Duration) -> None:
        """Wait until subscribers acknowledged what was published (before shutting down)."""
        self._publisher.wait_for_all_acked(timeout)
