//! A property-test harness for the parsers: arbitrary and mutated input, a tally of what each
//! parser did with it, and a panic counted as a failure.
//!
//! [`run`] draws `cases()` inputs from a proptest strategy (`CAPTIONS_FUZZ_CASES`, default a few
//! thousand), hands each to a check that says whether the parser accepted or rejected it, and
//! prints one line per parser: `fuzz <name>: cases=… rejected=… accepted=… panics=… wall_s=…`.
//! `scripts/fuzz` runs the same tests in release mode with 100,000 cases each and collects
//! those lines. A failing case is shrunk and its seed saved beside the test file
//! (`<test>.proptest-regressions`), where proptest replays it on the next run.
//!
//! The strategies mutate real, valid inputs the way a careless client or an attacker would:
//! [`mutated_bytes`] flips, inserts, deletes and duplicates bytes and splices in hostile
//! tokens (`NaN`, `1e999`, invalid UTF-8, deep brackets); [`mutated_json`] replaces, removes
//! and adds fields, swaps their types, nests them deeply and puts extreme numbers and huge
//! strings in them.
//!
//! ```
//! use caption_testkit::fuzz::{self, Verdict};
//!
//! fuzz::run_cases("digits", file!(), 64, fuzz::mutated_bytes(vec![b"12".to_vec()], &[]), |bytes| {
//!     Ok(match std::str::from_utf8(&bytes).ok().and_then(|s| s.parse::<u32>().ok()) {
//!         Some(_) => Verdict::Accepted,
//!         None => Verdict::Rejected,
//!     })
//! });
//! ```

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use serde_json::{Map, Number, Value};

/// The variable that sets how many cases each parser gets.
pub const CASES_VARIABLE: &str = "CAPTIONS_FUZZ_CASES";

/// Cases per parser when [`CASES_VARIABLE`] is not set: enough to find the common mistakes,
/// few enough that every parser's run in the test suite takes seconds.
pub const DEFAULT_CASES: u32 = 2000;

/// What a parser did with one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The input was taken (and the check found the result within the rules).
    Accepted,
    /// The input was refused with an error the check found well-formed.
    Rejected,
}

/// Cases per parser: [`CASES_VARIABLE`] when set to a number, else [`DEFAULT_CASES`].
pub fn cases() -> u32 {
    std::env::var(CASES_VARIABLE)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

/// Runs [`cases()`] inputs of `strategy` through `check`; see [`run_cases`].
pub fn run<S: Strategy>(
    name: &str,
    source_file: &'static str,
    strategy: S,
    check: impl Fn(S::Value) -> Result<Verdict, String>,
) {
    run_cases(name, source_file, cases(), strategy, check);
}

/// Runs `cases` inputs of `strategy` through `check`, which returns whether the parser
/// accepted or rejected the input, or why its answer breaks a property. Prints the tally line;
/// panics (failing the test) on the first broken property or panic, after shrinking the input
/// and saving its seed beside `source_file` (pass `file!()`).
pub fn run_cases<S: Strategy>(
    name: &str,
    source_file: &'static str,
    cases: u32,
    strategy: S,
    check: impl Fn(S::Value) -> Result<Verdict, String>,
) {
    let config = Config {
        cases,
        source_file: Some(source_file),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        // A big mutated input shrinks slowly; a few hundred steps find the gist.
        max_shrink_iters: 512,
        ..Config::default()
    };
    let (accepted, rejected, panics) = (Cell::new(0_u64), Cell::new(0_u64), Cell::new(0_u64));
    let started = Instant::now();
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |input| {
        match catch_unwind(AssertUnwindSafe(|| check(input))) {
            Ok(Ok(Verdict::Accepted)) => accepted.set(accepted.get() + 1),
            Ok(Ok(Verdict::Rejected)) => rejected.set(rejected.get() + 1),
            Ok(Err(why)) => return Err(TestCaseError::fail(why)),
            Err(panic) => {
                panics.set(panics.get() + 1);
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                return Err(TestCaseError::fail(format!("panicked: {message}")));
            }
        }
        Ok(())
    });
    let (accepted, rejected) = (accepted.get(), rejected.get());
    eprintln!(
        "fuzz {name}: cases={} rejected={rejected} accepted={accepted} panics={} wall_s={:.2}",
        accepted + rejected,
        panics.get(),
        started.elapsed().as_secs_f64(),
    );
    if let Err(failure) = result {
        panic!("fuzz {name}: {failure}");
    }
}

/// Tokens that break parsers: non-finite and out-of-range numbers, odd escapes, invalid UTF-8,
/// brackets that open deep nesting, separators of the subtitle and form formats.
const HOSTILE_TOKENS: &[&[u8]] = &[
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"\"NaN\"",
    b"\"inf\"",
    b"1e999",
    b"-1e999",
    b"-0",
    b"0.0000000000000000000000000001",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"9007199254740993",
    b"null",
    b"true",
    b"[]",
    b"{}",
    b"\"\"",
    b"\\u0000",
    b"\\ud800",
    b"\\",
    b"\"",
    b"\xff\xfe",
    b"\xc3\x28",
    b"\xf0\x9f\x98",
    b"\xe2\x80\xae",
    b"\0",
    b"\r\n",
    b"\n\n",
    b"-->",
    b" --> ",
    b"00:00:00,000",
    b"99:99:99.999",
    b"0:00:00.00",
    b"Dialogue:",
    b"[Events]",
    b"{\\k",
    b"<b>",
    b"&amp;",
    b"%",
    b"%2e%2e",
    b"/../",
    b"${filename}",
    b"bytes=",
    b",",
    b":",
    b"=",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    b"{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":",
];

/// One edit of a byte string; positions are fractions of the length, so an edit lands
/// somewhere in whatever the earlier edits left.
#[derive(Debug, Clone)]
enum ByteEdit {
    FlipBit { at: u32, bit: u8 },
    Set { at: u32, byte: u8 },
    Insert { at: u32, bytes: Vec<u8> },
    Token { at: u32, token: usize },
    Delete { at: u32, len: u16 },
    Duplicate { at: u32, len: u16, times: u8 },
    Truncate { at: u32 },
}

fn position(at: u32, len: usize) -> usize {
    // `at` is a fraction of u32::MAX; the product fits u64.
    ((u64::from(at) * len as u64) / u64::from(u32::MAX)) as usize
}

fn apply_byte_edit(bytes: &mut Vec<u8>, edit: &ByteEdit, extra_tokens: &[&[u8]]) {
    let len = bytes.len();
    match edit {
        ByteEdit::FlipBit { at, bit } => {
            if len > 0 {
                let i = position(*at, len - 1);
                bytes[i] ^= 1 << (bit % 8);
            }
        }
        ByteEdit::Set { at, byte } => {
            if len > 0 {
                let i = position(*at, len - 1);
                bytes[i] = *byte;
            }
        }
        ByteEdit::Insert { at, bytes: new } => {
            let i = position(*at, len);
            bytes.splice(i..i, new.iter().copied());
        }
        ByteEdit::Token { at, token } => {
            let i = position(*at, len);
            let all = HOSTILE_TOKENS.len() + extra_tokens.len();
            let index = token % all.max(1);
            let token = HOSTILE_TOKENS
                .get(index)
                .or_else(|| extra_tokens.get(index - HOSTILE_TOKENS.len()))
                .copied()
                .unwrap_or_default();
            bytes.splice(i..i, token.iter().copied());
        }
        ByteEdit::Delete { at, len: n } => {
            let i = position(*at, len);
            let end = (i + usize::from(*n)).min(len);
            bytes.drain(i..end);
        }
        ByteEdit::Duplicate { at, len: n, times } => {
            let i = position(*at, len);
            let end = (i + usize::from(*n)).min(len);
            let piece = bytes[i..end].to_vec();
            for _ in 0..*times {
                bytes.splice(end..end, piece.iter().copied());
            }
        }
        ByteEdit::Truncate { at } => {
            let i = position(*at, len);
            bytes.truncate(i);
        }
    }
}

fn byte_edit() -> impl Strategy<Value = ByteEdit> {
    prop_oneof![
        3 => (any::<u32>(), any::<u8>()).prop_map(|(at, bit)| ByteEdit::FlipBit { at, bit }),
        2 => (any::<u32>(), any::<u8>()).prop_map(|(at, byte)| ByteEdit::Set { at, byte }),
        2 => (any::<u32>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| ByteEdit::Insert { at, bytes }),
        4 => (any::<u32>(), any::<usize>()).prop_map(|(at, token)| ByteEdit::Token { at, token }),
        2 => (any::<u32>(), 1_u16..64).prop_map(|(at, len)| ByteEdit::Delete { at, len }),
        1 => (any::<u32>(), 1_u16..64, 1_u8..40)
            .prop_map(|(at, len, times)| ByteEdit::Duplicate { at, len, times }),
        1 => any::<u32>().prop_map(|at| ByteEdit::Truncate { at }),
    ]
}

/// One of `seeds` with one to eight byte edits, or (one case in ten) arbitrary bytes.
/// `extra_tokens` are spliced in besides the common hostile ones (field names, separators of
/// the format at hand).
pub fn mutated_bytes(
    seeds: Vec<Vec<u8>>,
    extra_tokens: &'static [&'static [u8]],
) -> impl Strategy<Value = Vec<u8>> {
    let mutated = (
        prop::sample::select(seeds),
        prop::collection::vec(byte_edit(), 1..8),
    )
        .prop_map(move |(mut bytes, edits)| {
            for edit in &edits {
                apply_byte_edit(&mut bytes, edit, extra_tokens);
            }
            bytes
        });
    prop_oneof![
        9 => mutated,
        1 => prop::collection::vec(any::<u8>(), 0..512),
    ]
}

/// Numbers at and past the edges: zero of both signs, the largest and smallest floats,
/// integers past `u64` and `i64`, halves that round either way.
fn extreme_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            0.0,
            -0.0,
            -1.0,
            0.5,
            254.5,
            255.5,
            256.0,
            1e-300,
            5e-324,
            f64::MAX,
            f64::MIN,
            f64::EPSILON,
            9_007_199_254_740_993.0,
            86_400.000_001,
            1e15,
        ])
        .prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        any::<i64>().prop_map(|i| Value::Number(i.into())),
        any::<u64>().prop_map(|u| Value::Number(u.into())),
        (0_i64..2000).prop_map(|i| Value::Number(i.into())),
    ]
}

/// Strings that look like numbers but are not, control and direction characters, emoji,
/// combining marks, and strings of up to 20,000 characters (20 times the longest the wire
/// format allows).
fn hostile_string() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            " ",
            "NaN",
            "Infinity",
            "-inf",
            "1e999",
            "0x10",
            "12",
            "true",
            "null",
            "\u{0}",
            "\u{202e}evil",
            "\u{feff}",
            "e\u{301}\u{301}\u{301}",
            "😀👩‍👩‍👧‍👦",
            "../../etc/passwd",
            "uploads/../x",
            "${filename}",
            "auto",
            "en",
            "ALL",
            "WORD",
        ])
        .prop_map(|s| Value::String(s.to_owned())),
        (
            prop::sample::select(vec!["a", "é", "😀", "\u{301}", "\\", "\""]),
            1_usize..20_000
        )
            .prop_map(|(s, n)| Value::String(s.repeat(n))),
        any::<String>().prop_map(Value::String),
    ]
}

/// Any JSON value: scalars of every kind (extreme numbers and hostile strings included),
/// arrays and objects a few levels deep, keys from `keys` or random.
pub fn arbitrary_json(keys: Vec<String>) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        extreme_number(),
        hostile_string(),
    ];
    leaf.prop_recursive(4, 48, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((key(keys.clone()), inner), 0..8)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// A field name: mostly one of `keys`, now and then any string.
fn key(keys: Vec<String>) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(keys),
        1 => any::<String>(),
    ]
}

/// Every property name a JSON Schema (or an OpenAPI document) declares, sorted, once each:
/// the field names the edits of [`mutated_json`] add.
pub fn schema_field_names(schema: &Value) -> Vec<String> {
    fn walk(value: &Value, out: &mut std::collections::BTreeSet<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get("properties") {
                    out.extend(properties.keys().cloned());
                }
                map.values().for_each(|v| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut names = std::collections::BTreeSet::new();
    walk(schema, &mut names);
    names.into_iter().collect()
}

/// One edit of a JSON document, at the node a fraction of the way through its nodes.
#[derive(Debug, Clone)]
enum JsonEdit {
    Replace { at: u32, with: Value },
    Remove { at: u32 },
    Add { at: u32, key: String, with: Value },
    WrapInArray { at: u32 },
    Nest { at: u32, depth: u16 },
    Repeat { at: u32, times: u16 },
}

/// The JSON pointers of every node of `value`, in document order (the root is `""`).
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pointers(item, format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                pointers(item, format!("{at}/{escaped}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

fn apply_json_edit(document: &mut Value, edit: &JsonEdit) {
    let mut all = Vec::new();
    pointers(document, String::new(), &mut all);
    let pick = |at: u32| all[position(at, all.len() - 1)].clone();
    match edit {
        JsonEdit::Replace { at, with } => {
            if let Some(node) = document.pointer_mut(&pick(*at)) {
                *node = with.clone();
            }
        }
        JsonEdit::Remove { at } => {
            let pointer = pick(*at);
            let Some((parent, last)) = pointer.rsplit_once('/') else {
                return;
            };
            let last = last.replace("~1", "/").replace("~0", "~");
            match document.pointer_mut(parent) {
                Some(Value::Object(map)) => {
                    map.remove(&last);
                }
                Some(Value::Array(items)) => {
                    if let Ok(i) = last.parse::<usize>()
                        && i < items.len()
                    {
                        items.remove(i);
                    }
                }
                _ => {}
            }
        }
        JsonEdit::Add { at, key, with } => match document.pointer_mut(&pick(*at)) {
            Some(Value::Object(map)) => {
                map.insert(key.clone(), with.clone());
            }
            Some(Value::Array(items)) => items.push(with.clone()),
            _ => {}
        },
        JsonEdit::WrapInArray { at } => {
            if let Some(node) = document.pointer_mut(&pick(*at)) {
                *node = Value::Array(vec![node.take()]);
            }
        }
        JsonEdit::Nest { at, depth } => {
            if let Some(node) = document.pointer_mut(&pick(*at)) {
                let mut nested = node.take();
                for i in 0..*depth {
                    nested = if i % 2 == 0 {
                        Value::Array(vec![nested])
                    } else {
                        let mut map = Map::new();
                        map.insert("a".to_owned(), nested);
                        Value::Object(map)
                    };
                }
                *node = nested;
            }
        }
        JsonEdit::Repeat { at, times } => {
            if let Some(Value::Array(items)) = document.pointer_mut(&pick(*at))
                && let Some(first) = items.first().cloned()
            {
                items.extend(std::iter::repeat_n(first, usize::from(*times)));
            }
        }
    }
}

fn json_edit(keys: Vec<String>) -> impl Strategy<Value = JsonEdit> {
    prop_oneof![
        6 => (any::<u32>(), arbitrary_json(keys.clone()))
            .prop_map(|(at, with)| JsonEdit::Replace { at, with }),
        2 => any::<u32>().prop_map(|at| JsonEdit::Remove { at }),
        3 => (any::<u32>(), key(keys.clone()), arbitrary_json(keys))
            .prop_map(|(at, key, with)| JsonEdit::Add { at, key, with }),
        1 => any::<u32>().prop_map(|at| JsonEdit::WrapInArray { at }),
        1 => (any::<u32>(), 1_u16..200).prop_map(|(at, depth)| JsonEdit::Nest { at, depth }),
        1 => (any::<u32>(), 1_u16..300).prop_map(|(at, times)| JsonEdit::Repeat { at, times }),
    ]
}

/// One of `seeds` with one to six structural edits: a node replaced by any value (another
/// type, an extreme number, a huge or hostile string), removed, given a field named from
/// `keys` (see [`schema_field_names`]), wrapped in an array, nested up to 200 levels, or (an array) its first item repeated.
pub fn mutated_json(seeds: Vec<Value>, keys: Vec<String>) -> impl Strategy<Value = Value> {
    (
        prop::sample::select(seeds),
        prop::collection::vec(json_edit(keys), 1..6),
    )
        .prop_map(|(mut document, edits)| {
            for edit in &edits {
                apply_json_edit(&mut document, edit);
            }
            document
        })
}

/// Whether a problem's field path (`config.sizes.fontSize`, `words[3].end`, `body` for the
/// document itself) names a field of `document`: every step exists, except that the last may
/// be a field missing from an object (a required field).
pub fn path_names_field(document: &Value, path: &str) -> bool {
    if path == "body" {
        return true;
    }
    resolves(document, path)
}

fn resolves(value: &Value, rest: &str) -> bool {
    if rest.is_empty() {
        return true;
    }
    match value {
        Value::Object(map) => {
            let field_ends = |key: &str| {
                rest.strip_prefix(key)
                    .filter(|after| after.is_empty() || after.starts_with(['.', '[']))
            };
            let found = map.iter().any(|(key, child)| {
                field_ends(key).is_some_and(|after| resolves(child, after.trim_start_matches('.')))
            });
            // A missing field: the last step, a plain name.
            found || !rest.contains(['.', '['])
        }
        Value::Array(items) => {
            let Some(inside) = rest.strip_prefix('[') else {
                return false;
            };
            let Some((index, after)) = inside.split_once(']') else {
                return false;
            };
            index
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i))
                .is_some_and(|item| resolves(item, after.trim_start_matches('.')))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_resolve_to_fields_or_missing_leaves() {
        let doc = json!({"config": {"sizes": {"fontSize": 1}}, "words": [{"end": 1}], "a.b": 1});
        assert!(path_names_field(&doc, "config.sizes.fontSize"));
        assert!(path_names_field(&doc, "config.sizes.strokeSize"));
        assert!(path_names_field(&doc, "words[0].end"));
        assert!(path_names_field(&doc, "words[0].start"));
        assert!(path_names_field(&doc, "a.b"));
        assert!(path_names_field(&doc, "input"));
        assert!(!path_names_field(&doc, "words[1].end"));
        assert!(!path_names_field(&doc, "config.colors.defaultColor"));
        assert!(!path_names_field(&doc, "config.sizes.fontSize.x"));
    }

    #[test]
    fn edits_land_inside_any_document() {
        let mut doc = json!({"a": [1, 2, {"b": "c"}]});
        for at in [0, u32::MAX / 2, u32::MAX] {
            apply_json_edit(&mut doc, &JsonEdit::Remove { at });
            apply_json_edit(&mut doc, &JsonEdit::Nest { at, depth: 3 });
        }
        let mut bytes = b"abc".to_vec();
        apply_byte_edit(
            &mut bytes,
            &ByteEdit::Delete {
                at: u32::MAX,
                len: 9,
            },
            &[],
        );
        apply_byte_edit(&mut bytes, &ByteEdit::Token { at: 0, token: 1 }, &[]);
        assert!(bytes.starts_with(b"Infinity"));
    }
}
