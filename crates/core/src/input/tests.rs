use super::*;

#[test]
fn a_mistyped_name_finds_what_was_meant_and_a_stranger_finds_nothing() {
    let specs = ["cpu-jupyter", "cpu-ssh", "gpu-jupyter", "tf218-cpu-jupyter"];
    assert_eq!(closest("cpu-jupiter", specs), Some("cpu-jupyter"));
    assert_eq!(closest("gpu-jupiter", specs), Some("gpu-jupyter"));
    assert_eq!(closest("tensorflow", specs), None);
    let fields = ["spec", "mounts_root", "gpus", "memory"];
    assert_eq!(closest("mount_root", fields), Some("mounts_root"));
    assert_eq!(did_you_mean("gpu", fields), "did you mean `gpus`? ");
    assert_eq!(did_you_mean("colour", fields), "");
}
