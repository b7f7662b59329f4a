use super::*;

#[test]
fn step_lines_parse() {
    assert_eq!(
        parse_step("Step 3/18 : RUN apt-get update"),
        Some((3, 18, "RUN apt-get update".to_string()))
    );
    assert_eq!(parse_step("Step x/1 : RUN"), None);
    assert_eq!(parse_step(" ---> Running in 1234"), None);
    assert!(is_builder_noise(" ---> Using cache"));
    assert_eq!(
            strip_ansi("\u{1b}[91mE\u{1b}[0m\u{1b}[91m: \u{1b}[0m\u{1b}[91mUnable to locate package x\u{1b}[0m"),
            "E: Unable to locate package x"
        );
    assert!(!is_builder_noise("E: Unable to locate package nope"));
}
