use super::*;
use crate::notice::Notice;

#[test]
fn a_built_in_past_its_support_shows_its_lock_and_warns_once() {
    let catalog = Catalog::builtin("/".into());
    let mut resolved = crate::spec::resolve(&catalog, "cpu-jupyter").unwrap();
    resolved.lock = crate::lock::builtin("cpu-jupyter").transpose().unwrap();
    let today = Date::parse("2026-11-22").unwrap();
    let (text, warnings) = show(&catalog, &resolved, today).unwrap();
    assert!(text.starts_with(&serde_yaml::to_string(&resolved).unwrap()));
    assert!(text.contains("\nlock:\n  file: "), "{text}");
    assert!(text.contains("  inherited: false\n"), "{text}");
    assert!(text.contains("\nsupport:\n"), "{text}");
    assert_eq!(
        warnings,
        [Notice::warning("`cpu-jupyter` is past its support (Debian 11 (bullseye), Python 3.9, TensorFlow 2.9; `support:` says since when) → move to `tf218-cpu-jupyter` (Debian 12 (bookworm), Python 3.11 to 3.12, TensorFlow 2.18)")]
    );
}
