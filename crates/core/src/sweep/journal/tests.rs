use super::*;

fn events() -> Vec<Event> {
    vec![
        Event::SweepStarted {
            sweep: "lab".into(),
            trials: 2,
            fingerprint: Fingerprint(BTreeMap::from([(
                "params.lr".to_string(),
                "[0.1]".to_string(),
            )])),
            time_ms: 1_000,
        },
        Event::TrialStarted {
            trial: "t001".into(),
            attempt: 1,
            container: "lab-t001".into(),
            container_id: "c1".into(),
            gpus: vec!["0".into()],
            image: "sha256:ab".into(),
            time_ms: 2_000,
        },
        Event::TrialFinished {
            trial: "t001".into(),
            attempt: 1,
            exit_code: Some(1),
            stopped: false,
            time_ms: 5_000,
        },
        Event::TrialStarted {
            trial: "t001".into(),
            attempt: 2,
            container: "lab-t001".into(),
            container_id: "c2".into(),
            gpus: vec!["1".into()],
            image: "sha256:ab".into(),
            time_ms: 6_000,
        },
        Event::TrialFinished {
            trial: "t001".into(),
            attempt: 2,
            exit_code: Some(0),
            stopped: false,
            time_ms: 9_500,
        },
        Event::SweepStopped {
            reason: StopReason::Finished,
            time_ms: 10_000,
        },
    ]
}

fn text(events: &[Event]) -> String {
    events.iter().map(Event::line).collect()
}

#[test]
fn events_are_json_lines_that_read_back() {
    let events = events();
    let text = text(&events);
    assert_eq!(
        text.lines().nth(2),
        Some(
            r#"{"event":"trial_finished","trial":"t001","attempt":1,"exit_code":1,"time_ms":5000}"#
        )
    );
    assert_eq!(
        text.lines().next(),
        Some(
            r#"{"event":"sweep_started","sweep":"lab","trials":2,"fingerprint":{"params.lr":"[0.1]"},"time_ms":1000}"#
        )
    );
    let stopped = Event::TrialFinished {
        trial: "t002".into(),
        attempt: 1,
        exit_code: None,
        stopped: true,
        time_ms: 1,
    };
    assert_eq!(
        stopped.line(),
        "{\"event\":\"trial_finished\",\"trial\":\"t002\",\"attempt\":1,\"exit_code\":null,\"stopped\":true,\"time_ms\":1}\n"
    );
    assert_eq!(
        parse(&text).unwrap(),
        Journal {
            events,
            repair: None
        }
    );
    // Fields a later tfimg adds are ignored.
    let newer = r#"{"event":"sweep_stopped","reason":"interrupted","time_ms":3,"by":"ctrl-c"}"#;
    assert_eq!(
        parse(newer).unwrap().events,
        [Event::SweepStopped {
            reason: StopReason::Interrupted,
            time_ms: 3
        }]
    );
}

#[test]
fn a_torn_last_line_is_dropped_and_a_bad_line_inside_is_an_error() {
    let whole = text(&events());
    let torn = format!("{whole}{{\"event\":\"trial_sta");
    let journal = parse(&torn).unwrap();
    assert_eq!(journal.events.len(), 6);
    assert_eq!(journal.repair, Some(Repair::TruncateTo(whole.len())));
    let unterminated = whole.trim_end_matches('\n');
    let journal = parse(unterminated).unwrap();
    assert_eq!(
        (journal.events.len(), journal.repair),
        (6, Some(Repair::AddNewline))
    );
    assert_eq!(parse(&format!("\n{whole}\n\n")).unwrap().events.len(), 6);
    let edited = whole.replacen("trial_finished", "trial_done", 1);
    let error = parse(&edited).unwrap_err();
    assert_eq!(error.line, 3);
    assert!(
        error
            .to_string()
            .starts_with("line 3: not a journal event: unknown variant `trial_done`"),
        "{error}"
    );
    assert_eq!(parse("").unwrap(), Journal::default());
}

#[test]
fn the_replay_tells_each_trial_s_attempts() {
    let replay = replay(&events());
    assert_eq!(
        (replay.runs, replay.started_ms, replay.last_stop),
        (1, Some(1_000), Some(StopReason::Finished))
    );
    let history = replay.trial("t001");
    assert_eq!(history.status(), TrialStatus::Done { attempt: 2 });
    assert_eq!((history.failures(), history.next_attempt()), (1, 3));
    assert_eq!(history.done().unwrap().gpus, ["1"]);
    assert_eq!(history.done().unwrap().duration_ms(), Some(3_500));
    assert_eq!(replay.trial("t002").status(), TrialStatus::NeverStarted);
    assert_eq!(replay.trial("t002").next_attempt(), 1);

    let mut more = events();
    more.extend([
        Event::SweepStarted {
            sweep: "lab".into(),
            trials: 2,
            fingerprint: Fingerprint::default(),
            time_ms: 20_000,
        },
        Event::TrialStarted {
            trial: "t002".into(),
            attempt: 1,
            container: "lab-t002".into(),
            container_id: "c3".into(),
            gpus: vec![],
            image: "sha256:ab".into(),
            time_ms: 21_000,
        },
        // An end without a start, and a second end: ignored.
        Event::TrialFinished {
            trial: "t009".into(),
            attempt: 1,
            exit_code: Some(0),
            stopped: false,
            time_ms: 1,
        },
        Event::TrialFinished {
            trial: "t001".into(),
            attempt: 1,
            exit_code: Some(0),
            stopped: false,
            time_ms: 1,
        },
    ]);
    let replay = super::replay(&more);
    assert_eq!(replay.runs, 2);
    assert_eq!(
        replay.last_stop, None,
        "the second run did not say how it ended"
    );
    assert_eq!(
        replay.fingerprint.as_ref().unwrap().0.len(),
        1,
        "the first run's"
    );
    assert_eq!(replay.trial("t002").status(), TrialStatus::Running);
    assert!(!replay.trials.contains_key("t009"));
    assert_eq!(replay.trial("t001").failures(), 1);

    let stopped = super::replay(&[
        Event::TrialStarted {
            trial: "t001".into(),
            attempt: 1,
            container: "x".into(),
            container_id: "y".into(),
            gpus: vec![],
            image: "z".into(),
            time_ms: 0,
        },
        Event::TrialFinished {
            trial: "t001".into(),
            attempt: 1,
            exit_code: None,
            stopped: true,
            time_ms: 5,
        },
    ]);
    let history = stopped.trial("t001");
    assert_eq!(
        (history.status(), history.failures(), history.next_attempt()),
        (TrialStatus::Stopped, 0, 2)
    );
}

#[test]
fn status_json_says_how_an_attempt_went() {
    let replay = replay(&events());
    let attempt = replay.trial("t001").done().cloned().unwrap();
    let status: serde_json::Value = serde_json::from_str(&attempt.status_json("t001")).unwrap();
    assert_eq!(
        status,
        serde_json::json!({
            "trial": "t001", "attempt": 2, "container": "lab-t001", "gpus": ["1"],
            "image": "sha256:ab", "started_ms": 6000, "finished_ms": 9500, "exit_code": 0,
            "stopped": false,
        })
    );
}

#[test]
fn a_changed_file_is_refused_with_what_changed() {
    let changes: Vec<String> = (1..=7)
        .map(|index| format!("`params.p{index}`: [1] → [2]"))
        .collect();
    let error = changed_error("runs/lab", &changes[..2]);
    assert_eq!(
        error.message,
        "the sweep file changed since the sweep in `runs/lab` began: `params.p1`: [1] → [2]; `params.p2`: [1] → [2]"
    );
    assert!(error.hint.starts_with("put the file back as it was"));
    let error = changed_error("runs/lab", &changes);
    assert!(
        error
            .message
            .ends_with("`params.p5`: [1] → [2]; and 2 more"),
        "{}",
        error.message
    );
}
