use super::*;

fn day(text: &str) -> Date {
    Date::parse(text).unwrap()
}

fn part(parts: &[PartSupport], which: Part) -> &PartSupport {
    parts.iter().find(|part| part.part == which).unwrap()
}

#[test]
fn dates_parse_strictly_print_back_and_order_by_time() {
    assert_eq!(day("2026-08-31").to_string(), "2026-08-31");
    assert_eq!(day("2024-02-29").to_string(), "2024-02-29");
    for bad in [
        "2026-02-29",
        "2100-02-29",
        "2026-13-01",
        "2026-00-10",
        "2026-04-31",
        "2026-8-31",
        "26-08-31",
        "2026/08/31",
        "2026-08-31 ",
        "+026-08-31",
        "",
        "２０２６-08-31",
    ] {
        assert_eq!(Date::parse(bad), None, "{bad:?}");
    }
    assert!(day("2026-08-31") < day("2026-09-01"));
    assert!(day("2025-12-31") < day("2026-01-01"));
}

#[test]
fn the_clock_s_seconds_become_the_utc_day() {
    assert_eq!(Date::from_unix_seconds(0).to_string(), "1970-01-01");
    // 2026-11-22T20:06:14Z, and the last second of that day.
    assert_eq!(
        Date::from_unix_seconds(1_795_377_974).to_string(),
        "2026-11-22"
    );
    assert_eq!(
        Date::from_unix_seconds(1_795_391_999).to_string(),
        "2026-11-22"
    );
    assert_eq!(
        Date::from_unix_seconds(1_795_392_000).to_string(),
        "2026-11-23"
    );
    assert_eq!(
        Date::from_unix_seconds(951_782_400).to_string(),
        "2000-02-29"
    );
}

#[test]
fn every_date_in_the_tables_exists_and_rows_are_in_order() {
    for row in DISTRIBUTIONS {
        assert!(row.regular_end.is_valid() && row.end.is_valid(), "{row:?}");
        assert!(row.regular_end <= row.end, "{row:?}");
    }
    for family in [Family::Debian, Family::Ubuntu] {
        let ends: Vec<Date> = DISTRIBUTIONS
            .iter()
            .filter(|row| row.family == family)
            .map(|row| row.end)
            .collect();
        assert!(ends.windows(2).all(|pair| pair[0] < pair[1]), "{ends:?}");
    }
    assert!(PYTHONS.iter().all(|(_, end)| end.is_valid()));
    assert!(PYTHONS.windows(2).all(|pair| pair[0].1 < pair[1].1));
}

#[test]
fn debian_11_is_supported_through_its_last_lts_day_and_past_it_the_day_after() {
    let on = support("debian:bullseye-slim", "3.9", "2.9.3", day("2026-08-31"));
    let base = part(&on, Part::Base);
    assert_eq!(base.name, "Debian 11 (bullseye)");
    assert!(!base.past_support);
    assert_eq!(
        base.status,
        "long-term support until 2026-08-31 (regular security support ended 2024-08-14)"
    );
    assert_eq!(base.move_to, None);

    let after = support("debian:bullseye-slim", "3.9", "2.9.3", day("2026-09-01"));
    let base = part(&after, Part::Base);
    assert!(base.past_support);
    assert_eq!(
        base.summary(),
        "Debian 11 (bullseye): long-term support ended 2026-08-31"
    );
    assert_eq!(base.ends, Some(day("2026-08-31")));
    // Debian 13's Python 3.13 is past what TensorFlow 2.18 supports: 12 it is.
    assert_eq!(base.move_to.as_deref(), Some("Debian 12 (bookworm)"));

    let before = support("debian:11", "3.9", "2.9.3", day("2024-08-14"));
    assert_eq!(
        part(&before, Part::Base).status,
        "long-term support until 2026-08-31"
    );
}

#[test]
fn on_2026_11_22_the_2_9_line_is_past_support_in_every_part_and_the_current_line_is_not() {
    let today = day("2026-11-22");
    let old = support("debian:bullseye-slim", "3.9", "2.9.3", today);
    assert_eq!(old.len(), 3);
    assert!(old.iter().all(|part| part.past_support), "{old:#?}");
    let python = part(&old, Part::Python);
    assert_eq!(
        python.summary(),
        "Python 3.9: end of life 2025-10-31; Debian 11 (bullseye)'s python3 got fixes until 2026-08-31"
    );
    assert_eq!(python.ends, Some(day("2026-08-31")));
    // 3.10 ended 2026-10-31 too; 3.11 and 3.12 are what TensorFlow 2.18 takes.
    assert_eq!(python.move_to.as_deref(), Some("Python 3.11 to 3.12"));
    let tensorflow = part(&old, Part::Tensorflow);
    assert_eq!(
        tensorflow.summary(),
        "TensorFlow 2.9: no more releases: the last is 2.9.3"
    );
    assert_eq!(tensorflow.ends, None);
    assert_eq!(tensorflow.move_to.as_deref(), Some("TensorFlow 2.18"));

    let current = support("debian:bookworm-slim", "3.11", "2.18.1", today);
    assert!(
        current.iter().all(|part| !part.past_support),
        "{current:#?}"
    );
    assert_eq!(
        part(&current, Part::Base).status,
        "long-term support until 2028-06-30 (regular security support ended 2026-06-10)"
    );
    assert_eq!(
        part(&current, Part::Python).status,
        "Debian 12 (bookworm)'s python3 gets fixes until 2028-06-30 (python.org's end of life: 2027-10-31)"
    );
    assert_eq!(
        part(&current, Part::Tensorflow).status,
        "the newest line tfimg knows"
    );
}

#[test]
fn python_ends_on_its_day_whatever_the_patch() {
    let on = support("scratch", "3.9.18", "2.9", day("2025-10-31"));
    assert!(!part(&on, Part::Python).past_support);
    let after = support("scratch", "3.9", "2.9", day("2025-11-01"));
    assert!(part(&after, Part::Python).past_support);
    assert!(
        after.iter().all(|part| part.part != Part::Base),
        "an unknown base has no dates"
    );
    assert_eq!(support("scratch", "2.7", "9.9", day("2025-11-01")), vec![]);
}

#[test]
fn ubuntu_bases_and_nvidia_cuda_bases_are_judged_by_standard_support() {
    let today = day("2026-11-22");
    let cuda = support(
        "nvidia/cuda:11.2.2-cudnn8-runtime-ubuntu20.04",
        "3.8",
        "2.9.3",
        today,
    );
    let base = part(&cuda, Part::Base);
    assert_eq!(
        base.summary(),
        "Ubuntu 20.04 (focal): standard support ended 2025-05-31"
    );
    assert_eq!(base.move_to.as_deref(), Some("Ubuntu 24.04 (noble)"));
    let jammy = support("ubuntu:jammy", "3.10", "2.18", today);
    assert_eq!(
        part(&jammy, Part::Base).status,
        "standard support until 2027-05-31"
    );
    assert!(!part(&jammy, Part::Base).past_support);
}

#[test]
fn base_images_map_to_their_release() {
    let title = |image: &str| distribution(image).map(DistributionRow::title);
    assert_eq!(
        title("registry:5000/debian:11.6-slim").as_deref(),
        Some("Debian 11 (bullseye)")
    );
    assert_eq!(
        title("docker.io/library/debian:bookworm").as_deref(),
        Some("Debian 12 (bookworm)")
    );
    assert_eq!(
        title("ubuntu:24.04").as_deref(),
        Some("Ubuntu 24.04 (noble)")
    );
    assert_eq!(title("debian"), None);
    assert_eq!(title("python:3.9"), None);
    assert_eq!(title("debian:sid"), None);
}

#[test]
fn a_distribution_s_own_python_lasts_as_long_as_the_release_and_no_longer() {
    // python.org ended 3.9 on 2025-10-31; Debian 11 patched its python3 to 2026-08-31.
    let between = support("debian:bullseye-slim", "3.9", "2.18", day("2026-01-01"));
    let python = part(&between, Part::Python);
    assert!(!python.past_support);
    assert_eq!(
        python.status,
        "Debian 11 (bullseye)'s python3 gets fixes until 2026-08-31 (python.org's end of life: 2025-10-31)"
    );
    let after = support("debian:bullseye-slim", "3.9", "2.18", day("2026-09-01"));
    assert!(part(&after, Part::Python).past_support);
    // Ubuntu 22.04's 3.10 outlives python.org's October 2026 until its own May 2027.
    let jammy = support("ubuntu:22.04", "3.10", "2.18", day("2026-11-22"));
    assert!(!part(&jammy, Part::Python).past_support);
    // A Python the release does not ship is python.org's alone.
    let other = support("ubuntu:22.04", "3.9", "2.18", day("2026-01-01"));
    assert_eq!(
        part(&other, Part::Python).summary(),
        "Python 3.9: end of life 2025-10-31"
    );
}
