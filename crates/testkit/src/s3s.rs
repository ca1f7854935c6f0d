//! s3s-fs, an S3 server that checks SigV4 signatures and POST policies, on loopback.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running s3s-fs (installed by `scripts/setup-s3s`, or named by `CAPTIONS_S3S_FS`) with one
/// bucket, serving a throwaway folder on 127.0.0.1. Dropping it kills the server and removes
/// the folder.
#[derive(Debug)]
pub struct S3sServer {
    child: Child,
    binary: PathBuf,
    port: u16,
    credentials: (String, String),
    endpoint: String,
    bucket: String,
    data_dir: tempfile::TempDir,
}

fn s3s_binary() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("CAPTIONS_S3S_FS") {
        return Ok(PathBuf::from(path));
    }
    let home = std::env::var_os("HOME").ok_or("HOME is not set")?;
    Ok(PathBuf::from(home).join(".cache/caption-engine/tools/bin/s3s-fs"))
}

impl S3sServer {
    /// Starts a server whose one `bucket` takes requests signed with `access_key` and
    /// `secret_key`, and waits (up to 20 s) until it listens.
    pub fn start(access_key: &str, secret_key: &str, bucket: &str) -> Result<Self, String> {
        let binary = s3s_binary()?;
        if !binary.is_file() {
            return Err(format!(
                "s3s-fs not found at {} (set CAPTIONS_S3S_FS, or run scripts/setup-s3s)",
                binary.display()
            ));
        }
        let data_dir = tempfile::tempdir().map_err(|e| format!("a data folder: {e}"))?;
        // s3s-fs keeps a bucket as a directory of its data root.
        std::fs::create_dir(data_dir.path().join(bucket)).map_err(|e| format!("{bucket}: {e}"))?;
        let port = crate::free_port().map_err(|e| format!("a free port: {e}"))?;
        let credentials = (access_key.to_owned(), secret_key.to_owned());
        let child = spawn(&binary, port, &credentials, data_dir.path())?;
        let server = Self {
            child,
            binary,
            port,
            credentials,
            endpoint: format!("http://127.0.0.1:{port}"),
            bucket: bucket.to_owned(),
            data_dir,
        };
        server.wait_listening()?;
        Ok(server)
    }

    fn wait_listening(&self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if Instant::now() > deadline {
                return Err(format!("s3s-fs did not listen on port {}", self.port));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Kills the server (an outage: connections are refused from now on); its folder stays.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the server again on the same port and folder after [`S3sServer::stop`], and
    /// waits until it listens.
    pub fn restart(&mut self) -> Result<(), String> {
        self.stop();
        self.child = spawn(
            &self.binary,
            self.port,
            &self.credentials,
            self.data_dir.path(),
        )?;
        self.wait_listening()
    }

    /// The folder s3s-fs serves: each bucket is a directory in it, and uploads in progress
    /// (multipart) are its `.upload-*` and `.upload_id-*` files.
    pub fn root(&self) -> &Path {
        self.data_dir.path()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The file s3s-fs keeps for `key`, to prove what was (or was not) written.
    pub fn object_file(&self, key: &str) -> PathBuf {
        self.data_dir.path().join(&self.bucket).join(key)
    }
}

fn spawn(
    binary: &Path,
    port: u16,
    credentials: &(String, String),
    root: &Path,
) -> Result<Child, String> {
    Command::new(binary)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args([
            "--access-key",
            &credentials.0,
            "--secret-key",
            &credentials.1,
        ])
        .arg(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", binary.display()))
}

impl Drop for S3sServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
