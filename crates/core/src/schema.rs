//! Reading the JSON Schema derived from the wire types (`#[derive(JsonSchema)]`, with the
//! limits of [`crate::rules`] as attributes): where its `$ref`s point, and which fields a
//! complete value requires that a partial one lacks.

use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// Where an OpenAPI document keeps its named schemas; every `$ref` of `wire_schemas` points
/// here.
pub const COMPONENTS_PATH: &str = "/components/schemas/";

/// A schema generator whose `$ref`s point at [`COMPONENTS_PATH`] (JSON Schema 2020-12, the
/// dialect of OpenAPI 3.1). Callers add their own types with `subschema_for` and collect every
/// named schema with `take_definitions`.
pub fn schema_generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|settings| settings.definitions_path = COMPONENTS_PATH.into())
        .into_generator()
}

/// `schema` with a `$ref` followed and an optional (`anyOf` with `null`) unwrapped.
fn resolve<'s>(definitions: &'s Map<String, Value>, schema: &'s Value) -> &'s Value {
    if let Some(name) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|r| r.strip_prefix(COMPONENTS_PATH))
        && let Some(target) = definitions.get(name)
    {
        return resolve(definitions, target);
    }
    if let Some(options) = schema.get("anyOf").and_then(Value::as_array)
        && let Some(some) = options
            .iter()
            .find(|o| o.get("type") != Some(&"null".into()))
    {
        return resolve(definitions, some);
    }
    schema
}

/// A patch group (`colors`, `modes`, `sizes` of a [`ConfigPatch`]): an object none of whose
/// fields is required, whose fields are checked one by one.
fn is_group(schema: &Value) -> bool {
    schema.get("properties").is_some_and(Value::is_object)
        && schema
            .get("required")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
}

/// The paths (`colors.defaultColor`, `linesCount`, ...) of every field the schema `full`
/// requires that `value`, valid for the schema `partial`, lacks, in the schema's order. A
/// field of `partial` that is an object of optional fields (a patch group such as `colors`) is
/// checked field by field; any other is required whole.
pub(crate) fn missing_fields(
    definitions: &Map<String, Value>,
    full: &str,
    partial: &str,
    value: &Value,
) -> Vec<String> {
    let (Some(full), Some(partial)) = (definitions.get(full), definitions.get(partial)) else {
        return Vec::new();
    };
    let mut missing = Vec::new();
    walk_required(definitions, full, partial, Some(value), "", &mut missing);
    missing
}

fn walk_required(
    definitions: &Map<String, Value>,
    full: &Value,
    partial: &Value,
    value: Option<&Value>,
    prefix: &str,
    missing: &mut Vec<String>,
) {
    let names = full.get("required").and_then(Value::as_array);
    for name in names.into_iter().flatten().filter_map(Value::as_str) {
        let path = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}.{name}")
        };
        let child = value.and_then(|v| v.get(name)).filter(|v| !v.is_null());
        let partial_field = partial
            .pointer(&format!("/properties/{name}"))
            .map(|s| resolve(definitions, s));
        match partial_field {
            Some(group) if is_group(group) => {
                let full_field = full
                    .pointer(&format!("/properties/{name}"))
                    .map_or(&Value::Null, |s| resolve(definitions, s));
                walk_required(definitions, full_field, group, child, &path, missing);
            }
            _ if child.is_none() => missing.push(path),
            _ => {}
        }
    }
}
