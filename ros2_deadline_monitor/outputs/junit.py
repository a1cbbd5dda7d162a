"""Expectation outcomes as JUnit XML, the test report format CI systems show.

One ``<testsuite>`` per run (a bag, or one live run), one ``<testcase>`` per topic and one for
the clock; a testcase with failed expectations carries one ``<failure>`` whose ``message``
names each failed figure with its measured value and limit (GitHub Actions test reporters,
GitLab's ``artifacts:reports:junit`` and Jenkins' JUnit plugin all read this subset: they
show the first failure of a testcase). A run that could not be analyzed is one testcase with
an ``<error>``. ``xml.etree`` escapes the text; characters XML 1.0 cannot carry are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import re
import xml.etree.ElementTree as ET  # noqa: N817 - the module's usual short name

from ros2_deadline_monitor.configuration.expectations import CLOCK_SUBJECT, Outcome

__all__ = ['JunitCase', 'JunitSuite', 'cases_from', 'junit_xml']

_INVALID = re.compile('[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')


@dataclass(frozen=True)
class JunitCase:
    """One testcase: a topic, the clock, a baseline comparison or an unreadable run.

    ``failures`` are the one-line texts of what did not hold; ``error`` is set when the run
    could not be analyzed at all; ``passed`` lists what held (written to ``system-out``).
    """

    name: str
    failures: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()
    error: str = ''


@dataclass(frozen=True)
class JunitSuite:
    """One run: its name (the bag path), duration in seconds and testcases."""

    name: str
    cases: tuple[JunitCase, ...]
    seconds: float = 0.0


def cases_from(outcomes: Sequence[Outcome], subjects: Sequence[str] = (),
               clock: str | None = None) -> list[JunitCase]:
    """Group outcomes into a testcase per topic (in ``subjects`` order first) and the clock.

    ``subjects`` are topic names that get a testcase even without an expectation (every
    analyzed topic), and ``clock`` the clock topic, so the report lists what was looked at.
    """
    order = list(dict.fromkeys([*subjects, *(o.topic for o in outcomes
                                             if o.topic_id != CLOCK_SUBJECT)]))
    clocks = [o.topic for o in outcomes if o.topic_id == CLOCK_SUBJECT]
    clocks = clocks[:1] or ([clock] if clock else [])
    cases = []
    for name in order + clocks:
        is_clock = name in clocks
        mine = [o for o in outcomes if o.topic == name
                and (o.topic_id == CLOCK_SUBJECT) == is_clock]
        cases.append(JunitCase(name=name,
                               failures=tuple(o.describe() for o in mine if not o.passed),
                               passed=tuple(o.describe() for o in mine if o.passed)))
    return cases


def _clean(text: str) -> str:
    return _INVALID.sub('', text)


def junit_xml(suites: Sequence[JunitSuite]) -> bytes:
    """Serialize ``suites`` as a JUnit XML document (UTF-8, with an XML declaration)."""
    root = ET.Element('testsuites', name='ros2_deadline_monitor')
    totals = {'tests': 0, 'failures': 0, 'errors': 0}
    total_time = 0.0
    for suite in suites:
        failures = sum(1 for c in suite.cases if c.failures and not c.error)
        errors = sum(1 for c in suite.cases if c.error)
        element = ET.SubElement(root, 'testsuite', name=_clean(suite.name),
                                tests=str(len(suite.cases)), failures=str(failures),
                                errors=str(errors), skipped='0', time=f'{suite.seconds:.3f}')
        for case in suite.cases:
            node = ET.SubElement(element, 'testcase', name=_clean(case.name),
                                 classname=_clean(suite.name), time='0')
            if case.error:
                error = ET.SubElement(node, 'error', message=_clean(case.error),
                                      type='AnalysisError')
                error.text = _clean(case.error)
            elif case.failures:
                failure = ET.SubElement(node, 'failure', message=_clean('; '.join(case.failures)),
                                        type='ExpectationFailed')
                failure.text = _clean('\n'.join(case.failures))
            if case.passed:
                ET.SubElement(node, 'system-out').text = _clean('\n'.join(case.passed))
        totals['tests'] += len(suite.cases)
        totals['failures'] += failures
        totals['errors'] += errors
        total_time += suite.seconds
    for key, value in totals.items():
        root.set(key, str(value))
    root.set('time', f'{total_time:.3f}')
    ET.indent(root)
    return ET.tostring(root, encoding='utf-8', xml_declaration=True) + b'\n'
