"""A TF2 model's session twin (`servables.load_twin`): which signatures run there, and
that a request answers the same whichever copy runs it."""

import numpy as np
import pytest
import tensorflow as tf

from tfimg_serving import servables
from tfimg_serving.servables import Servable


class Scaled(tf.Module):
    """y = x * w + b, the w and b variables: it changes nothing."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[2.0], [3.0]])
        self.b = tf.Variable([0.5])

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def __call__(self, x):
        return {"y": tf.matmul(x, self.w) + self.b}


class Counter(tf.Module):
    """Counts its calls: a call changes its variable."""

    def __init__(self):
        super().__init__()
        self.calls = tf.Variable(0.0)

    @tf.function(input_signature=[tf.TensorSpec([None, 1], tf.float32)])
    def __call__(self, x):
        self.calls.assign_add(1.0)
        return {"calls": x * 0.0 + self.calls}


class Noisy(tf.Module):
    """Adds noise from a stateful random op."""

    @tf.function(input_signature=[tf.TensorSpec([None, 1], tf.float32)])
    def __call__(self, x):
        return {"y": x + tf.random.uniform(tf.shape(x))}


def saved(module, folder):
    path = str(folder / "1")
    tf.saved_model.save(module, path, signatures={"serving_default": module.__call__})
    return Servable("m", 1, path)


def test_a_signature_that_changes_nothing_runs_in_the_twin_and_answers_as_the_function(
    tmp_path,
):
    servable = saved(Scaled(), tmp_path)
    signature = servable.signatures["serving_default"]
    assert servable.twin is not None and signature.twin is not None
    x = np.array([[1.0, 1.0], [2.0, -1.0]], np.float32)
    function = signature.function(x=tf.constant(x))["y"].numpy()
    ran = []
    twin = signature.twin
    signature.twin = lambda feeds: ran.append(1) or twin(feeds)
    answered = signature({"x": x})["y"]
    assert ran == [1], "the twin ran it"
    assert answered.dtype == np.float32
    np.testing.assert_array_equal(answered, function)
    np.testing.assert_array_equal(answered, [[5.5], [1.5]])


def test_feeds_the_function_would_not_take_as_they_are_go_to_the_function(tmp_path):
    servable = saved(Scaled(), tmp_path)
    signature = servable.signatures["serving_default"]
    ran = []
    twin = signature.twin
    signature.twin = lambda feeds: ran.append(1) or twin(feeds)
    # float64 (the twin's feeding would convert it), a wrong width and a missing input,
    # which the function refuses, and a list, which it converts itself
    for feeds in ({"x": np.ones((1, 2))}, {"x": np.ones((1, 3), np.float32)}, {}):
        assert not signature.takes(feeds), feeds
        with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
            signature(feeds)
    assert not signature.takes({"x": [[1.0, 1.0]]})
    np.testing.assert_array_equal(signature({"x": [[1.0, 1.0]]})["y"], [[5.5]])
    assert ran == []


def test_an_error_in_the_twin_is_worded_by_the_function(tmp_path):
    servable = saved(Scaled(), tmp_path)
    signature = servable.signatures["serving_default"]

    def failing(feeds):
        raise tf.errors.InvalidArgumentError(None, None, "the twin's words")

    signature.twin = failing
    answered = signature({"x": np.ones((1, 2), np.float32)})["y"]
    np.testing.assert_array_equal(answered, [[5.5]])


@pytest.mark.parametrize("module", [Counter, Noisy])
def test_a_signature_that_changes_state_has_no_twin_and_keeps_one_state(module, tmp_path):
    servable = saved(module(), tmp_path)
    assert servable.signatures["serving_default"].twin is None
    assert servable.twin is None
    if module is Counter:
        signature = servable.signatures["serving_default"]
        counts = [signature({"x": np.zeros((1, 1), np.float32)})["calls"][0, 0] for _ in range(3)]
        assert counts == [1.0, 2.0, 3.0]


def test_a_model_with_variables_past_the_limit_has_no_twin(tmp_path, monkeypatch):
    monkeypatch.setattr(servables, "TWIN_MAX_VARIABLE_BYTES", 16)
    servable = saved(Scaled(), tmp_path)
    assert servable.twin is None
    assert servable.signatures["serving_default"].twin is None
    answered = servable.signatures["serving_default"]({"x": np.ones((1, 2), np.float32)})
    np.testing.assert_array_equal(answered["y"], [[5.5]])
