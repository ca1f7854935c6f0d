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
    /// The server's standard error, shown when it stops on its own.
    log: tempfile::NamedTempFile,
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
        let credentials = (access_key.to_owned(), secret_key.to_owned());
        let log = tempfile::NamedTempFile::new().map_err(|e| format!("a log file: {e}"))?;
        // A port found free can be taken by another process before s3s-fs binds it; s3s-fs
        // then exits (while something else answers on the port), and a new port is tried.
        let mut attempt = 0;
        let (child, port) = loop {
            attempt += 1;
            let port = crate::free_port().map_err(|e| format!("a free port: {e}"))?;
            let mut child = spawn(&binary, port, &credentials, data_dir.path(), log.path())?;
            match wait_listening(&mut child, port, log.path()) {
                Ok(()) => break (child, port),
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    if attempt >= 3 {
                        return Err(e);
                    }
                    eprintln!("{e}; trying another port");
                }
            }
        };
        Ok(Self {
            child,
            binary,
            port,
            credentials,
            endpoint: format!("http://127.0.0.1:{port}"),
            bucket: bucket.to_owned(),
            data_dir,
            log,
        })
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
            self.log.path(),
        )?;
        wait_listening(&mut self.child, self.port, self.log.path())
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

    /// `captions serve`'s settings for S3 storage in this server's bucket.
    pub fn service_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("CAPTIONS_STORAGE", "s3".to_owned()),
            ("CAPTIONS_S3_ENDPOINT", self.endpoint.clone()),
            ("CAPTIONS_S3_BUCKET", self.bucket.clone()),
            ("CAPTIONS_S3_REGION", "us-east-1".to_owned()),
            ("CAPTIONS_S3_ACCESS_KEY", self.credentials.0.clone()),
            ("CAPTIONS_S3_SECRET_KEY", self.credentials.1.clone()),
        ]
    }

    /// The file s3s-fs keeps for `key`, to prove what was (or was not) written.
    pub fn object_file(&self, key: &str) -> PathBuf {
        self.data_dir.path().join(&self.bucket).join(key)
    }
}

/// Waits until `port` takes connections and `child` is still running a moment later (s3s-fs
/// exits at once when it cannot bind the port, while something else may answer on it).
fn wait_listening(child: &mut Child, port: u16, log: &Path) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            return Err(format!(
                "s3s-fs exited ({status}) before serving port {port}: {}",
                log.trim()
            ));
        }
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            std::thread::sleep(Duration::from_millis(100));
            if matches!(child.try_wait(), Ok(None)) {
                return Ok(());
            }
            continue;
        }
        if Instant::now() > deadline {
            return Err(format!("s3s-fs did not listen on port {port}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn spawn(
    binary: &Path,
    port: u16,
    credentials: &(String, String),
    root: &Path,
    log: &Path,
) -> Result<Child, String> {
    let log = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
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
        .stderr(log)
        .spawn()
        .map_err(|e| format!("starting {}: {e}", binary.display()))
}

impl Drop for S3sServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
