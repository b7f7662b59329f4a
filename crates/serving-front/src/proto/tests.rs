use prost::Message;

use super::*;

fn tensor(dtype: Dtype, dims: &[i64]) -> TensorProto {
    TensorProto {
        dtype: dtype as i32,
        tensor_shape: Some(TensorShapeProto {
            dim: (dims.iter())
                .map(|size| Dim {
                    size: *size,
                    name: String::new(),
                })
                .collect(),
            unknown_rank: false,
        }),
        ..TensorProto::default()
    }
}

fn request(inputs: Vec<(&str, TensorProto)>) -> PredictRequest {
    PredictRequest {
        model_spec: Some(ModelSpec {
            name: "m".into(),
            version_choice: Some(VersionChoice::VersionLabel("stable".into())),
            signature_name: "s".into(),
        }),
        inputs: (inputs.into_iter())
            .map(|(name, tensor)| (name.to_string(), tensor))
            .collect(),
        output_filter: Vec::new(),
    }
}

#[test]
fn packed_and_listed_values_become_the_links_arrays_read_from_the_wire() {
    let mut packed = tensor(Dtype::F32, &[2, 2]);
    packed.tensor_content = [1.0f32, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let mut listed = tensor(Dtype::I8, &[2]);
    listed.int_val = vec![-3, 7];
    let wire = request(vec![("b", listed), ("a", packed)]).encode_to_vec();
    let predict = predict_of(PredictRequest::decode(&wire[..]).unwrap()).unwrap();
    assert_eq!(predict.api, Api::Grpc);
    assert_eq!(
        (
            predict.model.as_str(),
            &predict.version,
            predict.signature.as_str()
        ),
        ("m", &Version::Label("stable".into()), "s")
    );
    // By name, whatever order they came in: requests alike share a frame.
    assert_eq!(predict.inputs[0].name, "a");
    assert_eq!(predict.inputs[0].shape, [2, 2]);
    assert_eq!(predict.inputs[0].data.len(), 16);
    assert_eq!(
        (predict.inputs[1].dtype, predict.inputs[1].data.clone()),
        (Dtype::I8, vec![0xfd, 7])
    );
}

#[test]
fn what_the_python_server_words_or_fills_itself_is_left_to_it() {
    let short = {
        let mut tensor = tensor(Dtype::F32, &[3]);
        tensor.float_val = vec![1.0]; // TensorFlow fills the rest with it
        tensor
    };
    let wide = {
        let mut tensor = tensor(Dtype::I8, &[1]);
        tensor.int_val = vec![300];
        tensor
    };
    let cut = {
        let mut tensor = tensor(Dtype::F64, &[2]);
        tensor.tensor_content = vec![0; 9];
        tensor
    };
    let words = TensorProto {
        dtype: 7, // DT_STRING
        string_val: vec![b"a".to_vec()],
        ..tensor(Dtype::F32, &[1])
    };
    let negative = tensor(Dtype::F32, &[-1]);
    // A shape that claims 2**40 values over one listed: refused before anything is made
    // for them (the Python server answers RESOURCE_EXHAUSTED).
    let claims = {
        let mut tensor = tensor(Dtype::F32, &[1 << 20, 1 << 20]);
        tensor.float_val = vec![1.0];
        tensor
    };
    for input in [short, wide, cut, words, negative, claims] {
        assert_eq!(
            predict_of(request(vec![("x", input.clone())])),
            None,
            "{input:?}"
        );
    }
    let mut one = tensor(Dtype::F32, &[1]);
    one.float_val = vec![1.0];
    let mut filtered = request(vec![("x", one.clone())]);
    filtered.output_filter = vec!["y".into()];
    assert_eq!(predict_of(filtered), None);
    let mut unnamed = request(vec![("x", one)]);
    unnamed.model_spec.as_mut().unwrap().name.clear();
    assert_eq!(predict_of(unnamed), None);
}

#[test]
fn outputs_are_written_in_their_dtypes_field_with_the_version_that_ran() {
    let found = Found {
        version: 123,
        signature: "serving_default".into(),
        outputs: vec![
            Array {
                name: "y".into(),
                dtype: Dtype::F32,
                shape: vec![1, 2],
                data: [0.5f32, -1.0]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
            },
            Array {
                name: "k".into(),
                dtype: Dtype::I16,
                shape: vec![2],
                data: [-2i16, 9].iter().flat_map(|v| v.to_le_bytes()).collect(),
            },
        ],
    };
    let wire = response_of("m".into(), found).encode_to_vec();
    let response = PredictResponse::decode(&wire[..]).unwrap();
    let spec = response.model_spec.unwrap();
    assert_eq!(spec.name, "m");
    assert_eq!(
        spec.version_choice,
        Some(VersionChoice::Version(Int64Value { value: 123 }))
    );
    assert_eq!(spec.signature_name, "serving_default");
    let y = &response.outputs["y"];
    assert_eq!((y.dtype, y.float_val.clone()), (1, vec![0.5, -1.0]));
    assert_eq!(y.tensor_shape.as_ref().unwrap().dim.len(), 2);
    assert!(y.tensor_content.is_empty());
    assert_eq!(response.outputs["k"].int_val, [-2, 9]);
}
