use super::*;

fn at(place: Option<Place>) -> Option<(usize, usize)> {
    place.map(Place::pair)
}

#[test]
fn every_item_has_its_own_place() {
    let text = "sweep: a\nparams:\n  lr: [1e-3, 1e-3]\n  aug:\n    - low\n    - high\ntrials:\n  - {lr: 1}\n  - lr: 2\n    wd: 3\n";
    let places = Places::build(text);
    assert_eq!(at(places.key("params.lr")), Some((3, 3)));
    assert_eq!(at(places.value("params.lr")), Some((3, 7)));
    assert_eq!(at(places.value("params.lr[1]")), Some((3, 14)));
    assert_eq!(at(places.value("params.aug[1]")), Some((6, 7)));
    assert_eq!(at(places.value("trials[0].lr")), Some((8, 10)));
    assert_eq!(at(places.key("trials[1].wd")), Some((10, 5)));
    // A block mapping starts at its first key.
    assert_eq!(at(places.value("trials[1]")), Some((9, 5)));
    assert_eq!(at(places.value("params")), Some((3, 3)));
}

#[test]
fn values_behind_an_alias_are_placed_at_the_alias() {
    let text = "a: &x [1, 2]\nb: *x\n";
    let places = Places::build(text);
    assert_eq!(places.nearest("b[1]").pair(), (2, 4));
    assert_eq!(places.nearest("missing.deeper[3]").pair(), (1, 1));
}
