//! The soak's clients: each loops upload → transcribe → generate → download → delete, and every
//! request it makes is recorded.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::clips::{CaptionCheck, Clip, OutputFault, check_output, heard_share};
use super::{
    DRAIN_LIMIT, JOB_LIMIT, PROCESSES, RECOVERY_S, Rng, Shared, faults::clock_label, lock,
};

/// Templates the generates use (`None`: the default one), all drawing the spoken word.
const TEMPLATES: &[Option<&str>] = &[
    None,
    Some("karaoke"),
    Some("one-word"),
    Some("subtitle-bar"),
    Some("typewriter"),
];
/// How often a running job is read.
const POLL: Duration = Duration::from_secs(1);
/// A response with no `Retry-After` is tried again after this long.
const DEFAULT_RETRY_AFTER_S: u64 = 5;

/// What a request was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Endpoint {
    SignedUrl,
    Upload,
    CreateTranscript,
    GetTranscript,
    GenerateSync,
    GenerateAsync,
    GetGenerate,
    Download,
    DeleteTranscript,
    DeleteGenerate,
}

impl Endpoint {
    pub(crate) const ALL: [Self; 10] = [
        Self::SignedUrl,
        Self::Upload,
        Self::CreateTranscript,
        Self::GetTranscript,
        Self::GenerateSync,
        Self::GenerateAsync,
        Self::GetGenerate,
        Self::Download,
        Self::DeleteTranscript,
        Self::DeleteGenerate,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::SignedUrl => "GET /v1/signedUrl",
            Self::Upload => "POST upload form (bucket)",
            Self::CreateTranscript => "POST /v1/transcript",
            Self::GetTranscript => "GET /v1/transcript/{id}",
            Self::GenerateSync => "POST /v1/generate",
            Self::GenerateAsync => "POST /v1/generate async",
            Self::GetGenerate => "GET /v1/generate/{id}",
            Self::Download => "GET download_url (bucket)",
            Self::DeleteTranscript => "DELETE /v1/transcript/{id}",
            Self::DeleteGenerate => "DELETE /v1/generate/{id}",
        }
    }

    /// Whether the request makes something (a job, a stored output) that a lost answer leaves
    /// behind unknown to the client.
    pub(crate) fn creates(self) -> bool {
        matches!(
            self,
            Self::CreateTranscript | Self::GenerateSync | Self::GenerateAsync
        )
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One request and its answer (or none).
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    pub(crate) endpoint: Endpoint,
    /// `None`: no answer (refused, reset, timed out).
    pub(crate) status: Option<u16>,
    /// The error body's `error.code`, when it has one.
    pub(crate) code: String,
    pub(crate) retry_after: bool,
    pub(crate) start_s: f64,
    pub(crate) end_s: f64,
    /// Why there was no answer.
    pub(crate) error: String,
    /// A bucket's 400 saying it could not read the upload's body (see
    /// [`bucket_did_not_read_body`]): the upload is sent again.
    pub(crate) body_unread: bool,
}

/// A transcription or background generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobKind {
    Transcript,
    Generate,
}

/// A job a client submitted and was told the id of.
#[derive(Debug, Clone)]
pub(crate) struct SubmittedJob {
    pub(crate) id: String,
    pub(crate) kind: JobKind,
    pub(crate) client: usize,
    pub(crate) round: u64,
}

/// A generate's output as the client saw it.
#[derive(Debug, Clone)]
pub(crate) struct Output {
    /// Its object key (`outputs/<uuid>/<name>`).
    pub(crate) key: String,
    pub(crate) asynchronous: bool,
    /// What the check saw, or what was wrong.
    pub(crate) check: Result<CaptionCheck, OutputProblem>,
}

/// What was wrong with an output.
#[derive(Debug, Clone)]
pub(crate) enum OutputProblem {
    /// The link did not give it.
    Missing(String),
    Probe(String),
    Pixels(String),
}

/// One round of one client.
#[derive(Debug, Clone)]
pub(crate) struct Iteration {
    pub(crate) client: usize,
    pub(crate) round: u64,
    pub(crate) clip: &'static str,
    pub(crate) asynchronous: bool,
    pub(crate) start_s: f64,
    /// `None` while it runs (or when it never finished).
    pub(crate) end_s: Option<f64>,
    /// Why it ended early, when it did: a problem, or a job that failed (judged later).
    pub(crate) stopped: Option<Stop>,
    /// Requests that create something and whose answer was lost (sent, then no answer).
    pub(crate) lost_answers: Vec<Endpoint>,
}

/// Why a round ended early.
#[derive(Debug, Clone)]
pub(crate) enum Stop {
    /// Something that must not happen; reported as a problem.
    Problem(String),
    /// A job ended FAILED; whether that was allowed is judged from the job store.
    JobFailed(String),
}

/// An answer.
struct Reply {
    status: u16,
    body: Vec<u8>,
    code: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// `status code: body` for a message, the body cut short.
    fn describe(&self) -> String {
        let body = String::from_utf8_lossy(&self.body);
        let body: String = body.chars().take(300).collect();
        format!("{} {}", self.status, body.trim())
    }
}

/// Where a request goes: the service (either process) or a URL it gave (the bucket).
#[derive(Clone, Copy)]
enum Target {
    Service,
    Url,
}

/// Runs one client per key until the load ends, then lets their rounds finish (for at most
/// [`DRAIN_LIMIT`]). Returns whether every round finished.
pub(crate) async fn run_clients(
    shared: Arc<Shared>,
    clips: Arc<Vec<Clip>>,
    keys: Vec<String>,
    downloads: &Path,
    seed: u64,
) -> bool {
    let http = match reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(300))
        .build()
    {
        Ok(http) => http,
        Err(e) => {
            shared.problem(format!("no HTTP client: {e}"));
            return false;
        }
    };
    let mut tasks = tokio::task::JoinSet::new();
    for (index, key) in keys.into_iter().enumerate() {
        let client = Client {
            shared: Arc::clone(&shared),
            clips: Arc::clone(&clips),
            http: http.clone(),
            index,
            key,
            turn: index % PROCESSES,
            rng: Rng::new(seed ^ (index as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d)),
            downloads: downloads.to_owned(),
            lost: Vec::new(),
        };
        tasks.spawn(client.run());
    }
    let remaining_s = (shared.load_s - shared.clock.now_s()).max(0.0);
    let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(remaining_s) + DRAIN_LIMIT;
    let all = async {
        while let Some(done) = tasks.join_next().await {
            if let Err(e) = done {
                shared.problem(format!("a client stopped: {e}"));
            }
        }
    };
    if tokio::time::timeout_at(deadline, all).await.is_ok() {
        return true;
    }
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    false
}

struct Client {
    shared: Arc<Shared>,
    clips: Arc<Vec<Clip>>,
    http: reqwest::Client,
    index: usize,
    key: String,
    /// The process the next request goes to.
    turn: usize,
    rng: Rng,
    downloads: PathBuf,
    /// This round's requests whose answer was lost.
    lost: Vec<Endpoint>,
}

impl Client {
    async fn run(mut self) {
        let mut round = 0;
        while self.shared.clock.now_s() < self.shared.load_s {
            self.round(round).await;
            round += 1;
        }
    }

    async fn round(&mut self, round: u64) {
        let clips = Arc::clone(&self.clips);
        #[allow(clippy::cast_possible_truncation, reason = "a remainder below 4")]
        let clip = &clips[(self.index + round as usize) % clips.len()];
        let asynchronous = self.rng.below(2) == 0;
        let template = TEMPLATES[self.rng.below(TEMPLATES.len())];
        self.lost.clear();
        let slot = {
            let mut iterations = lock(&self.shared.iterations);
            iterations.push(Iteration {
                client: self.index,
                round,
                clip: clip.name,
                asynchronous,
                start_s: self.shared.clock.now_s(),
                end_s: None,
                stopped: None,
                lost_answers: Vec::new(),
            });
            iterations.len() - 1
        };
        let stopped = self.steps(round, clip, asynchronous, template).await.err();
        let end_s = self.shared.clock.now_s();
        let mut iterations = lock(&self.shared.iterations);
        let record = &mut iterations[slot];
        record.end_s = Some(end_s);
        record.stopped = stopped;
        record.lost_answers.clone_from(&self.lost);
    }

    async fn steps(
        &mut self,
        round: u64,
        clip: &Clip,
        asynchronous: bool,
        template: Option<&str>,
    ) -> Result<(), Stop> {
        let file_name = format!("c{}-r{round}-{}", self.index, clip.name);
        let input = self.upload(clip, &file_name).await?;

        let hook = self.shared.hook_url.clone();
        let created = self
            .call(Endpoint::CreateTranscript, Target::Service, |http, base| {
                http.post(format!("{base}/v1/transcript"))
                    .json(&json!({"input": input, "lang": "en", "webhook_url": hook}))
            })
            .await?;
        let transcript_id = self.job_id(&created, Endpoint::CreateTranscript)?;
        self.submitted(&transcript_id, JobKind::Transcript, round);
        let done = self.wait_job(JobKind::Transcript, &transcript_id).await?;
        if done["status"] != "COMPLETED" {
            return Err(Stop::JobFailed(format!(
                "transcript {transcript_id}: {}",
                done["error"]
            )));
        }
        let words = done["words"].as_array().cloned().unwrap_or_default();
        if words.is_empty() {
            return Err(Stop::Problem(format!(
                "transcript {transcript_id} COMPLETED without words"
            )));
        }
        let heard = heard_share(clip.text, &words);
        if heard < 0.5 {
            self.shared.problem(format!(
                "transcript {transcript_id} of {} heard {:.0} % of {:?}",
                clip.name,
                heard * 100.0,
                clip.text
            ));
        }

        let mut request = json!({"input": input, "words": words});
        if let Some(template) = template {
            request["templateId"] = json!(template);
        }
        let (download_url, generate_id) = if asynchronous {
            request["async"] = json!(true);
            request["webhook_url"] = json!(self.shared.hook_url);
            let answer = self
                .call(Endpoint::GenerateAsync, Target::Service, |http, base| {
                    http.post(format!("{base}/v1/generate")).json(&request)
                })
                .await?;
            let id = self.job_id(&answer, Endpoint::GenerateAsync)?;
            self.submitted(&id, JobKind::Generate, round);
            let done = self.wait_job(JobKind::Generate, &id).await?;
            if done["status"] != "COMPLETED" {
                return Err(Stop::JobFailed(format!("generate {id}: {}", done["error"])));
            }
            let link = answer.json()["download_url"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (link, Some(id))
        } else {
            let answer = self
                .call(Endpoint::GenerateSync, Target::Service, |http, base| {
                    http.post(format!("{base}/v1/generate")).json(&request)
                })
                .await?;
            if answer.status != 200 {
                return Err(Stop::Problem(format!(
                    "{}: {}",
                    Endpoint::GenerateSync,
                    answer.describe()
                )));
            }
            let link = answer.json()["download_url"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (link, None)
        };

        let output = self
            .download_and_check(clip, &file_name, &download_url, &words, asynchronous)
            .await;
        let failed = output.check.as_ref().err().cloned();
        lock(&self.shared.outputs).push(output);
        if let Some(problem) = failed {
            let why = match problem {
                OutputProblem::Missing(why) => format!("missing: {why}"),
                OutputProblem::Probe(why) => format!("ffprobe: {why}"),
                OutputProblem::Pixels(why) => format!("caption pixels: {why}"),
            };
            return Err(Stop::Problem(format!(
                "output {}: {why}",
                object_key(&download_url)
            )));
        }

        self.delete_finished(Endpoint::DeleteTranscript, "transcript", &transcript_id)
            .await?;
        if let Some(id) = generate_id {
            self.delete_finished(Endpoint::DeleteGenerate, "generate", &id)
                .await?;
        }
        Ok(())
    }

    /// An upload descriptor for `file_name`, then the form POST of `clip` to its URL; returns
    /// the file identifier.
    async fn upload(&mut self, clip: &Clip, file_name: &str) -> Result<String, Stop> {
        let descriptor = self
            .call(Endpoint::SignedUrl, Target::Service, |http, base| {
                // The names made above need no escaping: [a-z0-9.-].
                http.get(format!("{base}/v1/signedUrl?fileName={file_name}"))
            })
            .await?;
        if descriptor.status != 200 {
            return Err(Stop::Problem(format!(
                "{}: {}",
                Endpoint::SignedUrl,
                descriptor.describe()
            )));
        }
        let descriptor = descriptor.json();
        let (Some(url), Some(fields), Some(file)) = (
            descriptor["url"].as_str(),
            descriptor["fields"].as_object(),
            descriptor["file"].as_str(),
        ) else {
            return Err(Stop::Problem(format!(
                "an upload descriptor without url, fields or file: {descriptor}"
            )));
        };
        let fields: Vec<(String, String)> = fields
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
            .collect();
        let uploaded = self
            .call(Endpoint::Upload, Target::Url, |http, _| {
                let mut form = reqwest::multipart::Form::new();
                for (name, value) in &fields {
                    form = form.text(name.clone(), value.clone());
                }
                let part = reqwest::multipart::Part::bytes(clip.bytes.clone())
                    .file_name(file_name.to_owned());
                let part = match part.mime_str(clip.mime) {
                    Ok(typed) => typed,
                    Err(_) => reqwest::multipart::Part::bytes(clip.bytes.clone())
                        .file_name(file_name.to_owned()),
                };
                http.post(url).multipart(form.part("file", part))
            })
            .await?;
        if !(200..300).contains(&uploaded.status) {
            return Err(Stop::Problem(format!(
                "{}: {}",
                Endpoint::Upload,
                uploaded.describe()
            )));
        }
        Ok(file.to_owned())
    }

    fn job_id(&self, reply: &Reply, endpoint: Endpoint) -> Result<String, Stop> {
        match reply.json()["job_id"].as_str() {
            Some(id) if reply.status == 200 => Ok(id.to_owned()),
            _ => Err(Stop::Problem(format!("{endpoint}: {}", reply.describe()))),
        }
    }

    fn submitted(&self, id: &str, kind: JobKind, round: u64) {
        lock(&self.shared.jobs).push(SubmittedJob {
            id: id.to_owned(),
            kind,
            client: self.index,
            round,
        });
    }

    /// Reads the job until it ends; a job not ended within [`JOB_LIMIT`], or gone, is a
    /// problem.
    async fn wait_job(&mut self, kind: JobKind, id: &str) -> Result<Value, Stop> {
        let (endpoint, path) = match kind {
            JobKind::Transcript => (Endpoint::GetTranscript, format!("/v1/transcript/{id}")),
            JobKind::Generate => (Endpoint::GetGenerate, format!("/v1/generate/{id}")),
        };
        let deadline = tokio::time::Instant::now() + JOB_LIMIT;
        loop {
            let reply = self
                .call(endpoint, Target::Service, |http, base| {
                    http.get(format!("{base}{path}"))
                })
                .await?;
            if reply.status != 200 {
                return Err(Stop::Problem(format!("{path}: {}", reply.describe())));
            }
            let body = reply.json();
            if body["status"] == "COMPLETED" || body["status"] == "FAILED" {
                return Ok(body);
            }
            if tokio::time::Instant::now() > deadline {
                return Err(Stop::Problem(format!(
                    "job {id} still {} {} min after it was submitted",
                    body["status"],
                    JOB_LIMIT.as_secs() / 60
                )));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Downloads the output and checks it; the file stays in the downloads folder only when
    /// it fails its check.
    async fn download_and_check(
        &mut self,
        clip: &Clip,
        file_name: &str,
        link: &str,
        words: &[Value],
        asynchronous: bool,
    ) -> Output {
        let key = object_key(link);
        let mut output = Output {
            key,
            asynchronous,
            check: Err(OutputProblem::Missing("not downloaded".to_owned())),
        };
        let reply = match self
            .call(Endpoint::Download, Target::Url, |http, _| http.get(link))
            .await
        {
            Ok(reply) if reply.status == 200 => reply,
            Ok(reply) => {
                output.check = Err(OutputProblem::Missing(reply.describe()));
                return output;
            }
            Err(Stop::Problem(why) | Stop::JobFailed(why)) => {
                output.check = Err(OutputProblem::Missing(why));
                return output;
            }
        };
        let path = self.downloads.join(format!("{file_name}-captioned.mp4"));
        if let Err(e) = std::fs::write(&path, &reply.body) {
            output.check = Err(OutputProblem::Missing(format!("{}: {e}", path.display())));
            return output;
        }
        let clips = Arc::clone(&self.clips);
        let clip_index = clips.iter().position(|c| c.name == clip.name).unwrap_or(0);
        let words = words.to_vec();
        let checked_path = path.clone();
        let checked = tokio::task::spawn_blocking(move || {
            check_output(&clips[clip_index], &checked_path, &words)
        })
        .await;
        output.check = match checked {
            Ok(Ok(checked)) => {
                let _ = std::fs::remove_file(&path);
                Ok(checked)
            }
            Ok(Err(OutputFault::Probe(why))) => Err(OutputProblem::Probe(why)),
            Ok(Err(OutputFault::Pixels(why))) => Err(OutputProblem::Pixels(why)),
            Err(e) => Err(OutputProblem::Probe(format!("the check stopped: {e}"))),
        };
        output
    }

    /// DELETE of a finished job: the service must refuse it with 409 `already_finished`.
    async fn delete_finished(
        &mut self,
        endpoint: Endpoint,
        what: &str,
        id: &str,
    ) -> Result<(), Stop> {
        let reply = self
            .call(endpoint, Target::Service, |http, base| {
                http.delete(format!("{base}/v1/{what}/{id}"))
            })
            .await?;
        if reply.status == 409 && reply.code == "already_finished" {
            Ok(())
        } else {
            Err(Stop::Problem(format!(
                "DELETE of finished {what} {id}: {} (409 already_finished expected)",
                reply.describe()
            )))
        }
    }

    /// Sends the request `build` makes (given the process's base URL) until it gets an answer
    /// to keep: a 429 is waited out as its `Retry-After` says (for up to [`JOB_LIMIT`]); a 503
    /// or 507 with `Retry-After`, or no answer, is tried again (the other process next, when
    /// one did not answer) until it has gone on for [`RECOVERY_S`] after the last fault ended.
    async fn call<F>(&mut self, endpoint: Endpoint, target: Target, build: F) -> Result<Reply, Stop>
    where
        F: Fn(&reqwest::Client, &str) -> reqwest::RequestBuilder,
    {
        let first_s = self.shared.clock.now_s();
        loop {
            let process = self.turn;
            if let Target::Service = target {
                // As a load balancer: each request to the next process.
                self.turn = (self.turn + 1) % PROCESSES;
            }
            let base = match target {
                Target::Service => self.shared.bases[process].as_str(),
                Target::Url => "",
            };
            let start_s = self.shared.clock.now_s();
            let request = match target {
                Target::Service => build(&self.http, base).header("x-api-key", &self.key),
                // The bucket's links carry their own signatures; the key is the service's.
                Target::Url => build(&self.http, base),
            };
            let answered = match request.send().await {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok());
                    response
                        .bytes()
                        .await
                        .map(|body| (status, retry_after, body.to_vec()))
                }
                Err(e) => Err(e),
            };
            let end_s = self.shared.clock.now_s();
            let mut exchange = Exchange {
                endpoint,
                status: None,
                code: String::new(),
                retry_after: false,
                start_s,
                end_s,
                error: String::new(),
                body_unread: false,
            };
            let (last, wait_s) = match answered {
                Ok((status, retry_after, body)) => {
                    let (code, body_unread) = match (status, target) {
                        (..400, _) => (String::new(), false),
                        (_, Target::Service) => (
                            serde_json::from_slice::<Value>(&body)
                                .ok()
                                .and_then(|v| v["error"]["code"].as_str().map(str::to_owned))
                                .unwrap_or_default(),
                            false,
                        ),
                        (_, Target::Url) => {
                            let text = String::from_utf8_lossy(&body);
                            (
                                crate::upload::s3_error_code(&text).to_owned(),
                                endpoint == Endpoint::Upload
                                    && bucket_did_not_read_body(status, &text),
                            )
                        }
                    };
                    exchange.status = Some(status);
                    exchange.code.clone_from(&code);
                    exchange.retry_after = retry_after.is_some();
                    exchange.body_unread = body_unread;
                    lock(&self.shared.exchanges).push(exchange);
                    let retried = status == 429
                        || (matches!(status, 503 | 507) && retry_after.is_some())
                        || body_unread;
                    if !retried {
                        return Ok(Reply { status, body, code });
                    }
                    let wait_s = retry_after.unwrap_or(if body_unread {
                        1
                    } else {
                        DEFAULT_RETRY_AFTER_S
                    });
                    (format!("{status} {code}"), wait_s.clamp(1, 60))
                }
                Err(e) => {
                    let lost = !e.is_connect();
                    if lost && endpoint.creates() {
                        self.lost.push(endpoint);
                    }
                    exchange.error = no_answer(&e);
                    let last = format!("no answer ({})", exchange.error);
                    lock(&self.shared.exchanges).push(exchange);
                    (last, 1)
                }
            };
            let now_s = self.shared.clock.now_s();
            if now_s - first_s > JOB_LIMIT.as_secs_f64() {
                return Err(Stop::Problem(format!(
                    "{endpoint}: still {last} {} min after the first try",
                    JOB_LIMIT.as_secs() / 60
                )));
            }
            if !last.starts_with("429")
                && let Some(ended_s) = self.shared.faults_ended_s()
                && now_s - ended_s.max(first_s) > RECOVERY_S
            {
                return Err(Stop::Problem(format!(
                    "{endpoint}: still {last} at {}, first tried at {}, {RECOVERY_S:.0} s after the last fault ended",
                    clock_label(now_s),
                    clock_label(first_s)
                )));
            }
            tokio::time::sleep(Duration::from_secs(wait_s)).await;
        }
    }
}

/// Whether a bucket's answer says the request's body did not reach it whole: S3's 400
/// `RequestTimeout` (the body stalled; AWS's SDKs send such a request again), and s3s-fs's 400
/// `InvalidRequest` "failed to read file stream" (its multipart reader lost the body's stream,
/// about one form upload in a few thousand here). Neither concerns the service: the client sends
/// the same form again, and the report counts it.
fn bucket_did_not_read_body(status: u16, body: &str) -> bool {
    status == 400
        && match crate::upload::s3_error_code(body) {
            "RequestTimeout" => true,
            "InvalidRequest" => body.contains("failed to read file stream"),
            _ => false,
        }
}

/// Why a request got no answer, in a few words.
fn no_answer(e: &reqwest::Error) -> String {
    if e.is_connect() {
        "refused".to_owned()
    } else if e.is_timeout() {
        "timed out".to_owned()
    } else if e.is_body() || e.is_decode() {
        "answer cut".to_owned()
    } else {
        let mut text = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(cause) = source {
            text = cause.to_string();
            source = cause.source();
        }
        text.chars().take(80).collect()
    }
}

/// The object key of a path-style bucket link (`http://host/bucket/outputs/<uuid>/<name>?…`).
pub(crate) fn object_key(link: &str) -> String {
    let path = link.split_once("://").map_or(link, |(_, rest)| {
        rest.split_once('/').map_or("", |(_, p)| p)
    });
    let path = path.split('?').next().unwrap_or_default();
    path.split_once('/')
        .map_or(path, |(_bucket, key)| key)
        .to_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn object_keys_are_read_from_path_style_links() {
        assert_eq!(
            super::object_key("http://127.0.0.1:9000/soak/outputs/1f/a-captioned.mp4?X-Amz-Date=1"),
            "outputs/1f/a-captioned.mp4"
        );
    }

    #[test]
    fn only_a_body_the_bucket_could_not_read_sends_an_upload_again() {
        let unread = r#"<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidRequest</Code><Message>failed to read file stream</Message></Error>"#;
        assert!(super::bucket_did_not_read_body(400, unread));
        assert!(super::bucket_did_not_read_body(
            400,
            "<Error><Code>RequestTimeout</Code></Error>"
        ));
        // A policy the form broke, or another invalid request, is the client's to fix.
        let policy =
            "<Error><Code>InvalidRequest</Code><Message>policy condition failed</Message></Error>";
        assert!(!super::bucket_did_not_read_body(400, policy));
        assert!(!super::bucket_did_not_read_body(
            403,
            "<Error><Code>AccessDenied</Code></Error>"
        ));
        assert!(!super::bucket_did_not_read_body(500, unread));
    }
}
