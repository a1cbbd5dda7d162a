"""The ``monitor`` node: the live adapter around the analysis session (``analysis/session.py``).

Wiring only: parameters become configs (``configuration/parameters.py``, declared by
``parameter_declarations.py``), each target topic gets a raw subscription whose messages go
to the session's recorder (``subscriptions.py``), /clock samples go to the session, and a
timer on steady time takes the reporter's ``Snapshot`` to the outputs: ``MonitorStats`` on
``~/stats`` (``outputs/stats_output.py``), ``/diagnostics`` (``outputs/diagnostics.py``),
the final summary (``outputs/summary.py``) and, with ``metrics_port``, the ``/metrics``
endpoint (``outputs/metrics.py``). Steady time, so a frozen ``/clock`` is still reported
(docs/design.md, Outputs).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
import time
from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.parameter import Parameter

from ros2_deadline_monitor.analysis.config import NS_PER_S
from ros2_deadline_monitor.analysis.errors import (
    ConfigError,
    ExpectationError,
    MonitorError,
    os_error_text,
)
from ros2_deadline_monitor.analysis.session import Session, TopicState
from ros2_deadline_monitor.analysis.snapshot import Snapshot
from ros2_deadline_monitor.configuration.expectations import (
    evaluate,
    Expectations,
    Verdict,
)
from ros2_deadline_monitor.configuration.parameters import (
    changed_parameters,
    MonitorSettings,
    topic_param,
    TOPICS,
)
from ros2_deadline_monitor.live.discovery import create_discovery
from ros2_deadline_monitor.live.graph_poll import (
    GraphGate,
    names_needed,
    NOT_SUBSCRIBED,
    read_every,
)
from ros2_deadline_monitor.live.host_sampler import HostSampler
from ros2_deadline_monitor.live.node_parameters import NodeParameters
from ros2_deadline_monitor.live.qos import STATS_QOS
from ros2_deadline_monitor.live.subscriptions import (
    ClockInput,
    monitoring_lines,
    SimulatorRtf,
    TopicMonitor,
    waiting_line,
    WAITING_NAMES,
)
from ros2_deadline_monitor.live.take_schedule import TakeSchedule
from ros2_deadline_monitor.msg import MonitorStats
from ros2_deadline_monitor.outputs import diagnostics, metrics, summary
from ros2_deadline_monitor.outputs.gate import exit_code, FinalReport, summary_record
from ros2_deadline_monitor.outputs.reporter import Reporter
from ros2_deadline_monitor.outputs.stats_output import StatsOutput

NODE_NAME = 'deadline_monitor'
STATS_TOPIC = '~/stats'
POLL_PERIOD_S = 0.5
"""How often the graph is checked for topics that do not exist yet (steady clock)."""
FINAL_ACK_TIMEOUT_NS = NS_PER_S
"""Longest wait at shutdown for subscribers to acknowledge the final stats."""


class StartupError(MonitorError):
    """The monitor cannot start: invalid global settings or no valid topic left."""


class MonitorNode(Node):
    """Monitors the configured topics and the clock; see the module docstring."""

    def __init__(self, node_name: str = NODE_NAME, *, refused: tuple[str, ...] = (),
                 **kwargs: Any) -> None:
        """Declare and check the parameters, then set up the session, subscriptions, timers.

        Raises ``StartupError`` when a monitor-wide setting is invalid or when topics are
        listed but none of them has valid settings. ``refused`` are reasons found before the
        node existed (rclpy's own parameters of a wrong type, overridden by their defaults
        so the node can be built): named in the same error as the monitor's own.
        """
        super().__init__(node_name, **kwargs)
        self.report_sinks: list[Callable[[Snapshot], None]] = []
        """Called with each report's snapshot on the stats timer (the terminal lines)."""
        self._settings = self._declare_parameters(refused)
        self._start_analysis()
        self._start_topics()
        self._start_outputs()
        self.parameters.warn_unknown()
        self._start_inputs()
        self._start_timers()
        self._poll()
        self._start_metrics()
        self._say_started()

    def _declare_parameters(self, refused: tuple[str, ...]) -> MonitorSettings:
        """Declare the monitor-wide parameters and return their settings, or refuse them."""
        self.parameters = NodeParameters(self)
        errors = [*refused, *self.parameters.declare_globals()]
        if errors:
            raise StartupError('invalid parameter value: ' + '; '.join(errors))
        try:
            settings = self.parameters.settings()
            summary_dir = Path(settings.summary_file).resolve().parent
            if settings.summary_file and not summary_dir.is_dir():
                raise ConfigError(f'summary_file: directory {str(summary_dir)!r} of '
                                  f'{settings.summary_file!r} does not exist')
            if settings.summary_file and Path(settings.summary_file).is_dir():
                raise ConfigError(f'summary_file: {settings.summary_file!r} is a '
                                  'directory; name a file in it (e.g. summary.json)')
        except ConfigError as err:
            raise StartupError(str(err)) from None
        except OSError as err:  # a name too long, a directory it may not search
            raise StartupError(f'summary_file: {os_error_text(err)}') from None
        return settings

    def _start_analysis(self) -> None:
        """Start the session and its reporter; the host sampler and the expectations' state."""
        settings = self._settings
        self.session = Session(
            settings.analysis, use_sim_time=self.parameters.use_sim_time(),
            start_wall_ns=time.time_ns(), clock_topic=settings.clock_topic,
            arrival_timestamp=settings.arrival_timestamp,
            stats_period_ns=settings.stats_period_ns)
        self.reporter = Reporter(self.session, reuse_reports=settings.reuse_reports)
        """Decides which topics each report refreshes (``outputs/reporter.py``)."""
        self._host = HostSampler()
        self._stats_late_ns = 0
        self._expired = False
        self._verdict: Verdict | None = None

    def _start_topics(self) -> None:
        """Declare the topics and subscribe to those in the graph (``--all``: discover them).

        Refuses a start where topics are listed but none has valid settings.
        """
        settings = self._settings
        self._topics: dict[str, TopicMonitor] = {}
        self._schedule = TakeSchedule(slack_ns=settings.take_period_ns // 2)
        self._take_timer = None
        self._graph_seen: list | None = None
        """The graph of the last read when nothing but a new name can change a topic."""
        self._names_read: list | None = None
        """The graph's names and types at the last read (``_read_graph``)."""
        self._graph: dict[str, list[str]] = {}
        """The same as a dictionary, which reads that skip the names reuse."""
        self._names_needed = True
        """Whether the next graph read needs the names and types (``graph_poll.names_needed``)."""
        self._polls_to_skip = 0
        """Polls left before the graph is read again (``graph_poll.read_every``)."""
        self._graph_gate = GraphGate(self._count_in_graph)
        try:
            self._discovery = (create_discovery(self, settings.clock_topic,
                                                self.parameters.use_sim_time())
                               if settings.all_topics else None)
        except ConfigError as err:
            raise StartupError(str(err)) from None
        self._explicit: dict[str, str] = {}
        try:
            topic_ids = self.parameters.declare_startup_topics()
        except ExpectationError as err:
            raise StartupError(f'invalid expectation: {err}') from None
        try:
            self.parameters.refuse_unknown()
        except ConfigError as err:
            raise StartupError(str(err)) from None
        self._reader = self._create_reader()
        self._reconcile()
        if (topic_ids or self.parameters.skipped) and not self._topics:
            self.parameters.warn_unknown()  # a typo may be why
            raise StartupError('none of the configured topics has valid settings: '
                               + '; '.join(self.parameters.invalid_reasons().values()))
        if not topic_ids and self._discovery is None:
            self.get_logger().warning(
                f'no topics configured (parameter {TOPICS}): monitoring the clock only')
        self.parameters.route_changes(self._validate, self._apply_parameters)

    def _start_outputs(self) -> None:
        """Create the report's outputs: ``~/stats``, ``/diagnostics`` (``/metrics``: later)."""
        settings = self._settings
        self._stats_publisher = self.create_publisher(MonitorStats, STATS_TOPIC, STATS_QOS)
        self._stats_output = StatsOutput(settings.reuse_reports)
        if settings.reuse_reports and self._stats_output.assembler is None:
            self.get_logger().info('this middleware lays out CDR differently: the reports are '
                                   'published as messages, not assembled from kept bytes')
        self._diagnostics = diagnostics.DiagnosticsOutput(
            self, settings.hardware_id, use_updater=settings.use_diagnostic_updater,
            assembler=self._stats_output.assembler, reuse=settings.reuse_reports)
        self._metrics: metrics.MetricsEndpoint | None = None

    def _start_inputs(self) -> None:
        """Subscribe to /clock and the simulator's own RTF, besides the topics."""
        settings = self._settings
        self._simulator_rtf = SimulatorRtf(self, settings.simulator_rtf_topic, self.session)
        # Resolved (and remapped) here: the reader node ignores global arguments.
        self.clock_input = ClockInput(self, self._reader,
                                      self.resolve_topic_name(settings.clock_topic), self.session,
                                      settings.arrival_timestamp,
                                      lambda: self._settings.stats_period_ns)
        if self._reader is not None:
            # Under use_sim_time rclpy's TimeSource takes /clock with one executor callback
            # per message (a quarter of a core at 1 kHz here) only to set this node's ROS time.
            # The batched takes already read every sample: they set it (take_all) instead.
            self._time_source.detach_node()

    def _start_timers(self) -> None:
        """Start the timers, all on steady time: stats, graph poll, duration, takes."""
        settings = self._settings
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._stats_timer = None
        self._stats_expected_ns = 0
        self._start_stats_timer()
        self._poll_timer = self.create_timer(POLL_PERIOD_S, self._poll, clock=self._steady)
        self._duration_timer = None
        if settings.duration_ns:
            self._duration_timer = self.create_timer(
                settings.duration_ns / NS_PER_S, self._on_duration, clock=self._steady)
        if self._reader is not None:
            self._take_timer = self.create_timer(
                settings.take_period_ns / NS_PER_S, self._take_due, clock=self._steady)

    def _say_started(self) -> None:
        """Log what runs: the topics, the report period, where diagnostics and takes go."""
        settings = self._settings
        path = ('through diagnostic_updater' if self._diagnostics.uses_updater
                else 'published directly')
        self.get_logger().info(
            f'monitoring {len(self._topics)} topic(s), stats every '
            f'{settings.stats_period_ns / NS_PER_S:g} s on steady time, diagnostics {path}')
        if self._reader is not None:
            # Not on this node: the executor would rebuild its wait set over every one of
            # them at each wake-up (2.8 ms instead of 0.33 ms with 1,000 topics, measured).
            self.get_logger().debug(
                'subscriptions are taken in batches on the node '
                f'{self._reader.get_fully_qualified_name()} (see its ros2 node info)')
        self.get_logger().debug(
            f'take period {settings.take_period_ns / NS_PER_S:g} s (0: a callback per '
            f'message), take queue depth {settings.take_queue_depth or "from the rate"}, '
            f'arrival timestamp {settings.arrival_timestamp}, use_sim_time '
            f'{str(self.parameters.use_sim_time()).lower()}, clock topic '
            f'{settings.clock_topic}, summary file {settings.summary_file or "none"}')

    def _start_metrics(self) -> None:
        """Serve ``/metrics`` when ``metrics_port`` is set (and ``prometheus_client`` is there).

        A port that cannot be had stops the start-up: scraped figures from another process on
        that port would be taken for this monitor's.
        """
        settings = self._settings
        if not settings.metrics_port:
            return
        reason = metrics.unavailable()
        if reason:
            self.get_logger().warning(reason)
            return
        try:
            self._metrics = metrics.MetricsEndpoint(
                self.get_namespace(), self.get_name(), settings.metrics_bind,
                settings.metrics_port, log_error=self.get_logger().error)
        except metrics.MetricsError as err:
            self.destroy_node()
            raise StartupError(str(err)) from None
        self.get_logger().info(f'figures for Prometheus on {self._metrics.url}')

    # -- configuration -------------------------------------------------------------------

    @property
    def settings(self) -> MonitorSettings:
        """The monitor-wide settings in force."""
        return self._settings

    @property
    def topic_monitors(self) -> dict[str, TopicMonitor]:
        """The monitored topics by identifier."""
        return dict(self._topics)

    @property
    def expired(self) -> bool:
        """True once ``duration_s`` elapsed: the run is over, the caller calls ``finish``."""
        return self._expired

    def _on_duration(self) -> None:
        if self._duration_timer is not None:
            self.destroy_timer(self._duration_timer)
            self._duration_timer = None
        self._expired = True
        self.get_logger().info(
            f'duration_s ({self._settings.duration_ns / NS_PER_S:g} s) elapsed: stopping')

    def expectations(self) -> Expectations:
        """Return the expectations in force (``topic.<id>.expect.*``, ``clock.expect.*``)."""
        return self.parameters.expectations()

    def _reconcile(self) -> None:
        """Make the session and the subscriptions match the parameters (and the graph)."""
        desired = self.parameters.desired()
        # Every listed identifier stays taken, even an invalid one (it may be repaired).
        self._explicit = {topic_id: '' for topic_id in self.parameters.topic_ids()}
        self._explicit.update((topic_id, config.topic) for topic_id, config in desired.items())
        if self._discovery is not None:
            desired = self._discovery.desired(desired, self.parameters.use_sim_time())
        settings = self._settings
        old = {topic_id: monitor.config for topic_id, monitor in self._topics.items()}
        changes = self.session.configure(
            desired, self.parameters.invalid_reasons(), analysis=settings.analysis,
            use_sim_time=self.parameters.use_sim_time(),
            stats_period_ns=settings.stats_period_ns, now_wall_ns=time.time_ns())
        for topic_id in changes.removed:
            self._topics.pop(topic_id).close()
            if topic_id not in desired:
                self.get_logger().info(f'{topic_id}: no longer monitored (its figures so far '
                                       'stay in the final summary)')
        if changes.added or changes.removed or changes.changed:
            self._graph_seen, self._polls_to_skip, self._names_needed = None, 0, True
        for topic_id in changes.added:
            self._topics[topic_id] = TopicMonitor(
                self, self.session, topic_id, settings.stats_period_ns,
                settings.arrival_timestamp, self._reader, settings.take_period_ns,
                settings.take_queue_depth)
        for topic_id, names in changes.changed.items():
            self._topics[topic_id].reconfigure(old[topic_id])
            self.get_logger().info(f'{topic_id}: settings changed: '
                                   f'{", ".join(changed_parameters(topic_id, names))}')
        self._say_polled([self._topics[topic_id] for topic_id in changes.changed])
        self._update_takers()

    def _validate(self, parameters: list[Parameter]) -> SetParametersResult:
        """Reject an invalid change, and a stamp the subscribed topic's type cannot give.

        Whether ``stamp_field`` leads to a readable stamp depends on the type, known once
        the topic is subscribed: accepted, a bad one stopped the topic's counting until it
        was repaired, and the gap then counted as the producer's loss and outage.
        """
        result = self.parameters.validate(parameters)
        if not result.successful:
            return result
        changed = {p.name: p.value for p in parameters}
        for topic_id, monitor in self._topics.items():
            names = (topic_param(topic_id, 'stamp'), topic_param(topic_id, 'stamp_field'))
            if names[0] in changed or names[1] in changed:
                config = monitor.config
                reason = monitor.stamp_refusal(changed.get(names[0], config.stamp),
                                               changed.get(names[1], config.stamp_field))
                if reason:
                    return SetParametersResult(successful=False, reason=f'{names[1]}: {reason}')
        return result

    def _apply_parameters(self, parameters: list[Parameter]) -> None:
        """Apply an accepted change to what is received from now on.

        What is queued was received under the old settings: it is taken first.
        """
        self.take_all()
        if self.parameters.applied(p.name for p in parameters):
            old = self._settings
            self._settings = self.parameters.settings()
            if self._settings.stats_period_ns != old.stats_period_ns:
                self._start_stats_timer()
            if self._settings.hardware_id != old.hardware_id:
                self._diagnostics.set_hardware_id(self._settings.hardware_id)
        self._reconcile()
        waiting = [monitor for monitor in self._topics.values()
                   if monitor.state is TopicState.WAITING]
        for monitor in waiting:
            monitor.poll()
        self._say_polled(waiting)
        self._graph_seen, self._polls_to_skip, self._names_needed = None, 0, True
        self._update_takers()

    # -- events ----------------------------------------------------------------------------

    def _create_reader(self) -> Node | None:
        """Return the node that holds the batched subscriptions; no executor spins it.

        It ignores global arguments so a ``__node`` remap does not give it the main name;
        topic names reach it already resolved (and remapped) by this node. So
        ``ros2 node info /deadline_monitor`` lists no subscriptions; they stay apart because
        an executor iterates every subscription of the nodes it spins at each wake-up, even
        one in a callback group it may never run: 1,000 of them on the spun node cost 2.8 ms
        of CPU per wake-up against 0.33 ms here (20 wake-ups a second for the takes).
        """
        if self._settings.take_period_ns <= 0:
            return None
        return Node(f'{self.get_name()}_reader', namespace=self.get_namespace(),
                    context=self.context, use_global_arguments=False,
                    start_parameter_services=False, enable_rosout=False)

    def take_all(self) -> int:
        """Take every queued /clock sample, then every topic's messages; return how many.

        Topics without a batched subscription are not visited.
        """
        return self.clock_input.take() + self._schedule.take_all(time.monotonic_ns())

    def _take_due(self) -> int:
        """Take /clock, then the topics whose queue is due (the take timer, ``take_schedule``)."""
        return self.clock_input.take() + self._schedule.take_due(time.monotonic_ns())

    def _update_takers(self) -> None:
        """Schedule the topics with a batched subscription (the ones the takes visit)."""
        self._schedule.set_takers(
            [monitor for monitor in self._topics.values() if monitor.batched],
            time.monotonic_ns())
        self._retime_takes()

    def _retime_takes(self) -> None:
        """Run the take timer as often as the most demanding queue needs, or not at all.

        Every wake-up of the executor costs (a few hundred µs in rclpy): with only slow
        topics it fires every few take periods, with nothing to take (no batched topic, no
        /clock publisher) it stops. Each graph poll and report looks again; a queue holds
        a second of messages, more than the 0.5 s between two polls.
        """
        timer = self._take_timer
        if timer is None:
            return
        takers = self._schedule.takers
        period = min((monitor.take_interval_ns for monitor in takers), default=None)
        if self.clock_input.matched_publishers:
            period = self._settings.take_period_ns  # the shortest there is
        if period is None:
            if not timer.is_canceled():
                timer.cancel()
            return
        if timer.timer_period_ns != period:
            timer.timer_period_ns = period
        if timer.is_canceled():
            timer.reset()

    def _poll(self) -> None:
        """Read the graph, or only retime the takes while a quiet graph is read less often.

        Reading the graph costs about 10 µs per monitored topic: with hundreds of topics a
        graph where nothing changed is read every few polls (``graph_poll.read_every``), one
        where anything changed at the next poll again.
        """
        self._simulator_rtf.poll()
        if self._polls_to_skip > 0:
            self._polls_to_skip -= 1
            self._retime_takes()  # a /clock publisher may have come
            return
        if not self._read_graph():
            self._polls_to_skip = read_every(len(self._topics)) - 1

    def _read_graph(self) -> bool:
        """Look for topics that do not exist yet and check those the graph says changed.

        One ``get_topic_names_and_types()`` serves the discovery and every topic
        (``graph_poll.py``), and none while every topic is subscribed without ``--all``: then
        only their publishers can change (``graph_poll.names_needed``). Returns whether
        anything changed since the last read.
        """
        if self._names_needed:
            names_and_types = self.get_topic_names_and_types()
            changed = names_and_types != self._names_read
            self._names_read = names_and_types
            if (self._discovery is not None
                    and self._discovery.poll(self._explicit, names_and_types)):
                self._reconcile()
                changed = True
            if names_and_types == self._graph_seen:
                self._retime_takes()  # a /clock publisher may have come (its name is ours too)
                return changed  # no name came or went, and no topic can change without one
            self._graph = dict(names_and_types)
        else:
            changed = False
        graph = self._graph
        monitors = {topic_id: (monitor.config.topic, monitor.matched_writers, monitor.settled)
                    for topic_id, monitor in self._topics.items()}
        due = [self._topics[topic_id] for topic_id in self._graph_gate.due(monitors, graph)]
        for monitor in due:
            monitor.poll()
        self._say_polled(due)
        self._update_takers()
        self._names_needed = names_needed(self._discovery is not None, monitors, bool(due))
        # The next read may skip the topics while the graph's names stay the same, if every
        # topic is unsubscribed, settled and absent from the graph: only a new name can
        # change one of them (a publisher on a name the graph holds would not).
        quiet = all(writers == NOT_SUBSCRIBED and topic not in graph
                    for topic, writers, _ in monitors.values())
        self._graph_seen = (self._names_read if quiet and not self._schedule.takers
                            else None)
        return changed or bool(due)

    def _count_in_graph(self, topic: str) -> int:
        """Count the publishers of a resolved topic name in the graph.

        ``Node.count_publishers`` expands and validates the name first, which doubles the
        cost of the ``GraphGate``'s counts; the monitored names are resolved already.
        """
        return self.handle.get_count_publishers(topic)

    def _say_polled(self, polled: list[TopicMonitor]) -> None:
        """Log what these looks found, at the cost of a few log calls however many they were.

        The topics waiting for a publisher in one line, once each; the subscriptions they
        started in a line each or, for many, one line (``monitoring_lines``).
        """
        logger = self.get_logger()
        waiting = [(monitor.topic_id, monitor.config.topic) for monitor in polled
                   if monitor.wait_unsaid]
        started = [(monitor.config.topic, monitor.started_unsaid) for monitor in polled
                   if monitor.started_unsaid]
        for monitor in polled:
            monitor.wait_unsaid, monitor.started_unsaid = False, ''
        if waiting:
            logger.info(waiting_line(waiting))
        for line in monitoring_lines(started):
            logger.info(line)
        if len(started) > WAITING_NAMES:
            for _, line in started:
                logger.debug(line)

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
        snapshot = self.publish_stats()
        for sink in self.report_sinks:
            sink(snapshot)

    # -- reporting -----------------------------------------------------------------------

    def snapshot(self, *, final: bool = False) -> Snapshot:
        """Take what the report needs and return the reporter's snapshot of this moment.

        The reporter decides which topics stand (``Reporter.standing``); the node only
        skips their work. A standing topic is not taken: its messages wait in its queue for
        the take timer, which takes it as often as its rate needs (with a thousand slow
        topics, taking every queue was an eighth of a report's time). The final report
        takes everything first.

        Nor is the session told its status again (``TopicMonitor.report_status``: its
        matched writers, a call into the middleware a topic) unless it has news: a topic
        that stood at the previous report (``Reporter.stood``) and has none cannot have
        changed since, but for its matched writers, which the graph read compares at its
        next read and looks at the topics whose writers changed (then they have news). A
        topic refreshed at the previous report is told (its take stride follows the period
        that refresh learned), and so is one that stood then and is refreshed now, before
        its refresh.
        """
        standing: frozenset[str] = frozenset()
        topics = self._topics
        if final:
            self.take_all()
            for monitor in topics.values():
                monitor.take_left()  # a per-message subscription's queue: the executor's lag
                monitor.report_status()
        else:
            stood = self.reporter.stood
            for topic_id, monitor in topics.items():
                if topic_id not in stood or monitor.news or not monitor.batched:
                    monitor.report_status()
            standing = self.reporter.standing(time.time_ns())
            for topic_id in stood - standing:
                monitor = topics.get(topic_id)
                if monitor is not None:
                    monitor.report_status()
            self._take_for_report(standing)
        self._retime_takes()
        # Through the remapping (``-r /clock:=/sim1/clock``), as its subscription is.
        self.session.clock_publishers(
            self._count_in_graph(self.resolve_topic_name(self._settings.clock_topic)))
        return self.reporter.snapshot(time.time_ns(), self._host.sample(time.monotonic_ns()),
                                      self._stats_late_ns, final=final, standing=standing)

    def _take_for_report(self, standing: frozenset[str]) -> None:
        """Take /clock and every queue but those of ``standing`` topics of known rate.

        A queue of unknown rate is taken at every report still: its stride grows while it
        is found empty, and a burst after a quiet spell must not wait for it.
        """
        self.clock_input.take()
        for topic_id, monitor in self._topics.items():  # the cheap test first: 1,000 a report
            if (topic_id not in standing or not monitor.rate_known) and monitor.batched:
                monitor.take()

    def publish_stats(self, *, final: bool = False) -> Snapshot:
        """Publish one snapshot as ``MonitorStats`` and ``/diagnostics``; return it.

        The expectations are evaluated over the run so far (``verdict``); their keys go into
        the diagnostics.
        """
        began_ns = time.monotonic_ns()
        snapshot = self.snapshot(final=final)
        expectations = self.expectations()
        self._verdict = (Verdict(()) if expectations.empty  # what evaluate gives, at no cost
                         else evaluate(expectations, snapshot))
        self._stats_publisher.publish(self._stats_output.payload(snapshot))
        self._diagnostics.publish_report(snapshot, self._verdict)
        if self._metrics is not None:
            self._metrics.publish(snapshot)
        self.get_logger().debug(
            f'{"final " if final else ""}report: {len(snapshot.topics)} topic(s), '
            f'{len(self.reporter.stood)} standing, {self._stats_late_ns / 1e6:.1f} ms late, '
            f'took {(time.monotonic_ns() - began_ns) / 1e6:.1f} ms')
        return snapshot

    @property
    def verdict(self) -> Verdict | None:
        """The expectations over the run so far, as of the latest report (None before it)."""
        return self._verdict

    def finish(self, *, signal_name: str | None = None) -> FinalReport:
        """Publish a final report, write ``summary_file``, return the summary and the verdict.

        ``signal_name`` is the stop signal that ended the run (``SIGHUP``: the terminal was
        closed), named in the log and the summary file.

        Waits (boundedly) until subscribers acknowledged the final messages: the process
        exits right after, and reliable data still in flight would be lost with the writer.
        The summary and every failed expectation are logged.
        """
        if signal_name is not None:
            self.get_logger().info(f'{signal_name} received: final report')
        snapshot = self.publish_stats(final=True)
        verdict = self._verdict
        assert verdict is not None
        timeout = Duration(nanoseconds=FINAL_ACK_TIMEOUT_NS)
        self._stats_publisher.wait_for_all_acked(timeout)
        self._diagnostics.flush(timeout)
        text = summary.summary_text(self.get_name(), snapshot, verdict)
        record = summary_record(snapshot, verdict, node=self.get_fully_qualified_name(),
                                stopped_by='duration' if self._expired else 'signal')
        if signal_name is not None:
            record['signal'] = signal_name
        if verdict.ok:
            self.get_logger().info(text)
        else:
            self.get_logger().error(text)
        if self._settings.summary_file:
            try:
                summary.write_summary(self._settings.summary_file, record)
            except OSError as err:
                self.get_logger().error(f'summary_file: could not write '
                                        f'{self._settings.summary_file}: {err}')
        return FinalReport(text, verdict, exit_code(verdict), record)

    def destroy_node(self) -> None:
        """Destroy the subscriptions and the reader node with this node; stop ``/metrics``."""
        if self._metrics is not None:
            self._metrics.close()
            self._metrics = None
        for monitor in self._topics.values():
            monitor.close()
        if self._reader is not None:
            self._reader.destroy_node()
            self._reader = None
        super().destroy_node()
