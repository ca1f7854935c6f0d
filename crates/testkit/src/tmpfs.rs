//! A small tmpfs, for tests of a full disk.

use std::path::Path;
use std::process::Command;

/// A tmpfs mounted on a fresh folder (root only); unmounted when dropped.
#[derive(Debug)]
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size_mib` MiB. `Err` says why when this machine does not permit the
    /// mount (not root, or a container without the capability): the caller skips its test.
    pub fn mount(size_mib: u32) -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("a mount point: {e}"))?;
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_mib}m"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if !mounted.status.success() {
            return Err(format!(
                "mounting a tmpfs is not permitted here: {}",
                String::from_utf8_lossy(&mounted.stderr).trim()
            ));
        }
        Ok(Self { dir })
    }

    /// The mount point.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes the file `name` until the disk has no space left; returns its size in bytes.
    ///
    /// # Panics
    ///
    /// When writing fails for another reason than a full disk.
    pub fn fill(&self, name: &str) -> u64 {
        use std::io::Write as _;
        let path = self.path().join(name);
        let mut file = std::fs::File::create(&path)
            .unwrap_or_else(|e| panic!("creating {}: {e}", path.display()));
        let chunk = vec![0x5a_u8; 64 * 1024];
        let mut size = 0;
        loop {
            match file.write(&chunk) {
                Ok(0) => return size,
                Ok(n) => size += n as u64,
                Err(e) if e.kind() == std::io::ErrorKind::StorageFull => return size,
                Err(e) => panic!("filling {}: {e}", path.display()),
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazy: a process of the test may still hold a file open in it.
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}
