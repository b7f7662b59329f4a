    serving)
        # TensorFlow Serving's REST and gRPC APIs over the SavedModels under @MODELS@.
        export TFIMG_SERVING_MODELS=@MODELS@ TFIMG_SERVING_PORT=@SERVING_PORT@ TFIMG_SERVING_GRPC_PORT=@GRPC_PORT@
        # The compiled front holds the REST port and starts the Python server behind it.
        exec @TFIMG_DIR@/tfimg-serving-front -- python @TFIMG_DIR@/@SERVING_SERVER@
        ;;
