use super::*;

#[test]
fn the_documented_paths_are_routed_and_others_left_to_python() {
    assert_eq!(
        route("/v1/models/mlp:predict"),
        Some(("mlp".into(), Version::Highest))
    );
    assert_eq!(
        route("/v1/models/mlp/versions/2:predict"),
        Some(("mlp".into(), Version::Number(2)))
    );
    assert_eq!(
        route("/v1/models/mlp/labels/stable:predict"),
        Some(("mlp".into(), Version::Label("stable".into())))
    );
    for other in [
        "/v1/models/mlp:classify",
        "/V1/models/mlp:predict",
        "/v1/models/m%6Cp:predict",
        "/v1/models/:predict",
        "/v1/models/mlp/versions/99999999999999999999:predict",
        "/v1/models/mlp/versions/x:predict",
        "/v1/models/mlp/metadata",
    ] {
        assert_eq!(route(other), None, "{other}");
    }
}

fn decoded(body: &str) -> Option<Predict> {
    decode(body.as_bytes(), "m".into(), Version::Highest)
}

#[test]
fn rows_of_numbers_are_one_array_and_other_bodies_are_left_to_python() {
    let predict = decoded(r#"{"instances": [[1, 2.5], [3, 4]], "signature_name": "s"}"#).unwrap();
    assert_eq!(predict.signature, "s");
    let input = &predict.inputs[0];
    assert_eq!((input.dtype, input.shape.clone()), (Dtype::F64, vec![2, 2]));
    assert_eq!(&input.data[8..16], &2.5f64.to_le_bytes());
    let ints = decoded(r#"{"instances": [1, 2, 3]}"#).unwrap();
    assert_eq!(ints.inputs[0].dtype, Dtype::I64);
    for other in [
        r#"{"instances": [[1, 2], [3]]}"#,
        r#"{"instances": [[1, 2], 3]}"#,
        r#"{"instances": []}"#,
        r#"{"instances": [{"x": 1}]}"#,
        r#"{"instances": [{"b64": "AA=="}]}"#,
        r#"{"instances": ["a"]}"#,
        r#"{"instances": [true]}"#,
        r#"{"instances": [NaN]}"#,
        r#"{"inputs": [1]}"#,
        r#"{"instances": [1], "extra": 1}"#,
        r#"[1]"#,
        r#"{"instances": [1]"#,
    ] {
        assert_eq!(decoded(other), None, "{other}");
    }
    let deep = format!("{{\"instances\": {}1{}}}", "[".repeat(40), "]".repeat(40));
    assert_eq!(decoded(&deep), None);
}

fn floats(name: &str, shape: Vec<u64>, values: &[f64]) -> Array {
    Array {
        name: name.into(),
        dtype: Dtype::F64,
        shape,
        data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

#[test]
fn answers_are_written_as_the_python_server_writes_them() {
    let one = floats("y", vec![2, 1], &[0.459925532, 1.0]);
    assert_eq!(
        answer(&[one]).unwrap(),
        r#"{"predictions":[[0.459925532],[1.0]]}"#
    );
    let special = floats("y", vec![3], &[f64::NAN, f64::INFINITY, 1e-7]);
    assert_eq!(
        answer(&[special]).unwrap(),
        r#"{"predictions":[NaN,Infinity,1e-7]}"#
    );
    let two = [
        floats("a", vec![2], &[1.5, 2.5]),
        Array {
            name: "b".into(),
            dtype: Dtype::I64,
            shape: vec![2, 2],
            data: [1i64, 2, 3, 4]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        },
    ];
    assert_eq!(
        answer(&two).unwrap(),
        r#"{"predictions":[{"a":1.5,"b":[1,2]},{"a":2.5,"b":[3,4]}]}"#
    );
    let uneven = [
        floats("a", vec![2], &[1.0, 2.0]),
        floats("b", vec![1], &[1.0]),
    ];
    assert_eq!(answer(&uneven), None);
}
