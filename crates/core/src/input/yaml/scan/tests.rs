use super::*;

/// Nine levels of nine aliases, as `[...]`.
fn laughs() -> String {
    let mut levels = vec![String::from("&a0 [x, x, x, x, x, x, x, x, x]")];
    for level in 1..10 {
        let row = vec![format!("*a{}", level - 1); 9].join(", ");
        levels.push(format!("&a{level} [{row}]"));
    }
    format!("[{}]", levels.join(", "))
}

fn at(problem: &Option<Problem>) -> Option<(usize, usize)> {
    problem.as_ref().map(|problem| problem.place().pair())
}

#[test]
fn plain_files_pass() {
    let scan = scan("name: x\nfiles:\n  - [a]\nenv: {A: &v 1, B: *v}\n");
    assert_eq!(scan, Scan::default());
}

#[test]
fn nesting_past_the_limit_is_placed_on_the_collection_that_opens_it() {
    let deep = |depth: usize| "[".repeat(depth) + &"]".repeat(depth);
    let text = format!("extends: x\nfiles:\n  - {}\n", deep(10_000));
    assert_eq!(at(&scan(&text).problem), Some((3, 131)));
    // The mapping, the `files` list and 126 brackets are 128 levels: allowed.
    let text = format!("extends: x\nfiles:\n  - {}\n", deep(126));
    assert_eq!(scan(&text).problem, None);
    let maps: String = (0..200)
        .map(|level| format!("{}a:\n", " ".repeat(level)))
        .collect();
    assert_eq!(at(&scan(&maps).problem), Some((129, 129)));
    assert_eq!(at(&scan(&"{a: ".repeat(30_000)).problem), Some((1, 513)));
    assert_eq!(
        at(&scan(&("- ".repeat(100_000) + "x")).problem),
        Some((1, 257))
    );
}

#[test]
fn alias_bombs_stop_at_the_alias_with_the_path_to_it() {
    let text = format!("extends: x\nfiles:\n  - {}\n", laughs());
    let Some(Problem::AliasBomb { path, .. }) = scan(&text).problem else {
        panic!("a bomb");
    };
    assert_eq!(path[0].value_at().pair(), (3, 3));
    assert!(
        matches!(&path[0], Step::Key { name: Some(name), key_at, .. }
        if name == "files" && key_at.pair() == (2, 1))
    );
    assert!(matches!(path[1], Step::Item { index: 0, .. }));
    // A few aliases are fine.
    let few = "a: &x [1, 2, 3]\nb: [*x, *x, *x]\nc: *x\n";
    assert_eq!(scan(few).problem, None);
}

#[test]
fn documents_and_empty_files() {
    let two = scan("team: lab\nmembers: []\n---\nteam: b\n");
    assert_eq!(
        two.problem,
        Some(Problem::SeveralDocuments {
            at: Place {
                line: 3,
                column: 1,
                index: 22
            }
        })
    );
    for empty in [
        "",
        "# nothing\n",
        "---\n",
        "null\n",
        "~\n",
        "--- null\n...\n",
    ] {
        assert!(scan(empty).empty, "{empty:?}");
    }
    for full in ["a: 1\n", "\"null\"\n", "[]\n", "&a null\n"] {
        assert!(!scan(full).empty, "{full:?}");
    }
}

#[test]
fn duplicates_and_keys_are_found_by_serde_paths() {
    let text = "name: a\nname: b\nmembers:\n  - name: x\n  - {name: y, gpus: 1, gpus: 2}\n";
    let scan = scan(text);
    assert_eq!(
        scan.duplicates
            .iter()
            .map(|(path, key, place)| (path.as_str(), key.as_str(), place.pair()))
            .collect::<Vec<_>>(),
        [("", "name", (2, 1)), ("members[1]", "gpus", (5, 24))]
    );
    assert_eq!(
        key_place(text, "members[1].gpus").map(Place::pair),
        Some((5, 15))
    );
    assert_eq!(
        key_place(text, "members[0].name").map(Place::pair),
        Some((4, 5))
    );
    assert_eq!(key_place(text, "members[2].name"), None);
}
