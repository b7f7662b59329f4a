    serving)
        # TensorFlow Serving's REST API over the SavedModels under @MODELS@.
        exec python @TFIMG_DIR@/@SERVING_SERVER@
        ;;
