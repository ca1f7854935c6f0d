use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Debian's `chromedriver` (package `chromium-driver`) on a loopback port, driving Debian's
/// `chromium`; killed on drop. Its log (with the browser's own) goes to `log_file`.
#[derive(Debug)]
pub struct Chromedriver {
    child: Child,
    port: u16,
}

/// Where Debian's `chromium` package puts the browser.
pub const CHROMIUM: &str = "/usr/bin/chromium";

impl Chromedriver {
    /// Starts chromedriver and waits until it accepts connections (at most 30 s).
    pub fn start(log_file: &Path) -> Result<Self, String> {
        if !Path::new(CHROMIUM).exists() {
            return Err(format!(
                "{CHROMIUM} is missing: run scripts/setup-system (Debian packages chromium and chromium-driver)"
            ));
        }
        let port = crate::free_port().map_err(|e| format!("no free port: {e}"))?;
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log_file.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!("starting chromedriver ({e}): run scripts/setup-system (chromium-driver)")
            })?;
        let mut driver = Self { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = driver.child.try_wait() {
                return Err(format!("chromedriver exited at start: {status}"));
            }
            if Instant::now() > deadline {
                return Err("chromedriver did not listen within 30 s".to_owned());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(driver)
    }

    /// The WebDriver endpoint, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Chromedriver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
