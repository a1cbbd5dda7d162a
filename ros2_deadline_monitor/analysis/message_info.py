"""What to do when the middleware fills less of the message info than Fast DDS does.

rclpy hands a subscription ``info['source_timestamp']``, ``info['received_timestamp']`` and
``info['publication_sequence_number']``. Fast DDS fills all three; other middlewares (Cyclone
DDS, Zenoh, bridges) may leave a timestamp at 0 and the sequence number at 0, or set it to
``UINT64_MAX`` (rmw's "unsupported"). Used as they are, a 0 timestamp makes every interval
of the topic 0 and a constant sequence number turns "messages lost" into nonsense.

``InfoFallback`` watches one topic's stream of message infos and decides, once and for the
rest of the stream, what to use instead: the received timestamp when the source timestamp is
missing, the monitor's own take time when that is missing too, and no sequence number (loss
``unknown``) when sequence numbers are missing. It never switches back (a stream whose arrival
stamps came from two clocks would mix them); each switch is recorded with the message it
happened at, for the topic's status. Pure: callers pass every value, including the take time.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    'RECEIVED',
    'SEQUENCE_UNSUPPORTED',
    'SOURCE',
    'TAKEN',
    'FallbackStatus',
    'InfoFallback',
    'sequence_known',
    'timestamp_known',
]

SOURCE = 'source_timestamp'
RECEIVED = 'received_timestamp'
TAKEN = 'taken'
"""Not a message-info key: the time the monitor took the message (its own clock)."""

SEQUENCE_UNSUPPORTED = 2**64 - 1
"""``RMW_MESSAGE_INFO_SEQUENCE_NUMBER_UNSUPPORTED``: the rmw cannot tell."""

_ORDER = (SOURCE, RECEIVED, TAKEN)
_WORDS = {SOURCE: 'source (writer-side) timestamps', RECEIVED: 'received timestamps',
          TAKEN: "the monitor's take times"}


def timestamp_known(value: int | None) -> bool:
    """Tell whether a middleware timestamp was filled in (not None, not 0)."""
    return value is not None and value > 0


def sequence_known(value: int | None) -> bool:
    """Tell whether a publication sequence number was filled in (not None, 0 or UINT64_MAX).

    Fast DDS numbers the samples of a writer from 1, so 0 never is a real one.
    """
    return value is not None and 0 < value < SEQUENCE_UNSUPPORTED


@dataclass(frozen=True)
class FallbackStatus:
    """What one topic's stream uses now, and why, for its status.

    ``timestamp``: ``source_timestamp``, ``received_timestamp`` or ``taken``, the arrival
    stamp in use since message ``timestamp_since`` (1-based; 0 before any message).
    ``loss_known`` is False from message ``loss_unknown_since`` on (0: never).
    ``notes``: one sentence per fallback, empty when everything is as configured.
    """

    timestamp: str
    timestamp_since: int
    loss_known: bool
    loss_unknown_since: int
    notes: tuple[str, ...]
    loss_note: str = 'the middleware gives no sequence numbers'
    """Why loss is unknown (``loss_known`` False): the topic's ``loss_note``."""


class InfoFallback:
    """Per-topic decisions about missing message-info fields (see the module docstring).

    ``preferred`` is the configured arrival stamp (``source_timestamp`` or
    ``received_timestamp``); it is used as long as the middleware fills it.
    """

    __slots__ = ('preferred', 'complete', '_use', '_since', '_messages', '_loss_unknown_since',
                 '_notes')

    def __init__(self, preferred: str = SOURCE) -> None:
        """Start a stream that uses ``preferred`` until a message lacks it."""
        if preferred not in (SOURCE, RECEIVED):
            raise ValueError(f'preferred must be {SOURCE!r} or {RECEIVED!r}, got {preferred!r}')
        self.preferred = preferred
        self.complete = 0
        """Messages a caller's fast path handed on itself, every field filled (it adds one
        per message while ``degraded`` is False); counted at the next ``arrival_ns``."""
        self._use = _ORDER.index(preferred)
        self._since = 0
        self._messages = 0
        self._loss_unknown_since = 0
        self._notes: list[str] = []

    def arrival_ns(self, source_ns: int | None, received_ns: int | None, taken_ns: int) -> int:
        """Return the arrival stamp of one message (int ns) and count the message.

        Falls back, for good, from the source to the received timestamp and from that to
        ``taken_ns`` (the caller's own clock at the take) when a message lacks it.
        """
        self._messages += 1 + self.complete
        self.complete = 0
        if self._since == 0:
            self._since = 1
        values = (source_ns, received_ns, taken_ns)
        use = self._use
        while use < 2 and not timestamp_known(values[use]):
            use += 1
        if use != self._use:
            self._notes.append(
                f'{_WORDS[_ORDER[use]]} since message {self._messages}: the middleware left '
                f'the {_WORDS[_ORDER[self._use]]} empty')
            self._use, self._since = use, self._messages
        return values[use]  # type: ignore[return-value]

    @property
    def degraded(self) -> bool:
        """Tell whether anything fell back: every later message must go through this object."""
        return self._use != _ORDER.index(self.preferred) or bool(self._loss_unknown_since)

    def sequence(self, number: int | None) -> int | None:
        """Return the publication sequence number to count losses with, None when unknown.

        Call once per message, after ``arrival_ns``. Once a message lacks it, loss stays
        unknown for the rest of the stream: gaps in a partial numbering would be wrong counts.
        """
        if self._loss_unknown_since:
            return None
        if sequence_known(number):
            return number
        self._loss_unknown_since = max(self._messages, 1)
        what = ('no sequence number' if number is None
                else f'sequence number {number} ({"unsupported" if number else "unset"})')
        self._notes.append(f'loss unknown since message {self._loss_unknown_since}: the '
                           f'middleware gave {what}')
        return None

    @property
    def state_key(self) -> tuple:
        """What ``status`` depends on, cheaper to compare than a status to build."""
        return (self._use, self._since, bool(self.complete), self._loss_unknown_since,
                len(self._notes))

    def status(self) -> FallbackStatus:
        """Return what the stream uses now (a frozen value for a snapshot)."""
        return FallbackStatus(
            timestamp=_ORDER[self._use],
            timestamp_since=self._since or (1 if self.complete else 0),
            loss_known=not self._loss_unknown_since,
            loss_unknown_since=self._loss_unknown_since,
            notes=tuple(self._notes),
        )
