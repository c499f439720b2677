//! The OpenAPI 3.1 document of the API, derived from the code so it cannot drift.
//!
//! Each handler carries its own `#[utoipa::path]`: its route, its success response and
//! the errors only it answers. Every body's schema is derived from its `lens-types` type
//! (`ToSchema`, behind that crate's `openapi` feature, so the browser's build stays
//! serde-only). `router.rs` registers the routes from those same annotations
//! (utoipa-axum), so a route cannot be served undocumented or documented unserved.
//!
//! What every route of a kind can answer is added here from the operation itself, so no
//! handler can forget it: 401 behind a login, 403 on an admin route or an unsafe cookie
//! request without its CSRF proof, 400/413/415 for a JSON body, 404 (and 400) for an id in
//! the path, 500 anywhere. Every error is the one JSON envelope.

use serde_json::{Map, Value, json};
use utoipa::{
    Modify, OpenApi,
    openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme},
};

/// The scope an admin-only route lists in its `security`; it answers 403 to anyone else.
const ADMIN: &str = "admin";

/// The document's frame: its title, the security schemes and the shared schemas.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Lens API",
        description = "Agents send `Authorization: Bearer <token>` (a token from `POST /api/v1/tokens`). \
            A browser's cookie session sends `X-CSRF-Token` (from `GET /api/v1/me`) with every unsafe request. \
            Every error is `{\"error\": {\"code\", \"message\"}}`; `code` is one of `ErrorCode`."
    ),
    components(schemas(lens_types::ErrorBody, lens_types::ErrorCode)),
    modifiers(&SecuritySchemes)
)]
pub struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                crate::auth::SESSION_COOKIE,
                "The browser's session (set by login or setup); unsafe requests also need X-CSRF-Token.",
            ))),
        );
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API token (`lens_…`) for agents."))
                    .build(),
            ),
        );
    }
}

fn error(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    })
}

/// Adds to each operation the errors every route of its kind can answer.
pub fn complete(mut doc: Value) -> Value {
    inline_primitives(&mut doc);
    sandbox_number_ranges(&mut doc);
    sandbox_list_items(&mut doc);
    let kinds = event_kinds(&doc);
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return doc;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else { continue };
        for (method, op) in item.iter_mut() {
            complete_operation(path, method, op);
            describe_event_stream(op, &kinds);
        }
    }
    doc
}

/// The sandbox numbers' ranges, from their one declaration (`lens_types::SandboxNumber`),
/// on the change request's fields.
fn sandbox_number_ranges(doc: &mut Value) {
    let Some(fields) =
        doc.pointer_mut("/components/schemas/UpdateSandboxSettingsRequest/properties").and_then(Value::as_object_mut)
    else {
        return;
    };
    for number in lens_types::SandboxNumber::ALL {
        let spec = number.spec();
        if let Some(field) = fields.get_mut(spec.name).and_then(Value::as_object_mut) {
            field.insert("minimum".into(), spec.min.into());
            field.insert("maximum".into(), spec.max.into());
            field.insert("description".into(), format!("{}, {}", spec.label, spec.unit).into());
        }
    }
}

/// What the sandbox settings' lists take, item by item, as the server checks them
/// (`sandbox_settings::clean_hosts`, `clean_ranges`): host names (an empty item is
/// skipped), and IPv4 CIDR ranges (IPv6 ones are taken too; a pattern for them would be
/// longer than it is worth).
fn sandbox_list_items(doc: &mut Value) {
    let Some(fields) =
        doc.pointer_mut("/components/schemas/UpdateSandboxSettingsRequest/properties").and_then(Value::as_object_mut)
    else {
        return;
    };
    for (name, most, pattern) in [
        (
            "hosts",
            200,
            r"^[ \t\r\n]*(([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.*)?[ \t\r\n]*$",
        ),
        (
            "trusted_egress",
            100,
            r"^[ \t\r\n]*((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}/(3[0-2]|[12][0-9]|[0-9]))?[ \t\r\n]*$",
        ),
    ] {
        let Some(field) = fields.get_mut(name) else { continue };
        // `Option<Vec<String>>` is `type: [array, null]`: items and their count sit on the field.
        let item = json!({"type": "string", "maxLength": 253, "pattern": pattern});
        field["items"] = item;
        field["maxItems"] = most.into();
    }
}

/// utoipa names a type alias of a primitive (`UnixMillis = i64`) by the primitive and
/// refers to it as a component (`#/components/schemas/i64`); such a schema is put back
/// in place of each reference, and the component goes.
fn inline_primitives(doc: &mut Value) {
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else {
        return;
    };
    let primitives: Map<String, Value> = schemas
        .iter()
        .filter(|(name, _)| name.starts_with(char::is_lowercase))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    schemas.retain(|name, _| !primitives.contains_key(name));
    fn walk(value: &mut Value, primitives: &Map<String, Value>) {
        match value {
            Value::Object(map) => {
                let target =
                    map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"));
                if let Some(schema) = target.and_then(|name| primitives.get(name)) {
                    *value = schema.clone();
                    return;
                }
                map.values_mut().for_each(|v| walk(v, primitives));
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, primitives)),
            _ => {}
        }
    }
    walk(doc, &primitives);
}

/// The kinds of `StreamEvent` (its variants' names): the SSE `event:` line of each.
fn event_kinds(doc: &Value) -> Vec<Value> {
    doc.pointer("/components/schemas/StreamEvent/oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|variant| variant["required"].get(0).cloned())
        .collect()
}

/// An event stream's schema describes one event, as OpenAPI 3.1 tools read it: its
/// `id`, `retry`, `event` (the kind) and `data`, which is JSON of the type the handler
/// named (`contentSchema`).
fn describe_event_stream(op: &mut Value, kinds: &[Value]) {
    let Some(responses) = op["responses"].as_object_mut() else { return };
    for response in responses.values_mut() {
        let Some(media) = response.pointer_mut("/content/text~1event-stream") else { continue };
        let payload = media["schema"].take();
        media["schema"] = json!({
            "type": "object",
            "required": ["data"],
            "properties": {
                "id": {"type": "string", "description": "Send it back as Last-Event-ID to resume after this event"},
                "retry": {"type": "integer", "description": "Milliseconds to wait before reconnecting"},
                "event": {"type": "string", "enum": kinds},
                "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": payload},
            },
        });
    }
}

fn complete_operation(path: &str, method: &str, op: &mut Value) {
    let secured = op["security"].as_array().is_some_and(|s| !s.is_empty());
    let admin = op["security"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .flat_map(|req| req.values())
        .filter_map(Value::as_array)
        .flatten()
        .any(|scope| scope == ADMIN);
    let json_body = op["requestBody"]["content"].get("application/json").is_some();
    let any_body = op.get("requestBody").is_some();
    let in_path = path.contains('{');
    let unsafe_method = !matches!(method, "get" | "head" | "options");
    let mut add = Map::new();
    if json_body {
        add.insert("400".into(), error("The body is malformed JSON, lacks a field, or a value is out of range"));
        add.insert("415".into(), error("The body is not sent as `application/json`"));
    }
    if any_body {
        add.insert("413".into(), error("The body is larger than the server takes"));
    }
    if in_path {
        add.insert("400".into(), error("A parameter is malformed, or the body is not valid"));
        add.insert("404".into(), error("No such thing, or it is another person's"));
    }
    if secured {
        add.insert("401".into(), error("No valid session or API token"));
    }
    if admin {
        add.insert("403".into(), error("Only the admin may do this (or a cookie request lacks X-CSRF-Token)"));
    } else if secured && unsafe_method {
        add.insert("403".into(), error("A cookie request lacks X-CSRF-Token"));
    }
    add.insert("500".into(), error("Something failed inside the server; the log says what"));
    if admin {
        let text = op["description"].as_str().unwrap_or_default();
        op["description"] =
            json!(if text.is_empty() { "Admin only.".to_owned() } else { format!("{text}\n\nAdmin only.") });
    }
    let responses = op["responses"].as_object_mut();
    if let Some(responses) = responses {
        for (status, response) in add {
            // A status the handler documents itself keeps its own words.
            responses.entry(status).or_insert(response);
        }
    }
}
