"""The README's Python snippets run as written, from the repository root (their paths are
relative to it), in a fresh interpreter each: a snippet that no test runs is how a crash
ships."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.abspath(os.environ.get("BATCHDYN_MODELS", os.path.join(os.path.dirname(__file__), "..", "..", "models"))))
SNIPPETS = re.findall(r"^```python\n(.*?)^```", open(os.path.join(ROOT, "README.md")).read(), re.S | re.M)


def test_the_readme_has_python_snippets():
    assert SNIPPETS, "no ```python block in README.md"


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_the_readme_python_snippet_runs_as_written(index):
    result = subprocess.run([sys.executable, "-c", SNIPPETS[index]], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"README Python snippet {index + 1} failed (exit {result.returncode}):\n{result.stderr[-3000:]}"
