"""The one-screen summary logged when the monitor shuts down, read from the last snapshot."""

from __future__ import annotations

from ros2_deadline_monitor.core import format as fmt
from ros2_deadline_monitor.core.snapshot import Snapshot


def summary_text(node_name: str, snapshot: Snapshot) -> str:
    """Return totals per topic, the longest intervals ever seen and the RTF, as a table.

    Totals are cumulative since start; the max intervals are the longest of every report,
    not only the last window's.
    """
    lines = [f'{node_name} summary (totals since start):']
    lines.append(f'{"topic":<28} {"messages":>9} {"misses":>7} {"skipped":>8} {"lost":>6} '
                 f'{"max wall ms":>11} {"max sim ms":>10}  rule')
    for topic in snapshot.topics:
        r = topic.report
        if r is None:
            lines.append(f'{topic.topic or topic.topic_id:<28} not monitored: {topic.reason}')
            continue
        lines.append(
            f'{r.topic:<28} {r.messages_total:>9} {r.deadline_misses_total:>7} '
            f'{r.skipped_periods_total:>8} {r.messages_lost_total:>6} '
            f'{fmt.ms(topic.max_interval_wall_ns, 2):>11} '
            f'{fmt.ms(topic.max_interval_sim_ns, 2):>10}  {r.rule}')
        if topic.notes:  # several producers, foreign stamps, outages, fallbacks
            lines.append(f'  {r.topic}: ' + '; '.join(topic.notes))
    if not snapshot.topics:
        lines.append('(no topics monitored)')
    clock = snapshot.clock.report
    if clock.messages_total:
        lines.append(f'clock: {clock.messages_total} messages, RTF since start '
                     f'{fmt.number(clock.rtf_total, 4)}, last window '
                     f'{fmt.number(clock.rtf, 4)}, sim resets {clock.resets_total}')
    else:
        lines.append('clock: no /clock received')
    return '\n'.join(lines)
