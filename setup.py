"""Plain setuptools entry for `pip install .`; metadata and entry points are in setup.cfg."""

from pathlib import Path
from xml.etree import ElementTree

from setuptools import find_packages, setup


def package_xml_version() -> str:
    """Return the version from package.xml, the one place it is kept."""
    root = ElementTree.parse(Path(__file__).resolve().parent / 'package.xml').getroot()
    return root.findtext('version').strip()


setup(
    version=package_xml_version(),
    packages=find_packages(exclude=['test*']),
)
