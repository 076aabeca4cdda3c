"""Training beyond one process: examples/train_ppo.py --distributed under torchrun (gloo on
127.0.0.1), two ranks each stepping half of the environments."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import EXAMPLES

pytestmark = pytest.mark.slow  # torchrun and PPO: minutes
# The `torchrun` command next to this Python (torch's console script), with its default options,
# as a user types it.
TORCHRUN = [os.path.join(os.path.dirname(sys.executable), "torchrun")]
COMMON = ["--envs", "64", "--steps", "8", "--iterations", "3", "--plot", "", "--threads", "1"]


def test_two_ranks_keep_bitwise_identical_parameters_and_see_the_env_steps_of_one_process(tmp_path):
    torch = pytest.importorskip("torch")
    script = os.path.join(EXAMPLES, "train_ppo.py")
    distributed = subprocess.run(TORCHRUN + ["--standalone", "--nproc_per_node=2", script, "--distributed", *COMMON,
                                             "--save-parameters", str(tmp_path / "parameters"), "--summary", str(tmp_path / "two.json")],
                                 capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert distributed.returncode == 0, distributed.stdout + distributed.stderr
    single = subprocess.run([sys.executable, script, *COMMON, "--summary", str(tmp_path / "one.json")], capture_output=True, text=True,
                            timeout=240, cwd=tmp_path)
    assert single.returncode == 0, single.stdout + single.stderr
    two, one = json.loads((tmp_path / "two.json").read_text()), json.loads((tmp_path / "one.json").read_text())
    assert (two["processes"], two["environments"]) == (2, 64) and (one["processes"], one["environments"]) == (1, 64)
    assert two["env_steps"] == one["env_steps"] == 64 * 8 * 3
    assert len(re.findall(r"^iter    3", distributed.stdout, re.MULTILINE)) == 1  # rank 0 logs, rank 1 does not
    ranks = [torch.load(tmp_path / f"parameters.rank{r}") for r in (0, 1)]
    assert ranks[0].keys() == ranks[1].keys()
    for name in ranks[0]:
        assert torch.equal(ranks[0][name], ranks[1][name]), name
    assert ranks[0]["log_std"].ne(-1.0).all()  # the updates moved them from CartPole's initial log std


def test_distributed_without_torchrun_is_refused_with_a_clear_message():
    script = os.path.join(EXAMPLES, "train_ppo.py")
    out = subprocess.run([sys.executable, script, "--distributed", *COMMON], capture_output=True, text=True, timeout=60,
                         env={k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")})
    assert out.returncode != 0 and "launch with torchrun" in out.stdout + out.stderr
