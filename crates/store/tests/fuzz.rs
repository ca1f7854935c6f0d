//! Arbitrary and mutated input at the store's parsers: object keys from outside, file names
//! made into keys, and the upload form's POST policy check (its fields and, signed with the
//! store's secret so that the check reaches it, the policy document itself).
//!
//! No parser panics; a refused key is `InvalidKey` naming the rule; an accepted key keeps the
//! key rules; a refused form is an S3 4xx error with a message; an accepted form names a valid
//! key within the server's size cap. `CAPTIONS_FUZZ_CASES` sets the cases per parser;
//! `scripts/fuzz` runs 100,000 each.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use base64::Engine as _;
use caption_store::{
    ALGORITHM, Error, LOCAL_REGION, LinkOptions, LocalAuthority, ObjectKey, sanitise_file_name,
    sign_policy, signing_key,
};
use caption_testkit::fuzz::{self, Verdict, mutated_bytes, mutated_json};
use caption_testkit::upload;
use proptest::prelude::*;
use serde_json::{Value, json};
use time::OffsetDateTime;

const KEY_TOKENS: &[&[u8]] = &[b"/", b"//", b"..", b"./", b"/.", b"uploads/", b"\\", b"%2F"];

#[test]
fn object_keys() {
    let seeds = vec![
        ObjectKey::new_upload("talk.mp4")
            .as_str()
            .as_bytes()
            .to_vec(),
        b"outputs/5f0c9a7e-1d2b-4c3d-8e9f-0a1b2c3d4e5f/My_Talk_final_.mp4".to_vec(),
        b"a".to_vec(),
    ];
    fuzz::run(
        "object key",
        file!(),
        mutated_bytes(seeds, KEY_TOKENS),
        |bytes| {
            let text = String::from_utf8_lossy(&bytes);
            match ObjectKey::parse(&text) {
                Err(Error::InvalidKey { reason, .. }) if !reason.is_empty() => {
                    Ok(Verdict::Rejected)
                }
                Err(other) => Err(format!("refused with {other:?}")),
                Ok(key) => {
                    let keeps_rules = key.as_str() == text
                        && text.len() <= 1024
                        && text.split('/').all(|segment| {
                            !segment.is_empty()
                                && !segment.starts_with('.')
                                && segment.len() <= 255
                                && segment
                                    .bytes()
                                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
                        });
                    if keeps_rules {
                        Ok(Verdict::Accepted)
                    } else {
                        Err(format!("accepted {text:?} as {key:?}"))
                    }
                }
            }
        },
    );
}

#[test]
fn file_names_into_keys() {
    let seeds = vec![
        b"My Talk (final).mp4".to_vec(),
        b"C:\\Users\\me\\clip.MOV".to_vec(),
        "vidéo été 😀.mp4".as_bytes().to_vec(),
        b"../../etc/passwd".to_vec(),
    ];
    fuzz::run(
        "file name",
        file!(),
        mutated_bytes(seeds, KEY_TOKENS),
        |bytes| {
            let name = String::from_utf8_lossy(&bytes);
            let clean = sanitise_file_name(&name);
            let key = ObjectKey::new_upload(&name);
            if key.file_name() != clean
                || ObjectKey::parse(key.as_str()).ok().as_ref() != Some(&key)
            {
                return Err(format!(
                    "{name:?} made key {key:?}, which does not parse back"
                ));
            }
            // A file name is never refused: it is made safe.
            Ok(Verdict::Accepted)
        },
    );
}

const NOW: OffsetDateTime = time::macros::datetime!(2026-11-22 06:25:03 UTC);
const MAX_UPLOAD_BYTES: u64 = 1 << 20;

/// The local store's signer, whose descriptors the upload route checks.
fn authority() -> LocalAuthority {
    let links = LinkOptions::default().max_upload_bytes(MAX_UPLOAD_BYTES);
    LocalAuthority::from_secret([7; 32], "http://127.0.0.1:9", links)
}

/// The form of a real upload descriptor, in its order.
fn valid_form() -> Vec<(String, String)> {
    let key = ObjectKey::parse("uploads/abc/clip.mp4").unwrap();
    upload::form_fields(&authority().upload_descriptor(&key, NOW).fields)
}

/// One change to a form: a field's value or name edited byte-wise, a field dropped, repeated
/// or added, the fields reordered.
#[derive(Debug, Clone)]
enum FormEdit {
    Value { field: usize, bytes: Vec<u8> },
    Name { field: usize, bytes: Vec<u8> },
    Drop { field: usize },
    Repeat { field: usize },
    Add { name: String, value: String },
    Reverse,
}

fn form_edit() -> impl Strategy<Value = FormEdit> {
    let form = valid_form();
    let values: Vec<Vec<u8>> = form.iter().map(|(_, v)| v.as_bytes().to_vec()).collect();
    let names: Vec<Vec<u8>> = form.iter().map(|(n, _)| n.as_bytes().to_vec()).collect();
    prop_oneof![
        4 => (any::<usize>(), mutated_bytes(values, &[]))
            .prop_map(|(field, bytes)| FormEdit::Value { field, bytes }),
        1 => (any::<usize>(), mutated_bytes(names, &[]))
            .prop_map(|(field, bytes)| FormEdit::Name { field, bytes }),
        1 => any::<usize>().prop_map(|field| FormEdit::Drop { field }),
        1 => any::<usize>().prop_map(|field| FormEdit::Repeat { field }),
        1 => (
            prop::sample::select(vec!["x-ignore-a", "Content-Type", "KEY", "success_action_status", "bucket"]),
            ".{0,20}",
        )
            .prop_map(|(name, value)| FormEdit::Add { name: name.to_owned(), value }),
        1 => Just(FormEdit::Reverse),
    ]
}

fn apply_form_edit(form: &mut Vec<(String, String)>, edit: &FormEdit) {
    let len = form.len();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    match edit {
        FormEdit::Value { field, bytes } if len > 0 => form[field % len].1 = text(bytes),
        FormEdit::Name { field, bytes } if len > 0 => form[field % len].0 = text(bytes),
        FormEdit::Drop { field } if len > 0 => {
            form.remove(field % len);
        }
        FormEdit::Repeat { field } if len > 0 => form.push(form[field % len].clone()),
        FormEdit::Add { name, value } => form.push((name.clone(), value.clone())),
        FormEdit::Reverse => form.reverse(),
        _ => {}
    }
}

/// A refusal must be an S3 client error (4xx) with a message; an acceptance a valid key and a
/// size range within the server's cap.
fn check_verdict(
    result: Result<caption_store::AcceptedUpload, caption_store::S3Error>,
) -> Result<Verdict, String> {
    match result {
        Err(e) if (400..500).contains(&e.status()) && !e.message.is_empty() => {
            Ok(Verdict::Rejected)
        }
        Err(e) => Err(format!("refused with {e:?} (status {})", e.status())),
        Ok(accepted) if accepted.max_bytes <= MAX_UPLOAD_BYTES => {
            ObjectKey::parse(accepted.key.as_str())
                .map_err(|e| format!("accepted a key that does not parse: {e}"))?;
            Ok(Verdict::Accepted)
        }
        Ok(accepted) => Err(format!("accepted past the server's cap: {accepted:?}")),
    }
}

#[test]
fn upload_form_fields() {
    let strategy = (
        prop::collection::vec(form_edit(), 0..4),
        prop::option::of(".{0,40}"),
    );
    fuzz::run(
        "upload form fields",
        file!(),
        strategy,
        |(edits, file_name)| {
            let mut form = valid_form();
            for edit in &edits {
                apply_form_edit(&mut form, edit);
            }
            check_verdict(
                authority()
                    .post_verifier()
                    .verify(&form, file_name.as_deref(), NOW),
            )
        },
    );
}

/// A policy document as the store writes one, and one with every kind of condition.
fn policy_seeds() -> Vec<Value> {
    let pinned = json!([
        {"x-amz-algorithm": "AWS4-HMAC-SHA256"},
        {"x-amz-credential": "local/20261122/local/s3/aws4_request"},
        {"x-amz-date": "20261122T062503Z"},
    ]);
    let mut rich = vec![
        json!({"bucket": "local"}),
        json!(["starts-with", "$key", "uploads/u1/"]),
        json!(["content-length-range", 10, 20]),
        json!(["starts-with", "$Content-Type", "video/"]),
        json!(["eq", "$x-amz-meta-user", "u1"]),
    ];
    rich.extend(pinned.as_array().unwrap().iter().cloned());
    let policy = valid_form()
        .into_iter()
        .find(|(name, _)| name == "Policy")
        .map(|(_, p)| base64::engine::general_purpose::STANDARD.decode(p).unwrap())
        .unwrap();
    vec![
        serde_json::from_slice(&policy).unwrap(),
        json!({"expiration": "2026-11-22T07:00:00.000Z", "conditions": rich}),
    ]
}

/// The policy's names, for edits that add them.
fn policy_keys() -> Vec<String> {
    [
        "expiration",
        "conditions",
        "bucket",
        "key",
        "eq",
        "starts-with",
        "content-length-range",
        "$key",
        "x-amz-date",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Signed policies: a mutated document (or mutated bytes of one), base64 and signed with the
/// store's secret, in a form whose other fields keep the values the seed policies pin.
#[test]
fn upload_policy_documents() {
    let seeds = policy_seeds();
    let bytes: Vec<Vec<u8>> = seeds
        .iter()
        .map(|s| serde_json::to_vec(s).unwrap())
        .collect();
    let document = prop_oneof![
        mutated_json(seeds, policy_keys()).prop_map(|v| serde_json::to_vec(&v).unwrap()),
        mutated_bytes(bytes, &[b"\"$key\"", b"[\"eq\",", b"\"expiration\":"]),
    ];
    let strategy = (document, prop::option::of("[a-z.]{0,12}"));
    let secret = authority().post_credentials().secret_access_key;
    let signing = signing_key(&secret, "20261122", LOCAL_REGION);
    fuzz::run(
        "upload policy",
        file!(),
        strategy,
        |(document, file_name)| {
            let policy = base64::engine::general_purpose::STANDARD.encode(&document);
            let form: Vec<(String, String)> = [
                ("key", "uploads/u1/${filename}"),
                ("Content-Type", "video/mp4"),
                ("x-amz-meta-user", "u1"),
                ("Policy", policy.as_str()),
                ("X-Amz-Algorithm", ALGORITHM),
                ("X-Amz-Credential", "local/20261122/local/s3/aws4_request"),
                ("X-Amz-Date", "20261122T062503Z"),
                ("X-Amz-Signature", sign_policy(&signing, &policy).as_str()),
            ]
            .map(|(n, v)| (n.to_owned(), v.to_owned()))
            .to_vec();
            check_verdict(
                authority()
                    .post_verifier()
                    .verify(&form, file_name.as_deref(), NOW),
            )
        },
    );
}
