use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running throwaway PostgreSQL server. Dropping it kills the server and removes its files.
#[derive(Debug)]
pub struct PostgresServer {
    child: Child,
    port: u16,
    bin: PathBuf,
    dir: tempfile::TempDir,
}

fn is_root() -> bool {
    // `id -u` avoids a libc dependency for one call.
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// The newest installed server's binaries (`/usr/lib/postgresql/<version>/bin`).
fn server_bin() -> Result<PathBuf, String> {
    let root = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .map_err(|e| {
            format!(
                "{}: {e}; run `make setup` (Debian package postgresql)",
                root.display()
            )
        })?
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin)| bin.join("postgres").is_file())
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .ok_or_else(|| "no PostgreSQL server installed; run `make setup`".to_owned())
}

/// A command run as the `postgres` user when we are root.
fn as_server_user(program: &Path, root: bool) -> Command {
    if root {
        let mut cmd = Command::new("setpriv");
        cmd.args([
            "--reuid=postgres",
            "--regid=postgres",
            "--init-groups",
            "--",
        ])
        .arg(program);
        cmd
    } else {
        Command::new(program)
    }
}

/// Turns TLS on in the cluster at `data` and refuses TCP connections without it.
fn require_tls(data: &Path, cert_pem: &Path, key_pem: &Path, root: bool) -> Result<(), String> {
    let copy = |from: &Path, name: &str| {
        std::fs::copy(from, data.join(name)).map_err(|e| format!("{}: {e}", from.display()))
    };
    copy(cert_pem, "server.crt")?;
    copy(key_pem, "server.key")?;
    let conf = data.join("postgresql.conf");
    let mut settings = std::fs::read_to_string(&conf).map_err(|e| e.to_string())?;
    settings.push_str("\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n");
    std::fs::write(&conf, settings).map_err(|e| e.to_string())?;
    std::fs::write(
        data.join("pg_hba.conf"),
        "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
    )
    .map_err(|e| e.to_string())?;
    // PostgreSQL refuses a key that others can read.
    let mut chmod = Command::new("chmod");
    chmod.arg("600").arg(data.join("server.key"));
    let mut steps = vec![chmod];
    if root {
        let mut chown = Command::new("chown");
        chown
            .arg("postgres:postgres")
            .arg(data.join("server.crt"))
            .arg(data.join("server.key"));
        steps.push(chown);
    }
    for mut step in steps {
        if !step.status().is_ok_and(|s| s.success()) {
            return Err("cannot hand the TLS key to the postgres user".into());
        }
    }
    Ok(())
}

impl PostgresServer {
    /// Creates a cluster (superuser `captions`, trust auth on loopback) and starts it on a free
    /// port. Fails with a message that says what is missing.
    pub fn start() -> Result<Self, String> {
        Self::create(None)
    }

    /// As [`start`](Self::start), with TLS on (`cert_pem`, `key_pem`: the server's certificate
    /// chain and key, PEM) and every TCP connection required to use it (`hostssl` alone in
    /// pg_hba.conf): a client without TLS is refused.
    pub fn start_tls(cert_pem: &Path, key_pem: &Path) -> Result<Self, String> {
        Self::create(Some((cert_pem, key_pem)))
    }

    fn create(tls: Option<(&Path, &Path)>) -> Result<Self, String> {
        let bin = server_bin()?;
        let root = is_root();
        let dir = tempfile::Builder::new()
            .prefix("caption-pg-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let data = dir.path().join("data");
        if root {
            let status = Command::new("chmod")
                .arg("755")
                .arg(dir.path())
                .status()
                .map_err(|e| e.to_string())?;
            std::fs::create_dir(&data).map_err(|e| e.to_string())?;
            let chown = Command::new("chown")
                .arg("postgres:postgres")
                .arg(&data)
                .status()
                .map_err(|e| e.to_string())?;
            if !status.success() || !chown.success() {
                return Err("cannot hand the cluster folder to the postgres user".into());
            }
        }
        let init = as_server_user(&bin.join("initdb"), root)
            .args([
                "-A",
                "trust",
                "-U",
                "captions",
                "--no-sync",
                "-E",
                "UTF8",
                "-D",
            ])
            .arg(&data)
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !init.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&init.stderr)
            ));
        }
        if let Some((cert_pem, key_pem)) = tls {
            require_tls(&data, cert_pem, key_pem, root)?;
        }
        let port = crate::free_port().map_err(|e| e.to_string())?;
        let child = spawn_server(&bin, &data, port, root)?;
        let mut server = Self {
            child,
            port,
            bin,
            dir,
        };
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &self.port.to_string(),
                    "-U",
                    "captions",
                    "-q",
                ])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("postgres exited during start-up: {status}"));
            }
            if Instant::now() > deadline {
                return Err("postgres did not accept connections within 30 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Restarts the server on the same port and data folder, as `pg_ctl restart` does: a fast
    /// shutdown (open connections are closed, running transactions rolled back), then a start;
    /// returns once it accepts connections again.
    pub fn restart(&mut self) -> Result<(), String> {
        // SIGINT is PostgreSQL's fast shutdown: it does not wait for clients to leave.
        let signalled = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .map_err(|e| format!("kill: {e}"))?;
        if !signalled.success() {
            return Err("signalling postgres failed".into());
        }
        self.child
            .wait()
            .map_err(|e| format!("waiting for postgres to stop: {e}"))?;
        self.child = spawn_server(
            &self.bin,
            &self.dir.path().join("data"),
            self.port,
            is_root(),
        )?;
        self.wait_ready()
    }

    /// The port the server listens on, on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Creates database `name` and returns its URL.
    pub fn database(&self, name: &str) -> Result<String, String> {
        let out = Command::new(self.bin.join("createdb"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "captions",
                name,
            ])
            .output()
            .map_err(|e| format!("createdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "createdb {name}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(self.url(name))
    }

    /// The URL of database `name` on this server.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://captions@127.0.0.1:{}/{name}", self.port)
    }

    /// The folder holding the cluster.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// `postgres` on `data`, listening on 127.0.0.1:`port` (and a socket in `data`).
fn spawn_server(bin: &Path, data: &Path, port: u16, root: bool) -> Result<Child, String> {
    as_server_user(&bin.join("postgres"), root)
        .arg("-D")
        .arg(data)
        .args([
            "-p",
            &port.to_string(),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
        ])
        .args(["-c", "max_connections=200", "-k"])
        .arg(data)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting postgres: {e}"))
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        // The server's files are thrown away, so there is nothing to shut down cleanly.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
