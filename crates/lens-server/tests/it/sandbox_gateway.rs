//! Settings > Code sandbox > where sandboxes run: an OpenShell gateway (the fake one, over
//! real mutual TLS), checked before it is used, answers running on it, and switching
//! back deleting its sandboxes first.

use lens_openshell::fake::{FakeGateway, write_certs};
use lens_types::{MessageStatus, SandboxBackend, SandboxSettingsView, StreamEvent};
use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::TestApp;

/// A server whose sandboxes are on `fake`, set by the environment (so locked).
async fn on_gateway(fake: &FakeGateway, idle_stop_secs: Option<u64>) -> TestApp {
    let (address, certs) = (fake.address_string(), fake.cert_dir().to_string_lossy().into_owned());
    TestApp::builder()
        .sandbox()
        .config(move |c| {
            c.sandbox_backend = Some("gateway".into());
            c.sandbox_gateway = Some(address);
            c.sandbox_gateway_certs = Some(certs);
            if let Some(secs) = idle_stop_secs {
                c.sandbox_numbers.set(lens_types::SandboxNumber::IdleStopSecs, secs);
            }
        })
        .settings_model()
        .await
}

fn view(body: serde_json::Value) -> SandboxSettingsView {
    serde_json::from_value(body).expect("a settings view")
}

#[tokio::test]
async fn an_admin_moves_the_sandboxes_onto_a_gateway_and_back() {
    let fake = FakeGateway::start().await.unwrap();
    let app = TestApp::builder().sandbox_available().settings_model().await;
    let admin = app.admin().await;
    let gateway = json!({
        "enabled": true,
        "backend": "gateway",
        "gateway_address": fake.address_string(),
        "gateway_cert_dir": fake.cert_dir(),
    });

    // Another gateway's certificates: refused with the reason, nothing kept.
    let other = tempfile::tempdir().unwrap();
    write_certs(other.path(), &["localhost"]).unwrap();
    let mut wrong = gateway.clone();
    wrong["gateway_cert_dir"] = json!(other.path());
    let (status, body) = admin.put("/api/v1/admin/sandbox", wrong).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("not signed by ca.crt"), "{body}");
    let (_, body) = admin.get("/api/v1/admin/sandbox").await;
    let v = view(body);
    assert_eq!((v.enabled, v.backend), (false, SandboxBackend::Local), "nothing of a refused change is kept");
    assert!(!v.gateway_check.unwrap().ok);

    // Bad addresses and folders are refused as bad requests.
    for bad in [json!({"gateway_address": "https://x/y"}), json!({"gateway_cert_dir": "relative/dir"})] {
        let (status, body) = admin.put("/api/v1/admin/sandbox", bad.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    let (status, body) = admin.put("/api/v1/admin/sandbox", json!({"enabled": true, "backend": "gateway"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "a gateway needs its address: {body}");

    // The right ones: checked, then on.
    let (status, body) = admin.put("/api/v1/admin/sandbox", gateway.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let v = view(body);
    assert_eq!((v.enabled, v.backend), (true, SandboxBackend::Gateway));
    let check = v.gateway_check.unwrap();
    assert!(check.ok && check.version.as_deref() == Some("0.1.4"), "{check:?}");
    assert!(fake.sandboxes().is_empty(), "the check's test sandbox is gone");

    // An answer's code runs on the gateway.
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "```python\nprint(6 * 7)\n```").await;
    let events = admin.events(&cid, &aid, None, 10_000).await;
    let Some((_, StreamEvent::Done { message })) = events.last() else { panic!("{events:?}") };
    assert_eq!(message.status, MessageStatus::Complete);
    assert_eq!(message.steps[0].output.as_ref().unwrap().stdout, "42\n");
    let name = format!("lens-chat-{cid}");
    assert_eq!(fake.sandboxes().into_iter().map(|(n, _)| n).collect::<Vec<_>>(), [name]);
    let (_, body) = admin.get("/api/v1/admin/sandbox").await;
    assert_eq!(view(body).sandbox_count, 1, "the confirmation can say how many");

    // Check again.
    let (status, body) = admin.post("/api/v1/admin/sandbox/check", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(view(body).gateway_check.unwrap().ok);

    // Back to this machine: the gateway's sandboxes are deleted first.
    let (status, body) = admin.put("/api/v1/admin/sandbox", json!({"backend": "local"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(view(body).backend, SandboxBackend::Local);
    assert!(fake.sandboxes().is_empty(), "switching deleted them: {:?}", fake.sandboxes());
    let aid = admin.ask(&cid, "```python\nprint(6 * 7)\n```").await;
    let events = admin.events(&cid, &aid, None, 10_000).await;
    let Some((_, StreamEvent::Done { message })) = events.last() else { panic!() };
    assert_eq!(message.steps[0].output.as_ref().unwrap().stdout, "42\n", "and runs on this machine now");
    assert!(fake.sandboxes().is_empty());
}

#[tokio::test]
async fn the_gateway_settings_from_the_environment_are_locked() {
    let fake = FakeGateway::start().await.unwrap();
    let app = on_gateway(&fake, None).await;
    let admin = app.admin().await;
    let (_, body) = admin.get("/api/v1/admin/sandbox").await;
    let v = view(body);
    assert_eq!((v.enabled, v.backend), (true, SandboxBackend::Gateway));
    for field in ["backend", "gateway_address", "gateway_cert_dir"] {
        assert!(v.locked.contains(&field.to_string()), "{field} locked: {:?}", v.locked);
    }
    let (status, _) = admin.put("/api/v1/admin/sandbox", json!({"backend": "local"})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, body) = admin.get("/api/v1/admin/sandbox/gateway-preflight").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["address"], "openshell-gateway:17670");
    assert!(body["command"].as_str().unwrap().contains("--profile sandbox"));
    let names: Vec<&str> = body["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Compose", "64-bit machine", "Landlock"]);
}

#[tokio::test]
async fn on_a_gateway_routines_stop_idle_sandboxes_and_a_deleted_chat_or_account_takes_its_sandbox() {
    let fake = FakeGateway::start().await.unwrap();
    let app = on_gateway(&fake, Some(1)).await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let driver = app.state.sandbox.driver().unwrap();
    let (kept, gone, bobs) = (admin.new_chat().await, admin.new_chat().await, bob.new_chat().await);
    for (client, cid) in [(&admin, &kept), (&admin, &gone), (&bob, &bobs)] {
        let aid = client.ask(cid, "```bash\necho keep > note.txt\n```").await;
        client.events(cid, &aid, None, 10_000).await;
    }
    let names = || fake.sandboxes().into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    assert_eq!(names().len(), 3);
    driver.ensure("ghost1").await.unwrap();
    // (On a busy machine the first answers may already be idle for a second: stopped
    // now or in the next pass, all three are by then.)
    let (stopped, deleted) = lens_server::sandbox::tidy(&app.state.sandbox).await;
    assert_eq!(deleted, 1, "the orphan goes at once");
    assert!(!names().contains(&"lens-chat-ghost1".to_string()));
    // Each pass stops what has been idle a second by then, and deletes nothing more.
    let total = crate::test_app::tidy_until_stopped(&app.state.sandbox, stopped, 3).await;
    assert_eq!(total, 3, "idle sandboxes stop, each once");
    assert!(fake.sandboxes().iter().all(|(_, phase)| phase == "SANDBOX_PHASE_STOPPED"), "{:?}", fake.sandboxes());
    assert_eq!(driver.get_file(&kept, "note.txt", 100).await.unwrap(), b"keep\n", "files are kept");

    assert_eq!(admin.delete(&format!("/api/v1/chats/{gone}")).await.0, StatusCode::NO_CONTENT);
    assert!(!names().contains(&format!("lens-chat-{gone}")), "the chat took its sandbox");
    let (_, users) = admin.get("/api/v1/users").await;
    let bob_id = users.as_array().unwrap().iter().find(|u| u["username"] == "bob").unwrap()["id"].clone();
    assert_eq!(admin.delete(&format!("/api/v1/users/{bob_id}")).await.0, StatusCode::NO_CONTENT);
    assert_eq!(names(), [format!("lens-chat-{kept}")], "the account took its sandbox");
}

/// A host helper as an admin would run one beside Compose: it records what it was asked
/// and answers 200, or 500 with a sentence while `fail` is set.
async fn host_helper(
    fail: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<serde_json::Value>>>) {
    use axum::{Json, extract::State, http::StatusCode as Code, routing::post};
    type Asked = std::sync::Arc<std::sync::Mutex<Vec<serde_json::Value>>>;
    let asked: Asked = Default::default();
    let state = (asked.clone(), fail);
    let app = axum::Router::new()
        .route(
            "/v1/compose/up",
            post(
                |State((asked, fail)): State<(Asked, std::sync::Arc<std::sync::atomic::AtomicBool>)>,
                 Json(body): Json<serde_json::Value>| async move {
                    asked.lock().unwrap().push(body);
                    if fail.load(std::sync::atomic::Ordering::SeqCst) {
                        (Code::INTERNAL_SERVER_ERROR, "docker: permission denied on /var/run/docker.sock")
                    } else {
                        (Code::OK, "started")
                    }
                },
            ),
        )
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, asked)
}

#[tokio::test]
async fn a_host_helper_starts_the_gateway_instead_of_the_command_and_its_failures_are_sentences() {
    // Without a helper the preflight shows the command, and asking to start is refused.
    let app = TestApp::builder().sandbox_available().settings_model().await;
    let admin = app.admin().await;
    let (_, body) = admin.get("/api/v1/admin/sandbox/gateway-preflight").await;
    assert_eq!(body["helper"], false);
    let (status, body) = admin.post("/api/v1/admin/sandbox/gateway-start", json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("run the command"), "{body}");

    let fail = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let (url, asked) = host_helper(fail.clone()).await;
    let helper = url.clone();
    let app =
        TestApp::builder().sandbox_available().config(move |c| c.host_helper = Some(helper)).settings_model().await;
    let admin = app.admin().await;
    let (_, body) = admin.get("/api/v1/admin/sandbox/gateway-preflight").await;
    assert_eq!(body["helper"], true);
    // Only admins may ask.
    let bob = app.user(&admin, "bob").await;
    let (status, _) = bob.post("/api/v1/admin/sandbox/gateway-start", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(asked.lock().unwrap().is_empty(), "a refused person never reaches the helper");
    // The helper's failure reaches the admin in its own words.
    let (status, body) = admin.post("/api/v1/admin/sandbox/gateway-start", json!({})).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert_eq!(body["error"]["code"], "host_helper_failed");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("HTTP 500") && message.contains("permission denied"), "{message}");
    fail.store(false, std::sync::atomic::Ordering::SeqCst);
    let (status, body) = admin.post("/api/v1/admin/sandbox/gateway-start", json!({})).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    assert_eq!(asked.lock().unwrap().last().unwrap(), &json!({"profile": "sandbox"}));
    // The start is in the audit trail, once: the helper's failure changed nothing.
    let (_, trail) = admin.get("/api/v1/admin/audit?action=settings_changed").await;
    let entries = trail["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{trail}");
    assert_eq!((entries[0]["target"].as_str(), entries[0]["actor"].as_str()), (Some("gateway"), Some("admin")));
    // A helper that is gone is a sentence too, not a hang or a 500.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let gone = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let app = TestApp::builder().sandbox_available().config(move |c| c.host_helper = Some(gone)).settings_model().await;
    let admin = app.admin().await;
    let (status, body) = admin.post("/api/v1/admin/sandbox/gateway-start", json!({})).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("could not be reached"), "{body}");
}

#[tokio::test]
async fn on_a_gateway_a_conversations_sandbox_shows_how_it_stands_and_is_deleted_from_the_gateway() {
    let fake = FakeGateway::start().await.unwrap();
    let app = on_gateway(&fake, None).await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let url = format!("/api/v1/chats/{cid}/sandbox");
    let state = |body: serde_json::Value| body["state"].as_str().unwrap_or_default().to_owned();
    assert_eq!(state(admin.get(&url).await.1), "absent");
    let aid = admin.ask(&cid, "```bash\necho keep > note.txt\n```").await;
    admin.done_after(&cid, &aid, "0").await;
    let (status, body) = admin.get(&url).await;
    assert_eq!((status, state(body.clone())), (StatusCode::OK, "running".to_owned()), "{body}");
    assert!(body["deletes_at"].as_i64().is_some(), "{body}");
    let name = format!("lens-chat-{cid}");
    assert!(fake.sandboxes().iter().any(|(n, _)| *n == name));

    // Deleted on the gateway; the conversation's next run makes a fresh one there.
    assert_eq!(admin.delete(&url).await.0, StatusCode::NO_CONTENT);
    assert!(!fake.sandboxes().iter().any(|(n, _)| *n == name), "{:?}", fake.sandboxes());
    assert_eq!(state(admin.get(&url).await.1), "absent");
    let aid = admin.ask(&cid, "```bash\ntest -e note.txt || echo fresh\n```").await;
    let done = admin.done_after(&cid, &aid, "0").await;
    assert_eq!(done.steps[0].output.as_ref().unwrap().stdout, "fresh\n", "{done:?}");
}

#[tokio::test]
async fn on_a_gateway_a_fork_copies_the_workspace_into_a_sandbox_of_its_own() {
    let fake = FakeGateway::start().await.unwrap();
    let app = on_gateway(&fake, None).await;
    crate::fork::forks_as_a_person_expects(&app).await;
    assert!(fake.sandboxes().len() >= 2, "the fork has its own sandbox there: {:?}", fake.sandboxes());
}

#[tokio::test]
async fn on_a_gateway_the_workspaces_one_rule_holds_for_zips_listings_and_forks() {
    let fake = FakeGateway::start().await.unwrap();
    let app = on_gateway(&fake, None).await;
    crate::awkward_trees::holds_the_one_rule(&app).await;
}

#[tokio::test]
async fn on_a_gateway_hostile_trees_zip_list_and_fork_as_here() {
    let fake = FakeGateway::start().await.unwrap();
    let app = on_gateway(&fake, None).await;
    crate::awkward_trees::hostile_trees_hold_the_rule(&app).await;
}

#[tokio::test]
async fn on_a_gateway_a_step_says_what_the_gateways_proxy_decided_and_an_allowed_host_reaches_its_policy() {
    let fake = FakeGateway::start().await.unwrap();
    let app = on_gateway(&fake, None).await;
    let admin = app.admin().await;
    let net = json!({"network": "hosts", "hosts": ["listed.invalid"], "people_allow_hosts": true});
    let (status, body) = admin.put("/api/v1/admin/sandbox", net).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let cid = admin.new_chat().await;
    // Neither host resolves: the proxy decides, then a host it lets out cannot be reached.
    let code = "curl -sS -m 10 -o /dev/null https://listed.invalid/ 2>&1 | head -c 200; echo\n\
                curl -sS -m 10 -o /dev/null https://wanted.invalid/ 2>&1 | head -c 200";
    let aid = admin.ask(&cid, &format!("```bash\n{code}\n```")).await;
    let events = admin.events(&cid, &aid, Some("0"), 10_000).await;
    // The run ends without waiting for the gateway's log; its record follows on its step.
    let steps: Vec<&lens_types::ToolStep> = events
        .iter()
        .filter_map(|(_, e)| match e {
            StreamEvent::Step { step } if step.status == lens_types::StepStatus::Succeeded => Some(step),
            _ => None,
        })
        .collect();
    let network = |s: &lens_types::ToolStep| s.output.as_ref().map_or(0, |o| o.network.len());
    assert!(steps.len() >= 2 && network(steps[0]) == 0, "the run's ending came first: {steps:?}");
    assert_eq!(network(steps[steps.len() - 1]), 2, "then its record: {steps:?}");
    let Some((_, StreamEvent::Done { message: first })) = events.last().cloned() else { panic!("{events:?}") };
    let output = first.steps[0].output.as_ref().unwrap();
    let seen: Vec<(&str, bool, bool)> =
        output.network.iter().map(|r| (r.host.as_str(), r.allowed, r.allowable)).collect();
    assert_eq!(seen, [("listed.invalid", true, false), ("wanted.invalid", false, true)], "{:?}", output.network);
    assert_eq!(output.network_line().as_deref(), Some("reached listed.invalid; 1 refused"));
    // Saved with the step, bytes not counted.
    let (_, chat) = admin.get(&format!("/api/v1/chats/{cid}")).await;
    assert_eq!(chat["messages"][1]["steps"][0]["output"]["network"][0]["bytes_sent"], json!(null), "{chat}");

    // Allowed for this conversation: the run again gets through the gateway's policy.
    let hosts = format!("/api/v1/chats/{cid}/sandbox/hosts");
    let (status, body) = admin.post(&hosts, json!({"host": "wanted.invalid"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let again = json!({"message_id": aid, "step_id": "s1", "code": code});
    assert_eq!(admin.post(&format!("/api/v1/chats/{cid}/runs"), again).await.0, StatusCode::ACCEPTED);
    let done = admin.done_after(&cid, &aid, "0").await;
    let output = done.steps.last().and_then(|s| s.output.clone()).unwrap();
    let wanted = output.network.iter().find(|r| r.host == "wanted.invalid").expect("the allowed host");
    assert!(wanted.allowed, "{:?}", output.network);
    assert_eq!(wanted.reason, "allowed by the gateway's policy (lens-conversation)");
}

#[tokio::test]
async fn a_network_change_the_gateway_refuses_is_the_admins_error_and_changes_nothing() {
    let fake = FakeGateway::start().await.unwrap();
    let app = on_gateway(&fake, None).await;
    let admin = app.admin().await;
    let net = json!({"network": "hosts", "hosts": ["old.invalid"]});
    assert_eq!(admin.put("/api/v1/admin/sandbox", net).await.0, StatusCode::OK);
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "```bash\necho up\n```").await;
    admin.done_after(&cid, &aid, "0").await;
    fake.faults().refuse_policy.store(true, std::sync::atomic::Ordering::SeqCst);
    let (status, body) = admin.put("/api/v1/admin/sandbox", json!({"hosts": ["new.invalid"]})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("the gateway refused the new network policy for lens-chat-"), "{body}");
    assert!(message.contains("InvalidArgument: policy contains unsafe content"), "the gateway's reason: {body}");
    let (_, settings) = admin.get("/api/v1/admin/sandbox").await;
    assert_eq!(settings["hosts"], json!(["old.invalid"]), "nothing of the change stays: {settings}");
    let name = format!("lens-chat-{cid}");
    let policy = fake.policy(&name).unwrap();
    let listed: Vec<&str> = policy.network_policies["lens"].endpoints.iter().map(|e| e.host.as_str()).collect();
    assert!(listed.contains(&"old.invalid") && !listed.contains(&"new.invalid"), "{listed:?}");
    // The change goes through once the gateway takes it (the next run after a refusal
    // is the driver's test: here it would ask first, its conversation having had a
    // networked run).
    fake.faults().refuse_policy.store(false, std::sync::atomic::Ordering::SeqCst);
    let (status, body) = admin.put("/api/v1/admin/sandbox", json!({"hosts": ["new.invalid"]})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let policy = fake.policy(&name).unwrap();
    assert!(policy.network_policies["lens"].endpoints.iter().any(|e| e.host == "new.invalid"), "{policy:?}");
}
