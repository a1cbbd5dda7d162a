"""The documented key lists, generated from the figure table, and their generator."""

from __future__ import annotations

from pathlib import Path
import re

from ros2_deadline_monitor.outputs import figure_docs

ROOT = Path(__file__).resolve().parents[2]


def test_documented_whole_run_keys_are_the_generated_ones():
    text = (ROOT / 'docs' / 'whole-run-figures.md').read_text(encoding='utf-8')
    start = text.index(figure_docs.RUN_BEGIN)
    end = text.index(figure_docs.RUN_END) + len(figure_docs.RUN_END)
    assert text[start:end] == figure_docs.run_markdown(), (
        'docs/whole-run-figures.md differs from the figure table: run `python -m '
        'ros2_deadline_monitor.outputs.figure_docs run --write docs/whole-run-figures.md`')


def test_documented_key_list_is_the_generated_one():
    text = (ROOT / 'docs' / 'diagnostics.md').read_text(encoding='utf-8')
    start = text.index(figure_docs.BEGIN)
    end = text.index(figure_docs.END) + len(figure_docs.END)
    assert text[start:end] == figure_docs.markdown(), (
        'docs/diagnostics.md differs from the figure table: run '
        '`python -m ros2_deadline_monitor.outputs.figure_docs --write docs/diagnostics.md`')


def test_generator_writes_the_block_between_the_markers(tmp_path):
    readme = tmp_path / 'README.md'
    readme.write_text(f'# x\n\n{figure_docs.BEGIN}\nold\n{figure_docs.END}\n\nrest\n',
                      encoding='utf-8')
    assert figure_docs.main(['--write', str(readme)]) == 0
    text = readme.read_text(encoding='utf-8')
    assert text.startswith('# x\n\n' + figure_docs.markdown()) and text.endswith('\n\nrest\n')
    assert figure_docs.main(['--write', str(tmp_path / 'missing.md')]) == 1


def test_every_key_is_documented_in_table_order():
    block = figure_docs.markdown()
    rows = re.findall(r'^\| `([^`]+)` \|', block, re.M)
    assert rows == [f.key for table, _ in figure_docs.tables().values() for f in table]
