//! The studio in a real browser: headless Chromium (Debian's) driven through WebDriver over
//! the real service on a loopback port. Loads the page, enters the key, uploads a clip with
//! speech, transcribes it, changes a word's text and the template and sees the preview change,
//! generates, and checks that the downloaded video carries the edited word. The browser's
//! console and network logs must hold no error and no failed request.
//!
//! Screenshots of each step at a phone and a desktop width, and the browser's logs, are written
//! to `target/tmp/studio/` (printed at the end).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use caption_http::{Server, ServiceConfig};
use caption_testkit::{CHROMIUM, Chromedriver, media};
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

const KEY: &str = "studio-test-key-0123456789";
const W: usize = 360;
const H: usize = 640;
/// Phone and desktop viewports, CSS pixels.
const WIDTHS: [(&str, u32, u32); 2] = [("phone", 390, 844), ("desktop", 1280, 860)];
/// The spoken text; the studio test replaces "world." with this.
const SPOKEN: &str = "Hello world. This is a caption test.";
const EDITED: &str = "Planet!";

/// A portrait clip: a slowly moving gradient whose audio is espeak-ng saying [`SPOKEN`].
fn speech_clip(dir: &Path) -> PathBuf {
    let picture = format!("gradients=s={W}x{H}:c0=0x2b3a67:c1=0x496a81:speed=0.004:r=25");
    media::speech_video(&dir.join("my-clip.mp4"), &picture, SPOKEN).unwrap()
}

/// The frame shown at `t_s`, RGB.
fn frame_at(path: &Path, t_s: f64) -> Vec<u8> {
    let rgb = media::frame_rgb_at(path, t_s).unwrap();
    assert_eq!(rgb.len(), W * H * 3, "{}", path.display());
    rgb
}

/// Pixels where some channel differs by more than 60 (far beyond encoding noise).
fn differing_pixels(a: &[u8], b: &[u8]) -> usize {
    a.chunks_exact(3)
        .zip(b.chunks_exact(3))
        .filter(|(p, q)| p.iter().zip(q.iter()).any(|(x, y)| x.abs_diff(*y) > 60))
        .count()
}

/// chromedriver's log endpoint (`browser` or `performance` entries since the last read).
#[derive(Debug)]
struct GetLog(&'static str);

impl WebDriverCompatibleCommand for GetLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/se/log",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (axum::http::Method, Option<String>) {
        (
            axum::http::Method::POST,
            Some(json!({ "type": self.0 }).to_string()),
        )
    }
}

struct Studio {
    client: Client,
    shots: PathBuf,
    browser_log: Vec<Value>,
    network_log: Vec<Value>,
}

impl Studio {
    async fn wait_js(&self, what: &str, condition: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let ok = self
                .client
                .execute(&format!("return Boolean({condition});"), vec![])
                .await
                .unwrap();
            if ok == Value::Bool(true) {
                return;
            }
            if Instant::now() > deadline {
                let toast = self
                    .client
                    .execute(
                        "return document.getElementById('toast').textContent;",
                        vec![],
                    )
                    .await
                    .unwrap();
                panic!("{what}: not true after {timeout:?}: {condition} (toast: {toast})");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn js(&self, script: &str) -> Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    async fn click(&self, css: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    }

    /// Screenshots of the step at each width, with `focus` scrolled into view.
    async fn shoot(&mut self, step: &str, focus: &str) {
        self.shoot_each(step, [focus, focus]).await;
    }

    /// Screenshots of the step at each width of [`WIDTHS`], with that width's element of
    /// `focus` scrolled into view.
    async fn shoot_each(&mut self, step: &str, focus: [&str; 2]) {
        for ((name, width, height), focus) in WIDTHS.into_iter().zip(focus) {
            self.client.set_window_size(width, height).await.unwrap();
            // Let the layout settle at the new width before scrolling and taking the picture.
            self.wait_js(
                "resize",
                &format!("window.innerWidth === {width}"),
                Duration::from_secs(5),
            )
            .await;
            self.js(&format!(
                "document.querySelector({focus:?})?.scrollIntoView({{block: 'center'}});"
            ))
            .await;
            let png = self.client.screenshot().await.unwrap();
            std::fs::write(self.shots.join(format!("{step}-{name}.png")), png).unwrap();
        }
        self.collect_logs().await;
    }

    async fn collect_logs(&mut self) {
        for (kind, into) in [
            ("browser", &mut self.browser_log),
            ("performance", &mut self.network_log),
        ] {
            let entries = self.client.issue_cmd(GetLog(kind)).await.unwrap();
            into.extend(entries.as_array().cloned().unwrap_or_default());
        }
    }

    /// A digest of the preview image's pixels, to tell one preview from another.
    async fn preview_digest(&self) -> String {
        let digest = self
            .js("const img = document.getElementById('preview-img');
                 const c = document.createElement('canvas');
                 c.width = img.naturalWidth; c.height = img.naturalHeight;
                 const ctx = c.getContext('2d');
                 ctx.drawImage(img, 0, 0);
                 const d = ctx.getImageData(0, 0, c.width, c.height).data;
                 let h = 2166136261, lit = 0;
                 for (let i = 0; i < d.length; i += 1) { h = Math.imul(h ^ d[i], 16777619) >>> 0; }
                 for (let i = 3; i < d.length; i += 4) { if (d[i] > 0) lit += 1; }
                 return `${c.width}x${c.height}:${lit}:${h}`;")
            .await;
        let digest = digest.as_str().unwrap().to_owned();
        let lit: usize = digest.split(':').nth(1).unwrap().parse().unwrap();
        assert!(lit > 100, "the preview shows no caption: {digest}");
        digest
    }

    async fn preview_version(&self) -> u64 {
        self.js("return Number(document.getElementById('preview-img').dataset.version || 0);")
            .await
            .as_u64()
            .unwrap()
    }

    async fn wait_new_preview(&self, after: u64) {
        self.wait_js(
            "a new preview",
            &format!(
                "Number(document.getElementById('preview-img').dataset.version || 0) > {after}"
            ),
            Duration::from_secs(30),
        )
        .await;
    }
}

/// Failed requests in chromedriver's performance log: HTTP errors and loads that failed (a
/// request the page itself cancelled, such as a superseded preview, is not a failure).
fn failed_requests(network_log: &[Value]) -> Vec<String> {
    let mut failed = Vec::new();
    for entry in network_log {
        let Some(message) = entry["message"].as_str() else {
            continue;
        };
        let message: Value = serde_json::from_str(message).unwrap();
        let params = &message["message"]["params"];
        match message["message"]["method"].as_str() {
            Some("Network.responseReceived") => {
                let status = params["response"]["status"].as_u64().unwrap_or(0);
                if status >= 400 {
                    failed.push(format!("{status} {}", params["response"]["url"]));
                }
            }
            Some("Network.loadingFailed") if params["canceled"] != Value::Bool(true) => {
                failed.push(format!("failed: {params}"));
            }
            _ => {}
        }
    }
    failed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn captions_a_video_in_the_browser() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("studio");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let work = tempfile::tempdir().unwrap();
    let clip = speech_clip(work.path());

    let mut config = ServiceConfig::default();
    config.bind = "127.0.0.1:0".parse().unwrap();
    config.data_dir = work.path().join("data");
    config.api_keys = vec![KEY.to_owned()];
    config.model = "tiny.en".to_owned();
    config.workers = 1;
    config.threads_per_job = 2;
    let server = Server::bind(config).await.unwrap();
    let base = format!("http://{}", server.local_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let service = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));

    let driver = Chromedriver::start(&out.join("chromedriver.log")).unwrap();
    let capabilities = json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,860", "--force-device-scale-factor=1", "--lang=en-US",
                "--hide-scrollbars", "--force-color-profile=srgb",
            ],
        },
        "goog:loggingPrefs": { "browser": "ALL", "performance": "ALL" },
    });
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities.as_object().unwrap().clone())
        .connect(&driver.url())
        .await
        .unwrap();
    let mut studio = Studio {
        client,
        shots: out.clone(),
        browser_log: Vec::new(),
        network_log: Vec::new(),
    };

    // 1. The page asks for the key.
    studio.client.goto(&format!("{base}/")).await.unwrap();
    studio
        .wait_js(
            "key form",
            "!document.getElementById('connect').hidden",
            Duration::from_secs(10),
        )
        .await;
    studio.shoot("1-connect", "#connect").await;

    // 2. The key opens the workspace, with the drop zone.
    let key_input = studio.client.find(Locator::Id("key-input")).await.unwrap();
    key_input.send_keys(KEY).await.unwrap();
    studio.click("#key-save").await;
    studio
        .wait_js(
            "workspace",
            "!document.getElementById('workspace').hidden && document.querySelectorAll('.template-card').length > 0",
            Duration::from_secs(10),
        )
        .await;
    studio.shoot("2-upload", "#dropzone").await;

    // A file that is not a video, named as one, is refused before anything is uploaded.
    let fake = work.path().join("notes.mp4");
    std::fs::write(&fake, "shopping list: eggs, milk, a new microphone\n").unwrap();
    let file_input = studio.client.find(Locator::Id("file-input")).await.unwrap();
    file_input.send_keys(fake.to_str().unwrap()).await.unwrap();
    studio
        .wait_js(
            "the refusal",
            "!document.getElementById('toast').hidden && document.getElementById('toast').textContent.includes('not a video')",
            Duration::from_secs(20),
        )
        .await;
    let after_refusal: Value = studio
        .js("return [document.body.dataset.stage === 'uploaded', document.getElementById('dropzone').hidden, document.getElementById('file-input').value = ''];")
        .await;
    assert_eq!(
        after_refusal,
        json!([false, false, ""]),
        "the fake video went on"
    );

    // 3. Upload through the presigned descriptor.
    let file_input = studio.client.find(Locator::Id("file-input")).await.unwrap();
    file_input.send_keys(clip.to_str().unwrap()).await.unwrap();
    studio
        .wait_js(
            "upload",
            "document.body.dataset.stage === 'uploaded'",
            Duration::from_secs(60),
        )
        .await;
    studio.shoot("3-uploaded", "#transcribe-card").await;

    // 4. Transcribe; the words, the gallery and the preview appear.
    studio.click("#transcribe-btn").await;
    studio
        .wait_js(
            "transcript",
            "document.body.dataset.stage === 'transcribed' && document.querySelectorAll('.word').length > 3",
            Duration::from_secs(300),
        )
        .await;
    studio.wait_new_preview(0).await;
    studio
        .wait_js(
            "gallery",
            "Number(document.getElementById('gallery').dataset.rendered || 0) >= 1",
            Duration::from_secs(60),
        )
        .await;
    let words_before: Value = studio
        .js("return [...document.querySelectorAll('.word')].map(w => w.textContent);")
        .await;
    studio
        .shoot_each("4-transcribed", ["#frame", "#words"])
        .await;
    // Every heard word carries whisper's confidence, and those under 0.5 are marked for
    // checking.
    let chips: Value = studio
        .js("return [...document.querySelectorAll('.word')].map(w => [w.dataset.confidence === undefined ? null : Number(w.dataset.confidence), w.classList.contains('unsure')]);")
        .await;
    for chip in chips.as_array().unwrap() {
        let confidence = chip[0]
            .as_f64()
            .unwrap_or_else(|| panic!("a heard word without a confidence: {chips}"));
        assert!((0.0..=1.0).contains(&confidence), "{chips}");
        assert_eq!(chip[1], json!(confidence < 0.5), "{chips}");
    }

    // While the video plays, the caption is drawn over it, word after word.
    studio.click("#play").await;
    studio
        .wait_js(
            "captions while playing",
            "(v => !v.paused && !document.getElementById('preview-img').hidden && Number(document.getElementById('preview-img').dataset.playingVersion || 0) >= 2)(document.getElementById('video'))",
            Duration::from_secs(30),
        )
        .await;
    studio.shoot("4-playing", "#frame").await;
    studio
        .js("document.getElementById('video').pause(); return 1;")
        .await;

    // 5. Change a word's text: the preview changes.
    let index = words_before
        .as_array()
        .unwrap()
        .iter()
        .position(|w| w.as_str().unwrap().to_lowercase().contains("world"))
        .unwrap_or_else(|| panic!("no 'world' in {words_before}"));
    studio
        .click(&format!(".word[data-index=\"{index}\"]"))
        .await;
    studio
        .wait_js(
            "inspector",
            "!document.getElementById('inspector').hidden",
            Duration::from_secs(5),
        )
        .await;
    // Selecting a word moves the playhead to it, which draws a preview there first.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let version = studio.preview_version().await;
    let before_edit = studio.preview_digest().await;
    let text = studio.client.find(Locator::Id("word-text")).await.unwrap();
    text.clear().await.unwrap();
    text.send_keys(EDITED).await.unwrap();
    studio.wait_new_preview(version).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let after_edit = studio.preview_digest().await;
    assert_ne!(
        before_edit, after_edit,
        "editing the word left the preview as it was"
    );
    let word: Value = studio
        .js("const w = document.querySelector('.word[aria-selected=true]'); return [w.textContent, w.title];")
        .await;
    assert_eq!(word[0], json!(EDITED));
    // The edited text is the user's: no confidence, no mark, no note.
    let mark: Value = studio
        .js("const w = document.querySelector('.word[aria-selected=true]'); return [w.dataset.confidence === undefined, w.classList.contains('unsure'), document.getElementById('word-note').hidden];")
        .await;
    assert_eq!(mark, json!([true, false, true]));
    // The chip's title is "START–END s".
    let span: Vec<f64> = word[1]
        .as_str()
        .unwrap()
        .trim_end_matches(" s")
        .split('–')
        .map(|t| t.parse().unwrap())
        .collect();
    let edited_at_s = (span[0] + span[1]) / 2.0;

    // ... and the template: the preview changes again.
    let version = studio.preview_version().await;
    studio.click(".template-card[data-id=\"karaoke\"]").await;
    studio.wait_new_preview(version).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let after_template = studio.preview_digest().await;
    assert_ne!(
        after_edit, after_template,
        "a new template left the preview as it was"
    );
    studio.shoot("5-edited", "#gallery").await;

    // 6. Generate in the background and play the result.
    studio.click("#generate-btn").await;
    studio
        .wait_js(
            "generate",
            "document.body.dataset.stage === 'generated'",
            Duration::from_secs(300),
        )
        .await;
    // The result plays in the page: seek it to the edited word.
    studio
        .js(&format!(
            "const v = document.getElementById('result-video'); v.currentTime = {edited_at_s}; return 1;"
        ))
        .await;
    studio
        .wait_js(
            "the result at the edited word",
            "(v => v.readyState >= 2 && !v.seeking && v.currentTime > 0)(document.getElementById('result-video'))",
            Duration::from_secs(30),
        )
        .await;
    studio.shoot("6-generated", "#result").await;

    // 7. The same studio in the dark theme.
    studio.click("#theme-toggle").await;
    studio
        .wait_js(
            "dark theme",
            "document.documentElement.dataset.theme === 'dark'",
            Duration::from_secs(5),
        )
        .await;
    studio.shoot("7-dark", "#edit-card").await;

    let download = studio
        .js("return document.getElementById('download-link').href;")
        .await;
    let config: Value = serde_json::from_str(
        studio
            .js("return document.getElementById('config-json').textContent;")
            .await
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        config["font"],
        json!("Lato"),
        "karaoke's config is the one generated"
    );
    studio.collect_logs().await;
    for (name, log) in [
        ("browser-log.json", &studio.browser_log),
        ("network-log.json", &studio.network_log),
    ] {
        std::fs::write(out.join(name), serde_json::to_vec_pretty(log).unwrap()).unwrap();
    }
    studio.client.close().await.unwrap();

    // The downloaded video carries the edited word: at its time the frame differs from the
    // input's.
    let http = reqwest::Client::new();
    let bytes = http
        .get(download.as_str().unwrap())
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let output = out.join("captioned.mp4");
    std::fs::write(&output, &bytes).unwrap();
    let changed = differing_pixels(
        &frame_at(&clip, edited_at_s),
        &frame_at(&output, edited_at_s),
    );
    assert!(
        changed > 500,
        "only {changed} pixels differ from the input at {edited_at_s} s"
    );

    let errors: Vec<&Value> = studio
        .browser_log
        .iter()
        .filter(|e| e["level"] == "SEVERE" || e["level"] == "WARNING")
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    let failed = failed_requests(&studio.network_log);
    assert!(failed.is_empty(), "failed requests: {failed:#?}");
    let requests = studio
        .network_log
        .iter()
        .filter(|e| {
            e["message"]
                .as_str()
                .is_some_and(|m| m.contains("Network.requestWillBeSent"))
        })
        .count();
    assert!(
        requests > 20,
        "the network log holds only {requests} requests"
    );

    drop(driver);
    let _ = stop.send(());
    service.await.unwrap().unwrap();
    eprintln!("screenshots and logs: {}", out.display());
}
