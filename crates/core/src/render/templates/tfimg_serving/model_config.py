"""TensorFlow Serving's model config: its text format and version policies."""

from google.protobuf import text_format
from tensorflow_serving.config import model_server_config_pb2

from .errors import ApiError
from .settings import BASE_PATHS, MODEL_NAME


def served_versions(policy, available):
    """The versions of `available` (lowest first) that a ModelVersionPolicy serves, as
    TensorFlow Serving's: `latest` (the default) its num_versions highest (1 unless
    given), `all`, or `specific` those listed."""
    choice = policy.WhichOneof("policy_choice") if policy is not None else None
    if choice == "all":
        return list(available)
    if choice == "specific":
        listed = set(policy.specific.versions)
        return [version for version in available if version in listed]
    count = (
        policy.latest.num_versions if choice == "latest" and policy.latest.num_versions > 0 else 1
    )
    return list(available[-count:])


def parse_model_config(text):
    """A ModelServerConfig from TensorFlow Serving's text format, checked as its server
    checks one (and as tfimg did before starting this one); ApiError 400 when it is not."""
    config = model_server_config_pb2.ModelServerConfig()
    try:
        text_format.Parse(text, config)
    except text_format.ParseError as error:
        raise ApiError(400, f"the model config does not parse: {error}") from None
    if config.WhichOneof("config") != "model_config_list":
        raise ApiError(400, "the model config has no model_config_list")
    names = set()
    for model in config.model_config_list.config:
        if not MODEL_NAME.match(model.name):
            raise ApiError(
                400, f"the model config names a model {model.name[:200]!r}, which is no model name"
            )
        if model.name in names:
            raise ApiError(400, f"the model config names model {model.name} twice")
        names.add(model.name)
        if model.model_platform not in ("", "tensorflow"):
            raise ApiError(
                400,
                f"model {model.name}: platform {model.model_platform[:200]!r} is not served here",
            )
        if not model.base_path:
            raise ApiError(400, f"model {model.name} has no base_path")
    return config


def container_path(base_path):
    """Where a config's base_path is in this container: tfimg mounts each at /models/NAME
    and names them in TFIMG_SERVING_BASE_PATHS (host path, trailing `/` dropped → path
    here); a path it did not mount is read as it is."""
    return BASE_PATHS.get(base_path.rstrip("/") or "/", base_path)
