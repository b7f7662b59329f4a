//! The manifest's JSON and the rules a manifest read from a bundle keeps.

use super::super::tests::{manifest_of, standard_parts, ID};
use super::super::{layout, BundleError, Manifest, MANIFEST_PATH};

#[test]
fn the_manifest_round_trips_through_its_json() {
    let manifest = manifest_of(&standard_parts());
    let text = String::from_utf8(manifest.encode()).unwrap();
    assert!(text.contains("\"kind\": \"tfimg-bundle\""));
    assert!(text.contains("\"source\": \"file\""));
    assert_eq!(Manifest::decode(text.as_bytes()).unwrap(), manifest);
    // Padded as in a bundle: the spaces are JSON whitespace.
    let slot = layout::manifest_slot(&manifest) + 100;
    let padded = layout::padded_manifest(&manifest, slot).unwrap();
    assert_eq!(padded.len() as u64, slot);
    assert_eq!(Manifest::decode(&padded).unwrap(), manifest);
}

#[test]
fn a_manifest_breaking_its_rules_is_refused() {
    let manifest = manifest_of(&standard_parts());
    let reason = |change: &dyn Fn(&mut Manifest)| {
        let mut changed = manifest.clone();
        change(&mut changed);
        match changed.validate() {
            Err(BundleError::Manifest { reason }) => reason,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(reason(&|m| m.parts.clear()), "it lists no parts");
    assert_eq!(
        reason(&|m| m.parts[1].path = "specs/lab.yaml".into()),
        "part `specs/lab.yaml` is listed twice"
    );
    assert_eq!(
        reason(&|m| m.parts[0].sha256 = "ABC".into()),
        "the sha256 of part `specs/lab.yaml` is not 64 lowercase hex digits"
    );
    assert_eq!(
        reason(&|m| m.parts[0].path = MANIFEST_PATH.into()),
        "`manifest.json` cannot be a part"
    );
    assert_eq!(
        reason(&|m| m.images[0].id = "abc".into()),
        "image id `abc` is not `sha256:` and 64 hex digits"
    );
    assert_eq!(
        reason(&|m| m.images[0].tags = vec!["bad tag".into()]),
        "`bad tag` is not an image reference"
    );
    assert_eq!(
        reason(&|m| m.images[0].part = "other.tar".into()),
        format!("image `{ID}` is in part `other.tar`, which the manifest does not list")
    );
    assert_eq!(
        reason(&|m| m.specs[0].name = "Bad Name".into()),
        "`Bad Name` is not a spec name"
    );
    assert_eq!(
        reason(&|m| m.specs[0].lock = Some("specs/gone.lock".into())),
        "spec `lab` is in part `specs/gone.lock`, which the manifest does not list"
    );
    assert_eq!(
        reason(&|m| m.specs[0].image = Some(ID.replace('1', "2"))),
        format!(
            "spec `lab` names image `{}`, which the manifest does not list",
            ID.replace('1', "2")
        )
    );
    let unknown = String::from_utf8(manifest.encode()).unwrap().replacen(
        "\"kind\"",
        "\"extra\": 1, \"kind\"",
        1,
    );
    assert!(matches!(
        Manifest::decode(unknown.as_bytes()),
        Err(BundleError::Manifest { reason }) if reason.contains("unknown field `extra`")
    ));
}
