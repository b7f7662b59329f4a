use super::*;

const FOLDER: &str = "/var/cache/tfimg/cuda";

#[test]
fn a_gpu_container_of_a_gpu_image_gets_its_user_s_cache_volume() {
    let volume = cuda_cache(Some(FOLDER), true, 4321, &[], &["/tf/data"]).unwrap();
    assert_eq!(volume.name, "tfimg-cuda-cache-4321");
    assert_eq!(volume.target, FOLDER);
    assert_eq!(volume.labels["io.tfimg.cuda-cache"], "4321");
    assert_eq!(
        cuda_cache(Some(FOLDER), true, 0, &[], &[]).unwrap().name,
        "tfimg-cuda-cache-0"
    );
}

#[test]
fn no_cache_without_gpus_a_cache_folder_or_against_the_user_s_choice() {
    assert_eq!(cuda_cache(Some(FOLDER), false, 1, &[], &[]), None);
    assert_eq!(cuda_cache(None, true, 1, &[], &[]), None);
    let env = |key: &str, value: &str| vec![(key.to_string(), value.to_string())];
    assert_eq!(
        cuda_cache(
            Some(FOLDER),
            true,
            1,
            &env("CUDA_CACHE_PATH", "/data/c"),
            &[]
        ),
        None
    );
    assert_eq!(
        cuda_cache(Some(FOLDER), true, 1, &env("CUDA_CACHE_DISABLE", "1"), &[]),
        None
    );
    assert!(cuda_cache(Some(FOLDER), true, 1, &env("CUDA_CACHE_DISABLE", "0"), &[]).is_some());
    for target in [
        FOLDER,
        "/var/cache",
        "/var/cache/tfimg/cuda/sub",
        "/var/cache/tfimg/",
    ] {
        assert_eq!(
            cuda_cache(Some(FOLDER), true, 1, &[], &[target]),
            None,
            "{target}"
        );
    }
    assert!(cuda_cache(Some(FOLDER), true, 1, &[], &["/var/cache/tfimg/cudax"]).is_some());
}
