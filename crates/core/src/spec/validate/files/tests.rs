use super::*;

#[test]
fn files_sources_stay_in_the_project() {
    let images = Path::new("/home/ana/project/images");
    let project = Path::new("/home/ana/project");
    let source = |text: &str| lexical(&images.join(text));
    assert_eq!(source("../code"), Path::new("/home/ana/project/code"));
    assert!(inside_any(&source("../code"), &[images, project]));
    assert!(inside_any(&source("./data/../notebooks"), &[images]));
    assert!(inside_any(&source("."), &[images]));
    assert!(!inside_any(&source("../code"), &[images]));
    let escaping = format!("{}etc", "../".repeat(10));
    assert_eq!(source(&escaping), Path::new("/etc"));
    assert!(!inside_any(&source(&escaping), &[images, project]));
    // A sibling whose name starts like the project is outside it.
    assert!(!inside_any(
        &source("../../project-secrets"),
        &[images, project]
    ));
    assert!(inside_any(
        &source("../x"),
        &[images, Path::new("/home/ana/project/images/../")]
    ));
    // A spec named as a bare file name once had the folder `""`, which every path
    // "starts with".
    assert!(!inside_any(Path::new("/outside/id_rsa"), &[Path::new("")]));
    assert!(!inside_any(
        Path::new("../../outside/id_rsa"),
        &[Path::new("")]
    ));
}
