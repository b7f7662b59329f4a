use super::*;

#[test]
fn an_answer_frame_is_read_back_and_a_short_one_refused() {
    let mut frame = 7u64.to_le_bytes().to_vec();
    frame.push(0);
    frame.extend_from_slice(&1u16.to_le_bytes());
    frame.extend_from_slice(&1u16.to_le_bytes());
    frame.push(b'y');
    frame.push(1);
    frame.push(2);
    frame.extend_from_slice(&1u64.to_le_bytes());
    frame.extend_from_slice(&2u64.to_le_bytes());
    frame.extend_from_slice(&0.5f64.to_le_bytes());
    frame.extend_from_slice(&(-1.0f64).to_le_bytes());
    let (id, answer) = decode(&frame).unwrap();
    assert_eq!(id, 7);
    let Answer::Outputs(outputs) = answer else { panic!("{answer:?}") };
    assert_eq!(outputs[0].shape, [1, 2]);
    assert_eq!(outputs[0].data.len(), 16);
    assert_eq!(decode(&frame[..frame.len() - 1]), None);
    // A shape whose count overflows is refused, not allocated.
    let mut huge = 7u64.to_le_bytes().to_vec();
    huge.extend_from_slice(&[0, 1, 0, 0, 0, 1, 2]);
    huge.extend_from_slice(&u64::MAX.to_le_bytes());
    huge.extend_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(decode(&huge), None);
}

#[test]
fn an_error_answer_carries_its_status_and_text() {
    let mut frame = 3u64.to_le_bytes().to_vec();
    frame.push(1);
    frame.extend_from_slice(&404u16.to_le_bytes());
    frame.extend_from_slice("no model `m`".as_bytes());
    assert_eq!(
        decode(&frame),
        Some((3, Answer::Error(404, "no model `m`".into())))
    );
}
