use super::lexical;
use std::path::Path;

#[test]
fn dots_resolve_without_the_file_system() {
    assert_eq!(lexical(Path::new("/a/./b/../c")), Path::new("/a/c"));
    assert_eq!(lexical(Path::new("/../../etc")), Path::new("/etc"));
    assert_eq!(lexical(Path::new("x/../../y")), Path::new("y"));
}
