use super::*;

#[test]
fn long_curves_are_thinned_keeping_both_ends() {
    let points: Vec<(f64, f64)> = (0..10_000).map(|step| (step as f64, 1.0)).collect();
    let kept = thin(&points, MAX_CURVE_POINTS);
    assert!(kept.len() <= MAX_CURVE_POINTS, "{}", kept.len());
    assert_eq!(kept.first(), points.first());
    assert_eq!(kept.last(), points.last());
    assert_eq!(thin(&points[..3], MAX_CURVE_POINTS).len(), 3);
}
