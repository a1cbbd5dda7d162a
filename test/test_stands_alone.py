"""The repository stands alone: no file points at documents a clone does not have.

Docstrings cite the design as "docs/design.md, <section>"; each cited section must exist, so a
renamed heading cannot leave references that send the reader nowhere.
"""

from pathlib import Path
import re

REPO_ROOT = Path(__file__).resolve().parent.parent
DESIGN = REPO_ROOT / 'docs' / 'design.md'
TEXT_SUFFIXES = {'.py', '.md', '.rst', '.txt', '.yaml', '.yml', '.cfg', '.toml', '.xml', ''}
SKIPPED_DIRS = {'.git', '.venv', '.build', 'build', 'install', 'log', '__pycache__'}
# The release notes may name what a change replaced.
SKIPPED_FILES = {'CHANGELOG.rst', 'test_stands_alone.py'}
# Spelled in parts, so that this file is no pointer of its own.
OUTSIDE = ('..' + '/shared', 'DESIGN' + '.md')
CITATION = re.compile(r'docs/design\.md, ([^).:;,\'"]+)')


def _project_files() -> list[Path]:
    files = []
    for path in REPO_ROOT.rglob('*'):
        relative = path.relative_to(REPO_ROOT)
        if any(part in SKIPPED_DIRS or part.startswith('.build') for part in relative.parts):
            continue
        if path.is_file() and path.suffix in TEXT_SUFFIXES and path.name not in SKIPPED_FILES:
            files.append(path)
    return files


def _sections() -> set[str]:
    return {line[3:].strip() for line in DESIGN.read_text().splitlines()
            if line.startswith('## ')}


def test_nothing_points_outside_the_repository():
    outside = []
    for path in _project_files():
        text = path.read_text(errors='replace')
        for number, line in enumerate(text.splitlines(), 1):
            if any(name in line for name in OUTSIDE):
                outside.append(f'{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}')
    assert not outside, 'points at documents outside the repository:\n' + '\n'.join(outside)


def test_every_cited_design_section_exists():
    sections = _sections()
    assert {'Clocks', 'Cycles', 'Clock and RTF', 'Outputs', 'Architecture'} <= sections
    missing = []
    for path in _project_files():
        text = ' '.join(path.read_text(errors='replace').split())
        for match in CITATION.finditer(text):
            cited = match.group(1)
            if not any(cited.startswith(section) for section in sections):
                missing.append(f'{path.relative_to(REPO_ROOT)}: {cited!r}')
    assert not missing, 'cites a section docs/design.md does not have:\n' + '\n'.join(missing)
