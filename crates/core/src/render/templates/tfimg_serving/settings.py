"""What the server is given (its environment) and the limits it keeps to."""

import json
import logging
import os
import re

# Where the models are mounted and the two ports: the image's entrypoint sets them from the
# spec (the defaults are TensorFlow Serving's ports).
MODELS = os.environ.get("TFIMG_SERVING_MODELS", "/models")
PORT = int(os.environ.get("TFIMG_SERVING_PORT", "8501"))
GRPC_PORT = int(os.environ.get("TFIMG_SERVING_GRPC_PORT", "8500"))
# Where the compiled front (`tfimg-serving-front`, which started this process and holds
# PORT) reaches it: a folder only this container's user enters, holding the Unix sockets of
# this server's HTTP (`http.sock`) and of the link (`link.sock`). Unset: HTTP on PORT.
FRONT_DIR = os.environ.get("TFIMG_SERVING_FRONT_DIR", "")
# A model config file (TensorFlow Serving's --model_config_file, `tfimg serve
# --model-config`) instead of every folder under MODELS; and where tfimg mounted each
# base_path it names (JSON: host path -> path here).
MODEL_CONFIG = os.environ.get("TFIMG_SERVING_MODEL_CONFIG", "")
BASE_PATHS = json.loads(os.environ.get("TFIMG_SERVING_BASE_PATHS") or "{}")
MAX_CONFIG_BYTES = 1024 * 1024
MAX_IN_FLIGHT = 256  # requests whose body is in, being answered at once; past it, 503
BUSY = f"the server is answering {MAX_IN_FLIGHT} requests already: try again shortly"
BUSY_CALLS = f"the server is answering {MAX_IN_FLIGHT} calls already: try again shortly"
CONNECTIONS = 1024  # uvicorn's cap: a request that finds them open closes silent ones, or 503
OPEN_CONNECTIONS = 4 * CONNECTIONS  # open at once, silent ones too: past it, a new one
# closes the silent longest (each may hold MAX_HEADER_BYTES: 256 MiB in all)
MESSAGE_SECONDS = 30  # a gRPC call's request message arrives whole within this (the largest
# at 2.2 MB/s), or DEADLINE_EXCEEDED; while it comes, it holds no slot
STREAMS_PER_CONNECTION = 100  # gRPC calls one connection has open at once (HTTP/2's streams)
# HandleReloadConfigRequest: UNIMPLEMENTED unless `tfimg serve --allow-reload-config`.
ALLOW_RELOAD_CONFIG = os.environ.get("TFIMG_SERVING_ALLOW_RELOAD_CONFIG") == "1"
HEADER_SECONDS = 10  # a request's headers arrive whole within this, or 408
WRITE_SECONDS = 30  # an answer the client reads nothing of for this long: the connection is cut
MAX_HEADER_BYTES = 64 * 1024  # its URL and headers together; past it, 431
MAX_BODY_BYTES = 64 * 1024 * 1024
TOO_LARGE = f"the request body is over the server's limit of {MAX_BODY_BYTES} bytes"
BODY_IDLE_SECONDS = 10  # the longest a body may stall
BODY_GRACE_SECONDS = 10  # and past these, it arrives at BODY_BYTES_PER_SECOND on average
BODY_BYTES_PER_SECOND = 64 * 1024
SLOW_BODY = (
    f"the request body stopped arriving, or came slower than {BODY_BYTES_PER_SECOND >> 10} KiB/s "
    f"after its first {BODY_GRACE_SECONDS} s"
)
# A body's JSON may take this much while parsed, its text and its Python values (before
# this limit 24 MB of `[0],` took 1.5 GB and 15 s of CPU); past it, 413 before parsing.
MAX_DECODED_BYTES = 256 * 1024 * 1024
MAX_RANK = 32  # lists nested deeper are no tensor (numpy's limit); refused with 400
LARGE_BODY_BYTES = 256 * 1024  # bodies past this are decoded and answered off the event loop
LARGE_AT_ONCE = 2  # large bodies decoded at once: their JSON holds the GIL anyway
POLL_SECONDS = 1.0
# `tfimg serve --model-config-poll SECONDS` (TensorFlow Serving's
# --model_config_file_poll_wait_seconds): how often MODEL_CONFIG is reread; 0 reads it once.
MODEL_CONFIG_POLL_SECONDS = float(os.environ.get("TFIMG_SERVING_MODEL_CONFIG_POLL") or POLL_SECONDS)
# `tfimg serve --grpc-channel-arguments` (TensorFlow Serving's --grpc_channel_arguments),
# checked by tfimg: [key, value] pairs for the gRPC server, after its own options.
GRPC_CHANNEL_ARGUMENTS = json.loads(os.environ.get("TFIMG_SERVING_GRPC_CHANNEL_ARGUMENTS") or "[]")
DEFAULT_SIGNATURE = "serving_default"
MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
INT64_MAX = (1 << 63) - 1
log = logging.getLogger("tfimg.serving")


def max_batch_rows():
    value = os.environ.get("TFIMG_SERVING_MAX_BATCH", "256")
    if not value.isdigit() or int(value) < 1:
        raise SystemExit(
            f"TFIMG_SERVING_MAX_BATCH must be a whole number of rows, 1 or more; got {value!r}"
        )
    return int(value)


# TensorFlow Serving's batching (`tfimg serve --enable-batching [--batching-parameters
# FILE]`): its parameters as tfimg read and checked them, with its defaults filled in
# (`num_batch_threads` null: a thread per core). Without it, merging as described above.
BATCHING = json.loads(os.environ.get("TFIMG_SERVING_BATCHING") or "null")
MAX_BATCH_ROWS = BATCHING["max_batch_size"] if BATCHING else max_batch_rows()
BATCH_THREADS = BATCHING and (BATCHING["num_batch_threads"] or len(os.sched_getaffinity(0)))


def memory_limit():
    """The container's memory limit in bytes (cgroup v2, then v1); None without one."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as file:
                text = file.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:  # cgroup v1 writes "no limit" as 2**63
            return int(text)
    return None


# The request bodies held at once (arriving, or waiting for their answer): an eighth of the
# memory limit (8 GiB without one), as each may cost about 4 times its size while decoded;
# never less than one body of the largest size.
BODY_BUDGET = max(MAX_BODY_BYTES, (memory_limit() or 8 << 30) // 8)
