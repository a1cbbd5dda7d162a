"""What each report asks of the session: which topics get a fresh snapshot.

See docs/design.md, Architecture.

The session (``analysis/session.py``) measures: asked, it reports every topic afresh. At robot
scale that costs a thousand topic reports a second for topics nothing happened on. The
``Reporter`` stands between the session and the outputs and decides, report by report, which
topics' snapshots are made afresh and which keep the one of their previous refresh (they
*stand*: the session repeats it); the outputs then reuse what they made from a standing
snapshot (``outputs/reuse.py``). It reads each topic through the session's read-only
``TopicView`` only.
Parameter ``reuse_reports`` false: every report is made afresh, every topic, every output.

What it changes, and what it may not (``test/outputs/test_reporter.py`` checks both):

- A topic refreshed at a report gets exactly the snapshot a session without a reporter
  gives at that report: same levels, reasons, figures and totals. Its events are all
  processed; nothing is skipped but the work for the topics that stand.
- A standing topic shows the figures of its previous refresh: its window figures and totals
  are that old (a timer topic is refreshed every ``REFRESH_PERIODS`` periods, an event topic
  at least every window, both stretched by ``max_steady_refreshes_per_s`` at robot scale).
  Only an OK topic without a pending level change stands, once its stamps are judged;
  anything that may change its level refreshes it at the next report: a message late enough
  to be a miss or a skip, a faster pace, a gap in the sequence numbers, a start stamp that
  goes back, repeats, jumps or cannot be read (``TopicView.unusual``), silence beyond its
  timeout, the start-up grace, and whatever bumps its ``TopicView.version``: a QoS
  deadline event, a sim-time reset, a change of the graph, the settings or its timing. A
  topic analyzed per transform (a ``/tf``) never stands: one of its transforms may fall
  silent while the topic is busy.
- Where the two can differ, and why:

  - a standing topic's figures (window figures, totals, since-last ages) lag until its
    refresh: that is the saving;
  - what only the processing of its events finds (it waits for the refresh) and the
    per-message pace cannot see reaches a standing topic's status at its refresh, not at
    the next report: a steady run of start stamps on another clock at the topic's pace,
    messages of several writers that cannot be told apart. The hysteresis and the "since
    the previous snapshot" notes then count refreshes, not reports;
  - ``TopicReport.start_source`` names the source of the events processed last: a report
    whose only new message was malformed reads ``arrival`` without reuse, where the
    refresh processed it with well-stamped ones (``CycleAnalyzer``'s way).

  The final report refreshes every topic: its snapshot, hence the summary, is the same.
"""

from __future__ import annotations

from dataclasses import dataclass
import zlib

from ros2_deadline_monitor.analysis.config import MAX_PERIOD_NS, NS_PER_S
from ros2_deadline_monitor.analysis.reports import HostReport, Level
from ros2_deadline_monitor.analysis.session import NO_INTERVAL_ALERT, Session, TopicView
from ros2_deadline_monitor.analysis.snapshot import Snapshot, TopicSnapshot

REFRESH_PERIODS = 10
"""A slow topic is refreshed once it has about this many new messages (``Reporter._stands``)."""
DECIDING = 'deciding from the first messages'
"""A topic's ``timing_reason`` while its stamps are judged (``CycleAnalyzer``): the rule of
its level may change with the next messages processed, so it is refreshed at every report."""


@dataclass(frozen=True, slots=True)
class _Stand:
    """The limits a refresh sets on how long its snapshot stands (``Reporter._stands``).

    Everything in them is fixed until the next refresh, so a report checks a thousand
    standing topics at the cost of a few comparisons each.
    """

    silent: bool = False
    """Refreshed before any message: it stands until one is recorded."""
    until_ns: int = 0
    """The wall time it may stand until (``Reporter._stand_interval`` after the refresh)."""
    before_report: int = 0
    """The report number that starts the topic's next turn (``Reporter._refresh_turn``)."""
    grace_over_ns: int = 0
    """The start-up grace ends then; within it every report refreshes the topic."""
    timeout_ns: int = NO_INTERVAL_ALERT
    """Silence beyond this since the last message refreshes it (the level may change)."""
    counted: bool = False
    """Refreshed once it has recorded ``REFRESH_PERIODS`` messages since (an event topic)."""


@dataclass(slots=True)
class _Kept:
    """What the reporter keeps of one topic between reports."""

    view: TopicView
    """The session's view of the topic; another object: the topic is new."""
    stagger: int
    """Where in its turn of reports this topic is refreshed (``Reporter._refresh_turn``)."""
    stand: _Stand | None = None
    """How long its latest fresh snapshot may stand (None: not past the next report)."""
    slow: bool = False
    """Stands beyond one report when nothing happens: one of the topics whose routine
    refreshes ``max_steady_refreshes_per_s`` bounds."""


class Reporter:
    """Makes each report from a session, refreshing only the topics that need it."""

    def __init__(self, session: Session, *, reuse_reports: bool = True) -> None:
        """Report ``session``; ``reuse_reports`` False: every topic afresh at every report."""
        self.session = session
        self.reuse_reports = reuse_reports
        self._kept: dict[str, _Kept] = {}
        self._reports = 0
        """Reports so far: the refresh turns count them (``_refresh_turn``)."""
        self._slow_topics = 0
        """Topics that stand beyond a report since their last refresh."""
        self._report_ns: int | None = None
        """The wall time of the latest report while its refreshed topics wait for ``_arm``."""
        self.stood: frozenset[str] = frozenset()
        """The topics whose snapshot stood at the latest report."""

    def standing(self, now_wall_ns: int) -> frozenset[str]:
        """Return the topics whose snapshot the next report repeats (``_stands``).

        For an adapter that brings in only the other topics' events before that report: a
        standing topic's events wait for its next refresh. The topics refreshed at the
        latest report learn first how long they may stand (``_follow``).
        """
        if not self.reuse_reports:
            return frozenset()
        if self._report_ns is not None:
            self._follow(self._report_ns)
            self._report_ns = None
        number, kept = self._reports + 1, self._kept
        return frozenset(topic_id for topic_id, view in self.session.views().items()
                         if (entry := kept.get(topic_id)) is not None and entry.view is view
                         and self._stands(entry, now_wall_ns, number))

    def snapshot(self, now_wall_ns: int, host: HostReport | None = None,
                 stats_timer_late_ns: int = 0, *, final: bool = False,
                 standing: frozenset[str] | None = None) -> Snapshot:
        """Return the report of this moment: standing topics repeated, the others afresh.

        ``standing``: as ``standing`` returned just before (None: decided here). The final
        report refreshes every topic.
        """
        if standing is None:
            standing = self.standing(now_wall_ns)
        self._reports += 1
        self.stood = frozenset() if final else standing
        self._report_ns = now_wall_ns
        return self.session.snapshot(now_wall_ns, host, stats_timer_late_ns, final=final,
                                     standing=self.stood)

    def _follow(self, report_ns: int) -> None:
        """Decide how long each topic refreshed at the report of ``report_ns`` may stand."""
        views, kept, stood = self.session.views(), self._kept, self.stood
        for topic_id in [topic_id for topic_id in kept if topic_id not in views]:
            self._set_slow(kept.pop(topic_id), False)
        refreshed: list[tuple[_Kept, TopicSnapshot]] = []
        for topic_id, view in views.items():
            if topic_id in stood or (topic := view.snapshot) is None:
                continue
            entry = kept.get(topic_id)
            if entry is None or entry.view is not view:  # new, or removed and added again
                if entry is not None:
                    self._set_slow(entry, False)
                entry = kept[topic_id] = _Kept(view, zlib.crc32(topic_id.encode()))
            interval = self._routine_interval(view, topic)
            self._set_slow(entry, interval is not None
                           and interval > self.session.stats_period_ns)
            refreshed.append((entry, topic))
        for entry, topic in refreshed:  # once every slow topic is counted (the budget)
            entry.stand = self._arm(entry, topic, report_ns)

    def _stands(self, kept: _Kept, now_wall_ns: int, report_number: int) -> bool:
        """Tell whether a topic's latest fresh snapshot still stands: it is repeated as it is.

        - A topic without any message (configured, nobody publishes yet) has no figure that
          time changes: with no start-up grace running, its snapshot stands until what the
          graph says about it changes. A thousand of them cost a comparison each.
        - A slow topic is refreshed once it has about ``REFRESH_PERIODS`` new messages: a
          timer topic every ``REFRESH_PERIODS`` periods, an event topic once it has that many
          or at the latest every window (``_stand_interval``; at its own report of the turn:
          ``_refresh_turn``), like a fast topic at every report, and at once when anything
          happens (the module docstring). Its counts are exact at every refresh; in between
          the report repeats them (a thousand topics at 1 Hz would otherwise cost a report
          each per second).

        What only a refresh changes is decided there (``_arm``); here the rest is compared:
        a change of what the snapshot depends on from outside the stream bumps the view's
        ``version`` (``TopicView.changed``), so a standing topic costs a few comparisons.
        """
        stand, view = kept.stand, kept.view
        if stand is None or view.changed:
            return False
        if stand.silent:
            return view.silent
        return (now_wall_ns < stand.until_ns and report_number < stand.before_report
                and now_wall_ns >= stand.grace_over_ns
                and now_wall_ns - view.last_arrival_ns <= stand.timeout_ns
                and not (stand.counted and view.recorded_since >= REFRESH_PERIODS))

    def _arm(self, kept: _Kept, topic: TopicSnapshot, report_ns: int) -> _Stand | None:
        """Decide how long a refreshed snapshot may stand (None: refreshed next report).

        The grace, the routine interval, the turn and the timeout become limits ``_stands``
        compares with.
        """
        session, view = self.session, kept.view
        grace = session.analysis.thresholds.grace_ns
        if view.silent:
            return None if grace else _Stand(silent=True)
        if view.per_transform:
            return None  # one of its transforms falling silent shows at the next report
        interval = self._routine_interval(view, topic)
        if interval is None:
            return None
        assert topic.report is not None
        reports = self._turn_reports(interval)
        turn = self._refresh_turn(kept, interval, self._reports)
        return _Stand(
            until_ns=report_ns + interval,
            before_report=(turn + 1) * reports - kept.stagger % reports,
            grace_over_ns=(view.appeared_ns or session.start_wall_ns) + grace if grace else 0,
            timeout_ns=(NO_INTERVAL_ALERT if topic.report.timeout_ns is None
                        else topic.report.timeout_ns),
            counted=view.period_ns is None)

    def _set_slow(self, kept: _Kept, slow: bool) -> None:
        """Mark a topic slow or not, keeping the count the budget reads up to date."""
        self._slow_topics += slow - kept.slow
        kept.slow = slow

    def _routine_interval(self, view: TopicView, topic: TopicSnapshot) -> int | None:
        """How long a refreshed topic stands when nothing happens, or None: not at all.

        A silent topic, a level other than OK, a streak of the hysteresis, a timer topic
        still learning its period, stamps still being judged: refreshed at every report.
        """
        if (view.silent or topic.report is None or topic.level is not Level.OK or view.held
                or topic.report.timing_reason == DECIDING):
            return None
        return self._stand_interval(view)

    def _stand_interval(self, view: TopicView) -> int | None:
        """How long a topic's snapshot may stand at most, or None: refreshed at every report.

        ``REFRESH_PERIODS`` of a timer topic's periods, the window for an event topic (no
        period paces it; its new messages do). A timer topic still learning its period
        cannot stand.
        """
        if view.period_ns is not None:
            return self._refresh_interval(REFRESH_PERIODS * view.period_ns)
        if view.event:
            return self._refresh_interval(self.session.analysis.window_ns)
        return None

    def _refresh_interval(self, paced_ns: int) -> int:
        """How long a snapshot paced at ``paced_ns`` may stand.

        Within the window (every interval since the last refresh is still in it), and less
        half a report so a fast topic is refreshed at every report. A slow topic (standing
        beyond one report) stands long enough that the slow topics' routine refreshes come at
        most ``max_steady_refreshes_per_s``: at robot scale its window figures may be that
        old, and what happens still refreshes it at the next report.
        """
        period = self.session.stats_period_ns
        half_report = period // 2
        interval = min(max(period, paced_ns), self.session.analysis.window_ns)
        if interval - half_report > period:  # slow
            interval = max(interval, self._budget_interval_ns())
        return interval - half_report

    def _budget_interval_ns(self) -> int:
        """How long each slow topic stands for ``max_steady_refreshes_per_s`` to hold.

        All slow topics together are then refreshed at most that often, routinely (0: no
        limit). At most an hour.
        """
        budget = self.session.analysis.max_steady_refreshes_per_s
        if not budget:
            return 0
        return min(MAX_PERIOD_NS, round(self._slow_topics * NS_PER_S / budget))

    def _refresh_turn(self, kept: _Kept, interval_ns: int, report_number: int) -> int:
        """Return the turn a slow topic is in at ``report_number`` (one refresh a turn).

        A turn is as many reports as ``interval_ns`` spans. Topics that learned their period
        together would otherwise be refreshed in the same report, again and again: 1,000
        topics at 1 Hz made one report in ten take over half a second, and the takes and
        timers waited for it. A refresh for an event in between leaves the turns as they
        are: the next one still comes at the topic's own report.
        """
        reports = self._turn_reports(interval_ns)
        return (report_number + kept.stagger % reports) // reports

    def _turn_reports(self, interval_ns: int) -> int:
        """Return how many reports a turn of ``interval_ns`` spans (at least one)."""
        return max(1, -(-interval_ns // self.session.stats_period_ns))
