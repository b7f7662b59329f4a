"""TensorFlow Serving's model config: what parses, what is refused, which versions serve."""

from conftest import refused

from tfimg_serving.model_config import parse_model_config, served_versions


def config(models):
    return "model_config_list {\n" + "".join(f"  config {{ {m} }}\n" for m in models) + "}\n"


def policy_of(text):
    parsed = parse_model_config(config([f'name: "m" base_path: "/models/m" {text}']))
    return parsed.model_config_list.config[0].model_version_policy


def test_version_policies_serve_what_tensorflow_serving_serves():
    available = [1, 2, 5]
    assert served_versions(None, available) == [5]
    assert served_versions(policy_of(""), available) == [5]
    latest = policy_of("model_version_policy { latest { num_versions: 2 } }")
    assert served_versions(latest, available) == [2, 5]
    assert served_versions(policy_of("model_version_policy { all {} }"), available) == available
    specific = policy_of("model_version_policy { specific { versions: 1 versions: 4 } }")
    assert served_versions(specific, available) == [1]


def test_a_config_that_tensorflow_serving_would_refuse_is_refused_naming_why():
    message = refused(lambda: parse_model_config("model_config_list { config { name: "))
    assert message.startswith("the model config does not parse: ")
    assert refused(lambda: parse_model_config("")) == "the model config has no model_config_list"
    twice = config(['name: "m" base_path: "/a"', 'name: "m" base_path: "/b"'])
    assert refused(lambda: parse_model_config(twice)) == "the model config names model m twice"
    bare = config(['name: "m"'])
    assert refused(lambda: parse_model_config(bare)) == "model m has no base_path"
    escaping = config(['name: "../etc" base_path: "/a"'])
    message = refused(lambda: parse_model_config(escaping))
    assert message == "the model config names a model '../etc', which is no model name"
    other = config(['name: "m" base_path: "/a" model_platform: "pytorch"'])
    assert (
        refused(lambda: parse_model_config(other))
        == "model m: platform 'pytorch' is not served here"
    )
