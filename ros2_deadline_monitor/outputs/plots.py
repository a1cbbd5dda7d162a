"""PNG plots of a bag analysis, drawn with matplotlib's Agg canvas (no display needed).

matplotlib is imported only here and only when plots are asked for, so the table, JSON
and CSV outputs work without it. Figures use the object API (``Figure`` + ``FigureCanvasAgg``)
rather than pyplot, so nothing global (backend, open figures) is touched.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from ros2_deadline_monitor.analysis.errors import MonitorError
from ros2_deadline_monitor.analysis.figures import Figure, find, RUN_TOPIC
from ros2_deadline_monitor.analysis.snapshot import Snapshot, TopicSnapshot
from ros2_deadline_monitor.analysis.units import to_ms
from ros2_deadline_monitor.analysis.whole_run import ValueSketch
from ros2_deadline_monitor.outputs.bag_result import BagResult
from ros2_deadline_monitor.outputs.format import cell, UNKNOWN
from ros2_deadline_monitor.outputs.series import Timeline

__all__ = ['render_plots', 'require_matplotlib']

DPI = 110
MISS_COLOR = '#d62728'
SKIP_COLOR = '#ff7f0e'
WALL_COLOR = '#1f77b4'
SIM_COLOR = '#2ca02c'
RTF_COLOR = '#9467bd'


def require_matplotlib() -> None:
    """Raise ``MonitorError`` with an install hint when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MonitorError('--plot and --html need matplotlib: pip install matplotlib (or '
                           'apt install python3-matplotlib)') from None


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout='constrained')


def _png(figure: Any) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format='png', dpi=DPI)
    return buffer.getvalue()


MISSES, SKIPPED = find(RUN_TOPIC, 'deadline misses'), find(RUN_TOPIC, 'skipped periods')
"""The counts the labels and titles name, read through the table of figures."""


def _counts(snapshot: Snapshot, topic: TopicSnapshot) -> tuple[str, str]:
    """Misses and skipped periods of the run as the labels say them (``_count``)."""
    return _count(MISSES, snapshot, topic), _count(SKIPPED, snapshot, topic)


def _period_lines(ax: Any, topic: TopicSnapshot, with_jitter: bool = True) -> None:
    if topic.report.period_ns is None:
        return
    ax.axhline(to_ms(topic.report.period_ns), color='0.35', linestyle='--', linewidth=1,
               label=f'period T = {to_ms(topic.report.period_ns):g} ms')
    if with_jitter and topic.report.jitter_ns:
        limit = to_ms(topic.report.period_ns + topic.report.jitter_ns)
        ax.axhline(limit, color='0.35', linestyle=':', linewidth=1,
                   label=f'T + J = {limit:g} ms')


def _series(ax: Any, timeline: Timeline, column: str, color: str, label: str,
            dashed: bool = False) -> bool:
    """Plot one column: every point when held, else the bucket envelope and mean."""
    raw = timeline.raw_points()
    row = Timeline.COLUMNS.index(column)
    if raw is not None:
        known = raw[f'{column}_known']
        if not known.any():
            return False
        if dashed:
            ax.plot(raw['t'][known], raw[column][known] / 1e6, color=color, linewidth=0.9,
                    linestyle=(0, (3, 2)), label=label)
        else:
            ax.plot(raw['t'][known], raw[column][known] / 1e6, color=color, linewidth=1.4,
                    marker='.', markersize=3, label=label)
        return True
    count = timeline.b_count[row]
    ok = count > 0
    if not ok.any():
        return False
    edges = timeline.bucket_edges_s()
    mid = (edges[:-1] + edges[1:])[ok] / 2
    ax.fill_between(mid, timeline.b_min[row][ok] / 1e6, timeline.b_max[row][ok] / 1e6,
                    color=color, alpha=0.25, linewidth=0, label=f'{label} (min-max per bin)')
    ax.plot(mid, timeline.b_sum[row][ok] / count[ok] / 1e6, color=color, linewidth=0.8,
            label=f'{label} (mean per bin)')
    return True


def _count(figure: Figure, snapshot: Snapshot, topic: TopicSnapshot) -> str:
    """Show a count in a label: 'unknown' while unknown (never 0), 'n/a' if it does not apply."""
    text = cell(figure, snapshot, topic)
    return 'unknown' if text == UNKNOWN else text


def _outages(ax: Any, timeline: Timeline, topic: TopicSnapshot) -> None:
    """Shade the silences longer than the timeout: gaps are never hidden.

    Each time bin whose longest wall interval exceeds the timeout holds an outage; it is
    shaded over the interval's length, ending in that bin.
    """
    if not topic.report.outages_total or topic.report.timeout_ns is None:
        return
    longest = timeline.b_max[0]
    edges = timeline.bucket_edges_s()
    label = (f'outage > timeout ({topic.report.outages_total:,}, longest '
             f'{topic.report.outage_max_ns / 1e9:.2f} s)')
    for i in np.flatnonzero((timeline.b_count[0] > 0) & (longest > topic.report.timeout_ns)):
        end = float(edges[i + 1])
        ax.axvspan(end - longest[i] / 1e9, end, color='0.6', alpha=0.3, linewidth=0,
                   label=label)
        label = None


def _marks(ax: Any, timeline: Timeline, topic: TopicSnapshot, counts: tuple[str, str]
           ) -> None:
    t, v, _ = timeline.marks('miss')
    suffix = '' if timeline.misses_complete else ' (first ones)'
    if len(t):
        ax.scatter(t, v / 1e6, marker='x', color=MISS_COLOR, s=36, zorder=5, linewidths=1.5,
                   label=f'deadline miss ({counts[0]}, {topic.report.rule} rule){suffix}')
    t, v, n = timeline.marks('skip')
    suffix = '' if timeline.skips_complete else ' (first ones)'
    if len(t):
        ax.scatter(t, v / 1e6, marker='v', color=SKIP_COLOR, s=40, zorder=6,
                   edgecolors='black', linewidths=0.5,
                   label=f'{SKIPPED.name} after this cycle ({counts[1]}){suffix}')


def _headroom(ax: Any) -> None:
    """Start the y axis at 0 and leave the top quarter free for the legend."""
    low, high = ax.get_ylim()
    low = min(0.0, low)
    ax.set_ylim(low, low + (high - low) * 1.4)


def _ms_ticks(ax: Any) -> None:
    """Plain numbers (5, 10, 20) instead of powers of ten on a log ms axis."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    formatter = FuncFormatter(lambda value, _: f'{value:g}')
    ax.xaxis.set_major_formatter(formatter)
    ax.xaxis.set_minor_locator(LogLocator(subs=(2, 3, 5)))
    ax.xaxis.set_minor_formatter(formatter)


def _rtf_axis(ax: Any, windows: list[Any], t0_ns: int, target: float) -> None:
    if not windows:
        ax.text(0.5, 0.5, 'no /clock in the bag', transform=ax.transAxes, ha='center',
                va='center', color='0.4')
        ax.set_yticks([])
        return
    start = np.array([w.start_ns for w in windows], np.float64)
    end = np.array([w.end_ns for w in windows], np.float64)
    rtf = np.array([w.rtf for w in windows])
    low = np.array([w.bin_min for w in windows])
    high = np.array([w.bin_max for w in windows])
    xs = np.column_stack([start, end]).ravel()
    xs = (xs - t0_ns) / 1e9
    ax.plot(xs, np.repeat(rtf, 2), color=RTF_COLOR, linewidth=1.2, label='RTF per report window')
    ok = ~np.isnan(low) & ~np.isnan(high)
    if ok.any():
        ax.fill_between(xs, np.repeat(np.where(ok, low, rtf), 2),
                        np.repeat(np.where(ok, high, rtf), 2), color=RTF_COLOR, alpha=0.2,
                        linewidth=0, label='worst..best 100 ms bin')
    ax.axhline(target, color='0.35', linestyle='--', linewidth=1, label=f'target {target:g}')
    ax.set_ylabel('real time factor')
    finite = np.concatenate([rtf[~np.isnan(rtf)], low[ok], high[ok], [target]])
    top = float(finite.max()) if len(finite) else 1.0
    ax.set_ylim(max(0.0, float(finite.min()) - 0.05 * top), top * 1.08)


MAX_MARKS = 300
"""More misses or skips than this are drawn as counts per time bin instead of markers."""
COUNT_BINS = 200
"""Time bins (at most) of the miss and skip counts."""


def _counts_axis(ax: Any, timeline: Timeline, topic: TopicSnapshot, counts: tuple[str, str]
                 ) -> None:
    """Misses and skipped periods per time bin, for runs with too many to mark one by one."""
    edges = timeline.bucket_edges_s()
    group = -(-timeline.buckets // COUNT_BINS)  # coarser bins: steadier counts
    pad = (-timeline.buckets) % group

    def coarse(counts: np.ndarray) -> np.ndarray:
        return np.pad(counts, (0, pad)).reshape(-1, group).sum(axis=1)

    edges = np.append(edges[:-1:group], edges[-1])
    width = edges[1] - edges[0]
    ax.stairs(coarse(timeline.b_misses), edges, fill=True, color=MISS_COLOR, alpha=0.6,
              label=f'{MISSES.name} ({counts[0]}, {topic.report.rule} rule)')
    ax.stairs(coarse(timeline.b_skipped), edges, color=SKIP_COLOR, linewidth=1.2,
              label=f'{SKIPPED.name} ({counts[1]})')
    ax.set_ylabel(f'per {width:.3g} s')
    ax.set_ylim(bottom=0)
    _headroom(ax)
    ax.legend(loc='upper right', fontsize=8, ncols=2, framealpha=0.9)
    ax.grid(alpha=0.3)


def timeline_figure(snapshot: Snapshot, topic: TopicSnapshot, timeline: Timeline,
                    windows: list[Any], t0_ns: int, target_rtf: float) -> bytes:
    """Intervals, response times and RTF of one topic on one wall-time axis.

    Misses and skipped periods are marked one by one when there are few; otherwise their
    counts per time bin get a panel of their own.
    """
    many = (not timeline.misses_complete or not timeline.skips_complete
            or timeline.misses_held > MAX_MARKS or timeline.skips_held > MAX_MARKS)
    ratios = [3, 2, 1.2, 1.4] if many else [3, 2, 1.4]
    figure = _figure(11, 9.4 if many else 8.2)
    axes = figure.subplots(len(ratios), 1, sharex=True, height_ratios=ratios)
    ax = axes[0]
    _series(ax, timeline, 'interval_wall', WALL_COLOR, 'interval, wall clock')
    if topic.run.interval_sim.count:
        _series(ax, timeline, 'interval_sim', SIM_COLOR, 'interval, sim clock', dashed=True)
    _period_lines(ax, topic)
    _outages(ax, timeline, topic)
    counts = _counts(snapshot, topic)
    if not many:
        _marks(ax, timeline, topic, counts)
    ax.set_ylabel('interval between cycle starts [ms]')
    _headroom(ax)
    ax.set_title(f'{topic.topic}: {counts[0]} {MISSES.name}, {counts[1]} {SKIPPED.name} in '
                 f'{topic.run.cycles:,} cycles')
    ax.legend(loc='upper right', fontsize=8, ncols=2, framealpha=0.9)
    ax.grid(alpha=0.3)

    ax = axes[1]
    _series(ax, timeline, 'response', '#8c564b',
            f'response = end - scheduled slot ({topic.report.timer_clock} clock)')
    if topic.report.deadline_ns is not None:
        ax.axhline(to_ms(topic.report.deadline_ns), color=MISS_COLOR, linestyle='--', linewidth=1,
                   label=f'deadline D = {to_ms(topic.report.deadline_ns):g} ms')
    raw = timeline.raw_points()
    if not many and raw is not None and raw['missed'].any():
        missed = raw['missed']
        ax.scatter(raw['t'][missed], raw['response'][missed] / 1e6, marker='x',
                   color=MISS_COLOR, s=36, zorder=5, linewidths=1.5, label='deadline miss')
    ax.set_ylabel('response [ms]')
    _headroom(ax)
    ax.legend(loc='upper right', fontsize=8, framealpha=0.9)
    ax.grid(alpha=0.3)

    if many:
        _counts_axis(axes[2], timeline, topic, counts)
    _rtf_axis(axes[-1], windows, t0_ns, target_rtf)
    if windows:
        axes[-1].legend(loc='lower right', fontsize=8, ncols=3, framealpha=0.9)
    axes[-1].grid(alpha=0.3)
    axes[-1].set_xlabel('time since the start of the bag [s] (wall clock)')
    return _png(figure)


def ecdf_figure(topics: tuple[TopicSnapshot, ...], sketches: dict[str, dict[str, ValueSketch]]
                ) -> bytes:
    """ECDF of the intervals of every topic on both clocks, and its tail on log axes."""
    figure = _figure(11, 4.8)
    left, right = figure.subplots(1, 2)
    colors = [f'C{i}' for i in range(10)]
    exact = True
    for i, topic in enumerate(topics):
        color = colors[i % len(colors)]
        for clock, style in (('wall', '-'), ('sim', '--')):
            sketch = sketches[topic.topic_id][f'interval_{clock}']
            x, y = sketch.ecdf()
            ok = x > 0
            if not ok.any():
                continue
            exact &= sketch.exact
            x, y = x[ok] / 1e6, y[ok]
            label = f'{topic.topic} ({clock})'
            left.step(x, y, where='post', color=color, linestyle=style, linewidth=1.3,
                      label=label)
            tail = 1.0 - y + 1.0 / max(sketch.count, 1)
            right.step(x, tail, where='post', color=color, linestyle=style, linewidth=1.3,
                       label=label)
        if topic.report.period_ns is not None:
            for ax in (left, right):
                ax.axvline(to_ms(topic.report.period_ns), color=color, linestyle=':', linewidth=1)
    for ax in (left, right):
        ax.set_xscale('log')
        _ms_ticks(ax)
        ax.set_xlabel('interval between cycle starts [ms] (log)')
        ax.grid(alpha=0.3, which='both')
    left.set_ylabel('fraction of intervals <= x')
    left.set_ylim(0, 1.02)
    left.set_title('ECDF of intervals (dotted: expected period)')
    right.set_yscale('log')
    right.set_ylabel('fraction of intervals >= x (log)')
    right.set_title('The tail: how rare are the long intervals')
    left.legend(loc='lower right', fontsize=8)
    if not exact:
        figure.suptitle('long series binned at 0.1 % relative width', fontsize=8, color='0.4')
    return _png(figure)


def lateness_figure(topic: TopicSnapshot, sketch: ValueSketch) -> bytes:
    """Histogram of lateness (cycle start - scheduled slot) with the tolerance marked."""
    figure = _figure(8, 4.4)
    ax = figure.subplots()
    if sketch.count:
        low, high = sketch.quantiles((0.0, 1.0))
        high = max(high, low + 1.0, (topic.report.jitter_ns or 0) * 1.2)
        counts, edges = sketch.histogram(bins=80, range_=(min(low, 0.0), high))
        ax.bar(edges[:-1] / 1e6, counts, width=np.diff(edges) / 1e6, align='edge',
               color=WALL_COLOR, alpha=0.8, log=True, label=f'{sketch.count:,} cycles')
        ax.set_ylim(bottom=0.7)
    if topic.report.jitter_ns is not None:
        ax.axvline(to_ms(topic.report.jitter_ns), color='0.35', linestyle=':', linewidth=1,
                   label=f'jitter tolerance J = {to_ms(topic.report.jitter_ns):g} ms')
    period = topic.report.period_ns
    if period is not None and topic.run.lateness_max_ns >= period:
        ax.axvline(to_ms(period), color=MISS_COLOR, linestyle='--', linewidth=1,
                   label=f'one period = {to_ms(period):g} ms')
    ax.set_xlabel('lateness = cycle start - scheduled slot [ms] '
                  f'({topic.report.timer_clock} clock)')
    ax.set_ylabel('cycles (log)')
    ax.set_title(f'{topic.topic}: lateness, max {to_ms(topic.run.lateness_max_ns):.2f} ms, '
                 f'mean {to_ms(topic.run.lateness_mean_ns):.3f} ms')
    ax.grid(alpha=0.3)
    ax.legend(loc='upper right', fontsize=8)
    return _png(figure)


def rtf_figure(windows: list[Any], t0_ns: int, target: float) -> bytes:
    """Draw the RTF windows alone (for bags with /clock and no analyzed topic)."""
    figure = _figure(11, 3.2)
    ax = figure.subplots()
    _rtf_axis(ax, windows, t0_ns, target)
    ax.set_xlabel('time since the start of the bag [s] (wall clock)')
    ax.set_title('Real time factor')
    ax.grid(alpha=0.3)
    if windows:
        ax.legend(loc='lower right', fontsize=8, ncols=3)
    return _png(figure)


def file_stem(name: str) -> str:
    """Return a file-name-safe form of a topic identifier."""
    return ''.join(c if c.isalnum() or c in '-_' else '_' for c in name)


def render_plots(result: BagResult) -> dict[str, bytes]:
    """Every figure as ``{file name: PNG bytes}``; needs ``keep_series`` results."""
    require_matplotlib()
    series = result.series
    if not series:
        return {}
    images: dict[str, bytes] = {}
    topics = tuple(t for t, _ in result.topics if t.report is not None and t.run.cycles)
    windows = series['rtf_windows']
    t0 = series['t0_ns']
    target = series['target_rtf']
    if topics:
        images['ecdf.png'] = ecdf_figure(topics, series['sketches'])
    for topic in topics:
        stem = file_stem(topic.topic_id)
        images[f'timeline_{stem}.png'] = timeline_figure(
            result.snapshot, topic, series['timelines'][topic.topic_id], windows, t0, target)
        images[f'lateness_{stem}.png'] = lateness_figure(
            topic, series['sketches'][topic.topic_id]['lateness'])
    if not topics and windows:
        images['rtf.png'] = rtf_figure(windows, t0, target)
    return images
