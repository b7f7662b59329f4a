use super::*;

#[test]
fn the_key_changes_with_each_input() {
    let digest = [1u8; 32];
    let key = build_key("FROM x\n", &digest, "sha256:aa");
    assert_eq!(key.len(), 64);
    assert_eq!(key, build_key("FROM x\n", &digest, "sha256:aa"));
    assert_ne!(key, build_key("FROM y\n", &digest, "sha256:aa"));
    assert_ne!(key, build_key("FROM x\n", &[2u8; 32], "sha256:aa"));
    assert_ne!(key, build_key("FROM x\n", &digest, "sha256:bb"));
}
