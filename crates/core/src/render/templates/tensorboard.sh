# TensorBoard beside the service (logdir @TENSORBOARD_LOGDIR@). It has no login:
# `tfimg run` publishes its port on 127.0.0.1 only, also with --public. A small loop keeps it running: tini (-g) hands the container's
# stop signal to this whole process group, so it stops with the service, and its output
# goes to the container's log (`tfimg logs`). Niced, so the service starts first; no GPU,
# so it never takes memory from training.
tensorboard_loop() {
    delay=2
    while :; do
        started=$(date +%s)
        status=0
        CUDA_VISIBLE_DEVICES=-1 nice -n 10 tensorboard --logdir "@TENSORBOARD_LOGDIR@" \
            --host 0.0.0.0 --port @TENSORBOARD_PORT@ </dev/null || status=$?
        # Up for a minute or more: a fresh failure; failing at start: back off to a minute.
        if [ $(($(date +%s) - started)) -ge 60 ]; then delay=2; fi
        say "tensorboard exited (status $status); starting it again in $delay s"
        sleep "$delay"
        [ "$delay" -ge 60 ] || delay=$((delay * 2))
    done
}
tensorboard_loop &

