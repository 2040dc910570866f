"""Read a Cairn command step's context and report its result.

Cairn starts a command step's program with two environment variables:

- ``CAIRN_CONTEXT``: a JSON file holding the step's whole context (its name, attempt, output
  path, resolved inputs, runtime values, dependency paths, argv, declared sources, GPU slots).
- ``CAIRN_RESULT``: where the program may write its result, JSON ``{"result": ..., "metadata": {...}}``.
  The result is recorded and returned by ``run()`` like an ``apply`` step's value; the metadata
  goes to the attempt's log.

Standard library only.
"""

import json
import os
import tempfile

__all__ = ["Context", "CairnStepError", "context", "report"]
__version__ = "0.1.0"

CONTEXT_ENV = "CAIRN_CONTEXT"
RESULT_ENV = "CAIRN_RESULT"


class CairnStepError(RuntimeError):
    """The program was not started as a Cairn command step, or its context file is unreadable."""


class Context(object):
    """A command step's context (the parsed ``$CAIRN_CONTEXT`` file)."""

    def __init__(self, data):
        #: The raw JSON object.
        self.data = data
        #: The step's name.
        self.step = data["step"]
        #: 1-based attempt number.
        self.attempt = data["attempt"]
        #: Where the step writes its output (a directory path).
        self.output_path = data["outputPath"]
        #: The step's inputs: dependency handles are their output paths, OUT the output path.
        self.inputs = data.get("inputs", {})
        #: Runtime values (not part of the step's identity).
        self.runtime = data.get("runtime", {})
        #: Dependencies' output paths, keyed by their identity (name-hash).
        self.dep_paths = data.get("depPaths", {})
        #: The argv the program was started with.
        self.argv = data.get("argv", [])
        #: Declared sources and their content hashes.
        self.sources = data.get("sources", {})
        #: GPU slots assigned to this attempt (also in CUDA_VISIBLE_DEVICES), or None.
        self.gpu_indices = data.get("gpuIndices")
        #: Where report() writes.
        self.result_path = data.get("resultPath")
        #: The step's durable checkpoint directory (kept across attempts and runs until it succeeds), or None.
        self.checkpoint_dir = data.get("checkpointDir")

    def __getitem__(self, key):
        return self.data[key]

    def __repr__(self):
        return "Context(step=%r, attempt=%r, output_path=%r)" % (self.step, self.attempt, self.output_path)


def context(path=None):
    """The step's context, read from ``path`` or the file named by ``$CAIRN_CONTEXT``."""
    path = path or os.environ.get(CONTEXT_ENV)
    if not path:
        raise CairnStepError("%s is not set: this program was not started as a Cairn command step "
                             "(run it with command() in a Cairn pipeline, or pass its paths as arguments)." % CONTEXT_ENV)
    try:
        with open(path, "r", encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as err:
        raise CairnStepError("cannot read the Cairn context file %s: %s" % (path, err))
    if not isinstance(data, dict) or data.get("cairn") != 1:
        raise CairnStepError("%s is not a format-1 Cairn context file; use a cairn_step that matches your Cairn version." % path)
    return Context(data)


def report(result=None, metadata=None, path=None):
    """Reports the step's result (JSON-serialisable) and optional metadata (a dict).

    Written atomically to ``path`` or ``$CAIRN_RESULT``; a second call replaces the first.
    """
    path = path or os.environ.get(RESULT_ENV)
    if not path:
        raise CairnStepError("%s is not set: this program was not started as a Cairn command step." % RESULT_ENV)
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError("metadata must be a dict, got %s" % type(metadata).__name__)
    payload = {"result": result}
    if metadata is not None:
        payload["metadata"] = metadata
    # allow_nan=False: NaN is not JSON, and Cairn records results as JSON.
    text = json.dumps(payload, allow_nan=False)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".result-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
