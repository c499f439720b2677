//! `/mcp` with rmcp's own client: API tokens only, the chat tools as the token's person
//! (an answer's runs and a chat's shared files; nobody else's), and where sandboxes run
//! for admins only, onto the fake gateway and back.

use lens_openshell::fake::FakeGateway;
use reqwest::StatusCode;
use rmcp::{
    ServiceExt,
    model::CallToolRequestParams,
    service::{RoleClient, RunningService},
    transport::{StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig},
};
use serde_json::{Value, json};

use crate::test_app::{Client, TestApp};

type Mcp = RunningService<RoleClient, ()>;

pub async fn token(client: &Client) -> String {
    token_with(client, &["chat"]).await
}

async fn token_with(client: &Client, scopes: &[&str]) -> String {
    let (status, made) = client.post("/api/v1/tokens", json!({"name": "agent", "scopes": scopes})).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made["secret"].as_str().unwrap().to_owned()
}

async fn connect(app: &TestApp, token: &str) -> Mcp {
    connect_to(&app.base, token).await
}

/// An MCP session with the server at `base` (a replica of several, say).
pub async fn connect_to(base: &str, token: &str) -> Mcp {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp")).auth_header(token);
    ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("the MCP session starts")
}

/// Calls a tool: its structured result, or the error's message.
pub async fn call(mcp: &Mcp, tool: &'static str, args: Value) -> Result<Value, String> {
    let params = CallToolRequestParams::new(tool).with_arguments(args.as_object().cloned().unwrap_or_default());
    match mcp.call_tool(params).await {
        Ok(result) if result.is_error != Some(true) => Ok(result.structured_content.expect("structured output")),
        Ok(result) => Err(format!("{:?}", result.content)),
        Err(e) => Err(e.to_string()),
    }
}

#[tokio::test]
async fn only_api_tokens_get_in() {
    let app = TestApp::builder().settings_model().await;
    let admin = app.admin().await;
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let post = |auth: Option<String>| {
        let mut r =
            http.post(format!("{}/mcp", app.base)).header("accept", "application/json, text/event-stream").json(&init);
        if let Some(a) = auth {
            r = r.header("authorization", a);
        }
        r.send()
    };
    let refused = post(None).await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(refused.headers()["www-authenticate"], "Bearer");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unauthorized", "the API's envelope: {body}");
    assert_eq!(post(Some("Bearer lens_not-a-token".into())).await.unwrap().status(), StatusCode::UNAUTHORIZED);
    // A browser's session cookie is not a way in.
    let cookie = admin.request(reqwest::Method::POST, "/mcp").json(&init).send().await.unwrap();
    assert_eq!(cookie.status(), StatusCode::UNAUTHORIZED);
    let secret = token(&admin).await;
    assert!(post(Some(format!("Bearer {secret}"))).await.unwrap().status().is_success());
}

#[tokio::test]
async fn a_session_answers_only_to_its_token_and_bodies_are_limited() {
    let app = TestApp::builder().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let (mine, bobs) = (token(&admin).await, token(&bob).await);
    let http = reqwest::Client::new();
    let send = |secret: &str, session: Option<&str>, body: Value| {
        let mut r = http
            .post(format!("{}/mcp", app.base))
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {secret}"))
            .json(&body);
        if let Some(id) = session {
            r = r.header("mcp-session-id", id);
        }
        r.send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let opened = send(&mine, None, init).await.unwrap();
    assert!(opened.status().is_success());
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert!(send(&mine, Some(&session), initialized).await.unwrap().status().is_success());
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    // Another person's token on this session: as if it did not exist.
    let taken = send(&bobs, Some(&session), list.clone()).await.unwrap();
    assert_eq!(taken.status(), StatusCode::NOT_FOUND);
    assert_eq!(send(&mine, Some(&session), list).await.unwrap().status(), StatusCode::OK, "its own token goes on");
    // The API's body limit holds here too.
    let huge = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "ask", "arguments": {"text": "x".repeat(2 << 20)}}});
    assert_eq!(send(&mine, Some(&session), huge).await.unwrap().status(), StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn an_agent_asks_reads_the_runs_and_the_shared_files_of_its_own_chats_only() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let (admin_mcp, bob_mcp) = (connect(&app, &token(&admin).await).await, connect(&app, &token(&bob).await).await);
    let tools: Vec<String> =
        admin_mcp.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    for name in [
        "sandbox_gateway",
        "set_sandbox_gateway",
        "list_chats",
        "ask",
        "get_answer",
        "list_chat_files",
        "read_chat_file",
        "run_again",
        "list_workspace",
        "fork_chat",
    ] {
        assert!(tools.contains(&name.to_string()), "{name} in {tools:?}");
    }

    // Ask in a new chat (Direct mode runs the fenced code) and get the runs back.
    let code = "```python\nopen('report.txt', 'w').write('made by the agent\\n')\nprint(6 * 7)\n```";
    let answer = call(&admin_mcp, "ask", json!({"text": code})).await.unwrap();
    assert_eq!(answer["status"], "complete", "{answer}");
    let step = &answer["steps"][0];
    assert_eq!((step["language"].as_str(), step["stdout"].as_str()), (Some("python"), Some("42\n")), "{answer}");
    assert_eq!(step["ending"], "exited normally");
    let context = step["context"].as_str().unwrap_or_default();
    assert!(context.starts_with("about ") && context.ends_with("of the model's context (under 1%)"), "{answer}");
    let chat_id = answer["chat_id"].as_str().unwrap().to_owned();
    // The same chat again: the kernel kept nothing but files matter here.
    let again =
        call(&admin_mcp, "ask", json!({"chat_id": chat_id, "text": "```bash\ncat report.txt\n```"})).await.unwrap();
    assert_eq!(again["steps"][0]["stdout"], "made by the agent\n");
    // The first answer's run again, edited: a new step of the newest answer.
    let asked =
        json!({"chat_id": chat_id, "answer_id": answer["answer_id"], "step_id": step["id"], "code": "print(6 * 8)"});
    let ran = call(&admin_mcp, "run_again", asked).await.unwrap();
    assert_eq!(ran["answer_id"], again["answer_id"], "{ran}");
    assert_eq!((ran["status"].as_str(), ran["steps"][1]["stdout"].as_str()), (Some("complete"), Some("48\n")), "{ran}");
    // The workspace, as the page's browser shows it: report.txt, made by run 1.
    let workspace = call(&admin_mcp, "list_workspace", json!({"chat_id": chat_id})).await.unwrap();
    let report = workspace["entries"].as_array().unwrap().iter().find(|e| e["path"] == "report.txt").cloned();
    assert_eq!(
        report.map(|r| (r["size"].clone(), r["made_by_run"].clone())),
        Some((json!(18), json!(1))),
        "{workspace}"
    );
    assert!(call(&admin_mcp, "list_workspace", json!({"chat_id": chat_id, "path": "../etc"})).await.is_err());
    // A fork at the first answer: the history up to it and the workspace's files.
    let fork = json!({"chat_id": chat_id, "answer_id": answer["answer_id"]});
    let forked = call(&admin_mcp, "fork_chat", fork).await.unwrap();
    assert_eq!(forked["files_copied"], 1, "{forked}");
    let forked_id = forked["chat_id"].as_str().unwrap().to_owned();
    let read = json!({"chat_id": forked_id, "text": "```bash\ncat report.txt\n```"});
    assert_eq!(call(&admin_mcp, "ask", read).await.unwrap()["steps"][0]["stdout"], "made by the agent\n");
    let listed = call(&admin_mcp, "list_chats", json!({})).await.unwrap();
    assert!(listed["chats"].as_array().unwrap().iter().any(|c| c["id"] == chat_id.as_str()));

    // Shared files: shared through the API, listed and read through MCP.
    let (status, shared) = admin.post(&format!("/api/v1/chats/{chat_id}/files"), json!({"path": "report.txt"})).await;
    assert_eq!(status, StatusCode::CREATED, "{shared}");
    let files = call(&admin_mcp, "list_chat_files", json!({"chat_id": chat_id})).await.unwrap();
    let file_id = files["files"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(files["files"][0]["name"], "report.txt");
    let read = call(&admin_mcp, "read_chat_file", json!({"chat_id": chat_id, "file_id": file_id})).await.unwrap();
    assert_eq!(read["text"], "made by the agent\n");

    // Bob's agent sees none of it.
    let bobs = call(&bob_mcp, "list_chats", json!({})).await.unwrap();
    assert!(bobs["chats"].as_array().unwrap().is_empty());
    for (tool, args) in [
        ("list_chat_files", json!({"chat_id": chat_id})),
        ("read_chat_file", json!({"chat_id": chat_id, "file_id": file_id})),
        ("ask", json!({"chat_id": chat_id, "text": "hello"})),
        ("get_answer", json!({"chat_id": chat_id, "answer_id": answer["answer_id"]})),
        ("run_again", json!({"chat_id": chat_id, "answer_id": answer["answer_id"], "step_id": "s1", "code": "1"})),
        ("list_workspace", json!({"chat_id": chat_id})),
        ("fork_chat", json!({"chat_id": chat_id, "answer_id": answer["answer_id"]})),
    ] {
        let refused = call(&bob_mcp, tool, args).await.expect_err("not bob's");
        assert!(refused.contains("no such conversation"), "{tool}: {refused}");
    }
    // Bad arguments are refused, not a crash.
    assert!(call(&admin_mcp, "ask", json!({"chat_id": chat_id})).await.is_err(), "no text");
    assert!(call(&admin_mcp, "ask", json!({"chat_id": chat_id, "text": "  "})).await.unwrap_err().contains("empty"));
    admin_mcp.cancel().await.unwrap();
    bob_mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn admins_move_the_sandboxes_onto_a_gateway_and_others_may_only_look() {
    let fake = FakeGateway::start().await.unwrap();
    let app = TestApp::builder().sandbox_available().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let (admin_mcp, bob_mcp) =
        (connect(&app, &token_with(&admin, &["chat", "admin"]).await).await, connect(&app, &token(&bob).await).await);

    // The admin's token without the admin scope may look, as anyone, and not change.
    let admin_chat_only = connect(&app, &token(&admin).await).await;
    let refused = call(&admin_chat_only, "set_sandbox_gateway", json!({"mode": "off"})).await.unwrap_err();
    assert!(refused.contains("`admin` scope"), "{refused}");
    let seen = call(&admin_chat_only, "sandbox_gateway", json!({})).await.unwrap();
    assert!(seen.get("gateway").is_none(), "the gateway's settings need the admin scope: {seen}");
    // A token without `chat` reaches none of the chat tools.
    let admin_only = connect(&app, &token_with(&admin, &["admin"]).await).await;
    let refused = call(&admin_only, "list_chats", json!({})).await.unwrap_err();
    assert!(refused.contains("`chat` scope"), "{refused}");

    let seen = call(&bob_mcp, "sandbox_gateway", json!({})).await.unwrap();
    assert_eq!((seen["enabled"].as_bool(), seen["runs_on"].as_str()), (Some(false), Some("local")));
    assert!(seen.get("gateway").is_none(), "the gateway's settings are for admins: {seen}");
    let refused = call(&bob_mcp, "set_sandbox_gateway", json!({"mode": "off"})).await.unwrap_err();
    assert!(refused.contains("only an admin"), "{refused}");

    let gateway = json!({"mode": "gateway", "address": fake.address_string(), "cert_dir": fake.cert_dir()});
    let moved = call(&admin_mcp, "set_sandbox_gateway", gateway).await.unwrap();
    assert_eq!((moved["enabled"].as_bool(), moved["runs_on"].as_str()), (Some(true), Some("gateway")), "{moved}");
    assert_eq!(moved["gateway"]["check_ok"], true);
    assert_eq!(moved["gateway"]["version"], "0.1.4");
    let answer = call(&bob_mcp, "ask", json!({"text": "```python\nprint(6 * 7)\n```"})).await.unwrap();
    assert_eq!(answer["steps"][0]["stdout"], "42\n", "bob's code ran on the gateway: {answer}");
    assert_eq!(fake.sandboxes().len(), 1);

    let wrong = json!({"mode": "gateway", "address": "127.0.0.1:1", "cert_dir": fake.cert_dir()});
    let refused = call(&admin_mcp, "set_sandbox_gateway", wrong).await.unwrap_err();
    assert!(refused.contains("nothing answers"), "{refused}");
    let off = call(&admin_mcp, "set_sandbox_gateway", json!({"mode": "off"})).await.unwrap();
    assert_eq!(off["enabled"], false);
    assert!(fake.sandboxes().is_empty(), "turning off deleted the gateway's sandboxes");
}

#[tokio::test]
async fn the_official_python_sdk_is_a_client_too() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join(".tools/mcp-sdk/bin/python");
    assert!(python.is_file(), "scripts/setup installs the MCP Python SDK into .tools/mcp-sdk");
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let secret = token(&admin).await;
    let run = tokio::process::Command::new(&python)
        .arg(root.join("scripts/mcp/client.py"))
        .arg(format!("{}/mcp", app.base))
        .arg(&secret)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), run).await.expect("no hang").unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the SDK's client failed: {stderr}");
    let found: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{stderr}"));
    assert_eq!(found["status"], "complete", "{found}");
    assert_eq!(found["stdout"], "42\n");
    assert_eq!(found["ending"], "exited normally");
    assert_eq!(found["chat_listed"], true);
    let tools: Vec<&str> = found["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(
        tools,
        [
            "ask",
            "fork_chat",
            "get_answer",
            "list_chat_files",
            "list_chats",
            "list_workspace",
            "read_chat_file",
            "run_again",
            "sandbox_gateway",
            "set_sandbox_gateway",
        ]
    );
}
