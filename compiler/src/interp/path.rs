//! Lexical path normalization: `.`, `..` and repeated slashes, without touching the file system.

/// Normalizes `path`; a relative path is first joined onto `base` when one is given.
///
/// `..` never climbs above the root of an absolute path, and is kept at the front of a relative
/// one, so `/home/me/project/../.ssh` becomes `/home/me/.ssh`.
pub fn normalize(path: &str, base: Option<&str>) -> String {
    match base {
        Some(base) if !path.starts_with('/') && !path.starts_with('~') => {
            let joined = format!("{base}/{path}");
            if is_normal(&joined) {
                joined
            } else {
                rebuild(&joined)
            }
        }
        _ if is_normal(path) => path.to_string(),
        _ => rebuild(path),
    }
}

/// Whether `path` is its own normal form: most paths are, and are then copied, not rebuilt.
fn is_normal(path: &str) -> bool {
    path == "/" || normal_components(path.strip_prefix('/').unwrap_or(path))
}

/// Whether `body` is one or more components, none of them empty, `.` or `..`.
fn normal_components(body: &str) -> bool {
    // Bytes, not `str::split`: its pattern searcher cost more than the check itself.
    !body.is_empty()
        && body
            .as_bytes()
            .split(|&byte| byte == b'/')
            .all(|part| !matches!(part, b"" | b"." | b".."))
}

/// Whether `dir` + `suffix` is its own normal form, without joining them.
pub fn is_normal_joined(dir: &str, suffix: &str) -> bool {
    match suffix.strip_prefix('/') {
        _ if suffix.is_empty() => is_normal(dir),
        // What policies write, `context.home + "/.ssh"`: a normal directory, then components.
        Some(rest) if dir != "/" && is_normal(dir) => normal_components(rest),
        _ => is_normal_streamed(dir, suffix),
    }
}

/// [`is_normal`] of `dir` + `suffix`, byte by byte across the two.
fn is_normal_streamed(dir: &str, suffix: &str) -> bool {
    let mut bytes = dir.bytes().chain(suffix.bytes()).peekable();
    if bytes.peek() == Some(&b'/') {
        bytes.next();
        if bytes.peek().is_none() {
            return true;
        }
    }
    // The current component's length, and how many of its bytes are dots.
    let (mut length, mut dots) = (0usize, 0usize);
    let settled = |length: usize, dots: usize| length > 0 && !(dots == length && length <= 2);
    let mut any = false;
    for byte in bytes {
        any = true;
        if byte == b'/' {
            if !settled(length, dots) {
                return false;
            }
            (length, dots) = (0, 0);
        } else {
            length += 1;
            dots += usize::from(byte == b'.');
        }
    }
    any && settled(length, dots)
}

/// The normal form of `path`, component by component.
fn rebuild(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            other => parts.push(other),
        }
    }
    let body = parts.join("/");
    match (absolute, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".to_string(),
        (false, false) => body,
    }
}

/// Whether normalized `path` is `dir` or inside it.
pub fn under(path: &str, dir: &str) -> bool {
    if dir == "/" {
        return path.starts_with('/');
    }
    if dir == "." {
        return !path.starts_with('/') && !path.starts_with("..") && !path.starts_with('~');
    }
    path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// [`under`] of the directory `dir` + `suffix`, without joining them: the shipped sets test
/// paths against `context.home + "/.ssh"` and the like, a dozen of them per path.
pub fn under_joined(path: &str, dir: &str, suffix: &str) -> bool {
    match (dir, suffix) {
        // `under`'s own cases for `/` and `.`.
        ("", special) | (special, "") if matches!(special, "/" | ".") => under(path, special),
        _ => path
            .strip_prefix(dir)
            .and_then(|rest| rest.strip_prefix(suffix))
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/')),
    }
}

pub fn file_name(path: &str) -> &str {
    match path {
        "/" | "." | ".." => "",
        _ => path.rsplit('/').next().unwrap_or(""),
    }
}

pub fn extension(path: &str) -> &str {
    let name = file_name(path);
    match name.rfind('.') {
        Some(0) | None => "",
        Some(i) => name.get(i + 1..).unwrap_or(""),
    }
}

pub fn parent(path: &str) -> String {
    match path.rfind('/') {
        Some(0) => "/".to_string(),
        Some(i) => path.get(..i).unwrap_or("").to_string(),
        None => ".".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_dot_cannot_escape_by_spelling() {
        assert_eq!(normalize("/home/me/project/../.ssh", None), "/home/me/.ssh");
        assert!(!under(
            &normalize("/home/me/project/../.ssh", None),
            "/home/me/project"
        ));
        assert_eq!(normalize("//a///b/./c/", None), "/a/b/c");
        assert_eq!(normalize("/../../etc", None), "/etc");
        assert_eq!(normalize("../x", None), "../x");
        assert_eq!(normalize("a/../..", None), "..");
        assert_eq!(normalize("", None), ".");
    }

    #[test]
    fn a_normal_path_is_its_own_normal_form() {
        for path in [
            "/", "/a", "/a/b.c", "a", "a/b", "..a/.b", "/a/...", "", "//", "/a/", "a//b", "./a",
            "a/.", "/a/./b", "/a/../b", "..", "/..", "a/..", "/.a/..b/",
        ] {
            let body = path.strip_prefix('/').unwrap_or(path);
            let by_components = path == "/"
                || (!body.is_empty() && body.split('/').all(|p| !matches!(p, "" | "." | "..")));
            assert_eq!(is_normal(path), by_components, "{path:?}");
            assert!(!is_normal(path) || rebuild(path) == path, "{path:?}");
            // Split anywhere, the two halves say what the whole says.
            for at in 0..=path.len() {
                let (dir, suffix) = path.split_at(at);
                assert_eq!(
                    is_normal_joined(dir, suffix),
                    by_components,
                    "{dir:?} {suffix:?}"
                );
                assert_eq!(
                    is_normal_streamed(dir, suffix),
                    by_components,
                    "{dir:?} {suffix:?}"
                );
            }
        }
    }

    /// `under` of a joined directory, without joining it, at every split of the directory.
    #[test]
    fn under_a_joined_directory_is_under_the_directory_joined() {
        let dirs = [
            "/",
            ".",
            "",
            "/w",
            "/w/project",
            "/w/",
            "w",
            "/home/me/.ssh",
            "./a",
        ];
        let paths = [
            "/",
            ".",
            "",
            "/w",
            "/w/project",
            "/w/project2",
            "/w/project/a",
            "/anything",
            "w/x",
            "/home/me/.ssh",
            "/home/me/.sshx",
            "/home/me/.ssh/id",
            "..",
            "./a/b",
            "a",
        ];
        for dir in dirs {
            for at in 0..=dir.len() {
                let (base, suffix) = dir.split_at(at);
                for path in paths {
                    assert_eq!(
                        under_joined(path, base, suffix),
                        under(path, dir),
                        "{path:?} under {base:?} + {suffix:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn relative_paths_join_the_base() {
        assert_eq!(normalize("src/main.rs", Some("/w")), "/w/src/main.rs");
        assert_eq!(normalize("../../etc/passwd", Some("/w/p")), "/etc/passwd");
        assert_eq!(normalize("/abs", Some("/w")), "/abs");
    }

    #[test]
    fn under_respects_component_boundaries() {
        assert!(under("/w/project", "/w/project"));
        assert!(under("/w/project/a", "/w/project"));
        assert!(!under("/w/project2", "/w/project"));
        assert!(under("/anything", "/"));
    }

    #[test]
    fn names_and_extensions() {
        assert_eq!(file_name("/a/b/.env"), ".env");
        assert_eq!(extension("/a/b/.env"), "");
        assert_eq!(extension("/a/b/key.pem"), "pem");
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/a"), "/");
    }
}
