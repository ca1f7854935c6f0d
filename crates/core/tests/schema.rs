//! The validator against the schema derived from the types: for every field of a generate
//! request's config and words that the schema bounds (range, length, enum), the validator
//! accepts the bounds and refuses what lies past them at that field's path, so the two read one
//! set of rules.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use caption_core::{
    COMPONENTS_PATH, Catalog, ConfigPatch, ValidationErrors, parse_config_patch, parse_words,
    wire_schemas,
};
use serde_json::{Map, Value, json};

fn resolve<'s>(definitions: &'s Map<String, Value>, schema: &'s Value) -> &'s Value {
    if let Some(name) = schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|r| r.strip_prefix(COMPONENTS_PATH))
    {
        return resolve(definitions, &definitions[name]);
    }
    if let Some(options) = schema["anyOf"].as_array() {
        let some = options.iter().find(|o| o["type"] != "null").unwrap();
        return resolve(definitions, some);
    }
    schema
}

/// Every scalar field under `schema` as (JSON pointer, validator path, its schema).
fn leaves<'s>(
    definitions: &'s Map<String, Value>,
    schema: &'s Value,
    pointer: &str,
    path: &str,
    out: &mut Vec<(String, String, &'s Value)>,
) {
    let schema = resolve(definitions, schema);
    if let Some(properties) = schema["properties"].as_object() {
        for (name, field) in properties {
            let field_path = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            leaves(
                definitions,
                field,
                &format!("{pointer}/{name}"),
                &field_path,
                out,
            );
        }
    } else if schema.get("items").is_some() && schema["items"].get("type") != Some(&json!("string"))
    {
        leaves(
            definitions,
            &schema["items"],
            &format!("{pointer}/0"),
            &format!("{path}[0]"),
            out,
        );
    } else {
        out.push((pointer.to_owned(), path.to_owned(), schema));
    }
}

/// A full valid config with one color in every role, so every channel has a place.
fn valid_config() -> Value {
    let catalog = Catalog::builtin().unwrap();
    let mut config = serde_json::to_value(&catalog.templates()[0].config).unwrap();
    for role in config["colors"].as_object_mut().unwrap().values_mut() {
        role["colors"] = json!([{"r": 10, "g": 20, "b": 30, "a": 255}]);
    }
    config["speakerColors"] = json!([{"r": 10, "g": 20, "b": 30, "a": 255}]);
    config["cutPausesS"] = json!(0.4);
    config
}

fn with(base: &Value, pointer: &str, value: Value) -> Value {
    let mut out = base.clone();
    *out.pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{pointer} not in {base}")) = value;
    out
}

/// The problems `check` finds with `value` at `pointer`, as (path, rule).
fn problems(
    check: &dyn Fn(&Value) -> Result<(), ValidationErrors>,
    base: &Value,
    pointer: &str,
    value: Value,
) -> Vec<(String, String)> {
    match check(&with(base, pointer, value)) {
        Ok(()) => Vec::new(),
        Err(errors) => errors
            .iter()
            .map(|e| (e.path.clone(), e.rule.clone()))
            .collect(),
    }
}

/// Every bounded leaf of `root` checked at and past its bounds.
fn check_bounds(
    root: &str,
    base: &Value,
    prefix: &str,
    check: &dyn Fn(&Value) -> Result<(), ValidationErrors>,
) -> usize {
    let definitions = wire_schemas();
    let mut fields = Vec::new();
    leaves(&definitions, &definitions[root], "", prefix, &mut fields);
    let mut checked = 0;
    for (pointer, path, schema) in fields {
        let refused = |value: Value| {
            let found = problems(check, base, &pointer, value.clone());
            assert!(
                found.iter().any(|(p, _)| *p == path),
                "{path} = {value} passed the validator; its schema is {schema}"
            );
            found
        };
        let accepted = |value: Value| {
            let found = problems(check, base, &pointer, value.clone());
            assert!(
                found.is_empty(),
                "{path} = {value} refused ({found:?}); its schema is {schema}"
            );
        };
        if let (Some(min), Some(max)) = (schema.get("minimum"), schema.get("maximum")) {
            accepted(min.clone());
            accepted(max.clone());
            let (min, max) = (min.as_f64().unwrap(), max.as_f64().unwrap());
            refused(json!(min - 1.0));
            let found = refused(json!(max + 1.0));
            let rule = &found.iter().find(|(p, _)| *p == path).unwrap().1;
            assert!(
                rule.contains(&format!("from {min} to {max}")),
                "{path}: the rule {rule:?} does not name the schema's range {min}..{max}"
            );
            checked += 1;
        }
        if let Some(allowed) = schema["enum"].as_array() {
            for value in allowed {
                accepted(value.clone());
            }
            let found = refused(json!("NOT_A_VALUE"));
            let names: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
            assert!(
                found.iter().any(|(p, rule)| *p == path
                    && *rule == format!("must be one of {}", names.join(", "))),
                "{path}: {found:?} does not list the schema's values {names:?}"
            );
            checked += 1;
        }
        if let Some(max) = schema["maxLength"].as_u64() {
            let max = usize::try_from(max).unwrap();
            accepted(json!("a".repeat(max)));
            refused(json!("a".repeat(max + 1)));
            if schema["minLength"] == 1 {
                refused(json!(""));
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_validator_keeps_every_bound_of_the_config_schema() {
    let check = |value: &Value| parse_config_patch(value, "config").map(|_| ());
    let checked = check_bounds("ConfigPatch", &valid_config(), "config", &check);
    // 5 sizes, 2 counts, fontWeight, maxWidth, x and y, cutPausesS, 4 channels of 6 roles and of
    // a speaker colour; 8 enums; font.
    assert_eq!(checked, 5 + 2 + 1 + 1 + 2 + 1 + 4 * 7 + 8 + 1);
}

#[test]
fn the_validator_keeps_every_bound_of_the_word_schema() {
    let word = json!([{"start": 1.0, "end": 2.0, "word": "a", "punctuated_word": "a", "emoji": "x", "speaker": "Ana", "confidence": 0.5}]);
    let check = |value: &Value| parse_words(value, "words").map(|_| ());
    let definitions = wire_schemas();
    let mut fields = Vec::new();
    leaves(
        &definitions,
        &definitions["Word"],
        "/0",
        "words[0]",
        &mut fields,
    );
    // start and end are compared with each other as well: move the other one out of the way.
    let mut checked = 0;
    for (pointer, path, schema) in fields {
        if let (Some(min), Some(max)) = (schema.get("minimum"), schema.get("maximum")) {
            for (value, ok) in [
                (min.clone(), true),
                (max.clone(), true),
                (json!(min.as_f64().unwrap() - 1.0), false),
                (json!(max.as_f64().unwrap() + 1.0), false),
            ] {
                let mut words = with(&word, &pointer, value.clone());
                let other = if path.ends_with("start") {
                    "/0/end"
                } else {
                    "/0/start"
                };
                *words.pointer_mut(other).unwrap() = value.clone();
                let result = check(&words);
                assert_eq!(result.is_ok(), ok, "{path} = {value}: {result:?}");
            }
            checked += 1;
        }
        if let Some(max) = schema["maxLength"].as_u64() {
            let max = usize::try_from(max).unwrap();
            assert!(check(&with(&word, &pointer, json!("a".repeat(max)))).is_ok());
            let errors = check(&with(&word, &pointer, json!("a".repeat(max + 1)))).unwrap_err();
            assert_eq!(errors.iter().next().unwrap().path, path);
            checked += 1;
        }
    }
    // start, end and confidence; word, punctuated_word, emoji and speaker.
    assert_eq!(checked, 3 + 4);
}

#[test]
fn a_complete_config_requires_what_the_config_schema_requires() {
    let definitions = wire_schemas();
    let config = &definitions["Config"];
    let mut required: Vec<&str> = config["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    required.sort_unstable();
    // The template shape of the interface: every field but the extensions, which have defaults.
    let extensions = [
        "cutFillers",
        "cutPausesS",
        "emphasis",
        "fontWeight",
        "maxWidth",
        "position",
        "speakerColors",
    ];
    let mut shape: Vec<&str> = config["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|name| !extensions.contains(name))
        .collect();
    shape.sort_unstable();
    assert_eq!(required, shape);
    assert_eq!(required.len(), 12);
    let errors = ConfigPatch::default().into_complete("config").unwrap_err();
    let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths.len(), 6 + 6 + 5 + 9, "{paths:?}");
    assert_eq!(paths[0], "config.colors.defaultColor");
    assert_eq!(paths[12], "config.sizes.fontSize");
    assert_eq!(paths[25], "config.font");
    // A full config needs nothing more.
    let full: ConfigPatch = serde_json::from_value(valid_config()).unwrap();
    assert!(full.into_complete("config").is_ok());
}
