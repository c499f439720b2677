//! The OpenAPI document is the contract: every documented route is served, its bodies
//! are the `lens-types` schemas field by field, and the errors it answers are listed.
//! (`scripts/api-contract` runs schemathesis against a release server for the rest.)

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::test_app::TestApp;

fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            ops.push((method.clone(), path.clone(), op.clone()));
        }
    }
    ops
}

#[tokio::test]
async fn every_documented_route_is_served() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let doc = admin.get("/api/v1/openapi.json").await.1;
    assert_eq!(doc["openapi"], "3.1.0");
    let ops = operations(&doc);
    assert!(ops.len() >= 40, "{} operations", ops.len());
    for (method, path, _) in ops {
        let path = path
            .replace("{cid}", "nochat")
            .replace("{aid}", "noanswer")
            .replace("{fid}", "nofile")
            .replace("{id}", "0");
        let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let req = admin.request(method.clone(), &path).header("content-type", "application/json").body("{}");
        let (status, body) = admin.send(req).await;
        // Handlers may refuse these ids or this body, but the router must know the route.
        assert_ne!(body["error"]["message"], "there is no API route at this path", "{method} {path}");
        assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert_ne!(body["error"]["message"], "this route does not take that method", "{method} {path}");
    }
}

#[tokio::test]
async fn bodies_are_their_types_field_by_field() {
    let app = TestApp::new().await;
    let doc = app.anonymous().get("/api/v1/openapi.json").await.1;
    let schemas = &doc["components"]["schemas"];
    let ok = |path: &str, method: &str, status: &str| {
        doc["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"].clone()
    };
    // The list routes answer arrays (the old document called the namespaces an object).
    let namespaces = ok("/api/v1/library/namespaces", "get", "200");
    assert_eq!(namespaces["type"], "array", "{namespaces}");
    assert_eq!(namespaces["items"]["$ref"], "#/components/schemas/NamespaceView");
    // Field by field, with what is required.
    let view = &schemas["NamespaceView"];
    assert_eq!(view["properties"]["documents"]["type"], "integer");
    let mut required: Vec<_> = view["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    required.sort_unstable();
    assert_eq!(required, ["created_at", "documents", "id", "name"]);
    // Enums spelled out, as the server writes them.
    let codes: Vec<_> = schemas["ErrorCode"]["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(codes.contains(&"disk_full") && codes.contains(&"csrf_failed"), "{codes:?}");
    let network = &schemas["NetworkMode"]["enum"];
    assert_eq!(network, &serde_json::json!(["off", "registries", "hosts"]));
    // No body is a placeholder object.
    for (name, schema) in schemas.as_object().unwrap() {
        assert_ne!(schema, &serde_json::json!({"type": "object"}), "{name} is an empty object");
    }
    // A request body names its type; the events route names its media type.
    let body = &doc["paths"]["/api/v1/chats/{cid}/messages"]["post"]["requestBody"]["content"]["application/json"];
    assert_eq!(body["schema"]["$ref"], "#/components/schemas/CreateMessageRequest");
    let events = &doc["paths"]["/api/v1/chats/{cid}/answers/{aid}/events"]["get"]["responses"]["200"]["content"];
    let event = &events["text/event-stream"]["schema"];
    assert_eq!(event["properties"]["data"]["contentSchema"]["$ref"], "#/components/schemas/StreamEvent");
    let kinds = event["properties"]["event"]["enum"].as_array().unwrap();
    assert!(kinds.contains(&"token".into()) && kinds.contains(&"done".into()), "{kinds:?}");
    // Every reference resolves.
    let text = doc.to_string();
    for (at, _) in text.match_indices("\"#/components/schemas/") {
        let name: String = text[at + 22..].chars().take_while(|c| *c != '"').collect();
        assert!(schemas[&name].is_object(), "{name} is referred to but not there");
    }
}

#[tokio::test]
async fn the_sandbox_numbers_ranges_are_documented_and_kept_as_declared() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let doc = app.anonymous().get("/api/v1/openapi.json").await.1;
    let fields = &doc["components"]["schemas"]["UpdateSandboxSettingsRequest"]["properties"];
    for number in lens_types::SandboxNumber::ALL {
        let spec = number.spec();
        assert_eq!(fields[spec.name]["minimum"], spec.min, "{}", spec.name);
        assert_eq!(fields[spec.name]["maximum"], spec.max, "{}", spec.name);
        // The server keeps to the same range: one past the largest is refused, naming it.
        let change = serde_json::Value::Object([(spec.name.to_owned(), (spec.max + 1).into())].into_iter().collect());
        let (status, body) = admin.put("/api/v1/admin/sandbox", change).await;
        assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"]["message"], format!("`{}` must be between {} and {}", spec.name, spec.min, spec.max));
    }
}

#[tokio::test]
async fn every_error_a_route_answers_is_documented_with_the_envelope() {
    let app = TestApp::new().await;
    let doc = app.anonymous().get("/api/v1/openapi.json").await.1;
    for (method, path, op) in operations(&doc) {
        let responses = op["responses"].as_object().unwrap();
        for (status, response) in responses {
            // Where the identity provider lands a browser, an error is a page to read.
            let page = response["content"].get("text/html").is_some();
            if page {
                assert!(path.starts_with("/api/v1/auth/oidc/"), "{method} {path} {status}: a page, not the envelope");
            }
            if (status.starts_with('4') || status.starts_with('5')) && !page {
                assert_eq!(
                    response["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/ErrorBody",
                    "{method} {path} {status}"
                );
            }
        }
        assert!(responses.contains_key("500"), "{method} {path}");
        let secured = op["security"].as_array().is_some_and(|s| !s.is_empty());
        if secured {
            assert!(responses.contains_key("401"), "{method} {path}: a login is needed");
        }
        if path.contains('{') {
            assert!(responses.contains_key("404"), "{method} {path}");
        }
        if op["requestBody"]["content"]["application/json"].is_object() {
            for status in ["400", "413", "415"] {
                assert!(responses.contains_key(status), "{method} {path} {status}");
            }
        }
    }
    // The admin's routes say so, and answer a person 403.
    let usage = &doc["paths"]["/api/v1/admin/usage"]["get"];
    assert_eq!(usage["security"][0]["session"][0], "admin");
    assert!(usage["responses"]["403"].is_object());
    // A route's own errors are there with its words.
    let ask = &doc["paths"]["/api/v1/chats/{cid}/messages"]["post"]["responses"];
    assert!(ask["409"]["description"].as_str().unwrap().contains("still being written"));
    assert!(ask["507"].is_object());
}

#[tokio::test]
async fn what_a_route_answers_is_what_its_document_says() {
    // A few statuses checked against the document by hand; schemathesis does the rest.
    let app = TestApp::new().await;
    let anon = app.anonymous();
    let doc = anon.get("/api/v1/openapi.json").await.1;
    let admin = app.admin().await;
    let person = app.user(&admin, "ann").await;
    let cases = [
        (anon.send(anon.request(Method::GET, "/api/v1/chats")).await.0, "/api/v1/chats", "get"),
        (person.send(person.request(Method::GET, "/api/v1/admin/usage")).await.0, "/api/v1/admin/usage", "get"),
        (
            admin.send(admin.request(Method::GET, "/api/v1/library/namespaces/nope")).await.0,
            "/api/v1/library/namespaces/{id}",
            "get",
        ),
        (
            admin
                .send(admin.request(Method::POST, "/api/v1/chats").header("content-type", "text/plain").body("x"))
                .await
                .0,
            "/api/v1/chats",
            "post",
        ),
        (
            admin.send(admin.request(Method::GET, "/api/v1/library/namespaces")).await.0,
            "/api/v1/library/namespaces",
            "get",
        ),
    ];
    let expected = [401, 403, 404, 415, 200];
    for ((status, path, method), want) in cases.into_iter().zip(expected) {
        assert_eq!(status.as_u16(), want, "{method} {path}");
        assert!(doc["paths"][path][method]["responses"][status.as_str()].is_object(), "{method} {path} {status}");
    }
}
