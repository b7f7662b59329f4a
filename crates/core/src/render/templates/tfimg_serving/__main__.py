"""Starts the model server: the models' watch, the gRPC server and the HTTP server."""

import logging
import os
import sys
import threading

import uvicorn

from .grpc_api import serve_grpc
from .link import Link
from .models import Models
from .rest import Protocol, application
from .servables import register_text_ops
from .settings import (
    BATCH_THREADS,
    BATCHING,
    BODY_BUDGET,
    CONNECTIONS,
    FRONT_DIR,
    GRPC_PORT,
    MAX_BATCH_ROWS,
    MAX_IN_FLIGHT,
    MODEL_CONFIG,
    MODELS,
    PORT,
    log,
)


def main():
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="tfimg: %(message)s")
    register_text_ops()
    models = Models()
    threading.Thread(target=models.watch, name="models", daemon=True).start()
    threading.Thread(target=serve_grpc, args=(models,), name="grpc", daemon=True).start()
    batches = f"batches of up to {MAX_BATCH_ROWS} rows"
    if BATCHING:
        batches = (
            f"TensorFlow Serving's batching: {batches}, "
            f"waiting up to {BATCHING['batch_timeout_micros']} µs for them, "
            f"{BATCHING['max_enqueued_batches']} queued, {BATCH_THREADS} "
            f"threads, padded to {BATCHING['allowed_batch_sizes'] or 'no allowed sizes'}"
        )
    log.info(
        "model server on port %d (REST) and %d (gRPC): models %s, at most %d requests at once, %s, "
        "%d MiB of request bodies held at once",
        PORT,
        GRPC_PORT,
        f"of {MODEL_CONFIG}" if MODEL_CONFIG else f"under {MODELS}",
        MAX_IN_FLIGHT,
        batches,
        BODY_BUDGET >> 20,
    )
    where = {"host": "0.0.0.0", "port": PORT}
    if FRONT_DIR:
        link = Link(models, os.path.join(FRONT_DIR, "link.sock"))
        threading.Thread(target=link.serve, name="link", daemon=True).start()
        where = {"uds": os.path.join(FRONT_DIR, "http.sock")}
    uvicorn.run(
        application(models),
        **where,
        loop="uvloop",
        http=Protocol,
        lifespan="off",
        proxy_headers=False,
        server_header=False,
        access_log=False,
        log_level="warning",
        limit_concurrency=CONNECTIONS,
        timeout_keep_alive=60,
    )


if __name__ == "__main__":
    main()
