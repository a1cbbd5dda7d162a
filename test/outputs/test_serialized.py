"""Reports assembled from kept bytes: what rclpy itself would have published."""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from own_names import ns  # test/plugins: the test's own names
import pytest
from rclpy.serialization import deserialize_message

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.analysis.session import Session, TopicState
from ros2_deadline_monitor.msg import MonitorStats, TopicStats
from ros2_deadline_monitor.outputs import conversions, diagnostics
from ros2_deadline_monitor.outputs.reporter import Reporter
from ros2_deadline_monitor.outputs.reuse import Reuse
from ros2_deadline_monitor.outputs.serialized import (
    _Writer,
    Assembler,
    check_layout,
    LayoutError,
    same,
)
from ros2_deadline_monitor.outputs.stats_output import TopicStatsCache

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S


def test_the_layout_check_passes_on_this_middleware() -> None:
    assert Assembler().check()


def test_assembled_reports_read_back_as_the_messages_report_after_report() -> None:
    s = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    reporter = Reporter(s)
    s.configure({f't{i}': TopicConfig(name=f't{i}' * (i % 5 + 1), topic=f'/t{i}',
                                      period_ns=10 * MS) for i in range(40)})
    for busy in ('t3', 't17'):
        s.topic_status(busy, TopicState.RECEIVING, type_name='std_msgs/msg/Header', writers=1)
    assembler = Assembler()
    stats_cache, status_cache = TopicStatsCache(), Reuse()
    kinds = []
    for k in range(6):
        for i in range(100):
            s.message('t3', OFF + k * S + i * 10 * MS, seq=k * 100 + i + 1)
            if i % 3 == 0:
                s.message('t17', OFF + k * S + i * 10 * MS + 3 * MS, seq=k * 34 + i // 3 + 1)
        if k == 4:
            s.topic_status('t8', TopicState.ERROR, 'publishers on /t8 disagree: A, B')
        snap = reporter.snapshot(OFF + (k + 1) * S)
        stats = conversions.monitor_stats(snap, stats_cache.messages(snap), stats_cache.header)
        array = DiagnosticArray(status=diagnostics.statuses(snap, cache=status_cache))
        for msg, kind in ((stats, MonitorStats), (array, DiagnosticArray)):
            payload = assembler.payload(msg)
            kinds.append(type(payload))
            if isinstance(payload, bytes):
                assert same(deserialize_message(payload, kind), msg)
            else:
                assert payload is msg
    # The first report's TopicStats are new (published as a message), later ones mostly
    # kept; the statuses are always written here.
    assert kinds[:2] == [MonitorStats, bytes] and set(kinds[2:]) == {bytes}


def test_statuses_that_all_changed_are_written_here_and_read_back() -> None:
    assembler = Assembler()
    for k in range(3):
        array = DiagnosticArray(status=[diagnostics.make_status(
            f'topic t{i}', Level(i % 4), f'report {k} ' + 'é' * i, 'hw' * (i % 2),
            [(f'key {j} (µs)', f'{k * i * j / 7:.3f}' + '\n' * (j == 2)) for j in range(i)])
            for i in range(12)])
        payload = assembler.payload(array)
        assert isinstance(payload, bytes)
        assert same(deserialize_message(payload, DiagnosticArray), array)


def test_reports_whose_parts_all_changed_go_out_as_messages() -> None:
    assembler = Assembler()
    for _ in range(3):
        stats = MonitorStats(topics=[conversions.TopicStats() for _ in range(4)])
        assert assembler.payload(stats) is stats
    kept = [conversions.TopicStats() for _ in range(4)]
    first = MonitorStats(topics=kept)
    assert assembler.payload(first) is first  # new parts: remembered
    for _ in range(2):  # the same parts: assembled (their bytes made once, then reused)
        assert isinstance(assembler.payload(MonitorStats(topics=kept)), bytes)
    half = MonitorStats(topics=kept[:2] + [conversions.TopicStats() for _ in range(2)])
    assert isinstance(assembler.payload(half), bytes)  # half of them the same: assembled
    changed = MonitorStats(topics=[conversions.TopicStats() for _ in range(4)])
    assert assembler.payload(changed) is changed  # none the same: counted, changed


def test_a_monitor_with_many_quiet_topics_is_read_over_dds_as_published(
        observer, start_monitor, wait_for) -> None:
    names = [f'quiet_{i}' for i in range(60)]
    values = {'topics': names, 'stats_period_s': 0.2}
    values.update({f'topic__{n}__name': ns(f'/serialized_test/{n}') for n in names})
    values.update({f'topic__{n}__period_ms': 10.0 + i for i, n in enumerate(names)})
    start_monitor(**values)
    wait_for(lambda: len(observer.stats) >= 5 and len(observer.report_arrays()) >= 5,
             what='five reports')
    arrays = observer.report_arrays()
    with observer.lock:
        stats = list(observer.stats)
    for report in stats[1:5]:
        assert [t.name for t in report.topics] == names
        assert [t.period_ms for t in report.topics] == [10.0 + i for i in range(60)]
        assert all(t.status.startswith('waiting for a publisher') for t in report.topics)
    for array in arrays[1:5]:
        topics = [s for s in array.status if ': topic ' in s.name]
        assert [s.name.split(': topic ')[1] for s in topics] == names
        assert all(s.values and s.values[0].key for s in topics)
    stamps = [r.header.stamp.sec * S + r.header.stamp.nanosec for r in stats[1:5]]
    assert stamps == sorted(set(stamps))
    assert all(t.header == r.header for r in stats[1:5] for t in r.topics)


class _Fields:
    """A stand-in message class: only the declared fields, in order (``check_layout``)."""

    def __init__(self, fields: dict[str, str]) -> None:
        self._fields = fields

    def get_fields_and_field_types(self) -> dict[str, str]:
        return dict(self._fields)


def _topic_stats_with(change) -> _Fields:
    fields = list(TopicStats.get_fields_and_field_types().items())
    return _Fields(dict(change(fields)))


def test_the_messages_have_the_layout_the_assembler_relies_on() -> None:
    check_layout()  # also ran at import
    assert list(TopicStats.get_fields_and_field_types())[0] == 'header'


@pytest.mark.parametrize('change, what', [
    (lambda f: [*f, ('note', 'string')], 'must end with an 8-byte number'),
    (lambda f: [*f, ('count', 'int32')], 'must end with an 8-byte number'),
    (lambda f: [*f[1:], f[0]], 'must start with "std_msgs/Header header"'),
    (lambda f: [f[1], f[0], *f[2:]], 'must start with "std_msgs/Header header"'),
])
def test_a_field_added_or_moved_in_topic_stats_fails_loudly(change, what) -> None:
    with pytest.raises(LayoutError, match=what):
        check_layout(topic_stats=_topic_stats_with(change))


def test_monitor_stats_is_written_in_the_order_its_class_declares() -> None:
    # Nothing of MonitorStats' order is written by hand: a field moved or added around the
    # topics list lands where the class declares it.
    fields = list(MonitorStats.get_fields_and_field_types().items())
    moved = dict([fields[-1], *fields[:-1]])  # host first
    moved['extra_s'] = 'double'  # and a new field at the end
    before, after = _Writer().plan_around(_Fields(moved), 'topics')
    assert [name for name, _, _ in before] == ['host', 'header', 'window_wall_s',
                                               'window_sim_s', 'clock']
    assert [name for name, _, _ in after] == ['extra_s']
    before, after = _Writer().plan_around(MonitorStats, 'topics')
    assert [name for name, _, _ in before + after] == [
        name for name, _ in fields if name != 'topics']


def test_monitor_stats_and_statuses_are_checked_too() -> None:
    fields = MonitorStats.get_fields_and_field_types()
    no_list = _Fields({k: v for k, v in fields.items() if k != 'topics'})
    with pytest.raises(LayoutError, match='one sequence<ros2_deadline_monitor/TopicStats>'):
        check_layout(monitor_stats=no_list)
    status = DiagnosticStatus.get_fields_and_field_types()
    swapped = _Fields({'name': status['name'], 'level': status['level'],
                       **{k: v for k, v in status.items() if k not in ('name', 'level')}})
    with pytest.raises(LayoutError, match='DiagnosticStatus is not'):
        check_layout(status=swapped)
