use super::*;

fn twin(id: &str, team: Option<&str>, containers: usize, created: &str) -> Twin {
    Twin {
        id: id.to_string(),
        labels: team
            .map(|team| BTreeMap::from([("io.tfimg.team".to_string(), team.to_string())]))
            .unwrap_or_default(),
        containers,
        created: created.to_string(),
    }
}

#[test]
fn twins_tfimg_made_keep_the_one_in_use_else_the_oldest() {
    let labels = BTreeMap::from([("io.tfimg.team".to_string(), "lab".to_string())]);
    let early = "2026-11-28T07:00:00.1Z";
    let late = "2026-11-28T07:00:00.2Z";
    // Nobody on them: the oldest stays.
    let idle = [
        twin("b", Some("lab"), 0, late),
        twin("a", Some("lab"), 0, early),
    ];
    assert_eq!(settle(&idle, &labels), Ok(vec!["b".to_string()]));
    // Equal times: the lower id stays, whatever the daemon's order.
    let same = [
        twin("d", Some("lab"), 0, early),
        twin("c", Some("lab"), 0, early),
    ];
    assert_eq!(settle(&same, &labels), Ok(vec!["d".to_string()]));
    // A member on the younger one: it stays, the empty ones go.
    let used = [
        twin("a", Some("lab"), 0, early),
        twin("b", Some("lab"), 1, late),
        twin("c", Some("lab"), 0, late),
    ];
    assert_eq!(
        settle(&used, &labels),
        Ok(vec!["a".to_string(), "c".to_string()])
    );
}

#[test]
fn twins_in_use_or_not_tfimg_s_are_left_alone_with_the_reason() {
    let labels = BTreeMap::from([("io.tfimg.team".to_string(), "lab".to_string())]);
    let t = "2026-11-28T07:00:00Z";
    let both_used = [twin("a", Some("lab"), 1, t), twin("b", Some("lab"), 2, t)];
    assert_eq!(
        settle(&both_used, &labels),
        Err("containers are on more than one of them".to_string())
    );
    for other in [None, Some("another-team")] {
        let foreign = [twin("a", Some("lab"), 0, t), twin("b", other, 0, t)];
        assert_eq!(
            settle(&foreign, &labels),
            Err("some of them were not made by tfimg for this team".to_string())
        );
    }
}
