import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import cairn_step  # noqa: E402
from cairn_step import CairnStepError, context, report  # noqa: E402


def write_context(tmp_path, **extra):
    data = {
        "cairn": 1,
        "step": "tokenize",
        "attempt": 2,
        "outputPath": str(tmp_path / "out"),
        "inputs": {"corpus": "/data/corpus", "vocab": 32000},
        "runtime": {"threads": 4},
        "depPaths": {"raw-0123456789abcdef": "/data/corpus"},
        "argv": ["python3", "tokenize.py"],
        "sources": {"tokenize.py": "0123456789abcdef"},
        "resultPath": str(tmp_path / "result.json"),
    }
    data.update(extra)
    p = tmp_path / "context.json"
    p.write_text(json.dumps(data))
    return p, data


def test_context_reads_the_file_named_by_the_environment(tmp_path, monkeypatch):
    p, data = write_context(tmp_path, gpuIndices=[1, 3])
    monkeypatch.setenv("CAIRN_CONTEXT", str(p))
    ctx = context()
    assert ctx.step == "tokenize"
    assert ctx.attempt == 2
    assert ctx.output_path == data["outputPath"]
    assert ctx.inputs == {"corpus": "/data/corpus", "vocab": 32000}
    assert ctx.runtime == {"threads": 4}
    assert ctx.dep_paths == data["depPaths"]
    assert ctx.gpu_indices == [1, 3]
    assert ctx["sources"] == {"tokenize.py": "0123456789abcdef"}


def test_context_without_cairn_says_how_to_run_it(monkeypatch):
    monkeypatch.delenv("CAIRN_CONTEXT", raising=False)
    with pytest.raises(CairnStepError, match="not started as a Cairn command step"):
        context()


def test_context_refuses_a_corrupt_or_foreign_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(CairnStepError, match="cannot read"):
        context(str(bad))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"cairn": 99}))
    with pytest.raises(CairnStepError, match="format-1"):
        context(str(other))


def test_report_writes_result_and_metadata_atomically(tmp_path, monkeypatch):
    target = tmp_path / "result.json"
    monkeypatch.setenv("CAIRN_RESULT", str(target))
    report({"tokens": 12}, metadata={"vocab": 32000})
    assert json.loads(target.read_text()) == {"result": {"tokens": 12}, "metadata": {"vocab": 32000}}
    report([1, 2])
    assert json.loads(target.read_text()) == {"result": [1, 2]}
    assert [f for f in os.listdir(str(tmp_path)) if f.startswith(".result-")] == []


def test_report_refuses_nan_and_bad_metadata(tmp_path):
    target = str(tmp_path / "r.json")
    with pytest.raises(ValueError):
        report(float("nan"), path=target)
    with pytest.raises(TypeError):
        report(1, metadata=[1], path=target)
    assert not os.path.exists(target)


def test_round_trip_in_a_child_process(tmp_path):
    p, _ = write_context(tmp_path)
    script = (
        "from cairn_step import context, report\n"
        "c = context()\n"
        "report({'step': c.step, 'vocab': c.inputs['vocab'], 'attempt': c.attempt})\n"
    )
    env = dict(os.environ, CAIRN_CONTEXT=str(p), CAIRN_RESULT=str(tmp_path / "result.json"),
               PYTHONPATH=os.path.dirname(HERE))
    subprocess.check_call([sys.executable, "-c", script], env=env)
    assert json.loads((tmp_path / "result.json").read_text()) == {"result": {"step": "tokenize", "vocab": 32000, "attempt": 2}}


def test_version():
    assert cairn_step.__version__ == "0.1.0"
