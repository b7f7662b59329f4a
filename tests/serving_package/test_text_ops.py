"""TensorFlow Text's ops are registered before a model loads, as TensorFlow Serving's build
links them in; a tensorflow_text that is missing or fails to import is logged, never fatal."""

import logging
import sys

import tensorflow as tf
from tensorflow.python.framework import op_def_registry

from tfimg_serving.servables import register_text_ops


def test_the_image_s_tensorflow_text_is_at_its_tensorflow_line_and_registers_its_ops(caplog):
    caplog.set_level(logging.INFO, logger="tfimg.serving")
    version = register_text_ops()
    line = ".".join(tf.__version__.split(".")[:2])
    assert version is not None and version.startswith(f"{line}."), (version, tf.__version__)
    assert f"TensorFlow Text {version}: its ops are registered" in caplog.text
    for op in ("ConstrainedSequence", "SentencepieceOp", "WordpieceTokenizeWithOffsets"):
        assert op_def_registry.get(op) is not None, op


def test_without_tensorflow_text_the_server_says_so_and_goes_on(caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger="tfimg.serving")
    monkeypatch.setitem(sys.modules, "tensorflow_text", None)  # as if not installed
    assert register_text_ops() is None
    assert "TensorFlow Text's ops are not registered: tensorflow_text is not installed" in (
        caplog.text
    )


def fake_tensorflow_text(folder, body, monkeypatch):
    """A tensorflow_text package in `folder` whose import runs `body`, first on the path and
    not yet imported."""
    package = folder / "tensorflow_text"
    package.mkdir()
    (package / "__init__.py").write_text(body)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "tensorflow_text", raising=False)


def test_a_tensorflow_text_that_fails_to_import_is_logged_and_not_fatal(
    caplog, monkeypatch, tmp_path
):
    caplog.set_level(logging.INFO, logger="tfimg.serving")
    # A wheel built for another TensorFlow: its kernels do not load.
    fake_tensorflow_text(
        tmp_path, "raise OSError('_constrained_sequence_op.so: undefined symbol')", monkeypatch
    )
    assert register_text_ops() is None
    assert (
        "TensorFlow Text's ops are not registered: importing tensorflow_text failed: OSError: "
        "_constrained_sequence_op.so: undefined symbol"
    ) in caplog.text
    assert any(record.levelno == logging.WARNING for record in caplog.records)


def test_a_dependency_tensorflow_text_lacks_is_named(caplog, monkeypatch, tmp_path):
    caplog.set_level(logging.INFO, logger="tfimg.serving")
    fake_tensorflow_text(tmp_path, "import tfimg_no_such_dependency\n", monkeypatch)
    assert register_text_ops() is None
    assert (
        "TensorFlow Text's ops are not registered: No module named 'tfimg_no_such_dependency'"
    ) in caplog.text
