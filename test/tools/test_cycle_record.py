import json
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

import ros2_deadline_monitor.tools
from ros2_deadline_monitor.tools.cycle_record import COLUMNS, CycleRecord, CycleRow

MS = 1_000_000


def _record(n: int = 5, timer_clock: str = 'wall') -> CycleRecord:
    rows = []
    for i in range(n):
        start = 1_700_000_000_000_000_000 + i * 10 * MS
        mono = 5_000_000_000 + i * 10 * MS
        took = 22 * MS if i == 2 else MS
        rows.append(CycleRow(start, start + 7, mono, start + 7 + took, mono + took,
                             start + took, i == 2))
    return CycleRecord(timer_clock, 10 * MS, tuple(rows))


def test_save_load_round_trip(tmp_path):
    record = _record()
    path = tmp_path / 'cycles.json'
    record.save(path)
    loaded = CycleRecord.load(path)
    assert loaded == record
    assert loaded.timer_clock == 'wall'
    assert loaded.period_ns == 10 * MS
    assert [p.name for p in tmp_path.iterdir()] == ['cycles.json'], 'no temporary file left'


def test_file_is_one_json_object_of_int_nanoseconds(tmp_path):
    path = tmp_path / 'cycles.json'
    _record(timer_clock='sim').save(path)
    data = json.loads(path.read_text())
    assert data['timer_clock'] == 'sim'
    assert data['columns'] == list(COLUMNS)
    assert all(isinstance(v, int) for row in data['rows'] for v in row)
    assert [row[-1] for row in data['rows']] == [0, 0, 1, 0, 0]


def test_columns_are_int64_arrays_and_injected_a_bool_mask():
    record = _record()
    for name in COLUMNS[:-1]:
        column = getattr(record, name)
        assert column.dtype == np.int64
        assert len(column) == len(record) == 5
    assert record.injected.dtype == bool
    assert (record.end_mono_ns - record.start_mono_ns)[record.injected].tolist() == [22 * MS]
    assert record.start_timer_ns[1] - record.start_timer_ns[0] == 10 * MS
    with pytest.raises(ValueError):
        record.start_timer_ns[0] = 0  # read only: records are values


def test_empty_record_round_trips(tmp_path):
    path = tmp_path / 'empty.json'
    CycleRecord('sim', 4 * MS).save(path)
    loaded = CycleRecord.load(path)
    assert len(loaded) == 0
    assert loaded.start_timer_ns.dtype == np.int64
    assert loaded.injected.dtype == bool


@pytest.mark.parametrize('kwargs', [
    {'timer_clock': 'ros', 'period_ns': 10},
    {'timer_clock': 'wall', 'period_ns': 0},
    {'timer_clock': 'wall', 'period_ns': 1.5},
    {'timer_clock': 'wall', 'period_ns': 10, 'rows': [[1, 2, 3]]},
    {'timer_clock': 'wall', 'period_ns': 10, 'rows': [[1.5, 2, 3, 4, 5, 6, 0]]},
    {'timer_clock': 'wall', 'period_ns': 10, 'rows': [[1, 2, 3, 4, 5, 6, 2]]},
])
def test_invalid_values_are_rejected(kwargs):
    with pytest.raises(ValueError):
        CycleRecord(**kwargs)


@pytest.mark.parametrize('content', [
    'not json',
    '[1, 2]',
    '{"format": "something else"}',
    json.dumps({**_record().to_json(), 'version': 99}),
    json.dumps({**_record().to_json(), 'rows': [[1, 2]]}),
    json.dumps({k: v for k, v in _record().to_json().items() if k != 'period_ns'}),
])
def test_bad_file_raises_value_error_naming_the_path(tmp_path, content):
    path = tmp_path / 'bad.json'
    path.write_text(content)
    with pytest.raises(ValueError, match='bad.json'):
        CycleRecord.load(path)


def test_missing_file_raises_value_error_naming_the_path(tmp_path):
    with pytest.raises(ValueError, match='missing.json'):
        CycleRecord.load(tmp_path / 'missing.json')


def test_reading_a_record_needs_no_rclpy():
    root = Path(ros2_deadline_monitor.tools.__file__).absolute().parents[2]
    code = ('import sys; sys.modules["rclpy"] = None\n'
            'from ros2_deadline_monitor.tools.cycle_record import CycleRecord\n'
            'print(len(CycleRecord("wall", 10)))')
    result = subprocess.run([sys.executable, '-c', code], cwd=root, capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '0'
