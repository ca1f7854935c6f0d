//! Where an output is written before it is complete: a hidden name beside the final one, so
//! that the finished file is renamed into place at once.

/// A builder of hidden partial files (or folders) named `prefix…suffix`, made with the
/// permissions any new file gets (0666, or 0777 for a folder, less the process's umask), so
/// that the renamed output can be opened by other programs and users as any file the user
/// writes: tempfile's own default is 0600, meant for secrets.
pub(crate) fn builder<'a>(
    prefix: &'a str,
    suffix: &'a str,
    folder: bool,
) -> tempfile::Builder<'a, 'a> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix).suffix(suffix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = if folder { 0o777 } else { 0o666 };
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = folder;
    builder
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a panic is the failure report"
    )]

    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn partial_files_and_folders_get_the_permissions_of_any_new_file() {
        let dir = tempfile::tempdir().unwrap();
        // What the system gives a file made the ordinary way, under this process's umask.
        let plain = dir.path().join("plain");
        std::fs::write(&plain, b"").unwrap();
        let plain_dir = dir.path().join("plain-dir");
        std::fs::create_dir(&plain_dir).unwrap();
        let mode = |p: &std::path::Path| p.metadata().unwrap().permissions().mode() & 0o777;

        let file = super::builder(".x.partial-", ".mp4", false)
            .tempfile_in(dir.path())
            .unwrap();
        assert_eq!(mode(file.path()), mode(&plain));
        let folder = super::builder(".y.partial-", "", true)
            .tempdir_in(dir.path())
            .unwrap();
        assert_eq!(mode(folder.path()), mode(&plain_dir));
    }
}
