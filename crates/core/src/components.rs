//! The wire format's named schemas, derived from the types: an OpenAPI document's
//! `components.schemas`.

use schemars::SchemaGenerator;
use serde_json::{Map, Value};

use crate::config::{Config, Template, TemplateSummary};
use crate::jobs::{
    CreateJobResponse, GenerateRequest, GenerateResponse, JobStatus, TranscriptRequest,
    TranscriptResult, UploadDescriptor,
};
use crate::patch::ConfigPatch;
use crate::schema::schema_generator;
use crate::word::Word;

/// Every named schema of the wire format (`Word`, `Config`, `ConfigPatch`, `Template`, the job
/// and upload shapes, ...), keyed by name, as an OpenAPI document's `components.schemas`.
pub fn wire_schemas() -> Map<String, Value> {
    let mut generator = schema_generator();
    add_wire_schemas(&mut generator);
    generator.take_definitions(true)
}

/// Adds every wire type of this crate to `generator`'s definitions.
pub fn add_wire_schemas(generator: &mut SchemaGenerator) {
    generator.subschema_for::<Word>();
    generator.subschema_for::<Config>();
    generator.subschema_for::<ConfigPatch>();
    generator.subschema_for::<Template>();
    generator.subschema_for::<TemplateSummary>();
    generator.subschema_for::<TranscriptRequest>();
    generator.subschema_for::<TranscriptResult>();
    generator.subschema_for::<CreateJobResponse>();
    generator.subschema_for::<JobStatus>();
    generator.subschema_for::<GenerateRequest>();
    generator.subschema_for::<GenerateResponse>();
    generator.subschema_for::<UploadDescriptor>();
}
