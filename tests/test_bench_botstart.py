"""`mjbot bench botstart` times the upload zip's one-shot turn as Botzone starts it (no
options, a runtime with numpy and MahjongGB only) beside python + numpy in that runtime."""

import json

import pytest

from tests.in_process import mjbot_here


def test_bench_botstart_times_a_late_turn_of_the_zip_beside_python_and_numpy(capsys):
    done = mjbot_here(capsys, "bench", "botstart", "--repeats", "1", "--json", "-")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["answer"].startswith("PLAY ")  # a draw, answered by the zip's policy
    assert result["turn_requests"] > 20  # late in the match: the whole history is read
    assert result["reference"] == "python -c 'import numpy'"
    assert result["turn_cpu_seconds"] > 0 and result["reference_cpu_seconds"] > 0
    assert result["turn_cpu_ratio_vs_reference"] == pytest.approx(
        result["turn_cpu_seconds"] / result["reference_cpu_seconds"], abs=0.02)
