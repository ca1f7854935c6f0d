//! `captions serve` as a child process on a loopback port, for the tests and benches that drive
//! the real binary.

use std::io::{BufRead as _, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Waits until something listens on 127.0.0.1:`port`, for at most `limit`.
pub fn wait_for_port(port: u16, limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return Err(format!("nothing listened on port {port} within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// How to start `captions serve`: the binary, its data folder, its port and settings.
#[derive(Debug, Clone)]
pub struct ServeCommand {
    /// The `captions` binary.
    pub binary: PathBuf,
    /// `CAPTIONS_DATA_DIR`.
    pub data_dir: PathBuf,
    /// The port on 127.0.0.1 (`CAPTIONS_BIND`); `None`: a free one.
    pub port: Option<u16>,
    /// More `CAPTIONS_*` settings; they win over the defaults below (`CAPTIONS_MODEL=tiny.en`,
    /// `RUST_LOG=warn`).
    pub env: Vec<(String, String)>,
    /// A file the process's standard error is appended to; `None`: this process's own.
    pub log: Option<PathBuf>,
}

impl ServeCommand {
    /// `binary serve` with its data in `data_dir`, on a free port, logging to our standard
    /// error.
    pub fn new(binary: &Path, data_dir: &Path) -> Self {
        Self {
            binary: binary.to_owned(),
            data_dir: data_dir.to_owned(),
            port: None,
            env: Vec::new(),
            log: None,
        }
    }

    /// Starts the process and waits (up to a minute) until it listens.
    pub fn start(&self) -> Result<Service, String> {
        let port = match self.port {
            Some(port) => port,
            None => crate::free_port().map_err(|e| format!("a free port: {e}"))?,
        };
        let stderr = match &self.log {
            Some(path) => Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("{}: {e}", path.display()))?,
            ),
            None => Stdio::inherit(),
        };
        let mut command = Command::new(&self.binary);
        command
            .arg("serve")
            .env("CAPTIONS_BIND", format!("127.0.0.1:{port}"))
            .env("CAPTIONS_DATA_DIR", &self.data_dir)
            .env("CAPTIONS_MODEL", "tiny.en")
            .env("RUST_LOG", "warn")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut child = command
            .spawn()
            .map_err(|e| format!("starting {} serve: {e}", self.binary.display()))?;
        let (sender, stdout) = mpsc::channel();
        if let Some(pipe) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    let _ = sender.send(line);
                }
            });
        }
        let mut service = Service {
            child,
            port,
            base: format!("http://127.0.0.1:{port}"),
            stdout,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = service.exited() {
                return Err(format!("captions serve exited during start-up: {status}"));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "captions serve did not listen on {port} within 60 s"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(service)
    }
}

/// A running `captions serve`; killed on drop unless it was stopped.
#[derive(Debug)]
pub struct Service {
    child: Child,
    port: u16,
    base: String,
    stdout: mpsc::Receiver<String>,
}

impl Service {
    /// `binary serve` on a free port with `data_dir` and the settings `env`.
    pub fn start(binary: &Path, data_dir: &Path, env: &[(&str, String)]) -> Result<Self, String> {
        let mut command = ServeCommand::new(binary, data_dir);
        command.env = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        command.start()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The lines printed at start-up, up to the ready `try: curl` line.
    pub fn banner(&self) -> Result<Vec<String>, String> {
        let mut lines = Vec::new();
        loop {
            let line = self
                .stdout
                .recv_timeout(Duration::from_secs(30))
                .map_err(|_| format!("captions serve printed no ready line: {lines:?}"))?;
            let done = line.starts_with("try: curl");
            lines.push(line);
            if done {
                return Ok(lines);
            }
        }
    }

    /// Its exit status once it has exited (on its own or killed).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGKILL, as a crash or an OOM kill: no clean-up of any kind. Returns once it is gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then waits (up to a minute) for the exit, which must be a success: a graceful
    /// stop.
    pub fn terminate(mut self) -> Result<(), String> {
        let signalled = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .map_err(|e| format!("kill: {e}"))?;
        if !signalled.success() {
            return Err(format!("SIGTERM to {} failed", self.child.id()));
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(exit) = self.exited() {
                return if exit.success() {
                    Ok(())
                } else {
                    Err(format!("captions serve exited with {exit} after SIGTERM"))
                };
            }
            if Instant::now() > deadline {
                return Err("captions serve did not exit within 60 s of SIGTERM".to_owned());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if self.exited().is_none() {
            self.kill();
        }
    }
}
