"""One INFO when a wait starts, one WARN when it lasts, nothing in between."""

from ros2_deadline_monitor.tools.waiting import WaitNotice

S = 1_000_000_000


def test_a_wait_is_said_once_and_warned_about_once_it_lasts():
    notice = WaitNotice(warn_after_s=5.0)
    assert notice.update('x', 0) == (False, 'waiting for x')
    assert notice.update('x', 4 * S) is None
    assert notice.update('x', 5 * S + S // 10) == (True, 'still waiting for x after 5.1 s')
    assert notice.update('x', 60 * S) is None


def test_each_new_wait_starts_its_own_clock():
    notice = WaitNotice(warn_after_s=5.0)
    notice.update('a', 0)
    assert notice.update('b', 4 * S) == (False, 'waiting for b')
    assert notice.update('b', 8 * S) is None
    assert notice.update('b', 9 * S) == (True, 'still waiting for b after 5.0 s')


def test_nothing_to_wait_for_says_nothing():
    notice = WaitNotice(warn_after_s=5.0)
    assert notice.update(None, 0) is None
    assert notice.update(None, 100 * S) is None
    notice.update('a', 100 * S)
    assert notice.update(None, 200 * S) is None
    assert notice.update(None, 300 * S) is None


def test_a_wait_that_usually_ends_at_once_is_only_warned_about():
    notice = WaitNotice(warn_after_s=5.0)
    assert notice.update('the first cycle', 0, say_start=False) is None
    assert notice.update('the first cycle', 6 * S, say_start=False) == (
        True, 'still waiting for the first cycle after 6.0 s')
