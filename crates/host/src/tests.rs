use super::*;

#[test]
fn tfimg_today_takes_only_a_real_day() {
    assert_eq!(parse_today("2026-11-22").unwrap().to_string(), "2026-11-22");
    let error = parse_today("").unwrap_err();
    assert_eq!(
        error.message,
        "`TFIMG_TODAY` is empty, which is not a day written YYYY-MM-DD"
    );
    let error = parse_today("2026-02-29\n").unwrap_err();
    assert_eq!(
        error.message,
        "`TFIMG_TODAY` is `2026-02-29\\n`, which is not a day written YYYY-MM-DD"
    );
}

#[test]
fn the_clock_s_day_is_utc() {
    let time = std::time::UNIX_EPOCH + Duration::from_secs(1_795_391_999);
    assert_eq!(utc_day(time).to_string(), "2026-11-22");
    let before_1970 = std::time::UNIX_EPOCH - Duration::from_secs(10);
    assert_eq!(utc_day(before_1970).to_string(), "1970-01-01");
}
