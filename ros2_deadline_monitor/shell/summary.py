"""The one-screen summary logged when the monitor shuts down."""

from __future__ import annotations

import math

from ros2_deadline_monitor.core.snapshot import Snapshot


def _ms(ns: float) -> str:
    return 'n/a' if math.isnan(ns) else f'{ns / 1e6:.2f}'


def _ratio(value: float) -> str:
    return 'n/a' if math.isnan(value) else f'{value:.4f}'


def summary_text(node_name: str, snapshot: Snapshot) -> str:
    """Return a table of totals per topic plus the RTF, for the log at shutdown."""
    topics = [t for t in snapshot.topics if t.report is not None]
    clock = snapshot.clock.report
    lines = [f'{node_name} summary (totals since start):']
    header = (f'{"topic":<28} {"messages":>9} {"misses":>7} {"skipped":>8} {"lost":>6} '
              f'{"max wall ms":>11} {"max sim ms":>10}  rule')
    lines.append(header)
    for line in topics:
        r = line.report
        lines.append(
            f'{r.topic:<28} {r.messages_total:>9} {r.deadline_misses_total:>7} '
            f'{r.skipped_periods_total:>8} {r.messages_lost_total:>6} '
            f'{_ms(line.max_interval_wall_ns):>11} {_ms(line.max_interval_sim_ns):>10}  '
            f'{r.rule}')
    if not topics:
        lines.append('(no topics monitored)')
    if clock.messages_total:
        lines.append(f'clock: {clock.messages_total} messages, RTF since start '
                     f'{_ratio(clock.rtf_total)}, last window {_ratio(clock.rtf)}, '
                     f'sim resets {clock.resets_total}')
    else:
        lines.append('clock: no /clock received')
    return '\n'.join(lines)
