use super::*;

#[test]
fn an_answer_frame_is_read_back_and_a_short_one_refused() {
    let mut frame = 7u64.to_le_bytes().to_vec();
    frame.push(0);
    frame.extend_from_slice(&3i64.to_le_bytes());
    frame.extend_from_slice(&1u16.to_le_bytes());
    frame.push(b's');
    frame.extend_from_slice(&1u16.to_le_bytes());
    frame.extend_from_slice(&1u16.to_le_bytes());
    frame.push(b'y');
    frame.push(Dtype::F64 as u8);
    frame.push(2);
    frame.extend_from_slice(&1u64.to_le_bytes());
    frame.extend_from_slice(&2u64.to_le_bytes());
    frame.extend_from_slice(&0.5f64.to_le_bytes());
    frame.extend_from_slice(&(-1.0f64).to_le_bytes());
    let (id, answer) = decode(&frame).unwrap();
    assert_eq!(id, 7);
    let Answer::Outputs(found) = answer else { panic!("{answer:?}") };
    assert_eq!((found.version, found.signature.as_str()), (3, "s"));
    assert_eq!(found.outputs[0].shape, [1, 2]);
    assert_eq!(found.outputs[0].data.len(), 16);
    assert_eq!(decode(&frame[..frame.len() - 1]), None);
    // A shape whose count overflows is refused, not allocated.
    let mut huge = 7u64.to_le_bytes().to_vec();
    huge.push(0);
    huge.extend_from_slice(&3i64.to_le_bytes());
    huge.extend_from_slice(&[0, 0, 1, 0, 0, 0, Dtype::F64 as u8, 2]);
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

fn rows(rows: &[[f64; 2]]) -> Predict {
    Predict {
        api: Api::Rest,
        model: "m".into(),
        version: Version::Highest,
        signature: String::new(),
        inputs: vec![Array {
            name: String::new(),
            dtype: Dtype::F64,
            shape: vec![rows.len() as u64, 2],
            data: rows
                .iter()
                .flatten()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        }],
    }
}

#[test]
fn requests_of_one_key_share_a_frame_their_rows_one_after_another() {
    let (one, two) = (rows(&[[1.0, 2.0]]), rows(&[[3.0, 4.0], [5.0, 6.0]]));
    assert_eq!(key_of(&one).unwrap().0, key_of(&two).unwrap().0);
    let frame = encode(9, &[(10, &one), (11, &two)]).unwrap();
    let mut cursor = Cursor { data: &frame };
    assert_eq!(cursor.u64(), Some(9));
    assert_eq!(cursor.take(4), Some(&2u32.to_le_bytes()[..]));
    let parts: Vec<u64> = (0..4).map(|_| cursor.u64().unwrap()).collect();
    assert_eq!(parts, [10, 1, 11, 2]);
    assert_eq!(cursor.u8(), Some(Api::Rest as u8));
    assert_eq!(cursor.text().as_deref(), Some("m"));
    assert_eq!(cursor.u8(), Some(0)); // the highest version
    assert_eq!(cursor.text().as_deref(), Some(""));
    assert_eq!(cursor.u16(), Some(1));
    assert_eq!(cursor.text().as_deref(), Some(""));
    assert_eq!(
        (cursor.u8(), cursor.u8()),
        (Some(Dtype::F64 as u8), Some(2))
    );
    assert_eq!((cursor.u64(), cursor.u64()), (Some(3), Some(2)));
    let values: Vec<f64> = (0..6)
        .map(|_| f64::from_le_bytes(cursor.take(8).unwrap().try_into().unwrap()))
        .collect();
    assert_eq!(values, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert!(cursor.data.is_empty());
    // Another shape past the rows, a scalar: another key, none.
    let wider = Predict {
        inputs: vec![Array {
            shape: vec![1, 3],
            data: vec![0; 24],
            ..one.inputs[0].clone()
        }],
        ..one.clone()
    };
    assert_ne!(key_of(&wider).unwrap().0, key_of(&one).unwrap().0);
    let scalar = Predict {
        inputs: vec![Array {
            shape: vec![],
            data: vec![0; 8],
            ..one.inputs[0].clone()
        }],
        ..one
    };
    assert_eq!(key_of(&scalar), None);
}

#[test]
fn a_frames_answer_is_split_at_each_requests_rows_or_refused_when_they_do_not_add_up() {
    let output = Array {
        name: "y".into(),
        dtype: Dtype::I64,
        shape: vec![3, 1],
        data: [7i64, 8, 9].iter().flat_map(|v| v.to_le_bytes()).collect(),
    };
    let each = split(vec![output.clone()], &[1, 2]).unwrap();
    assert_eq!(each[0][0].shape, [1, 1]);
    assert_eq!(each[0][0].data, 7i64.to_le_bytes());
    assert_eq!(each[1][0].shape, [2, 1]);
    assert_eq!(each[1][0].data.len(), 16);
    assert_eq!(split(vec![output], &[1, 1]), None);
}

fn sender(window: Window) -> Sender {
    Sender {
        next: 0,
        window,
        queues: HashMap::new(),
        alone: Vec::new(),
        busy: Vec::new(),
        waiting: Arc::default(),
    }
}

fn request(predict: Predict) -> (Request, oneshot::Receiver<Answer>) {
    let (reply, answer) = oneshot::channel();
    (Request { predict, reply }, answer)
}

/// The frames in `bytes`: each one's id and parts.
fn sent(bytes: &[u8]) -> Vec<(u64, u32)> {
    let mut cursor = Cursor { data: bytes };
    let mut frames = Vec::new();
    while !cursor.data.is_empty() {
        let size = u32::from_le_bytes(cursor.take(4).unwrap().try_into().unwrap());
        let mut frame = Cursor {
            data: cursor.take(size as usize).unwrap(),
        };
        let id = frame.u64().unwrap();
        let parts = u32::from_le_bytes(frame.take(4).unwrap().try_into().unwrap());
        frames.push((id, parts));
    }
    frames
}

fn take(sender: &mut Sender, answers: &mut Vec<oneshot::Receiver<Answer>>, count: usize) {
    for _ in 0..count {
        let (request, answer) = request(rows(&[[1.0, 2.0]]));
        sender.take(Item::Request(request));
        answers.push(answer);
    }
}

/// The parts of each frame in `bytes`.
fn parts(bytes: &[u8]) -> Vec<u32> {
    sent(bytes).iter().map(|frame| frame.1).collect()
}

#[test]
fn while_a_frame_of_a_key_is_out_what_comes_waits_and_goes_together() {
    let mut sender = sender(Window::One);
    let mut answers = Vec::new();
    take(&mut sender, &mut answers, 1);
    let first = sent(&sender.frames());
    assert_eq!(first.iter().map(|f| f.1).collect::<Vec<_>>(), [1]);
    take(&mut sender, &mut answers, 3);
    assert!(sender.frames().is_empty(), "a frame is out: these wait");
    // Another key goes at once.
    let (other, _answer) = request(rows(&[[1.0, 2.0], [3.0, 4.0]]));
    sender.take(Item::Request(Request {
        predict: Predict {
            signature: "other".into(),
            ..other.predict
        },
        reply: other.reply,
    }));
    assert_eq!(parts(&sender.frames()), [1]);
    // The first frame answered: its key's next frame takes all that waited.
    let key = sender
        .waiting
        .lock()
        .unwrap()
        .answer(first[0].0, Answer::Fallback);
    sender.done(&key.unwrap());
    assert_eq!(parts(&sender.frames()), [3]);
    assert_eq!(answers[0].try_recv(), Ok(Answer::Fallback));
    // The link ends: everyone still waiting hears it.
    take(&mut sender, &mut answers, 1);
    sender.down();
    assert!(answers[1..]
        .iter_mut()
        .all(|a| a.try_recv() == Ok(Answer::Down)));
}

#[test]
fn under_tensorflow_serving_s_batching_nothing_waits_for_a_frame_out() {
    let mut sender = sender(Window::of_batching(Some(r#"{"max_batch_size": 8}"#)));
    let mut answers = Vec::new();
    take(&mut sender, &mut answers, 1);
    assert_eq!(parts(&sender.frames()), [1]);
    take(&mut sender, &mut answers, 1);
    assert_eq!(parts(&sender.frames()), [1], "sent while the first is out");
    take(&mut sender, &mut answers, 2);
    assert_eq!(parts(&sender.frames()), [2]);
}

#[test]
fn the_window_is_open_only_when_the_server_batches() {
    for none in [None, Some(""), Some("null"), Some(" null\n")] {
        assert_eq!(Window::of_batching(none), Window::One, "{none:?}");
    }
    assert_eq!(
        Window::of_batching(Some(r#"{"max_batch_size": 1000}"#)),
        Window::Open
    );
}

#[test]
fn a_frame_answered_request_by_request_is_done_when_the_last_is() {
    let mut waiting = Waiting::default();
    let (key, _) = key_of(&rows(&[[1.0, 2.0]])).unwrap();
    let (first, mut one) = oneshot::channel();
    let (second, mut two) = oneshot::channel();
    waiting.parts.extend([(2, 1), (3, 1)]);
    waiting.frames.insert(
        1,
        Sent {
            key: Some(key.clone()),
            parts: vec![(2, 1, Some(first)), (3, 1, Some(second))],
        },
    );
    assert_eq!(waiting.answer(3, Answer::Error(400, "no".into())), None);
    assert_eq!(two.try_recv(), Ok(Answer::Error(400, "no".into())));
    assert_eq!(waiting.answer(2, Answer::Fallback), Some(key));
    assert_eq!(one.try_recv(), Ok(Answer::Fallback));
    assert!(waiting.frames.is_empty() && waiting.parts.is_empty());
    // An answer to an id nobody waits for is dropped.
    assert_eq!(waiting.answer(2, Answer::Fallback), None);
}
