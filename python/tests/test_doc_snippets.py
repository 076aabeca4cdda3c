"""The Python snippets of the README and of docs/*.md run as written, from the repository root
(their paths are relative to it), in a fresh interpreter each: a snippet that no test runs is
how a crash ships."""
import glob
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.abspath(os.environ.get("BATCHDYN_MODELS", os.path.join(os.path.dirname(__file__), "..", "..", "models"))))
PAGES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
SNIPPETS = [(os.path.relpath(page, ROOT), k + 1, code)
            for page in PAGES
            for k, code in enumerate(re.findall(r"^```python\n(.*?)^```", open(page).read(), re.S | re.M))]


def test_the_readme_and_the_docs_have_python_snippets():
    pages = {page for page, _, _ in SNIPPETS}
    assert "README.md" in pages and len(SNIPPETS) >= 3, pages


@pytest.mark.parametrize("page,index,code", SNIPPETS, ids=[f"{page}:{index}" for page, index, _ in SNIPPETS])
def test_the_python_snippet_runs_as_written(page, index, code):
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{page} Python snippet {index} failed (exit {result.returncode}):\n{result.stderr[-3000:]}"
