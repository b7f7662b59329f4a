"""The workers that run a signature: requests merged into one call and split back, one bad
request failing alone, and a merged call padded to an allowed batch size."""

import asyncio
import threading

import numpy as np
import pytest

from tfimg_serving.batching import Job, Worker


class Model:
    """A signature that holds its calls until released and keeps each call's row count;
    a negative input is its error."""

    def __init__(self):
        self.calls, self.release = [], threading.Event()

    def __call__(self, feeds):
        assert self.release.wait(10), "the test never released the model"
        rows = feeds["x"]
        self.calls.append(len(rows))
        if (rows < 0).any():
            raise ValueError("negative rows are refused")
        return {"y": rows * 2}


def run(worker, model, feeds):
    """Each of `feeds` submitted as a request before the model runs: their answers."""

    async def scenario():
        jobs = [Job({"x": np.array(rows, dtype=np.float32)}, len(rows)) for rows in feeds]
        for job in jobs:
            worker.submit(job)
        model.release.set()
        try:
            return await asyncio.gather(*(job.future for job in jobs), return_exceptions=True)
        finally:
            worker.close()

    return asyncio.run(asyncio.wait_for(scenario(), 20))


def test_requests_that_queue_while_one_runs_share_the_next_call():
    model = Model()
    answers = run(Worker(model, merge=True, name="t"), model, [[[n]] for n in range(8)])
    assert [answer["y"].tolist() for answer in answers] == [[[2.0 * n]] for n in range(8)]
    # The worker may take the first request alone before the rest arrive; never more calls.
    assert sum(model.calls) == 8 and len(model.calls) <= 2, model.calls


def test_without_merging_each_request_is_a_call_of_its_own():
    model = Model()
    answers = run(Worker(model, merge=False, name="t"), model, [[[1.0]], [[2.0]], [[3.0]]])
    assert [answer["y"].tolist() for answer in answers] == [[[2.0]], [[4.0]], [[6.0]]]
    assert model.calls == [1, 1, 1]


def test_a_bad_request_in_a_merged_call_fails_alone():
    model = Model()
    answers = run(Worker(model, merge=True, name="t"), model, [[[1.0]], [[-1.0]], [[3.0]]])
    assert answers[0]["y"].tolist() == [[2.0]] and answers[2]["y"].tolist() == [[6.0]]
    assert isinstance(answers[1], ValueError)
    with pytest.raises(ValueError, match="negative rows are refused"):
        raise answers[1]


class Padded(Worker):
    allowed = (4, 8)


def test_a_call_is_padded_to_the_next_allowed_size_and_the_padding_never_answered():
    model = Model()
    answers = run(Padded(model, merge=True, name="t"), model, [[[1.0], [2.0], [3.0]]])
    assert model.calls == [4]
    assert answers[0]["y"].tolist() == [[2.0], [4.0], [6.0]]
