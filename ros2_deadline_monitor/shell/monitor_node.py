"""The ``monitor`` node: live deadline statistics per topic next to the real time factor.

Parameters become core configs (``parameters.py``); each target topic gets a raw
subscription whose callback only records (``subscriptions.py``); a steady-clock timer turns
the recorded events into reports, ``MonitorStats`` on ``~/stats`` (``conversions.py``) and
``/diagnostics`` (``diagnostics.py``). The timer runs on steady time so a frozen ``/clock``
is still reported (DESIGN.md §7).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
import difflib
import math
import signal
import sys
import threading
import time
from typing import Any

from rcl_interfaces.msg import SetParametersResult
import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.duration import Duration
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions
from rclpy.time import Time
from rclpy.utilities import remove_ros_args
from rosgraph_msgs.msg import Clock as ClockMsg

from ros2_deadline_monitor.core.config import NS_PER_S
from ros2_deadline_monitor.core.errors import ConfigError, MonitorError
from ros2_deadline_monitor.core.host import HostSampler
from ros2_deadline_monitor.core.levels import clock_level, host_level
from ros2_deadline_monitor.core.parameters import (
    all_names,
    GLOBAL_SPECS,
    MonitorSettings,
    parse_topic_ids,
    settings_from,
    split_topic_param,
    topic_config_from,
    TOPICS,
    USE_SIM_TIME,
)
from ros2_deadline_monitor.core.reports import Level
from ros2_deadline_monitor.core.rtf import RtfAnalyzer
from ros2_deadline_monitor.core.snapshot import (
    ClockSnapshot,
    HostSnapshot,
    Receive,
    Snapshot,
    TopicSnapshot,
)
from ros2_deadline_monitor.msg import MonitorStats
from ros2_deadline_monitor.shell import conversions, diagnostics
from ros2_deadline_monitor.shell.message_types import import_message, MessageTypeError
from ros2_deadline_monitor.shell.parameters import (
    coerce_integers,
    current_values,
    declare_globals,
    declare_topic,
)
from ros2_deadline_monitor.shell.qos import CLOCK_QOS, STATS_QOS
from ros2_deadline_monitor.shell.subscriptions import TopicMonitor, TopicState
from ros2_deadline_monitor.shell.summary import summary_text

NODE_NAME = 'deadline_monitor'
STATS_TOPIC = '~/stats'
POLL_PERIOD_S = 0.5
"""How often the graph is checked for topics that do not exist yet (steady clock)."""
STARVED_FRACTION = 0.5
"""The host status warns when the stats timer fired later than this fraction of its period."""
SPIN_TIMEOUT_S = 0.1
"""Longest wait before a SIGINT/SIGTERM is noticed."""
SIMULATOR_RTF_TYPES = ('std_msgs/msg/Float32', 'std_msgs/msg/Float64')
EXIT_CONFIG_ERROR = 2
FINAL_ACK_TIMEOUT_NS = NS_PER_S
"""Longest wait at shutdown for subscribers to acknowledge the final stats."""

_GLOBAL_NAMES = frozenset(spec.name for spec in GLOBAL_SPECS)


class StartupError(MonitorError):
    """The monitor cannot start: invalid global settings or no valid topic left."""


class MonitorNode(Node):
    """Monitors the configured topics and the clock; see the module docstring."""

    def __init__(self, node_name: str = NODE_NAME, **kwargs: Any) -> None:
        """Declare and check the parameters, then set up subscriptions and timers.

        Raises ``StartupError`` when a monitor-wide setting is invalid or when topics are
        listed but none of them has valid settings.
        """
        super().__init__(node_name, **kwargs)
        self._declaring = False
        self._topics: dict[str, TopicMonitor] = {}
        self._invalid: dict[str, str] = {}
        self._skipped_ids: dict[str, str] = {}
        self._declare_errors: dict[str, dict[str, str]] = {}
        self._simulator_rtf = math.nan
        self._simulator_rtf_sub = None
        self._start_wall_ns = time.time_ns()
        self._last_snapshot: Snapshot | None = None
        self._stats_late_ns = 0
        self._reset_logged_ns = -(1 << 62)
        self._resets_unlogged = 0

        self._declaring = True
        try:
            errors = declare_globals(self)
        finally:
            self._declaring = False
        if errors:
            raise StartupError('invalid parameter value: ' + '; '.join(errors))
        try:
            self._settings = settings_from(current_values(self, _GLOBAL_NAMES))
        except ConfigError as err:
            raise StartupError(str(err)) from None
        topic_ids = self._startup_topic_ids()
        for topic_id in topic_ids:
            self._declare_topic(topic_id)
        self._rtf = RtfAnalyzer(bin_ns=self._settings.analysis.rtf_bin_ns)
        self._host = HostSampler()
        self._reader = self._create_reader()
        self._reconcile()
        self._warn_unknown_parameters(topic_ids)
        if (topic_ids or self._skipped_ids) and not self._topics:
            raise StartupError('none of the configured topics has valid settings: '
                               + '; '.join([*self._skipped_ids.values(),
                                            *self._invalid.values()]))
        if not topic_ids:
            self.get_logger().warning(
                f'no topics configured (parameter {TOPICS}): monitoring the clock only')

        self.add_pre_set_parameters_callback(coerce_integers)
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        self._stats_publisher = self.create_publisher(MonitorStats, STATS_TOPIC, STATS_QOS)
        self._diagnostics = diagnostics.DiagnosticsOutput(self, self._settings.hardware_id)
        # In batched mode /clock is taken with the topics, first, so their events find the
        # sim time they happened at (its queue holds a second of a 1 kHz clock).
        clock_node = self._reader if self._reader is not None else self
        self._clock_sub = clock_node.create_subscription(
            ClockMsg, self._settings.clock_topic, self._on_clock, CLOCK_QOS)
        if self._reader is not None:
            # Under use_sim_time rclpy's TimeSource takes /clock with one executor callback
            # per message (a quarter of a core at 1 kHz here) only to set this node's ROS time.
            # The batched takes already read every sample: they set it (take_all) instead.
            self._time_source.detach_node()
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._stats_timer = None
        self._stats_expected_ns = 0
        self._start_stats_timer()
        self._poll_timer = self.create_timer(POLL_PERIOD_S, self._poll, clock=self._steady)
        if self._reader is not None:
            self._take_timer = self.create_timer(
                self._settings.take_period_ns / NS_PER_S, self.take_all, clock=self._steady)
        self._poll()
        path = ('through diagnostic_updater' if self._diagnostics.uses_updater
                else 'published directly')
        self.get_logger().info(
            f'monitoring {len(self._topics)} topic(s), stats every '
            f'{self._settings.stats_period_ns / NS_PER_S:g} s on steady time, diagnostics '
            f'{path}')

    # -- configuration -------------------------------------------------------------------

    @property
    def settings(self) -> MonitorSettings:
        """The monitor-wide settings in force."""
        return self._settings

    @property
    def topic_monitors(self) -> dict[str, TopicMonitor]:
        """The monitored topics by identifier."""
        return dict(self._topics)

    def _use_sim_time(self) -> bool:
        return bool(self.get_parameter(USE_SIM_TIME).value)

    def _topic_ids(self) -> list[str]:
        return list(self.get_parameter(TOPICS).value or [])

    def _startup_topic_ids(self) -> list[str]:
        """Return the valid identifiers of ``topics``; skip (and report) the others.

        At start-up a bad entry (not an identifier, listed twice) must not stop the
        monitoring of the good ones; ``topics`` is set to the valid list. At run time a bad
        list is rejected instead (``_validate_parameters``).
        """
        listed = list(self.get_parameter(TOPICS).value or [])
        valid: list[str] = []
        for topic_id in listed:
            try:
                parse_topic_ids([*valid, topic_id])
            except ConfigError as err:
                self._skipped_ids[str(topic_id)] = str(err)
                self.get_logger().error(f'topic {topic_id!r} is not monitored: {err}')
                continue
            valid.append(topic_id)
        if self._skipped_ids:
            self.set_parameters([Parameter(TOPICS, Parameter.Type.STRING_ARRAY, valid)])
        return valid

    def _warn_unknown_parameters(self, topic_ids: Sequence[str]) -> None:
        """Name every parameter given (params file, -p) that this node does not use.

        rclpy ignores overrides of undeclared parameters silently, so a typo such as
        ``topic.cmd.perod_ms`` would leave the default in force without a word.
        """
        known = set(self._parameters)
        for name in sorted(set(self._parameter_overrides) - known):
            if name.startswith('qos_overrides.'):
                continue
            parts = name.split('.')
            if (len(parts) == 3 and parts[0] == 'topic' and parts[1] not in topic_ids
                    and split_topic_param(name)):
                self.get_logger().warning(
                    f'parameter {name} is ignored: {parts[1]!r} is not in {TOPICS} (it is '
                    f'used if {parts[1]!r} is added to {TOPICS} at run time)')
                continue
            close = difflib.get_close_matches(name, known, n=1)
            hint = f' (did you mean {close[0]}?)' if close else ''
            self.get_logger().warning(f'parameter {name} is unknown and ignored{hint}')

    def _declare_topic(self, topic_id: str) -> None:
        self._declaring = True
        try:
            errors = declare_topic(self, topic_id)
        finally:
            self._declaring = False
        if errors:
            self._declare_errors[topic_id] = {e.split(':', 1)[0]: e for e in errors}

    def _values(self, topic_ids: Sequence[str]) -> dict[str, Any]:
        return current_values(self, all_names(topic_ids))

    def _reconcile(self) -> None:
        """Make the running topics match the parameters: add, remove, reconfigure."""
        topic_ids = self._topic_ids()
        values = self._values(topic_ids)
        use_sim_time = self._use_sim_time()
        desired = {}
        invalid = {}
        owners: dict[str, str] = {}
        for topic_id in topic_ids:
            errors = self._declare_errors.get(topic_id)
            try:
                if errors:
                    raise ConfigError('; '.join(errors.values()))
                config = topic_config_from(topic_id, values, use_sim_time,
                                           self.resolve_topic_name)
                if config.topic in owners:
                    raise ConfigError(f'{config.topic} is already monitored as '
                                      f'{owners[config.topic]!r}')
            except ConfigError as err:
                invalid[topic_id] = str(err)
                continue
            owners[config.topic] = topic_id
            desired[topic_id] = config
        for topic_id, reason in invalid.items():
            if self._invalid.get(topic_id) != reason:
                self.get_logger().error(f'topic {topic_id!r} is not monitored: {reason}')
        self._invalid = invalid

        settings = self._settings
        for topic_id in list(self._topics):
            monitor = self._topics[topic_id]
            config = desired.get(topic_id)
            if config is None or config.topic != monitor.config.topic:
                monitor.close()
                del self._topics[topic_id]
                if config is None:
                    self.get_logger().info(f'{topic_id}: no longer monitored')
        for topic_id, config in desired.items():
            monitor = self._topics.get(topic_id)
            if monitor is None:
                self._topics[topic_id] = TopicMonitor(
                    self, config, settings.analysis, settings.stats_period_ns,
                    settings.arrival_timestamp, self._reader, settings.take_period_ns,
                    settings.take_queue_depth)
            elif config != monitor.config:
                monitor.reconfigure(config, settings.analysis, settings.stats_period_ns)
                self.get_logger().info(f'{topic_id}: settings changed')

    def _validate_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        """Reject a change that would give an invalid configuration; nothing is applied here."""
        if self._declaring:
            return SetParametersResult(successful=True)
        changed = {p.name: p.value for p in parameters}
        topic_ids = self._topic_ids()
        values = self._values(topic_ids)
        values.update(changed)
        try:
            if _GLOBAL_NAMES & changed.keys():
                settings_from(values)
            new_ids = parse_topic_ids(values.get(TOPICS))
            touched = {split[0] for split in map(split_topic_param, changed) if split}
            if USE_SIM_TIME in changed:
                touched.update(new_ids)
            check_all = TOPICS in changed or bool(touched)
            owners: dict[str, str] = {}
            for topic_id in new_ids:
                if topic_id in self._invalid and topic_id not in touched:
                    continue
                try:
                    config = topic_config_from(topic_id, values, bool(values.get(USE_SIM_TIME)),
                                               self.resolve_topic_name)
                except ConfigError:
                    if topic_id in touched:
                        raise
                    continue
                if check_all and config.topic in owners:
                    raise ConfigError(f'topic.{topic_id}.name: {config.topic} is already '
                                      f'monitored as {owners[config.topic]!r}')
                owners[config.topic] = topic_id
        except ConfigError as err:
            return SetParametersResult(successful=False, reason=str(err))
        return SetParametersResult(successful=True)

    def _apply_parameters(self, parameters: list[Parameter]) -> None:
        """Apply an accepted change; it takes effect from the next processed event on."""
        if self._declaring:
            return
        names = {p.name for p in parameters}
        for name in names:
            split = split_topic_param(name)
            if split and split[0] in self._declare_errors:
                self._declare_errors[split[0]].pop(name, None)
                if not self._declare_errors[split[0]]:
                    del self._declare_errors[split[0]]
        if TOPICS in names:
            self._skipped_ids.clear()
            for topic_id in self._topic_ids():
                self._declare_topic(topic_id)
        if _GLOBAL_NAMES & names:
            old = self._settings
            self._settings = settings_from(current_values(self, _GLOBAL_NAMES))
            if self._settings.stats_period_ns != old.stats_period_ns:
                self._start_stats_timer()
            if self._settings.hardware_id != old.hardware_id:
                self._diagnostics.set_hardware_id(self._settings.hardware_id)
        self._reconcile()
        for monitor in self._topics.values():
            if monitor.state is TopicState.WAITING:
                monitor.poll()

    # -- batched takes (subscriptions.py) -------------------------------------------------

    def _create_reader(self) -> Node | None:
        """Return the node that holds the batched subscriptions; no executor spins it.

        It ignores global arguments so a ``__node`` remap does not give it the main name;
        topic names reach it already resolved (and remapped) by this node.
        """
        if self._settings.take_period_ns <= 0:
            return None
        return Node(f'{self.get_name()}_reader', namespace=self.get_namespace(),
                    context=self.context, use_global_arguments=False,
                    start_parameter_services=False, enable_rosout=False)

    def take_all(self) -> int:
        """Take every queued /clock sample, then every topic's messages; return how many."""
        taken = 0
        if self._reader is not None:
            handle = self._clock_sub.handle
            samples = []
            while (sample := handle.take_message(ClockMsg, False)) is not None:
                samples.append(sample)
            # A reader's queue is ordered per writer: with several /clock publishers, replay
            # the samples in the order they arrived, as the per-message callback saw them.
            samples.sort(key=lambda sample: sample[1]['received_timestamp'])
            for msg, info in samples:
                self._on_clock(msg, info)
            if samples:
                self.get_clock().set_ros_time_override(Time.from_msg(samples[-1][0].clock))
            taken = len(samples)
        return taken + sum(monitor.take() for monitor in self._topics.values())

    def destroy_node(self) -> None:
        """Destroy the subscriptions and the reader node with this node."""
        for monitor in self._topics.values():
            monitor.close()
        if self._reader is not None:
            self._reader.destroy_node()
            self._reader = None
        super().destroy_node()

    # -- callbacks -----------------------------------------------------------------------

    def _on_clock(self, msg: ClockMsg, info: dict[str, Any]) -> None:
        """Record one /clock sample; on a sim-time reset, reset every topic's sim state.

        The topics only note the reset's wall time (O(1)) and apply it when they next
        process their events, so a storm of resets (two /clock publishers that disagree)
        does not starve the monitor; the warning is logged once per stats period at most.
        """
        sim_ns = msg.clock.sec * NS_PER_S + msg.clock.nanosec
        received = info['received_timestamp']
        if not self._rtf.record(received, sim_ns):
            return
        for monitor in self._topics.values():
            monitor.analyzer.reset_sim(self._rtf, at_wall_ns=received)
        self._resets_unlogged += 1
        now = time.monotonic_ns()
        if now - self._reset_logged_ns >= self._settings.stats_period_ns:
            more = (f' ({self._resets_unlogged - 1} more since the last warning)'
                    if self._resets_unlogged > 1 else '')
            self.get_logger().warning(
                f'sim time jumped back to {sim_ns / NS_PER_S:.3f} s (simulator reset){more}: '
                'sim-time state of every topic was reset')
            self._reset_logged_ns = now
            self._resets_unlogged = 0

    def _on_simulator_rtf(self, msg: Any) -> None:
        self._simulator_rtf = float(msg.data)

    def _poll(self) -> None:
        """Look for topics that do not exist yet and check the ones that do."""
        for monitor in self._topics.values():
            monitor.poll()
        if self._settings.simulator_rtf_topic and self._simulator_rtf_sub is None:
            self._poll_simulator_rtf()

    def _poll_simulator_rtf(self) -> None:
        topic = self._settings.simulator_rtf_topic
        types = {p.topic_type for p in self.get_publishers_info_by_topic(topic)}
        if len(types) != 1:
            return
        type_name = types.pop()
        if type_name not in SIMULATOR_RTF_TYPES:
            self._settings = replace(self._settings, simulator_rtf_topic='')
            self.get_logger().error(
                f'simulator_rtf_topic {topic} has type {type_name}; expected one of '
                f'{", ".join(SIMULATOR_RTF_TYPES)}: ignored')
            return
        try:
            msg_class = import_message(type_name)
        except MessageTypeError as err:
            self.get_logger().error(f'simulator_rtf_topic: {err}')
            return
        self._simulator_rtf_sub = self.create_subscription(
            msg_class, topic, self._on_simulator_rtf, CLOCK_QOS)

    def _start_stats_timer(self) -> None:
        if self._stats_timer is not None:
            self.destroy_timer(self._stats_timer)
        self._stats_timer = self.create_timer(
            self._settings.stats_period_ns / NS_PER_S, self._on_stats_timer, clock=self._steady)
        self._stats_expected_ns = time.monotonic_ns() + self._stats_timer.time_until_next_call()

    def _on_stats_timer(self) -> None:
        now_mono = time.monotonic_ns()
        self._stats_late_ns = max(0, now_mono - self._stats_expected_ns)
        until = self._stats_timer.time_until_next_call()
        if until is not None:
            self._stats_expected_ns = now_mono + until
        self.publish_stats()

    # -- reporting -----------------------------------------------------------------------

    def publish_stats(self) -> MonitorStats:
        """Report every topic, the clock and the host; publish stats and diagnostics.

        Builds one ``Snapshot`` and hands it to the sinks (until the session builds it).
        """
        self.take_all()
        now = time.time_ns()
        settings = self._settings
        analysis = settings.analysis
        thresholds = analysis.thresholds
        clock_report = self._rtf.report(now)
        rtf = None if math.isnan(clock_report.rtf) else clock_report.rtf
        if rtf is None and self._rtf.has_samples and clock_report.messages == 0:
            rtf = 0.0  # /clock stopped: no sim time passed in this window
        clock = self._rtf if self._rtf.has_samples else None

        topics = []
        for topic_id, monitor in self._topics.items():
            report = monitor.analyzer.report(now, clock, writers=monitor.writers)
            monitor.note_report(report.interval_wall.max_ns, report.interval_sim.max_ns)
            if monitor.state is TopicState.ERROR:
                level, text = Level.ERROR, monitor.reason
            elif monitor.state is TopicState.WAITING and report.messages_total == 0:
                level, text = Level.STALE, monitor.reason
            else:
                level, text = monitor.analyzer.level(report, thresholds, now, rtf)
            publishers = tuple(sorted(
                f'{p.node_namespace.rstrip("/")}/{p.node_name}'
                for p in self.get_publishers_info_by_topic(monitor.config.topic)))
            topics.append(TopicSnapshot(
                topic_id, report.topic, monitor.type_name, level, text, report, publishers,
                _receive(monitor), monitor.max_interval_wall_ns, monitor.max_interval_sim_ns))
        for topic_id, reason in [*self._invalid.items(), *self._skipped_ids.items()]:
            topics.append(TopicSnapshot(topic_id, '', '', Level.ERROR,
                                        f'invalid configuration: {reason}', None))

        clock_lvl, clock_text = clock_level(clock_report, thresholds, now, analysis.target_rtf,
                                            self._use_sim_time())
        clock_publishers = self.count_publishers(settings.clock_topic)
        clock_lvl, clock_text = _several_clocks(clock_lvl, clock_text, clock_publishers,
                                                clock_report.resets, settings.clock_topic)

        host_report = self._host.sample(time.monotonic_ns())
        host_lvl, host_text = host_level(host_report)
        if self._stats_late_ns > STARVED_FRACTION * settings.stats_period_ns:
            host_lvl = max(host_lvl, Level.WARN)
            host_text += (f'; stats timer fired {self._stats_late_ns / 1e6:.0f} ms late '
                          '(monitor starved of CPU)')

        snapshot = Snapshot(
            wall_ns=now, start_wall_ns=self._start_wall_ns,
            arrival_timestamp=settings.arrival_timestamp, topics=tuple(topics),
            clock=ClockSnapshot(settings.clock_topic, clock_report, clock_lvl, clock_text,
                                analysis.target_rtf, self._use_sim_time(), clock_publishers,
                                self._simulator_rtf),
            host=HostSnapshot(host_report, host_lvl, host_text, self._stats_late_ns))
        stats = conversions.monitor_stats(snapshot)
        self._stats_publisher.publish(stats)
        self._diagnostics.publish(diagnostics.statuses(snapshot, settings.hardware_id))
        self._last_snapshot = snapshot
        return stats

    def finish(self) -> str:
        """Publish a final report and return the one-screen summary (also logged).

        Waits (boundedly) until subscribers acknowledged the final messages: the process
        exits right after, and reliable data still in flight would be lost with the writer.
        """
        self.publish_stats()
        timeout = Duration(nanoseconds=FINAL_ACK_TIMEOUT_NS)
        self._stats_publisher.wait_for_all_acked(timeout)
        self._diagnostics.flush(timeout)
        text = summary_text(self.get_name(), self._last_snapshot)
        self.get_logger().info(text)
        return text


def _receive(monitor: TopicMonitor) -> Receive:
    """How a topic's messages are received (a stopgap until the adapter reports it)."""
    if monitor._drain is None:
        return Receive('callback')
    return Receive('batched', monitor._take_period_ns, monitor.depth,
                   monitor.queue_overflows)


def _several_clocks(level: Level, text: str, publishers: int, resets: int,
                    clock_topic: str) -> tuple[Level, str]:
    """Name several /clock publishers: WARN, ERROR when sim time also jumped back.

    Two simulators (or a simulator and a bag player) on one /clock make sim time alternate
    between them: every sample a 'reset'. The count of publishers says why.
    """
    if publishers <= 1:
        return level, text
    if resets:
        return Level.ERROR, (f'{publishers} publishers on {clock_topic} disagree: sim time '
                             f'jumped back {resets} time(s) in this window; {text}')
    return max(level, Level.WARN), f'{publishers} publishers on {clock_topic}; {text}'


def build_parser() -> argparse.ArgumentParser:
    """Return the command line parser; settings are ROS parameters (-p, --params-file)."""
    return argparse.ArgumentParser(
        prog='monitor',
        description='Monitor deadline misses, skipped periods and intervals of ROS 2 topics '
                    'next to the real time factor; publishes ~/stats and /diagnostics.',
        epilog='Example: monitor --ros-args --params-file config/monitor.yaml '
               '-p use_sim_time:=true')


def main(argv: list[str] | None = None) -> int:
    """Run the monitor until SIGINT/SIGTERM; exit 2 when the configuration is unusable."""
    args = sys.argv if argv is None else [sys.argv[0], *argv]
    build_parser().parse_args(remove_ros_args(args)[1:])
    stop = threading.Event()
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    previous = {sig: signal.signal(sig, lambda *_: stop.set())
                for sig in (signal.SIGINT, signal.SIGTERM)}
    node = None
    try:
        try:
            node = MonitorNode()
        except StartupError as err:
            print(f'ERROR: {err}', file=sys.stderr)
            return EXIT_CONFIG_ERROR
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while not stop.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=SPIN_TIMEOUT_S)
        if rclpy.ok():
            node.finish()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
