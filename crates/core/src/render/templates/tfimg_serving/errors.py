"""Errors as clients see them: their HTTP status and gRPC code, and the text a client may
read (never a traceback)."""

import re

import grpc
import grpc.aio

FAILED = "the server failed to answer this request; its log says why"


class ApiError(Exception):
    """An answer's error: its HTTP status, and over gRPC the status code TensorFlow Serving
    gives (`grpc_code`) where it is not the one the HTTP status maps to (GRPC_CODES)."""

    def __init__(self, status, message, grpc_code=None):
        super().__init__(message)
        self.status = status
        self.grpc_code = grpc_code


def client_text(text):
    """An error's text as a client may read it: without the Python frames TensorFlow puts
    in a failing op's message (`defined at (most recent call last): File ...`; only what
    follows its `Node:` line is about the request) or any other traceback, at most 1000
    characters."""
    lines = str(text).splitlines()
    nodes = [index for index, line in enumerate(lines) if line.startswith("Node: ")]
    if nodes:
        lines = lines[nodes[-1] + 1 :]
    kept, after_frame = [], False
    for line in lines:
        if PYTHON_FRAME.match(line):
            after_frame = True
            continue
        if after_frame and line[:1].isspace():  # the frame's source line
            continue
        after_frame = False
        line = TENSORFLOW_NODE.sub("", line).strip()
        if line and not TRACEBACK_LINE.match(line):
            kept.append(line)
    return " ".join(kept)[:1000] or "the request was refused"


PYTHON_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')
TENSORFLOW_NODE = re.compile(r"\[\[\{\{node [^}]*\}\}\]\]|\[Op:[^\]]*\]")
TRACEBACK_LINE = re.compile(
    r"^(Traceback \(most recent call last\)|Graph execution error|Detected at node"
    r"|<stack traces unavailable>)"
)


# --- gRPC: TensorFlow Serving's PredictionService and ModelService ----------------------
#
# The same servables as REST, through TensorFlow Serving's own protos (the
# tensorflow-serving-api package at the image's TensorFlow line) on grpcio's asyncio
# server, on a thread and event loop of its own. The same errors, as TensorFlow Serving's
# gRPC status codes (400 INVALID_ARGUMENT, 404 NOT_FOUND, 413 RESOURCE_EXHAUSTED, 503
# UNAVAILABLE, anything else INTERNAL without its details), and where TensorFlow Serving
# answers otherwise its code (an unknown signature: FAILED_PRECONDITION).
#
# Trust boundary, client → server, as for REST: a message is at most MAX_BODY_BYTES
# (grpcio refuses larger ones, RESOURCE_EXHAUSTED); a call's message arrives within
# MESSAGE_SECONDS (DEADLINE_EXCEEDED), holding nothing but its stream while it comes (a
# connection has STREAMS_PER_CONNECTION at most), and takes one of MAX_IN_FLIGHT slots only
# once it is in (RESOURCE_EXHAUSTED beyond): `unary`; a tensor's shape may not claim more
# values than MAX_DECODED_BYTES holds (a TensorProto of shape [10**9] with one value would
# be broadcast to all of them). The dtype of each input is the signature's, exactly: gRPC's
# tensors are typed, and TensorFlow Serving refuses a float64 for a float32 input.
# HandleReloadConfigRequest, which changes the models served for anyone who reaches the
# port, is UNIMPLEMENTED unless the server was started with it (ALLOW_RELOAD_CONFIG).

GRPC_CODES = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    404: grpc.StatusCode.NOT_FOUND,
    408: grpc.StatusCode.DEADLINE_EXCEEDED,
    413: grpc.StatusCode.RESOURCE_EXHAUSTED,
    501: grpc.StatusCode.UNIMPLEMENTED,
    503: grpc.StatusCode.UNAVAILABLE,
}


def grpc_code_of(error):
    """The gRPC status code of an ApiError: its own, or the one its HTTP status maps to."""
    return error.grpc_code or GRPC_CODES.get(error.status, grpc.StatusCode.INTERNAL)
