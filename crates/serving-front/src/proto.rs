//! The messages of TensorFlow Serving's `Predict` (tensorflow_serving/apis/predict.proto,
//! model.proto; tensorflow/core/framework/tensor.proto, tensor_shape.proto), the fields
//! the front reads and writes, with prost; a request is turned into the link's predict, an
//! answer into the response, as the Python server's `grpc_api` and `tensors` do.

use std::collections::BTreeMap;

use crate::link::{Api, Array, Dtype, Found, Predict, Value, Version};

#[derive(Clone, PartialEq, prost::Message)]
pub struct Int64Value {
    #[prost(int64, tag = "1")]
    pub value: i64,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum VersionChoice {
    #[prost(message, tag = "2")]
    Version(Int64Value),
    #[prost(string, tag = "4")]
    VersionLabel(String),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelSpec {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(oneof = "VersionChoice", tags = "2, 4")]
    pub version_choice: Option<VersionChoice>,
    #[prost(string, tag = "3")]
    pub signature_name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Dim {
    #[prost(int64, tag = "1")]
    pub size: i64,
    #[prost(string, tag = "2")]
    pub name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    #[prost(message, repeated, tag = "2")]
    pub dim: Vec<Dim>,
    #[prost(bool, tag = "3")]
    pub unknown_rank: bool,
}

/// TensorProto's fields that hold numbers and bools (the others, strings, resources and
/// variants, are the Python server's: a request with them is passed to it).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    #[prost(int32, tag = "1")]
    pub dtype: i32,
    #[prost(message, optional, tag = "2")]
    pub tensor_shape: Option<TensorShapeProto>,
    #[prost(int32, tag = "3")]
    pub version_number: i32,
    #[prost(bytes = "vec", tag = "4")]
    pub tensor_content: Vec<u8>,
    #[prost(float, repeated, tag = "5")]
    pub float_val: Vec<f32>,
    #[prost(double, repeated, tag = "6")]
    pub double_val: Vec<f64>,
    #[prost(int32, repeated, tag = "7")]
    pub int_val: Vec<i32>,
    #[prost(bytes = "vec", repeated, tag = "8")]
    pub string_val: Vec<Vec<u8>>,
    #[prost(int64, repeated, tag = "10")]
    pub int64_val: Vec<i64>,
    #[prost(bool, repeated, tag = "11")]
    pub bool_val: Vec<bool>,
    #[prost(int32, repeated, tag = "13")]
    pub half_val: Vec<i32>,
    #[prost(uint32, repeated, tag = "16")]
    pub uint32_val: Vec<u32>,
    #[prost(uint64, repeated, tag = "17")]
    pub uint64_val: Vec<u64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PredictRequest {
    #[prost(message, optional, tag = "1")]
    pub model_spec: Option<ModelSpec>,
    #[prost(btree_map = "string, message", tag = "2")]
    pub inputs: BTreeMap<String, TensorProto>,
    #[prost(string, repeated, tag = "3")]
    pub output_filter: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PredictResponse {
    #[prost(btree_map = "string, message", tag = "1")]
    pub outputs: BTreeMap<String, TensorProto>,
    #[prost(message, optional, tag = "2")]
    pub model_spec: Option<ModelSpec>,
}

/// The link's predict of `request`; None where the Python server answers it (no model
/// name, an output_filter, a tensor that is not numbers or bools in one of its usual forms:
/// its own words for what is wrong, or a form the link does not carry).
pub fn predict_of(request: PredictRequest) -> Option<Predict> {
    let spec = request.model_spec?;
    if spec.name.is_empty() || !request.output_filter.is_empty() || request.inputs.is_empty() {
        return None;
    }
    let version = match spec.version_choice {
        None => Version::Highest,
        Some(VersionChoice::Version(number)) => Version::Number(number.value),
        Some(VersionChoice::VersionLabel(label)) => Version::Label(label),
    };
    let inputs = (request.inputs.into_iter())
        .map(|(name, tensor)| array_of(name, tensor))
        .collect::<Option<Vec<Array>>>()?;
    Some(Predict {
        api: Api::Grpc,
        model: spec.name,
        version,
        signature: spec.signature_name,
        inputs,
    })
}

/// A tensor as the link's array: its values packed in `tensor_content`, or one a value in
/// its dtype's field, exactly as many as its shape holds (a count that differs, which
/// TensorFlow fills or refuses, is left to the Python server).
fn array_of(name: String, tensor: TensorProto) -> Option<Array> {
    let dtype = Dtype::from_tag(tensor.dtype.into())?;
    let shape = tensor.tensor_shape.as_ref()?;
    if shape.unknown_rank {
        return None;
    }
    let shape = (shape.dim.iter())
        .map(|dim| u64::try_from(dim.size).ok())
        .collect::<Option<Vec<u64>>>()?;
    let count = shape.iter().try_fold(1usize, |count, dim| {
        count.checked_mul(usize::try_from(*dim).ok()?)
    })?;
    if count == 0 {
        return None;
    }
    let data = if !tensor.tensor_content.is_empty() {
        (tensor.tensor_content.len() == count.checked_mul(dtype.size())?)
            .then_some(tensor.tensor_content)?
    } else {
        values_of(&tensor, dtype, count)?
    };
    Some(Array {
        name,
        dtype,
        shape,
        data,
    })
}

fn exactly<T>(values: &[T], count: usize) -> Option<&[T]> {
    (values.len() == count).then_some(values)
}

/// The little-endian bytes of a tensor's `count` values in its dtype's field.
fn values_of(tensor: &TensorProto, dtype: Dtype, count: usize) -> Option<Vec<u8>> {
    let listed = match dtype {
        Dtype::F32 => tensor.float_val.len(),
        Dtype::F64 => tensor.double_val.len(),
        Dtype::I64 => tensor.int64_val.len(),
        Dtype::U32 => tensor.uint32_val.len(),
        Dtype::U64 => tensor.uint64_val.len(),
        Dtype::Bool => tensor.bool_val.len(),
        Dtype::I32 | Dtype::I16 | Dtype::I8 | Dtype::U8 | Dtype::U16 => tensor.int_val.len(),
    };
    // What the shape claims is the client's word; what is listed is in the message.
    if listed != count {
        return None;
    }
    let mut data = Vec::with_capacity(count * dtype.size());
    match dtype {
        Dtype::F32 => (exactly(&tensor.float_val, count)?.iter())
            .for_each(|value| data.extend_from_slice(&value.to_le_bytes())),
        Dtype::F64 => (exactly(&tensor.double_val, count)?.iter())
            .for_each(|value| data.extend_from_slice(&value.to_le_bytes())),
        Dtype::I64 => (exactly(&tensor.int64_val, count)?.iter())
            .for_each(|value| data.extend_from_slice(&value.to_le_bytes())),
        Dtype::U32 => (exactly(&tensor.uint32_val, count)?.iter())
            .for_each(|value| data.extend_from_slice(&value.to_le_bytes())),
        Dtype::U64 => (exactly(&tensor.uint64_val, count)?.iter())
            .for_each(|value| data.extend_from_slice(&value.to_le_bytes())),
        Dtype::Bool => {
            (exactly(&tensor.bool_val, count)?.iter()).for_each(|value| data.push(u8::from(*value)))
        }
        Dtype::I32 | Dtype::I16 | Dtype::I8 | Dtype::U8 | Dtype::U16 => {
            let (least, most) = match dtype {
                Dtype::I16 => (i16::MIN.into(), i16::MAX.into()),
                Dtype::I8 => (i8::MIN.into(), i8::MAX.into()),
                Dtype::U8 => (0, u8::MAX.into()),
                Dtype::U16 => (0, u16::MAX.into()),
                _ => (i32::MIN, i32::MAX),
            };
            for value in exactly(&tensor.int_val, count)? {
                // A value out of the dtype's range: what numpy makes of it is its own.
                if !(least..=most).contains(value) {
                    return None;
                }
                data.extend_from_slice(&value.to_le_bytes()[..dtype.size()]);
            }
        }
    }
    Some(data)
}

/// The response of an answer, as TensorFlow Serving writes it: the model's name, the
/// version that ran and the signature's name, each output in its dtype's field.
pub fn response_of(model: String, found: Found) -> PredictResponse {
    let outputs = (found.outputs.into_iter())
        .map(|array| (array.name.clone(), tensor_of(&array)))
        .collect();
    PredictResponse {
        outputs,
        model_spec: Some(ModelSpec {
            name: model,
            version_choice: Some(VersionChoice::Version(Int64Value {
                value: found.version,
            })),
            signature_name: found.signature,
        }),
    }
}

fn tensor_of(array: &Array) -> TensorProto {
    let dim = (array.shape.iter())
        .map(|size| Dim {
            size: *size as i64,
            name: String::new(),
        })
        .collect();
    let mut tensor = TensorProto {
        dtype: array.dtype as i32,
        tensor_shape: Some(TensorShapeProto {
            dim,
            unknown_rank: false,
        }),
        ..TensorProto::default()
    };
    for index in 0..array.count() {
        match (array.dtype, array.value(index)) {
            (_, Value::F32(value)) => tensor.float_val.push(value),
            (_, Value::F64(value)) => tensor.double_val.push(value),
            (_, Value::Bool(value)) => tensor.bool_val.push(value),
            (Dtype::I64, Value::Int(value)) => tensor.int64_val.push(value),
            (_, Value::Int(value)) => tensor.int_val.push(value as i32),
            (Dtype::U64, Value::Uint(value)) => tensor.uint64_val.push(value),
            (Dtype::U32, Value::Uint(value)) => tensor.uint32_val.push(value as u32),
            (_, Value::Uint(value)) => tensor.int_val.push(value as i32),
        }
    }
    tensor
}

#[cfg(test)]
mod tests;
