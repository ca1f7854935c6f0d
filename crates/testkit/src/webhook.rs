//! A webhook receiver on 127.0.0.1: a minimal HTTP/1.1 server (one request per connection)
//! that records every request it gets and answers 200, and the check of an event's signature.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use hmac::{Hmac, Mac as _};
use serde_json::Value;
use sha2::Sha256;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Hit {
    /// When it arrived.
    pub at: Instant,
    /// Its `x-captions-event-id` header (empty when absent).
    pub event_id: String,
    /// Its `x-captions-signature` header (empty when absent).
    pub signature: String,
    /// The raw body.
    pub body: Vec<u8>,
}

impl Hit {
    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// A running receiver; it stops accepting when dropped.
#[derive(Debug)]
pub struct Receiver {
    url: String,
    hits: Arc<Mutex<Vec<Hit>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// Binds a free port on 127.0.0.1 and serves on the current tokio runtime.
    pub async fn start() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/hook", listener.local_addr()?);
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let recorded = Arc::clone(&hits);
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(receive(socket, Arc::clone(&recorded)));
            }
        });
        Ok(Self { url, hits, task })
    }

    /// The URL to give as `webhook_url`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request so far, in order of arrival.
    pub fn hits(&self) -> Vec<Hit> {
        self.hits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Every body so far as JSON, in order of arrival.
    pub fn events(&self) -> Vec<Value> {
        self.hits().iter().map(Hit::json).collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads one request (head, then `content-length` bytes of body), records it and answers 200.
async fn receive(mut socket: tokio::net::TcpStream, hits: Arc<Mutex<Vec<Hit>>>) {
    let mut request = Vec::new();
    let mut buf = [0_u8; 8192];
    let (head_end, length) = loop {
        let n = socket.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            return;
        }
        request.extend_from_slice(&buf[..n]);
        if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
            let length = header(&head, "content-length")
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            break (end + 4, length);
        }
    };
    while request.len() < head_end + length {
        let n = socket.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            return;
        }
        request.extend_from_slice(&buf[..n]);
    }
    // Header values keep their case (the signature is hex, the id a UUID: either way).
    let head = String::from_utf8_lossy(&request[..head_end]).into_owned();
    let lower = head.to_ascii_lowercase();
    let value = |name: &str| {
        lower
            .lines()
            .position(|l| l.starts_with(&format!("{name}:")))
            .and_then(|i| head.lines().nth(i))
            .and_then(|l| l.split_once(':'))
            .map_or_else(String::new, |(_, v)| v.trim().to_owned())
    };
    let hit = Hit {
        at: Instant::now(),
        event_id: value("x-captions-event-id"),
        signature: value("x-captions-signature"),
        body: request[head_end..head_end + length].to_vec(),
    };
    hits.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(hit);
    let _ = socket
        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        .await;
}

/// The value of header `name` in a lowercased request head.
fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

/// Whether `signature` (an `x-captions-signature` header, `t=<unix seconds>,v1=<hex>`) is the
/// HMAC-SHA256 of `"<t>.<body>"` keyed by `secret`, as docs/http.md describes it.
///
/// ```
/// use caption_testkit::webhook::verify_signature;
///
/// // HMAC-SHA256 of "1700000000.{}" keyed by "secret".
/// let header = "t=1700000000,v1=b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163";
/// assert!(verify_signature("secret", header, b"{}"));
/// assert!(!verify_signature("secret", header, b"{} "));
/// assert!(!verify_signature("other", header, b"{}"));
/// assert!(!verify_signature("secret", "v1=00", b"{}"));
/// ```
pub fn verify_signature(secret: &str, signature: &str, body: &[u8]) -> bool {
    let mut t = None;
    let mut v1 = None;
    for part in signature.split(',') {
        match part.trim().split_once('=') {
            Some(("t", value)) => t = Some(value),
            Some(("v1", value)) => v1 = hex::decode(value).ok(),
            _ => {}
        }
    }
    let (Some(t), Some(v1)) = (t, v1) else {
        return false;
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        return false;
    };
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&v1).is_ok()
}
