"""What a demo tool still waits for before it starts, said once and warned about when it lasts.

The demo's processes log at WARN, so an INFO "waiting for ..." is not seen when a start hangs;
the warning after ``WARN_AFTER_S`` says which wait it was.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ros2_deadline_monitor.analysis.config import NS_PER_S

WARN_AFTER_S = 5.0
POLL_S = 0.01
"""How often a wait polls for what it waits for."""


class WaitNotice:
    """Turn "what am I waiting for now" polls into at most one INFO and one WARN per wait."""

    def __init__(self, warn_after_s: float = WARN_AFTER_S) -> None:
        """``warn_after_s``: how long one wait may last before it is warned about."""
        self._warn_after_ns = int(warn_after_s * NS_PER_S)
        self._what: str | None = None
        self._since_ns = 0
        self._warned = False

    def update(self, what: str | None, now_ns: int, *,
               say_start: bool = True) -> tuple[bool, str] | None:
        """Return ``(is_warning, text)`` to log for this poll, or None.

        ``what`` is the thing waited for (None: nothing); ``now_ns`` a steady time;
        ``say_start=False``: a wait that usually ends at once, only warned about.
        """
        if what != self._what:
            self._what, self._since_ns, self._warned = what, now_ns, False
            return None if what is None or not say_start else (False, f'waiting for {what}')
        if what is None or self._warned or now_ns - self._since_ns < self._warn_after_ns:
            return None
        self._warned = True
        return (True, f'still waiting for {what} after '
                        f'{(now_ns - self._since_ns) / NS_PER_S:.1f} s')


def log_wait(logger: Any, said: tuple[bool, str] | None, detail: str = '') -> None:
    """Log what ``WaitNotice.update`` returned (nothing for None), ``detail`` appended."""
    if said is None:
        return
    warn, text = said
    if warn:  # one call site per severity: rclpy refuses a second severity at one
        logger.warning(text + detail)
    else:
        logger.info(text + detail)


def wait_for_subscriptions(publisher: Any, topic: str, wanted: int, stop: threading.Event,
                           logger: Any, poll_s: float = POLL_S) -> bool:
    """Block until ``publisher`` has ``wanted`` subscriptions, saying so; False on ``stop``.

    For a simulator's pacing thread: it holds its clock until its listeners are there.
    ``topic`` names the publisher's topic in the log as the user knows it (not remapped).
    """
    if wanted <= 0:
        return True
    notice = WaitNotice()
    while (count := publisher.get_subscription_count()) < wanted:
        said = notice.update(f'{wanted} subscription(s) on {topic}',
                             time.monotonic_ns())
        log_wait(logger, said, f' ({count} so far)')
        if stop.wait(poll_s):
            return False
    return True
