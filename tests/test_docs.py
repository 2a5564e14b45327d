"""The documentation site builds with warnings as errors, its examples run, and it covers the API.

Reference: the docs themselves (docs/). The build test skips only if Sphinx is not installed
(it is in the ``dev`` extra).
"""

from __future__ import annotations

import doctest
import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import fdp

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.rst") if "_build" not in p.parts)


@pytest.fixture(scope="module")
def html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once with warnings as errors."""
    if importlib.util.find_spec("sphinx") is None:
        pytest.skip("sphinx is not installed (pip install -e '.[dev]')")
    out_dir = tmp_path_factory.mktemp("docs") / "html"
    out = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(DOCS), str(out_dir)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out_dir


def test_sphinx_build_has_no_warnings(html: Path) -> None:
    for page in ("index", "theory", "bibliography", "api/index", "guides/accountants"):
        assert (html / f"{page}.html").exists(), page


def test_api_reference_covers_every_public_name(html: Path) -> None:
    index = (html / "api" / "index.html").read_text(encoding="utf-8")
    for name in fdp.__all__:
        if name != "__version__":
            assert f"fdp.{name}</span>" in index, name
    for m in pkgutil.iter_modules(fdp.__path__):
        if not m.name.startswith("_"):
            assert (html / "api" / f"{m.name}.html").exists(), m.name


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_doc_examples_run(page: Path) -> None:
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    result = doctest.testfile(str(page), module_relative=False, optionflags=flags, verbose=False)
    assert result.failed == 0


def test_no_reference_to_files_outside_the_project() -> None:
    # docstrings, tutorials and the README cite the theory page (docs/theory.rst, "theory §n") or
    # the paper, never the internal working note MATH.md that is not part of the project
    paths = sorted((ROOT / "fdp").rglob("*.py")) + PAGES + [ROOT / "README.md"]
    for folder, pattern in (("notebooks", "*.py"), ("notebooks", "*.ipynb"), ("figures", "*.md")):
        paths += sorted((ROOT / folder).glob(pattern))
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert "MATH §" not in text and "MATH.md" not in text, path


def test_bibliography_spells_out_every_abbreviation() -> None:
    bib = (DOCS / "bibliography.rst").read_text(encoding="utf-8")
    abbrs = ("KOV", "BBGHS", "DRS", "BDLS", "ZDW", "DGKKM", "MTZ", "WBK", "WBLJ", "ZDLS", "DRV")
    for abbr in abbrs:
        assert f"**{abbr}**" in bib, abbr


def test_citation_and_changelog_match_the_version() -> None:
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert f"\nversion: {fdp.__version__}\n" in cff
    assert f"## [{fdp.__version__}]" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
