//! Signed webhook events: the end of a job (or of a synchronous generate) POSTed to the URL
//! the client gave, as JSON signed with HMAC-SHA256, retried with exponential backoff.
//!
//! Each event is a [`JobKind::Webhook`] job in the job store, so deliveries survive restarts
//! and crashes and are shared by every process like any other job. The target is checked when
//! the URL is given and again before every request and every redirect: names are resolved and
//! the connection is pinned to the addresses that passed the check, so a name cannot resolve to
//! a public address for the check and to a private one for the request.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use caption_core::{JobError, JobStatus};
use caption_jobs::{JobKind, JobRecord, JobSpec, now_ms};
use caption_store::ObjectKey;
use hmac::{Hmac, Mac};
use reqwest::Url;
use sha2::Sha256;

use crate::{Engine, Error, Result};

/// The header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
pub const SIGNATURE_HEADER: &str = "x-captions-signature";

/// The header carrying the event's id (also the body's `id`), for deduplication.
pub const EVENT_ID_HEADER: &str = "x-captions-event-id";

/// Longest accepted `webhook_url`.
const MAX_URL_CHARS: usize = 2048;

/// Redirects followed per delivery, each checked like the first URL.
const MAX_REDIRECTS: usize = 5;

/// The longest wait between two tries.
const MAX_BACKOFF: Duration = Duration::from_secs(3600);

/// How events are signed and delivered.
#[derive(Clone)]
#[non_exhaustive]
pub struct WebhookOptions {
    /// The HMAC-SHA256 key of the signatures.
    pub secret: Vec<u8>,
    /// Deliver to loopback, private, link-local and metadata addresses too (tests, private
    /// deployments). Off by default: a client could otherwise make the service call inside
    /// its own network.
    pub allow_private: bool,
    /// Wait before the first retry; each later retry waits twice as long (at most an hour).
    pub retry_base: Duration,
    /// An event not accepted this long after it was queued is given up (`undeliverable`).
    pub retry_for: Duration,
    /// Time allowed for one request.
    pub timeout: Duration,
}

impl Default for WebhookOptions {
    fn default() -> Self {
        Self {
            secret: Vec::new(),
            allow_private: false,
            retry_base: Duration::from_secs(5),
            retry_for: Duration::from_secs(24 * 3600),
            timeout: Duration::from_secs(10),
        }
    }
}

impl WebhookOptions {
    /// The HMAC-SHA256 key of the signatures.
    #[must_use]
    pub fn secret(mut self, secret: impl Into<Vec<u8>>) -> Self {
        self.secret = secret.into();
        self
    }

    /// Deliver to loopback and private addresses too.
    #[must_use]
    pub fn allow_private(mut self, allow: bool) -> Self {
        self.allow_private = allow;
        self
    }

    /// Wait before the first retry.
    #[must_use]
    pub fn retry_base(mut self, wait: Duration) -> Self {
        self.retry_base = wait;
        self
    }

    /// How long an event is retried before it is given up.
    #[must_use]
    pub fn retry_for(mut self, span: Duration) -> Self {
        self.retry_for = span;
        self
    }

    /// Time allowed for one request.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

impl std::fmt::Debug for WebhookOptions {
    // The secret must never reach a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookOptions")
            .field("secret", &"<redacted>")
            .field("allow_private", &self.allow_private)
            .field("retry_base", &self.retry_base)
            .field("retry_for", &self.retry_for)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The `x-captions-signature` value of `body` sent at `timestamp_s`.
pub fn sign(secret: &[u8], timestamp_s: u64, body: &[u8]) -> String {
    format!(
        "t={timestamp_s},v1={}",
        hex::encode(mac(secret, timestamp_s, body))
    )
}

/// Whether `header` (an `x-captions-signature` value) signs `body` with `secret`; compared in
/// constant time. Receivers should also refuse timestamps far from their clock (replays).
pub fn verify_signature(secret: &[u8], header: &str, body: &[u8]) -> bool {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<u64>().ok(),
            Some(("v1", v)) => signatures.extend(hex::decode(v).ok()),
            _ => {}
        }
    }
    let Some(timestamp) = timestamp else {
        return false;
    };
    signatures.iter().any(|signature| {
        let mut mac = keyed(secret);
        mac.update(format!("{timestamp}.").as_bytes());
        mac.update(body);
        mac.verify_slice(signature).is_ok()
    })
}

fn keyed(secret: &[u8]) -> Hmac<Sha256> {
    // HMAC takes keys of any length: `new_from_slice` cannot fail for it.
    Hmac::<Sha256>::new_from_slice(secret).unwrap_or_else(|_| unreachable!("HMAC takes any key"))
}

fn mac(secret: &[u8], timestamp_s: u64, body: &[u8]) -> Vec<u8> {
    let mut mac = keyed(secret);
    mac.update(format!("{timestamp_s}.").as_bytes());
    mac.update(body);
    mac.finalize().into_bytes().to_vec()
}

/// Whether `ip` is an ordinary public address: not loopback, private, link-local (cloud
/// metadata services live there), shared (CGNAT), unique-local, multicast, documentation,
/// reserved or unspecified, nor an IPv4 address of those kinds inside IPv6.
pub fn is_public_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (18..20).contains(&b))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_address(IpAddr::V4(v4));
            }
            let s = v6.segments();
            // NAT64 (64:ff9b::/96) reaches the IPv4 address in its last 32 bits.
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let v4 = std::net::Ipv4Addr::new(
                    (s[6] >> 8) as u8,
                    (s[6] & 0xff) as u8,
                    (s[7] >> 8) as u8,
                    (s[7] & 0xff) as u8,
                );
                return is_public_address(IpAddr::V4(v4));
            }
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] == 0x2001 && s[1] == 0x0db8)
                || v6
                    .to_ipv4()
                    .is_some_and(|v4| !is_public_address(IpAddr::V4(v4))))
        }
    }
}

/// Why a target is not used.
#[derive(Debug)]
enum TargetError {
    /// Not a usable URL, or it points inside the network: never tried again.
    Refused(String),
    /// The name does not resolve now; it may later.
    Unresolved(String),
}

impl TargetError {
    fn message(&self) -> &str {
        match self {
            Self::Refused(m) | Self::Unresolved(m) => m,
        }
    }
}

/// `url` parsed, with the addresses it resolves to, each checked.
async fn checked_target(
    url: &str,
    allow_private: bool,
) -> std::result::Result<(Url, Vec<SocketAddr>), TargetError> {
    if url.chars().count() > MAX_URL_CHARS {
        return Err(TargetError::Refused(format!(
            "must be at most {MAX_URL_CHARS} characters"
        )));
    }
    let parsed = Url::parse(url)
        .map_err(|e| TargetError::Refused(format!("is not an absolute URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(TargetError::Refused(
            "must be an http or https URL".to_owned(),
        ));
    }
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| TargetError::Refused("has no port".to_owned()))?;
    let host = parsed
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| TargetError::Refused("has no host".to_owned()))?;
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match literal.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => {
            let lookup = tokio::net::lookup_host((host, port));
            match tokio::time::timeout(Duration::from_secs(5), lookup).await {
                Ok(Ok(found)) => found.collect(),
                Ok(Err(e)) => {
                    return Err(TargetError::Unresolved(format!(
                        "host {host:?} does not resolve: {e}"
                    )));
                }
                Err(_) => {
                    return Err(TargetError::Unresolved(format!(
                        "host {host:?} did not resolve within 5 s"
                    )));
                }
            }
        }
    };
    if addrs.is_empty() {
        return Err(TargetError::Unresolved(
            "host resolves to no address".to_owned(),
        ));
    }
    if !allow_private && let Some(bad) = addrs.iter().find(|a| !is_public_address(a.ip())) {
        return Err(TargetError::Refused(format!(
            "points at {}, a loopback, private, link-local or otherwise internal address; \
             such targets are refused unless the service allows them (webhook_allow_private)",
            bad.ip()
        )));
    }
    Ok((parsed, addrs))
}

/// How one try went.
enum Outcome {
    Delivered,
    /// Try again later.
    Failed(String),
    /// Never try again.
    Refused(String),
}

impl Engine {
    /// Checks a client's `webhook_url` (scheme, length, and every address its host resolves
    /// to); the error names the field.
    pub async fn check_webhook_url(&self, url: &str) -> Result<()> {
        checked_target(url, self.inner.options.webhooks.allow_private)
            .await
            .map(|_| ())
            .map_err(|e| Error::invalid("webhook_url", e.message()))
    }

    /// Queues an event that announces no stored job (a synchronous generate's end).
    pub(crate) async fn queue_event(&self, url: &str, event: serde_json::Value) -> Result<()> {
        let delivery = self
            .inner
            .jobs
            .submit(JobSpec {
                kind: JobKind::Webhook,
                webhook_url: Some(url.to_owned()),
                payload: Some(serde_json::json!({ "event": event })),
                ..JobSpec::default()
            })
            .await?;
        tracing::info!(event_id = %delivery.id, "webhook event queued");
        self.inner.webhook_submitted.notify_one();
        Ok(())
    }

    /// The body of `delivery`'s event.
    async fn event_of(&self, delivery: &JobRecord) -> Result<serde_json::Value> {
        if let Some(event) = delivery.spec.payload.as_ref().and_then(|p| p.get("event")) {
            let mut event = event.clone();
            if let Some(map) = event.as_object_mut() {
                map.insert("id".to_owned(), delivery.id.clone().into());
            }
            return Ok(event);
        }
        let target = self
            .inner
            .jobs
            .get(&delivery.spec.input)
            .await?
            .ok_or_else(|| Error::NotFound {
                what: "job",
                id: delivery.spec.input.clone(),
            })?;
        let prefix = match target.spec.kind {
            JobKind::Generate => "generate",
            _ => "transcript",
        };
        let outcome = match target.status {
            JobStatus::Completed => "completed",
            _ => "failed",
        };
        let mut event = serde_json::json!({
            "id": delivery.id,
            "type": format!("{prefix}.{outcome}"),
            "job_id": target.id,
            "status": target.status.as_str(),
            "created_at": rfc3339(target.updated_ms),
        });
        if let Some(map) = event.as_object_mut() {
            if target.spec.kind == JobKind::Generate && target.status == JobStatus::Completed {
                let url = self.output_link(&target).await?;
                map.insert("download_url".to_owned(), url.into());
            }
            if target.status == JobStatus::Failed
                && let Some(error) = &target.error
            {
                map.insert(
                    "error".to_owned(),
                    serde_json::json!({"code": error.code, "message": error.message}),
                );
            }
        }
        Ok(event)
    }

    /// A fresh download link of a generate job's output.
    pub(crate) async fn output_link(&self, job: &JobRecord) -> Result<String> {
        let output = job
            .spec
            .payload
            .as_ref()
            .and_then(|p| p.get("output"))
            .and_then(|o| o.as_str())
            .ok_or_else(|| Error::Internal(format!("generate job {} has no output key", job.id)))?;
        let key = ObjectKey::parse(output)
            .map_err(|e| Error::Internal(format!("generate job {}: {e}", job.id)))?;
        Ok(self.inner.storage.download_url(&key).await?)
    }

    /// One try of a claimed delivery, recorded in the store.
    pub(crate) async fn run_delivery(&self, delivery: JobRecord, worker: &str) {
        let jobs = &self.inner.jobs;
        let options = &self.inner.options.webhooks;
        let outcome = match (self.event_of(&delivery).await, &delivery.spec.webhook_url) {
            (Ok(event), Some(url)) => {
                let body = serde_json::to_vec(&event).unwrap_or_default();
                // A try must end well within the lease, or another worker would start one too.
                let limit = self.inner.options.lease.mul_f64(0.75);
                match tokio::time::timeout(limit, self.post_event(url, &body, &delivery.id)).await {
                    Ok(outcome) => outcome,
                    Err(_) => Outcome::Failed(format!("no answer within {limit:?}")),
                }
            }
            (Err(e), _) => Outcome::Refused(format!("the event cannot be built: {e}")),
            (_, None) => Outcome::Refused("the delivery has no URL".to_owned()),
        };
        let now = now_ms();
        let recorded = match outcome {
            Outcome::Delivered => {
                tracing::info!(event_id = %delivery.id, tries = delivery.retries + 1, "webhook delivered");
                jobs.complete(&delivery.id, worker, Vec::new()).await
            }
            Outcome::Refused(reason) => {
                tracing::warn!(event_id = %delivery.id, %reason, "webhook refused");
                let error = JobError {
                    code: "webhook_refused".to_owned(),
                    message: reason,
                };
                jobs.fail(&delivery.id, worker, error).await
            }
            Outcome::Failed(reason) => {
                let age = Duration::from_millis(now.saturating_sub(delivery.created_ms));
                if age >= options.retry_for {
                    tracing::warn!(event_id = %delivery.id, %reason, "webhook given up");
                    let error = JobError {
                        code: "undeliverable".to_owned(),
                        message: format!("not accepted within {:?}: {reason}", options.retry_for),
                    };
                    jobs.fail(&delivery.id, worker, error).await
                } else {
                    let wait = backoff(options.retry_base, delivery.retries);
                    tracing::info!(event_id = %delivery.id, %reason, retry_in = ?wait, "webhook not accepted; will retry");
                    let error = JobError {
                        code: "delivery_failed".to_owned(),
                        message: reason,
                    };
                    let after = now + u64::try_from(wait.as_millis()).unwrap_or(u64::MAX / 2);
                    jobs.retry_later(&delivery.id, worker, after, error).await
                }
            }
        };
        match recorded {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(event_id = %delivery.id, "delivery was taken over; outcome dropped");
            }
            Err(e) => {
                tracing::error!(event_id = %delivery.id, error = %Error::from(e), "recording a delivery failed");
            }
        }
    }

    /// POSTs `body`, following redirects, checking every target.
    async fn post_event(&self, url: &str, body: &[u8], event_id: &str) -> Outcome {
        let options = &self.inner.options.webhooks;
        let mut target = url.to_owned();
        for _ in 0..=MAX_REDIRECTS {
            let (parsed, addrs) = match checked_target(&target, options.allow_private).await {
                Ok(found) => found,
                Err(TargetError::Refused(m)) => return Outcome::Refused(format!("{target}: {m}")),
                Err(TargetError::Unresolved(m)) => return Outcome::Failed(m),
            };
            let mut builder = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .timeout(options.timeout)
                .user_agent(concat!("captions-webhooks/", env!("CARGO_PKG_VERSION")));
            if let Some(name) = parsed.host_str()
                && !name.starts_with('[')
                && name.parse::<IpAddr>().is_err()
            {
                // Pinned: the request goes to the addresses just checked, not a new lookup.
                builder = builder.resolve_to_addrs(name, &addrs);
            }
            let client = match builder.build() {
                Ok(client) => client,
                Err(e) => return Outcome::Failed(format!("HTTP client: {e}")),
            };
            let timestamp = now_ms() / 1000;
            let sent = client
                .post(parsed.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(SIGNATURE_HEADER, sign(&options.secret, timestamp, body))
                .header(EVENT_ID_HEADER, event_id)
                .body(body.to_vec())
                .send()
                .await;
            let response = match sent {
                Ok(response) => response,
                Err(e) => return Outcome::Failed(format!("request failed: {e}")),
            };
            let status = response.status();
            if status.is_success() {
                return Outcome::Delivered;
            }
            if status.is_redirection() {
                let next = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .and_then(|l| parsed.join(l).ok());
                match next {
                    Some(next) => {
                        target = next.to_string();
                        continue;
                    }
                    None => {
                        return Outcome::Failed(format!(
                            "the receiver answered {status} without a usable Location"
                        ));
                    }
                }
            }
            return Outcome::Failed(format!("the receiver answered {status}"));
        }
        Outcome::Failed(format!("more than {MAX_REDIRECTS} redirects"))
    }
}

/// The wait before retry number `retries + 1`: `base`, doubled each time, at most an hour.
fn backoff(base: Duration, retries: u32) -> Duration {
    base.saturating_mul(2_u32.saturating_pow(retries.min(30)))
        .min(MAX_BACKOFF)
}

/// `ms` since the epoch as RFC 3339 UTC (`2025-01-31T12:00:00.123Z`).
pub(crate) fn rfc3339(ms: u64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::net::Ipv6Addr;

    use super::*;

    #[test]
    fn signatures_verify_and_tampering_fails() {
        let header = sign(b"secret", 1_700_000_000, b"{\"a\":1}");
        assert!(header.starts_with("t=1700000000,v1="));
        assert!(verify_signature(b"secret", &header, b"{\"a\":1}"));
        assert!(!verify_signature(b"secret", &header, b"{\"a\":2}"));
        assert!(!verify_signature(b"other", &header, b"{\"a\":1}"));
        let moved = header.replace("t=1700000000", "t=1700000001");
        assert!(!verify_signature(b"secret", &moved, b"{\"a\":1}"));
        assert!(!verify_signature(b"secret", "v1=00", b"{\"a\":1}"));
    }

    #[test]
    fn internal_addresses_are_not_public() {
        for internal in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "0.0.0.0",
            "::1",
            "::",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
        ] {
            let ip: IpAddr = internal.parse().unwrap_or(IpAddr::V6(Ipv6Addr::LOCALHOST));
            assert!(!is_public_address(ip), "{internal}");
        }
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            let ip: IpAddr = public.parse().unwrap_or(IpAddr::V6(Ipv6Addr::LOCALHOST));
            assert!(is_public_address(ip), "{public}");
        }
    }

    #[test]
    fn backoff_doubles_up_to_an_hour() {
        let base = Duration::from_secs(5);
        assert_eq!(backoff(base, 0), Duration::from_secs(5));
        assert_eq!(backoff(base, 3), Duration::from_secs(40));
        assert_eq!(backoff(base, 20), MAX_BACKOFF);
        assert_eq!(backoff(base, u32::MAX), MAX_BACKOFF);
    }

    #[tokio::test]
    async fn targets_are_checked_after_resolution() {
        for url in [
            "http://127.0.0.1/hook",
            "http://10.0.0.1/hook",
            "http://169.254.169.254/latest/meta-data",
            "http://[::1]:8080/hook",
            "http://localhost:9/hook",
            "ftp://example.com/hook",
            "not a url",
        ] {
            assert!(
                matches!(
                    checked_target(url, false).await,
                    Err(TargetError::Refused(_))
                ),
                "{url}"
            );
        }
        assert!(
            checked_target("http://localhost:9/hook", true)
                .await
                .is_ok()
        );
        assert!(
            checked_target("http://93.184.216.34/hook", false)
                .await
                .is_ok()
        );
    }
}
