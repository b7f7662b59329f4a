"""The workers that run a signature: merging the requests that queue while it runs
(`Worker`), and TensorFlow Serving's batching (`Batcher`: --enable-batching)."""

import asyncio
import collections
import queue
import threading
import time

import numpy as np

from .errors import ApiError
from .settings import BATCH_THREADS, BATCHING, MAX_BATCH_ROWS
from .tensors import with_digits

QUEUE_FULL = "The batch scheduling queue to which this task was submitted is full"


def batchable(definition, least_rank=2):
    """Rows of different requests may share a call when every input and output of the
    signature has two dimensions or more, the first unknown: the batch, as in every Keras
    model. A one-dimensional input (a sequence of tokens, serialized examples) may be
    anything but rows, so such a signature is never merged. TensorFlow Serving's batching
    (`--enable-batching`, least_rank 1) takes the first dimension of every tensor as the
    batch, one-dimensional ones too, as its own does."""
    if definition is None:
        return False
    tensors = list(definition["inputs"].values()) + list(definition["outputs"].values())
    return bool(tensors) and all(
        not t["tensor_shape"]["unknown_rank"]
        and len(t["tensor_shape"]["dim"]) >= least_rank
        and t["tensor_shape"]["dim"][0]["size"] == "-1"
        for t in tensors
    )


class Job:
    """One request's inputs (numpy arrays of `rows` rows) and the event loop waiting."""

    requests = 1  # the requests it answers (the link's may answer several)

    def __init__(self, feeds, rows, digits=False):
        self.feeds, self.rows = feeds, rows
        # Its float32 outputs as JSON writes them (`float32_digits`), done by the worker once
        # for a merged batch rather than once a request on the event loop.
        self.digits = digits
        self.loop = asyncio.get_running_loop()
        self.future = self.loop.create_future()

    def settle(self, outputs, error=None):
        try:
            self.loop.call_soon_threadsafe(settle, self.future, outputs, error)
        except RuntimeError:  # the loop has ended: the server is stopping
            pass

    def group_settled(self):
        """Every job of the call this one was in is settled (the link sends their answers
        together)."""

    def split(self):
        """Its requests as jobs of their own, to run alone."""
        return [self]

    def fits(self, other, rows):
        return (
            rows > 0
            and other.rows > 0
            and rows + other.rows <= MAX_BATCH_ROWS
            and self.feeds.keys() == other.feeds.keys()
            and all(
                value.dtype == other.feeds[key].dtype
                and value.shape[1:] == other.feeds[key].shape[1:]
                for key, value in self.feeds.items()
            )
        )


def settle(future, outputs, error):
    if future.done():  # the client went away
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(outputs)


STOP = object()


class Worker:
    """Runs one signature on its own thread, a call at a time. With `merge`, the jobs that
    queued meanwhile (same inputs, same shapes past the first dimension) go into one call;
    a merged call that fails, or whose outputs do not have one row per input row, is run
    again request by request, so one bad request fails alone."""

    per_request = False  # whether its batching counts each request (Batcher's does)

    def __init__(self, signature, merge, name):
        self.signature, self.merge = signature, merge
        self.queue = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self.serve, name=name, daemon=True).start()

    def submit(self, job):
        with self.lock:
            if not self.closed:
                self.queue.put(job)
                return
        self.run_alone(job)

    def run_alone(self, job):
        """The version was replaced after the request found it: it still answers."""
        threading.Thread(target=self.run_guarded, args=([job],), daemon=True).start()

    def close(self):
        with self.lock:
            if not self.closed:
                self.closed = True
                self.queue.put(STOP)

    def serve(self):
        held = None
        while True:
            job = held if held is not None else self.queue.get()
            held = None
            if job is STOP:
                return
            group, rows = [job], job.rows
            while self.merge:
                try:
                    following = self.queue.get_nowait()
                except queue.Empty:
                    break
                if following is STOP or not job.fits(following, rows):
                    held = following
                    break
                group.append(following)
                rows += following.rows
            self.run_guarded(group)

    def run_guarded(self, group):
        try:
            self.run(group)
        except BaseException as error:  # the thread lives on; nobody is left waiting
            for job in group:
                job.settle(None, RuntimeError(f"the model call failed: {error!r}"))
        for job in group:
            job.group_settled()

    def call(self, feeds):
        return self.signature(feeds)

    allowed = ()  # batch sizes a merged call is padded up to (Batcher's)

    def run(self, group):
        rows = sum(job.rows for job in group)
        size = next((size for size in self.allowed if size >= rows), rows) if rows else rows
        if len(group) > 1 or size > rows or group[0].requests > 1:
            feeds = [job.feeds for job in group]
            if size > rows:  # padded, as TensorFlow Serving pads, with the last request's first row
                feeds.append(
                    {
                        key: np.repeat(value[:1], size - rows, axis=0)
                        for key, value in feeds[-1].items()
                    }
                )
            try:
                outputs = self.call(
                    {key: np.concatenate([each[key] for each in feeds]) for key in feeds[0]}
                )
            except Exception:
                outputs = None
            if outputs is not None and all(
                value.ndim and value.shape[0] == size for value in outputs.values()
            ):
                written = with_digits(outputs) if any(job.digits for job in group) else outputs
                start = 0
                for job in group:
                    given = written if job.digits else outputs
                    job.settle(
                        {key: value[start : start + job.rows] for key, value in given.items()}
                    )
                    start += job.rows
                return
        for job in [each for merged in group for each in merged.split()]:
            try:
                outputs = self.call(job.feeds)
                job.settle(with_digits(outputs) if job.digits else outputs)
            except Exception as error:  # the request's own error, answered to it
                job.settle(None, error)


class Batch:
    """Requests a Batcher runs in one call: when the first came, their rows, and them."""

    def __init__(self, job):
        self.started, self.rows, self.jobs = time.monotonic(), job.rows, [job]


class Batcher(Worker):
    """TensorFlow Serving's batching of one signature (`--enable-batching`), after its
    shared batch scheduler: a request joins the open batch when its rows fit in
    `max_batch_size` (and its inputs' shapes past the batch match), else a new batch opens,
    refused UNAVAILABLE (503) when `max_enqueued_batches` are waiting already; a request over
    `max_batch_size` rows is refused INVALID_ARGUMENT (400). `num_batch_threads` threads each
    take the oldest batch once it is full, another has opened behind it, or it has waited
    `batch_timeout_micros`; a batch is padded up to the next of `allowed_batch_sizes`. As
    Worker, a merged call that fails is run again request by request."""

    per_request = True

    def __init__(self, signature, merge, name):
        self.signature, self.merge = signature, merge
        self.timeout = BATCHING["batch_timeout_micros"] / 1e6
        self.capacity = BATCHING["max_enqueued_batches"]
        self.allowed = BATCHING["allowed_batch_sizes"] if merge else ()
        self.batches = collections.deque()
        self.condition = threading.Condition()
        self.closed = False
        for index in range(BATCH_THREADS):
            threading.Thread(target=self.serve, name=f"{name}-{index}", daemon=True).start()

    def submit(self, job):
        if self.merge and job.rows > MAX_BATCH_ROWS:
            raise ApiError(
                400,
                f"Task size {job.rows} is larger than maximum input batch size {MAX_BATCH_ROWS}",
            )
        with self.condition:
            if not self.closed:
                last = self.batches[-1] if self.batches else None
                if self.merge and last is not None and last.jobs[0].fits(job, last.rows):
                    last.jobs.append(job)
                    last.rows += job.rows
                elif len(self.batches) >= self.capacity:
                    raise ApiError(503, QUEUE_FULL)
                else:
                    self.batches.append(Batch(job))
                self.condition.notify()
                return
        self.run_alone(job)

    def close(self):
        with self.condition:
            self.closed = True
            self.condition.notify_all()

    def serve(self):
        while True:
            with self.condition:
                while True:
                    if self.batches:
                        first = self.batches[0]
                        wait = first.started + self.timeout - time.monotonic()
                        if (
                            not self.merge
                            or first.rows >= MAX_BATCH_ROWS
                            or len(self.batches) > 1
                            or wait <= 0
                            or self.closed
                        ):
                            self.batches.popleft()
                            break
                        self.condition.wait(wait)
                    elif self.closed:
                        return
                    else:
                        self.condition.wait()
            self.run_guarded(first.jobs)
